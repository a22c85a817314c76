-- Replace a record and give it a TTL, in one step, so no reader ever sees it without one.
-- KEYS[1] record hash
-- ARGV[1] payload (JSON)
-- ARGV[2] ttl in milliseconds (> 0)
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'p', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
