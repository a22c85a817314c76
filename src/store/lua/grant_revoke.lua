-- Revoke a grant: leave a tombstone (so a racing write cannot bring the grant
-- back), delete the grant and hand back every record indexed under it; the
-- caller deletes those records (they live in other hash slots).
-- KEYS[1] grant record hash
-- KEYS[2] grant index (sorted set of record keys)
-- KEYS[3] grant tombstone
-- ARGV[1] minimum tombstone ttl in milliseconds
local ttl = tonumber(ARGV[1])
local left = redis.call('PTTL', KEYS[1])
if left > ttl then ttl = left end
local last = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
if last[2] then
  local t = redis.call('TIME')
  local untilLast = tonumber(last[2]) - (tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
  if untilLast > ttl then ttl = untilLast end
end
redis.call('SET', KEYS[3], '1', 'PX', ttl)
redis.call('DEL', KEYS[1])
local members = redis.call('ZRANGE', KEYS[2], 0, -1)
redis.call('DEL', KEYS[2])
return members
