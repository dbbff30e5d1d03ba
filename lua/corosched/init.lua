-- corosched: OpenResty's light threads and cosockets for stock Lua 5.4.
--
--   local cs = require "corosched"
--   cs.run(function() ... end)
--
-- The C core (corosched.core) does all the work; this file assembles the
-- public table and installs the coroutine.* replacements.
local core = require "corosched.core"

local _M = {
  _VERSION = core._VERSION,
  run = core.run,
  shutdown = core.shutdown, -- nginx's graceful exit (nginx -s quit)
  exiting = core.exiting,
  sleep = core.sleep,
  now = core.now,
  update_time = core.update_time,
  stats = core.stats,
  dump = core.dump,
  on_error = core.on_error,
  thread = core.thread,
  timer = core.timer,
  semaphore = core.semaphore,
  queue = core.queue,
  socket = core.socket,
  resolve = core.resolve,
  crypto = core.crypto, -- digests, HMAC, PBKDF2, random bytes (OpenSSL)
  null = core.null, -- a NULL light userdata, equal to ngx.null and cjson.null
}

-- The originals stay reachable. They are kept in the registry, so that a
-- second load of this module (package.loaded cleared, as busted's
-- insulation does) does not take our replacements for the originals.
local registry = debug.getregistry()
local raw = registry["corosched.raw_coroutine"]
if raw == nil then
  raw = {}
  for k, v in pairs(coroutine) do raw[k] = v end
  registry["corosched.raw_coroutine"] = raw
end
_M.raw_coroutine = raw

-- Inside a light thread these route every resume through the scheduler's
-- trampoline; elsewhere they behave exactly like Lua's own.
coroutine.resume = core.coroutine.resume
coroutine.wrap = core.coroutine.wrap
coroutine.yield = core.coroutine.yield
coroutine.close = core.coroutine.close
coroutine.status = core.thread.status

return _M
