-- Records what an upstream's SET did, for the operator: the newest ARGV[3]
-- entries of the upstream are kept, and the list expires ARGV[4] ms after
-- its last entry.
-- KEYS[1] the upstream's actions (sorted set: JSON entry scored by ms since the epoch)
-- ARGV[1] when (ms since the epoch)
-- ARGV[2] the entry (JSON; it carries the SET's jti, so entries are distinct)
-- ARGV[3] most entries kept
-- ARGV[4] TTL in milliseconds
-- Returns 1.
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
local extra = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[3])
if extra > 0 then
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, extra - 1)
end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
