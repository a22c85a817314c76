-- The letter worker takes a letter: not when it was sent already, not while
-- another worker holds it. The hold expires, so a worker that died while
-- sending does not block the letter forever.
-- KEYS[1] sent marker of the notification
-- KEYS[2] hold of the notification (same hash tag)
-- ARGV[1] hold duration (ms)
-- ARGV[2] holder id
-- Returns 'sent', 'held' or 'claimed'.
if redis.call('EXISTS', KEYS[1]) == 1 then return 'sent' end
if redis.call('SET', KEYS[2], ARGV[2], 'NX', 'PX', ARGV[1]) then return 'claimed' end
return 'held'
