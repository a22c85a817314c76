-- Records that a service session of the person was active (a sign-in through
-- it): the console's list of where the person is signed in. Keeps when it was
-- first seen, drops entries whose session has expired, keeps at most ARGV[5]
-- entries (the least recently active go first), and lets the hash expire with
-- its longest-lived session.
-- KEYS[1] the account's sessions (hash: session uid -> JSON { firstSeenAt, lastSeenAt, expiresAt, userAgent, upstream })
-- ARGV[1] session uid
-- ARGV[2] now (ms since the epoch)
-- ARGV[3] the browser's User-Agent ('' keeps the one recorded)
-- ARGV[4] when the session expires (ms since the epoch)
-- ARGV[5] most sessions kept
-- ARGV[6] the sign-in's upstream: '=<id>' a new sign-in through it, '-' a new sign-in through none, '' keeps it
-- Returns 1.
local now = tonumber(ARGV[2])
local current = redis.call('HGET', KEYS[1], ARGV[1])
local entry
if current then
  entry = cjson.decode(current)
else
  entry = { firstSeenAt = now }
end
entry.lastSeenAt = now
entry.expiresAt = tonumber(ARGV[4])
if ARGV[3] ~= '' then
  entry.userAgent = ARGV[3]
end
local way = ARGV[6] or ''
if way == '-' then
  entry.upstream = nil
elseif string.sub(way, 1, 1) == '=' then
  entry.upstream = string.sub(way, 2)
end
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(entry))
local all = redis.call('HGETALL', KEYS[1])
local live, latest = {}, 0
for i = 1, #all, 2 do
  local e = cjson.decode(all[i + 1])
  if type(e.expiresAt) ~= 'number' or e.expiresAt <= now then
    redis.call('HDEL', KEYS[1], all[i])
  else
    live[#live + 1] = { all[i], e.lastSeenAt or 0, e.expiresAt }
  end
end
table.sort(live, function(a, b) return a[2] > b[2] end)
for i = 1, #live do
  if i > tonumber(ARGV[5]) then
    redis.call('HDEL', KEYS[1], live[i][1])
  elseif live[i][3] > latest then
    latest = live[i][3]
  end
end
if latest > 0 then
  redis.call('PEXPIREAT', KEYS[1], latest)
end
return 1
