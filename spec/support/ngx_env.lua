-- What corosched.ngx's install() changes, put back after each test: the
-- ngx and unpack globals, the package.preload/loaded entries of its
-- modules (and of a spec's own, listed by the spec), the log level and
-- pending ngx.timer timers, so that the spec files that install it leave
-- nothing behind for the others.
--
--   local ngx_env = require "spec.support.ngx_env"
--   local save_globals, restore_globals = ngx_env.saver({ "resty.x" })
--   before_each(save_globals); after_each(restore_globals)
local ngxc = require "corosched.ngx"

local M = {}

-- save and restore functions for the module names in extra (optional)
-- plus corosched.ngx's own
function M.saver(extra)
  local names = {}
  for _, name in ipairs(extra or {}) do names[#names + 1] = name end
  for name in pairs(ngxc.modules) do names[#names + 1] = name end
  local saved

  local function save()
    saved = { ngx = rawget(_G, "ngx"), unpack = rawget(_G, "unpack"),
              preload = {}, loaded = {} }
    for _, name in ipairs(names) do
      saved.preload[name] = package.preload[name]
      saved.loaded[name] = package.loaded[name]
      package.preload[name] = nil
      package.loaded[name] = nil
    end
    rawset(_G, "ngx", nil)
  end

  local function restore()
    if not saved then return end -- (save did not run)
    rawset(_G, "ngx", saved.ngx)
    rawset(_G, "unpack", saved.unpack)
    for _, name in ipairs(names) do
      package.preload[name] = saved.preload[name]
      package.loaded[name] = saved.loaded[name]
    end
    ngxc.set_log_level("error")
    ngxc.stop_timers()
    saved = nil
  end

  return save, restore
end

-- an io.stdout stand-in collecting what ngx.say/ngx.print write into buf
-- (the response body of a replayed OpenResty block)
function M.sink(buf)
  return {
    write = function(self, ...)
      for i = 1, select("#", ...) do
        buf[#buf + 1] = tostring((select(i, ...)))
      end
      return self
    end,
    flush = function(self) return self end,
  }
end

-- a second copy of corosched.ngx, loaded as when corosched.re was not
-- built (its require fails); corosched.ngx and corosched.re stay loaded
-- as they were
function M.ngx_without_re()
  local saved_re = package.loaded["corosched.re"]
  local saved_ngx = package.loaded["corosched.ngx"]
  package.loaded["corosched.ngx"] = nil
  package.loaded["corosched.re"] = nil
  package.preload["corosched.re"] = function() error("not built") end
  local ok, mod = pcall(require, "corosched.ngx")
  package.preload["corosched.re"] = nil
  package.loaded["corosched.re"] = saved_re
  package.loaded["corosched.ngx"] = saved_ngx
  assert(ok, mod)
  return mod
end

return M
