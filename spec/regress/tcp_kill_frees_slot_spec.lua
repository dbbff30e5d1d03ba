-- Bug: a kill of a thread parked in a receive or a send closed the
-- socket's fd only. The rest of close() waited for the object's close()
-- or collection: the pool slot the connection held (connect's backlog
-- mode) stayed taken, so a connect waiting in the backlog, or a new one,
-- waited for it until its timeout; the pool went on counting the
-- connection; a TLS state stayed allocated. In OpenResty the kill's
-- cleanup finalizes the socket (ngx_http_lua_socket_tcp_finalize), and
-- the slot goes to the next connect at once.
-- Fixed (cs_tcp.c: receive and send park with cs_tcp_kill_cleanup, which
-- closes as close() does, as connect and sslhandshake already did).
local helper = require "spec.helper"
local net = require "spec.support.net"
local cs = helper.cs
local spawn, wait, kill = cs.thread.spawn, cs.thread.wait, cs.thread.kill

describe("regression: a kill in receive or send frees the pool slot",
         function()
  after_each(helper.after_each)

  for _, op in ipairs({ "receive", "send" }) do
    it(("in %s: a connect waiting in the backlog gets the slot at once")
       :format(op), function()
      net.run(function()
        local srv, port = net.listen()
        local peers = {}
        local acceptor = spawn(function()
          for i = 1, 2 do peers[i] = assert(srv:accept()) end
        end)
        local opts = { pool = "slot-" .. op, pool_size = 1, backlog = 1 }
        local a = spawn(function()
          local s = cs.socket.tcp()
          assert.equal(1, s:connect("127.0.0.1", port, opts))
          if op == "receive" then return s:receive() end
          -- a send that parks: the peer does not read
          return s:send(string.rep("x", net.big(16 * 1024 * 1024)))
        end)
        assert.is_true(net.wait_until(function()
          return net.parked_on(a) == "socket " .. (op == "receive"
                                                      and "read" or "write")
        end))
        local b = spawn(function()
          local s = cs.socket.tcp()
          s:settimeout(5000 * helper.slack)
          cs.update_time() -- (the loop's time is older: A made 16 MiB)
          local t0 = cs.now()
          local ok, err = s:connect("127.0.0.1", port, opts)
          s:close()
          return ok, err, cs.now() - t0
        end)
        assert.equal("connect backlog", net.parked_on(b))
        assert.equal(1, kill(a))
        local ok, res, err, dt = wait(b)
        assert.is_true(ok)
        assert.same({ 1, nil }, { res, err })
        assert.is_true(dt < 1, "waited " .. dt .. " s")
        assert.is_true(wait(acceptor))
        for _, p in ipairs(peers) do p:close() end
        srv:close()
      end)
    end)
  end
end)
