-- Sets a hash field only when it is not set yet (first write wins).
-- KEYS[1] hash
-- ARGV[1] field
-- ARGV[2] value
-- Returns 1 when set, 0 when the field existed.
return redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2])
