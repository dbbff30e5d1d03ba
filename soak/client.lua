-- The soak's client (run by soak/run.sh; settings from the environment):
--   lua5.4 soak/client.lua <dir>
-- For SOAK_TIME seconds it keeps SOAK_CONNS connections to the server of
-- soak/server.lua churning, runs SOAK_CYCLES spawn/kill/wait cycles spread
-- over the run and creates and cancels timers at random, sampling itself
-- every second into <dir>/client.csv. Then it kills what is left, checks
-- that cs.stats() is back to nothing but the connection pool, writes
-- <dir>/client.final and creates <dir>/stop (the server's signal to end).
--
-- A connection (one "worker" light thread, spawned by the supervisor):
-- connect to one of the server's ports (through the pool), 1 to 4
-- exchanges with random pauses (echo, a reply that comes too late for a
-- 50 ms read timeout on purpose, a bulk reply of up to 200 KB, a
-- receiveuntil exchange), then at random: close, setkeepalive to the pool,
-- or "Q" and a read to the end. The supervisor kills a share of the
-- workers at random moments (in connect, send, receive or a pause). Most
-- workers hold their socket in a <close> variable (a kill closes it at
-- once); some drop theirs without closing it (the garbage collector must).
-- With SOAK_TLS > 0 (run.sh starts soak/tls_front.py), that share of the
-- connections goes through a TLS front to the same server: a verified
-- handshake (half of them offering the session another one saved), the
-- same exchanges over TLS, pooled TLS connections, kills in the middle of
-- handshakes, TLS sockets left to the collector.
local cs = require "corosched"
local C = require "soak.common"

local dir = assert(arg[1], "usage: client.lua <dir>")
local DURATION = C.env_num("SOAK_TIME", 600)
local CONNS = C.env_num("SOAK_CONNS", 9000)
local CYCLES = C.env_num("SOAK_CYCLES", 1000000)
local POOL = C.env_num("SOAK_POOL", 50)        -- per server port
local HOLD = C.env_num("SOAK_HOLD", 6)         -- mean life of a connection
local KILLS = C.env_num("SOAK_KILLS", 0.1)     -- share of workers killed
local TIMERS = C.env_num("SOAK_TIMERS", 2000)  -- pending timers at most
local RAMP = C.env_num("SOAK_RAMP", 2000)      -- new connections per second
                                               -- while ramping up
local SEED = C.env_num("SOAK_SEED", os.time())
local TLS = C.env_num("SOAK_TLS", 0)           -- share of TLS connections

local ports = {}
for line in io.lines(dir .. "/ports") do ports[#ports + 1] = tonumber(line) end
assert(#ports > 0, "no ports")
local tls_port -- the TLS front's, when there is one
if TLS > 0 then
  local f = io.open(dir .. "/tls_port")
  tls_port = f and tonumber(f:read("l"))
  if f then f:close() end
  assert(tls_port, "SOAK_TLS is set but there is no TLS front")
  cs.socket.setcafile(assert(os.getenv("SOAK_CA"), "SOAK_CA"))
end

local n = { conns = 0, connect_ok = 0, reused = 0, exchanges = 0,
            deliberate_timeouts = 0, kills = 0, keepalive = 0, closes = 0,
            quits = 0, abandoned = 0, errors = 0, corrupt = 0,
            lua_errors = 0, cycles = 0, timers_created = 0,
            tls_handshakes = 0, tls_offered = 0,
            timers_cancelled = 0, timers_fired = 0, workers = 0 }
local errs = {}

local function err_count(what, err)
  local k = what .. ": " .. tostring(err)
  errs[k] = (errs[k] or 0) + 1
  n.errors = n.errors + 1
end

local rng = C.rng(SEED)
local BIG = ("0123456789abcdef"):rep(4096)
local tls_session -- the last one saved: later handshakes may offer it

-- {====== one connection ======

local function exchange(sock, r, id, i)
  local kind = r.float()
  if kind < 0.70 then -- echo
    local msg = ("id%d-%d-%d"):format(id, i, r.next())
    local ok, err
    if r.chance(0.3) then -- an array (small: well under 1 KiB)
      ok, err = sock:send({ "E ", msg, { "\n" } })
    else
      ok, err = sock:send("E " .. msg .. "\n")
    end
    if not ok then return err_count("send", err) end
    local line, rerr = sock:receive("*l")
    if not line then return err_count("receive", rerr) end
    if line ~= msg then
      n.corrupt = n.corrupt + 1
      return err_count("echo", "mismatch")
    end
  elseif kind < 0.80 then -- a read timeout on purpose, then the late reply
    local msg = ("late%d-%d"):format(id, i)
    local ok, err = sock:send("S 150 " .. msg .. "\n")
    if not ok then return err_count("send", err) end
    sock:settimeouts(3000, 3000, 30)
    local line, rerr = sock:receive("*l")
    sock:settimeouts(3000, 3000, 3000)
    if line ~= nil or rerr ~= "timeout" then
      return err_count("deliberate timeout", tostring(line) .. "/"
                       .. tostring(rerr))
    end
    n.deliberate_timeouts = n.deliberate_timeouts + 1
    line, rerr = sock:receive("*l") -- the socket is still usable
    if not line then return err_count("receive after timeout", rerr) end
    if line ~= msg then
      n.corrupt = n.corrupt + 1
      return err_count("late reply", "mismatch")
    end
  elseif kind < 0.90 then -- bulk
    local size = r.int(1, 200000)
    local ok, err = sock:send("B " .. size .. "\n")
    if not ok then return err_count("send", err) end
    local data, rerr = sock:receive(size)
    if not data then return err_count("receive bulk", rerr) end
    local full, rest = size // #BIG, size % #BIG
    local expect_ok = #data == size
      and data:sub(1, math.min(size, 4096)) == BIG:sub(1, math.min(size, 4096))
      and (full > 0 or data == BIG:sub(1, rest))
    if not expect_ok then
      n.corrupt = n.corrupt + 1
      return err_count("bulk", "mismatch")
    end
  else -- receiveuntil on the server
    local msg = ("until%d-%d-%d"):format(id, i, r.next())
    local ok, err = sock:send("U\n" .. msg .. "--END--")
    if not ok then return err_count("send", err) end
    local line, rerr = sock:receive("*l")
    if not line then return err_count("receive", rerr) end
    if line ~= msg then
      n.corrupt = n.corrupt + 1
      return err_count("until", "mismatch")
    end
  end
  n.exchanges = n.exchanges + 1
  return true
end

local function connection(id, seed)
  local r = C.rng(seed)
  local sock = cs.socket.tcp()
  local abandon = r.chance(0.02)
  local guard <close> = (not abandon) and sock or nil -- luacheck: ignore
  sock:settimeouts(3000, 3000, 3000)
  local tls = tls_port and r.chance(TLS)
  local port = tls and tls_port or ports[r.int(1, #ports)]
  local ok, err = sock:connect("127.0.0.1", port, { pool_size = POOL })
  if not ok then return err_count("connect", err) end
  n.connect_ok = n.connect_ok + 1
  if sock:getreusedtimes() > 0 then n.reused = n.reused + 1 end
  if tls then -- (a pooled TLS connection answers at once)
    local offer = r.chance(0.5) and tls_session or nil
    local sess, herr = sock:sslhandshake(offer, "test.example", true)
    if not sess then return err_count("sslhandshake", herr) end
    n.tls_handshakes = n.tls_handshakes + 1
    if offer then n.tls_offered = n.tls_offered + 1 end
    if r.chance(0.1) then tls_session = sess end
  end
  local nx = r.int(1, 4)
  for i = 1, nx do
    if not exchange(sock, r, id, i) then return end
    cs.sleep(r.float() * 2 * HOLD / (nx + 1))
  end
  if abandon then -- dropped open: the garbage collector closes it
    n.abandoned = n.abandoned + 1
    return
  end
  local e = r.float()
  if e < 0.4 then
    sock:close()
    n.closes = n.closes + 1
  elseif e < 0.85 then
    local kok, kerr = sock:setkeepalive(10000, POOL)
    if not kok then return err_count("setkeepalive", kerr) end
    n.keepalive = n.keepalive + 1
  else
    local sok, serr = sock:send("Q\n")
    if not sok then return err_count("send", serr) end
    local rest, rerr = sock:receive("*a")
    if rest ~= "" then return err_count("quit", tostring(rerr)) end
    n.quits = n.quits + 1
  end
end

-- }======

-- {====== the supervisor: keeps CONNS workers, kills some, reaps all ======

local running = true
local live, pos = {}, {}
local done = cs.queue.new()

local function live_add(t)
  live[#live + 1] = t
  pos[t] = #live
end

local function live_remove(t)
  local i = pos[t]
  if not i then return false end
  local last = live[#live]
  live[i] = last
  pos[last] = i
  live[#live] = nil
  pos[t] = nil
  return true
end

local function worker(id, seed)
  local ok, err = pcall(connection, id, seed)
  if not ok then
    n.lua_errors = n.lua_errors + 1
    if n.lua_errors <= 5 then C.log("client", "worker error: %s", err) end
  end
  n.conns = n.conns + 1
  done:push(cs.thread.self())
end

local function supervisor()
  local next_id = 0
  local t0 = C.clock()
  local started = 0
  local kill_debt = 0
  local last = C.clock()
  while running do
    -- reap the workers that ended
    while true do
      local t = done:pop(0)
      if not t then break end
      live_remove(t)
      local ok, err = cs.thread.wait(t) -- nil: it was killed as a zombie
      if ok == false then err_count("wait", err) end
    end
    -- keep CONNS of them (ramping up at RAMP per second)
    local allowed = math.floor((C.clock() - t0) * RAMP) - started
    while #live < CONNS and (allowed > 0 or started >= CONNS) do
      next_id = next_id + 1
      started = started + 1
      allowed = allowed - 1
      live_add(cs.thread.spawn(worker, next_id, rng.next()))
    end
    n.workers = #live
    -- kill a share of them at random moments
    local now = C.clock()
    kill_debt = kill_debt + KILLS * CONNS / HOLD * (now - last)
    last = now
    while kill_debt >= 1 and #live > 0 do
      kill_debt = kill_debt - 1
      local t = live[rng.int(1, #live)]
      live_remove(t)
      local ok, err = cs.thread.kill(t)
      if ok then
        n.kills = n.kills + 1
        n.conns = n.conns + 1
      elseif err ~= "already terminated" then -- (that one is in `done`)
        err_count("kill", err)
      end
    end
    cs.sleep(0.01)
  end
  -- the end: kill the workers still running, reap the rest
  for i = #live, 1, -1 do
    local t = live[i]
    live[i] = nil
    pos[t] = nil
    if cs.thread.kill(t) == 1 then n.kills = n.kills + 1 end
  end
  while true do
    local t = done:pop(0)
    if not t then break end
    cs.thread.wait(t) -- "already waited or killed" for the killed ones
  end
end

-- }======

-- {====== spawn/kill/wait cycles ======

local function cycler()
  local t0 = C.clock()
  local span = DURATION * 0.95
  local sem = cs.semaphore.new(0)
  local q = cs.queue.new()
  local kinds = {
    function() cs.sleep(0) return 1 end,                          -- wait
    function() return 1 end,                                      -- wait
    function() error("planned") end,                              -- wait
    function() cs.sleep(60) end,                                  -- kill
    function() sem:wait(60) end,                                  -- kill
    function() q:pop(60) end,                                     -- kill
    function() coroutine.wrap(function() cs.sleep(60) end)() end, -- kill
    function() coroutine.yield() return 1 end,                    -- kill
  }
  local batch = {}
  -- on schedule while the run lasts; if the loop fell behind (a loaded
  -- machine), the rest right after it, for at most 20% of the run more
  local late = t0 + DURATION * 1.2
  while n.cycles < CYCLES and (running or C.clock() < late) do
    local due = running
      and math.floor(CYCLES * math.min(1, (C.clock() - t0) / span))
          - n.cycles
      or CYCLES - n.cycles
    if due > 5000 then due = 5000 end
    local b = 0
    while b < due do
      local k = rng.int(1, #kinds)
      b = b + 1
      batch[b] = cs.thread.spawn(kinds[k])
      batch[b + 5000] = k
    end
    for i = 1, b do
      local t, k = batch[i], batch[i + 5000]
      batch[i] = nil
      -- 1-3 end by themselves: mostly waited (kill: the zombie path);
      -- 4-8 park for 60 s (8 yields first): always killed
      if k == 3 or (k <= 2 and not rng.chance(0.1)) then
        local ok, res = cs.thread.wait(t)
        if k == 3 and ok ~= false then
          err_count("cycle", "error not reported")
        elseif k <= 2 and not (ok and res == 1) then
          err_count("cycle", "bad result " .. tostring(res))
        end
      else
        local ok, err = cs.thread.kill(t)
        if not ok and err ~= "already terminated" then
          err_count("cycle kill", err)
        end
      end
      n.cycles = n.cycles + 1
    end
    cs.sleep(0.01)
  end
end

-- }======

-- {====== timers created and cancelled at random ======

local function timer_churn()
  local pending = {}
  local function fired(premature)
    if not premature then n.timers_fired = n.timers_fired + 1 end
  end
  while running do
    for _ = 1, rng.int(0, 40) do
      if #pending < TIMERS then
        local t
        if rng.chance(0.1) then
          t = cs.timer.every(0.05 + rng.float() * 0.5, fired)
        else
          t = cs.timer.at(rng.float() * 2, fired)
        end
        if t then
          pending[#pending + 1] = t
          n.timers_created = n.timers_created + 1
        end
      end
    end
    -- cancel some at random; forget the ones that ran
    for _ = 1, rng.int(0, 30) do
      if #pending == 0 then break end
      local i = rng.int(1, #pending)
      local t = pending[i]
      pending[i] = pending[#pending]
      pending[#pending] = nil
      if t:cancel() == 1 then n.timers_cancelled = n.timers_cancelled + 1 end
    end
    local i = 1
    while i <= #pending do
      if not pending[i]:pending() then
        pending[i] = pending[#pending]
        pending[#pending] = nil
      else
        i = i + 1
      end
    end
    cs.sleep(0.02)
  end
  for _, t in ipairs(pending) do
    if t:cancel() == 1 then n.timers_cancelled = n.timers_cancelled + 1 end
  end
end

-- }======

local function main()
  local extra = { "workers", "conns", "connect_ok", "reused", "exchanges",
                  "deliberate_timeouts", "kills", "keepalive", "closes",
                  "quits", "abandoned", "errors", "corrupt", "lua_errors",
                  "cycles", "timers_created", "timers_cancelled",
                  "timers_fired", "tls_handshakes" }
  local stop_sampler = C.sampler(dir .. "/client.csv", extra,
                                 function() return n end)
  local sup = cs.thread.spawn(supervisor)
  local cyc = cs.thread.spawn(cycler)
  local tim = cs.thread.spawn(timer_churn)
  local t_end = C.clock() + DURATION
  while C.clock() < t_end do
    cs.sleep(math.min(1, t_end - C.clock()))
  end
  running = false
  local ok1, e1 = cs.thread.wait(sup)
  local ok2, e2 = cs.thread.wait(cyc)
  local ok3, e3 = cs.thread.wait(tim)
  cs.thread.wait(stop_sampler())
  if not (ok1 and ok2 and ok3) then
    C.log("client", "a driver thread failed: %s %s %s", tostring(e1),
          tostring(e2), tostring(e3))
    n.lua_errors = n.lua_errors + 1
  end
  -- let the garbage collector close the abandoned sockets, then check
  collectgarbage()
  collectgarbage()
  cs.sleep(0.1)
  local st = cs.stats()
  local fds = C.fds()
  local max_pool = POOL * (#ports + (tls_port and 1 or 0))
  local drained = st.threads == 1 and st.timers == 0 and st.pending_io == 0
                  and st.timeouts == 0 and st.sockets <= max_pool
                  and fds <= st.sockets + 16
  local e = {}
  for k, v in pairs(errs) do e[#e + 1] = ("%s=%d"):format(k, v) end
  table.sort(e)
  local f = assert(io.open(dir .. "/client.final", "w"))
  local keys = {}
  for k in pairs(n) do keys[#keys + 1] = k end
  table.sort(keys)
  local kv = {}
  for _, k in ipairs(keys) do kv[#kv + 1] = ("%s=%d"):format(k, n[k]) end
  f:write(table.concat(kv, " "), "\n")
  f:write(("after the drain: threads=%d timers=%d sockets=%d (pool max %d) "
           .. "pending_io=%d timeouts=%d fds=%d: %s\n")
    :format(st.threads, st.timers, st.sockets, max_pool, st.pending_io,
            st.timeouts, fds, drained and "clean" or "NOT CLEAN"))
  f:write("errors: ", #e > 0 and table.concat(e, " ") or "none", "\n")
  f:close()
  if not drained then
    C.log("client", "not clean after the drain:\n%s", cs.dump())
  end
  return drained
end

local ok, res = pcall(cs.run, main)
local sf = io.open(dir .. "/stop", "w") -- the server ends now
if sf then sf:close() end
if not ok then
  C.log("client", "cs.run failed: %s", tostring(res))
  os.exit(2)
end
os.exit(res and 0 or 1)
