-- A passkey signed in: keep its signature counter and its last use. A
-- counter that does not move forward (when either is not zero) means a
-- cloned authenticator (WebAuthn Level 3, section 6.1.1): refused, nothing changed.
-- KEYS[1] hash credential id -> JSON { counter, lastUsedAt, backedUp, ... }
-- ARGV[1] credential id
-- ARGV[2] the assertion's counter
-- ARGV[3] now (ms)
-- ARGV[4] backed up: 'true' or 'false'
-- Returns 'ok', 'missing' or 'counter'.
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then
  return 'missing'
end
local record = cjson.decode(raw)
local stored = tonumber(record.counter) or 0
local given = tonumber(ARGV[2])
if (given > 0 or stored > 0) and given <= stored then
  return 'counter'
end
record.counter = given
record.lastUsedAt = tonumber(ARGV[3])
record.backedUp = ARGV[4] == 'true'
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(record))
return 'ok'
