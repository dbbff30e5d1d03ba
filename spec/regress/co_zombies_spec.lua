-- Bug: zombie children of a user coroutine (threads spawned by a
-- coroutine.create/wrap coroutine that ended before anyone waited on them)
-- were kept until cs.run returned, when the coroutine ended by returning,
-- raising, coroutine.close, a direct nested resume, or the kill of its
-- light thread: a loop that spawns from a wrap grew without bound. Only a
-- light thread's own end discarded its zombies. lua-nginx-module discards
-- them when any coroutine ends (ngx_http_lua_cleanup_zombie_child_uthreads).
-- Fixed: cs_thread_co_ended() runs wherever a user coroutine ends.
local helper = require "spec.helper"
local cs = helper.cs
local spawn, kill = cs.thread.spawn, cs.thread.kill

describe("regression: zombies of an ended user coroutine", function()
  after_each(helper.after_each)

  it("are discarded when the coroutine returns or raises", function()
    helper.run(function()
      for _ = 1, 1000 do
        coroutine.wrap(function() spawn(function() end) end)()
        local co = coroutine.create(function()
          spawn(function() end)
          error("x")
        end)
        assert.is_false(coroutine.resume(co))
      end
      assert.equal(0, cs.stats().zombies)
    end)
  end)

  it("are discarded when the coroutine is closed", function()
    helper.run(function()
      local co = coroutine.create(function()
        spawn(function() end)
        coroutine.yield()
      end)
      coroutine.resume(co)
      assert.equal(1, cs.stats().zombies)
      assert.is_true(coroutine.close(co))
      assert.equal(0, cs.stats().zombies)
    end)
  end)

  it("are discarded when the coroutine's thread is killed", function()
    helper.run(function()
      local t = spawn(function()
        coroutine.wrap(function()
          spawn(function() end)
          cs.sleep(10)
        end)()
      end)
      assert.equal(1, cs.stats().zombies)
      kill(t)
      assert.equal(0, cs.stats().zombies)
    end)
  end)

  it("are discarded when it ends in a direct nested resume", function()
    helper.run(function()
      local co = coroutine.wrap(function()
        spawn(function() end)
        coroutine.yield()
      end)
      co()
      assert.equal(1, cs.stats().zombies)
      table.sort({ 2, 1 }, function(a, b) pcall(co) return a < b end)
      assert.equal(0, cs.stats().zombies)
    end)
  end)

  it("a failed one is reported when discarded", function()
    local reported
    helper.run(function()
      coroutine.wrap(function()
        spawn(function() error("orphaned failure") end)
      end)()
      reported = #helper.errors
    end, { allow_errors = true })
    assert.equal(1, reported)
    assert.matches("orphaned failure", helper.errors[1].err, 1, true)
  end)

  it("children that end later are discarded, not kept as zombies",
     function()
    helper.run(function()
      local child
      coroutine.wrap(function()
        child = spawn(function() cs.sleep(0.01) end)
      end)()
      cs.sleep(0.03)
      assert.equal("dead", coroutine.status(child))
      assert.equal(0, cs.stats().zombies)
    end)
  end)
end)
