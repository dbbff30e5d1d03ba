-- Bug: sema:post() hands a unit straight to the first waiter and makes it
-- ready; if that waiter was killed before it ran (by its parent, or by the
-- teardown after the entry thread failed), the unit was lost: the count
-- stayed low and the next waiter was never woken. Fixed: until the woken
-- thread runs, its cleanup gives the unit back (to the next waiter, or to
-- the count), and cs.thread.kill runs that cleanup for ready threads too.
local helper = require "spec.helper"
local cs = helper.cs
local spawn, wait, kill = cs.thread.spawn, cs.thread.wait, cs.thread.kill

describe("regression: killing a thread that was granted a unit", function()
  after_each(helper.after_each)

  it("passes the unit to the next waiter", function()
    helper.run(function()
      local sem = cs.semaphore.new()
      local a = spawn(function() return sem:wait(1) end)
      local b = spawn(function() return sem:wait(1) end)
      sem:post()
      assert.equal(1, kill(a))
      assert.same({ true, true }, { wait(b) })
      assert.equal(0, sem:count())
    end)
  end)

  it("gives the unit back to the count", function()
    helper.run(function()
      local sem = cs.semaphore.new()
      local a = spawn(function() return sem:wait(1) end)
      sem:post()
      kill(a)
      assert.equal(1, sem:count())
    end)
  end)

  it("loses nothing when the entry thread fails", function()
    local sem = cs.semaphore.new()
    assert.is_false(pcall(cs.run, function()
      for _ = 1, 5 do spawn(function() sem:wait(10) end) end
      sem:post(2)
      error("entry failed")
    end))
    assert.equal(2, sem:count())
    helper.assert_clean()
  end)

  it("a thread that ran keeps its unit when killed later", function()
    helper.run(function()
      local sem = cs.semaphore.new()
      local a = spawn(function() sem:wait(1) cs.sleep(1) end)
      sem:post()
      cs.sleep(0.005) -- a took the unit and sleeps
      kill(a)
      assert.equal(0, sem:count())
    end)
  end)
end)
