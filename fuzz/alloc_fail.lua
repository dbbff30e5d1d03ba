-- The workload of fuzz/alloc_fail.c: run once per allocation limit N in a
-- fresh lua_State whose allocator fails after N allocations. Without a
-- limit it must succeed (its asserts are the check that the workload did
-- what it says). Every wait is bounded by a short timeout, so a run whose
-- server thread died of a memory error still ends quickly.
local cs = require "corosched"

local reports = 0
cs.on_error(function() reports = reports + 1 end)

local T = 2000 -- socket timeouts, ms

local function scheduler()
  -- spawn / wait, arguments and results
  local t = cs.thread.spawn(function(a, b)
    cs.sleep(0.001)
    return a + b, "x"
  end, 1, 2)
  local ok, v, x = cs.thread.wait(t)
  assert(ok and v == 3 and x == "x")

  -- wait on several, kill the rest; a zombie; an error waited on
  local a = cs.thread.spawn(function() cs.sleep(10) end)
  local b = cs.thread.spawn(function() return "b" end) -- ends at once
  local c = cs.thread.spawn(function() error("boom") end)
  assert(cs.thread.wait(a, b) == true)
  assert(cs.thread.kill(a) == 1)
  local okc, errc = cs.thread.wait(c)
  assert(okc == false and tostring(errc):find("boom"))
  assert(cs.thread.status(a) == "dead")

  -- a thread killed while parked inside a user coroutine
  local k = cs.thread.spawn(function()
    local co = coroutine.wrap(function() cs.sleep(10) end)
    co()
  end)
  cs.sleep(0)
  assert(cs.thread.kill(k) == 1)

  -- many short threads
  local ts = {}
  for i = 1, 20 do
    ts[i] = cs.thread.spawn(function(n)
      cs.sleep(0)
      return n
    end, i)
  end
  for i = 1, 20 do
    local okn, n = cs.thread.wait(ts[i])
    assert(okn and n == i)
  end
end

local function timers()
  local fired, every = 0, 0
  cs.timer.at(0.001, function(premature, n)
    if not premature then fired = fired + n end
  end, 5)
  local ev = assert(cs.timer.every(0.001, function() every = every + 1 end))
  local dead = cs.timer.at(10, function() error("must not run") end)
  assert(dead:pending())
  assert(dead:cancel() == 1)
  assert(select(2, dead:cancel()) == "not pending")
  cs.sleep(0.01)
  assert(ev:cancel() == 1)
  assert(fired == 5 and every >= 1)
end

local function sync()
  local sem = cs.semaphore.new(0)
  local w = cs.thread.spawn(function() return sem:wait(1) end)
  assert(sem:count() == -1)
  sem:post(1)
  local ok, r = cs.thread.wait(w)
  assert(ok and r == true)
  assert(select(2, sem:wait(0)) == "timeout")
  assert(select(2, sem:wait(0.001)) == "timeout")

  -- a bounded queue: the producer parks while it is full
  local q = cs.queue.new(1)
  local prod = cs.thread.spawn(function()
    for i = 1, 6 do assert(q:push(i, 1)) end
    q:close()
  end)
  local sum = 0
  while true do
    local v, err = q:pop(1)
    if not v then
      assert(err == "closed")
      break
    end
    sum = sum + v
  end
  assert(sum == 21)
  cs.thread.wait(prod)
  assert(select(2, cs.queue.new():pop(0.001)) == "timeout")

  -- a popper handed an item and a waiter granted a unit, both killed
  -- before they ran: the item and the unit are given back
  local q2 = cs.queue.new()
  local p = cs.thread.spawn(function() return q2:pop(1) end)
  assert(q2:push("item") == 1)
  assert(cs.thread.kill(p) == 1)
  assert(q2:pop(0) == "item")
  local s2 = cs.semaphore.new(0)
  local w2 = cs.thread.spawn(function() return s2:wait(1) end)
  s2:post(1)
  assert(cs.thread.kill(w2) == 1)
  assert(s2:count() == 1)
end

local function coroutines()
  local gen = coroutine.wrap(function()
    for i = 1, 3 do
      cs.sleep(0)
      coroutine.yield(i)
    end
  end)
  assert(gen() == 1 and gen() == 2 and gen() == 3)
  local co = coroutine.create(function(x)
    local y = coroutine.yield(x + 1)
    cs.sleep(0.001)
    return y * 2
  end)
  assert(select(2, coroutine.resume(co, 1)) == 2)
  assert(select(2, coroutine.resume(co, 5)) == 10)
  assert(coroutine.status(co) == "dead")
  assert(pcall(cs.sleep, 0.001))
  local okp, e = pcall(coroutine.wrap(function() error("in wrap") end))
  assert(not okp and e:find("in wrap"))
  local cc = coroutine.create(function() coroutine.yield() end)
  coroutine.resume(cc)
  assert(coroutine.close(cc))
end

local function tcp()
  local srv = assert(cs.socket.listen("127.0.0.1", 0))
  local _, port = assert(srv:getsockname())
  srv:settimeout(T)
  local server = cs.thread.spawn(function()
    for _ = 1, 2 do
      local c = srv:accept()
      if not c then return end
      c:settimeout(T)
      while true do
        local line = c:receive("*l")
        if not line then break end
        if not c:send(line .. "\n") then break end
      end
      c:close()
    end
  end)

  local c = cs.socket.tcp()
  c:settimeout(T)
  assert(c:connect("127.0.0.1", port))
  for i = 1, 3 do
    assert(c:send("hello " .. i .. "\n"))
    assert(c:receive("*l") == "hello " .. i)
  end
  assert(c:send({ "a", { "b", 1 }, "\n" }))
  assert(c:receive("*l") == "ab1")
  assert(c:send("p--q--\n"))
  local it = c:receiveuntil("--")
  assert(it() == "p")
  assert(it() == "q")
  assert(c:receive(1) == "\n")
  assert(c:send("12345\n"))
  assert(c:receive(3) == "123")
  assert(c:receiveany(10) == "45\n")
  assert(c:setkeepalive(1000, 2)) -- to the pool; the server keeps it open
  local c2 = cs.socket.tcp()
  c2:settimeout(T)
  assert(c2:connect("127.0.0.1", port))
  assert(c2:getreusedtimes() == 1)
  assert(c2:send("again\n"))
  assert(c2:receive("*l") == "again")
  c2:close()

  -- the second connection: the client is killed while it waits
  local c3 = cs.socket.tcp()
  c3:settimeout(T)
  assert(c3:connect("localhost", port)) -- through the resolver
  local r = cs.thread.spawn(function() return c3:receive("*l") end)
  cs.sleep(0.001)
  assert(cs.thread.kill(r) == 1)
  assert(select(2, c3:receive()) == "closed")
  cs.thread.wait(server)
  srv:close()

  -- refused
  local d = cs.socket.tcp()
  local okd, errd = d:connect("127.0.0.1", port)
  assert(not okd and errd == "connection refused")
end

local function names_and_udp()
  -- names: /etc/hosts through the resolver (no network needed)
  local addrs = cs.resolve("localhost")
  assert(type(addrs) == "table" and #addrs >= 1)
  assert(cs.resolve("127.0.0.1")[1] == "127.0.0.1")
  assert(type(cs.dump()) == "string")
  if not cs.socket.udp then return end
  local a, b = cs.socket.udp(), cs.socket.udp()
  assert(a:bind("127.0.0.1", 0))
  local _, pa = assert(a:getsockname())
  assert(b:setpeername("127.0.0.1", pa))
  local _, pb = assert(b:getsockname())
  assert(a:setpeername("127.0.0.1", pb))
  a:settimeout(T)
  b:settimeout(T)
  assert(b:send({ "ping", 1 }))
  assert(a:receive() == "ping1")
  assert(a:send("pong"))
  assert(b:receive() == "pong")
  a:close()
  b:close()
end

local function entry_failures()
  -- the entry raises: pending timers run prematurely, cs.run raises
  local premature
  local ok, err = pcall(cs.run, function()
    cs.timer.at(10, function(p) premature = p end)
    cs.thread.spawn(function() cs.sleep(10) end)
    error("entry failed")
  end)
  assert(not ok and tostring(err):find("entry failed") and premature == true)
  -- a deadlock is reported
  ok, err = pcall(cs.run, function()
    cs.thread.spawn(function() cs.queue.new():pop() end)
    cs.queue.new():pop()
  end)
  assert(not ok and tostring(err):find("deadlock"))
end

local res = cs.run(function()
  scheduler()
  timers()
  sync()
  coroutines()
  tcp()
  names_and_udp()
  return "done"
end)
assert(res == "done")
entry_failures()
local st = cs.stats()
assert(st.threads == 0 and st.timers == 0 and st.pending_io == 0
       and st.sockets == 0, "stats not clean")
