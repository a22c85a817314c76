-- Records one back-channel logout's outcome in a hash with a TTL (renewed).
-- KEYS[1] hash (the person's logout outcomes, or one sign-out's)
-- ARGV[1] field (the logout's job id)
-- ARGV[2] value (JSON: site, state, when)
-- ARGV[3] TTL in ms
-- ARGV[4] '1': only when the field is not set yet (the first trigger wins)
-- Returns 1 when written, 0 when the field existed and ARGV[4] is '1'.
if ARGV[4] == '1' and redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
