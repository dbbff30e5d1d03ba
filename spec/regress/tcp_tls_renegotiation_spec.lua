-- Bug: a TLS operation that must wait for the other direction (a send
-- in the middle of a renegotiation the server started waits for the
-- server's handshake records: readability) took the other direction's
-- place. The sender became the socket's reader, in place of the thread
-- parked in receive: that thread was never woken by its data and got
-- "timeout" when its deadline came (or hung, without one), and with the
-- sender gone, a second reader found the socket free. A receive that must
-- write first (OpenSSL wants writability) said "socket busy writing" to
-- any send meanwhile. In OpenResty such waits are nginx's business
-- (ngx_ssl_handle_recv and ngx_ssl_write): the other direction stays free,
-- and its waiter is posted once the TLS layer moved.
-- Fixed (cs_socket.c: a parked operation keeps its role, reader or writer,
-- whatever readiness it waits for (s->cross); a TLS read or write that
-- went through wakes the other direction's thread waiting on it,
-- cs_sock_moved).
--
-- The peer (spec/support/tls_reneg_peer.c, built here with cc and
-- OpenSSL) is a TLS 1.2 server that sends a HelloRequest and then stays
-- silent for a while, so that a send started meanwhile waits for the
-- renegotiation.
local helper = require "spec.helper"
local net = require "spec.support.net"
local tls = require "spec.support.tls"
local cs = helper.cs
local spawn, wait, kill = cs.thread.spawn, cs.thread.wait, cs.thread.kill

local HERE = debug.getinfo(1, "S").source:match("^@(.*)/regress/[^/]*$")
local SILENCE_MS = 600

-- builds and starts the peer: its port, and the server record for
-- net.stop/net.remove; or nil and why not
local function start_peer()
  local ok, why = tls.available()
  if not ok then return nil, why end
  local cc = net.which("cc") or net.which("gcc")
  if not cc then return nil, "no C compiler (cc, gcc)" end
  local c = tls.certs()
  local srv = net.server_dir()
  local bin = srv.dir .. "/tls_reneg_peer"
  if not os.execute(("env -u LD_PRELOAD %s -O1 -o %s %s -lssl -lcrypto "
                     .. ">%s/cc.log 2>&1")
                    :format(cc, net.sh_quote(bin),
                            net.sh_quote(HERE .. "/support/tls_reneg_peer.c"),
                            net.sh_quote(srv.dir))) then
    net.remove(srv)
    return nil, "cannot build the peer (OpenSSL's headers: libssl-dev)"
  end
  net.spawn(srv, "peer", ("%s %s %s"):format(net.sh_quote(bin),
                                             net.sh_quote(c.server_crt),
                                             net.sh_quote(c.server_key)))
  local port
  for _ = 1, 500 do
    port = tonumber(net.server_log(srv):match("port (%d+)"))
    if port then return port, srv end
    os.execute("env -u LD_PRELOAD sleep 0.01")
  end
  net.stop(srv)
  net.remove(srv)
  return nil, "the peer did not start: " .. net.server_log(srv)
end

local port, srv = start_peer()

-- a verified TLS connection to the peer whose next read brings a
-- HelloRequest: the line that asks for it is sent
local function connect()
  local s = cs.socket.tcp()
  s:settimeout(5000 * helper.slack)
  assert(s:connect("127.0.0.1", port))
  assert(s:sslhandshake(false, "localhost", false))
  assert(s:send(("reneg %d\n"):format(SILENCE_MS)))
  return s
end

-- the reader, parked in receive, takes the HelloRequest and answers it
-- (its ClientHello goes out; it parks again for the server's answer);
-- then a send starts and waits for the renegotiation
local function reader_then_sender(s, line)
  local r = spawn(function() return s:receive() end)
  cs.sleep(0.1) -- the HelloRequest comes at once; the peer stays silent
  local w = spawn(function() return s:send(line) end)
  assert.equal("socket read", net.parked_on(r))
  assert.equal("socket write", net.parked_on(w))
  return r, w
end

local describe_if = port and describe or function(title)
  describe(title, function() pending("skipped: " .. srv) end)
end

describe_if("regression: TLS operations waiting for the other direction",
            function()
  after_each(helper.after_each)
  teardown(function()
    if port then
      net.stop(srv)
      net.remove(srv)
    end
  end)

  it("a send in a renegotiation leaves the parked receive its data",
     function()
    net.run(function()
      local s = connect()
      local t0 = cs.now()
      local r, w = reader_then_sender(s, "from the sender\n")
      -- the socket is busy both ways, each with its own thread
      assert.same({ nil, "socket busy reading" }, { s:receive() })
      assert.same({ nil, "socket busy writing" }, { s:send("x") })
      assert.same({ true, 16 }, { wait(w) })
      -- the receive got the answer, not its timeout (5 s; it got
      -- "timeout" before the fix)
      assert.same({ true, "echo:1:from the sender" }, { wait(r) })
      assert.is_true(cs.now() - t0 < 4 * helper.slack)
      assert.equal(1, s:close())
    end)
  end)

  it("a second reader meanwhile still gets \"socket busy reading\"",
     function()
    net.run(function()
      local s = connect()
      local r, w = reader_then_sender(s, "two\n")
      local r2 = spawn(function() return s:receive() end)
      assert.same({ true, nil, "socket busy reading" }, { wait(r2) })
      assert.same({ true, 4 }, { wait(w) })
      assert.same({ true, "echo:1:two" }, { wait(r) })
      assert.equal(1, s:close())
    end)
  end)

  -- a kill of either closes the socket: the other gets "closed"
  for _, victim in ipairs({ "sender", "receive" }) do
    it(("a kill of the %s closes the socket"):format(victim), function()
      net.run(function()
        local s = connect()
        local r, w = reader_then_sender(s, "killed\n")
        local other = victim == "sender" and r or w
        assert.equal(1, kill(victim == "sender" and w or r))
        local res = { wait(other) }
        assert.same({ true, nil, "closed" }, { res[1], res[2], res[3] })
        assert.same({ nil, "closed" }, { s:send("x") })
        s:close()
      end)
    end)
  end

  it("a send in a renegotiation with no reader, then a receive", function()
    net.run(function()
      local s = connect()
      s:settimeout(100) -- the HelloRequest is answered, then the wait ends
      assert.same({ nil, "timeout", "" }, { s:receive() })
      s:settimeout(5000 * helper.slack)
      assert.equal(6, s:send("alone\n"))
      assert.equal("echo:1:alone", s:receive())
      assert.equal(1, s:close())
    end)
  end)
end)
