-- Bug: q:push() hands the item straight to a parked popper and makes it
-- ready; if the popper was killed before it ran, the item was lost (the
-- next popper waited forever). Fixed: until the woken popper runs, its
-- cleanup passes the item to the next popper, or puts it back at the head
-- of the queue; cs.thread.kill runs that cleanup for ready threads too.
local helper = require "spec.helper"
local cs = helper.cs
local spawn, wait, kill = cs.thread.spawn, cs.thread.wait, cs.thread.kill

describe("regression: killing a popper that was handed an item", function()
  after_each(helper.after_each)

  it("passes the item to the next popper", function()
    helper.run(function()
      local q = cs.queue.new()
      local p1 = spawn(function() return q:pop() end)
      local p2 = spawn(function() return q:pop() end)
      q:push("item")
      kill(p1)
      assert.same({ true, "item" }, { wait(p2) })
    end)
  end)

  it("puts the item back at the head of the queue", function()
    helper.run(function()
      local q = cs.queue.new()
      local p = spawn(function() return q:pop() end)
      q:push("first")
      q:push("second")
      kill(p)
      assert.equal(2, q:count())
      assert.equal("first", q:pop())
      assert.equal("second", q:pop())
    end)
  end)

  it("works for a popper inside a nested coroutine", function()
    helper.run(function()
      local q = cs.queue.new()
      local p = spawn(function()
        return coroutine.wrap(function() return q:pop() end)()
      end)
      q:push("nested")
      kill(p)
      assert.equal("nested", q:pop())
    end)
  end)
end)
