-- Helpers shared by the benchmark scripts: clocks, memory readings, output.
-- Loaded with dofile(<bench dir>/lib.lua); finds bench/build/benchclock.so
-- next to itself.
local M = {}

local dir = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "."
M.dir = dir
package.cpath = dir .. "/build/?.so;" .. package.cpath
local clk = require "benchclock"

M.now = clk.now   -- monotonic wall clock, seconds
M.cpu = clk.cpu   -- process CPU time, seconds

-- a field of /proc/self/status in bytes ("VmRSS", "VmHWM", ...)
function M.status(field)
  local f = assert(io.open("/proc/self/status", "r"))
  local s = f:read("a")
  f:close()
  local kb = s:match(field .. ":%s*(%d+)%s*kB")
  return assert(tonumber(kb), field .. " not found") * 1024
end

function M.rss() return M.status("VmRSS") end
function M.hwm() return M.status("VmHWM") end

-- bytes held by the Lua heap, after a full collection
function M.heap()
  collectgarbage("collect")
  collectgarbage("collect")
  return collectgarbage("count") * 1024
end

-- command line: script <impl> <n> [<iters>]
function M.args(usage, names)
  local impl, n, iters = arg[1], tonumber(arg[2]), tonumber(arg[3])
  local known = false
  for _, name in ipairs(names) do known = known or name == impl end
  if not known or not n then
    io.stderr:write("usage: ", usage, "\n  impl: ", table.concat(names, " "), "\n")
    os.exit(2)
  end
  return impl, math.tointeger(n) or n, iters and (math.tointeger(iters) or iters)
end

-- what M.timed returns: wall time (default) or process CPU time
-- (BENCH_CLOCK=cpu: steadier when other processes compete for the cores,
-- but blind to time spent waiting in the kernel)
local use_cpu = os.getenv("BENCH_CLOCK") == "cpu"
M.busy = nil   -- CPU time / wall time of the last M.timed

-- prints the result line: one number, or key=value pairs in the given order;
-- with BENCH_BUSY set, busy=<cpu/wall of the last M.timed> is appended
function M.out(...)
  local t = { ... }
  if os.getenv("BENCH_BUSY") and M.busy then
    if #t == 1 then table.insert(t, 1, "v") end
    t[#t + 1] = "busy"
    t[#t + 1] = M.busy
  end
  local parts = {}
  if #t == 1 then
    parts[1] = string.format("%.6g", t[1])
  else
    for i = 1, #t, 2 do
      parts[#parts + 1] = string.format("%s=%.6g", t[i], t[i + 1])
    end
  end
  io.write(table.concat(parts, " "), "\n")
  io.flush()
end

-- a diagnostic line on stderr (the runner keeps it in its log)
function M.note(fmt, ...)
  io.stderr:write(string.format(fmt, ...), "\n")
end

-- runs fn(); returns its wall time (or CPU time, see above) and notes
-- both on stderr with how busy the process was
function M.timed(label, fn)
  local c0, t0 = M.cpu(), M.now()
  fn()
  local t1, c1 = M.now(), M.cpu()
  local wall, cpu = t1 - t0, c1 - c0
  M.busy = wall > 0 and cpu / wall or 0
  M.note("%s: wall %.4fs cpu %.4fs (%.0f%% busy)", label, wall, cpu, 100 * M.busy)
  if use_cpu then return cpu end
  return wall
end

function M.corosched()
  local ok, cs = pcall(require, "corosched")
  if not ok then
    io.stderr:write("cannot load corosched (run from the repo root after make, with\n",
                    "LUA_CPATH='build/?.so;;' LUA_PATH='lua/?.lua;lua/?/init.lua;;'):\n",
                    tostring(cs), "\n")
    os.exit(3)
  end
  return cs
end

return M
