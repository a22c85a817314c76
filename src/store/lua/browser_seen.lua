-- A sign-in of the person from a browser (the plugin's browser cookie, hashed):
-- whether the account knew that browser, for the "new browser" notice.
-- KEYS[1] the account's browsers (sorted set: browser hash scored by the last sign-in, ms)
-- ARGV[1] the browser's hash
-- ARGV[2] now (ms)
-- ARGV[3] how long a browser stays known after its last sign-in (ms)
-- ARGV[4] most browsers kept (the least recently used go first)
-- Returns 'first' (the account knew no browser yet: nothing to tell), 'known',
-- or 'new' (a browser the account has not signed in from within the window).
local any = redis.call('ZCARD', KEYS[1])
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[2]) - tonumber(ARGV[3]))
local extra = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[4])
if extra > 0 then
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, extra - 1)
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
if any == 0 then
  return 'first'
end
if score and tonumber(score) > tonumber(ARGV[2]) - tonumber(ARGV[3]) then
  return 'known'
end
return 'new'
