-- Replace a record and give it a TTL, in one step, so no reader ever sees it without one.
-- KEYS[1] record hash
-- ARGV[1] payload (JSON)
-- ARGV[2] ttl in milliseconds (> 0)
-- ARGV[3] optional: when it is written (ms since the epoch), kept as `t` for the
--         "ended before" marks (grants and sessions)
-- HSET answers 0 when the record was there: then its consumed mark goes too
-- (a whole replace, one call fewer than DEL first for a new record).
if redis.call('HSET', KEYS[1], 'p', ARGV[1]) == 0 then
  redis.call('HDEL', KEYS[1], 'c')
end
if ARGV[3] then
  redis.call('HSET', KEYS[1], 't', ARGV[3])
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
