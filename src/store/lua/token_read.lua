-- Read a token record and, in the same step, the records every use of a
-- token reads right after it: the session it is bound to (Session.findByUid)
-- and its grant (Grant.find). One round trip instead of two.
-- Single node or Sentinel only: the session and grant keys are built here
-- from the record and live in other Cluster hash slots, so on a Cluster the
-- adapter reads them in a second round trip. The caller passes each key's
-- text around the id (adapterKeys is the one place of the layout).
-- KEYS[1] token record hash
-- ARGV[1], ARGV[2] session key before and after the session uid ('' and '': do not read it)
-- ARGV[3], ARGV[4] grant key before and after the grant id ('' and '': do not read it)
-- A consumed record also brings the answer its use left for the reuse leeway
-- (`<record key>:answer`, same hash tag), if that is still kept.
-- Returns {} when the record is gone, else { p, c, session p, grant p, answer }; a
-- missing field or record, or one not asked for, is false (nil).
local record = redis.call('HMGET', KEYS[1], 'p', 'c')
if not record[1] then
  return {}
end
local session, grant = false, false
if ARGV[1] ~= '' or ARGV[3] ~= '' then
  local ok, payload = pcall(cjson.decode, record[1])
  if ok and type(payload) == 'table' then
    if ARGV[1] ~= '' and payload.expiresWithSession == true and type(payload.sessionUid) == 'string' then
      session = redis.call('HGET', ARGV[1] .. payload.sessionUid .. ARGV[2], 'p')
    end
    if ARGV[3] ~= '' and type(payload.grantId) == 'string' then
      grant = redis.call('HGET', ARGV[3] .. payload.grantId .. ARGV[4], 'p')
    end
  end
end
local answer = false
if record[2] then
  answer = redis.call('GET', KEYS[1] .. ':answer')
end
return { record[1], record[2], session, grant, answer }
