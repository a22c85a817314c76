-- After the sweeper took a session: forgets it (its sites were told, or it
-- was ended otherwise), or puts it back with its later expiry (activity kept
-- it alive). Returns the person's next due time.
-- KEYS[1] the person's expiring sessions (hash: session uid -> JSON { exp, sites, lease? })
-- ARGV[1] session uid
-- ARGV[2] its later expiry (ms since the epoch), or '' to forget it
-- ARGV[3] grace (ms) the hash outlives its latest expiry
-- Returns the next due time (ms, as a string), or '' when none is left.
local current = redis.call('HGET', KEYS[1], ARGV[1])
if current then
  if ARGV[2] == '' then
    redis.call('HDEL', KEYS[1], ARGV[1])
  else
    local entry = cjson.decode(current)
    entry.exp = tonumber(ARGV[2])
    entry.lease = nil
    redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(entry))
  end
end
local all = redis.call('HVALS', KEYS[1])
local nextDue, latest
for i = 1, #all do
  local entry = cjson.decode(all[i])
  local due = entry.exp
  if entry.lease and entry.lease > due then
    due = entry.lease
  end
  if not nextDue or due < nextDue then
    nextDue = due
  end
  if not latest or entry.exp > latest then
    latest = entry.exp
  end
end
if not nextDue then
  return ''
end
redis.call('PEXPIREAT', KEYS[1], latest + tonumber(ARGV[3]))
return string.format('%d', nextDue)
