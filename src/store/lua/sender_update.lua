-- Changes a person's settings for one sender (site): the mute switch and the
-- delivery of each category. Only what is stored differs from the defaults.
-- KEYS[1] the account's sender settings (hash: clientId -> JSON { muted, categories })
-- ARGV[1] clientId
-- ARGV[2] muted: '1', '0', or '' for no change
-- ARGV[3] transactional, ARGV[4] product, ARGV[5] promotions: 'account_and_email',
--         'account', 'off', '' for no change, or 'email_off' (unsubscribe: email
--         off, the message still lands in the account; 'off' stays 'off')
-- ARGV[6..8] the default delivery of the three categories
-- Returns the settings after the change, as JSON.
local current = redis.call('HGET', KEYS[1], ARGV[1])
local s = current and cjson.decode(current) or {}
if type(s.categories) ~= 'table' then s.categories = {} end
if ARGV[2] == '1' then s.muted = true elseif ARGV[2] == '0' then s.muted = false end
local names = { 'transactional', 'product', 'promotions' }
for i, name in ipairs(names) do
  local value = ARGV[2 + i]
  local now = s.categories[name] or ARGV[5 + i]
  if value == 'email_off' then
    if now == 'account_and_email' then s.categories[name] = 'account' end
  elseif value ~= '' then
    s.categories[name] = value
  end
end
local out = cjson.encode({ muted = s.muted == true, categories = {
  transactional = s.categories.transactional or ARGV[6],
  product = s.categories.product or ARGV[7],
  promotions = s.categories.promotions or ARGV[8],
} })
redis.call('HSET', KEYS[1], ARGV[1], out)
return out
