-- Replace a hash and give it a TTL in one step.
-- KEYS[1] hash
-- ARGV[1] ttl in milliseconds
-- ARGV[2..] field, value, field, value, ...
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
