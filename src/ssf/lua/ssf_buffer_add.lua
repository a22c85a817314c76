-- Keeps a security event in a site's bounded buffer (held while its stream is paused, or waiting to be polled).
-- KEYS[1] the buffer hash (jti -> value)
-- ARGV[1] most entries kept
-- ARGV[2] ttl of the buffer in milliseconds (renewed by each add)
-- ARGV[3] jti
-- ARGV[4] value
-- Returns 1 when kept (or kept already), 0 when the buffer is full.
if redis.call('HEXISTS', KEYS[1], ARGV[3]) == 1 then
  return 1
end
if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[1]) then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[3], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
