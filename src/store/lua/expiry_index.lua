-- The index of people whose service sessions expire (sorted set accountId ->
-- the earliest due time, ms). A sign-in lowers the person's due time; the
-- sweeper, after it went through the person's due sessions, sets it to their
-- next due time (or removes the person) if nobody lowered it since its claim,
-- else keeps the earlier of the two.
-- KEYS[1] the index of people (sorted set; its own hash tag)
-- ARGV[1] account id
-- ARGV[2] due time (ms since the epoch), or '' for none left
-- ARGV[3] the score the sweeper claimed the person with, or '' (a sign-in: lower only)
-- ARGV[4] grace (ms) the index outlives its latest due time
-- Returns 1.
--- @include "expiry_people"
local people, accountId = KEYS[1], ARGV[1]
local graceMs = tonumber(ARGV[4])
if ARGV[3] ~= '' then
  local current = redis.call('ZSCORE', people, accountId)
  if current and tonumber(current) == tonumber(ARGV[3]) then
    if ARGV[2] == '' then
      redis.call('ZREM', people, accountId)
    else
      redis.call('ZADD', people, ARGV[2], accountId)
    end
    local last = redis.call('ZRANGE', people, -1, -1, 'WITHSCORES')
    if last[2] then
      redis.call('PEXPIREAT', people, tonumber(last[2]) + graceMs)
    end
    return 1
  end
end
if ARGV[2] ~= '' then
  expiry_people_lower(people, accountId, tonumber(ARGV[2]), graceMs)
end
return 1
