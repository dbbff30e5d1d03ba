-- Spawn of many threads that finish: threads per second and peak RSS per
-- thread.
--
--   lua5.4 bench/spawn_many.lua <impl> <n>
--
-- Each thread sleeps 0 (yields) once, then returns. The spawner creates all
-- n first, then they run to the end. Prints
--   rate=<threads/s> rss=<peak RSS growth per thread, bytes> live=<threads
--   alive when the spawner finished spawning> running=<of those, the ones
--   not yet ended> (corosched: cs.stats().threads and .running; threads
--   that ended but were not waited on stay as zombies, as in OpenResty)
-- rss is (VmHWM at the end - VmRSS before spawning) / n.
--   corosched  the entry thread of cs.run calls cs.thread.spawn n times;
--              the threads call cs.sleep(0); cs.run returns when all ended
--   stock      coroutine.create + resume (runs to its yield) n times, all
--              kept alive in a table, then each resumed again to finish
--   cqueues    cq:wrap n coroutines calling cqueues.sleep(0), then cq:loop()
local B = dofile((arg[0]:match("^(.*)/") or ".") .. "/lib.lua")

local impl, n = B.args("spawn_many.lua <impl> <n>", { "corosched", "stock", "cqueues" })

local impls = {}

function impls.corosched()
  local cs = B.corosched()
  local spawn, sleep = cs.thread.spawn, cs.sleep
  local function body() sleep(0) end
  local live, running
  local base = (B.heap() and B.rss())
  local wall = B.timed(impl, function()
    cs.run(function()
      for _ = 1, n do spawn(body) end
      local st = cs.stats()
      live, running = st.threads, st.running
    end)
  end)
  return wall, base, live, running
end

function impls.stock()
  local create, resume, yield = coroutine.create, coroutine.resume, coroutine.yield
  local function body() yield() end
  local cos, live = {}, nil
  local base = (B.heap() and B.rss())
  local wall = B.timed(impl, function()
    for i = 1, n do
      local co = create(body)
      resume(co)
      cos[i] = co
    end
    live = #cos
    for i = 1, n do
      resume(cos[i])
      cos[i] = false
    end
  end)
  return wall, base, live
end

function impls.cqueues()
  local cqueues = require "cqueues"
  local sleep = cqueues.sleep
  local cq = cqueues.new()
  local function body() sleep(0) end
  local base = (B.heap() and B.rss())
  local live
  local wall = B.timed(impl, function()
    for _ = 1, n do cq:wrap(body) end
    live = cq:count()
    assert(cq:loop())
  end)
  return wall, base, live
end

local wall, base, live, running = impls[impl]()
B.out("rate", n / wall, "rss", math.max(0, B.hwm() - base) / n, "live", live or -1,
      "running", running or live or -1)
