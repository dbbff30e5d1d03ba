-- The luv (libuv, callbacks) client of the socket benchmarks (bench/echo.sh).
--
--   lua5.4 bench/echo_luv.lua rt   HOST PORTS CONNS WARMUP_S DURATION_S
--   lua5.4 bench/echo_luv.lua idle HOST PORTS CONNS
--
-- rt: CONNS tcp handles; each read callback that completes a 64-byte answer
-- writes the next 64-byte request. The first requests go out once all are
-- connected. Output as bench/echo_corosched.lua.
-- idle: CONNS handles with read_start and nothing sent.
local uv = require "luv"

local mode, host = arg[1], arg[2]
local ports, n = {}, math.tointeger(tonumber(arg[4]))
for p in (arg[3] or ""):gmatch("[^,]+") do ports[#ports + 1] = tonumber(p) end
local port = ports[1]
local warmup, duration = tonumber(arg[5]), tonumber(arg[6])
if (mode ~= "rt" and mode ~= "idle") or not host or not port or not n
    or (mode == "rt" and not (warmup and duration)) then
  io.stderr:write("usage: echo_luv.lua rt HOST PORTS CONNS WARMUP_S ",
                  "DURATION_S\n       echo_luv.lua idle HOST PORTS CONNS\n")
  os.exit(2)
end

local proc = require "bench.echo_proc"
local rss, user_time = proc.rss, proc.user_time

local function fail(what, err)
  io.stderr:write("echo_luv: ", what, ": ", tostring(err), "\n")
  os.exit(1)
end

local MSG = string.rep("x", 64)
local WINDOW = 1000
local idle = mode == "idle"
local count, connected, started, inflight = 0, 0, 0, 0
local rss0, heap0
local handles = {} -- rt only: to send the first requests
local start_connects, all_connected

local function open_one(i)
  local tcp = uv.new_tcp()
  tcp:connect(host, ports[(i - 1) % #ports + 1], function(err)
    if err then fail("connect", err) end
    tcp:nodelay(true)
    local got = 0
    tcp:read_start(function(rerr, data)
      if rerr or not data then fail("read", rerr or "closed") end
      got = got + #data
      if got >= 64 then
        got = got - 64
        count = count + 1
        tcp:write(MSG)
      end
    end)
    if not idle then handles[#handles + 1] = tcp end
    inflight = inflight - 1
    connected = connected + 1
    start_connects()
    if connected == n then all_connected() end
  end)
end

function start_connects()
  while inflight < WINDOW and started < n do
    started = started + 1
    inflight = inflight + 1
    open_one(started)
  end
end

local function after(sec, fn)
  local t = uv.new_timer()
  t:start(math.floor(sec * 1000 + 0.5), 0, function()
    t:close()
    fn()
  end)
end

function all_connected()
  if idle then
    collectgarbage()
    collectgarbage()
    local heap = (collectgarbage("count") - heap0) * 1024
    io.write(string.format("per_conn=%.1f heap=%.1f n=%d\n",
                           (rss() - rss0) / n, heap / n, n))
    io.stdout:flush()
    os.exit(0)
  end
  for i, tcp in ipairs(handles) do
    tcp:write(MSG)
    handles[i] = nil
  end
  after(warmup, function()
    local t0, c0, u0, k0 = uv.hrtime(), os.clock(), user_time(), count
    after(duration, function()
      local t = (uv.hrtime() - t0) * 1e-9
      local c, k = os.clock() - c0, count - k0
      io.write(string.format("rate=%.1f cpu_us=%.3f user_us=%.3f n=%d\n",
                             k / t, c * 1e6 / k, (user_time() - u0) * 1e6 / k,
                             n))
      io.stdout:flush()
      os.exit(0)
    end)
  end)
end

collectgarbage()
collectgarbage()
rss0, heap0 = rss(), collectgarbage("count")
start_connects()
uv.run()
fail("loop", "ended early")
