-- corosched demo (make demo): about 1,200 light threads doing timed work at
-- once in one OS thread: sleepers, a semaphore-limited worker pool, a queue
-- pipeline, a timer.every ticker, a generator that sleeps, a thread that
-- fails and one that is killed. The total wall time shows the concurrency.
--
--   lua5.4 examples/demo.lua     (with corosched on LUA_PATH/LUA_CPATH)
local cs = require "corosched"
local spawn, wait, kill = cs.thread.spawn, cs.thread.wait, cs.thread.kill

local t_start
local function now()
  cs.update_time()
  return cs.now()
end
local function say(fmt, ...)
  io.write(("[%5.3fs] "):format(now() - t_start), fmt:format(...), "\n")
  io.flush()
end

local spawned = 0
local function go(fn, ...)
  spawned = spawned + 1
  return spawn(fn, ...)
end

-- 1,000 threads sleeping 10..500 ms each
local function sleepers()
  local ts, total = {}, 0
  local t0 = now()
  for i = 1, 1000 do
    local d = 0.01 + (i * 37 % 50) * 0.01
    total = total + d
    ts[i] = go(function() cs.sleep(d) return d end)
  end
  say("spawned 1,000 sleepers (10..500 ms) in %.1f ms", (now() - t0) * 1e3)
  local sum = 0
  for i = 1, #ts do sum = sum + select(2, wait(ts[i])) end
  say("1,000 sleepers done: %.1f s of sleep in total", sum)
  return total
end

-- 200 jobs of 20 ms through a pool of 10 (a semaphore)
local function pool()
  local sem, busy, max = cs.semaphore.new(10), 0, 0
  local ts = {}
  for i = 1, 200 do
    ts[i] = go(function()
      assert(sem:wait(5))
      busy = busy + 1
      if busy > max then max = busy end
      cs.sleep(0.02)
      busy = busy - 1
      sem:post()
    end)
  end
  for i = 1, #ts do wait(ts[i]) end
  say("worker pool: 200 jobs x 20 ms, at most %d at once (serial: 4.0 s)",
      max)
  return 200 * 0.02
end

-- producer -> 4 workers -> collector, over bounded queues
local function pipeline()
  local jobs, results = cs.queue.new(8), cs.queue.new(8)
  go(function()
    for i = 1, 100 do jobs:push(i) end
    jobs:close()
  end)
  local workers = {}
  for w = 1, 4 do
    workers[w] = go(function()
      local n = 0
      while true do
        local v = jobs:pop()
        if v == nil then break end -- closed and drained
        cs.sleep(0.01) -- "work"
        results:push(v * v)
        n = n + 1
      end
      return n
    end)
  end
  local collector = go(function()
    local sum, n = 0, 0
    for v in function() return (results:pop()) end do
      sum, n = sum + v, n + 1
    end
    return sum, n
  end)
  local per = {}
  for w = 1, 4 do per[w] = select(2, wait(workers[w])) end
  results:close()
  local _, sum, n = wait(collector)
  say("pipeline: %d items, sum of squares %d, per worker %s", n, sum,
      table.concat(per, "/"))
  return 100 * 0.01
end

-- a generator that sleeps between items, used from a plain for loop
local function generator()
  local gen = coroutine.wrap(function()
    for i = 1, 5 do
      cs.sleep(0.05)
      coroutine.yield(i)
    end
  end)
  local got = {}
  for v in gen do got[#got + 1] = v end
  say("generator: sleeping coroutine.wrap iterator gave %s",
      table.concat(got, ","))
  return 0.25
end

-- a thread that fails, one that is killed, one nobody waits for
local function failures()
  local bad = go(function()
    cs.sleep(0.1)
    error("simulated failure")
  end)
  local ok, err = wait(bad)
  say("failing thread: wait() -> %s, %q", tostring(ok), err)
  local victim = go(function()
    local _ <close> = setmetatable({}, { __close = function()
      say("killed thread: its <close> handler ran")
    end })
    cs.sleep(10)
  end)
  cs.sleep(0.05)
  say("killed thread: kill() -> %s while it slept 10 s; status %s",
      tostring(kill(victim)), coroutine.status(victim))
  go(function() cs.sleep(0.02) error("nobody waits for me") end)
  return 0
end

local function main()
  t_start = now()
  print(("corosched %s on %s: light threads on one OS thread")
    :format(cs._VERSION, _VERSION))
  cs.on_error(function(_, report)
    say("on_error: %s", report:match("^[^\n]*"))
  end)

  print("running at once: 1,000 sleepers | 200 jobs on a pool of 10 | "
        .. "a 4-worker queue pipeline")
  print("                 a sleeping generator | failures | a 0.1 s ticker")
  local ticks, peak = 0, 0
  local ticker = cs.timer.every(0.1, function()
    ticks = ticks + 1
    local live = cs.stats().threads
    if live > peak then peak = live end
  end)

  local sections = {}
  for _, f in ipairs({ sleepers, pool, pipeline, generator, failures }) do
    sections[#sections + 1] = go(f)
  end
  local serial = 0
  for _, t in ipairs(sections) do
    local ok, s = wait(t)
    assert(ok, s)
    serial = serial + s
  end
  ticker:cancel()
  say("ticker: timer.every(0.1) ticked %d times meanwhile; it saw up to "
      .. "%d live threads", ticks, peak)
  local st = cs.stats()
  say("live now: %d thread(s) (this one), %d timers", st.threads, st.timers)
  return serial
end

local serial = cs.run(main)
local wall = now() - t_start
local st = cs.stats()
print(("%d light threads, %.1f s of sleeping/work if run one after the "
       .. "other: wall time %.2f s"):format(spawned, serial, wall))
print(("after cs.run: threads=%d timers=%d"):format(st.threads, st.timers))
