-- Read a token record and, in the same step, the records every use of a
-- token reads right after it: the session it is bound to (Session.findByUid)
-- and its grant (Grant.find). One round trip instead of two.
-- Single node or Sentinel only: the session and grant keys are derived here
-- from the record (the layout of adapterKeys) and live in other Cluster hash
-- slots, so on a Cluster the adapter reads them in a second round trip.
-- KEYS[1] token record hash
-- ARGV[1] key prefix
-- ARGV[2] 1: read the session the token is bound to (expiresWithSession), 0: not
-- ARGV[3] 1: read the token's grant, 0: not
-- Returns {} when the record is gone, else { p, c, session p, grant p }; a
-- missing field or record, or one not asked for, is false (nil).
local record = redis.call('HMGET', KEYS[1], 'p', 'c')
if not record[1] then
  return {}
end
local session, grant = false, false
if ARGV[2] == '1' or ARGV[3] == '1' then
  local ok, payload = pcall(cjson.decode, record[1])
  if ok and type(payload) == 'table' then
    if ARGV[2] == '1' and payload.expiresWithSession == true and type(payload.sessionUid) == 'string' then
      session = redis.call('HGET', ARGV[1] .. 'Session:uid:{' .. payload.sessionUid .. '}', 'p')
    end
    if ARGV[3] == '1' and type(payload.grantId) == 'string' then
      grant = redis.call('HGET', ARGV[1] .. 'Grant:{' .. payload.grantId .. '}', 'p')
    end
  end
end
return { record[1], record[2], session, grant }
