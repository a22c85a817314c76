-- Records a completed sign-in of a person at a site: first and last sign-in
-- time and the scopes granted. A site the person blocked stays blocked (a
-- sign-in racing Block site never reconnects it); a site whose access the
-- person removed is connected again (they have just allowed it anew). Also
-- indexes the session's sid for that site, for back-channel logout when the
-- site loses its access. And records the session's sites for when it expires
-- (docs/session-expiry.md): the person's expiring sessions, and on a single
-- node the index of people too (on a Cluster, expiry_index does that after).
-- KEYS[1] the account's connected sites (hash: clientId -> JSON)
-- KEYS[2] the account's sids at this site (sorted set scored by session expiry; same hash tag)
-- KEYS[3] the account's expiring sessions (hash: session uid -> JSON { exp, sites: { clientId: sid }, lease? }; same hash tag)
-- KEYS[4] optional (single node): the index of people whose sessions expire (sorted set accountId -> due ms)
-- ARGV[1] clientId
-- ARGV[2] now (ms since the epoch)
-- ARGV[3] granted scopes, space-separated
-- ARGV[4] sid, or '' when the sign-in has none
-- ARGV[5] session expiry (ms since the epoch)
-- ARGV[6] session uid, or '' (no expiry recorded)
-- ARGV[7] account id
-- ARGV[8] grace (ms) the expiry records outlive the session
-- Returns the site's status after the write: 'connected' or 'blocked'.
--- @include "expiry_people"
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
if ARGV[4] ~= '' and ARGV[6] ~= '' then
  local exp, graceMs = tonumber(ARGV[5]), tonumber(ARGV[8])
  local recorded = redis.call('HGET', KEYS[3], ARGV[6])
  local entry = recorded and cjson.decode(recorded) or { sites = {} }
  entry.sites[ARGV[1]] = ARGV[4]
  entry.exp = exp
  entry.lease = nil
  redis.call('HSET', KEYS[3], ARGV[6], cjson.encode(entry))
  if redis.call('PTTL', KEYS[3]) < exp + graceMs - now then
    redis.call('PEXPIREAT', KEYS[3], exp + graceMs)
  end
  if KEYS[4] then
    expiry_people_lower(KEYS[4], ARGV[7], exp, graceMs)
  end
end
return site.status
