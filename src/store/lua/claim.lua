-- Set a string key unless it exists; return the value it holds afterwards.
-- Persistent (no TTL): used for lookups such as email -> account id.
-- KEYS[1] string key
-- ARGV[1] value to set when absent
local current = redis.call('GET', KEYS[1])
if current then
  return current
end
redis.call('SET', KEYS[1], ARGV[1])
return ARGV[1]
