-- Delete a pointer only while it still points where the caller thinks, so a
-- late destroy cannot remove a newer record's pointer.
-- KEYS[1] string key
-- ARGV[1] expected value
-- Returns 1 when deleted.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
