-- Memory per parked thread: Lua heap and RSS growth per thread while n
-- threads are parked on a sleep.
--
--   lua5.4 bench/parked.lua <impl> <n>
--
-- Prints gc=<bytes of Lua heap per thread> rss=<bytes of RSS per thread>,
-- both measured after a full collection, relative to the same reading just
-- before the threads were made. Every impl keeps its n thread handles in an
-- array (the same 16 bytes per slot everywhere). All use the same shared
-- function as body, so no per-thread closure is counted.
--   stock      bare coroutines: coroutine.create(f), resumed once to a
--              coroutine.yield() (no corosched loaded)
--   corosched  cs.thread.spawn(f) from the entry thread, f parks in
--              cs.sleep(PARK); measured by the entry thread while they sleep;
--              cs.run ends when they wake
--   cqueues    cq:wrap(f), f parks in cqueues.sleep(PARK); measured from a
--              controller coroutine
--   luv        a coroutine per thread that starts its own uv timer (PARK)
--              and yields; measured, then timers closed
local B = dofile((arg[0]:match("^(.*)/") or ".") .. "/lib.lua")
-- luacheck: ignore 241 (the arrays t keep the threads alive; nothing reads them)

local impl, n = B.args("parked.lua <impl> <n>", { "stock", "corosched", "cqueues", "luv" })
local PARK = tonumber(os.getenv("BENCH_PARK") or "") or 0.3

local impls = {}

local function reading(heap0, rss0)
  local heap = B.heap()
  local rss = B.rss()
  return (heap - heap0) / n, (rss - rss0) / n
end

function impls.stock()
  local create, resume, yield = coroutine.create, coroutine.resume, coroutine.yield
  local function f() yield() end
  local t = {}
  local heap0, rss0 = B.heap(), B.rss()
  for i = 1, n do
    local co = create(f)
    resume(co)
    t[i] = co
  end
  local gc, rss = reading(heap0, rss0)   -- not a tail call: t must stay alive
  return gc, rss
end

function impls.corosched()
  local cs = B.corosched()
  local spawn, sleep = cs.thread.spawn, cs.sleep
  local function f() sleep(PARK) end
  local gc, rss
  cs.run(function()
    local t = {}
    local heap0, rss0 = B.heap(), B.rss()
    for i = 1, n do t[i] = spawn(f) end
    gc, rss = reading(heap0, rss0)
    local parked = cs.stats().threads
    if parked < n then B.note("corosched: only %d of %d threads alive", parked, n) end
  end)
  return gc, rss
end

function impls.cqueues()
  local cqueues = require "cqueues"
  local sleep = cqueues.sleep
  local cq = cqueues.new()
  local function f() sleep(PARK) end
  local gc, rss
  cq:wrap(function()
    local t = {}
    local heap0, rss0 = B.heap(), B.rss()
    for i = 1, n do
      cq:wrap(f)
      t[i] = true
    end
    sleep(0.01)   -- let every child run to its sleep
    gc, rss = reading(heap0, rss0)
  end)
  assert(cq:loop())
  return gc, rss
end

function impls.luv()
  local uv = require "luv"
  local create, resume, yield = coroutine.create, coroutine.resume, coroutine.yield
  local ms = math.floor(PARK * 1000)
  local t = {}
  local function f(timer, wake)
    timer:start(ms, 0, wake)
    yield()
  end
  local heap0, rss0 = B.heap(), B.rss()
  for i = 1, n do
    local timer = uv.new_timer()
    local co
    co = create(f)
    resume(co, timer, function() resume(co) end)
    t[i] = timer
  end
  local gc, rss = reading(heap0, rss0)
  for i = 1, n do t[i]:close() end
  uv.run()
  return gc, rss
end

local gc, rss = impls[impl]()
B.out("gc", gc, "rss", rss)
