-- Bug (an OpenResty difference): setkeepalive() said "connection in
-- dubious state" for data left in the socket's own buffer, and for data
-- or a FIN waiting in the kernel it also kept the socket open (or said
-- "invalid connection"). OpenResty (ngx_http_lua_socket_tcp_setkeepalive,
-- t/068-socket-keepalive.t TEST 5, 6): data in the cosocket buffer is
-- nil, "unread data in buffer" and the socket stays as it is; data (or a
-- an error) in the kernel is nil, "connection in dubious state" and the
-- connection is closed (the keepalive close handler); once the peer has
-- closed it is nil, "closed" (lua-nginx-module 0.10.21+, see spec/12).
-- Fixed (cs_tcp.c, cs_tcp_setkeepalive).
local helper = require "spec.helper"
local net = require "spec.support.net"
local cs = helper.cs

describe("regression: setkeepalive with unread data", function()
  after_each(helper.after_each)

  local it_buffered = net.short_io and pending or it

  it_buffered("in the buffer: nil, \"unread data in buffer\", the socket "
              .. "stays usable", function()
    net.run(function()
      local c, s = net.pair()
      assert(s:send("abcdef"))
      assert.equal("ab", c:receive(2))
      assert.same({ nil, "unread data in buffer" }, { c:setkeepalive() })
      assert.equal("cdef", c:receive(4))
      c:close(); s:close()
    end)
  end)

  it("in the kernel: nil, \"connection in dubious state\", closed",
     function()
    net.run(function()
      local c, s = net.pair()
      s:setoption("tcp-nodelay", true)
      assert(s:send("late"))
      cs.sleep(0.02)
      assert.same({ nil, "connection in dubious state" },
                  { c:setkeepalive() })
      assert.same({ nil, "closed" }, { c:receive() })
      s:close()
    end)
  end)
end)
