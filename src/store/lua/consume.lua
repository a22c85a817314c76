-- Mark a record consumed exactly once. Never recreates a record that is gone
-- (HSET on a missing key would create it without a TTL).
-- KEYS[1] record hash
-- ARGV[1] consumed-at (seconds since the epoch)
-- Returns { 1 } when this call consumed it, { 0, payload } when it was consumed
-- already (a replay: the caller revokes the chain), { -1 } when it no longer exists.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return { -1 }
end
if redis.call('HSETNX', KEYS[1], 'c', ARGV[1]) == 1 then
  return { 1 }
end
return { 0, redis.call('HGET', KEYS[1], 'p') }
