-- Bug (open when this file was written; the test marks itself pending while
-- it fails): a thread killed while parked on a socket operation has the
-- socket closed by cs_sock_cleanup -> cs_sock_close, which closes the fd but
-- leaves the TCP object's receive buffer as it was. Bytes that had already
-- been read from the old connection but not returned stayed there, and the
-- next connect() on the same object (fd < 0: no cs_tcp_close_conn) handed
-- them out as if the new peer had sent them.
-- Minimal reproducer:
--   the peer sends "line1\nSTALE\n" in one segment; c:receive() -> "line1"
--   ("STALE\n" stays buffered); a child thread parks in c:send(64 MB) and
--   is killed (c is closed); c:connect() to a new peer that sends "fresh\n";
--   c:receive() -> "STALE" instead of "fresh".
local helper = require "spec.helper"
local net = require "spec.support.net"
local cs = helper.cs

describe("regression: a socket closed by a kill, then connected again",
         function()
  after_each(helper.after_each)

  it("does not return data of the old connection", function()
    local got
    helper.run(function()
      local srv, port = net.listen()
      local peers = {}
      local acceptor = cs.thread.spawn(function()
        for i = 1, 2 do
          local s = assert(srv:accept())
          peers[i] = s
          s:send(i == 1 and "line1\nSTALE-FROM-CONN-1\n" or "fresh\n")
        end
      end)
      local c = cs.socket.tcp()
      assert(c:connect("127.0.0.1", port))
      assert.equal("line1", c:receive())
      local w = cs.thread.spawn(function()
        return c:send(("x"):rep(64 * 1024 * 1024))
      end)
      cs.sleep(0.05) -- w parks: the peer does not read
      assert.equal(1, cs.thread.kill(w))
      assert(c:connect("127.0.0.1", port))
      cs.thread.wait(acceptor)
      c:settimeout(1000)
      got = c:receive()
      c:close()
      for _, s in ipairs(peers) do s:close() end
      srv:close()
    end, { timeout = 10 })
    if got ~= "fresh" then
      pending("open bug (see the header of this file): got "
              .. tostring(got))
    end
  end)
end)
