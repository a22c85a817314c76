-- Sets a connected site's status (Block site / Unblock). Blocking records
-- when it happened; blocking twice keeps the first time.
-- KEYS[1] the account's connected sites (hash: clientId -> JSON)
-- ARGV[1] clientId
-- ARGV[2] new status: 'connected' or 'blocked'
-- ARGV[3] now (ms since the epoch)
-- Returns the previous status, or nil when the person never signed in there.
local current = redis.call('HGET', KEYS[1], ARGV[1])
if not current then
  return false
end
local site = cjson.decode(current)
local previous = site.status
if ARGV[2] == 'blocked' then
  if previous ~= 'blocked' then
    site.blockedAt = tonumber(ARGV[3])
  end
else
  site.blockedAt = nil
end
site.status = ARGV[2]
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(site))
return previous
