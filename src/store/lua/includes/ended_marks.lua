-- "Ended before" marks step shared by token_read.lua and record_read.lua.
-- endedMarks(payload, siteBefore, siteAfter, personBefore, personAfter) reads
-- the site's mark (hash { grants }; not when siteBefore is '') and the
-- person's (hash { grants, sessions, keep }; not when personBefore is ''),
-- from the keys built around the record's clientId and accountId.
-- Returns siteMark, personMark: HMGET replies, or false where not read or
-- where no mark is set (almost always: a smaller reply on every token read).
local function markOf(key, ...)
  local mark = redis.call('HMGET', key, ...)
  for i = 1, #mark do
    if mark[i] then
      return mark
    end
  end
  return false
end

local function endedMarks(payload, siteBefore, siteAfter, personBefore, personAfter)
  local siteMark, personMark = false, false
  if siteBefore ~= '' and type(payload.clientId) == 'string' then
    siteMark = markOf(siteBefore .. payload.clientId .. siteAfter, 'grants')
  end
  if personBefore ~= '' and type(payload.accountId) == 'string' then
    personMark = markOf(personBefore .. payload.accountId .. personAfter, 'grants', 'sessions', 'keep')
  end
  return siteMark, personMark
end
