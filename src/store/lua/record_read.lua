-- Read a grant or a session record with the marks that may have ended it
-- (endSiteAccess, endAccountAccess, sign out everywhere), in one step.
-- Single node or Sentinel only: the mark keys are built here from the record
-- (its clientId and accountId) and live in other Cluster hash slots, where the
-- adapter reads them in a second round trip.
-- KEYS[1] record hash
-- ARGV[1], ARGV[2] the site's mark before and after the clientId ('' and '': not read)
-- ARGV[3], ARGV[4] the person's mark before and after the accountId
-- Returns {} when the record is gone, else { p, c, site mark { grants },
-- person mark { grants, sessions, keep }, t (when it was written, ms) },
-- false (nil) where not read.
--- @include "ended_marks"
local record = redis.call('HMGET', KEYS[1], 'p', 'c', 't')
if not record[1] then
  return {}
end
local siteMark, personMark = false, false
local ok, payload = pcall(cjson.decode, record[1])
if ok and type(payload) == 'table' then
  siteMark, personMark = endedMarks(payload, ARGV[1], ARGV[2], ARGV[3], ARGV[4])
end
return { record[1], record[2], siteMark, personMark, record[3] }
