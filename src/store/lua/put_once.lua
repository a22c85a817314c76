-- Stores a value with a lifetime unless one is stored already (first answer wins).
-- KEYS[1] key
-- ARGV[1] value
-- ARGV[2] lifetime (ms)
-- Returns 1 when stored, 0 when the key existed.
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
return 0
