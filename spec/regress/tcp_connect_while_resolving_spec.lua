-- Bug: while a light thread's connect() was resolving a host name, the
-- socket looked idle: a connect() from another thread started a second
-- connection on the same object (OpenResty: "socket busy connecting"), and
-- when the first name resolved, its connection overwrote the second one's
-- fd, which was never closed (a leaked fd and a wrong cs.stats().sockets).
-- close() from another thread said "closed" and let the resolution go on
-- to connect the socket the user had just closed.
-- Fixed (cs_socket.c cs_dns_set_owner/cs_dns_cancel, cs_tcp.c): the socket
-- knows its pending query (u->dns, cleared when the query is consumed,
-- killed or cancelled); connect() says "socket busy connecting", and
-- close() gives the query up and wakes the thread with nil, "closed".
local helper = require "spec.helper"
local net = require "spec.support.net"
local cs = helper.cs

describe("regression: connect() while another thread resolves a name",
         function()
  after_each(helper.after_each)

  it("says \"socket busy connecting\"", function()
    net.run(function()
      local s = cs.socket.tcp()
      local t = cs.thread.spawn(function()
        return s:connect("no-such-host.invalid", 80)
      end)
      if net.parked_on(t) ~= "dns" then return cs.thread.wait(t) end
      local port = net.serve(function() end)
      local fds = helper.fds()
      assert.same({ nil, "socket busy connecting" },
                  { s:connect("127.0.0.1", port) })
      assert.equal(fds, helper.fds())
      local _, ok = cs.thread.wait(t)
      assert.is_nil(ok)
      assert(s:connect("127.0.0.1", port))
      s:close()
    end)
  end)

  it("close() wakes the resolving thread with nil, \"closed\"", function()
    net.run(function()
      local s = cs.socket.tcp()
      local t = cs.thread.spawn(function()
        return s:connect("no-such-host.invalid", 80)
      end)
      if net.parked_on(t) ~= "dns" then return cs.thread.wait(t) end
      assert.equal(1, s:close())
      assert.same({ true, nil, "closed" }, { cs.thread.wait(t) })
      assert.equal(0, cs.stats().pending_io)
      assert.same({ nil, "closed" }, { s:send("x") })
    end)
  end)
end)
