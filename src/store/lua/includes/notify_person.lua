-- Person step of POST /api/notify, shared by notify_account (Cluster: the
-- second of two scripts) and notify (single node: both steps in one script).
-- notifyPerson(sites, senders, rate, order, entries, unread, ended, clientId,
-- category, defaultDelivery, id, entry, now, limit, windowMs, keep, maxAge,
-- siteEnded) checks that the site is still connected (and that neither the
-- site's nor the person's "ended before" mark (ms) covers the
-- person's last sign-in there), counts the rate per (site,
-- person), applies the person's settings for the site and, when the message
-- is to land in the account, writes the inbox entry. Writing the entry is
-- idempotent by notification id (a retry after a crash finds it and goes on).
-- Returns { 'not_connected' } | { 'rate', retryAfterMs } | { 'skip', reason } | { 'stored', delivery }.
local function notifyPerson(sites, senders, rate, order, entries, unread, ended, clientId, category, defaultDelivery, id, entry, now, limit, windowMs, keep, maxAge, siteEnded)
  local site = redis.call('HGET', sites, clientId)
  if not site then
    return { 'not_connected' }
  end
  site = cjson.decode(site)
  if site.status ~= 'connected' then
    return { 'not_connected' }
  end
  local endedAt = math.max(tonumber(siteEnded) or 0, tonumber(redis.call('HGET', ended, 'grants') or '0') or 0)
  if endedAt > 0 and (tonumber(site.lastSignInAt) or 0) <= endedAt then
    return { 'not_connected' }
  end
  local _, left = countHit(rate, limit, windowMs)
  if left then return { 'rate', left } end
  local delivery = defaultDelivery
  local settings = redis.call('HGET', senders, clientId)
  if settings then
    local s = cjson.decode(settings)
    if s.muted == true then return { 'skip', 'muted' } end
    if type(s.categories) == 'table' and s.categories[category] then delivery = s.categories[category] end
  end
  if delivery == 'off' then return { 'skip', 'category_off' } end
  inboxAdd(order, entries, unread, id, entry, now, keep, maxAge)
  return { 'stored', delivery }
end
