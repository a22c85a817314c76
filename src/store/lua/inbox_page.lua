-- One page of a person's inbox, newest first, and the unread count. Entries
-- past the retention are never shown (the next message prunes them).
-- KEYS[1] inbox order (sorted set: id scored by receivedAt ms)
-- KEYS[2] inbox entries (hash: id -> JSON)
-- KEYS[3] unread ids (sorted set)
-- ARGV[1] start at this score ('+inf' for the newest)
-- ARGV[2] skip entries with exactly that score and an id >= this one ('' for none): the cursor's own page
-- ARGV[3] oldest score shown (ms)
-- ARGV[4] page size
-- Returns { unreadCount, hasMore, id1, score1, entry1, unread1, id2, ... }.
local size = tonumber(ARGV[4])
-- One more than the page says whether there is a next one. After a cursor,
-- the entries sharing its score (the cursor's own page ones among them) come
-- first and may be skipped: fetch that many more, so a page costs the same
-- whatever the inbox holds.
local limit = size + 1
if ARGV[2] ~= '' then
  limit = limit + redis.call('ZCOUNT', KEYS[1], ARGV[1], ARGV[1])
end
local rows = redis.call('ZREVRANGEBYSCORE', KEYS[1], ARGV[1], ARGV[3], 'WITHSCORES', 'LIMIT', 0, limit)
local out = { redis.call('ZCARD', KEYS[3]), 0 }
local taken = 0
for i = 1, #rows, 2 do
  local id, score = rows[i], rows[i + 1]
  if not (ARGV[2] ~= '' and score == ARGV[1] and id >= ARGV[2]) then
    if taken == size then
      out[2] = 1
      break
    end
    taken = taken + 1
    out[#out + 1] = id
    out[#out + 1] = score
    out[#out + 1] = redis.call('HGET', KEYS[2], id) or ''
    out[#out + 1] = redis.call('ZSCORE', KEYS[3], id) and 1 or 0
  end
end
return out
