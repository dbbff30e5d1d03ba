-- spec/46's differential probe: the same LuaSocket calls, run with
-- Debian's LuaSocket (blocking) or with corosched.luasocket (in a light
-- thread), against spec/support/luasocket_peer.lua; both runs must print
-- the same lines.
--
--   lua5.4 luasocket_probe.lua PORT     (Debian's LuaSocket)
--   loadfile(probe)("lib") -> probe(socket, PORT, print), for a light
--                                thread (corosched.luasocket)
local function probe(socket, PORT, print)
  local function show(v)
    if type(v) == "string" then -- on one line
      return (string.format("%q", v):gsub("\\\n", "\\n"))
    end
    if type(v) == "table" or type(v) == "userdata" then
      return (tostring(v):gsub("0x%x+", "ADDR"))
    end
    return tostring(v)
  end

  local function P(label, ...)
    local t = table.pack(...)
    for i = 1, t.n do t[i] = show(t[i]) end
    print(label .. ": " .. table.concat(t, " ", 1, t.n))
  end

  -- a raised error without its position
  local function E(label, f, ...)
    local ok, err = pcall(f, ...)
    P(label, ok, (tostring(err):gsub("^[^:]*:%d+: ", "")
                   :gsub("to '%?'", "to 'M'")))
  end

  local function conn(cmd)
    local c = socket.tcp()
    assert(c:connect("127.0.0.1", PORT))
    c:send(cmd .. "\n")
    return c
  end

  -- module surface
  P("version", socket._VERSION, socket._SETSIZE, socket._SOCKETINVALID,
    socket.BLOCKSIZE, type(socket.gettime()))
  P("skip", socket.skip(1, "a", "b", "c"))
  P("skip0", socket.skip(0, "a", "b"))
  local fin = 0
  local try = socket.newtry(function() fin = fin + 1 end)
  P("protect-exc", socket.protect(function() try(nil, "boom") end)())
  P("protect-false", socket.protect(function() try(false, "f") end)())
  P("protect-ok", socket.protect(function() return try(1, 2) end)())
  P("finalizer", fin)
  E("protect-error", socket.protect(function() error("real") end))
  P("try-ok", socket.try(7, 8))
  E("choose", socket.choose({}), "nope")

  -- a fresh master
  local t = socket.tcp()
  P("master", t, t:gettimeout())
  P("master-family", t:getfamily())
  E("master-send", function() return t:send("x") end)
  E("master-receive", function() return t:receive() end)
  E("master-accept", function() return t:accept() end)
  P("settimeout", t:settimeout(2), t:gettimeout())
  P("settimeout-t", t:settimeout(3, "t"), t:gettimeout())
  E("settimeout-mode", function() return t:settimeout(1, "x") end)
  E("setoption-bogus", function() return t:setoption("bogus", 1) end)
  P("refused", t:connect("127.0.0.1", 1))
  P("badport", socket.tcp():connect("127.0.0.1", "abc"))
  P("nohost", socket.tcp():connect("nonexistent.invalid", 80))
  P("connect-nohost", socket.connect("nonexistent.invalid", 80))
  P("connect-refused", socket.connect("127.0.0.1", 1))

  -- send and receive against the peer
  local c = socket.tcp()
  P("connect", c:connect("127.0.0.1", PORT), c)
  P("connect-again", c:connect("127.0.0.1", PORT))
  local ip, port, fam = c:getpeername()
  P("peername", ip, port == PORT, fam)
  ip, port, fam = c:getsockname()
  P("sockname", ip, type(port), fam)
  P("send-cmd", c:send("echo\n"))
  P("send-ij", c:send("xxhello\r\nworld\n", 3, 100))
  P("send-neg", c:send("abc\n", -2))
  P("send-empty", c:send("abc", 5))
  P("send-num", c:send(12))
  E("send-table", function() return c:send({}) end)
  E("send-nil", function() return c:send() end)
  c:send("\n")
  P("recv-l", c:receive("*l"))
  P("recv-default", c:receive())
  P("recv-prefix", c:receive("*l", "PFX"))
  P("recv-12", c:receive())
  E("recv-bad", function() return c:receive("*x") end)
  E("recv-l-noprefix", function() return c:receive("l") end)
  E("recv-neg", function() return c:receive(-1) end)
  E("recv-table", function() return c:receive({}) end)
  c:send("abcdefgh\n")
  P("recv-3", c:receive(3))
  P("recv-3-prefix", c:receive(3, "x"))
  P("recv-prefix-long", c:receive(1, "long"))
  P("recv-numstr", c:receive("2"))
  P("recv-float", c:receive(1.7))
  c:settimeout(0.05)
  P("recv-timeout", c:receive(5))
  P("recv-timeout-prefix", c:receive(5, "zz"))
  P("recv-timeout-l", c:receive("*l"))
  P("stats", select("#", c:getstats()), (c:getstats()))
  P("setstats", c:setstats(10, 20, 30))
  local rx, tx, age = c:getstats()
  P("stats2", rx, tx, age >= 30 and age < 40)
  P("nodelay", c:setoption("tcp-nodelay", true))
  P("keepalive", c:setoption("keepalive", true))
  P("getoption", c:getoption("tcp-nodelay"), c:getoption("keepalive"))
  local m = socket.tcp()
  P("master-option", m:setoption("tcp-nodelay", true))
  m:close()
  m = socket.tcp4()
  P("master4-option", m:setoption("tcp-nodelay", true),
    m:getoption("tcp-nodelay"))
  m:close()
  P("close", c:close(), c:close(), c)
  P("after-close", c:send("x"))
  P("after-close-recv", c:receive())

  -- partial data, then the peer's close
  c = conn("sendclose abc\\ndef")
  c:settimeout(1)
  P("pc-line", c:receive())
  P("pc-5", c:receive(5))
  P("pc-again", c:receive())
  P("pc-all", c:receive("*a"))
  c:close()
  c = conn("sendclose tail")
  c:settimeout(1)
  P("all", c:receive("*a"))
  P("all-again", c:receive("*a"))
  P("all-prefix", c:receive("*a", "p"))
  c:close()
  c = conn("sendclose x\\r\\ny\\rz\\n")
  c:settimeout(1)
  P("cr", c:receive(), c:receive())
  c:close()

  -- timeouts with data arriving late
  c = conn("stall par")
  c:settimeout(0.1)
  P("stall-l", c:receive())
  c:settimeout(1)
  P("stall-late", c:receive())
  c:settimeout(0)
  P("poll", c:receive(1))
  c:close()

  -- shutdown
  c = conn("collect")
  c:send("12345")
  P("shutdown-send", c:shutdown("send"))
  P("send-after-shutdown", c:send("x"))
  c:settimeout(1)
  P("collected", c:receive())
  E("shutdown-bad", function() return c:shutdown("bogus") end)
  P("shutdown-receive", c:shutdown("receive"))
  P("recv-after-shutdown", c:receive())
  c:close()

  -- a server of our own
  local s = socket.bind("127.0.0.1", 0)
  P("server", s)
  ip, port, fam = s:getsockname()
  P("server-name", ip, type(port), fam)
  P("server-peer", s:getpeername())
  E("server-send", function() return s:send("x") end)
  s:settimeout(0.05)
  P("accept-timeout", s:accept())
  local cc = socket.connect("127.0.0.1", port)
  P("connect-fn", cc)
  s:settimeout(1)
  local a = s:accept()
  P("accepted", a)
  P("accepted-peer", (a:getpeername()))
  cc:send("ping\n")
  a:settimeout(1)
  P("server-recv", a:receive())
  a:send("pong\n")
  cc:settimeout(1)
  P("client-recv", cc:receive())
  a:close()
  P("peer-gone", cc:receive())
  cc:close()
  P("server-close", s:close(), s:accept())

  -- socket.sink / socket.source
  c = conn("echo")
  local sink = socket.sink("keep-open", c)
  P("sink", sink("line1\n"), sink(nil))
  c:settimeout(1)
  local src = socket.source("by-length", c, 6)
  P("source", src(), src())
  c:close()
  c = conn("sendclose abcdef")
  c:settimeout(1)
  src = socket.source("until-closed", c)
  P("source-closed", src(), src())

  -- dns
  P("toip-ip", (socket.dns.toip("127.0.0.1")))
  local ip1, info = socket.dns.toip("localhost")
  P("toip", ip1, info.name, #info.alias, info.ip[1])
  P("toip-none", socket.dns.toip("nonexistent.invalid"))
  local ai = socket.dns.getaddrinfo("127.0.0.1")
  P("getaddrinfo", #ai, ai[1].family, ai[1].addr)
  P("getaddrinfo-none", socket.dns.getaddrinfo("nonexistent.invalid"))
  P("hostname", type(socket.dns.gethostname()))

  -- udp
  local u = socket.udp()
  P("udp", u, u:setsockname("127.0.0.1", 0))
  local uh, up = u:getsockname()
  local v = socket.udp()
  P("udp-peer", v:setpeername(uh, up), v)
  P("udp-send", v:send("dgram"))
  u:settimeout(1)
  P("udp-recv", u:receive())
  P("udp-send2", v:send("abcdef"))
  P("udp-recv-cut", u:receive(3))
  u:settimeout(0.05)
  P("udp-timeout", u:receive())
  E("udp-send-unconnected", function() return u:send("x") end)
  P("udp-close", v:close(), u:close())

  socket.sleep(0.01)
  P("sleep-neg", socket.sleep(-1))
  c = socket.tcp()
  c:connect("127.0.0.1", PORT)
  c:send("quit\n")
  c:close()
end

local first = ...
if first == "lib" then return probe end
probe(require "socket", tonumber(first), print)
