-- Records a completed sign-in of a person at a site: first and last sign-in
-- time and the scopes granted. A site the person blocked stays blocked (a
-- sign-in racing Block site never reconnects it); a site whose access the
-- person removed is connected again (they have just allowed it anew). Also
-- indexes the session's sid for that site, for back-channel logout when the
-- site loses its access.
-- KEYS[1] the account's connected sites (hash: clientId -> JSON)
-- KEYS[2] the account's sids at this site (sorted set scored by session expiry; same hash tag)
-- ARGV[1] clientId
-- ARGV[2] now (ms since the epoch)
-- ARGV[3] granted scopes, space-separated
-- ARGV[4] sid, or '' when the sign-in has none
-- ARGV[5] session expiry (ms since the epoch)
-- Returns the site's status after the write: 'connected' or 'blocked'.
local now = tonumber(ARGV[2])
local current = redis.call('HGET', KEYS[1], ARGV[1])
local site
if current then
  site = cjson.decode(current)
else
  site = { firstSignInAt = now, status = 'connected' }
end
site.lastSignInAt = now
site.scopes = ARGV[3]
if site.status == 'access_removed' then
  site.status = 'connected'
  site.accessRemovedAt = nil
end
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(site))
if ARGV[4] ~= '' then
  redis.call('ZADD', KEYS[2], ARGV[5], ARGV[4])
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
  local last = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
  if last[2] then
    redis.call('PEXPIREAT', KEYS[2], last[2])
  end
end
return site.status
