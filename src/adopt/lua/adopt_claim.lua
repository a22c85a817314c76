-- Moves one record of the previous store in, once (docs/upgrading.md, "Taking
-- over from your previous adapter"): written with its remaining lifetime unless
-- it is here already, was moved before (and may since have been consumed,
-- destroyed or revoked here: it never comes back) or a tombstone refuses it;
-- marked moved for as long as it may live, so that a lagging previous store
-- never brings it in again.
-- KEYS[1] the record (hash { p, c?, t? })
-- KEYS[2] its moved mark (hash { at }: when it was moved, ms; same hash tag)
-- KEYS[3] a tombstone that refuses it (a Grant's own `:revoked`; same hash tag), or KEYS[1]
-- ARGV[1] payload JSON
-- ARGV[2] lifetime (ms, > 0): of the record and of its moved mark
-- ARGV[3] consumed at (seconds since the epoch), or ''
-- ARGV[4] written at (ms) for `t` (grants and sessions), or ''
-- ARGV[5] now (ms since the epoch)
-- Returns {1} when moved now, {0, ms since it was moved} when it was moved
-- before, {0, -1} when it is here already or refused.
local movedAt = redis.call('HGET', KEYS[2], 'at')
if movedAt then
  return { 0, tonumber(ARGV[5]) - tonumber(movedAt) }
end
local refused = KEYS[3] ~= KEYS[1] and redis.call('EXISTS', KEYS[3]) == 1
if refused or redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('HSET', KEYS[2], 'at', ARGV[5])
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
  return { 0, -1 }
end
redis.call('HSET', KEYS[1], 'p', ARGV[1])
if ARGV[3] ~= '' then
  redis.call('HSET', KEYS[1], 'c', ARGV[3])
end
if ARGV[4] ~= '' then
  redis.call('HSET', KEYS[1], 't', ARGV[4])
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('HSET', KEYS[2], 'at', ARGV[5])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return { 1 }
