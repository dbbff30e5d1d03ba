-- Bug (an OpenResty difference): after an I/O error had closed the socket
-- (the peer's close, a reset, a send error or timeout, "line too long"),
-- close() said nil, "closed"; and receive("*a") closed the socket when it
-- met the peer's FIN, so close() said "closed" after a successful read and
-- nothing could be sent back on a half-closed connection. In OpenResty an
-- error closes only one half and close() returns 1 (t/058-tcp-socket.t
-- TEST 1, 2: "close: 1 nil" after "failed to receive a line: closed";
-- TEST 11: after receive("*a")); "*a" keeps the socket open.
-- Fixed (cs_tcp.c): cs_tcp_close_on_error() marks the socket, close()
-- returns 1 once; "*a" keeps the connection (u->eof: a second "*a" gives
-- "", setkeepalive "closed"). A send error ends only the write half
-- (cs_tcp_write_failed, as OpenResty); a read error closes the whole
-- socket, so that a send after it says "closed" (API.md), where OpenResty
-- 0.10.x ends the read half only (cs_tcp_read_failed).
local helper = require "spec.helper"
local net = require "spec.support.net"
local cs = helper.cs

describe("regression: close() after an error closed the socket", function()
  after_each(helper.after_each)

  it("returns 1 once, then nil, \"closed\"", function()
    net.run(function()
      local c, s = net.pair()
      assert(s:send("abc"))
      s:close()
      assert.same({ nil, "closed", "abc" }, { c:receive() })
      -- the socket is closed (API.md; OpenResty sends the "x")
      assert.same({ nil, "closed" }, { c:receive() })
      assert.same({ nil, "closed" }, { c:send("x") })
      assert.equal(1, c:close())
      assert.same({ nil, "closed" }, { c:close() })
    end)
  end)

  it("receive(\"*a\") keeps the connection: the FIN ends the read, "
     .. "sending still works", function()
    net.run(function()
      local c, s = net.pair()
      assert(s:send("request"))
      s:close()
      assert.equal("request", c:receive("*a"))
      assert.equal("", c:receive("*a")) -- the FIN again
      -- not "closed": the send is tried (in the short-I/O mode its
      -- second byte meets the peer's RST)
      local sent, err = c:send("reply")
      assert.truthy(sent == 5 or (err ~= "closed" and err), err)
      assert.equal("closed", select(2, c:receive()))
      -- 1 while the write half is open; after a failed send both halves
      -- are over and the socket is closed already
      assert.equal(sent and 1 or nil, c:close())
    end)
  end)
end)
