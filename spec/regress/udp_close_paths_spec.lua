-- Bugs (found by spec/21's UDP model):
--  * a kill of a thread parked in a UDP receive closed the fd but not the
--    rest of the socket, as close() does: a unix path it was bound to
--    stayed on disk (binding it again failed), and a connected one went on
--    saying "socket is connected" to sendto;
--  * a receive woken by its datagram and not yet run, on a socket another
--    thread then closed and used again with sendto (a new fd), parked again
--    on that fd and returned "timeout" instead of "closed";
--  * a bound socket keeps its fd across setpeername, and with it the old
--    peer's ICMP error: after sending to a closed port and setpeername to a
--    live peer, the next send said "connection refused" and was lost (in
--    OpenResty each peer has a new socket).
-- Fixed (cs_udp.c: a killed receive's cleanup closes as close() does, a
-- receive checks the socket's generation when it resumes, and setpeername
-- on a bound fd clears its pending error).
local helper = require "spec.helper"
local net = require "spec.support.net"
local cs = helper.cs
local spawn, wait, kill = cs.thread.spawn, cs.thread.wait, cs.thread.kill
local udp = cs.socket.udp

local function bound()
  local s = udp()
  assert.equal(1, s:bind("127.0.0.1", 0))
  return s
end

describe("regression: UDP close paths", function()
  after_each(helper.after_each)

  it("a kill in receive removes the unix path the socket was bound to",
     function()
    helper.run(function()
      local path = net.unix_path()
      local r = udp()
      assert.equal(1, r:bind("unix:" .. path))
      local t = spawn(function() return r:receive() end)
      assert.equal(1, kill(t))
      assert.is_false(net.exists(path))
      assert.same({ nil, "closed" }, { r:receive() })
      local again = udp()
      assert.equal(1, again:bind("unix:" .. path))
      assert.equal(1, again:close())
      assert.is_false(net.exists(path))
    end)
  end)

  it("a kill in receive forgets the peer: sendto then works, as after "
     .. "close()", function()
    helper.run(function()
      local srv = bound()
      local h, p = srv:getsockname()
      local a = udp()
      assert.equal(1, a:setpeername(h, p))
      local t = spawn(function() return a:receive() end)
      assert.equal(1, kill(t))
      assert.same({ nil, "closed" }, { a:getpeername() })
      assert.equal(1, a:sendto("x", h, p))
      assert.equal("x", srv:receive())
      a:close()
      srv:close()
    end)
  end)

  it("a receive woken and not yet run: \"closed\" after a close and a "
     .. "sendto in between", function()
    helper.run(function()
      local x, r = bound(), bound()
      local xh, xp = x:getsockname()
      local tx, tr = udp(), udp()
      assert.equal(1, tx:setpeername(xh, xp))
      assert.equal(1, tr:setpeername(r:getsockname()))
      r:settimeout(2000)
      local t
      local closer = spawn(function()
        assert.equal("to x", x:receive()) -- woken first, in the same turn
        assert.equal("ready", cs.dump():match(
          tostring(t):match("0x%x+") .. ": (%a+)"))
        assert.equal(1, r:close())
        assert.equal(1, r:sendto("hi", xh, xp)) -- a new socket
      end)
      t = spawn(function() return r:receive() end)
      assert.equal(1, tx:send("to x"))
      assert.equal(1, tr:send("to r"))
      local t0 = cs.now()
      assert.same({ true, nil, "closed" }, { wait(t) })
      assert.is_true(cs.now() - t0 < 1)
      assert.is_true(wait(closer))
      assert.equal("hi", x:receive())
      for _, s in ipairs({ x, r, tx, tr }) do s:close() end
    end)
  end)

  it("setpeername on a bound socket drops the old peer's error", function()
    helper.run(function()
      local dead = bound()
      local dh, dp = dead:getsockname()
      dead:close()
      local live, s = bound(), bound()
      assert.equal(1, s:setpeername(dh, dp))
      assert.equal(1, s:send("a"))
      cs.sleep(0.02) -- the port unreachable comes back
      assert.equal(1, s:setpeername(live:getsockname()))
      assert.equal(1, s:send("b"))
      live:settimeout(1000)
      assert.equal("b", live:receive())
      -- without setpeername, the error is reported as before
      local s2 = bound()
      assert.equal(1, s2:setpeername(dh, dp))
      assert.equal(1, s2:send("a"))
      cs.sleep(0.02)
      s2:settimeout(1000)
      assert.same({ nil, "connection refused" }, { s2:receive() })
      for _, o in ipairs({ live, s, s2 }) do o:close() end
    end)
  end)
end)
