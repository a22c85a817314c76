-- Removes members of a sorted set.
-- KEYS[1] sorted set
-- ARGV[1..n] members
-- Returns the number of members removed.
return redis.call('ZREM', KEYS[1], unpack(ARGV))
