-- First step of POST /api/notify, on the site's slot: an earlier answer for
-- the same Idempotency-Key, the site's rate limit, and the person behind the
-- `sub` the site was given at sign-in.
-- KEYS[1] the site's subjects (hash: sub -> accountId)
-- KEYS[2] the site's rate counter (string with TTL)
-- KEYS[3] the stored answer for this Idempotency-Key, or '' when there is none
-- ARGV[1] sub
-- ARGV[2] rate limit (requests per window)
-- ARGV[3] rate window (ms)
-- Returns { 'replay', answerJSON } | { 'rate', retryAfterMs } | { 'ok', accountId or '' }.
--- @include "count_hit"
if KEYS[3] ~= '' then
  local answer = redis.call('GET', KEYS[3])
  if answer then return { 'replay', answer } end
end
local _, left = countHit(KEYS[2], ARGV[2], ARGV[3])
if left then return { 'rate', left } end
return { 'ok', redis.call('HGET', KEYS[1], ARGV[1]) or '' }
