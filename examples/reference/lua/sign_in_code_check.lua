-- Count one attempt at a pending sign-in code and hand back its record; an
-- expired or used-up code is taken out of it. The record outlives its code
-- (it keeps the address for "send a new code").
-- KEYS[1] hash { email, hash, attempts, expiresAt }
-- ARGV[1] maximum attempts
-- ARGV[2] now (ms)
-- Returns { 'missing' }, { 'expired', email }, or { 'ok', attempts, hash, email }.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return { 'missing' }
end
local email, hash, expiresAt = unpack(redis.call('HMGET', KEYS[1], 'email', 'hash', 'expiresAt'))
if not hash or tonumber(expiresAt) <= tonumber(ARGV[2]) then
  redis.call('HDEL', KEYS[1], 'hash', 'attempts', 'expiresAt')
  return { 'expired', email }
end
local n = redis.call('HINCRBY', KEYS[1], 'attempts', 1)
if n >= tonumber(ARGV[1]) then
  -- The last attempt: whatever it brings, this code is done.
  redis.call('HDEL', KEYS[1], 'hash', 'attempts', 'expiresAt')
end
return { 'ok', n, hash, email }
