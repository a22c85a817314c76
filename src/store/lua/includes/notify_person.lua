-- Person step of POST /api/notify, shared by notify_account (Cluster: the
-- second of two scripts) and notify (single node: both steps in one script).
-- notifyPerson(sites, senders, rate, order, entries, unread, clientId,
-- category, defaultDelivery, id, entry, now, limit, windowMs, keep, maxAge)
-- checks that the site is still connected, counts the rate per (site,
-- person), applies the person's settings for the site and, when the message
-- is to land in the account, writes the inbox entry. Writing the entry is
-- idempotent by notification id (a retry after a crash finds it and goes on).
-- Returns { 'not_connected' } | { 'rate', retryAfterMs } | { 'skip', reason } | { 'stored', delivery }.
local function notifyPerson(sites, senders, rate, order, entries, unread, clientId, category, defaultDelivery, id, entry, now, limit, windowMs, keep, maxAge)
  local site = redis.call('HGET', sites, clientId)
  if not site or cjson.decode(site).status ~= 'connected' then
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
