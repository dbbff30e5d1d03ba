-- Divergences of corosched.luasocket from Debian's LuaSocket 3.1, found
-- by a random differential run (the same programs on both); the values
-- expected here are what LuaSocket printed for the same calls:
--  * shutdown("receive") (or "both") threw away what the peer had sent
--    already: receive said "closed" (LuaSocket reads what the kernel
--    holds, then the end comes);
--  * receive(n, prefix) with #prefix >= n, and send(data, i, j) with an
--    empty range, said "closed" on a closed socket (LuaSocket does no I/O
--    there and answers);
--  * "*line" and "*all" raised (LuaSocket reads two characters);
--  * bind() then connect() raised (a nil method), and setpeername /
--    setsockname, LuaSocket's other names, were missing;
--  * getstats/setstats answered on a master (LuaSocket: a client only),
--    setstats kept fractions (LuaSocket's longs truncate), getfd gave an
--    integer (LuaSocket a float);
--  * setoption of a boolean took any value (LuaSocket checks its type);
--    getoption of a boolean before connect failed on a tcp4() (it has a
--    descriptor in LuaSocket: false);
--  * getsockname and listen on a tcp4() never bound failed (LuaSocket's
--    has a descriptor: the any address, port "0"; listen binds it to a
--    free port), getpeername on a tcp() said "not connected" (it has no
--    descriptor there: "Bad file descriptor"), a second bind succeeded;
--  * setoption/getoption on a closed object said "closed" or 1.0
--    ("setsockopt failed"/"getsockopt failed"); a numeric option took
--    what is no number at connect and raised there (LuaSocket: 0);
--    getoption knew setoption's names ("tcp-fastopen"; not "error");
--  * the system's errors came in lower case ("Invalid argument",
--    "Transport endpoint is not connected": strerror's), and a reset as
--    "connection reset by peer" (LuaSocket: "closed");
--  * a failed connect left a tcp{master} (LuaSocket: tcp{client}, and
--    its send, receive, getstats answer as a client's);
--  * connect on a connected client always answered 1.0 (Linux: once,
--    then, and after a shutdown or on an accepted one, EISCONN);
--  * after a read error closed the cosocket, getsockname and getpeername
--    said "closed" (LuaSocket's descriptor still answers);
--  * UDP: getoption was missing, setoption took any name and did
--    nothing; receive on a udp() never used said "closed" (LuaSocket: ""
--    at once, it has no descriptor), getsockname on it "closed", and on
--    a udp4() never bound both said "closed" (LuaSocket: the any address;
--    a timeout); getfd gave an integer.
local helper = require "spec.helper"
local cs = helper.cs
local socket = require "corosched.luasocket"

-- a listening server and its port
local function server()
  local s = assert(socket.bind("127.0.0.1", 0))
  local _, port = s:getsockname()
  return s, port
end

local function pair()
  local s, port = server()
  local c = socket.tcp()
  assert(c:connect("127.0.0.1", tonumber(port)))
  local a = assert(s:accept())
  s:close()
  return c, a
end

local function pack(...) return { n = select("#", ...), ... } end
local NOTCONN = pack(nil, "Transport endpoint is not connected")

describe("regression: corosched.luasocket as LuaSocket 3.1", function()
  after_each(helper.after_each)

  it("shutdown(\"receive\") still reads what came", function()
    helper.run(function()
      local c, a = pair()
      a:send("line1\nrest")
      cs.sleep(0.05)
      assert.equal(1, c:shutdown("receive"))
      c:settimeout(1)
      assert.same(pack("line1", nil, nil), pack(c:receive()))
      assert.same(pack("rest", nil, nil), pack(c:receive("*a")))
      c:close()
      a:close()
    end)
  end)

  it("no I/O after close: a prefix that is enough, an empty range",
     function()
    helper.run(function()
      local c, a = pair()
      c:close()
      assert.same(pack("prefix", nil, nil), pack(c:receive(3, "prefix")))
      assert.same(pack(4.0, nil, nil), pack(c:send("abc", 5)))
      assert.same(pack(3.0, nil, nil), pack(c:send("abcdef", 4, 2)))
      assert.same({ nil, "closed", "P" }, { c:receive(5, "P") })
      a:close()
    end)
  end)

  it("\"*line\" and \"*all\"", function()
    helper.run(function()
      local c, a = pair()
      a:send("one\ntwo\n")
      a:close()
      c:settimeout(1)
      assert.same(pack("one", nil, nil), pack(c:receive("*line")))
      assert.same(pack("two\n", nil, nil), pack(c:receive("*all")))
      c:close()
    end)
  end)

  it("bind() then connect(); setsockname and setpeername", function()
    helper.run(function()
      local s, port = server()
      local t = socket.tcp4()
      assert.equal(1.0, t:setsockname("127.0.0.1", 0))
      local t2 = socket.tcp4()
      assert.equal(1.0, t2:setpeername("127.0.0.1", tonumber(port)))
      local t3 = socket.tcp4()
      assert.equal(1.0, t3:bind("127.0.0.1", 0))
      local _, lport = t3:getsockname()
      assert.equal(1.0, t3:connect("127.0.0.1", tonumber(port)))
      local _, cport = t3:getsockname()
      assert.equal(lport, cport) -- from the address bind() gave
      t:close()
      t2:close()
      t3:close()
      s:close()
    end)
  end)

  it("getstats/setstats on clients only, truncated; getfd a float",
     function()
    helper.run(function()
      local c, a = pair()
      assert.equal("float", math.type(c:getfd()))
      assert.equal(1.0, c:setstats(10.7, 3.2))
      local rx, tx = c:getstats()
      assert.same({ 10.0, 3.0 }, { rx, tx })
      local m = socket.tcp4()
      local ok, err = pcall(m.getstats, m)
      assert.is_false(ok)
      assert.matches("calling 'getstats' on bad self %(tcp{client} "
                     .. "expected%)", err)
      ok, err = pcall(m.setstats, m, 1, 2)
      assert.is_false(ok)
      assert.matches("calling 'setstats' on bad self", err)
      m:close()
      c:close()
      a:close()
    end)
  end)

  it("setoption checks a boolean's type; getoption before connect",
     function()
    helper.run(function()
      local m = socket.tcp4()
      assert.is_false(m:getoption("tcp-nodelay"))
      local ok, err = pcall(m.setoption, m, "tcp-nodelay", 1)
      assert.is_false(ok)
      assert.matches("bad argument #2 to 'setoption' %(boolean expected, "
                     .. "got number%)", err)
      ok, err = pcall(m.setoption, m, "keepalive")
      assert.is_false(ok)
      assert.matches("boolean expected, got no value", err)
      m:close()
    end)
  end)

  it("getsockname, getpeername, listen and bind on a master", function()
    helper.run(function()
      local t, t4, t6 = socket.tcp(), socket.tcp4(), socket.tcp6()
      assert.same(pack(nil, "Bad file descriptor"), pack(t:getsockname()))
      assert.same(pack(nil, "Bad file descriptor"), pack(t:getpeername()))
      assert.same(pack("0.0.0.0", "0", "inet"), pack(t4:getsockname()))
      assert.same(pack("::", "0", "inet6"), pack(t6:getsockname()))
      assert.same(NOTCONN, pack(t4:getpeername()))
      assert.same(pack(nil, "Bad file descriptor"), pack(t:listen()))
      -- Linux binds a socket that listens unbound
      assert.equal(1.0, t4:listen())
      assert.equal("tcp{server}", tostring(t4):match("^%S+{%a+}"))
      local ip, port = t4:getsockname()
      assert.equal("0.0.0.0", ip)
      assert.is_true(tonumber(port) > 0)
      local c = assert(socket.connect("127.0.0.1", port))
      t4:settimeout(1)
      local a = assert(t4:accept())
      assert.equal(1.0, t6:bind("::1", 0))
      assert.same(pack(nil, "Invalid argument"), pack(t6:bind("::1", 0)))
      for _, o in ipairs({ t, t4, t6, c, a }) do o:close() end
    end)
  end)

  it("options on a closed object; a numeric option's value", function()
    helper.run(function()
      local m = socket.tcp4()
      assert.equal(1.0, m:setoption("send-buffer-size", "x")) -- 0
      m:close()
      assert.same(pack(nil, "setsockopt failed"),
                  pack(m:setoption("tcp-nodelay", true)))
      assert.same(pack(nil, "getsockopt failed"),
                  pack(m:getoption("tcp-nodelay")))
      local c, a = pair()
      assert.equal(1.0, c:setoption("send-buffer-size", "16384"))
      assert.equal(1.0, c:setoption("recv-buffer-size", "x"))
      local ok, err = pcall(c.getoption, c, "tcp-fastopen")
      assert.is_false(ok)
      assert.matches("unsupported option `tcp%-fastopen'", err)
      assert.same(pack(nil, "option 'error' is not available in corosched"),
                  pack(c:getoption("error")))
      c:close()
      assert.same(pack(nil, "setsockopt failed"),
                  pack(c:setoption("keepalive", true)))
      assert.same(pack(nil, "getsockopt failed"),
                  pack(c:getoption("send-buffer-size")))
      a:close()
      -- set before connect, a string: applied at connect, no raise there
      local s, port = server()
      local t = socket.tcp4()
      assert.equal(1.0, t:setoption("send-buffer-size", "x"))
      assert.equal(1.0, t:connect("127.0.0.1", port))
      t:close()
      s:close()
    end)
  end)

  it("the system's errors as strerror words them; a reset is \"closed\"",
     function()
    helper.run(function()
      local c, a = pair()
      a:close()
      c:shutdown("send")
      cs.sleep(0.05) -- (both FINs are through)
      assert.same(NOTCONN, pack(c:getpeername()))
      c:close()
      local u = socket.udp()
      assert.equal(1.0, u:setsockname("127.0.0.1", 0))
      assert.same(pack(nil, "Invalid argument"),
                  pack(u:setsockname("127.0.0.1", 0)))
      u:close()
      -- the peer closes with bytes unread: a reset
      c, a = pair()
      c:send("unread\n")
      cs.sleep(0.05)
      a:close()
      c:settimeout(1)
      assert.same(pack(nil, "closed", ""), pack(c:receive()))
      assert.same(NOTCONN, pack(c:getpeername()))
      c:close()
    end)
  end)

  it("a failed connect leaves a client", function()
    helper.run(function()
      local s, port = server()
      local r, refused = server()
      r:close()
      local t = socket.tcp()
      assert.same(pack(nil, "connection refused"),
                  pack(t:connect("127.0.0.1", refused)))
      assert.equal("tcp{client}", tostring(t):match("^%S+{%a+}"))
      assert.same(pack(nil, "closed", 0.0), pack(t:send("abc")))
      assert.same(pack(nil, "closed", ""), pack(t:receive(3)))
      assert.same(NOTCONN, pack(t:getpeername()))
      assert.equal(0.0, (t:getstats()))
      assert.equal(1.0, t:connect("127.0.0.1", port)) -- tries again
      t:close()
      s:close()
    end)
  end)

  it("connect on a connected client: once 1.0, then EISCONN", function()
    helper.run(function()
      local c, a = pair()
      assert.same(pack(1.0), pack(c:connect("127.0.0.1", 1)))
      assert.same(pack(nil, "already connected"),
                  pack(c:connect("127.0.0.1", 1)))
      assert.same(pack(nil, "already connected"),
                  pack(a:connect("127.0.0.1", 1)))
      c:close()
      a:close()
      c, a = pair()
      assert.equal(1.0, c:shutdown("receive"))
      assert.same(pack(nil, "already connected"),
                  pack(c:connect("127.0.0.1", 1)))
      c:close()
      a:close()
    end)
  end)

  it("a read error closes the cosocket; its addresses still answer",
     function()
    helper.run(function()
      local c, a = pair()
      local ip, port = c:getsockname()
      local pip, pport = c:getpeername()
      a:close()
      c:settimeout(1)
      assert.same(pack(nil, "closed", ""), pack(c:receive()))
      assert.same(pack(ip, port, "inet"), pack(c:getsockname()))
      assert.same(pack(pip, pport, "inet"), pack(c:getpeername()))
      c:shutdown("send") -- (its FIN goes out too: LuaSocket's is done)
      assert.same(NOTCONN, pack(c:getpeername()))
      c:close()
    end)
  end)

  it("UDP: options, a udp() never used, getfd", function()
    helper.run(function()
      local u = socket.udp()
      local ok, err = pcall(u.setoption, u, "bogus", 1)
      assert.is_false(ok)
      assert.matches("bad argument #1 to 'setoption' %(unsupported "
                     .. "option `bogus'%)", err)
      ok, err = pcall(u.getoption, u, "ip-multicast-ttl") -- (set only)
      assert.is_false(ok)
      assert.matches("unsupported option `ip%-multicast%-ttl'", err)
      ok, err = pcall(u.setoption, u, "broadcast", 1)
      assert.is_false(ok)
      assert.matches("boolean expected, got number", err)
      -- no descriptor yet, as LuaSocket 3.1's
      assert.same(pack(nil, "setsockopt failed"),
                  pack(u:setoption("broadcast", true)))
      assert.same(pack(nil, "getsockopt failed"),
                  pack(u:getoption("dontroute")))
      assert.same(pack(nil, "Bad file descriptor"), pack(u:getsockname()))
      u:settimeout(1)
      assert.same(pack(""), pack(u:receive()))
      assert.same(pack(-1.0), pack(u:getfd()))
      assert.equal("float", math.type(u:getfd()))
      assert.equal(1.0, u:setsockname("127.0.0.1", 0))
      assert.same(pack(nil, "option 'broadcast' is not available in "
                            .. "corosched"),
                  pack(u:setoption("broadcast", true)))
      u:settimeout(0.05)
      assert.same(pack(nil, "timeout"), pack(u:receive()))
      u:close()
      assert.same(pack(nil, "Bad file descriptor"), pack(u:getsockname()))
      assert.same(pack(nil, "setsockopt failed"),
                  pack(u:setoption("broadcast", true)))
      local u4 = socket.udp4()
      assert.same(pack("0.0.0.0", "0", "inet"), pack(u4:getsockname()))
      u4:settimeout(0.02) -- (no port: nothing comes)
      assert.same(pack(nil, "timeout"), pack(u4:receive()))
      u4:close()
    end)
  end)
end)
