-- The cqueues client of the socket benchmarks (bench/echo.sh).
--
--   lua5.4 bench/echo_cqueues.lua rt   HOST PORTS CONNS WARMUP_S DURATION_S
--   lua5.4 bench/echo_cqueues.lua idle HOST PORTS CONNS
--
-- rt: CONNS coroutines (cq:wrap), each with a socket in binary, unbuffered
-- mode, loop write(64 bytes) + read(64), all starting once all are
-- connected (a condition variable). Output as bench/echo_corosched.lua.
-- idle: CONNS coroutines blocked in read(64).
local cqueues = require "cqueues"
local socket = require "cqueues.socket"
local condition = require "cqueues.condition"

local mode, host = arg[1], arg[2]
local ports, n = {}, math.tointeger(tonumber(arg[4]))
for p in (arg[3] or ""):gmatch("[^,]+") do ports[#ports + 1] = tonumber(p) end
local port = ports[1]
local warmup, duration = tonumber(arg[5]), tonumber(arg[6])
if (mode ~= "rt" and mode ~= "idle") or not host or not port or not n
    or (mode == "rt" and not (warmup and duration)) then
  io.stderr:write("usage: echo_cqueues.lua rt HOST PORTS CONNS WARMUP_S ",
                  "DURATION_S\n       echo_cqueues.lua idle HOST PORTS CONNS\n")
  os.exit(2)
end

local proc = require "bench.echo_proc"
local rss, user_time = proc.rss, proc.user_time

local function fail(what, err)
  io.stderr:write("echo_cqueues: ", what, ": ", tostring(err), "\n")
  os.exit(1)
end

local MSG = string.rep("x", 64)
local WINDOW = 1000
local count, connected, inflight = 0, 0, 0
local slot = condition.new() -- signalled when a connect completes
local go = condition.new()   -- signalled when all are connected
local started = false

local cq = cqueues.new()

local function worker(i)
  local sock = socket.connect { host = host, port = ports[(i - 1) % #ports + 1],
                                nodelay = true }
  sock:setmode("bn", "bn")
  local ok, err = sock:connect()
  if not ok then fail("connect", err) end
  inflight = inflight - 1
  connected = connected + 1
  slot:signal()
  if mode == "idle" then
    local _, rerr = sock:read(64) -- blocks until the process exits
    fail("read", rerr)
  end
  if not started then go:wait() end
  while true do
    local sent, serr = sock:write(MSG)
    if not sent then fail("write", serr) end
    local data, rerr = sock:read(64)
    if not data then fail("read", rerr or "closed") end
    count = count + 1
  end
end

cq:wrap(function()
  collectgarbage()
  collectgarbage()
  local rss0, heap0 = rss(), collectgarbage("count")
  for i = 1, n do
    while inflight >= WINDOW do slot:wait() end
    inflight = inflight + 1
    cq:wrap(worker, i)
  end
  while connected < n do cqueues.sleep(0.005) end

  if mode == "idle" then -- every coroutine is blocked in read by now
    collectgarbage()
    collectgarbage()
    local heap = (collectgarbage("count") - heap0) * 1024
    io.write(string.format("per_conn=%.1f heap=%.1f n=%d\n",
                           (rss() - rss0) / n, heap / n, n))
    io.stdout:flush()
    os.exit(0)
  end

  started = true
  go:signal()
  cqueues.sleep(warmup)
  local t0, c0, u0, k0 = cqueues.monotime(), os.clock(), user_time(), count
  cqueues.sleep(duration)
  local t, c, k = cqueues.monotime() - t0, os.clock() - c0, count - k0
  io.write(string.format("rate=%.1f cpu_us=%.3f user_us=%.3f n=%d\n", k / t,
                         c * 1e6 / k, (user_time() - u0) * 1e6 / k, n))
  io.stdout:flush()
  os.exit(0)
end)

local ok, err = cq:loop()
fail("loop", ok and "ended early" or err)
