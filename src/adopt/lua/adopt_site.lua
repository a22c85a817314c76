-- Adds a site the person used before the switch to Connected sites, from a
-- grant moved in from the previous store: first and last sign-in as the grant
-- dates them, widening what is known and never changing the status (a site
-- blocked or whose access was removed here stays so; site_signin.lua, for a
-- sign-in made now, is the one that reconnects).
-- KEYS[1] the account's connected sites (hash: clientId -> JSON)
-- ARGV[1] clientId
-- ARGV[2] when the grant was issued (ms since the epoch)
-- ARGV[3] its scopes, space-separated
-- Returns 1 when the site was added, 0 when it was known.
local at = tonumber(ARGV[2])
local current = redis.call('HGET', KEYS[1], ARGV[1])
if not current then
  redis.call('HSET', KEYS[1], ARGV[1], cjson.encode({ firstSignInAt = at, lastSignInAt = at, scopes = ARGV[3], status = 'connected' }))
  return 1
end
local ok, site = pcall(cjson.decode, current)
if not ok or type(site) ~= 'table' then
  return 0
end
local changed = false
if type(site.firstSignInAt) ~= 'number' or at < site.firstSignInAt then
  site.firstSignInAt = at
  changed = true
end
if type(site.lastSignInAt) ~= 'number' or at > site.lastSignInAt then
  site.lastSignInAt = at
  site.scopes = ARGV[3]
  changed = true
end
if changed then
  redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(site))
end
return 0
