-- Site step of POST /api/notify, shared by notify_client (Cluster: the first
-- of two scripts) and notify (single node: both steps in one script).
-- notifySite(subjects, rate, idempotency, ended, sub, limit, windowMs, keyed, freshId, keyTtl)
-- checks an earlier answer for the same Idempotency-Key, counts the site's
-- rate, finds the person behind the `sub` the site was given at sign-in, and
-- reads the site's "ended before" mark (endSiteAccess: hash { grants }, in
-- ms), which the person step compares with the person's last sign-in.
-- An Idempotency-Key's record holds '#<id>' from the first request on (so a
-- request racing it, or a retry after a failure, uses the same id: one entry,
-- one letter), then the answer JSON; once it expires, the key names a new
-- notification with a new id.
-- Returns { 'replay', answerJSON } | { 'rate', retryAfterMs } | { 'ok', accountId or '', id, site ended (ms, '0' none) }.
local function notifySite(subjects, rate, idempotency, ended, sub, limit, windowMs, keyed, freshId, keyTtl)
  local held = false
  if keyed == '1' then
    held = redis.call('GET', idempotency)
    if held and string.sub(held, 1, 1) ~= '#' then return { 'replay', held } end
  end
  local _, left = countHit(rate, limit, windowMs)
  if left then return { 'rate', left } end
  local id = freshId
  if held then
    id = string.sub(held, 2)
  elseif keyed == '1' then
    redis.call('SET', idempotency, '#' .. id, 'PX', keyTtl)
  end
  return { 'ok', redis.call('HGET', subjects, sub) or '', id, redis.call('HGET', ended, 'grants') or '0' }
end
