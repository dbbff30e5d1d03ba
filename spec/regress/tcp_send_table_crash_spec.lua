-- Bug: tcp:send(table) flattened the array into a luaL_Buffer while it
-- pushed each element on the stack (lua_rawgeti) above the buffer; when
-- the data outgrew the buffer's first block, luaL_addvalue moved the
-- buffer box under the wrong stack slot: a segfault (or a corrupted stack)
-- for any array of more than about LUAL_BUFFERSIZE bytes.
-- Fixed (cs_tcp.c): two passes, the length (cs_tcp_data_len) and then
-- the copy straight into a buffer of that size (cs_tcp_data_copy), with
-- OpenResty's checks: "bad data type %s found", "non-array table found".
local helper = require "spec.helper"
local net = require "spec.support.net"
local cs = helper.cs

describe("regression: send(table) of more than one buffer block", function()
  after_each(helper.after_each)

  it("sends it whole, nested or flat", function()
    net.run(function()
      local c, s = net.pair()
      local piece = ("p"):rep(1000)
      local flat, nested = {}, {}
      local n = net.big(300000) // 1000 -- many buffer blocks all the same
      for i = 1, n do
        flat[i] = piece
        nested[i] = { i, { piece, { "" } } }
      end
      local want = table.concat(flat)
      local reader = cs.thread.spawn(function() return s:receive(#want) end)
      assert.equal(#want, c:send(flat))
      assert.same({ true, want }, { cs.thread.wait(reader) })
      local parts = {}
      for i = 1, n do parts[i] = i .. piece end
      want = table.concat(parts)
      reader = cs.thread.spawn(function() return s:receive(#want) end)
      assert.equal(#want, c:send(nested))
      assert.same({ true, want }, { cs.thread.wait(reader) })
      c:close(); s:close()
    end)
  end)

  it("raises on a table that is not an array, or has holes", function()
    net.run(function()
      local c, s = net.pair()
      assert.error_matches(function() c:send({ "a", k = "v" }) end,
                           "non%-array table found")
      assert.error_matches(function() c:send({ [1] = "a", [3] = "c" }) end,
                           "bad data type nil found")
      local loop = {}
      loop[1] = loop
      assert.error_matches(function() c:send(loop) end, "nested too deeply")
      c:close(); s:close()
    end)
  end)
end)
