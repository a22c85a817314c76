-- The letter worker is done with a letter: when it was sent, the marker that
-- keeps it from ever being sent again; in any case the hold goes.
-- KEYS[1] sent marker of the notification
-- KEYS[2] hold of the notification (same hash tag)
-- ARGV[1] '1' when the letter was sent
-- ARGV[2] how long the sent marker is kept (ms)
-- Returns 1.
if ARGV[1] == '1' then redis.call('SET', KEYS[1], '1', 'PX', ARGV[2]) end
redis.call('DEL', KEYS[2])
return 1
