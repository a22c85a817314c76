-- Records one back-channel logout's outcome in a hash with a TTL (renewed).
-- A new logout also drops the hash's outcomes older than the TTL, so a hash
-- renewed again and again keeps one TTL's worth.
-- KEYS[1] hash (the person's logout outcomes, or one sign-out's)
-- ARGV[1] field (the logout's job id)
-- ARGV[2] value (JSON: clientId, state, at (ms))
-- ARGV[3] TTL in ms
-- ARGV[4] '1': only when the field is not set yet (the first trigger wins)
-- ARGV[5] now (ms)
-- Returns 1 when written, 0 when the field existed and ARGV[4] is '1'.
if ARGV[4] == '1' then
  if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
    return 0
  end
  local oldest = tonumber(ARGV[5]) - tonumber(ARGV[3])
  local all = redis.call('HGETALL', KEYS[1])
  for i = 1, #all, 2 do
    local ok, outcome = pcall(cjson.decode, all[i + 1])
    if not ok or type(outcome) ~= 'table' or tonumber(outcome.at) == nil or tonumber(outcome.at) < oldest then
      redis.call('HDEL', KEYS[1], all[i])
    end
  end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
