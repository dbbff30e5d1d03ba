-- cs.sleep (ngx.sleep): parks the current light thread; sleep(0) yields.
local helper = require "spec.helper"
local cs = helper.cs
local spawn, wait = cs.thread.spawn, cs.thread.wait
local clock = helper.clock

describe("cs.sleep", function()
  after_each(helper.after_each)

  it("parks for at least the given time and returns nothing", function()
    for _, d in ipairs({ 0.01, 0.05, 0.1 }) do
      local n, dt
      helper.run(function()
        cs.update_time()
        local t0 = clock()
        n = select("#", cs.sleep(d))
        dt = clock() - t0
      end)
      assert.equal(0, n)
      assert.is_true(dt >= d - 0.001, ("slept %g < %g"):format(dt, d))
      assert.is_true(dt < d + 0.1 * helper.slack,
                     ("slept %g for %g"):format(dt, d))
    end
  end)

  it("takes fractions and integers", function()
    helper.run(function()
      cs.sleep(1e-4)
      cs.sleep(0)
      cs.sleep(0.0)
    end)
  end)

  it("sleeping threads run concurrently", function()
    local t0 = clock()
    local done = 0
    helper.run(function()
      for _ = 1, 50 do
        spawn(function() cs.sleep(0.1) done = done + 1 end)
      end
    end)
    local dt = clock() - t0
    assert.equal(50, done)
    assert.is_true(dt >= 0.099)
    assert.is_true(dt < 0.5 * helper.slack) -- not 50 * 0.1
  end)

  it("wakes threads in deadline order", function()
    local log = {}
    helper.run(function()
      for _, d in ipairs({ 0.03, 0.01, 0.05, 0.02, 0.04 }) do
        spawn(function() cs.sleep(d) log[#log + 1] = d end)
      end
    end)
    assert.same({ 0.01, 0.02, 0.03, 0.04, 0.05 }, log)
  end)

  it("wakes threads with the same deadline in the order they slept",
     function()
    local log = {}
    helper.run(function()
      for i = 1, 30 do
        spawn(function() cs.sleep(0.01) log[#log + 1] = i end)
      end
    end)
    local want = {}
    for i = 1, 30 do want[i] = i end
    assert.same(want, log)
  end)

  it("counts from the cached time at the latest", function()
    helper.run(function()
      cs.update_time()
      local cached = cs.now()
      helper.busy(0.03) -- no update_time(): the deadline is cached + 0.05
      cs.sleep(0.05)
      assert.is_true(clock() - cached >= 0.049)
    end)
  end)

  it("sleep(0) lets every other ready thread run first, then continues",
     function()
    local log = {}
    helper.run(function()
      local go = cs.semaphore.new()
      for i = 1, 3 do
        spawn(function()
          go:wait(1)
          log[#log + 1] = "t" .. i
        end)
      end
      go:post(3) -- t1, t2, t3 are ready now
      log[#log + 1] = "E before"
      cs.sleep(0)
      log[#log + 1] = "E after"
    end)
    assert.same({ "E before", "t1", "t2", "t3", "E after" }, log)
  end)

  it("sleep(0) goes behind threads posted by spawn and yield", function()
    local log = {}
    helper.run(function()
      for i = 1, 3 do
        spawn(function()
          log[#log + 1] = "t" .. i .. "a"
          coroutine.yield()
          log[#log + 1] = "t" .. i .. "b"
        end)
      end
      log[#log + 1] = "E before"
      cs.sleep(0)
      log[#log + 1] = "E after"
    end)
    -- each spawn posted the entry behind the threads that had yielded
    -- (as ngx.thread.spawn does, 093 TEST 17)
    assert.same({ "t1a", "t2a", "t1b", "t3a", "t2b", "E before", "t3b",
                  "E after" }, log)
  end)

  it("sleep(0) with no other thread returns at once", function()
    local t0 = clock()
    helper.run(function()
      for _ = 1, 1000 do cs.sleep(0) end
    end)
    assert.is_true(clock() - t0 < 1 * helper.slack)
  end)

  it("works inside pcall and user coroutines", function()
    local t0 = clock()
    local r
    helper.run(function()
      r = table.pack(pcall(function()
        return coroutine.wrap(function()
          cs.sleep(0.02)
          return "slept"
        end)()
      end))
    end)
    assert.same({ n = 2, true, "slept" }, r)
    assert.is_true(clock() - t0 >= 0.019)
  end)

  it("checks its argument", function()
    helper.run(function()
      -- OpenResty's messages (recorded in spec/59)
      assert.has_error(function() cs.sleep() end,
        "attempt to pass 0 arguments, but accepted 1")
      assert.has_error(function() cs.sleep("x") end,
        "bad argument #1 to 'sleep' (number expected, got string)")
      assert.has_error(function() cs.sleep(-1) end,
        "invalid sleep duration \"-1000\"")
      assert.has_error(function() cs.sleep(0 / 0) end,
        "invalid sleep duration")
      assert.has_error(function() cs.sleep(math.huge) end,
        "invalid sleep duration")
      -- a numeric string is a number, as in Lua
      cs.sleep("0.001")
    end)
  end)

  it("raises outside a light thread and the loop", function()
    assert.has_error(function() cs.sleep(0.01) end,
      "corosched: sleep: no running loop (call it inside cs.run)")
    local ok, err
    cs.run(function()
      cs.on_error(function(_, e) err = e end)
      -- the error handler runs outside any light thread
      spawn(function() error("x") end)
    end)
    assert.matches("x", err)
    helper.run(function()
      cs.on_error(function()
        ok, err = pcall(cs.sleep, 0.01)
      end)
      local t = spawn(function() error("y") end)
      cs.thread.kill(t) -- a zombie: discarded without a report
      spawn(function() spawn(function() cs.sleep(0.01) error("z") end) end)
      cs.sleep(0.03)
    end, { allow_errors = true })
    assert.is_false(ok)
    assert.equal(
      "corosched: sleep: not called from a light thread", err)
  end)

  it("a thread killed while sleeping never wakes, and leaves no timeout",
     function()
    local woke = false
    local t0 = clock()
    helper.run(function()
      local base = cs.stats().timeouts
      local t = spawn(function() cs.sleep(1) woke = true end)
      assert.equal(base + 1, cs.stats().timeouts)
      cs.thread.kill(t)
      assert.equal(base, cs.stats().timeouts)
    end)
    assert.is_false(woke)
    assert.is_true(clock() - t0 < 0.5 * helper.slack)
  end)

  it("many sleeps in a row keep their cumulative time", function()
    local t0 = clock()
    helper.run(function()
      for _ = 1, 10 do cs.sleep(0.01) end
    end)
    assert.is_true(clock() - t0 >= 0.099)
  end)

  it("a parked thread does not run and is not ready", function()
    helper.run(function()
      local ran = false
      local t = spawn(function() cs.sleep(0.03 * helper.slack) ran = true end)
      for _ = 1, 100 do cs.sleep(0) end
      assert.is_false(ran)
      assert.is_true(select(2, cs.dump():gsub("parked on sleep", "")) >= 1)
      wait(t)
      assert.is_true(ran)
    end)
  end)
end)
