-- Records one back-channel logout's outcome in a hash with a TTL (renewed),
-- and when each outcome was first written in a sorted set beside it, so the
-- oldest go without reading the hash: a new outcome drops at most two past
-- the TTL and those past the cap (one, but after a hash's first indexing), a
-- bounded number of steps per write. A hash written before the index
-- existed (none beside it) is indexed once, its outcomes past the TTL dropped.
-- KEYS[1] hash (the person's logout outcomes, or one sign-out's): job id -> JSON
-- KEYS[2] sorted set, the hash's index: job id -> when first written (ms)
-- ARGV[1] field (the logout's job id)
-- ARGV[2] value (JSON: clientId, state, at (ms))
-- ARGV[3] TTL in ms
-- ARGV[4] '1': only when the field is not set yet (the first trigger wins)
-- ARGV[5] now (ms)
-- ARGV[6] cap: the most outcomes kept (the oldest go first)
-- Returns 1 when written, 0 when the field existed and ARGV[4] is '1'.
local hash, index, field = KEYS[1], KEYS[2], ARGV[1]
local ttl, now, cap = tonumber(ARGV[3]), tonumber(ARGV[5]), tonumber(ARGV[6])
if ARGV[4] == '1' and redis.call('HEXISTS', hash, field) == 1 then
  return 0
end
if redis.call('HSET', hash, field, ARGV[2]) == 1 then
  if redis.call('EXISTS', index) == 0 and redis.call('HLEN', hash) > 1 then
    local all = redis.call('HGETALL', hash)
    for i = 1, #all, 2 do
      if all[i] ~= field then
        local ok, outcome = pcall(cjson.decode, all[i + 1])
        local at = ok and type(outcome) == 'table' and tonumber(outcome.at) or nil
        if at == nil or at < now - ttl then
          redis.call('HDEL', hash, all[i])
        else
          redis.call('ZADD', index, at, all[i])
        end
      end
    end
  end
  redis.call('ZADD', index, now, field)
  local stale = redis.call('ZRANGEBYSCORE', index, '-inf', '(' .. tostring(now - ttl), 'LIMIT', 0, 2)
  for _, old in ipairs(stale) do
    redis.call('HDEL', hash, old)
    redis.call('ZREM', index, old)
  end
  local over = redis.call('ZCARD', index) - cap
  if over > 0 then
    local oldest = redis.call('ZPOPMIN', index, over)
    for i = 1, #oldest, 2 do
      redis.call('HDEL', hash, oldest[i])
    end
  end
end
redis.call('PEXPIRE', hash, ttl)
redis.call('PEXPIRE', index, ttl)
return 1
