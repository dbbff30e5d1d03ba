-- Thread switch: nanoseconds per yield/resume round trip.
--
--   lua5.4 bench/switch.lua <impl> <nthreads> <iters>
--
-- <nthreads> threads each switch <iters>/<nthreads> times; the figure is
-- wall time / total switches, over the whole run (setup of 1,000 threads
-- included: it is well under 1% of the run).
--   corosched  cs.sleep(0) in light threads under cs.run
--   stock      coroutine.resume/yield from a Lua loop, round-robin (no corosched)
--   cqueues    cqueues.sleep(0) in cq:wrap coroutines, cq:loop()
--   luv        timer(0) ping-pong: a coroutine starts its timer and yields,
--              the timer callback resumes it
--   cs_user    corosched loaded, a user coroutine resumed/yielded inside a
--              light thread (through the trampoline); nthreads must be 1
--   cs_plain   corosched loaded, coroutine.resume/yield outside cs.run
--              (the replaced coroutine functions); nthreads must be 1
local B = dofile((arg[0]:match("^(.*)/") or ".") .. "/lib.lua")

local impls = {}
local impl, nth, iters = B.args("switch.lua <impl> <nthreads> <iters>",
  { "corosched", "stock", "cqueues", "luv", "cs_user", "cs_plain" })
local per = math.max(1, iters // nth)
local total = per * nth

local function stock_round_robin()
  local create, resume, yield = coroutine.create, coroutine.resume, coroutine.yield
  local function body() while true do yield() end end
  local cos = {}
  for i = 1, nth do
    cos[i] = create(body)
    assert(resume(cos[i]))
  end
  return B.timed(impl, function()
    if nth == 1 then
      local co = cos[1]
      for _ = 1, per do resume(co) end
    else
      for _ = 1, per do
        for i = 1, nth do resume(cos[i]) end
      end
    end
  end)
end

function impls.stock()
  return stock_round_robin()
end

function impls.cs_plain()
  B.corosched()
  assert(nth == 1, "cs_plain: nthreads must be 1")
  return stock_round_robin()
end

function impls.cs_user()
  local cs = B.corosched()
  assert(nth == 1, "cs_user: nthreads must be 1")
  local create, resume, yield = coroutine.create, coroutine.resume, coroutine.yield
  return B.timed(impl, function()
    cs.run(function()
      local co = create(function() while true do yield() end end)
      assert(resume(co))
      for _ = 1, per do resume(co) end
    end)
  end)
end

function impls.corosched()
  local cs = B.corosched()
  local sleep, spawn = cs.sleep, cs.thread.spawn
  local function body()
    for _ = 1, per do sleep(0) end
  end
  return B.timed(impl, function()
    if nth == 1 then
      cs.run(body)
    else
      cs.run(function()
        for _ = 1, nth do spawn(body) end
      end)
    end
  end)
end

function impls.cqueues()
  local cqueues = require "cqueues"
  local sleep = cqueues.sleep
  local cq = cqueues.new()
  local function body()
    for _ = 1, per do sleep(0) end
  end
  for _ = 1, nth do cq:wrap(body) end
  return B.timed(impl, function()
    assert(cq:loop())
  end)
end

function impls.luv()
  local uv = require "luv"
  local create, resume, yield = coroutine.create, coroutine.resume, coroutine.yield
  local cos = {}
  for i = 1, nth do
    local timer = uv.new_timer()
    local co
    local function wake()
      local ok, err = resume(co)
      if not ok then error(err) end
    end
    co = create(function()
      for _ = 1, per do
        timer:start(0, 0, wake)
        yield()
      end
      timer:close()
    end)
    cos[i] = co
  end
  return B.timed(impl, function()
    for i = 1, nth do assert(resume(cos[i])) end
    uv.run()
  end)
end

local wall = impls[impl]()
B.out(wall * 1e9 / total)
