-- cs.semaphore (ngx.semaphore: lua-resty-core lib/ngx/semaphore.lua,
-- t/154-semaphore.t) and cs.queue (API.md "Synchronisation").
local helper = require "spec.helper"
local cs = helper.cs
local spawn, wait, kill = cs.thread.spawn, cs.thread.wait, cs.thread.kill
local clock = helper.clock

describe("cs.semaphore", function()
  after_each(helper.after_each)

  it("new([n]) starts with n resources", function()
    assert.equal(0, cs.semaphore.new():count())
    assert.equal(3, cs.semaphore.new(3):count())
    assert.equal(0, cs.semaphore.new(0):count())
    assert.equal(2, cs.semaphore.new("2"):count())
    assert.has_error(function() cs.semaphore.new(-1) end,
      "no negative number")
  end)

  it("wait takes a resource at once without parking", function()
    local log = {}
    helper.run(function()
      local sem = cs.semaphore.new(2)
      spawn(function() coroutine.yield() log[#log + 1] = "other" end)
      assert.same({ n = 1, true }, table.pack(sem:wait(1)))
      assert.same({ n = 1, true }, table.pack(sem:wait(0)))
      log[#log + 1] = "took two"
      assert.equal(0, sem:count())
    end)
    assert.same({ "took two", "other" }, log)
  end)

  it("wait(0) without a resource: nil, 'timeout' at once", function()
    helper.run(function()
      local sem = cs.semaphore.new()
      assert.same({ n = 2, nil, "timeout" }, table.pack(sem:wait(0)))
      assert.equal(0, sem:count())
    end)
  end)

  it("wait(t) parks and times out with false, 'timeout'", function()
    local r, dt
    helper.run(function()
      local sem = cs.semaphore.new()
      cs.update_time()
      local t0 = clock()
      r = table.pack(sem:wait(0.05))
      dt = clock() - t0
      assert.equal(0, sem:count())
      sem:post()
      assert.equal(1, sem:count()) -- the timed-out waiter took nothing
    end)
    assert.same({ n = 2, false, "timeout" }, r)
    assert.is_true(dt >= 0.049)
    assert.is_true(dt < 0.5 * helper.slack)
  end)

  it("post wakes waiters in FIFO order and returns true", function()
    local log = {}
    helper.run(function()
      local sem = cs.semaphore.new()
      local ts = {}
      for i = 1, 5 do
        ts[i] = spawn(function()
          local ok = sem:wait(1)
          log[#log + 1] = i
          return ok
        end)
      end
      assert.equal(-5, sem:count())
      assert.same({ n = 1, true }, table.pack(sem:post()))
      assert.same({ n = 1, true }, table.pack(sem:post(3)))
      cs.sleep(0.01)
      assert.same({ 1, 2, 3, 4 }, log)
      assert.equal(-1, sem:count())
      sem:post(2)
      for i = 1, 5 do assert.same({ true, true }, { wait(ts[i]) }) end
      assert.equal(1, sem:count())
    end)
    assert.same({ 1, 2, 3, 4, 5 }, log)
  end)

  -- OpenResty wakes the waiters from a posted nginx event, which runs after
  -- the posted light threads (a yield posts the yielder): API.md says
  -- posted threads run before any thread woken by a semaphore post.
  it("post does not yield: waiters run after the posted threads",
     function()
    local log = {}
    helper.run(function()
      local sem = cs.semaphore.new()
      spawn(function() sem:wait(1) log[#log + 1] = "waiter" end)
      sem:post()
      log[#log + 1] = "posted"
      helper.busy(0.005)
      log[#log + 1] = "still running"
      coroutine.yield()
      log[#log + 1] = "poster again"
    end)
    assert.same({ "posted", "still running", "poster again", "waiter" }, log)
  end)

  it("a later waiter cannot take a resource posted for an earlier one",
     function()
    helper.run(function()
      local sem = cs.semaphore.new()
      local t = spawn(function() return sem:wait(1) end)
      sem:post()
      -- t has not run yet: wait(0) fails while t is queued
      assert.same({ n = 2, nil, "timeout" }, table.pack(sem:wait(0)))
      assert.same({ true, true }, { wait(t) })
      assert.equal(0, sem:count())
    end)
  end)

  it("wait(0) fails while other threads are queued", function()
    helper.run(function()
      local sem = cs.semaphore.new()
      local t = spawn(function() return sem:wait(1) end)
      assert.same({ n = 2, nil, "timeout" }, table.pack(sem:wait(0)))
      sem:post(2)
      -- t was handed a unit but has not run: it still counts as queued
      -- (OpenResty; lua-resty-core's semaphore.t TEST 3)
      assert.same({ n = 2, nil, "timeout" }, table.pack(sem:wait(0)))
      assert.same({ true, true }, { wait(t) })
      assert.same({ n = 1, true }, table.pack(sem:wait(0)))
    end)
  end)

  it("a wait behind a waiter handed a unit that has not run queues, and "
     .. "gets the unit left over when that one runs", function()
    helper.run(function()
      local sem = cs.semaphore.new()
      local t1 = spawn(function() return sem:wait(1) end)
      sem:post(2) -- t1 is handed one; one is left
      local t2 = spawn(function() return sem:wait(1) end) -- queues
      assert.equal("running", cs.thread.status(t2))
      assert.same({ true, true }, { wait(t1) })
      assert.same({ true, true }, { wait(t2) })
      assert.equal(0, sem:count())
      -- handed a unit, then killed before it ran: the unit goes on
      local t3 = spawn(function() return sem:wait(1) end)
      local t4 = spawn(function() return sem:wait(1) end)
      sem:post(1) -- to t3
      assert.equal(1, cs.thread.kill(t3))
      assert.same({ true, true }, { wait(t4) })
      assert.equal(0, sem:count())
    end)
  end)

  it("post(n) then waits: the resource count", function()
    helper.run(function()
      local sem = cs.semaphore.new()
      sem:post(3)
      assert.equal(3, sem:count())
      for _ = 1, 3 do assert.is_true(sem:wait(0)) end
      assert.equal(0, sem:count())
    end)
  end)

  it("checks its arguments like ngx.semaphore", function()
    helper.run(function()
      local sem = cs.semaphore.new()
      assert.has_error(function() sem:post(0) end, "no negative number")
      assert.has_error(function() sem:post(-1) end, "no negative number")
      assert.has_error(function() sem:wait(-1) end, "no negative number")
      assert.has_error(function() sem:wait() end)
      assert.has_error(function() sem.wait({}, 1) end)
      assert.has_error(function() sem.post({}) end)
      assert.has_error(function() sem.count({}) end)
      local big = cs.semaphore.new(1)
      assert.has_error(function() big:post(math.maxinteger) end,
        "semaphore count overflow")
      assert.equal(1, big:count())
      big:post(math.maxinteger - 1)
      assert.equal(math.maxinteger, big:count())
    end)
  end)

  it("raises when it would park outside a light thread", function()
    local sem = cs.semaphore.new(1)
    assert.is_true(sem:wait(1)) -- no parking needed
    assert.same({ n = 2, nil, "timeout" }, table.pack(sem:wait(0)))
    assert.has_error(function() sem:wait(1) end,
      "corosched: wait on a semaphore: no running loop (call it inside "
      .. "cs.run)")
    sem:post()
    assert.equal(1, sem:count())
  end)

  it("works across nested coroutines and pcall", function()
    helper.run(function()
      local sem = cs.semaphore.new()
      local t = spawn(function()
        return coroutine.wrap(function()
          return select(2, pcall(function()
            return coroutine.wrap(function() return sem:wait(1) end)()
          end))
        end)()
      end)
      cs.sleep(0.005)
      sem:post()
      assert.same({ true, true }, { wait(t) })
    end)
  end)

  it("kill during a wait removes the waiter", function()
    helper.run(function()
      local sem = cs.semaphore.new()
      local a = spawn(function() return sem:wait(1) end)
      local b = spawn(function() return sem:wait(1) end)
      local c = spawn(function() return sem:wait(1) end)
      assert.equal(-3, sem:count())
      assert.equal(1, kill(b))
      assert.equal(-2, sem:count())
      sem:post(2)
      assert.same({ true, true }, { wait(a) })
      assert.same({ true, true }, { wait(c) })
      assert.equal(0, sem:count())
    end)
  end)

  it("kill of a waiter that was posted to but has not run gives the "
     .. "resource back", function()
    helper.run(function()
      local sem = cs.semaphore.new()
      local a = spawn(function() return sem:wait(1) end)
      local b = spawn(function() return sem:wait(1) end)
      sem:post() -- for a, which has not run yet
      assert.equal(1, kill(a))
      -- the resource goes to the next waiter, b
      assert.same({ true, true }, { wait(b) })
      assert.equal(0, sem:count())
      local c = spawn(function() return sem:wait(1) end)
      sem:post()
      assert.equal(1, kill(c)) -- nobody else waits: the count is back
      assert.equal(1, sem:count())
      assert.is_true(sem:wait(0))
    end)
  end)

  it("the entry failing kills waiters without losing resources",
     function()
    local sem = cs.semaphore.new()
    local ok = pcall(cs.run, function()
      for _ = 1, 3 do spawn(function() sem:wait(10) end) end
      sem:post(1)
      error("x")
    end)
    assert.is_false(ok)
    assert.equal(1, sem:count())
    helper.assert_clean()
  end)

  it("limits concurrency as a worker pool", function()
    local running, max, done = 0, 0, 0
    helper.run(function()
      local sem = cs.semaphore.new(3)
      local ts = {}
      for i = 1, 12 do
        ts[i] = spawn(function()
          assert(sem:wait(1))
          running = running + 1
          if running > max then max = running end
          cs.sleep(0.005)
          running = running - 1
          done = done + 1
          sem:post()
        end)
      end
      for i = 1, 12 do wait(ts[i]) end
      assert.equal(3, sem:count())
    end)
    assert.equal(3, max)
    assert.equal(12, done)
  end)

  it("a timeout and a post in the same iteration do not lose the resource",
     function()
    helper.run(function()
      local sem = cs.semaphore.new()
      local t = spawn(function() return sem:wait(0.01) end)
      helper.busy(0.02) -- the timeout is due but has not been processed
      sem:post()
      local ok, err = select(2, wait(t))
      if ok then
        assert.equal(0, sem:count())
      else
        assert.equal("timeout", err)
        assert.equal(1, sem:count())
      end
    end)
  end)
end)

describe("cs.queue", function()
  after_each(helper.after_each)

  it("push and pop in FIFO order without parking", function()
    helper.run(function()
      local q = cs.queue.new()
      for i = 1, 5 do assert.equal(1, q:push(i)) end
      assert.equal(5, q:count())
      for i = 1, 5 do assert.equal(i, q:pop()) end
      assert.equal(0, q:count())
      q:push(false)
      q:push("x")
      assert.is_false(q:pop())
      assert.equal("x", q:pop())
    end)
  end)

  it("pop parks until a push, which hands the value over", function()
    local t0 = clock()
    helper.run(function()
      local q = cs.queue.new()
      local t = spawn(function() return q:pop() end)
      local u = spawn(function() return q:pop() end)
      cs.sleep(0.02)
      q:push("a")
      q:push("b")
      assert.equal(0, q:count())
      assert.same({ true, "a" }, { wait(t) })
      assert.same({ true, "b" }, { wait(u) })
    end)
    assert.is_true(clock() - t0 >= 0.019)
  end)

  it("pop(timeout) returns nil, 'timeout'", function()
    helper.run(function()
      local q = cs.queue.new()
      cs.update_time()
      local t0 = clock()
      assert.same({ n = 2, nil, "timeout" }, table.pack(q:pop(0.03)))
      assert.is_true(clock() - t0 >= 0.029)
      assert.same({ n = 2, nil, "timeout" }, table.pack(q:pop(0)))
    end)
  end)

  it("push parks while a bounded queue is full", function()
    helper.run(function()
      local q = cs.queue.new(2)
      q:push(1)
      q:push(2)
      assert.same({ n = 2, nil, "timeout" }, table.pack(q:push(3, 0)))
      local t = spawn(function() return q:push(3) end)
      local u = spawn(function() return q:push(4) end)
      assert.equal(2, q:count())
      assert.equal(1, q:pop())
      assert.equal(2, q:count()) -- 3 went in
      assert.same({ true, 1 }, { wait(t) })
      assert.equal(2, q:pop())
      assert.equal(3, q:pop())
      assert.equal(4, q:pop())
      assert.same({ true, 1 }, { wait(u) })
      cs.update_time()
      local t0 = clock()
      q:push(5)
      q:push(6)
      assert.same({ n = 2, nil, "timeout" }, table.pack(q:push(7, 0.03)))
      assert.is_true(clock() - t0 >= 0.029)
      assert.equal(5, q:pop())
      assert.equal(6, q:pop())
    end)
  end)

  it("close wakes every waiter with nil, 'closed'", function()
    helper.run(function()
      local q = cs.queue.new()
      local ts = {}
      for i = 1, 3 do ts[i] = spawn(function() return q:pop() end) end
      assert.equal(1, q:close())
      for i = 1, 3 do
        assert.same({ true, nil, "closed" }, { wait(ts[i]) })
      end
      local f = cs.queue.new(1)
      f:push("kept")
      local p = spawn(function() return f:push("x") end)
      f:close()
      assert.same({ true, nil, "closed" }, { wait(p) })
      -- what was queued can still be popped, then "closed"
      assert.equal("kept", f:pop())
      assert.same({ n = 2, nil, "closed" }, table.pack(f:pop()))
      assert.same({ n = 2, nil, "closed" }, table.pack(f:push(1)))
      assert.equal(1, f:close())
    end)
  end)

  it("checks its arguments", function()
    helper.run(function()
      assert.has_error(function() cs.queue.new(-1) end,
        "bad argument #1 to 'new' (capacity must not be negative)")
      local q = cs.queue.new()
      -- method calls: Lua does not count self
      assert.has_error(function() q:push() end,
        "bad argument #1 to 'push' (value expected)")
      assert.has_error(function() q:push(nil) end,
        "bad argument #1 to 'push' (value expected)")
      assert.has_error(function() q:pop(-1) end,
        "bad argument #1 to 'pop' (invalid timeout)")
      assert.has_error(function() q:push(1, -1) end,
        "bad argument #2 to 'push' (invalid timeout)")
      assert.has_error(function() q.push(q) end,
        "bad argument #2 to 'push' (value expected)")
      assert.has_error(function() q.pop({}) end)
    end)
  end)

  it("raises when it would park outside a light thread", function()
    local q = cs.queue.new()
    assert.has_error(function() q:pop() end,
      "corosched: pop from a queue: no running loop (call it inside cs.run)")
    q:push(1)
    assert.equal(1, q:pop())
  end)

  it("kill of a parked popper or pusher removes it", function()
    helper.run(function()
      local q = cs.queue.new(1)
      local p1 = spawn(function() return q:pop() end)
      local p2 = spawn(function() return q:pop() end)
      kill(p1)
      q:push("v")
      assert.same({ true, "v" }, { wait(p2) })
      q:push("full")
      local s1 = spawn(function() return q:push("s1") end)
      local s2 = spawn(function() return q:push("s2") end)
      kill(s1)
      assert.equal("full", q:pop())
      assert.equal("s2", q:pop())
      assert.same({ true, 1 }, { wait(s2) })
      assert.equal(0, q:count())
    end)
  end)

  it("kill of a popper that was handed a value does not lose it",
     function()
    helper.run(function()
      local q = cs.queue.new()
      local p1 = spawn(function() return q:pop() end)
      local p2 = spawn(function() return q:pop() end)
      q:push("first") -- handed to p1, which has not run yet
      kill(p1)
      -- "first" goes to the next popper
      assert.same({ true, "first" }, { wait(p2) })
      local p3 = spawn(function() return q:pop() end)
      q:push("second")
      kill(p3)
      q:push("third")
      -- with nobody else waiting, it is back at the head of the queue
      assert.equal(2, q:count())
      assert.equal("second", q:pop())
      assert.equal("third", q:pop())
    end)
  end)

  it("a pipeline of stages", function()
    local out = {}
    helper.run(function()
      local a, b = cs.queue.new(2), cs.queue.new(2)
      local producer = spawn(function()
        for i = 1, 20 do a:push(i) end
        a:close()
      end)
      local doubler = spawn(function()
        while true do
          local v, err = a:pop()
          if not v then assert.equal("closed", err) break end
          cs.sleep(0)
          b:push(v * 2)
        end
        b:close()
      end)
      local consumer = spawn(function()
        for v in function() return (b:pop()) end do out[#out + 1] = v end
      end)
      wait(producer)
      wait(doubler)
      wait(consumer)
    end)
    local want = {}
    for i = 1, 20 do want[i] = 2 * i end
    assert.same(want, out)
  end)
end)
