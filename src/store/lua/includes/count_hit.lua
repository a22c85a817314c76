-- Fixed-window counter step shared by the rate-limiting scripts.
-- countHit(key, limit, windowMs) counts one hit; returns the hit's number and,
-- when it is over the limit, the ms until the window ends (else nil).
local function countHit(key, limit, windowMs)
  local n = redis.call('INCR', key)
  if n == 1 then
    redis.call('PEXPIRE', key, windowMs)
  end
  if n <= tonumber(limit) then
    return n, nil
  end
  local left = redis.call('PTTL', key)
  if left < 0 then
    redis.call('PEXPIRE', key, windowMs)
    left = tonumber(windowMs)
  end
  return n, left
end
