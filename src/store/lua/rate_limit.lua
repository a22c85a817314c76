-- Fixed-window counter: allow at most ARGV[1] hits per window.
-- KEYS[1] counter
-- ARGV[1] limit
-- ARGV[2] window in milliseconds
-- Returns { 1, remaining } when allowed, { 0, ms until the window ends } when not.
--- @include "count_hit"
local n, left = countHit(KEYS[1], ARGV[1], ARGV[2])
if left then
  return { 0, left }
end
return { 1, tonumber(ARGV[1]) - n }
