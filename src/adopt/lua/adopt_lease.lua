-- The bulk import's lease: one run at a time per store (two at once would
-- write each other's progress and double the load on both stores). Taken and
-- renewed by the run that holds it; it lapses by itself when that run's
-- process dies, so a run killed by SIGKILL blocks the next one for one lease
-- period at most.
-- KEYS[1] the lease (string: the holder's id)
-- ARGV[1] the holder's id
-- ARGV[2] 'hold' (take or renew) or 'give' (give it up)
-- ARGV[3] how long it holds (ms)
-- Returns {1} when the holder holds it now (or gave it up), {0, ms it is
-- still held by another} otherwise.
local holder = redis.call('GET', KEYS[1])
if ARGV[2] == 'give' then
  if holder == ARGV[1] then
    redis.call('DEL', KEYS[1])
  end
  return { 1 }
end
if holder and holder ~= ARGV[1] then
  return { 0, redis.call('PTTL', KEYS[1]) }
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
return { 1 }
