-- Guards the lazy re-arming of read timeouts (cs_socket.c, cs_sock_park):
-- the persistent read event keeps the timeout libevent re-armed when data
-- last arrived, so a receive that starts long after that must still get
-- its full timeout, counted from the receive (OpenResty arms the read
-- timer when the read would block). And a changed timeout takes effect at
-- the next receive.
local helper = require "spec.helper"
local net = require "spec.support.net"
local cs = helper.cs

describe("regression: read timeout counted from the receive", function()
  after_each(helper.after_each)

  it("waits the whole timeout after a pause since the last data", function()
    net.run(function()
      local c, s = net.pair()
      c:settimeout(300)
      cs.thread.spawn(function() cs.sleep(0.02); s:send("a\n") end)
      assert.equal("a", c:receive()) -- parked, the event fired: re-armed
                                      -- by libevent to +300 ms from there
      cs.sleep(0.2)                   -- 200 ms of other work
      cs.update_time()
      local t0 = cs.now()
      local data, err = c:receive()
      cs.update_time()
      local waited = cs.now() - t0
      assert.same({ nil, "timeout" }, { data, err })
      assert.is_true(waited >= 0.28, "timed out after " .. waited .. " s")
      assert.is_true(waited < 1.0, "timed out after " .. waited .. " s")
      -- the socket stays usable, and the next timeout is whole again
      assert(s:send("b\n"))
      assert.equal("b", c:receive())
      c:close(); s:close()
    end, { timeout = 5 })
  end)

  it("applies a new timeout at the next receive", function()
    net.run(function()
      local c, s = net.pair()
      c:settimeout(5000)
      assert(s:send("a\n"))
      assert.equal("a", c:receive())
      c:settimeout(50)
      cs.update_time()
      local t0 = cs.now()
      assert.same({ nil, "timeout", "" }, { c:receive() })
      cs.update_time()
      assert.is_true(cs.now() - t0 < 1.0)
      c:settimeout(0) -- the default (60 s): data still arrives
      cs.thread.spawn(function() cs.sleep(0.05); s:send("b\n") end)
      assert.equal("b", c:receive())
      c:close(); s:close()
    end, { timeout = 5 })
  end)
end)
