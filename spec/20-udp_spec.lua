-- The UDP cosocket, cs.socket.udp() (API.md "Sockets", the UDP paragraph;
-- lua-nginx-module's ngx.socket.udp and udpsock:* in its README, and
-- src/ngx_http_lua_socket_udp.c for the exact return values and strings).
-- Every peer is a corosched UDP socket on the loopback interface (or a unix
-- datagram socket in a temporary directory): no fixed ports, no network.
local helper = require "spec.helper"
local cs = helper.cs
local spawn, wait, kill = cs.thread.spawn, cs.thread.wait, cs.thread.kill
local clock = helper.clock
local udp = cs.socket.udp

-- a socket bound to 127.0.0.1 on a port the kernel picks
local function server(host)
  local s = udp()
  assert.equal(1, s:bind(host or "127.0.0.1", 0))
  return s, s:getsockname()
end

-- a server, and a client whose peer is the server; the server's peer is
-- the client, so either can send to the other
local function pair(host)
  local srv, h, p = server(host)
  local c = udp()
  assert.equal(1, c:setpeername(h, p))
  assert.equal(1, srv:setpeername(c:getsockname()))
  return srv, c
end

local function close_all(...)
  for i = 1, select("#", ...) do
    local s = select(i, ...)
    s:close()
  end
end

-- a fresh path for a unix socket (the file does not exist)
local function tmp_path()
  local p = os.tmpname()
  os.remove(p)
  return p
end

local function exists(path)
  local ok = os.rename(path, path)
  return ok == true
end

-- a name nobody can resolve that no cache has seen: resolving it parks
-- the thread until a name server answers (or skips the test without one)
local function unknown_name()
  return ("cs-udp-%d-%d.invalid"):format(os.time(), math.random(1e9))
end


describe("cs.socket.udp", function()
  after_each(helper.after_each)

  it("creates a closed socket object", function()
    local s = udp()
    assert.equal("userdata", type(s))
    assert.matches("^corosched%.udp %(closed%): ", tostring(s))
    for _, m in ipairs({ "setpeername", "bind", "send", "receive",
                         "settimeout", "close", "getsockname",
                         "getpeername" }) do
      assert.equal("function", type(s[m]), m)
    end
    assert.has_error(function() udp(1) end,
                     "expecting zero arguments, but got 1")
  end)

  it("binds to 127.0.0.1 port 0; getsockname gives the address", function()
    helper.run(function()
      local s = udp()
      assert.equal(1, s:bind("127.0.0.1", 0))
      local h, p = s:getsockname()
      assert.equal("127.0.0.1", h)
      assert.is_true(math.type(p) == "integer" and p > 0 and p < 65536)
      assert.matches("^corosched%.udp %(fd %d+%): ", tostring(s))
      assert.equal(1, cs.stats().sockets)
      assert.equal(1, s:close())
      assert.equal(0, cs.stats().sockets)
    end)
  end)

  it("bind takes '*', 'localhost', no port, and unix paths", function()
    helper.run(function()
      local a, b, c = udp(), udp(), udp()
      assert.equal(1, a:bind("*"))
      assert.equal("0.0.0.0", (a:getsockname()))
      assert.equal(1, b:bind("localhost"))
      assert.equal("127.0.0.1", (b:getsockname()))
      assert.is_true(select(2, b:getsockname()) > 0)
      local path = tmp_path()
      assert.equal(1, c:bind("unix:" .. path))
      assert.equal("unix:" .. path, c:getsockname())
      assert.is_true(exists(path))
      close_all(a, b, c)
      assert.is_false(exists(path)) -- close removes the file it bound
    end)
  end)

  it("sends and receives datagrams both ways", function()
    helper.run(function()
      local srv, c = pair()
      assert.equal(1, c:send("hello"))
      assert.equal("hello", srv:receive())
      assert.equal(1, srv:send("world"))
      assert.equal("world", c:receive())
      local sh, sp = srv:getsockname()
      local ph, pp = c:getpeername()
      assert.equal(sh, ph)
      assert.equal(sp, pp)
      close_all(srv, c)
    end)
  end)

  it("keeps datagram boundaries and order", function()
    helper.run(function()
      local srv, c = pair()
      for i = 1, 100 do
        assert.equal(1, c:send(("x"):rep(i)))
      end
      for i = 1, 100 do
        assert.equal(("x"):rep(i), srv:receive())
      end
      assert.equal(1, c:send(""))
      assert.equal("", srv:receive()) -- an empty datagram
      close_all(srv, c)
    end)
  end)

  it("a bound socket without a peer receives from anyone", function()
    helper.run(function()
      local srv, h, p = server()
      local a, b = udp(), udp()
      assert.equal(1, a:setpeername(h, p))
      assert.equal(1, b:setpeername(h, p))
      a:send("from a")
      b:send("from b")
      local got = { srv:receive(), srv:receive() }
      table.sort(got)
      assert.same({ "from a", "from b" }, got)
      -- but it has nobody to send to
      assert.same({ nil, "closed" }, { srv:send("x") })
      close_all(srv, a, b)
    end)
  end)

  it("receive parks until a datagram comes", function()
    helper.run(function()
      local srv, c = pair()
      local t = spawn(function() return srv:receive() end)
      assert.equal("running", coroutine.status(t)) -- parked
      assert.matches("udp receive", cs.dump())
      cs.sleep(0.02)
      c:send("late")
      assert.same({ true, "late" }, { wait(t) })
      close_all(srv, c)
    end)
  end)

  it("receive works inside a user coroutine", function()
    helper.run(function()
      local srv, c = pair()
      local gen = coroutine.wrap(function()
        for _ = 1, 3 do coroutine.yield(srv:receive()) end
      end)
      spawn(function()
        for i = 1, 3 do cs.sleep(0.005) c:send("d" .. i) end
      end)
      assert.equal("d1", gen())
      assert.equal("d2", gen())
      assert.equal("d3", gen())
      close_all(srv, c)
    end)
  end)

  describe("setpeername", function()
    it("returns 1 and gives a new socket for each peer", function()
      helper.run(function()
        local a, ah, ap = server()
        local b, bh, bp = server()
        local c = udp()
        assert.equal(1, c:setpeername(ah, ap))
        c:send("to a")
        assert.equal("to a", a:receive())
        assert.equal(1, c:setpeername(bh, bp)) -- the old one is closed
        assert.equal(1, cs.stats().sockets - 2)
        assert.same({ bh, bp }, { c:getpeername() })
        c:send("to b")
        assert.equal("to b", b:receive())
        a:settimeout(30)
        assert.same({ nil, "timeout" }, { a:receive() })
        close_all(a, b, c)
      end)
    end)

    it("keeps the address bind() gave the socket", function()
      helper.run(function()
        local a, ah, ap = server()
        local b, bh, bp = server()
        local c = udp()
        assert.equal(1, c:bind("127.0.0.1", 0))
        local mine = select(2, c:getsockname())
        assert.equal(1, c:setpeername(ah, ap))
        assert.equal(mine, select(2, c:getsockname()))
        assert.equal(1, c:setpeername("localhost", ap)) -- resolved
        assert.equal(mine, select(2, c:getsockname()))
        assert.equal(1, c:setpeername(bh, bp))
        assert.equal(mine, select(2, c:getsockname()))
        c:send("x")
        assert.equal("x", b:receive())
        -- and b can answer to that address
        assert.equal(1, b:setpeername("127.0.0.1", mine))
        b:send("y")
        assert.equal("y", c:receive())
        close_all(a, b, c)
      end)
    end)

    it("resolves host names (localhost)", function()
      helper.run(function()
        local srv, _, p = server()
        local c = udp()
        assert.equal(1, c:setpeername("localhost", p))
        assert.equal("127.0.0.1", (c:getpeername()))
        c:send("by name")
        assert.equal("by name", srv:receive())
        close_all(srv, c)
      end)
    end)

    it("works with IPv6 literals", function()
      local probe = udp()
      local ok = probe:bind("::1", 0)
      probe:close()
      if not ok then
        pending("no IPv6 loopback here")
        return
      end
      helper.run(function()
        local srv, h, p = server("::1")
        assert.equal("::1", h)
        local c = udp()
        assert.equal(1, c:setpeername("[::1]", p))
        c:send("six")
        assert.equal("six", srv:receive())
        assert.equal(1, c:setpeername("[::1]:" .. p, 1)) -- its port wins
        c:send("again")
        assert.equal("again", srv:receive())
        close_all(srv, c)
      end)
    end)

    it("returns the errors OpenResty returns", function()
      helper.run(function()
        local s = udp()
        -- as OpenResty (recorded in spec/59): no port is port 0
        assert.same({ 1 }, { s:setpeername("127.0.0.1") })
        assert.same({ nil, "bad port number: 65536" },
                    { s:setpeername("127.0.0.1", 65536) })
        assert.same({ nil, "bad port number: -1" },
                    { s:setpeername("127.0.0.1", -1) })
        assert.same({ nil, 'failed to parse host name "[::1": invalid host' },
                    { s:setpeername("[::1", 53) })
        assert.same({ nil, 'failed to parse host name "::1": invalid port' },
                    { s:setpeername("::1", 53) })
        assert.same({ nil, 'failed to parse host name "a"' }, -- C string
                    { s:setpeername("a\0b", 53) })
        assert.same({ nil, 'failed to parse host name "unix:": no path '
                           .. "in the unix domain socket" },
                    { s:setpeername("unix:") })
        assert.same({ nil, 'failed to parse host name "unix:/'
                           .. ("x"):rep(200) .. '": too long path in the '
                           .. "unix domain socket" },
                    { s:setpeername("unix:/" .. ("x"):rep(200)) })
        assert.same({ nil, 'failed to parse host name "unix:/a"' },
                    { s:setpeername("unix:/a\0b") })
        assert.same({ nil, "no such file or directory" },
                    { s:setpeername("unix:" .. tmp_path()) })
        assert.equal(0, cs.stats().sockets) -- nothing left open
        assert.same({ nil, "closed" }, { s:close() })
      end)
    end)

    it("reports names that cannot be resolved", function()
      helper.run(function()
        local s = udp()
        local ok, err = s:setpeername(unknown_name(), 53)
        assert.is_nil(ok)
        assert.matches("^cs%-udp%-%d+%-%d+%.invalid could not be resolved "
                       .. "%(%d+: .+%)$", err)
        assert.same({ nil, "closed" }, { s:send("x") })
      end)
    end)

    it("a kill while resolving leaves the socket usable", function()
      helper.run(function()
        local srv, h, p = server()
        local s = udp()
        local t = spawn(function() return s:setpeername(unknown_name(), 1) end)
        if coroutine.status(t) ~= "running" then -- answered at once
          wait(t)
          srv:close()
          return
        end
        assert.matches("dns", cs.dump())
        assert.same({ nil, "socket busy" }, { s:setpeername(h, p) })
        assert.same({ nil, "socket busy" }, { s:bind("127.0.0.1", 0) })
        assert.equal(1, kill(t))
        assert.equal(1, s:setpeername(h, p))
        s:send("after")
        assert.equal("after", srv:receive())
        close_all(srv, s)
      end)
    end)

    it("close while resolving makes setpeername return 'closed'", function()
      helper.run(function()
        local s = udp()
        local t = spawn(function() return s:setpeername(unknown_name(), 1) end)
        if coroutine.status(t) ~= "running" then
          wait(t)
          return
        end
        assert.equal(1, s:close())
        assert.same({ nil, "closed" }, { s:close() })
        -- the name server answers soon on most machines; do not wait long
        local dog = spawn(function() cs.sleep(2) return "dog" end)
        local ok, a, b = wait(t, dog)
        if a == "dog" then
          kill(t)
        else
          assert.same({ true, nil, "closed" }, { ok, a, b })
          kill(dog)
        end
        assert.equal(0, cs.stats().sockets)
      end)
    end)

    it("raises on wrong argument types and counts", function()
      helper.run(function()
        local s = udp()
        assert.has_error(function() s:setpeername() end)
        assert.has_error(function() s:setpeername({}, 53) end)
        assert.has_error(function() s:setpeername("127.0.0.1", "x") end)
        assert.has_error(function() s:setpeername("127.0.0.1", nil) end,
                         "bad argument #2 to 'setpeername' (number expected, "
                         .. "got nil)")
        assert.has_error(function() s:setpeername("127.0.0.1", {}) end)
        assert.has_error(function() s:setpeername("127.0.0.1", 53, 1) end,
                         "ngx.socket.udp setpeername: expecting 2 or 3 "
                         .. "arguments (including the object), but seen 4")
        assert.has_error(function() s.setpeername(nil, "127.0.0.1", 53) end)
        assert.has_error(function() s.setpeername({}, "127.0.0.1", 53) end)
      end)
    end)

    it("raises outside a light thread only when it must resolve", function()
      local srv = udp()
      srv:bind("127.0.0.1", 0)
      local _, p = srv:getsockname()
      local s = udp()
      assert.equal(1, s:setpeername("127.0.0.1", p)) -- no loop needed
      assert.equal(1, s:send("before the loop"))
      assert.has_error(function() s:setpeername("localhost", p) end,
                       "corosched: setpeername: no running loop (call it "
                       .. "inside cs.run)")
      assert.has_error(function() srv:receive() end,
                       "corosched: receive: no running loop (call it "
                       .. "inside cs.run)")
      helper.run(function()
        assert.equal("before the loop", srv:receive())
        close_all(srv, s)
      end)
    end)
  end)

  describe("bind", function()
    it("returns the errors of the system", function()
      helper.run(function()
        local a, _, p = server()
        local b = udp()
        assert.same({ nil, "address already in use" },
                    { b:bind("127.0.0.1", p) })
        assert.equal(0, cs.stats().sockets - 1) -- b stays closed
        assert.same({ nil, "invalid argument" }, -- bound already
                    { a:bind("127.0.0.1", 0) })
        assert.same({ nil, "bad address" }, { b:bind("example.com", 0) })
        assert.same({ nil, "bad port number: 70000" },
                    { b:bind("127.0.0.1", 70000) })
        assert.same({ nil, 'failed to parse host name "unix:": no path in '
                           .. "the unix domain socket" },
                    { b:bind("unix:") })
        assert.same({ nil, "no such file or directory" },
                    { b:bind("unix:/nonexistent-dir/x.sock") })
        assert.has_error(function() b:bind() end)
        assert.has_error(function() b:bind({}) end)
        assert.has_error(function() b:bind("127.0.0.1", "x") end)
        close_all(a)
      end)
    end)
  end)

  describe("send", function()
    it("flattens nested arrays of strings and numbers", function()
      helper.run(function()
        local srv, c = pair()
        assert.equal(1, c:send({ "a", { "b", 1, { 2.5 } }, "c" }))
        assert.equal("ab12.5c", srv:receive())
        assert.equal(1, c:send({}))
        assert.equal("", srv:receive())
        assert.equal(1, c:send({ {}, { { "deep" } } }))
        assert.equal("deep", srv:receive())
        local big = {}
        for i = 1, 1000 do big[i] = ("%04d"):format(i) end
        assert.equal(1, c:send(big))
        assert.equal(table.concat(big), srv:receive())
        close_all(srv, c)
      end)
    end)

    it("sends numbers, booleans and nil as OpenResty does", function()
      helper.run(function()
        local srv, c = pair()
        for _, case in ipairs({ { 42, "42" }, { -1.5, "-1.5" },
                                { 10.0, "10" }, { { 2.0, 1e15 }, "21e+15" },
                                { true, "true" }, { false, "false" } }) do
          assert.equal(1, c:send(case[1]))
          assert.equal(case[2], srv:receive())
        end
        assert.equal(1, c:send(nil))
        assert.equal("nil", srv:receive())
        close_all(srv, c)
      end)
    end)

    it("raises on data it cannot send", function()
      helper.run(function()
        local srv, c = pair()
        assert.has_error(function() c:send() end,
                         "expecting 2 arguments (including the object), "
                         .. "but got 1")
        assert.has_error(function() c:send("a", "b") end)
        assert.has_error(function() c:send(print) end,
                         "bad argument #1 to 'send' (string, number, "
                         .. "boolean, nil, or array table expected, got "
                         .. "function)")
        assert.has_error(function() c:send({ "a", true }) end,
                         "bad argument #1 to 'send' (bad data type "
                         .. "boolean found)")
        assert.has_error(function() c:send({ "a", nil, "c" }) end,
                         "bad argument #1 to 'send' (bad data type nil "
                         .. "found)")
        assert.has_error(function() c:send({ a = "x" }) end,
                         "bad argument #1 to 'send' (non-array table "
                         .. "found)")
        local loop = {}
        loop[1] = loop
        assert.has_error(function() c:send(loop) end)
        assert.has_error(function() c.send(nil, "x") end)
        -- nothing was sent
        srv:settimeout(20)
        assert.same({ nil, "timeout" }, { srv:receive() })
        close_all(srv, c)
      end)
    end)

    it("says 'message too long' for a datagram over the limit", function()
      helper.run(function()
        local srv, c = pair()
        assert.same({ nil, "message too long" }, { c:send(("x"):rep(70000)) })
        assert.equal(1, c:send("still usable"))
        assert.equal("still usable", srv:receive())
        close_all(srv, c)
      end)
    end)
  end)

  describe("receive", function()
    it("takes a size: 65536 by default and at most (OpenResty's, which "
       .. "its README gives as 8192)", function()
      helper.run(function()
        local srv, c = pair()
        c:send(("a"):rep(10000))
        assert.equal(10000, #srv:receive())
        c:send(("a"):rep(10000))
        assert.equal(8192, #srv:receive(8192)) -- the rest is discarded
        c:send("hello")
        assert.equal("hel", srv:receive(3))
        c:send("hello")
        assert.equal("hello", srv:receive("10")) -- a numeric string
        c:send("hello")
        assert.equal("", srv:receive(0)) -- consumes the datagram
        c:send(("b"):rep(20000))
        assert.equal(20000, #srv:receive(100000))
        c:send(("c"):rep(65507))
        assert.equal(65507, #srv:receive(1e9))
        c:send("next")
        assert.equal("next", srv:receive(nil))
        -- OpenResty casts the size to unsigned: a negative one is the most
        c:send("neg")
        assert.equal("neg", srv:receive(-1))
        c:send("nan")
        assert.equal("nan", srv:receive(0 / 0))
        close_all(srv, c)
      end)
    end)

    it("raises on a bad size or argument count", function()
      helper.run(function()
        local srv, c = pair()
        assert.has_error(function() srv:receive("x") end)
        assert.has_error(function() srv:receive({}) end)
        assert.has_error(function() srv:receive(1, 2) end,
                         "expecting 1 or 2 arguments (including the "
                         .. "object), but got 3")
        assert.has_error(function() srv.receive(nil) end)
        close_all(srv, c)
      end)
    end)

    it("times out with nil, 'timeout' and stays usable", function()
      helper.run(function()
        local srv, c = pair()
        c:settimeout(50)
        local t0 = clock()
        assert.same({ nil, "timeout" }, { c:receive() })
        local dt = clock() - t0
        assert.is_true(dt >= 0.045, "timed out after " .. dt)
        assert.is_true(dt < 0.5 * helper.slack, "timed out after " .. dt)
        srv:send("after the timeout")
        assert.equal("after the timeout", c:receive())
        assert.equal(1, c:send("and back"))
        assert.equal("and back", srv:receive())
        assert.same({ nil, "timeout" }, { c:receive() })
        close_all(srv, c)
      end)
    end)

    it("re-arms the timeout for each receive", function()
      helper.run(function()
        local srv, c = pair()
        -- 4 receives of 0.04 s each (scaled for slow runs) outlast the
        -- timeout of one: it must start again at each
        local step = 0.04 * helper.slack
        c:settimeout(step * 2000)
        spawn(function()
          for i = 1, 4 do cs.sleep(step) srv:send("tick" .. i) end
        end)
        for i = 1, 4 do assert.equal("tick" .. i, c:receive()) end
        close_all(srv, c)
      end)
    end)

    it("says 'connection refused' after an ICMP port unreachable",
       function()
      helper.run(function()
        local dead, h, p = server()
        dead:close() -- nobody listens on p now
        local c = udp()
        c:settimeout(1000)
        assert.equal(1, c:setpeername(h, p))
        assert.equal(1, c:send("anyone?"))
        assert.same({ nil, "connection refused" }, { c:receive() })
        -- the socket is still open and connected
        assert.same({ h, p }, { c:getpeername() })
        c:settimeout(20)
        assert.same({ nil, "timeout" }, { c:receive() })
        -- and can talk to a live peer
        local srv, sh, sp = server()
        assert.equal(1, c:setpeername(sh, sp))
        c:send("alive")
        assert.equal("alive", srv:receive())
        close_all(srv, c)
      end)
    end)

    it("a second receive says 'socket busy'; send still works", function()
      helper.run(function()
        local srv, c = pair()
        local t = spawn(function() return c:receive() end)
        assert.same({ nil, "socket busy" }, { c:receive() })
        assert.same({ nil, "socket busy" }, { c:setpeername("127.0.0.1", 1) })
        assert.same({ nil, "socket busy" }, { c:bind("127.0.0.1", 0) })
        assert.equal(1, c:send("ping")) -- not busy: OpenResty would be
        assert.equal("ping", srv:receive())
        srv:send("pong")
        assert.same({ true, "pong" }, { wait(t) })
        close_all(srv, c)
      end)
    end)

    it("close from another thread wakes the receiver with 'closed'",
       function()
      helper.run(function()
        local srv, c = pair()
        local t = spawn(function() return c:receive() end)
        local t2 = spawn(function() return srv:receive() end)
        assert.equal(1, c:close())
        assert.same({ true, nil, "closed" }, { wait(t) })
        assert.same({ nil, "closed" }, { c:close() })
        assert.same({ nil, "closed" }, { c:receive() })
        assert.same({ nil, "closed" }, { c:send("x") })
        assert.equal(1, srv:close())
        assert.same({ true, nil, "closed" }, { wait(t2) })
      end)
    end)

    it("a closed socket can be used again", function()
      helper.run(function()
        local srv, h, p = server()
        local c = udp()
        c:setpeername(h, p)
        c:close()
        assert.equal(1, c:setpeername(h, p))
        c:send("again")
        assert.equal("again", srv:receive())
        close_all(srv, c)
      end)
    end)
  end)

  describe("kill", function()
    it("of a thread parked in receive closes the socket, no fd leaks",
       function()
      local before
      helper.run(function()
        before = helper.fds() -- the loop's own fds are open by now
        local s = udp()
        s:bind("127.0.0.1", 0)
        local t = spawn(function() return s:receive() end)
        assert.equal(before + 1, helper.fds())
        assert.equal(1, kill(t))
        assert.equal(0, cs.stats().sockets)
        assert.equal(before, helper.fds())
        assert.same({ nil, "closed" }, { s:receive() })
        assert.same({ nil, "closed" }, { s:close() })
        -- and the object works again
        local srv, h, p = server()
        assert.equal(1, s:setpeername(h, p))
        s:send("reborn")
        assert.equal("reborn", srv:receive())
        close_all(srv, s)
      end)
      assert.equal(before, helper.fds())
    end)

    it("of a receiver inside a user coroutine", function()
      local before
      helper.run(function()
        before = helper.fds()
        local s = server()
        local t = spawn(function()
          local co = coroutine.wrap(function() return s:receive() end)
          return co()
        end)
        assert.equal(1, kill(t))
        assert.equal(0, cs.stats().sockets)
        assert.same({ nil, "closed" }, { s:receive() })
      end)
      assert.equal(before, helper.fds())
    end)
  end)

  describe("settimeout", function()
    it("what is not 1 ms or more means the default (OpenResty's, "
       .. "recorded in spec/59: unlike TCP's, no value raises)", function()
      helper.run(function()
        local srv, c = pair()
        for _, v in ipairs({ 0, 0.5, -1, "x", 0 / 0 }) do
          assert.equal(0, select("#", c:settimeout(v)))
        end
        srv:send("ready")
        assert.equal("ready", c:receive()) -- no wait needed
        c:settimeout(1.7) -- truncated: 1 ms
        local t0 = clock()
        assert.same({ nil, "timeout" }, { c:receive() })
        assert.is_true(clock() - t0 < 1 * helper.slack)
        assert.equal(0, select("#", c:settimeout(2 ^ 31)))
        assert.has_error(function() c:settimeout() end,
                         "ngx.socket settimeout: expecting at least 2 "
                         .. "arguments (including the object) but seen 1")
        assert.has_error(function() c.settimeout(nil, 1) end)
        close_all(srv, c)
      end)
    end)
  end)

  describe("unix datagram sockets", function()
    it("send and receive through a path, both ways", function()
      helper.run(function()
        local spath, cpath = tmp_path(), tmp_path()
        local srv = udp()
        assert.equal(1, srv:bind("unix:" .. spath))
        -- an unbound client gets an autobind name
        local a = udp()
        assert.equal(1, a:setpeername("unix:" .. spath))
        assert.matches("^unix:", a:getsockname())
        assert.equal("unix:" .. spath, a:getpeername())
        a:send("from a")
        assert.equal("from a", srv:receive())
        -- a bound client can be answered by name
        local b = udp()
        assert.equal(1, b:bind("unix:" .. cpath))
        assert.equal(1, b:setpeername("unix:" .. spath))
        b:send({ "from ", "b" })
        assert.equal("from b", srv:receive())
        assert.equal(1, srv:setpeername("unix:" .. cpath))
        srv:send("to b")
        assert.equal("to b", b:receive())
        close_all(srv, a, b)
        assert.is_false(exists(spath))
        assert.is_false(exists(cpath))
      end)
    end)

    it("says 'connection refused' when the path has no socket", function()
      helper.run(function()
        local path = tmp_path()
        local srv = udp()
        srv:bind("unix:" .. path)
        local c = udp()
        assert.equal(1, c:setpeername("unix:" .. path))
        srv:close() -- removes the path
        local ok, err = c:send("x")
        assert.is_nil(ok)
        assert.is_true(err == "connection refused"
                       or err == "no such file or directory", err)
        c:close()
      end)
    end)
  end)

  describe("garbage collection", function()
    it("closes the fds of sockets nobody closed", function()
      helper.run(function()
        local before = helper.fds()
        local keep = {} -- so that no collection runs before the count
        for i = 1, 20 do
          local s = udp()
          s:bind("127.0.0.1", 0)
          local c = udp()
          c:setpeername(s:getsockname())
          keep[i] = { s, c }
        end
        assert.equal(40, cs.stats().sockets)
        keep = nil
        collectgarbage()
        collectgarbage()
        assert.equal(0, cs.stats().sockets)
        assert.equal(before, helper.fds())
      end)
    end)

    it("__close closes a to-be-closed socket", function()
      helper.run(function()
        do
          local s <close> = udp()
          s:bind("127.0.0.1", 0)
          assert.equal(1, cs.stats().sockets)
        end
        assert.equal(0, cs.stats().sockets)
      end)
    end)
  end)

  it("cs.stats().sockets counts open UDP sockets", function()
    helper.run(function()
      local s0 = cs.stats().sockets
      local srv, c = pair()
      assert.equal(s0 + 2, cs.stats().sockets)
      srv:close()
      assert.equal(s0 + 1, cs.stats().sockets)
      c:close()
      assert.equal(s0, cs.stats().sockets)
    end)
  end)
end)
