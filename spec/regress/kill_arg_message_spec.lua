-- Bug: cs.thread.kill(x) with a non-thread argument raised "bad argument
-- #1 to 'kill' (thread expected, got number)"; ngx.thread.kill (and our
-- own cs.thread.wait) say "lua thread expected". Fixed in cs_thread_check.
local helper = require "spec.helper"
local cs = helper.cs

describe("regression: kill's argument error", function()
  after_each(helper.after_each)

  it("is ngx.thread.kill's", function()
    helper.run(function()
      assert.has_error(function() cs.thread.kill("x") end,
        "bad argument #1 to 'kill' (lua thread expected)")
      assert.has_error(function() cs.thread.wait("x") end,
        "bad argument #1 to 'wait' (lua thread expected)")
    end)
  end)
end)
