-- Remove a passkey or a linked account, unless it is the account's last way
-- in: an address (codes), its passkeys and its linked accounts all count.
-- KEYS[1] account hash { email?, ... }
-- KEYS[2] passkeys hash
-- KEYS[3] linked accounts hash
-- ARGV[1] 'passkey' or 'upstream'
-- ARGV[2] the field to remove (credential id or upstream id)
-- Returns 'ok', 'missing' or 'last'; the record removed comes second with 'ok'.
local target = ARGV[1] == 'passkey' and KEYS[2] or KEYS[3]
local record = redis.call('HGET', target, ARGV[2])
if not record then
  return { 'missing' }
end
local ways = redis.call('HEXISTS', KEYS[1], 'email') + redis.call('HLEN', KEYS[2]) + redis.call('HLEN', KEYS[3])
if ways <= 1 then
  return { 'last' }
end
redis.call('HDEL', target, ARGV[2])
return { 'ok', record }
