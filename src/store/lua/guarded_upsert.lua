-- Write a grant unless it was revoked: a revoked grant never comes back, even
-- when a flow that loaded it before the revocation saves it afterwards.
-- KEYS[1] grant record hash
-- KEYS[2] grant tombstone
-- ARGV[1] payload (JSON)
-- ARGV[2] ttl in milliseconds (> 0)
-- ARGV[3] optional: when it is written (ms since the epoch), kept as `t` for the
--         "ended before" marks (grants and sessions)
-- Returns 1 when written, 0 when the grant is revoked.
if redis.call('EXISTS', KEYS[2]) == 1 then
  return 0
end
if redis.call('HSET', KEYS[1], 'p', ARGV[1]) == 0 then
  redis.call('HDEL', KEYS[1], 'c')
end
if ARGV[3] then
  redis.call('HSET', KEYS[1], 't', ARGV[3])
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
