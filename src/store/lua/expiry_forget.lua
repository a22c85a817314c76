-- A sign-out told the sites already: the sessions it ended (or the sites it
-- signed out of) are taken out of the person's expiring sessions, so their
-- expiry tells nobody again.
-- KEYS[1] the person's expiring sessions (hash: session uid -> JSON { exp, sites: { clientId: sid }, lease? })
-- ARGV[1] session uid, or '' for every session of the person
-- ARGV[2] client id: only this site is forgotten; '' for the whole session(s)
-- ARGV[3] with ARGV[1] '' and ARGV[2] '': the uid of the session kept (sign out everywhere but here), or ''
-- Returns how many sessions were forgotten or changed.
local uids = {}
if ARGV[1] ~= '' then
  uids[1] = ARGV[1]
else
  uids = redis.call('HKEYS', KEYS[1])
end
local n = 0
for i = 1, #uids do
  local uid = uids[i]
  local current = redis.call('HGET', KEYS[1], uid)
  if current and not (ARGV[1] == '' and ARGV[2] == '' and uid == ARGV[3]) then
    if ARGV[2] == '' then
      redis.call('HDEL', KEYS[1], uid)
      n = n + 1
    else
      local entry = cjson.decode(current)
      if entry.sites[ARGV[2]] ~= nil then
        entry.sites[ARGV[2]] = nil
        n = n + 1
        if next(entry.sites) == nil then
          redis.call('HDEL', KEYS[1], uid)
        else
          redis.call('HSET', KEYS[1], uid, cjson.encode(entry))
        end
      end
    end
  end
end
return n
