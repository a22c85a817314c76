-- Sets a connected site's status: Block site ('blocked'), Remove access
-- ('access_removed': its grants are revoked, the next sign-in there asks for
-- consent again) or back to 'connected' (Unblock). Each records when it
-- happened; doing it twice keeps the first time.
-- KEYS[1] the account's connected sites (hash: clientId -> JSON)
-- ARGV[1] clientId
-- ARGV[2] new status: 'connected', 'blocked' or 'access_removed'
-- ARGV[3] now (ms since the epoch)
-- ARGV[4] the status the site must have for the change, or '' for any (Unblock
--         changes a blocked site only; Remove access a connected one only)
-- Returns the previous status (unchanged when ARGV[4] did not match), or nil
-- when the person never signed in there.
local current = redis.call('HGET', KEYS[1], ARGV[1])
if not current then
  return false
end
local site = cjson.decode(current)
local previous = site.status
if ARGV[4] ~= '' and previous ~= ARGV[4] then
  return previous
end
if ARGV[2] == 'blocked' then
  if previous ~= 'blocked' then
    site.blockedAt = tonumber(ARGV[3])
  end
  site.accessRemovedAt = nil
elseif ARGV[2] == 'access_removed' then
  if previous ~= 'access_removed' then
    site.accessRemovedAt = tonumber(ARGV[3])
  end
  site.blockedAt = nil
else
  site.blockedAt = nil
  site.accessRemovedAt = nil
end
site.status = ARGV[2]
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(site))
return previous
