-- Mark a record consumed exactly once. Never recreates a record that is gone
-- (HSET on a missing key would create it without a TTL).
-- KEYS[1] record hash
-- KEYS[2] optional: where the answer of this use is kept for the reuse leeway (same hash tag)
-- KEYS[3] with KEYS[2]: the record that an earlier use's new tokens were never
--         written (same hash tag; set by the adapter when that use's writes failed)
-- ARGV[1] consumed-at (seconds since the epoch)
-- ARGV[2] with KEYS[2]: the answer, sealed with the record's own id
-- ARGV[3] with KEYS[2]: how long it is kept (ms): the leeway
-- ARGV[4] with KEYS[2]: '1' when this use takes the place of an earlier one
--         whose new tokens were never written: allowed once, only while
--         KEYS[3] says so and the first use's answer is still kept
-- Returns { 1 } when this call consumed it, { 0, payload, kept answer or nil,
-- unwritten } when it was consumed already (a replay: the caller revokes the
-- chain, unless the reuse leeway answers it), { -1 } when it no longer exists.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return { -1 }
end
local again = KEYS[2] and ARGV[4] == '1' and redis.call('EXISTS', KEYS[2]) == 1 and redis.call('DEL', KEYS[3]) == 1
if redis.call('HSETNX', KEYS[1], 'c', ARGV[1]) == 1 or again then
  if KEYS[2] then
    redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
  end
  return { 1 }
end
local kept, unwritten = false, false
if KEYS[2] then
  kept = redis.call('GET', KEYS[2])
  unwritten = redis.call('EXISTS', KEYS[3]) == 1
end
return { 0, redis.call('HGET', KEYS[1], 'p'), kept, unwritten }
