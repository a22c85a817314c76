-- Fixed-window counter: allow at most ARGV[1] hits per window.
-- KEYS[1] counter
-- ARGV[1] limit
-- ARGV[2] window in milliseconds
-- Returns { 1, remaining } when allowed, { 0, ms until the window ends } when not.
local n = redis.call('INCR', KEYS[1])
if n == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
if n > tonumber(ARGV[1]) then
  local left = redis.call('PTTL', KEYS[1])
  if left < 0 then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    left = tonumber(ARGV[2])
  end
  return { 0, left }
end
return { 1, tonumber(ARGV[1]) - n }
