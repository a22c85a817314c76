-- Last step of POST /api/notify with an Idempotency-Key: the answer replaces
-- the key's '#<id>' record, keeping its lifetime (the window runs from the
-- first request). The first answer wins; a record gone meanwhile stays gone.
-- KEYS[1] the Idempotency-Key's record (string with TTL)
-- ARGV[1] the answer JSON
-- Returns 1 when stored, else 0.
local held = redis.call('GET', KEYS[1])
if held and string.sub(held, 1, 1) == '#' then
  redis.call('SET', KEYS[1], ARGV[1], 'KEEPTTL')
  return 1
end
return 0
