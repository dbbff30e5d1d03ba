-- The loop: cs.run, cs.now/update_time, cs.timer, cs.stats, cs.dump,
-- cs.on_error and the deadlock report (API.md "Loop").
local helper = require "spec.helper"
local cs = helper.cs
local clock = helper.clock

describe("cs.run", function()
  after_each(helper.after_each)

  it("runs fn with its arguments and returns all its results", function()
    local r = table.pack(cs.run(function(a, b, c)
      assert.is_nil(b)
      return c, nil, a, nil
    end, 1, nil, 3))
    assert.same({ n = 4, 3, nil, 1, nil }, r)
  end)

  it("returns nothing when fn returns nothing", function()
    assert.equal(0, select("#", cs.run(function() end)))
  end)

  it("runs fn as the entry light thread", function()
    local self, running, ismain
    cs.run(function()
      self = cs.thread.self()
      running, ismain = coroutine.running()
    end)
    assert.equal("thread", type(self))
    assert.equal(self, running)
    assert.is_false(ismain)
  end)

  it("raises on a non-function argument", function()
    assert.has_error(function() cs.run(42) end,
      "bad argument #1 to 'run' (function expected, got number)")
    assert.has_error(function() cs.run() end,
      "bad argument #1 to 'run' (function expected, got no value)")
  end)

  it("raises when called from inside a running loop", function()
    local ok, err
    cs.run(function()
      ok, err = pcall(cs.run, function() end)
    end)
    assert.is_false(ok)
    assert.equal("corosched: cs.run called from inside a running loop", err)
  end)

  it("can be called again after it returned or raised", function()
    for i = 1, 3 do
      assert.equal(i, cs.run(function() cs.sleep(0.001) return i end))
      assert.is_false(pcall(cs.run, function() error("x") end))
    end
    helper.assert_clean()
  end)

  it("waits for every light thread and timer before returning", function()
    local t0 = clock()
    local done = {}
    cs.run(function()
      cs.thread.spawn(function() cs.sleep(0.05) done.thread = true end)
      cs.timer.at(0.08, function() done.timer = true end)
      return
    end)
    assert.is_true(done.thread)
    assert.is_true(done.timer)
    assert.is_true(clock() - t0 >= 0.079)
    helper.assert_clean()
  end)

  it("waits for grandchildren whose parent has ended", function()
    local done = false
    cs.run(function()
      cs.thread.spawn(function()
        cs.thread.spawn(function() cs.sleep(0.03) done = true end)
      end)
    end)
    assert.is_true(done)
    helper.assert_clean()
  end)

  describe("when the entry thread raises", function()
    it("raises that error with the entry's traceback appended", function()
      local ok, err = pcall(cs.run, function()
        local function inner_function_name() error("entry boom") end
        inner_function_name()
      end)
      assert.is_false(ok)
      assert.matches("^spec/01%-loop_spec%.lua:%d+: entry boom\n", err)
      assert.matches("stack traceback:", err, 1, true)
      assert.matches("inner_function_name", err, 1, true)
      helper.assert_clean()
    end)

    it("raises a non-string error object unchanged", function()
      local obj = setmetatable({}, { __tostring = function() return "O" end })
      local ok, err = pcall(cs.run, function() error(obj) end)
      assert.is_false(ok)
      assert.equal(obj, err)
      ok, err = pcall(cs.run, function() error(nil) end)
      assert.is_false(ok)
      assert.is_nil(err)
      helper.assert_clean()
    end)

    it("kills every remaining light thread at once", function()
      local reached, closed = {}, {}
      local t0 = clock()
      local ok, err = pcall(cs.run, function()
        local sem = cs.semaphore.new()
        local q = cs.queue.new(1)
        q:push("full")
        local function closer(name)
          return setmetatable({}, { __close = function()
            closed[#closed + 1] = name
          end })
        end
        cs.thread.spawn(function()
          local _ <close> = closer("sleeper")
          cs.sleep(10); reached.sleep = true
        end)
        cs.thread.spawn(function()
          local _ <close> = closer("sema")
          sem:wait(10); reached.sema = true
        end)
        cs.thread.spawn(function()
          local _ <close> = closer("queue")
          q:push("more", 10); reached.queue = true
        end)
        cs.thread.spawn(function()
          local c = cs.thread.spawn(function() cs.sleep(10) end)
          cs.thread.wait(c); reached.wait = true
        end)
        cs.thread.spawn(function()
          coroutine.wrap(function()
            local _ <close> = closer("nested")
            cs.sleep(10)
          end)()
          reached.nested = true
        end)
        cs.thread.spawn(function()
          while true do coroutine.yield() end
        end)
        cs.sleep(0.01)
        error("entry failed")
      end)
      assert.is_false(ok)
      assert.matches("entry failed", err, 1, true)
      assert.same({}, reached)
      table.sort(closed)
      assert.same({ "nested", "queue", "sema", "sleeper" }, closed)
      assert.is_true(clock() - t0 < 1 * helper.slack)
      helper.assert_clean()
    end)

    it("runs pending timers at once with premature = true", function()
      local calls = {}
      local t0 = clock()
      local ok = pcall(cs.run, function()
        cs.timer.at(10, function(premature, a, b)
          calls[#calls + 1] = { "at", premature, a, b }
        end, "x", "y")
        cs.timer.every(10, function(premature)
          calls[#calls + 1] = { "every", premature }
        end)
        local cancelled = cs.timer.at(10, function()
          calls[#calls + 1] = { "cancelled" }
        end)
        cancelled:cancel()
        error("entry failed")
      end)
      assert.is_false(ok)
      table.sort(calls, function(a, b) return a[1] < b[1] end)
      assert.same({ { "at", true, "x", "y" }, { "every", true } }, calls)
      assert.is_true(clock() - t0 < 1 * helper.slack)
      helper.assert_clean()
    end)

    it("lets premature timer handlers run but not start new timers",
       function()
      local res
      pcall(cs.run, function()
        cs.timer.at(10, function(premature)
          res = { premature, cs.timer.at(0, function() end) }
          res[3] = select(2, cs.timer.at(0, function() end))
        end)
        error("x")
      end)
      assert.same({ true, nil, "process exiting" }, res)
      helper.assert_clean()
    end)

    it("does not report the killed threads as failures", function()
      local reports = 0
      pcall(cs.run, function()
        cs.on_error(function() reports = reports + 1 end)
        cs.thread.spawn(function() cs.sleep(10) end)
        error("x")
      end)
      assert.equal(0, reports)
    end)
  end)
end)

describe("cs.shutdown / cs.exiting", function()
  after_each(helper.after_each)

  it("fires the pending timers at once with premature = true (a "
     .. "timer.every that once), lets the threads run to their end, and "
     .. "refuses new timers with a delay", function()
    local log = {}
    local function note(s) log[#log + 1] = s end
    local t0 = clock()
    local results = table.pack(cs.run(function()
      cs.timer.at(30, function(premature, a, b)
        note(("at %s %s %s"):format(tostring(premature), a, b))
      end, "x", "y")
      local ticks = 0
      cs.timer.every(0.01, function(premature)
        ticks = ticks + 1
        if premature then note("every premature after " .. (ticks - 1)) end
      end)
      local worker = cs.thread.spawn(function()
        while not cs.exiting() do cs.sleep(0.005) end
        note("worker saw exiting")
        cs.sleep(0.02) -- sleeps still work
        note("worker done")
        return "w"
      end)
      cs.sleep(0.035)
      assert.is_false(cs.exiting())
      assert.equal(2, cs.stats().timers)
      assert.equal(1, cs.shutdown())
      assert.is_true(cs.exiting())
      assert.equal(1, cs.shutdown()) -- once is enough
      assert.same({ nil, "process exiting" },
                  { cs.timer.at(0.001, function() end) })
      assert.same({ nil, "process exiting" },
                  { cs.timer.every(1, function() end) })
      -- as nginx's exiting worker: a zero delay still runs
      local zero
      assert.truthy(cs.timer.at(0, function(p) zero = p end))
      assert.same({ true, "w" }, { cs.thread.wait(worker) })
      assert.is_true(zero)
      assert.equal(0, cs.stats().timers)
      return "done"
    end))
    assert.same({ n = 1, "done" }, results)
    assert.is_true(clock() - t0 < 2 * helper.slack)
    -- (the handlers and the worker run in whatever order they are ready)
    local at = {}
    for i, line in ipairs(log) do at[(line:gsub("%d+$", "N"))] = i end
    assert.equal(4, #log, table.concat(log, "; "))
    for _, want in ipairs({ "at true x y", "every premature after N",
                            "worker saw exiting", "worker done" }) do
      assert.truthy(at[want], want .. ": " .. table.concat(log, "; "))
    end
    assert.is_true(at["worker saw exiting"] < at["worker done"])
    local ticks = tonumber(log[at["every premature after N"]]:match("%d+"))
    assert.is_true(ticks >= 2, tostring(ticks))
    -- the next cs.run starts afresh
    cs.run(function()
      assert.is_false(cs.exiting())
      local fired
      assert.truthy(cs.timer.at(0.001, function(p) fired = p end))
      cs.sleep(0.01)
      assert.is_false(fired)
    end)
    helper.assert_clean()
  end)

  it("from a timer handler or a nested coroutine; the timers fire in "
     .. "deadline order", function()
    local order = {}
    cs.run(function()
      for _, d in ipairs({ 50, 20, 40, 10, 30 }) do
        cs.timer.at(d, function(p) order[#order + 1] = { d, p } end)
      end
      cs.timer.at(0.01, function()
        local co = coroutine.wrap(function() return cs.shutdown() end)
        assert.equal(1, co())
      end)
    end)
    assert.same({ { 10, true }, { 20, true }, { 30, true }, { 40, true },
                  { 50, true } }, order)
    helper.assert_clean()
  end)

  it("an entry thread failing after it still kills the threads", function()
    local t0 = clock()
    local ok, err = pcall(cs.run, function()
      cs.thread.spawn(function() cs.sleep(30) end)
      cs.timer.at(30, function() end)
      cs.shutdown()
      cs.sleep(0.01)
      error("entry failed")
    end)
    assert.is_false(ok)
    assert.matches("entry failed", err)
    assert.is_true(clock() - t0 < 2 * helper.slack)
    helper.assert_clean()
  end)

  it("raises outside cs.run; cs.exiting() is false there", function()
    assert.has_error(function() cs.shutdown() end,
                     "corosched: cs.shutdown: no running loop (call it "
                     .. "inside cs.run)")
    assert.is_false(cs.exiting())
  end)
end)

describe("cs.now / cs.update_time", function()
  after_each(helper.after_each)

  it("gives the wall clock time in seconds with ms resolution", function()
    -- (bracketed by os.time(): a slow host may pause between the calls.
    -- os.time() is glibc's coarse clock, up to a tick behind the one
    -- cs.now() reads: hence 10 ms of margin above; it failed once in CI)
    local before = os.time()
    local now = cs.now()
    local after = os.time()
    assert.is_number(now)
    assert.is_true(now >= before and now < after + 1.01,
                   ("%d <= %.3f < %d + 1"):format(before, now, after))
    assert.is_true(math.abs(now * 1000 - math.floor(now * 1000 + 0.5))
                   < 1e-3)
  end)

  it("is cached inside the loop until update_time()", function()
    helper.run(function()
      local a = cs.now()
      helper.busy(0.02)
      assert.equal(a, cs.now())
      assert.equal(0, select("#", cs.update_time()))
      local b = cs.now()
      assert.is_true(b - a >= 0.019)
      cs.sleep(0.03)
      assert.is_true(cs.now() - b >= 0.029)
    end)
  end)
end)

describe("cs.timer", function()
  after_each(helper.after_each)

  it("at() runs fn(false, ...) after the delay, detached", function()
    local t0, got, t1, self, parent = clock()
    helper.run(function()
      parent = cs.thread.self()
      local h = cs.timer.at(0.05, function(...)
        t1 = clock()
        got = table.pack(...)
        self = cs.thread.self()
        cs.sleep(0.01) -- a timer handler may park
      end, 1, nil, "three")
      assert.equal("userdata", type(h))
      assert.matches("^corosched%.timer %(pending%)", tostring(h))
      assert.is_true(h:pending())
    end)
    assert.same({ n = 4, false, 1, nil, "three" }, got)
    assert.is_true(t1 - t0 >= 0.049)
    assert.is_true(t1 - t0 < 0.5 * helper.slack)
    assert.equal("thread", type(self))
    assert.not_equal(parent, self)
  end)

  it("at(0) runs the handler soon, after the current thread parks",
     function()
    local log = {}
    helper.run(function()
      cs.timer.at(0, function() log[#log + 1] = "timer" end)
      log[#log + 1] = "after at"
      cs.sleep(0.01)
      log[#log + 1] = "after sleep"
    end)
    assert.same({ "after at", "timer", "after sleep" }, log)
  end)

  it("fires timers in deadline order", function()
    local log = {}
    helper.run(function()
      cs.timer.at(0.03, function() log[#log + 1] = 3 end)
      cs.timer.at(0.01, function() log[#log + 1] = 1 end)
      cs.timer.at(0.02, function() log[#log + 1] = 2 end)
    end)
    assert.same({ 1, 2, 3 }, log)
  end)

  -- 20 timers with the same deadline fire in creation order; before(),
  -- when given, runs first inside the loop
  local function same_deadline_in_creation_order(before)
    local log = {}
    helper.run(function()
      if before then before() end
      for i = 1, 20 do
        cs.timer.at(0.01, function() log[#log + 1] = i end)
      end
    end)
    local want = {}
    for i = 1, 20 do want[i] = i end
    assert.same(want, log)
  end

  it("fires timers with the same deadline in creation order", function()
    same_deadline_in_creation_order()
  end)

  -- the insertion numbers that break ties are 31 bits that wrap
  local T = require("corosched.core")._testing
  local it_testing = T and it or pending
  it_testing("keeps creation order across the wrap of the insertion "
             .. "numbers (testing build)", function()
    same_deadline_in_creation_order(function()
      T.heapseq(0x7fffffff - 10)
    end)
  end)

  it("fires in (deadline, creation) order under random adds and cancels",
     function()
    local rng = 12345
    local function rand(n) -- a fixed LCG: the same run every time
      rng = (rng * 1103515245 + 12345) % 2147483648
      return rng % n
    end
    local log, want = {}, {}
    helper.run(function()
      local hs, delays = {}, {}
      for i = 1, 2000 do
        delays[i] = rand(10)
        hs[i] = cs.timer.at(0.001 * delays[i] + 0.001, function()
          log[#log + 1] = i
        end)
        if rand(4) == 0 then -- cancel an earlier one
          local j = rand(i) + 1
          if hs[j]:pending() then hs[j]:cancel() delays[j] = nil end
        end
      end
      for i = 1, 2000 do
        if delays[i] then want[#want + 1] = i end
      end
      table.sort(want, function(a, b)
        if delays[a] ~= delays[b] then return delays[a] < delays[b] end
        return a < b
      end)
    end)
    assert.same(want, log)
  end)

  it("keeps firing when the handle is dropped and collected", function()
    local fired = false
    helper.run(function()
      cs.timer.at(0.01, function() fired = true end)
      collectgarbage()
      collectgarbage()
    end)
    assert.is_true(fired)
  end)

  it("cancel() stops a pending timer and returns 1", function()
    local fired = false
    local t0 = clock()
    helper.run(function()
      local h = cs.timer.at(5, function() fired = true end)
      assert.equal(1, cs.stats().timers)
      assert.equal(1, h:cancel())
      assert.equal(0, cs.stats().timers)
      assert.is_false(h:pending())
      assert.matches("^corosched%.timer %(done%)", tostring(h))
      local ok, err = h:cancel()
      assert.is_nil(ok)
      assert.equal("not pending", err)
    end)
    assert.is_false(fired)
    assert.is_true(clock() - t0 < 1 * helper.slack) -- did not keep run alive
  end)

  it("cancel() after the timer fired returns nil, 'not pending'", function()
    local r
    helper.run(function()
      local h = cs.timer.at(0.001, function() end)
      cs.sleep(0.02)
      r = table.pack(h:cancel())
    end)
    assert.same({ n = 2, nil, "not pending" }, r)
  end)

  it("every() repeats until cancelled, also from its handler", function()
    local n, ticks = 0, {}
    local t0 = clock()
    helper.run(function()
      local h
      h = cs.timer.every(0.01, function(premature, tag)
        assert.is_false(premature)
        assert.equal("tag", tag)
        n = n + 1
        ticks[n] = clock()
        if n == 5 then assert.equal(1, h:cancel()) end
      end, "tag")
    end)
    assert.equal(5, n)
    assert.is_true(ticks[5] - t0 >= 0.049)
    for i = 2, 5 do assert.is_true(ticks[i] - ticks[i - 1] >= 0.005) end
  end)

  it("every() is cancelled by another thread", function()
    local n = 0
    helper.run(function()
      local h = cs.timer.every(0.01, function() n = n + 1 end)
      cs.sleep(0.055)
      assert.is_true(h:pending())
      h:cancel()
      -- a handler whose tick came in the same loop iteration as our wake-up
      -- was already started: let it run
      cs.sleep(0)
      local seen = n
      cs.sleep(0.03)
      assert.equal(seen, n)
    end)
    assert.is_true(n >= 3 and n <= 6)
  end)

  it("every() runs the next handler even while one is still running",
     function()
    local running, max = 0, 0
    helper.run(function()
      local h = cs.timer.every(0.01, function()
        running = running + 1
        if running > max then max = running end
        cs.sleep(0.035)
        running = running - 1
      end)
      cs.sleep(0.06)
      h:cancel()
    end)
    assert.is_true(max >= 2)
  end)

  it("a failing handler is reported and does not stop the loop", function()
    local n = 0
    helper.run(function()
      local h = cs.timer.every(0.01, function()
        n = n + 1
        error("tick " .. n)
      end)
      cs.sleep(0.035)
      h:cancel()
    end, { allow_errors = true })
    assert.is_true(n >= 2)
    assert.equal(n, #helper.errors)
    assert.matches("tick 1", helper.errors[1].err, 1, true)
  end)

  it("checks its arguments", function()
    helper.run(function()
      local f = function() end
      assert.has_error(function() cs.timer.at(-1, f) end,
        "bad argument #1 to 'at' (invalid delay)")
      assert.has_error(function() cs.timer.at(0 / 0, f) end,
        "bad argument #1 to 'at' (invalid delay)")
      assert.has_error(function() cs.timer.at(1) end,
        "bad argument #2 to 'at' (function expected, got no value)")
      assert.has_error(function() cs.timer.at("x", f) end,
        "bad argument #1 to 'at' (number expected, got string)")
      assert.has_error(function() cs.timer.every(0, f) end,
        "bad argument #1 to 'every' (interval must be positive)")
      assert.has_error(function() cs.timer.every(-1, f) end,
        "bad argument #1 to 'every' (invalid interval)")
      local h = cs.timer.at(1, f)
      assert.has_error(function() h.cancel({}) end)
      h:cancel()
    end)
  end)

  it("raises outside a running loop", function()
    assert.has_error(function() cs.timer.at(0, function() end) end,
      "corosched: timer: no running loop (call it inside cs.run)")
  end)
end)

describe("cs.stats", function()
  after_each(helper.after_each)

  it("counts live threads, zombies and timers", function()
    helper.run(function()
      local base = cs.stats()
      assert.is_number(base.threads)
      assert.is_number(base.timers)
      assert.is_number(base.sockets)
      local t = cs.thread.spawn(function() cs.sleep(0.02) end)
      local z = cs.thread.spawn(function() end)
      local s = cs.stats()
      assert.equal(base.threads + 2, s.threads)
      assert.equal((base.zombies or 0) + 1, s.zombies)
      local h = cs.timer.at(1, function() end)
      assert.equal(base.timers + 1, cs.stats().timers)
      h:cancel()
      cs.thread.wait(z)
      cs.thread.wait(t)
      s = cs.stats()
      assert.equal(base.threads, s.threads)
      assert.equal(base.timers, s.timers)
    end)
  end)

  it("is all zero outside cs.run", function()
    local s = cs.stats()
    assert.equal(0, s.threads)
    assert.equal(0, s.timers)
    assert.equal(0, s.sockets)
  end)
end)

describe("cs.dump", function()
  after_each(helper.after_each)

  it("lists every live thread, what it is parked on, and its traceback",
     function()
    local text
    helper.run(function()
      local sem, q = cs.semaphore.new(), cs.queue.new()
      local function sleeper_fn() cs.sleep(1) end
      local function sema_fn() sem:wait(1) end
      local function queue_fn() q:pop(1) end
      local function nested_fn()
        coroutine.wrap(function() cs.sleep(1) end)()
      end
      local ts = {
        cs.thread.spawn(sleeper_fn),
        cs.thread.spawn(sema_fn),
        cs.thread.spawn(queue_fn),
        cs.thread.spawn(nested_fn),
      }
      local z = cs.thread.spawn(function() end)
      local waiter = cs.thread.spawn(function()
        local c = cs.thread.spawn(function() cs.sleep(1) end)
        cs.thread.wait(c)
      end)
      text = cs.dump()
      for _, t in ipairs(ts) do cs.thread.kill(t) end
      cs.thread.kill(waiter)
      cs.thread.wait(z)
    end)
    assert.matches("parked on sleep", text, 1, true)
    assert.matches("parked on semaphore", text, 1, true)
    assert.matches("parked on queue pop", text, 1, true)
    assert.matches("parked on wait", text, 1, true)
    assert.matches("zombie", text, 1, true)
    assert.matches("(in coroutine ", text, 1, true)
    assert.matches("running", text, 1, true) -- the thread calling dump
    assert.matches("stack traceback:", text, 1, true)
    assert.matches("in method 'wait'", text, 1, true)
    assert.matches("in method 'pop'", text, 1, true)
    assert.matches("01%-loop_spec%.lua:%d+: in function", text)
    assert.matches("entry thread", text, 1, true)
  end)

  it("is empty outside cs.run", function()
    assert.equal("", cs.dump())
  end)
end)

describe("cs.on_error", function()
  after_each(helper.after_each)

  it("receives the thread and its error with traceback", function()
    local got = {}
    local t
    cs.run(function()
      cs.on_error(function(th, err)
        got[#got + 1] = { th = th, err = err }
      end)
      t = cs.thread.spawn(function()
        local function failing_function() error("unwaited boom") end
        failing_function()
      end)
      local ok = pcall(cs.thread.kill, t) -- a zombie now
      assert.is_true(ok)
    end)
    -- kill of a zombie discards it silently: no report
    assert.equal(0, #got)

    cs.run(function()
      cs.on_error(function(th, err)
        got[#got + 1] = { th = th, err = err }
      end)
      t = cs.thread.spawn(function()
        local function failing_function() error("unwaited boom") end
        cs.sleep(0.01)
        failing_function()
      end)
    end)
    assert.equal(1, #got)
    assert.equal(t, got[1].th)
    assert.matches("unwaited boom", got[1].err, 1, true)
    assert.matches("stack traceback:", got[1].err, 1, true)
    assert.matches("failing_function", got[1].err, 1, true)
    helper.assert_clean()
  end)

  it("is not called for a failed thread that is waited on", function()
    local reports = 0
    cs.run(function()
      cs.on_error(function() reports = reports + 1 end)
      local t = cs.thread.spawn(function() error("waited") end)
      local u = cs.thread.spawn(function() cs.sleep(0.01) error("waited") end)
      assert.is_false((cs.thread.wait(t)))
      assert.is_false((cs.thread.wait(u)))
    end)
    assert.equal(0, reports)
  end)

  it("reports a zombie that is never waited when its parent ends",
     function()
    local log = {}
    cs.run(function()
      cs.on_error(function(_, err) log[#log + 1] = err:match("zombie %d") end)
      cs.thread.spawn(function()
        cs.thread.spawn(function() error("zombie 1") end)
        log[#log + 1] = "parent alive"
        cs.sleep(0.01)
        log[#log + 1] = "parent ends"
      end)
    end)
    assert.same({ "parent alive", "parent ends", "zombie 1" }, log)
  end)

  it("reports detached and orphaned threads when they fail", function()
    local log = {}
    cs.run(function()
      cs.on_error(function(_, err) log[#log + 1] = err:match("%a+ fail") end)
      cs.thread.spawn(function()
        cs.thread.spawn(function() cs.sleep(0.01) error("orphan fail") end)
      end)
      cs.timer.at(0.02, function() error("timer fail") end)
    end)
    assert.same({ "orphan fail", "timer fail" }, log)
  end)

  it("checks its argument and nil restores the default", function()
    assert.has_error(function() cs.on_error(42) end,
      "bad argument #1 to 'on_error' (function expected, got number)")
    assert.has_no_error(function() cs.on_error(nil) end)
    assert.has_no_error(function() cs.on_error() end)
  end)

  it("defaults to a report on stderr; a failing handler is reported too",
     function()
    local out, err, ok = helper.subprocess([[
      local cs = require "corosched"
      cs.run(function()
        cs.thread.spawn(function() error("default handler boom") end)
      end)
      cs.run(function()
        cs.on_error(function() error("handler itself failed") end)
        cs.thread.spawn(function() error("second boom") end)
      end)
      print("done")
    ]])
    assert.is_true(ok)
    assert.equal("done\n", out)
    assert.matches("default handler boom", err, 1, true)
    assert.matches("stack traceback:", err, 1, true)
    assert.matches("handler itself failed", err, 1, true)
    assert.matches("second boom", err, 1, true)
  end)
end)

describe("deadlock", function()
  after_each(helper.after_each)

  it("raises instead of hanging when nothing can wake the threads",
     function()
    local t0 = clock()
    local ok, err = pcall(cs.run, function()
      local q = cs.queue.new()
      local function blocked_on_queue() q:pop() end
      local t = cs.thread.spawn(blocked_on_queue)
      cs.thread.wait(t)
    end)
    assert.is_false(ok)
    assert.matches("^corosched: deadlock: 2 light threads are waiting and "
                   .. "nothing pending can wake them\n", err)
    assert.matches("parked on queue pop", err, 1, true)
    assert.matches("parked on wait", err, 1, true)
    assert.matches("in method 'pop'", err, 1, true)
    assert.matches("01%-loop_spec%.lua:%d+: in function", err)
    assert.is_true(clock() - t0 < 1 * helper.slack)
    helper.assert_clean()
  end)

  it("names a single waiting thread", function()
    local ok, err = pcall(cs.run, function()
      cs.queue.new():pop()
    end)
    assert.is_false(ok)
    assert.matches("^corosched: deadlock: 1 light thread is waiting and "
                   .. "nothing pending can wake it\n", err)
    assert.matches("parked on queue pop", err, 1, true)
    helper.assert_clean()
  end)

  it("is detected when the last timer has fired", function()
    local fired = false
    local ok, err = pcall(cs.run, function()
      cs.timer.at(0.01, function() fired = true end)
      cs.queue.new():pop()
    end)
    assert.is_true(fired)
    assert.is_false(ok)
    assert.matches("deadlock", err, 1, true)
    helper.assert_clean()
  end)

  it("is not reported while a timer can still wake a thread", function()
    local r = cs.run(function()
      local sem = cs.semaphore.new()
      cs.timer.at(0.02, function() sem:post() end)
      return sem:wait(1e6)
    end)
    assert.is_true(r)
    helper.assert_clean()
  end)

  it("leaves the loop usable", function()
    assert.is_false(pcall(cs.run, function() cs.queue.new():pop() end))
    assert.equal(7, cs.run(function() cs.sleep(0.001) return 7 end))
    helper.assert_clean()
  end)
end)
