-- Bug: when a coroutine.wrap function raised, its coroutine's traceback was
-- stashed so that the thread's report could show it ("coroutine
-- traceback:"). If a pcall caught that error and the thread then failed
-- with another error before parking, the report showed the stale traceback
-- of the caught error as if it were the cause. Fixed: the stash keeps the
-- error value too and is used only if the thread's error is that value
-- (or, for a string, ends with it: wrap prefixes a position).
local helper = require "spec.helper"
local cs = helper.cs

local function report_of(fn)
  local report
  cs.run(function()
    cs.on_error(function(_, err) report = err end)
    cs.thread.spawn(fn)
  end)
  helper.assert_clean()
  return report
end

describe("regression: coroutine tracebacks in thread reports", function()
  after_each(helper.after_each)

  it("leave out a wrap error that a pcall caught", function()
    local report = report_of(function()
      pcall(coroutine.wrap(function() error("caught earlier") end))
      error("the real failure")
    end)
    assert.matches("the real failure", report, 1, true)
    assert.not_matches("caught earlier", report, 1, true)
    assert.not_matches("coroutine traceback:", report, 1, true)
  end)

  it("keep the traceback of the wrap error that ended the thread",
     function()
    local report = report_of(function()
      local function raiser_in_wrap() error("from the wrap") end
      coroutine.wrap(function() raiser_in_wrap() end)()
    end)
    assert.matches("from the wrap", report, 1, true)
    assert.matches("coroutine traceback:", report, 1, true)
    assert.matches("raiser_in_wrap", report, 1, true)
  end)

  it("keep it for an error object passed on unchanged", function()
    local report = report_of(function()
      coroutine.wrap(function() error(setmetatable({}, {
        __tostring = function() return "custom object" end })) end)()
    end)
    assert.matches("custom object", report, 1, true)
    assert.matches("coroutine traceback:", report, 1, true)
  end)

  it("apply to the entry thread's error too", function()
    local ok, err = pcall(cs.run, function()
      pcall(coroutine.wrap(function() error("caught earlier") end))
      error("entry failure")
    end)
    assert.is_false(ok)
    assert.matches("entry failure", err, 1, true)
    assert.not_matches("caught earlier", err, 1, true)
    helper.assert_clean()
  end)
end)
