-- The service's own inbox entry telling the person of something that
-- concerns their account's security (a sign-in used twice, a new browser, a
-- passkey added...), at most one per person and subject per window: repeats
-- that say nothing new cannot be turned into a flood of notices.
-- KEYS[1] the notice's limit for this person and subject (string with TTL)
-- KEYS[2] inbox order, KEYS[3] inbox entries, KEYS[4] unread ids (see notify_account.lua)
-- ARGV[1] the window (ms)
-- ARGV[2] notice id
-- ARGV[3] entry JSON
-- ARGV[4] now (ms)
-- ARGV[5] most entries an inbox keeps
-- ARGV[6] how long entries are kept (ms)
-- Returns 1 when the notice was stored (a letter may go), 0 when one was
-- already given for this subject within the window.
--- @include "inbox_add"
if redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[1], 'NX') == false then
  return 0
end
inboxAdd(KEYS[2], KEYS[3], KEYS[4], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6])
return 1
