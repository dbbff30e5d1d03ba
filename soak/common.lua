-- Shared by soak/server.lua and soak/client.lua: settings from the
-- environment, the per-second sampler (VmRSS, open fds, cs.stats()) and
-- a small deterministic random generator.
local cs = require "corosched"

local M = {}

function M.env_num(name, default)
  local v = tonumber(os.getenv(name) or "")
  if v == nil then return default end
  return v
end

-- VmRSS of this process in KiB
function M.rss_kb()
  local f = io.open("/proc/self/status", "r")
  if not f then return -1 end
  local s = f:read("a")
  f:close()
  return tonumber(s:match("VmRSS:%s*(%d+)")) or -1
end

local has_lfs, lfs = pcall(require, "lfs")

-- open file descriptors of this process
function M.fds()
  local n = 0
  if has_lfs then
    for name in lfs.dir("/proc/self/fd") do
      if name ~= "." and name ~= ".." then n = n + 1 end
    end
    return n - 1 -- the directory lfs.dir has open
  end
  local f = assert(io.open("/proc/self/stat", "r"))
  local pid = f:read("n")
  f:close()
  local p = assert(io.popen("ls /proc/" .. pid .. "/fd"))
  for _ in p:lines() do n = n + 1 end
  p:close()
  return n - 1 -- the pipe of io.popen
end

-- the columns every sample line starts with
-- (lua_kb: Lua's heap; heap_kb / heapsys_kb: what malloc has in use /
-- got from the system, Lua's heap included, -1 without soak.mallinfo)
M.BASE = { "t", "rss_kb", "fds", "threads", "running", "zombies", "timers",
           "sockets", "pending_io", "timeouts", "lua_kb", "heap_kb",
           "heapsys_kb" }

-- glibc's heap figures, when soak/run.sh could build soak/mallinfo.c
local has_mi, mi = pcall(require, "soak.mallinfo")
local TRIM = os.getenv("SOAK_MALLOC_TRIM") == "1"

local function heap_kb()
  if not has_mi then return -1, -1 end
  if TRIM then mi.trim() end
  local inuse, sys = mi.stats()
  if not inuse then return -1, -1 end
  return inuse // 1024, sys // 1024
end

-- Starts a light thread that appends one CSV line per second to path:
-- the BASE columns, then counters() (a table of extra columns, keys in
-- the order of `extra`), then "final" (0, and 1 on the last line).
-- Returns a function that stops it (it writes a last line) and returns the
-- sampler's thread, for the caller to wait on.
function M.sampler(path, extra, counters)
  local f = assert(io.open(path, "w"))
  local cols = {}
  for _, c in ipairs(M.BASE) do cols[#cols + 1] = c end
  for _, c in ipairs(extra) do cols[#cols + 1] = c end
  cols[#cols + 1] = "final" -- 1 on the line written by the stop function
  f:write(table.concat(cols, ","), "\n")
  f:flush()
  local t0 = M.clock()
  local stop = false
  local function sample(final)
    local st = cs.stats()
    local row = { ("%.1f"):format(M.clock() - t0), M.rss_kb(), M.fds(),
                  st.threads, st.running, st.zombies, st.timers, st.sockets,
                  st.pending_io, st.timeouts,
                  math.floor(collectgarbage("count")), heap_kb() }
    local c = counters()
    for _, k in ipairs(extra) do row[#row + 1] = c[k] or 0 end
    row[#row + 1] = final and 1 or 0
    f:write(table.concat(row, ","), "\n")
    f:flush()
  end
  local th = cs.thread.spawn(function()
    local next_t = M.clock() + 1
    while not stop do
      cs.sleep(math.max(0.01, next_t - M.clock()))
      if stop then break end
      sample()
      next_t = next_t + 1
      if next_t < M.clock() then next_t = M.clock() + 1 end -- we lagged
    end
  end)
  return function()
    stop = true
    sample(true)
    f:close()
    return th
  end
end

-- wall clock (s) that does not depend on the loop's cached time
function M.clock()
  cs.update_time()
  return cs.now()
end

-- xorshift32: deterministic per seed, independent of math.random
function M.rng(seed)
  local x = (seed % 4294967295) + 1
  local r = {}
  function r.next()
    x = x ~ ((x << 13) & 0xffffffff)
    x = x ~ (x >> 17)
    x = x ~ ((x << 5) & 0xffffffff)
    return x
  end
  function r.float() return r.next() / 4294967296 end
  function r.int(a, b) return a + r.next() % (b - a + 1) end
  function r.chance(p) return r.float() < p end
  return r
end

function M.file_exists(path)
  local f = io.open(path, "r")
  if f then f:close() return true end
  return false
end

function M.log(who, fmt, ...)
  io.stderr:write(("[%s %s] "):format(who, os.date("%H:%M:%S")),
                  fmt:format(...), "\n")
  io.stderr:flush()
end

return M
