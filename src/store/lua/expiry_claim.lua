-- The sweeper claims the people with a due session: each is leased (its score
-- moved to now + the lease), so another sweeper does not take them meanwhile,
-- and one that died leaves them to the next after the lease.
-- KEYS[1] the index of people (sorted set accountId -> due time, ms)
-- ARGV[1] now (ms since the epoch)
-- ARGV[2] lease (ms)
-- ARGV[3] most people claimed
-- Returns { leased score, accountId, ... } (the score as a string), or {} when none is due.
local now = tonumber(ARGV[1])
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[3]))
if #due == 0 then
  return {}
end
local leased = now + tonumber(ARGV[2])
local out = { tostring(leased) }
for i = 1, #due do
  redis.call('ZADD', KEYS[1], leased, due[i])
  out[#out + 1] = due[i]
end
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if last[2] and redis.call('PTTL', KEYS[1]) < tonumber(last[2]) - now then
  redis.call('PEXPIREAT', KEYS[1], tonumber(last[2]) + tonumber(ARGV[2]))
end
return out
