-- Count one wrong code against an address (for one browser scope, as chosen
-- by sign_in_gate) and, past the free failures, lock code checks with a
-- doubling back-off.
-- KEYS[1] failure record { n, until }
-- ARGV[1] free failures per window
-- ARGV[2] window in milliseconds (counted from the last failure)
-- ARGV[3] first lock in milliseconds
-- ARGV[4] longest lock in milliseconds
-- ARGV[5] now (ms)
-- Returns the lock in ms (0: none).
local n = redis.call('HINCRBY', KEYS[1], 'n', 1)
local free = tonumber(ARGV[1])
local lock = 0
if n > free then
  lock = math.min(tonumber(ARGV[4]), tonumber(ARGV[3]) * 2 ^ (n - free - 1))
  redis.call('HSET', KEYS[1], 'until', tonumber(ARGV[5]) + lock)
end
redis.call('PEXPIRE', KEYS[1], math.max(tonumber(ARGV[2]), lock))
return lock
