-- Step of site_signin and expiry_index: the person's due time in the index of
-- people whose sessions expire (sorted set accountId -> ms), lowered only
-- (an earlier due time wins), and the index kept until its latest due time
-- plus the grace.
local function expiry_people_lower(people, accountId, due, graceMs)
  redis.call('ZADD', people, 'LT', due, accountId)
  local last = redis.call('ZRANGE', people, -1, -1, 'WITHSCORES')
  if last[2] then
    redis.call('PEXPIREAT', people, tonumber(last[2]) + graceMs)
  end
end
