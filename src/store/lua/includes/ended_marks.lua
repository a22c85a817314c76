-- "Ended before" marks step shared by token_read.lua and record_read.lua.
-- endedMarks(payload, siteBefore, siteAfter, personBefore, personAfter) reads
-- the site's mark (hash { grants }; not when siteBefore is '') and the
-- person's (hash { grants, sessions, keep }; not when personBefore is ''),
-- from the keys built around the record's clientId and accountId.
-- Returns siteMark, personMark: HMGET replies, or false where not read.
local function endedMarks(payload, siteBefore, siteAfter, personBefore, personAfter)
  local siteMark, personMark = false, false
  if siteBefore ~= '' and type(payload.clientId) == 'string' then
    siteMark = redis.call('HMGET', siteBefore .. payload.clientId .. siteAfter, 'grants')
  end
  if personBefore ~= '' and type(payload.accountId) == 'string' then
    personMark = redis.call('HMGET', personBefore .. payload.accountId .. personAfter, 'grants', 'sessions', 'keep')
  end
  return siteMark, personMark
end
