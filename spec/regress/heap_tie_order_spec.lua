-- Bug: the timer heap (cs_sched.c) was a plain binary heap keyed on the
-- deadline alone, which is not stable: timers created, or sleeps started,
-- in the same loop iteration with the same delay (hence the same
-- deadline) fired in a scrambled order (e.g. 1, 20, 19, ... instead of
-- 1..20). nginx's timer tree, and so ngx.timer.at and ngx.sleep, keep the
-- order of equal deadlines. Fixed by breaking ties with an insertion
-- number kept in the heap block.
local helper = require "spec.helper"
local cs = helper.cs

local function iota(n)
  local t = {}
  for i = 1, n do t[i] = i end
  return t
end

describe("regression: equal deadlines", function()
  after_each(helper.after_each)

  it("timers fire in creation order", function()
    local log = {}
    helper.run(function()
      for i = 1, 100 do
        cs.timer.at(0.005, function() log[#log + 1] = i end)
      end
    end)
    assert.same(iota(100), log)
  end)

  it("sleeping threads wake in the order they went to sleep", function()
    local log = {}
    helper.run(function()
      for i = 1, 100 do
        cs.thread.spawn(function() cs.sleep(0.005) log[#log + 1] = i end)
      end
    end)
    assert.same(iota(100), log)
  end)

  it("the order holds while the heap grows and entries leave it",
     function()
    local log = {}
    helper.run(function()
      local cancel = {}
      for i = 1, 300 do
        local h = cs.timer.at(0.01, function() log[#log + 1] = i end)
        if i % 3 == 0 then cancel[#cancel + 1] = h end
        cs.timer.at(0.001 * (i % 7), function() end)
      end
      for _, h in ipairs(cancel) do h:cancel() end
    end)
    local want = {}
    for i = 1, 300 do if i % 3 ~= 0 then want[#want + 1] = i end end
    assert.same(want, log)
  end)
end)
