-- Takes the person's sessions that are due (their expiry passed, not leased
-- by another sweeper): each is leased (taken once; a sweeper that dies leaves
-- it to the next after the lease). Returns the person's next due time too.
-- KEYS[1] the person's expiring sessions (hash: session uid -> JSON { exp, sites: { clientId: sid }, lease? })
-- ARGV[1] now (ms since the epoch)
-- ARGV[2] lease (ms)
-- Returns { next due time or '', uid, JSON, uid, JSON, ... }.
local now = tonumber(ARGV[1])
local leased = now + tonumber(ARGV[2])
local all = redis.call('HGETALL', KEYS[1])
local out = { '' }
local nextDue
for i = 1, #all, 2 do
  local entry = cjson.decode(all[i + 1])
  local due = entry.exp
  if entry.lease and entry.lease > now then
    due = entry.lease
  elseif entry.exp <= now then
    entry.lease = leased
    redis.call('HSET', KEYS[1], all[i], cjson.encode(entry))
    out[#out + 1] = all[i]
    out[#out + 1] = all[i + 1]
    due = leased
  end
  if not nextDue or due < nextDue then
    nextDue = due
  end
end
if nextDue then
  out[1] = string.format('%d', nextDue)
end
return out
