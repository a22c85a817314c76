-- The per-address gate of the emailed-code sign-in, for one browser. An
-- address' limits are kept apart for each browser that signed in as that
-- address before; every other browser shares one set (so hammering an
-- address from new browsers never locks its owner out of a known one).
-- KEYS[1] hash deviceHash -> last sign-in (browsers known for the address)
-- KEYS[2] code-request counter of new browsers
-- KEYS[3] code-request counter of this browser (used when it is known)
-- KEYS[4] failure record { n, until } of new browsers
-- KEYS[5] failure record { n, until } of this browser (used when it is known)
-- ARGV[1] 'issue' (a code is to be sent: counts against the request limit) or 'check'
-- ARGV[2] deviceHash
-- ARGV[3] request limit
-- ARGV[4] request window in milliseconds
-- ARGV[5] now (ms)
-- Returns { verdict, ms, known }: verdict 'ok', 'locked' (wrong codes; ms
-- until the lock ends) or 'rate' (too many codes; ms until the window ends);
-- known 1 when the browser is known for the address.
local known = redis.call('HEXISTS', KEYS[1], ARGV[2])
local failures = known == 1 and KEYS[5] or KEYS[4]
local now = tonumber(ARGV[5])
local lockedUntil = tonumber(redis.call('HGET', failures, 'until') or '0')
if lockedUntil > now then
  return { 'locked', lockedUntil - now, known }
end
if ARGV[1] ~= 'issue' then
  return { 'ok', 0, known }
end
local counter = known == 1 and KEYS[3] or KEYS[2]
local n = redis.call('INCR', counter)
if n == 1 then
  redis.call('PEXPIRE', counter, ARGV[4])
end
if n > tonumber(ARGV[3]) then
  local left = redis.call('PTTL', counter)
  if left < 0 then
    redis.call('PEXPIRE', counter, ARGV[4])
    left = tonumber(ARGV[4])
  end
  return { 'rate', left, known }
end
return { 'ok', 0, known }
