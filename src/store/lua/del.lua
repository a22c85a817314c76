-- Delete a key and say whether this call deleted it: the single winner of a
-- race to use something once.
-- KEYS[1] key
return redis.call('DEL', KEYS[1])
