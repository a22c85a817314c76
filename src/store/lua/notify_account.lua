-- Second step of POST /api/notify, on the person's slot: is the site still
-- connected, the rate limit per (site, person), the person's settings for the
-- site, and, when the message is to land in the account, the inbox entry.
-- Writing the entry is idempotent by notification id (a retry after a crash
-- finds it and goes on).
-- KEYS[1] the account's connected sites (hash: clientId -> JSON)
-- KEYS[2] the account's sender settings (hash: clientId -> JSON)
-- KEYS[3] rate counter of this site for this person (string with TTL)
-- KEYS[4] inbox order (sorted set: id scored by receivedAt ms, made unique: see below)
-- KEYS[5] inbox entries (hash: id -> JSON)
-- KEYS[6] unread ids (sorted set, scored like the inbox)
-- ARGV[1] clientId
-- ARGV[2] category
-- ARGV[3] default delivery of that category
-- ARGV[4] notification id
-- ARGV[5] entry JSON
-- ARGV[6] now (ms)
-- ARGV[7] rate limit, ARGV[8] rate window (ms)
-- ARGV[9] most entries an inbox keeps (the oldest go first)
-- ARGV[10] how long entries are kept (ms); the inbox keys expire that long after the last message
-- Returns { 'not_connected' } | { 'rate', retryAfterMs } | { 'skip', reason } | { 'stored', delivery }.
--- @include "count_hit"
--- @include "inbox_add"
local site = redis.call('HGET', KEYS[1], ARGV[1])
if not site or cjson.decode(site).status ~= 'connected' then
  return { 'not_connected' }
end
local _, left = countHit(KEYS[3], ARGV[7], ARGV[8])
if left then return { 'rate', left } end
local delivery = ARGV[3]
local settings = redis.call('HGET', KEYS[2], ARGV[1])
if settings then
  local s = cjson.decode(settings)
  if s.muted == true then return { 'skip', 'muted' } end
  if type(s.categories) == 'table' and s.categories[ARGV[2]] then delivery = s.categories[ARGV[2]] end
end
if delivery == 'off' then return { 'skip', 'category_off' } end
inboxAdd(KEYS[4], KEYS[5], KEYS[6], ARGV[4], ARGV[5], ARGV[6], ARGV[9], ARGV[10])
return { 'stored', delivery }
