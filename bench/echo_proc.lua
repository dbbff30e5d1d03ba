-- What the Lua clients of the socket benchmarks (bench/echo.sh) read of
-- their own process in /proc, where stock Lua has no call for it.
--   local proc = require "bench.echo_proc"  (run from the repository's top)
local M = {}

-- resident set size, bytes
function M.rss()
  local f = assert(io.open("/proc/self/status"))
  local kb = f:read("a"):match("VmRSS:%s*(%d+)")
  f:close()
  return tonumber(kb) * 1024
end

-- user CPU time, seconds: /proc/self/stat's utime (field 14, in clock
-- ticks of 1/100 s), what getrusage's ru_utime is made from
function M.user_time()
  local f = assert(io.open("/proc/self/stat"))
  local s = f:read("a")
  f:close()
  -- (after the command's name in parentheses: state, then 10 fields)
  return tonumber(s:match("%)%s+%S+" .. ("%s+%S+"):rep(10) .. "%s+(%d+)"))
         / 100
end

return M
