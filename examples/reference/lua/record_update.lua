-- Change members of one JSON record in a hash (a passkey's name, a linked
-- account's last use), keeping the others.
-- KEYS[1] hash field -> JSON object (strings, numbers and booleans only)
-- ARGV[1] field
-- ARGV[2..] member, JSON value, member, JSON value, ...
-- Returns 1, or 0 when the field is gone.
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then
  return 0
end
local record = cjson.decode(raw)
for i = 2, #ARGV, 2 do
  record[ARGV[i]] = cjson.decode(ARGV[i + 1])
end
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(record))
return 1
