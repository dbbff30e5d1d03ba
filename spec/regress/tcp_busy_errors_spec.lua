-- Bug (an OpenResty difference): every operation on a socket in use by
-- another thread said "socket busy", and receive/send while a connect was
-- in progress went ahead on the half-open socket. OpenResty checks, in
-- this order, "socket busy connecting", "socket busy reading", "socket
-- busy writing" (ngx_http_lua_socket_check_busy_* in
-- ngx_http_lua_socket_tcp.c: connect, receive, receiveany, the
-- receiveuntil iterator, send and setkeepalive).
-- Fixed (cs_tcp.c, cs_tcp_check_state and connect).
local helper = require "spec.helper"
local net = require "spec.support.net"
local cs = helper.cs

describe("regression: busy socket errors", function()
  after_each(helper.after_each)

  it("name the operation in progress", function()
    net.run(function()
      local port, done = net.full_listener()
      local s = cs.socket.tcp()
      local t = cs.thread.spawn(function()
        return s:connect("127.0.0.1", port)
      end)
      for _, call in ipairs({
        function() return s:connect("127.0.0.1", port) end,
        function() return s:send("x") end,
        function() return s:receive() end,
        function() return s:receiveany(1) end,
        function() return s:receiveuntil("x")() end,
        function() return s:setkeepalive() end,
      }) do
        assert.same({ nil, "socket busy connecting" }, { call() })
      end
      s:close()
      cs.thread.wait(t)
      done()

      local c, p = net.pair()
      local r = cs.thread.spawn(function() return c:receive() end)
      assert.same({ nil, "socket busy reading" }, { c:connect("127.0.0.1", 1) })
      assert.same({ nil, "socket busy reading" }, { c:setkeepalive() })
      c:close()
      cs.thread.wait(r)
      p:close()
    end)
  end)
end)
