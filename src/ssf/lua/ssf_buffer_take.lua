-- Takes every entry of a site's buffer of held security events and removes it.
-- KEYS[1] the buffer hash (jti -> value)
-- Returns the entries as a flat list: jti, value, jti, value, ...
local all = redis.call('HGETALL', KEYS[1])
redis.call('DEL', KEYS[1])
return all
