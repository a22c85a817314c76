-- Count one attempt against a short-lived secret and hand it back, or delete
-- it once the attempts are used up.
-- KEYS[1] hash { secret fields..., attempts }
-- ARGV[1] maximum attempts
-- Returns { -1 } when missing, { -2 } when out of attempts (deleted),
-- else { attempts, field, value, field, value, ... }.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return { -1 }
end
local n = redis.call('HINCRBY', KEYS[1], 'attempts', 1)
if n > tonumber(ARGV[1]) then
  redis.call('DEL', KEYS[1])
  return { -2 }
end
local reply = { n }
for _, v in ipairs(redis.call('HGETALL', KEYS[1])) do
  reply[#reply + 1] = v
end
return reply
