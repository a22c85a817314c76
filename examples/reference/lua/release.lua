-- Delete a lookup key only while it still points where the caller says (a
-- passkey's or upstream account's owner), so a newer owner is never undone.
-- KEYS[1] string key
-- ARGV[1] the value it must hold
-- Returns 1 when deleted, else 0.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
