-- Bug (open when this file was written; the test marks itself pending while
-- it fails): sema:post(n) adds n to a lua_Integer count without a bound
-- (cs_sync.c: sem->count += n), so post(math.maxinteger) on a semaphore
-- whose count is 1 is a signed overflow: undefined behaviour (UBSan:
-- "signed integer overflow: 1 + 9223372036854775807"; an ASan+UBSan build
-- aborts), and in practice the count turns negative, so wait() then blocks
-- although units were posted. Expected: the post raises an error (or the
-- count saturates); the count never turns negative.
-- Minimal reproducer:
--   local s = cs.semaphore.new(1); s:post(math.maxinteger); s:count() -> < 0
-- It runs in a child process: under UBSan the overflow aborts.
local helper = require "spec.helper"

describe("regression: semaphore count overflow", function()
  it("post(math.maxinteger) on a count of 1 raises or keeps it positive",
     function()
    local out, err, ok = helper.subprocess([[
      local cs = require "corosched"
      local s = cs.semaphore.new(1)
      local posted = pcall(s.post, s, math.maxinteger)
      print(posted and s:count() > 0 and "POSITIVE" or
            (not posted) and "RAISED" or ("NEGATIVE " .. s:count()))
    ]])
    if not ok or not (out:find("POSITIVE") or out:find("RAISED")) then
      pending("open bug (see the header of this file): " .. out .. err)
    end
  end)
end)
