-- Ends, at once, everything of a site or a person issued up to a moment: a
-- mark the token and session reads compare with (a grant issued, a session
-- signed in, at or before it is treated as gone: adapters/ended.ts). Nothing
-- is enumerated. The mark only ever moves later.
-- KEYS[1] the mark (hash: grants, sessions: ms since the epoch; keep: a
--         session uid spared by the sessions mark)
-- ARGV[1] field: 'grants' or 'sessions'
-- ARGV[2] ms since the epoch
-- ARGV[3] with 'sessions': the uid of the session that stays ('' none)
-- Returns the mark's value after the call.
local current = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
local at = tonumber(ARGV[2])
if at > current then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  current = at
end
if ARGV[1] == 'sessions' then
  redis.call('HSET', KEYS[1], 'keep', ARGV[3])
end
return current
