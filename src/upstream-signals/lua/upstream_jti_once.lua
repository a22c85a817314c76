-- A SET's jti, seen once: the first delivery claims it for the replay window.
-- KEYS[1] the jti's key (upstream-jti:{<upstream>:<sha256(jti)>})
-- ARGV[1] the window in milliseconds (the key's TTL)
-- Returns 1 when it is new, 0 when it was seen within the window.
if redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[1]) then
  return 1
end
return 0
