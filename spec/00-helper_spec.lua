-- The spec helper itself: a hung test fails with cs.dump() instead of
-- hanging, a failure comes back with its traceback, leaks are caught.
local helper = require "spec.helper"
local cs = helper.cs

describe("spec helper", function()
  after_each(helper.after_each)

  it("returns the results of the test body", function()
    assert.same({ n = 3, 1, nil, 3 },
                table.pack(helper.run(function(a) return a, nil, 3 end,
                                      nil, 1)))
  end)

  it("fails a test that outlives its deadline, with cs.dump()", function()
    local t0 = helper.clock()
    local ok, err = pcall(helper.run, function()
      local function stuck_here() cs.queue.new():pop() end
      stuck_here()
    end, { timeout = 0.05 })
    assert.is_false(ok)
    assert.matches("deadline of [%d.]+s exceeded", err)
    assert.matches("parked on queue pop", err, 1, true)
    assert.matches("stuck_here", err, 1, true)
    assert.is_true(helper.clock() - t0 < 2 * helper.slack)
    helper.assert_clean()
  end)

  it("fails a test whose threads outlive the deadline", function()
    local ok, err = pcall(helper.run, function()
      cs.thread.spawn(function() cs.sleep(100) end)
    end, { timeout = 0.05 })
    assert.is_false(ok)
    assert.matches("after the test body returned", err, 1, true)
    assert.matches("parked on sleep", err, 1, true)
    helper.assert_clean()
  end)

  it("re-raises a failure of the body with its traceback", function()
    local ok, err = pcall(helper.run, function()
      local function failing_helper_fn() error("body failed") end
      cs.sleep(0.001)
      failing_helper_fn()
    end)
    assert.is_false(ok)
    assert.matches("body failed", err, 1, true)
    assert.matches("stack traceback:", err, 1, true)
    assert.matches("failing_helper_fn", err, 1, true)
  end)

  it("fails on a light thread that failed unwaited, with its traceback",
     function()
    local ok, err = pcall(helper.run, function()
      cs.thread.spawn(function()
        local function unwaited_fn() error("nobody waits") end
        cs.sleep(0.001)
        unwaited_fn()
      end)
    end)
    assert.is_false(ok)
    assert.matches("nobody waits", err, 1, true)
    assert.matches("unwaited_fn", err, 1, true)
    -- unless the test says it expects that
    helper.run(function()
      cs.thread.spawn(function() error("expected") end)
    end, { allow_errors = true })
    assert.equal(1, #helper.errors)
  end)

  it("assert_clean sees what is left", function()
    local leaked
    cs.run(function()
      local t = cs.thread.spawn(function() cs.sleep(0.01) end)
      leaked = { pcall(helper.assert_clean) }
      cs.thread.wait(t)
    end)
    assert.is_false(leaked[1])
    assert.matches("threads=2", leaked[2], 1, true)
    assert.is_true(helper.assert_clean())
  end)

  it("fds() counts open descriptors", function()
    local n = helper.fds()
    assert.is_true(n >= 3)
    local f = assert(io.open("/dev/null"))
    assert.equal(n + 1, helper.fds())
    f:close()
    assert.equal(n, helper.fds())
  end)

  it("clock() advances with real time", function()
    local t0 = helper.clock()
    helper.busy(0.01)
    assert.is_true(helper.clock() - t0 >= 0.01)
  end)
end)
