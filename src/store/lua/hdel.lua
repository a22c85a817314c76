-- Deletes hash fields.
-- KEYS[1] hash
-- ARGV[1..n] fields
-- Returns the number of fields deleted.
return redis.call('HDEL', KEYS[1], unpack(ARGV))
