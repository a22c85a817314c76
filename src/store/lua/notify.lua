-- POST /api/notify on a single node (or Sentinel): the site step and the
-- person step in one script, one round trip instead of two. The person's keys
-- are built here from the account id the site step finds, so this script
-- reads keys it was not given: on a Cluster they live in other hash slots,
-- and notify_client and notify_account run instead. The caller passes each
-- key's text around the account id (the layout stays in the key functions).
-- KEYS[1..4] as notify_client: the site's subjects, its rate counter, the
--            Idempotency-Key's record, the site's "ended before" mark
-- ARGV[1..6] as notify_client: sub, site rate limit, its window (ms), keyed,
--            a fresh notification id, the key's lifetime (ms)
-- ARGV[7] the text of every person key before the account id
-- ARGV[8..13] the text after it of: connected sites, sender settings, the
--            (site, person) rate counter, inbox order, inbox entries, unread
-- ARGV[14] clientId, ARGV[15] category, ARGV[16] default delivery
-- ARGV[17] the entry JSON after its id: `"clientId":...}`; the entry is
--          `{"id":"<id>",` followed by it (the id may be the one an
--          Idempotency-Key holds, known only here)
-- ARGV[18] now (ms), ARGV[19] person rate limit, ARGV[20] its window (ms)
-- ARGV[21] most entries an inbox keeps, ARGV[22] how long entries are kept (ms)
-- ARGV[23] the text after the account id of the person's "ended before" mark
-- Returns the site step's { 'replay', answerJSON } | { 'rate', retryAfterMs },
-- { 'ok', '', id } when the sub names no one, else
-- { 'ok', accountId, id, outcome, detail } with notify_account's outcome.
--- @include "count_hit"
--- @include "inbox_add"
--- @include "notify_site"
--- @include "notify_person"
local site = notifySite(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6])
if site[1] ~= 'ok' or site[2] == '' then return site end
local account, id = site[2], site[3]
local function key(n) return ARGV[7] .. account .. ARGV[n] end
local entry = '{"id":"' .. id .. '",' .. ARGV[17]
local person = notifyPerson(key(8), key(9), key(10), key(11), key(12), key(13), key(23), ARGV[14], ARGV[15], ARGV[16], id, entry, ARGV[18], ARGV[19], ARGV[20], ARGV[21], ARGV[22], site[4])
return { 'ok', account, id, person[1], person[2] }
