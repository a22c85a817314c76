-- Records that a site used its access to a person (refresh, code exchange,
-- userinfo, introspection of its tokens): "Last used" in Connected sites.
-- Never creates a site record (a site the person never signed in to has no
-- entry) and never moves the time backwards.
-- KEYS[1] the account's connected sites (hash: clientId -> JSON)
-- ARGV[1] clientId
-- ARGV[2] when (ms since the epoch)
-- Returns 1 when written, 0 otherwise.
local current = redis.call('HGET', KEYS[1], ARGV[1])
if not current then
  return 0
end
local site = cjson.decode(current)
local at = tonumber(ARGV[2])
if type(site.lastUsedAt) == 'number' and site.lastUsedAt >= at then
  return 0
end
site.lastUsedAt = at
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(site))
return 1
