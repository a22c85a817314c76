-- The service's own inbox entry telling the person that a sign-in of theirs
-- at a site was used twice (theft), at most one per person and site per
-- window: a replayed token cannot be turned into a flood of notices.
-- KEYS[1] the notice's limit for this site and person (string with TTL)
-- KEYS[2] inbox order, KEYS[3] inbox entries, KEYS[4] unread ids (see notify_account.lua)
-- ARGV[1] the window (ms)
-- ARGV[2] notice id
-- ARGV[3] entry JSON
-- ARGV[4] now (ms)
-- ARGV[5] most entries an inbox keeps
-- ARGV[6] how long entries are kept (ms)
-- Returns 1 when the notice was stored (a letter may go), 0 when one was
-- already given for this site within the window.
--- @include "inbox_add"
if redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[1], 'NX') == false then
  return 0
end
inboxAdd(KEYS[2], KEYS[3], KEYS[4], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6])
return 1
