-- The "new browser" security notice, coalesced per person: the first few
-- within a window are told one by one; the next starts one summary entry
-- (and its letter); later ones only update that entry (a count, the latest
-- browser) and mark it unread again. The same browser twice within the
-- window is told once.
-- KEYS[1] the notice's limit for this person and browser (string with TTL)
-- KEYS[2] the person's new browsers of the window (hash: n, summary id, until; TTL the window)
-- KEYS[3] inbox order, KEYS[4] inbox entries, KEYS[5] unread ids (see notify_account.lua)
-- ARGV[1] the window (ms)
-- ARGV[2] notice id
-- ARGV[3] entry JSON
-- ARGV[4] now (ms)
-- ARGV[5] most entries an inbox keeps
-- ARGV[6] how long entries are kept (ms)
-- ARGV[7] how many are told one by one within the window
-- ARGV[8] when the window ends, if it starts now (ms)
-- Returns {'given'} (a letter may go), {'held_back'} (this browser was told),
-- {'summary', until} (the summary entry is stored: a letter may go), or
-- {'coalesced'} (counted in the summary: no letter).
--- @include "inbox_add"
if redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[1], 'NX') == false then
  return { 'held_back' }
end
local n = redis.call('HINCRBY', KEYS[2], 'n', 1)
if n == 1 then
  redis.call('HSET', KEYS[2], 'until', ARGV[8])
  redis.call('PEXPIRE', KEYS[2], ARGV[1])
end
local each = tonumber(ARGV[7])
if n <= each then
  inboxAdd(KEYS[3], KEYS[4], KEYS[5], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6])
  return { 'given' }
end
local untilAt = redis.call('HGET', KEYS[2], 'until')
if n == each + 1 then
  local entry = cjson.decode(ARGV[3])
  if type(entry.details) ~= 'table' then entry.details = {} end
  entry.details.count = 1
  entry.details['until'] = tonumber(untilAt)
  inboxAdd(KEYS[3], KEYS[4], KEYS[5], ARGV[2], cjson.encode(entry), ARGV[4], ARGV[5], ARGV[6])
  redis.call('HSET', KEYS[2], 'summary', ARGV[2])
  return { 'summary', untilAt }
end
local summary = redis.call('HGET', KEYS[2], 'summary')
local stored = summary and redis.call('HGET', KEYS[4], summary)
if stored then
  local entry = cjson.decode(stored)
  local latest = cjson.decode(ARGV[3])
  if type(entry.details) ~= 'table' then entry.details = {} end
  entry.details.count = n - each
  entry.details.browser = type(latest.details) == 'table' and latest.details.browser or nil
  entry.details.last = latest.receivedAt
  redis.call('HSET', KEYS[4], summary, cjson.encode(entry))
  local score = redis.call('ZSCORE', KEYS[3], summary)
  if score then redis.call('ZADD', KEYS[5], score, summary) end
end
return { 'coalesced' }
