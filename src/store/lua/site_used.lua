-- Records that a site used its access to a person (refresh, code exchange,
-- userinfo, introspection of its tokens): "Last used" in Connected sites.
-- At the token endpoint on a single node the same step runs inside
-- token_batch.lua instead.
-- KEYS[1] the account's connected sites (hash: clientId -> JSON)
-- ARGV[1] clientId
-- ARGV[2] when (ms since the epoch)
-- Returns 1 when written, 0 otherwise.
--- @include "site_use"
return recordSiteUse(KEYS[1], ARGV[1], tonumber(ARGV[2]))
