-- Marks a message read, or deletes it.
-- KEYS[1] inbox order, KEYS[2] inbox entries, KEYS[3] unread ids (same hash tag)
-- ARGV[1] message id
-- ARGV[2] 'read' or 'delete'
-- Returns 1, or 0 when the message is not in the inbox.
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 0 then return 0 end
redis.call('ZREM', KEYS[3], ARGV[1])
if ARGV[2] == 'delete' then
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('HDEL', KEYS[2], ARGV[1])
end
return 1
