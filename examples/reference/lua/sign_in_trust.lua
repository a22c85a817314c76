-- A browser signed in as the address: from now on it has limits of its own
-- for that address (see sign_in_gate).
-- KEYS[1] hash deviceHash -> last sign-in
-- ARGV[1] deviceHash
-- ARGV[2] now (ms)
-- ARGV[3] how long a browser stays known after its last sign-in (ms)
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
