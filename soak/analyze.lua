-- Reads <dir>/client.csv and <dir>/server.csv (one sample per second),
-- prints the curve as a compact table, applies the pass criteria and
-- writes <dir>/soak.gp (a gnuplot script for <dir>/soak.png).
--   lua5.4 soak/analyze.lua <dir>
-- Exit status 0 = pass.
--
-- Criteria, on the samples after the warm-up W = min(20% of SOAK_TIME,
-- 30 s) and up to SOAK_TIME; Q1 / Q4 = the mean of the first / last
-- quarter of those samples:
--   RSS       Q4 <= Q1 * 1.05 + 4 MiB                      (each process)
--   Lua heap  the same (collectgarbage("count"))
--   C heap    the same, for malloc's bytes in use minus Lua's heap (when
--             soak/mallinfo.c could be built: jemalloc's stats.allocated,
--             or glibc's mallinfo2 with SOAK_MALLOC=glibc); with
--             RSS growing and both heaps flat, the analysis says that the
--             growth is memory malloc keeps (fragmentation), not a leak;
--             SOAK_RSS=warn then makes that RSS growth a warning only
--   fds       every sample <= its bound, Q4 <= max(Q1 * 1.05 + 2% of the
--             bound, its level)
--   cs.stats  threads, timers, sockets, pending_io, timeouts: the same
-- With CONNS connections, POOL idle connections per port, PORTS ports,
-- TIMERS pending timers and the cycler's 5000-thread batches, the level
-- is what the configured concurrency gives (a count that climbs up to it
-- is a client catching up after a slow start, not a leak), and the bound
-- adds SLACK = max(256, CONNS / 10) + 32 (sockets dropped without close
-- wait for the garbage collector; a peer's close takes a moment):
--                            level
--   fds, sockets, pending_io  CONNS + POOL * PORTS + PORTS
--   client threads, timeouts  CONNS + 5000 + TIMERS
--   client timers             TIMERS                (bound: TIMERS + 32)
--   server threads, timeouts  CONNS + POOL * PORTS + PORTS
--   server timers             0                     (bound: SLACK + 32;
--                                                    a handler waits in a
--                                                    0 s timer)
-- Also: no corrupted reply, no Lua error in a worker, unexpected I/O
-- errors under 1% of the connections, every spawn/kill/wait cycle done,
-- the client clean after its drain (client.final says "clean") and the
-- server's handlers all ended (server.final: handlers_left=0).
local dir = assert(arg[1], "usage: analyze.lua <dir>")

local function env_num(name, default)
  return tonumber(os.getenv(name) or "") or default
end

local T = env_num("SOAK_TIME", 600)
local CONNS = env_num("SOAK_CONNS", 9000)
local POOL = env_num("SOAK_POOL", 50)
local PORTS = env_num("SOAK_PORTS", 8)
local TIMERS = env_num("SOAK_TIMERS", 2000)
local CYCLES = env_num("SOAK_CYCLES", 1000000)
local W = math.min(0.2 * T, 30)
local SLACK = math.max(256, CONNS // 10)

local function read_csv(path)
  local f = io.open(path, "r")
  if not f then return nil end
  local header = f:read("l")
  local cols = {}
  for c in header:gmatch("[^,]+") do cols[#cols + 1] = c end
  local rows = {}
  for line in f:lines() do
    local row, i = {}, 0
    for v in line:gmatch("[^,]+") do
      i = i + 1
      row[cols[i]] = tonumber(v)
    end
    rows[#rows + 1] = row
  end
  f:close()
  return rows, cols
end

local function read_final(path)
  local f = io.open(path, "r")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  local kv = {}
  for k, v in s:gmatch("([%w_]+)=(%d+)") do
    if kv[k] == nil then kv[k] = tonumber(v) end
  end
  return kv, s
end

local client = read_csv(dir .. "/client.csv")
local server = read_csv(dir .. "/server.csv")
local cfinal, ctext = read_final(dir .. "/client.final")
local sfinal, stext = read_final(dir .. "/server.final")
local failures = {}
local function fail(fmt, ...)
  failures[#failures + 1] = fmt:format(...)
end

if not client or #client == 0 then fail("no client samples") end
if not server or #server == 0 then fail("no server samples") end

-- {====== the curve ======

local function at(rows, t)
  local best
  for _, r in ipairs(rows or {}) do
    if r.t <= t + 0.5 then best = r else break end
  end
  return best
end

if client and server and #client > 0 then
  local last_t = client[#client].t
  local nrows = 16
  print(("soak: %d client samples, %d server samples, warm-up %gs")
    :format(#client, #server, W))
  print(("%6s | %8s %6s %6s %6s %6s %5s | %8s %6s %6s %6s | %7s %8s")
    :format("t(s)", "C.rssMiB", "C.fds", "C.thr", "C.tmr", "C.sock",
            "C.pio", "S.rssMiB", "S.fds", "S.thr", "S.sock", "conn/s",
            "cycles"))
  local prev
  for i = 0, nrows - 1 do
    local t = last_t * i / (nrows - 1)
    local c, s = at(client, t), at(server, t)
    if c and s then
      local rate = 0
      if prev and c.t > prev.t then
        rate = (c.conns - prev.conns) / (c.t - prev.t)
      end
      print(("%6.0f | %8.1f %6d %6d %6d %6d %5d | %8.1f %6d %6d %6d | %7.0f"
             .. " %8d")
        :format(c.t, c.rss_kb / 1024, c.fds, c.threads, c.timers,
                c.sockets, c.pending_io, s.rss_kb / 1024, s.fds, s.threads,
                s.sockets, rate, c.cycles))
      prev = c
    end
  end
end

-- }======

-- {====== criteria ======

local function window(rows)
  local post = {}
  for _, r in ipairs(rows or {}) do
    if r.t >= W and r.t <= T + 0.5 and r.final == 0 then
      post[#post + 1] = r
    end
  end
  return post
end

local function mean(rows, k, a, b)
  local s, n = 0, 0
  for i = a, b do
    s = s + rows[i][k]
    n = n + 1
  end
  return n > 0 and s / n or 0
end

local function check(name, rows, k, bound, level)
  local post = window(rows)
  if #post < 8 then
    fail("%s: only %d samples after the warm-up", name, #post)
    return
  end
  local q = #post // 4
  local q1, q4 = mean(post, k, 1, q), mean(post, k, #post - q + 1, #post)
  local max = 0
  for _, r in ipairs(post) do
    if r[k] > max then max = r[k] end
  end
  local limit, verdict
  if k == "c_heap_kb" then -- malloc in use minus Lua's heap: C memory
    limit = q1 * 1.05 + 4096
    verdict = q4 <= limit
    print(("  %-18s Q1 %8.1f MiB  Q4 %8.1f MiB  limit %8.1f MiB  %s")
      :format(name, q1 / 1024, q4 / 1024, limit / 1024,
              verdict and "ok" or "GROWS"))
    if not verdict then
      fail("%s grows: %.1f -> %.1f MiB (limit %.1f): C memory leaks", name,
           q1 / 1024, q4 / 1024, limit / 1024)
    end
    return verdict
  end
  if k == "rss_kb" or k == "lua_kb" then
    limit = q1 * 1.05 + 4096
    verdict = q4 <= limit
    print(("  %-18s Q1 %8.1f MiB  Q4 %8.1f MiB  limit %8.1f MiB  %s")
      :format(name, q1 / 1024, q4 / 1024, limit / 1024,
              verdict and "ok" or "GROWS"))
    if not verdict then
      fail("%s grows: %.1f -> %.1f MiB (limit %.1f)", name, q1 / 1024,
           q4 / 1024, limit / 1024)
    end
    return verdict
  end
  -- a count may climb up to its nominal level (the configured
  -- concurrency: a client that fell behind is catching up), not beyond
  limit = math.max(q1 * 1.05 + 0.02 * bound, level or 0)
  verdict = q4 <= limit and max <= bound
  print(("  %-18s Q1 %8.1f  Q4 %8.1f  limit %8.1f  max %6d <= %6d  %s")
    :format(name, q1, q4, limit, max, bound,
            verdict and "ok" or (max > bound and "OVER BOUND" or "GROWS")))
  if max > bound then
    fail("%s: %d over its bound %d", name, max, bound)
  elseif q4 > limit then
    fail("%s grows: %.1f -> %.1f (limit %.1f)", name, q1, q4, limit)
  end
  return verdict
end

-- C memory in use = malloc's in-use bytes minus Lua's heap (soak.mallinfo)
local function derive(rows)
  local ok = rows and #rows > 0
  for _, r in ipairs(rows or {}) do
    if (r.heap_kb or -1) < 0 then ok = false end
    r.c_heap_kb = (r.heap_kb or 0) - (r.lua_kb or 0)
  end
  return ok
end

-- RSS grows but malloc's memory in use does not: the heap keeps memory
-- that was freed (fragmentation), nothing is lost. With SOAK_RSS=warn
-- that is a warning, not a failure.
local RSS_WARN = os.getenv("SOAK_RSS") == "warn"
local function diagnose(who, rss_ok, lua_ok, heap_ok)
  if rss_ok == false and lua_ok and heap_ok then
    print(("  %s: RSS grows while the C heap in use and Lua's heap are "
           .. "flat: freed memory kept by malloc (fragmentation), not a "
           .. "leak%s"):format(who, os.getenv("SOAK_MALLOC") == "glibc"
             and " (glibc's malloc: the soak's default, SOAK_MALLOC=jemalloc,"
                 .. " does not fragment this way)" or ""))
    if RSS_WARN then
      for i = #failures, 1, -1 do
        if failures[i]:find("^" .. who .. " rss grows") then
          print("  (SOAK_RSS=warn: not counted as a failure)")
          table.remove(failures, i)
        end
      end
    end
  end
end

local sock_level = CONNS + POOL * PORTS + PORTS
local sock_bound = sock_level + SLACK + 32
local cthr_level = CONNS + 5000 + TIMERS
local cthr_bound = cthr_level + SLACK + 32
print("criteria (after the warm-up; Q1/Q4 = mean of the first/last quarter):")
if client and #client > 0 then
  local rss_ok = check("client rss", client, "rss_kb")
  local lua_ok, heap_ok = check("client lua heap", client, "lua_kb"), nil
  if derive(client) then
    heap_ok = check("client C heap", client, "c_heap_kb")
  end
  diagnose("client", rss_ok, lua_ok, heap_ok)
  check("client fds", client, "fds", sock_bound, sock_level)
  check("client threads", client, "threads", cthr_bound, cthr_level)
  check("client timers", client, "timers", TIMERS + 32, TIMERS)
  check("client sockets", client, "sockets", sock_bound, sock_level)
  check("client pending_io", client, "pending_io", sock_bound, sock_level)
  check("client timeouts", client, "timeouts", cthr_bound, cthr_level)
end
if server and #server > 0 then
  local rss_ok = check("server rss", server, "rss_kb")
  local lua_ok, heap_ok = check("server lua heap", server, "lua_kb"), nil
  if derive(server) then
    heap_ok = check("server C heap", server, "c_heap_kb")
  end
  diagnose("server", rss_ok, lua_ok, heap_ok)
  check("server fds", server, "fds", sock_bound, sock_level)
  check("server threads", server, "threads", sock_bound, sock_level)
  check("server timers", server, "timers", SLACK + 32)
  check("server sockets", server, "sockets", sock_bound, sock_level)
  check("server pending_io", server, "pending_io", sock_bound, sock_level)
  check("server timeouts", server, "timeouts", sock_bound, sock_level)
end

if not cfinal then
  fail("no client.final (the client did not finish)")
else
  print("client: " .. ctext:gsub("\n$", ""):gsub("\n", "\n        "))
  if not ctext:find(": clean", 1, true) then
    fail("the client is not clean after its drain")
  end
  if (cfinal.corrupt or 0) > 0 then
    fail("%d corrupted replies", cfinal.corrupt)
  end
  if (cfinal.lua_errors or 0) > 0 then
    fail("%d Lua errors in the client", cfinal.lua_errors)
  end
  if (cfinal.cycles or 0) < CYCLES then
    fail("%d spawn/kill/wait cycles of %d", cfinal.cycles or 0, CYCLES)
  end
  local conns = cfinal.conns or 0
  if conns < CONNS then
    fail("only %d connections", conns)
  end
  if (cfinal.errors or 0) > 0.01 * conns then
    fail("%d unexpected errors for %d connections (over 1%%)",
         cfinal.errors, conns)
  end
end
if not sfinal then
  fail("no server.final (the server did not finish)")
else
  print("server: " .. stext:gsub("\n$", ""):gsub("\n", "\n        "))
  if (sfinal.handlers_left or 1) ~= 0 then
    fail("server: %d handlers did not end", sfinal.handlers_left or -1)
  end
end

-- }======

-- {====== gnuplot script ======

local gp = io.open(dir .. "/soak.gp", "w")
if gp then
  gp:write(([[
set terminal png size 1200,1100
set output '%s/soak.png'
set datafile separator ','
set key autotitle columnhead left top
set xlabel 'seconds'
set grid
set multiplot layout 3,1 title 'corosched soak (warm-up ends at %gs)'
set arrow 1 from %g, graph 0 to %g, graph 1 nohead dashtype 2
set ylabel 'MiB'
plot '%s/client.csv' using 1:($2/1024) with lines title 'client RSS', \
     '%s/server.csv' using 1:($2/1024) with lines title 'server RSS', \
     '%s/client.csv' using 1:($12/1024) with lines title 'client malloc', \
     '%s/server.csv' using 1:($12/1024) with lines title 'server malloc', \
     '%s/client.csv' using 1:($11/1024) with lines title 'client Lua heap', \
     '%s/server.csv' using 1:($11/1024) with lines title 'server Lua heap'
set ylabel 'open fds'
plot '%s/client.csv' using 1:3 with lines title 'client fds', \
     '%s/server.csv' using 1:3 with lines title 'server fds', \
     '%s/client.csv' using 1:8 with lines title 'client sockets', \
     '%s/server.csv' using 1:8 with lines title 'server sockets'
set ylabel 'count'
plot '%s/client.csv' using 1:4 with lines title 'client threads', \
     '%s/client.csv' using 1:7 with lines title 'client timers', \
     '%s/client.csv' using 1:10 with lines title 'client timeouts', \
     '%s/server.csv' using 1:4 with lines title 'server threads', \
     '%s/client.csv' using 1:9 with lines title 'client pending_io'
unset multiplot
]]):format(dir, W, W, W, dir, dir, dir, dir, dir, dir, dir, dir, dir, dir,
           dir, dir, dir, dir, dir))
  gp:close()
end

-- }======

if #failures > 0 then
  print("soak: FAILED")
  for _, f in ipairs(failures) do print("  - " .. f) end
  os.exit(1)
end
print("soak: PASSED")
os.exit(0)
