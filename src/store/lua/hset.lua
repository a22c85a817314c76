-- Set fields of a persistent hash (accounts, settings): no TTL by design.
-- KEYS[1] hash
-- ARGV field, value, field, value, ...
return redis.call('HSET', KEYS[1], unpack(ARGV))
