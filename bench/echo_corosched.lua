-- The corosched client of the socket benchmarks (bench/echo.sh).
--
--   lua5.4 bench/echo_corosched.lua rt   HOST PORTS CONNS WARMUP_S DURATION_S
--   lua5.4 bench/echo_corosched.lua idle HOST PORTS CONNS
--
-- rt: CONNS light threads, each with its own cosocket, loop send(64 bytes)
-- + receive(64), all starting once all are connected (a semaphore). Then
-- WARMUP_S seconds, then round trips are counted for DURATION_S seconds. Prints
-- "rate=<round trips/s> cpu_us=<process CPU us per round trip>
-- user_us=<of which in user space> n=CONNS".
-- idle: CONNS light threads each parked in receive(64) on a server that
-- never answers. Prints "per_conn=<VmRSS growth / CONNS, bytes> heap=<Lua
-- heap growth / CONNS> n=CONNS".
--
-- Connections are opened with at most 1,000 connects in flight, as in every
-- client of the suite. Run with corosched on LUA_PATH/LUA_CPATH.
local cs = require "corosched"

local mode, host = arg[1], arg[2]
local ports, n = {}, math.tointeger(tonumber(arg[4]))
for p in (arg[3] or ""):gmatch("[^,]+") do ports[#ports + 1] = tonumber(p) end
local port = ports[1]
local warmup, duration = tonumber(arg[5]), tonumber(arg[6])
if (mode ~= "rt" and mode ~= "idle") or not host or not port or not n
    or (mode == "rt" and not (warmup and duration)) then
  io.stderr:write("usage: echo_corosched.lua rt HOST PORTS CONNS WARMUP_S ",
                  "DURATION_S\n       echo_corosched.lua idle HOST PORTS ",
                  "CONNS\n")
  os.exit(2)
end

local proc = require "bench.echo_proc"
local rss, user_time = proc.rss, proc.user_time

local function fail(what, err)
  io.stderr:write("echo_corosched: ", what, ": ", tostring(err), "\n")
  os.exit(1)
end

local MSG = string.rep("x", 64)
local count, connected = 0, 0

cs.run(function()
  local window = cs.semaphore.new(1000)
  local go = cs.semaphore.new(0)

  local function worker(i)
    local sock = cs.socket.tcp()
    local ok, err = sock:connect(host, ports[(i - 1) % #ports + 1])
    window:post(1)
    if not ok then fail("connect", err) end
    sock:setoption("tcp-nodelay", true)
    connected = connected + 1
    if mode == "idle" then
      local _, rerr = sock:receive(64) -- parks until the process exits
      fail("receive", rerr)
    end
    go:wait(600)
    while true do
      local sent, serr = sock:send(MSG)
      if not sent then fail("send", serr) end
      local data, rerr = sock:receive(64)
      if not data then fail("receive", rerr) end
      count = count + 1
    end
  end

  collectgarbage()
  collectgarbage()
  local rss0, heap0 = rss(), collectgarbage("count")
  for i = 1, n do
    window:wait(60)
    cs.thread.spawn(worker, i)
  end
  while connected < n do cs.sleep(0.005) end

  if mode == "idle" then -- every thread is parked in receive by now
    collectgarbage()
    collectgarbage()
    local heap = (collectgarbage("count") - heap0) * 1024
    io.write(string.format("per_conn=%.1f heap=%.1f n=%d\n",
                           (rss() - rss0) / n, heap / n, n))
    io.stdout:flush()
    os.exit(0)
  end

  go:post(n)
  cs.sleep(warmup)
  cs.update_time()
  local t0, c0, u0, k0 = cs.now(), os.clock(), user_time(), count
  cs.sleep(duration)
  cs.update_time()
  local t, c, k = cs.now() - t0, os.clock() - c0, count - k0
  io.write(string.format("rate=%.1f cpu_us=%.3f user_us=%.3f n=%d\n", k / t,
                         c * 1e6 / k, (user_time() - u0) * 1e6 / k, n))
  io.stdout:flush()
  os.exit(0) -- the kernel closes the sockets
end)
