-- Bug: lua/corosched/init.lua copied the `coroutine` table into
-- cs.raw_coroutine each time it was loaded. A second load (package.loaded
-- cleared, as busted's insulation does between spec files) copied our own
-- replacements, so cs.raw_coroutine.resume was no longer Lua's resume.
-- Fixed by keeping the originals in the registry on the first load.
local helper = require "spec.helper"

describe("regression: cs.raw_coroutine after a reload", function()
  it("still holds Lua's own functions", function()
    local out, err, ok = helper.subprocess([[
      local stock = {}
      for k, v in pairs(coroutine) do stock[k] = v end
      for _ = 1, 3 do
        package.loaded.corosched = nil
        package.loaded["corosched.core"] = nil
        local cs = require "corosched"
        for k, v in pairs(stock) do
          assert(cs.raw_coroutine[k] == v, "raw_coroutine." .. k)
        end
        assert(coroutine.resume ~= stock.resume)
      end
      io.write("ok")
    ]])
    assert.equal("", err)
    assert.is_true(ok)
    assert.equal("ok", out)
  end)

  it("holds functions without the scheduler upvalue in this process",
     function()
    local cs = require "corosched"
    for _, k in ipairs({ "resume", "wrap", "yield", "close", "status" }) do
      assert.equal(0, debug.getinfo(cs.raw_coroutine[k], "u").nups, k)
    end
  end)
end)
