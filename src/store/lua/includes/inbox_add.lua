-- Inbox step shared by the scripts that write to a person's inbox.
-- inboxAdd(order, entries, unread, id, entry, now, keep, maxAge) stores the
-- entry once by id (a retry finds it and changes nothing), newest first in
-- arrival order (a message of the same millisecond as the newest is placed one
-- millisecond after it: ties would sort by id), drops what is older than
-- maxAge ms or beyond the newest `keep`, and lets the three keys expire maxAge
-- after this message. Returns true when it stored the entry.
local function inboxAdd(order, entries, unread, id, entry, now, keep, maxAge)
  if redis.call('HSETNX', entries, id, entry) == 0 then
    return false
  end
  local at = tonumber(now)
  local newest = redis.call('ZREVRANGE', order, 0, 0, 'WITHSCORES')
  if newest[2] and tonumber(newest[2]) >= at then at = tonumber(newest[2]) + 1 end
  redis.call('ZADD', order, at, id)
  redis.call('ZADD', unread, at, id)
  local old = redis.call('ZRANGEBYSCORE', order, '-inf', '(' .. (tonumber(now) - tonumber(maxAge)))
  local excess = redis.call('ZCARD', order) - #old - tonumber(keep)
  if excess > 0 then
    local oldest = redis.call('ZRANGE', order, #old, #old + excess - 1)
    for _, old_id in ipairs(oldest) do old[#old + 1] = old_id end
  end
  if #old > 0 then
    redis.call('ZREM', order, unpack(old))
    redis.call('HDEL', entries, unpack(old))
    redis.call('ZREM', unread, unpack(old))
  end
  for _, key in ipairs({ order, entries, unread }) do redis.call('PEXPIRE', key, maxAge) end
  return true
end
