-- Stress: many threads at once, and long runs that must leave cs.stats()
-- and the process's memory where they started.
--
-- CS_STRESS_SCALE (a number, default 1; the helper picks 0.1 under ASan and
-- 0.01 under valgrind when it is not set) multiplies the iteration counts of
-- the long runs: at 1, 1,000,000 spawn/wait cycles and 1,000,000 sleep(0)
-- switches.
local helper = require "spec.helper"
local cs = helper.cs
local spawn, wait, kill = cs.thread.spawn, cs.thread.wait, cs.thread.kill
local clock = helper.clock

local function scaled(n)
  return math.max(1000, math.floor(n * helper.scale))
end

-- runs body(n) twice: a warm-up of n/10, then n; returns the growth of the
-- Lua heap (KiB, after full collections) and of VmRSS (KiB) over the second.
-- Under ASan and valgrind freed blocks sit in a quarantine, so VmRSS says
-- nothing there (their own leak checks do): the growth reported is 0.
local function growth(n, body)
  body(math.max(100, n // 10))
  collectgarbage()
  collectgarbage()
  local gc0, rss0 = collectgarbage("count"), helper.rss_kb()
  body(n)
  collectgarbage()
  collectgarbage()
  local drss = helper.rss_kb() - rss0
  if helper.asan or helper.valgrind then drss = 0 end
  return collectgarbage("count") - gc0, drss
end

local function check_stats(base, what)
  local s = cs.stats()
  for _, k in ipairs({ "threads", "zombies", "timers", "timeouts",
                       "pending_io" }) do
    if s[k] ~= base[k] then
      error(("%s: cs.stats().%s is %s, was %s"):format(what, k,
            tostring(s[k]), tostring(base[k])), 2)
    end
  end
end

describe("stress", function()
  after_each(helper.after_each)

  it("10,000 concurrent light threads", function()
    local N = 10000
    local t0 = clock()
    local sum, max_live = 0, 0
    helper.run(function()
      local base = cs.stats().threads
      local sem = cs.semaphore.new(100)
      local q = cs.queue.new()
      local ts = {}
      for i = 1, N do
        ts[i] = spawn(function()
          cs.sleep(0.01 + (i % 5) * 0.01)
          if i % 3 == 0 then
            assert(sem:wait(5))
            cs.sleep(0)
            sem:post()
          elseif i % 3 == 1 then
            q:push(i)
          else
            coroutine.wrap(function() cs.sleep(0.001) end)()
          end
          return i
        end)
      end
      max_live = cs.stats().threads - base
      local consumer = spawn(function()
        local n = 0
        for _ = 1, #ts, 3 do n = n + 1 q:pop(5) end
        return n
      end)
      for i = 1, N do
        local ok, v = wait(ts[i])
        assert(ok and v == i)
        sum = sum + v
      end
      assert.same({ true, (N + 2) // 3 }, { wait(consumer) })
      assert.equal(100, sem:count())
      assert.equal(base, cs.stats().threads)
    end, { timeout = 10 })
    assert.equal(N * (N + 1) // 2, sum)
    assert.equal(N, max_live)
    local dt = clock() - t0
    assert.is_true(dt >= 0.05)
    assert.is_true(dt < 5 * helper.slack, "took " .. dt)
  end)

  it("10,000 threads killed while parked", function()
    helper.run(function()
      local base = cs.stats()
      local sem = cs.semaphore.new()
      local q = cs.queue.new()
      local ts = {}
      for i = 1, 10000 do
        ts[i] = spawn(function()
          if i % 3 == 0 then cs.sleep(10)
          elseif i % 3 == 1 then sem:wait(10)
          else q:pop() end
        end)
      end
      for i = 10000, 1, -1 do assert.equal(1, kill(ts[i])) end
      check_stats(base, "after the kills")
      assert.equal(0, sem:count())
      assert.equal(0, q:count())
    end, { timeout = 10 })
  end)

  it("10,000 timers", function()
    local fired = 0
    helper.run(function()
      local hs = {}
      for i = 1, 10000 do
        hs[i] = cs.timer.at((i % 10) * 0.002, function()
          fired = fired + 1
        end)
      end
      for i = 2, 10000, 2 do hs[i]:cancel() end
    end, { timeout = 10 })
    assert.equal(5000, fired)
  end)

  it("sleep(0) round robin is fair", function()
    local turns = {}
    helper.run(function()
      local stop = false
      local ts = {}
      local go = cs.semaphore.new()
      for i = 1, 100 do
        turns[i] = 0
        ts[i] = spawn(function()
          go:wait(1)
          while not stop do
            turns[i] = turns[i] + 1
            cs.sleep(0)
          end
        end)
      end
      go:post(100)
      for _ = 1, 1000 do cs.sleep(0) end
      stop = true
      for i = 1, 100 do wait(ts[i]) end
    end)
    for i = 1, 100 do
      assert.is_true(turns[i] >= 1000 and turns[i] <= 1001, turns[i])
    end
  end)

  it("1,000,000 spawn/wait cycles leave stats and memory where they were",
     function()
    local n = scaled(1000000)
    local dgc, drss = growth(n, function(count)
      helper.run(function()
        local base = cs.stats()
        local f = function(i) return i end
        for i = 1, count do
          local ok, v = wait(spawn(f, i))
          if not ok or v ~= i then error("cycle " .. i) end
          if i % 100000 == 0 then check_stats(base, "cycle " .. i) end
        end
        -- with a park in the child, and a kill
        for i = 1, count // 10 do
          local t = spawn(function() cs.sleep(0) return i end)
          if i % 2 == 0 then wait(t) else kill(t) end
        end
        check_stats(base, "after the cycles")
      end, { timeout = 120 })
    end)
    assert.is_true(dgc < 256, ("the Lua heap grew by %.0f KiB over %d "
                               .. "cycles"):format(dgc, n))
    assert.is_true(drss < 4096, ("VmRSS grew by %d KiB over %d cycles")
                   :format(drss, n))
  end)

  it("1,000,000 sleep(0) switches leave stats and memory where they were",
     function()
    local n = scaled(1000000)
    local dgc, drss = growth(n, function(count)
      helper.run(function()
        local base = cs.stats()
        local a = spawn(function()
          for _ = 1, count // 2 do cs.sleep(0) end
        end)
        local b = spawn(function()
          local co = coroutine.wrap(function()
            for _ = 1, count // 4 do cs.sleep(0) coroutine.yield() end
          end)
          for _ = 1, count // 4 do co() end
        end)
        for i = 1, count // 4 do
          cs.sleep(0)
          if i % 100000 == 0 then
            local s = cs.stats()
            assert(s.threads == base.threads + 2
                   and s.timeouts == base.timeouts)
          end
        end
        wait(a)
        wait(b)
        check_stats(base, "after the switches")
      end, { timeout = 120 })
    end)
    assert.is_true(dgc < 256, ("the Lua heap grew by %.0f KiB over %d "
                               .. "switches"):format(dgc, n))
    assert.is_true(drss < 4096, ("VmRSS grew by %d KiB over %d switches")
                   :format(drss, n))
  end)

  it("semaphore and queue hand-overs and timed sleeps do not grow",
     function()
    local n = scaled(200000)
    local dgc, drss = growth(n, function(count)
      helper.run(function()
        local base = cs.stats()
        local sem, q = cs.semaphore.new(), cs.queue.new(1)
        local t = spawn(function()
          for i = 1, count do
            assert(sem:wait(1))
            q:push(i)
          end
        end)
        for i = 1, count do
          sem:post()
          assert(q:pop(1) == i)
        end
        wait(t)
        for _ = 1, count // 1000 do cs.sleep(1e-6) end
        for _ = 1, count // 1000 do
          assert(not sem:wait(1e-6))
          cs.timer.at(0, function() end)
        end
        cs.sleep(0.005)
        check_stats(base, "after the hand-overs")
      end, { timeout = 120 })
    end)
    assert.is_true(dgc < 256, ("the Lua heap grew by %.0f KiB"):format(dgc))
    assert.is_true(drss < 4096, ("VmRSS grew by %d KiB"):format(drss))
  end)

  it("failing threads and wrap errors do not grow", function()
    local n = scaled(20000)
    local dgc, drss = growth(n, function(count)
      helper.run(function()
        local base = cs.stats()
        for i = 1, count do
          local t = spawn(function()
            local ok = pcall(coroutine.wrap(function()
              cs.sleep(0)
              error("w" .. i)
            end))
            assert(not ok)
            error({ i })
          end)
          local ok, e = wait(t)
          assert(not ok and e[1] == i)
        end
        check_stats(base, "after the errors")
      end, { timeout = 120 })
    end)
    assert.is_true(dgc < 256, ("the Lua heap grew by %.0f KiB"):format(dgc))
    assert.is_true(drss < 4096, ("VmRSS grew by %d KiB"):format(drss))
  end)
end)
