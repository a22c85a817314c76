-- Read a token record and, in the same step, the records every use of a
-- token reads right after it: the session it is bound to (Session.findByUid)
-- and its grant (Grant.find), with the marks that may have ended them (an
-- operator's or the person's "ended before": endSiteAccess, endAccountAccess,
-- sign out everywhere). One round trip instead of two.
-- Single node or Sentinel only: the session, grant and mark keys are built
-- here from the record and live in other Cluster hash slots, so on a Cluster
-- the adapter reads them in a second round trip. The caller passes each key's
-- text around the id (adapterKeys is the one place of the layout).
-- KEYS[1] token record hash
-- ARGV[1], ARGV[2] session key before and after the session uid ('' and '': do not read it)
-- ARGV[3], ARGV[4] grant key before and after the grant id ('' and '': do not read it)
-- ARGV[5], ARGV[6] the site's mark before and after the clientId ('' and '': do not read the marks)
-- ARGV[7], ARGV[8] the person's mark before and after the accountId
-- A consumed record also brings the answer its use left for the reuse leeway
-- (`<record key>:answer`, same hash tag), if that is still kept, and whether
-- that use recorded that its new tokens were never written (`:unwritten`).
-- Returns nil when the record is gone, else one JSON text (one string to read
-- and one JSON.parse in Node, instead of an array of ten whose three records
-- are parsed one by one): [ p, c, session p, grant p, answer, unwritten,
-- site mark [ grants ], person mark [ grants, sessions, keep ], session t,
-- grant t ] (t: when the record was written, ms). The records' payloads go
-- in as the JSON texts they are; c, the answer and t as JSON strings,
-- unwritten as true or false; a missing field or record, or one not asked
-- for, is null.
--- @include "ended_marks"
local record = redis.call('HMGET', KEYS[1], 'p', 'c')
if not record[1] then
  return false
end
local session, grant, siteMark, personMark = { false, false }, { false, false }, false, false
if ARGV[1] ~= '' or ARGV[3] ~= '' then
  local ok, payload = pcall(cjson.decode, record[1])
  if ok and type(payload) == 'table' then
    if ARGV[1] ~= '' and payload.expiresWithSession == true and type(payload.sessionUid) == 'string' then
      session = redis.call('HMGET', ARGV[1] .. payload.sessionUid .. ARGV[2], 'p', 't')
    end
    if ARGV[3] ~= '' and type(payload.grantId) == 'string' then
      grant = redis.call('HMGET', ARGV[3] .. payload.grantId .. ARGV[4], 'p', 't')
    end
    if ARGV[5] ~= '' and (session[1] or grant[1]) then
      siteMark, personMark = endedMarks(payload, ARGV[5], ARGV[6], ARGV[7], ARGV[8])
    end
  end
end
local answer, unwritten = false, false
if record[2] then
  answer = redis.call('GET', KEYS[1] .. ':answer')
  if answer then
    unwritten = redis.call('EXISTS', KEYS[1] .. ':unwritten') == 1
  end
end
local function text(value)
  return value and cjson.encode(value) or 'null'
end
local function mark(fields)
  if not fields then
    return 'null'
  end
  local out = {}
  for i = 1, #fields do
    out[i] = fields[i] or cjson.null
  end
  return cjson.encode(out)
end
return '[' .. record[1] .. ',' .. text(record[2]) .. ',' .. (session[1] or 'null') .. ',' .. (grant[1] or 'null') .. ','
  .. text(answer) .. ',' .. tostring(unwritten) .. ',' .. mark(siteMark) .. ',' .. mark(personMark) .. ','
  .. text(session[2]) .. ',' .. text(grant[2]) .. ']'
