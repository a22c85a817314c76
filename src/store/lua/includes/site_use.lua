-- "Last used" step shared by site_used.lua and token_batch.lua.
-- recordSiteUse(key, clientId, at) moves the site's lastUsedAt in the
-- person's connected sites (hash: clientId -> JSON) to `at`. It never creates
-- an entry (a site the person never signed in to has none), never moves the
-- time backwards, and leaves an entry it cannot read as it is: "last used" is
-- never worth failing the write it rides with. Returns 1 when written, else 0.
local function recordSiteUse(key, clientId, at)
  local current = redis.call('HGET', key, clientId)
  if not current then
    return 0
  end
  local ok, site = pcall(cjson.decode, current)
  if not ok or type(site) ~= 'table' then
    return 0
  end
  if type(site.lastUsedAt) == 'number' and site.lastUsedAt >= at then
    return 0
  end
  site.lastUsedAt = at
  redis.call('HSET', key, clientId, cjson.encode(site))
  return 1
end
