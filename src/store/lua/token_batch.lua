-- The token endpoint's writes in one step (single node and Sentinel only: the
-- keys live in several Cluster hash slots, where the adapter sends them one
-- script per slot): the code or refresh token presented is consumed exactly
-- once, then the new tokens are written with their TTL and indexed under
-- their grant. Nothing is written unless this call consumed the token, and
-- nothing is written under a revoked grant.
-- KEYS[1] record to consume ('' in ARGV[1]: none)
-- KEYS[2] where the answer of this use is kept for the reuse leeway (used when ARGV[2] is '1')
-- KEYS[3] grant index (sorted set scored by expiry)
-- KEYS[4] grant tombstone
-- KEYS[5] the person's connected sites, for the site's "last used" (used when
--         ARGV[8] is not '')
-- KEYS[6] the record that an earlier use's new tokens were never written
--         (consume.lua's KEYS[3]; used when ARGV[5] is '1')
-- KEYS[7..] new records, one per payload/ttl pair in ARGV[10..]
-- ARGV[1] consumed-at (seconds since the epoch); '' when nothing is consumed
-- ARGV[2] '1': keep the answer in KEYS[2] (a refresh token, leeway on)
-- ARGV[3] the answer, sealed with the consumed record's own id
-- ARGV[4] how long it is kept (ms): the leeway
-- ARGV[5] '1' when a use already consumed it but its new tokens were never
--         written (a failed write, recorded in KEYS[6]): this use takes its
--         place, once
-- ARGV[6] now (ms since the epoch)
-- ARGV[7] '1': also drop the index members that expired (the caller asks for
--         it on a share of the writes, not on every one)
-- ARGV[8] the site's clientId when its "last used" is due (site_used.lua's
--         step, whatever the outcome below), else ''
-- ARGV[9] when it was used (ms since the epoch)
-- ARGV[10..] payload (JSON), ttl (ms, > 0) of each new record, in KEYS order
-- The index's expiry is the latest of its members' (index_add.lua keeps the
-- same rule by reading its last member).
-- Returns, like consume.lua: { 1 } done (the records are written, unless the
-- grant is revoked), { 0, payload, kept answer or nil, unwritten } when the
-- record was consumed already, { -1 } when it no longer exists; in both
-- nothing is written.
--- @include "site_use"
-- First: the site used its access whether or not the writes below go through.
if ARGV[8] ~= '' then
  recordSiteUse(KEYS[5], ARGV[8], tonumber(ARGV[9]))
end
local keep = ARGV[2] == '1'
if ARGV[1] ~= '' then
  if redis.call('EXISTS', KEYS[1]) == 0 then
    return { -1 }
  end
  local again = keep and ARGV[5] == '1' and redis.call('EXISTS', KEYS[2]) == 1 and redis.call('DEL', KEYS[6]) == 1
  if redis.call('HSETNX', KEYS[1], 'c', ARGV[1]) == 0 and not again then
    local kept, unwritten = false, false
    if keep then
      kept = redis.call('GET', KEYS[2])
      unwritten = redis.call('EXISTS', KEYS[6]) == 1
    end
    return { 0, redis.call('HGET', KEYS[1], 'p'), kept, unwritten }
  end
  if keep then
    redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[4])
  end
end
if redis.call('EXISTS', KEYS[4]) == 1 then
  return { 1 }
end
local now = tonumber(ARGV[6])
local members = {}
local latest = 0
for i = 7, #KEYS do
  local at = 10 + (i - 7) * 2
  -- A whole replace without a DEL first (one call fewer on every token
  -- written): a record saved again drops its consumed mark.
  if redis.call('HSET', KEYS[i], 'p', ARGV[at]) == 0 then
    redis.call('HDEL', KEYS[i], 'c')
  end
  redis.call('PEXPIRE', KEYS[i], ARGV[at + 1])
  local expires = now + tonumber(ARGV[at + 1])
  if expires > latest then
    latest = expires
  end
  members[#members + 1] = string.format('%.0f', expires)
  members[#members + 1] = KEYS[i]
end
redis.call('ZADD', KEYS[3], unpack(members))
if ARGV[7] == '1' then
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
end
-- The index expires with its last member: its expiry only ever moves later
-- (GT), and an index this call created gets one (NX). Usually one call: the
-- new refresh token outlives everything indexed before it.
latest = string.format('%.0f', latest)
if redis.call('PEXPIREAT', KEYS[3], latest, 'GT') == 0 then
  redis.call('PEXPIREAT', KEYS[3], latest, 'NX')
end
return { 1 }
