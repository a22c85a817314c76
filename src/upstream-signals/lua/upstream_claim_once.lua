-- Claims a key once for a while: a SET's jti for the replay window, or an
-- upstream's poll for one cycle (one instance polls at a time).
-- KEYS[1] the key (upstream-jti:{<upstream>:<sha256(jti)>} or upstream-poll:{<upstream>})
-- ARGV[1] how long (milliseconds; the key's TTL)
-- Returns 1 when it was free and is now claimed, 0 when it was claimed already.
if redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[1]) then
  return 1
end
return 0
