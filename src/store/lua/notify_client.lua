-- First step of POST /api/notify, on the site's slot: an earlier answer for
-- the same Idempotency-Key, the site's rate limit, the person behind the
-- `sub` the site was given at sign-in, and the notification's id.
-- An Idempotency-Key's record holds '#<id>' from the first request on (so a
-- request racing it, or a retry after a failure, uses the same id: one entry,
-- one letter), then the answer JSON; once it expires, the key names a new
-- notification with a new id.
-- KEYS[1] the site's subjects (hash: sub -> accountId)
-- KEYS[2] the site's rate counter (string with TTL)
-- KEYS[3] the Idempotency-Key's record (string with TTL); a key of the site's
--         slot even when the request carries none (Cluster: every key of a
--         script shares its hash tag), then untouched
-- ARGV[1] sub
-- ARGV[2] rate limit (requests per window)
-- ARGV[3] rate window (ms)
-- ARGV[4] '1' when the request carries an Idempotency-Key, else '0'
-- ARGV[5] a fresh notification id
-- ARGV[6] how long the key's record lives (ms)
-- Returns { 'replay', answerJSON } | { 'rate', retryAfterMs } | { 'ok', accountId or '', id }.
--- @include "count_hit"
local held = false
if ARGV[4] == '1' then
  held = redis.call('GET', KEYS[3])
  if held and string.sub(held, 1, 1) ~= '#' then return { 'replay', held } end
end
local _, left = countHit(KEYS[2], ARGV[2], ARGV[3])
if left then return { 'rate', left } end
local id = ARGV[5]
if held then
  id = string.sub(held, 2)
elseif ARGV[4] == '1' then
  redis.call('SET', KEYS[3], '#' .. id, 'PX', ARGV[6])
end
return { 'ok', redis.call('HGET', KEYS[1], ARGV[1]) or '', id }
