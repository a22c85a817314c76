-- Add a member to a sorted-set index scored by its expiry, drop the members
-- that expired, and let the index expire with its last member, so the index
-- never outgrows the live records it points at.
-- KEYS[1] index (sorted set)
-- KEYS[2] optional tombstone: when it exists nothing is added
-- ARGV[1] member
-- ARGV[2] member expiry (ms since the epoch)
-- ARGV[3] now (ms since the epoch)
-- Returns 1 when added, 0 when the tombstone exists.
if KEYS[2] and redis.call('EXISTS', KEYS[2]) == 1 then
  return 0
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[3])
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if last[2] then
  redis.call('PEXPIREAT', KEYS[1], last[2])
end
return 1
