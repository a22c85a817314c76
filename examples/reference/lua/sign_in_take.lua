-- Take a short-lived record of a sign-in (a WebAuthn challenge, an upstream
-- sign-in's state): read it and delete it in one step, so it works once.
-- KEYS[1] hash
-- Returns its fields and values, flat (empty when it is gone).
local record = redis.call('HGETALL', KEYS[1])
if #record > 0 then
  redis.call('DEL', KEYS[1])
end
return record
