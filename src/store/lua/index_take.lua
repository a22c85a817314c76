-- Remove and return the members of an index that start with a prefix
-- (an empty prefix takes them all and deletes the index).
-- KEYS[1] index (sorted set)
-- ARGV[1] member prefix
local members = redis.call('ZRANGE', KEYS[1], 0, -1)
if ARGV[1] == '' then
  redis.call('DEL', KEYS[1])
  return members
end
local taken = {}
local n = string.len(ARGV[1])
for _, m in ipairs(members) do
  if string.sub(m, 1, n) == ARGV[1] then
    taken[#taken + 1] = m
    redis.call('ZREM', KEYS[1], m)
  end
end
return taken
