-- Writes a Shared Signals stream (one hash per site): create, or change one that exists.
-- KEYS[1] the site's stream hash
-- ARGV[1] mode: "create" (only when none exists), "update" (set the fields given),
--         "replace" (the fields given and nothing else)
-- ARGV[2] the stream id an update or replace is for (ignored by create)
-- ARGV[3..] field, value, field, value, ...
-- Returns 1 when written, 0 when create found a stream or update/replace found none with that id.
local mode = ARGV[1]
if mode == 'create' then
  if redis.call('EXISTS', KEYS[1]) == 1 then
    return 0
  end
else
  if redis.call('HGET', KEYS[1], 'stream_id') ~= ARGV[2] then
    return 0
  end
  if mode == 'replace' then
    redis.call('DEL', KEYS[1])
  end
end
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
return 1
