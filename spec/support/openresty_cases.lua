-- Cosocket cases run both by real OpenResty (lua-nginx-module, LuaJIT:
-- spec/support/record_openresty.sh records what they print into
-- spec/support/openresty_recorded.lua) and by corosched (spec/59, which
-- compares). Lua 5.1 syntax, so that LuaJIT loads it too. Each case is
-- a function(t) that uses only the `ngx` global and t:
--   t.port, t.unix, t.udp        the scripted peer (script_peer.py)
--   t.refused, t.udp_refused     ports nothing listens on
--   t.tcp(script [, opts])       a TCP cosocket connected to the peer
--                                (connect's opts) that has sent it the
--                                script line
--   t.take(pool)                 takes a connection from the pool (and
--                                records its reuse count), then closes it
--   t.out(label, ...)            records one line: label and the values
--   t.try(label, f, ...)         records f's results, or "error" and the
--                                message of what it raised (no position);
--                                returns f's results
-- Each case closes what it opens. Timeouts are short (tens of ms).

local cases = {}

local function case(name, fn)
  cases[#cases + 1] = { name = name, fn = fn }
end

-- sends 1 MiB at a time to a peer that does not read, until a send fails
-- (64 MiB at most); returns what the last send returned
local function fill(sock)
  local big = string.rep("z", 1024 * 1024)
  local n, err
  for _ = 1, 64 do
    n, err = sock:send(big)
    if not n then break end
  end
  return n, err
end

---------------------------------------------------------------------------
-- connect

case("connect refused", function(t)
  local sock = ngx.socket.tcp()
  t.out("connect", sock:connect("127.0.0.1", t.refused))
  t.out("send after", sock:send("x"))
  t.out("receive after", sock:receive())
  t.out("close after", sock:close())
end)

case("connect with a numeric string port, then reconnect", function(t)
  local sock = ngx.socket.tcp()
  t.out("connect", sock:connect("127.0.0.1", tostring(t.port)))
  t.out("reused", sock:getreusedtimes())
  t.out("send", sock:send("w:a%0A\n"))
  t.out("receive", sock:receive())
  t.out("reconnect", sock:connect("127.0.0.1", t.port))
  t.out("send", sock:send("w:b%0A\n"))
  t.out("receive", sock:receive())
  t.out("close", sock:close())
end)

case("connect to a unix socket", function(t)
  local sock = ngx.socket.tcp()
  t.out("connect", sock:connect("unix:" .. t.unix))
  t.out("send", sock:send("w:over%20unix%0A\n"))
  t.out("receive", sock:receive())
  t.out("close", sock:close())
  local s2 = ngx.socket.tcp()
  t.out("missing path", s2:connect("unix:" .. t.unix .. ".missing"))
end)

case("ngx.socket.connect", function(t)
  local sock, err = ngx.socket.connect("127.0.0.1", t.port)
  t.out("connect", type(sock), err)
  t.out("send", sock:send("w:hi%0A\n"))
  t.out("receive", sock:receive())
  sock:close()
  t.out("refused", ngx.socket.connect("127.0.0.1", t.refused))
end)

case("connect argument errors", function(t)
  local sock = ngx.socket.tcp()
  t.try("no args", function() return sock:connect() end)
  t.try("bad port", function() return sock:connect("127.0.0.1", "x") end)
  t.try("port 0", function() return sock:connect("127.0.0.1", 0) end)
  t.try("port 65536", function() return sock:connect("127.0.0.1", 65536) end)
  t.try("table host", function() return sock:connect({}, 80) end)
  t.try("bad opts", function() return sock:connect("127.0.0.1", t.port, 1) end)
  sock:close()
end)

---------------------------------------------------------------------------
-- unconnected and closed sockets

case("a socket never connected", function(t)
  local sock = ngx.socket.tcp()
  t.out("send", sock:send("x"))
  t.out("receive", sock:receive())
  t.out("receiveany", sock:receiveany(10))
  t.out("close", sock:close())
  t.out("setkeepalive", sock:setkeepalive())
  t.out("getreusedtimes", sock:getreusedtimes())
  t.out("settimeout", sock:settimeout(10))
  t.out("settimeouts", sock:settimeouts(10, 10, 10))
end)

case("a closed socket", function(t)
  local sock = t.tcp("")
  t.out("close", sock:close())
  t.out("close again", sock:close())
  t.out("send", sock:send("x"))
  t.out("receive", sock:receive())
  t.out("receiveany", sock:receiveany(10))
  t.out("setkeepalive", sock:setkeepalive())
  t.out("getreusedtimes", sock:getreusedtimes())
  local it = sock:receiveuntil("--")
  t.out("receiveuntil iterator", it())
end)

---------------------------------------------------------------------------
-- receive

case("receive lines", function(t)
  local sock = t.tcp("w:a%0Ab%0D%0Ac%0D%0D%0A%0Ad%0D c")
  for i = 1, 6 do t.out("line " .. i, sock:receive()) end
  sock:close()
end)

case("receive *l with a partial line at close", function(t)
  local sock = t.tcp("w:abc c")
  t.out("*l", sock:receive("*l"))
  t.out("again", sock:receive("*l"))
  t.out("*a", sock:receive("*a"))
  sock:close()
end)

case("receive *a", function(t)
  local sock = t.tcp("w:hello%0Aworld c")
  t.out("*a", sock:receive("*a"))
  t.out("*a again", sock:receive("*a"))
  t.out("*l after", sock:receive())
  sock:close()
end)

case("receive *a of an empty stream", function(t)
  local sock = t.tcp("c")
  t.out("*a", sock:receive("*a"))
  sock:close()
end)

case("receive sizes", function(t)
  local sock = t.tcp("w:abcdefghij c")
  t.out("3", sock:receive(3))
  t.out("\"2\"", sock:receive("2"))
  t.out("0", sock:receive(0))
  t.out("2.7", sock:receive(2.7))
  t.out("10 at close", sock:receive(10))
  t.out("after", sock:receive(1))
  t.out("0 after close", sock:receive(0))
  sock:close()
end)

case("receive pattern errors", function(t)
  local sock = t.tcp("w:abc")
  t.try("*x", function() return sock:receive("*x") end)
  t.try("*L", function() return sock:receive("*L") end)
  t.try("-1", function() return sock:receive(-1) end)
  t.try("table", function() return sock:receive({}) end)
  t.try("true", function() return sock:receive(true) end)
  t.try("abc", function() return sock:receive("abc") end)
  t.try("*l then", function() return sock:receive(3) end)
  sock:close()
end)

case("receive timeout keeps the partial data and the socket", function(t)
  local sock = t.tcp("w:hello s:0.15 w:world%0A")
  sock:settimeout(50)
  t.out("10", sock:receive(10))
  t.out("*l", sock:receive())
  t.out("*l again", sock:receive())
  sock:close()
end)

case("receive *l timeout with a partial line", function(t)
  local sock = t.tcp("w:par s:0.15 w:tial%0A")
  sock:settimeout(50)
  t.out("*l", sock:receive())
  t.out("*l again", sock:receive())
  sock:close()
end)

case("receive *a timeout", function(t)
  local sock = t.tcp("w:some s:0.15 w:more c")
  sock:settimeout(50)
  t.out("*a", sock:receive("*a"))
  t.out("*a again", sock:receive("*a"))
  sock:close()
end)

case("settimeouts read timeout", function(t)
  local sock = t.tcp("s:0.15 w:late%0A")
  sock:settimeouts(1000, 1000, 40)
  t.out("receive", sock:receive())
  sock:settimeouts(nil, nil, 500)
  t.out("receive", sock:receive())
  sock:close()
end)

case("peer reset mid-read", function(t)
  local sock = t.tcp("w:abc s:0.05 R")
  t.out("10", sock:receive(10))
  t.out("again", sock:receive(1))
  t.out("send", sock:send("x"))
  sock:close()
end)

case("peer closes before anything", function(t)
  local sock = t.tcp("C")
  t.out("*l", sock:receive())
  t.out("send after", sock:send("x"))
  sock:close()
end)

case("a large receive", function(t)
  local sock = t.tcp("n:300000 c")
  local data, err, partial = sock:receive(200000)
  t.out("200000", #data, data:sub(1, 12), err, partial)
  data, err, partial = sock:receive(200000)
  t.out("rest", data, err, #partial, partial:sub(-5))
  sock:close()
end)

---------------------------------------------------------------------------
-- receiveany

case("receiveany", function(t)
  local sock = t.tcp("w:abcdef s:0.05 w:gh c")
  ngx.sleep(0.02)
  t.out("4", sock:receiveany(4))
  t.out("100", sock:receiveany(100))
  t.out("100", sock:receiveany(100))
  t.out("at close", sock:receiveany(100))
  sock:close()
end)

case("receiveany timeout and errors", function(t)
  local sock = t.tcp("s:0.15 w:x")
  sock:settimeout(40)
  t.out("timeout", sock:receiveany(10))
  t.try("0", function() return sock:receiveany(0) end)
  t.try("-1", function() return sock:receiveany(-1) end)
  t.try("none", function() return sock:receiveany() end)
  t.try("string", function() return sock:receiveany("5") end)
  t.try("bad string", function() return sock:receiveany("x") end)
  sock:close()
end)

---------------------------------------------------------------------------
-- receiveuntil

case("receiveuntil", function(t)
  local sock = t.tcp("w:hello--world--%0A--tail c")
  local it = sock:receiveuntil("--")
  t.out("1", it())
  t.out("2", it())
  t.out("3", it())
  t.out("4 at close", it())
  t.out("5", it())
  sock:close()
end)

case("receiveuntil with overlapping prefixes", function(t)
  local sock = t.tcp("w:xaaabyaabaabz---- c")
  local it = sock:receiveuntil("aab")
  t.out("1", it())
  t.out("2", it())
  t.out("3", it())
  local it2 = sock:receiveuntil("---")
  t.out("4", it2())
  t.out("5", it2())
  sock:close()
end)

case("receiveuntil inclusive", function(t)
  local sock = t.tcp("w:a%0D%0Ab%0D%0A c")
  local it = sock:receiveuntil("\r\n", { inclusive = true })
  t.out("1", it())
  t.out("2", it())
  t.out("3", it())
  sock:close()
end)

case("receiveuntil with a size", function(t)
  local sock = t.tcp("w:0123456789abc--rest--x c")
  local it = sock:receiveuntil("--")
  for i = 1, 6 do t.out("size 4 #" .. i, it(4)) end
  for i = 1, 3 do t.out("no size #" .. i, it()) end
  sock:close()
end)

case("receiveuntil with a size, inclusive", function(t)
  local sock = t.tcp("w:abcdef--ghij c")
  local it = sock:receiveuntil("--", { inclusive = true })
  for i = 1, 5 do t.out("size 3 #" .. i, it(3)) end
  sock:close()
end)

case("receiveuntil timeout", function(t)
  local sock = t.tcp("w:abc s:0.15 w:def--")
  sock:settimeout(50)
  local it = sock:receiveuntil("--")
  t.out("1", it())
  t.out("2", it())
  sock:close()
end)

case("receiveuntil: a pattern prefix at close", function(t)
  local sock = t.tcp("w:ab- c")
  local it = sock:receiveuntil("--")
  t.out("1", it())
  t.out("2", it())
  sock:close()
end)

case("receiveuntil: a pattern prefix at timeout", function(t)
  local sock = t.tcp("w:ab- s:0.15 w:-cd--")
  sock:settimeout(50)
  local it = sock:receiveuntil("--")
  t.out("1", it())
  sock:settimeout(1000)
  t.out("2", it())
  t.out("3", it())
  sock:close()
end)

case("receiveuntil: a long pattern prefix at close, with a size", function(t)
  local sock = t.tcp("w:abcd--x-- c")
  local it = sock:receiveuntil("--x--y")
  t.out("1", it(3))
  t.out("2", it(3))
  t.out("3", it(3))
  t.out("4", it(3))
  sock:close()
end)

case("receiveuntil pattern errors", function(t)
  local sock = t.tcp("w:a")
  sock:settimeout(30)
  t.try("empty", function() return sock:receiveuntil("") end)
  t.try("none", function() return sock:receiveuntil() end)
  t.try("number", function() return type(sock:receiveuntil(12)) end)
  t.try("bad opts", function() return sock:receiveuntil("x", 1) end)
  t.try("inclusive string", function()
    return type(sock:receiveuntil("x", { inclusive = "yes" }))
  end)
  local it = sock:receiveuntil("x")
  t.try("size 0", function() return it(0) end)
  t.try("size -1", function() return it(-1) end)
  t.try("size string", function() return it("2") end)
  sock:close()
end)

---------------------------------------------------------------------------
-- send

case("send values", function(t)
  local sock = t.tcp("e")
  t.out("string", sock:send("ab"))
  t.out("empty", sock:send(""))
  t.out("integer", sock:send(42))
  local n1 = sock:send({ 1.5, "|", 0.1, "|", 1e20, "|", -0.0, "|",
                         123456789012345, "|", 2^53, "|", 1/3 })
  t.out("floats", n1)
  t.out("nested", sock:send({ "x", { "y", { 7, "z" } }, {} }))
  t.out("empty table", sock:send({}))
  sock:settimeout(200)
  t.out("echo", sock:receive(2 + 2 + n1 + 4))
  sock:close()
end)

case("send errors", function(t)
  local sock = t.tcp("e")
  t.try("nil", function() return sock:send(nil) end)
  t.try("none", function() return sock:send() end)
  t.try("boolean", function() return sock:send(true) end)
  t.try("function", function() return sock:send(print) end)
  t.try("table with boolean", function() return sock:send({ "a", false }) end)
  t.try("table with table key", function() return sock:send({ a = 1 }) end)
  t.out("usable", sock:send("ok"))
  sock:settimeout(200)
  t.out("echo", sock:receive(9))
  sock:close()
end)

case("send to a peer that reset", function(t)
  local sock = t.tcp("R")
  ngx.sleep(0.05)
  local ok, err = sock:send("x")
  t.out("first send", ok, err)
  t.out("receive", sock:receive())
  t.out("close", sock:close())
end)

case("send timeout", function(t)
  local sock = t.tcp("s:0.5")
  sock:settimeouts(1000, 30, 1000)
  t.out("send", fill(sock))
  t.out("send again", sock:send("x") ~= nil)
  sock:close()
end)

case("send after a read timeout and after the peer's FIN", function(t)
  local sock = t.tcp("e")
  sock:settimeout(30)
  t.out("receive", sock:receive())
  sock:settimeout(1000)
  t.out("send", sock:send("after timeout\n"))
  t.out("receive", sock:receive())
  sock:close()
  local s2 = t.tcp("c")
  t.out("receive", s2:receive())
  t.out("send after FIN", s2:send("x"))
  t.out("receive again", s2:receive())
  t.out("setkeepalive", s2:setkeepalive())
  t.out("close", s2:close())
end)

case("receive *a after a reset", function(t)
  local sock = t.tcp("w:abc s:0.05 R")
  t.out("*a", sock:receive("*a"))
  t.out("close", sock:close())
end)

---------------------------------------------------------------------------
-- light threads sharing a socket

case("two threads reading one socket", function(t)
  local sock = t.tcp("s:0.1 w:data%0A")
  local th = ngx.thread.spawn(function()
    return sock:receive()
  end)
  t.out("second reader", sock:receive())
  t.out("first reader", ngx.thread.wait(th))
  sock:close()
end)

case("close from another thread while reading", function(t)
  local sock = t.tcp("s:0.2")
  sock:settimeout(300)
  local th = ngx.thread.spawn(function()
    return sock:receive()
  end)
  ngx.sleep(0.02)
  t.out("close", sock:close())
  t.out("reader", ngx.thread.wait(th))
end)

case("send while another thread reads", function(t)
  local sock = t.tcp("e")
  local th = ngx.thread.spawn(function()
    return sock:receive(5)
  end)
  t.out("send", sock:send("hello"))
  t.out("reader", ngx.thread.wait(th))
  sock:close()
end)

case("kill a thread parked in receive", function(t)
  local sock = t.tcp("s:0.1 w:late")
  local th = ngx.thread.spawn(function()
    return sock:receive()
  end)
  ngx.sleep(0.01)
  t.out("kill", ngx.thread.kill(th))
  t.out("receive after kill", sock:receive())
  sock:close()
end)

case("close from another thread while sending", function(t)
  local sock = t.tcp("s:0.3")
  sock:settimeouts(1000, 200, 1000)
  local th = ngx.thread.spawn(fill, sock)
  ngx.sleep(0.05)
  t.out("close", sock:close())
  t.out("sender", ngx.thread.wait(th))
  sock:close()
end)

---------------------------------------------------------------------------
-- keepalive

case("setkeepalive and reuse", function(t)
  local sock = t.tcp("e", { pool = "reuse" })
  t.out("send", sock:send("ping"))
  t.out("receive", sock:receive(4))
  t.out("setkeepalive", sock:setkeepalive(1000, 10))
  t.out("send after", sock:send("x"))
  t.out("setkeepalive again", sock:setkeepalive())
  local s2 = ngx.socket.tcp()
  t.out("connect", s2:connect("127.0.0.1", t.port, { pool = "reuse" }))
  t.out("reused", s2:getreusedtimes())
  t.out("send", s2:send("pong"))
  t.out("receive", s2:receive(4))
  t.out("setkeepalive", s2:setkeepalive(nil, nil))
  local s3 = ngx.socket.tcp()
  t.out("connect", s3:connect("127.0.0.1", t.port, { pool = "reuse" }))
  t.out("reused", s3:getreusedtimes())
  s3:close()
end)

case("setkeepalive with unread data", function(t)
  local sock = t.tcp("w:unread")
  ngx.sleep(0.05)
  t.out("setkeepalive", sock:setkeepalive())
  t.out("receive", sock:receive(6))
  sock:close()
end)

case("setkeepalive with a partly read line", function(t)
  local sock = t.tcp("w:ab%0Acd")
  t.out("receive", sock:receive())
  ngx.sleep(0.05)
  t.out("setkeepalive", sock:setkeepalive())
  sock:close()
end)

case("setkeepalive after the peer's FIN", function(t)
  local sock = t.tcp("c", { pool = "after fin" })
  ngx.sleep(0.05)
  t.out("setkeepalive", sock:setkeepalive())
  t.out("close", sock:close())
  local s2 = t.tcp("c", { pool = "after fin" })
  t.out("receive", s2:receive())
  t.out("setkeepalive", s2:setkeepalive())
  t.out("close", s2:close())
end)

case("setkeepalive after a read timeout", function(t)
  local sock = t.tcp("", { pool = "after timeout" })
  sock:settimeout(20)
  t.out("receive", sock:receive())
  t.out("setkeepalive", sock:setkeepalive())
  t.out("close", sock:close())
  t.take("after timeout")
end)

case("setkeepalive argument errors", function(t)
  local n = 0
  local function try(label, ...)
    n = n + 1
    local pool = "setkeepalive errors " .. n
    local sock = t.tcp("", { pool = pool })
    if t.try(label, sock.setkeepalive, sock, ...) == 1 then
      t.take(pool)
    end
    sock:close()
  end
  try("negative timeout", -1)
  try("pool size 0", 0, 0)
  try("pool size -1", 0, -1)
  try("timeout string", "x")
  try("timeout numeric string", "100")
  try("pool size string", 100, "x")
end)

case("connect pool option", function(t)
  local sock = ngx.socket.tcp()
  t.out("connect", sock:connect("127.0.0.1", t.port, { pool = "mine" }))
  t.out("send", sock:send("e\n"))
  t.out("setkeepalive", sock:setkeepalive())
  local s2 = ngx.socket.tcp()
  t.out("other pool", s2:connect("127.0.0.1", t.port))
  t.out("reused", s2:getreusedtimes())
  s2:close()
  local s3 = ngx.socket.tcp()
  t.out("same pool", s3:connect("127.0.0.1", t.port, { pool = "mine" }))
  t.out("reused", s3:getreusedtimes())
  t.out("echo", s3:send("x"), s3:receive(1))
  s3:close()
  t.try("bad pool", function()
    return ngx.socket.tcp():connect("127.0.0.1", t.port, { pool = {} })
  end)
  t.try("bad pool_size", function()
    return ngx.socket.tcp():connect("127.0.0.1", t.port, { pool_size = 0 })
  end)
  t.try("backlog without pool_size", function()
    return ngx.socket.tcp():connect("127.0.0.1", t.port, { backlog = 1 })
  end)
end)

---------------------------------------------------------------------------
-- settimeout and setoption

case("settimeout arguments", function(t)
  local sock = t.tcp("")
  t.try("string", function() return sock:settimeout("5") end)
  t.try("bad string", function() return sock:settimeout("x") end)
  t.try("negative", function() return sock:settimeout(-1) end)
  t.try("nil", function() return sock:settimeout(nil) end)
  t.try("settimeouts negative", function()
    return sock:settimeouts(1, -1, 1)
  end)
  sock:close()
end)

case("setoption", function(t)
  local sock = t.tcp("")
  t.try("tcp-nodelay", function() return sock:setoption("tcp-nodelay", true) end)
  t.try("keepalive", function() return sock:setoption("keepalive", true) end)
  t.try("reuseaddr", function() return sock:setoption("reuseaddr", 1) end)
  t.try("sndbuf", function() return sock:setoption("sndbuf", 65536) end)
  t.try("rcvbuf", function() return sock:setoption("rcvbuf", 65536) end)
  t.try("unknown", function() return sock:setoption("nope", 1) end)
  t.try("no value", function() return sock:setoption("sndbuf") end)
  sock:close()
  t.try("closed", function() return sock:setoption("sndbuf", 1) end)
end)

---------------------------------------------------------------------------
-- UDP

case("udp echo", function(t)
  local u = ngx.socket.udp()
  t.out("setpeername", u:setpeername("127.0.0.1", t.udp))
  t.out("send", u:send("dgram"))
  t.out("receive", u:receive())
  t.out("send table", u:send({ "a", 1, { "b" } }))
  t.out("receive", u:receive())
  t.out("send n:100", u:send("n:100"))
  t.out("receive 10", u:receive(10))
  t.out("close", u:close())
  t.out("close again", u:close())
end)

case("udp timeout, refused, unconnected", function(t)
  local u = ngx.socket.udp()
  t.out("send before", u:send("x"))
  t.out("receive before", u:receive())
  t.out("setpeername", u:setpeername("127.0.0.1", t.udp))
  u:settimeout(40)
  t.out("send silent", u:send("silent"))
  t.out("receive", u:receive())
  u:close()
  local r = ngx.socket.udp()
  t.out("setpeername", r:setpeername("127.0.0.1", t.udp_refused))
  r:settimeout(200)
  t.out("send", r:send("x"))
  t.out("receive", r:receive())
  r:close()
end)

case("udp after close, and a datagram too big", function(t)
  local u = ngx.socket.udp()
  t.out("setpeername", u:setpeername("127.0.0.1", t.udp))
  t.out("send 70000", u:send(string.rep("a", 70000)))
  u:settimeout(50)
  t.out("receive", u:receive())
  t.out("close", u:close())
  t.out("send after", u:send("x"))
  t.out("receive after", u:receive())
  t.out("setpeername after", u:setpeername("127.0.0.1", t.udp))
  t.out("send", u:send("again"))
  t.out("receive", u:receive())
  u:close()
end)

case("udp argument errors", function(t)
  local u = ngx.socket.udp()
  t.try("setpeername no args", function() return u:setpeername() end)
  t.try("setpeername bad port", function()
    return u:setpeername("127.0.0.1", 70000)
  end)
  u:setpeername("127.0.0.1", t.udp)
  u:settimeout(30)
  t.try("send boolean", function() return u:send(true) end)
  t.try("receive 0", function() return u:receive(0) end)
  t.try("receive 70000", function() return u:receive(70000) end)
  t.try("receive string", function() return u:receive("10") end)
  u:close()
end)

---------------------------------------------------------------------------
-- more: readers taking over, buffered data, half-closed connections

case("receiveany after a line left data buffered", function(t)
  local sock = t.tcp("w:line%0Arest c")
  t.out("*l", sock:receive())
  t.out("receiveany", sock:receiveany(100))
  t.out("receiveany at close", sock:receiveany(100))
  sock:close()
end)

case("receive after a receiveuntil timeout takes its held bytes", function(t)
  local sock = t.tcp("w:ab- s:0.15 w:x%0A c")
  sock:settimeout(50)
  local it = sock:receiveuntil("--")
  t.out("until", it())
  sock:settimeout(1000)
  t.out("*l", sock:receive())
  t.out("until again", it())
  sock:close()
end)

case("a receiveuntil iterator after another reader took over", function(t)
  local sock = t.tcp("w:ab- s:0.15 w:x%0A s:0.1 w:-zz--tail c")
  sock:settimeout(50)
  local it = sock:receiveuntil("--")
  t.out("until", it())
  sock:settimeout(1000)
  t.out("*l", sock:receive())
  t.out("until again", it())
  t.out("until at close", it())
  sock:close()
end)

case("a receiveuntil iterator after a timeout, then another iterator",
     function(t)
  local sock = t.tcp("w:ab- s:0.15 w:%2Bq| s:0.1 w:-zz--x| c")
  sock:settimeout(50)
  local it = sock:receiveuntil("--")
  local bar = sock:receiveuntil("|")
  t.out("until", it())
  sock:settimeout(1000)
  t.out("bar", bar())
  t.out("until again", it())
  t.out("bar again", bar())
  sock:close()
end)

case("a sized receiveuntil call holding a partial match, then *l",
     function(t)
  local sock = t.tcp("w:abc-%0Ad--%0A c")
  local it = sock:receiveuntil("--")
  t.out("until(3)", it(3))
  t.out("*l", sock:receive())
  t.out("until", it())
  t.out("*l", sock:receive())
  sock:close()
end)

case("a receiveuntil iterator holding bytes across a reconnect", function(t)
  local sock = t.tcp("w:ab- s:0.3")
  sock:settimeout(50)
  local it = sock:receiveuntil("--")
  t.out("until", it())
  sock:close()
  t.out("connect", sock:connect("127.0.0.1", t.port))
  sock:settimeout(1000)
  t.out("send", sock:send("w:cd--x c\n"))
  t.out("until", it())
  sock:close()
end)

case("a receiveuntil iterator collected while holding bytes", function(t)
  local sock = t.tcp("w:ef- s:0.15 w:g")
  sock:settimeout(50)
  local it = sock:receiveuntil("--")
  t.out("until", it())
  it = nil -- luacheck: ignore
  collectgarbage()
  collectgarbage()
  sock:settimeout(1000)
  t.out("receive(2)", sock:receive(2))
  sock:close()
end)

case("two receiveuntil iterators on one socket", function(t)
  local sock = t.tcp("w:a|b%23c|d%23e c")
  local bar = sock:receiveuntil("|")
  local hash = sock:receiveuntil("#")
  t.out("bar", bar())
  t.out("hash", hash())
  t.out("bar", bar())
  t.out("hash", hash())
  t.out("bar at close", bar())
  sock:close()
end)

case("receiveuntil, one-byte pattern and inclusive sizes", function(t)
  local sock = t.tcp("w:abc%0Adefgh%0A%0Ai c")
  local it = sock:receiveuntil("\n", { inclusive = true })
  for i = 1, 6 do t.out("size 2 #" .. i, it(2)) end
  for i = 1, 3 do t.out("no size #" .. i, it()) end
  sock:close()
end)

case("receive(n) after receiveuntil", function(t)
  local sock = t.tcp("w:head--0123456789 c")
  t.out("until", sock:receiveuntil("--")())
  t.out("4", sock:receive(4))
  t.out("*a", sock:receive("*a"))
  sock:close()
end)

case("a long line", function(t)
  local sock = t.tcp("n:20000 w:%0Aend%0A c")
  local line, err = sock:receive()
  t.out("*l", #line, line:sub(-10), err)
  t.out("*l", sock:receive())
  sock:close()
end)

case("setkeepalive after receive *a", function(t)
  local sock = t.tcp("w:body c", { pool = "after *a" })
  t.out("*a", sock:receive("*a"))
  t.out("setkeepalive", sock:setkeepalive())
  t.out("send", sock:send("x"))
  t.out("close", sock:close())
end)

case("after a send timeout the read half goes on", function(t)
  local sock = t.tcp("s:0.3 w:late%0A")
  sock:settimeouts(1000, 30, 1000)
  t.out("send", fill(sock))
  t.out("send again", sock:send("x"))
  t.out("setkeepalive", sock:setkeepalive())
  t.out("receive", sock:receive())
  t.out("close", sock:close())
  t.out("close again", sock:close())
end)

case("two threads sending on one socket", function(t)
  local sock = t.tcp("s:0.3")
  sock:settimeouts(1000, 100, 1000)
  local th = ngx.thread.spawn(fill, sock)
  ngx.sleep(0.02)
  t.out("second sender", sock:send("x"))
  t.out("first sender", ngx.thread.wait(th))
  sock:close()
end)

case("kill a thread parked in send", function(t)
  local sock = t.tcp("s:0.3")
  sock:settimeouts(1000, 1000, 1000)
  local th = ngx.thread.spawn(fill, sock)
  ngx.sleep(0.02)
  t.out("kill", ngx.thread.kill(th))
  t.out("send after kill", sock:send("x"))
  t.out("receive after kill", sock:receive())
  t.out("close", sock:close())
end)

case("connect again on a connected socket", function(t)
  local sock = t.tcp("w:first%0A")
  t.out("receive", sock:receive())
  t.out("reconnect", sock:connect("127.0.0.1", t.port))
  t.out("reused", sock:getreusedtimes())
  t.out("send", sock:send("w:second%0A\n"))
  t.out("receive", sock:receive())
  t.out("reconnect refused", sock:connect("127.0.0.1", t.refused))
  t.out("send", sock:send("x"))
  t.out("close", sock:close())
end)

case("pool size and backlog", function(t)
  local opts = { pool = "small", pool_size = 1, backlog = 1 }
  local a = ngx.socket.tcp()
  t.out("a connect", a:connect("127.0.0.1", t.port, opts))
  local b = ngx.socket.tcp()
  b:settimeout(100)
  local th = ngx.thread.spawn(function()
    return b:connect("127.0.0.1", t.port, opts)
  end)
  local c = ngx.socket.tcp()
  t.out("c connect, backlog full", c:connect("127.0.0.1", t.port, opts))
  t.out("a send", a:send("e\n"))
  t.out("a setkeepalive", a:setkeepalive())
  t.out("b connect", ngx.thread.wait(th))
  t.out("b reused", b:getreusedtimes())
  t.out("b echo", b:send("q"), b:receive(1))
  t.out("b close", b:close())
  local d = ngx.socket.tcp()
  d:settimeout(50)
  t.out("d connect", d:connect("127.0.0.1", t.port, opts))
  t.out("d close", d:close())
end)

case("backlog connect timeout", function(t)
  local opts = { pool = "timeout", pool_size = 1, backlog = 2 }
  local a = ngx.socket.tcp()
  t.out("a connect", a:connect("127.0.0.1", t.port, opts))
  local b = ngx.socket.tcp()
  b:settimeout(50)
  t.out("b connect", b:connect("127.0.0.1", t.port, opts))
  t.out("b send", b:send("x"))
  a:close()
  local c = ngx.socket.tcp()
  t.out("c connect", c:connect("127.0.0.1", t.port, opts))
  c:close()
end)

case("udp receive sizes and datagram boundaries", function(t)
  local u = ngx.socket.udp()
  u:settimeout(200)
  t.out("setpeername", u:setpeername("127.0.0.1", t.udp))
  t.out("send", u:send("n:9000"))
  local d = u:receive()
  t.out("receive default", #d)
  t.out("send", u:send("one"))
  t.out("send", u:send("two"))
  t.out("receive 2", u:receive(2))
  t.out("receive", u:receive())
  t.out("send empty", u:send(""))
  t.out("receive empty", u:receive())
  t.try("receive -1", function() return u:receive(-1) end)
  t.try("receive 1.5", function()
    u:send("abc")
    return u:receive(1.5)
  end)
  u:close()
end)

case("udp setpeername again and unix", function(t)
  local u = ngx.socket.udp()
  u:settimeout(100)
  t.out("setpeername refused", u:setpeername("127.0.0.1", t.udp_refused))
  t.out("setpeername", u:setpeername("127.0.0.1", t.udp))
  t.out("send", u:send("again"))
  t.out("receive", u:receive())
  t.out("setpeername missing", u:setpeername("unix:/nonexistent/x.sock"))
  t.out("send after", u:send("x"))
  u:close()
end)

case("getoption after setoption", function(t)
  local sock = t.tcp("")
  t.out("set keepalive", sock:setoption("keepalive", true))
  t.out("get keepalive", sock:getoption("keepalive"))
  t.out("set tcp-nodelay", sock:setoption("tcp-nodelay", true))
  t.out("get tcp-nodelay", sock:getoption("tcp-nodelay"))
  t.out("set reuseaddr", sock:setoption("reuseaddr", 0))
  t.out("get reuseaddr", sock:getoption("reuseaddr"))
  t.out("get unknown", sock:getoption("nope"))
  t.out("get none", sock:getoption())
  sock:close()
  t.out("get closed", sock:getoption("keepalive"))
end)

case("tcp bind", function(t)
  local sock = ngx.socket.tcp()
  t.out("bind", sock:bind("127.0.0.1"))
  t.out("connect", sock:connect("127.0.0.1", t.port))
  sock:close()
  local s2 = ngx.socket.tcp()
  t.out("bind bad", s2:bind("not an address"))
  t.out("bind ipv4 with port", s2:bind("127.0.0.1:0"))
  t.try("bind number", s2.bind, s2, 1)
  t.try("bind none", s2.bind, s2)
  s2:close()
end)

case("udp settimeout and sends", function(t)
  local u = ngx.socket.udp()
  t.try("settimeout string", u.settimeout, u, "x")
  t.try("settimeout -1", u.settimeout, u, -1)
  t.try("settimeout none", u.settimeout, u)
  t.out("setpeername", u:setpeername("127.0.0.1", t.udp))
  u:settimeout(200)
  t.try("send nested", u.send, u, { "a", { "b", { 1.5 } } })
  t.out("receive", u:receive())
  t.try("send table with boolean", u.send, u, { true })
  t.try("send function", u.send, u, print)
  t.try("send nil", u.send, u, nil)
  t.out("receive", u:receive())
  t.try("send none", u.send, u)
  u:close()
  t.out("setpeername after close", u:setpeername("127.0.0.1", t.udp))
  t.out("send", u:send("back"))
  t.out("receive", u:receive())
  u:close()
end)

---------------------------------------------------------------------------
-- light threads, sleep, semaphores, timers

case("spawn and wait order", function(t)
  local log = {}
  local function f(name, n)
    log[#log + 1] = name .. " start"
    for i = 1, n do
      ngx.sleep(0)
      log[#log + 1] = name .. " " .. i
    end
    return name, n
  end
  local a = ngx.thread.spawn(f, "a", 2)
  log[#log + 1] = "after a"
  local b = ngx.thread.spawn(f, "b", 1)
  log[#log + 1] = "after b"
  t.out("types", type(a), type(b))
  t.out("wait a", ngx.thread.wait(a))
  t.out("wait b", ngx.thread.wait(b))
  t.out("log", table.concat(log, ","))
end)

case("wait for the first of several", function(t)
  local a = ngx.thread.spawn(function() ngx.sleep(0.05) return "a" end)
  local b = ngx.thread.spawn(function() ngx.sleep(0.01) return "b" end)
  t.out("first", ngx.thread.wait(a, b))
  t.out("second", ngx.thread.wait(a))
  t.try("again", ngx.thread.wait, b)
end)

case("threads that fail", function(t)
  local a = ngx.thread.spawn(function() error("boom") end)
  local b = ngx.thread.spawn(function() ngx.sleep(0.01) error({}) end)
  local c = ngx.thread.spawn(function() error() end)
  local ok, err = ngx.thread.wait(a)
  t.out("a", ok, (tostring(err):gsub("^.-:%d+: ", "")))
  ok, err = ngx.thread.wait(b)
  t.out("b", ok, type(err))
  t.out("c", ngx.thread.wait(c))
end)

case("kill", function(t)
  local a = ngx.thread.spawn(function() ngx.sleep(1) end)
  t.out("kill", ngx.thread.kill(a))
  t.out("kill again", ngx.thread.kill(a))
  t.try("wait killed", ngx.thread.wait, a)
  local b = ngx.thread.spawn(function() return "done" end)
  t.out("kill finished", ngx.thread.kill(b))
  t.out("wait finished", ngx.thread.wait(b))
  t.try("kill not a thread", ngx.thread.kill, {})
  t.try("wait not a thread", ngx.thread.wait, {})
  t.try("wait nothing", ngx.thread.wait)
  local co = coroutine.create(function() end)
  t.try("kill a coroutine", ngx.thread.kill, co)
  t.try("wait a coroutine", ngx.thread.wait, co)
end)

case("a thread spawned by a thread", function(t)
  local inner
  local outer = ngx.thread.spawn(function()
    inner = ngx.thread.spawn(function() ngx.sleep(0.02) return "inner" end)
    return "outer"
  end)
  t.out("wait outer", ngx.thread.wait(outer))
  t.try("wait inner (not ours)", ngx.thread.wait, inner)
  t.try("kill inner (not ours)", ngx.thread.kill, inner)
  ngx.sleep(0.05)
end)

case("coroutines inside a light thread", function(t)
  local th = ngx.thread.spawn(function()
    local co = coroutine.wrap(function(a)
      local b = coroutine.yield(a + 1)
      ngx.sleep(0.01)
      local c = coroutine.yield(b * 2)
      return c .. "!"
    end)
    return co(1), co(10), co("end")
  end)
  t.out("wait", ngx.thread.wait(th))
  local co = coroutine.create(function() ngx.sleep(0) return 1 end)
  t.out("resume", coroutine.resume(co))
  t.out("status", coroutine.status(co))
  t.out("yield in main", pcall(coroutine.yield))
end)

case("sleep arguments", function(t)
  t.try("sleep 0", ngx.sleep, 0)
  t.try("sleep -1", ngx.sleep, -1)
  t.try("sleep string", ngx.sleep, "0.001")
  t.try("sleep bad string", ngx.sleep, "x")
  t.try("sleep none", ngx.sleep)
  t.try("sleep table", ngx.sleep, {})
end)

case("semaphore", function(t)
  local semaphore = require "ngx.semaphore"
  local sema = semaphore.new()
  t.out("count", sema:count())
  t.out("wait 0", sema:wait(0))
  t.out("wait timeout", sema:wait(0.01))
  local th = ngx.thread.spawn(function() return sema:wait(1) end)
  t.out("post", sema:post())
  t.out("waiter", ngx.thread.wait(th))
  t.out("post 3", sema:post(3))
  t.out("count", sema:count())
  t.out("wait", sema:wait(0))
  t.out("count", sema:count())
  local s2 = semaphore.new(2)
  t.out("new(2) count", s2:count())
  t.try("new -1", semaphore.new, -1)
  t.try("wait -1", sema.wait, sema, -1)
  t.try("wait string", sema.wait, sema, "x")
  t.try("post 0", sema.post, sema, 0)
  t.try("post -1", sema.post, sema, -1)
end)

case("timers", function(t)
  local got = {}
  t.out("at", ngx.timer.at(0, function(premature, a, b)
    got[#got + 1] = tostring(premature) .. " " .. a .. " " .. b
  end, "x", "y"))
  t.try("at negative", ngx.timer.at, -1, function() end)
  t.try("at no function", ngx.timer.at, 0, 1)
  t.try("at no delay", ngx.timer.at, nil, function() end)
  ngx.sleep(0.02)
  t.out("ran", table.concat(got, ";"))
end)

case("udp two readers", function(t)
  local u = ngx.socket.udp()
  u:settimeout(100)
  u:setpeername("127.0.0.1", t.udp)
  local th = ngx.thread.spawn(function() return u:receive() end)
  t.out("second reader", u:receive())
  t.out("send", u:send("hi"))
  t.out("first reader", ngx.thread.wait(th))
  u:close()
end)

case("coroutine API on light threads", function(t)
  local th = ngx.thread.spawn(function()
    t.out("inside running", type(coroutine.running()))
    ngx.sleep(0.01)
    return "r"
  end)
  t.out("status spawned", coroutine.status(th))
  ngx.sleep(0.02)
  t.out("status ended", coroutine.status(th))
  t.out("wait", ngx.thread.wait(th))
  t.out("status waited", coroutine.status(th))
  local th2 = ngx.thread.spawn(function() ngx.sleep(0.05) end)
  t.out("status sleeping", coroutine.status(th2))
  t.try("resume a light thread", coroutine.resume, th2)
  t.out("kill", ngx.thread.kill(th2))
  t.out("status killed", coroutine.status(th2))
  t.out("main running", type(coroutine.running()))
end)

case("yield and sockets inside coroutines and pcall", function(t)
  local sock = t.tcp("e")
  local co = coroutine.create(function(a)
    local ok, err = pcall(function()
      sock:send("ping")
      local got = sock:receive(4)
      coroutine.yield(got)
      error("inner")
    end)
    return a, ok, (tostring(err):gsub("^.-:%d+: ", ""))
  end)
  t.out("first resume", coroutine.resume(co, "arg"))
  t.out("second resume", coroutine.resume(co))
  t.out("status", coroutine.status(co))
  t.out("resume dead", coroutine.resume(co))
  -- (no error raised through coroutine.wrap: OpenResty's pcall cannot
  -- catch it and aborts the request; README, deliberate differences)
  local wrap = coroutine.wrap(function()
    sock:send("x")
    coroutine.yield(sock:receive(1))
    return "wrapped"
  end)
  t.out("wrap 1", wrap())
  t.out("wrap 2", wrap())
  sock:close()
end)

case("a light thread spawned inside a coroutine", function(t)
  local co = coroutine.create(function()
    local th = ngx.thread.spawn(function()
      ngx.sleep(0.01)
      return "from thread"
    end)
    coroutine.yield("yielded")
    return ngx.thread.wait(th)
  end)
  t.out("resume 1", coroutine.resume(co))
  t.out("resume 2", coroutine.resume(co))
end)

---------------------------------------------------------------------------
-- ngx.re (PCRE) and the string helpers

case("ngx.re.match", function(t)
  t.out("plain", ngx.re.match("hello, 1234", "([0-9])([0-9]+)"))
  t.out("named", ngx.re.match("hello, 1234", "(?<first>[a-z]+), (?<n>\\d+)"))
  t.out("no match", ngx.re.match("hello", "\\d"))
  t.out("optional group", ngx.re.match("ab", "(a)(x)?(b)"))
  t.out("case-insensitive", ngx.re.match("HELLO", "hello", "i"))
  t.out("anchored", ngx.re.match("xhello", "hello", "a"))
  t.out("jo", ngx.re.match("foo bar", "\\w+", "jo"))
  t.out("utf8", ngx.re.match("héllo", "h(.)", "u"))
  t.out("bytes", ngx.re.match("héllo", "h(.)"))
  local ctx = { pos = 3 }
  t.out("ctx", ngx.re.match("a1b2c3", "[0-9]", "", ctx), ctx.pos)
  t.try("bad regex", ngx.re.match, "x", "(")
  t.try("bad option", ngx.re.match, "x", "x", "Z")
  t.out("empty", ngx.re.match("", "^$"))
  t.out("dup names", ngx.re.match("ab", "(?<x>a)|(?<x>b)", "D"))
end)

case("ngx.re.find, gmatch", function(t)
  t.out("find", ngx.re.find("hello, 1234", "[0-9]+"))
  t.out("find nth", ngx.re.find("hello, 1234", "([a-z]+), ([0-9]+)", "",
                                nil, 2))
  t.out("find none", ngx.re.find("hello", "[0-9]"))
  t.out("find empty", ngx.re.find("abc", "x*"))
  local it = ngx.re.gmatch("a1b22c333", "([a-z])([0-9]+)")
  for i = 1, 4 do t.out("gmatch " .. i, it()) end
  local it2 = ngx.re.gmatch("abc", "")
  for i = 1, 5 do t.out("gmatch empty " .. i, it2()) end
end)

case("ngx.re.sub, gsub", function(t)
  t.out("sub", ngx.re.sub("hello, world", "o", "0"))
  t.out("sub $0", ngx.re.sub("hello", "l+", "[$0]"))
  t.out("sub ${1}", ngx.re.sub("hello", "(e)(l+)", "${2}${1}"))
  t.out("gsub", ngx.re.gsub("hello, world", "o", "0"))
  t.out("gsub fn", ngx.re.gsub("a1b2", "[0-9]", function(m)
    return "<" .. m[0] .. ">"
  end))
  t.out("gsub empty", ngx.re.gsub("abc", "", "-"))
  t.out("gsub none", ngx.re.gsub("abc", "x", "-"))
  t.out("gsub $$", ngx.re.gsub("abc", "b", "$$"))
  t.try("gsub bad template", ngx.re.gsub, "abc", "b", "$x")
  t.try("gsub bad template 2", ngx.re.gsub, "abc", "b", "${1")
  t.out("gsub utf8", ngx.re.gsub("héllo", ".", "x", "u"))
end)

case("string helpers", function(t)
  t.out("escape_uri", ngx.escape_uri("a b&c=d/é~_-.!*'()"))
  t.out("escape_uri 2", ngx.escape_uri("a b/c?d", 2))
  t.out("unescape_uri", ngx.unescape_uri("a%20b+c%zz%4"))
  -- (one key per call: the order of several follows the hash table)
  t.out("encode_args", ngx.encode_args({ a = 1 }), ngx.encode_args({ b = true }),
        ngx.encode_args({ c = false }), ngx.encode_args({ d = { "x", "y" } }),
        ngx.encode_args({ ["e f"] = "g h" }), ngx.encode_args({}))
  t.out("decode_args", ngx.decode_args("a=1&b&c=&a=2&d=%20x+y"))
  t.out("decode_args max", ngx.decode_args("a=1&b=2&c=3", 2))
  t.out("quote_sql_str", ngx.quote_sql_str("a'b\\c\0d\n\r\026\"e"))
  t.out("md5", ngx.md5("hello"))
  t.out("sha1_bin", ngx.encode_base64(ngx.sha1_bin("hello")))
  t.out("md5_bin", ngx.encode_base64(ngx.md5_bin("")))
  t.out("crc32_short", ngx.crc32_short("hello"))
  t.out("crc32_long", ngx.crc32_long("hello"))
  t.out("base64", ngx.encode_base64("\0\1\2ab"), ngx.encode_base64("ab", true))
  t.out("decode_base64", ngx.decode_base64("YWJj"), ngx.decode_base64("YWJ"),
        ngx.decode_base64("!!"))
  t.out("hmac_sha1", ngx.encode_base64(ngx.hmac_sha1("key", "msg")))
  t.out("http_time", ngx.http_time(1290079655))
  t.out("cookie_time", ngx.cookie_time(1290079655))
  t.out("parse_http_time", ngx.parse_http_time("Thu, 18 Nov 2010 11:27:35 GMT"),
        ngx.parse_http_time("bad"))
  t.out("null", ngx.null, type(ngx.null), tostring(ngx.null))
  t.try("md5 number", ngx.md5, 12)
  t.try("md5 nil", ngx.md5, nil)
  t.try("escape_uri nil", ngx.escape_uri, nil)
  t.try("encode_base64 table", function()
    return type(ngx.encode_base64({}))
  end)
end)

---------------------------------------------------------------------------
-- the runner

-- a value as text, the same on LuaJIT and Lua 5.4
local show

function show(v)
  local ty = type(v)
  if ty == "string" then
    return '"' .. v:gsub('[%c"\\\128-\255]', function(c)
      return ("\\%03d"):format(c:byte())
    end) .. '"'
  elseif ty == "number" then
    if v ~= v then return "nan" end
    if v == math.floor(v) and math.abs(v) < 1e15 then
      return ("%d"):format(v)
    end
    return ("%.14g"):format(v)
  elseif ty == "nil" or ty == "boolean" then
    return tostring(v)
  elseif ty == "table" and v == ngx.null then
    return "ngx.null"
  elseif ty == "table" and getmetatable(v) == nil then
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = k end
    table.sort(keys, function(a, b)
      if type(a) ~= type(b) then return type(a) < type(b) end
      return a < b
    end)
    local parts = {}
    for _, k in ipairs(keys) do
      parts[#parts + 1] = show(k) .. "=" .. show(v[k])
    end
    return "{" .. table.concat(parts, ",") .. "}"
  end
  return ty
end

local unpack = unpack or table.unpack

local function pack(...)
  return { n = select("#", ...), ... }
end

local function line(label, n, ...)
  local parts = { label .. ":" }
  local vals = { ... }
  for i = 1, n do parts[#parts + 1] = show(vals[i]) end
  return table.concat(parts, " ")
end

-- runs one case against the peer { port =, refused =, udp =,
-- udp_refused =, unix = }; returns what it recorded, one line per out
-- or try, and a last line if the case itself raised
local function run(c, peer)
  local lines = {}
  local t = {}
  for k, v in pairs(peer) do t[k] = v end
  function t.out(label, ...)
    lines[#lines + 1] = line(label, select("#", ...), ...)
  end
  function t.try(label, f, ...)
    local res = pack(pcall(f, ...))
    if res[1] then
      lines[#lines + 1] = line(label, res.n - 1, unpack(res, 2, res.n))
      return unpack(res, 2, res.n)
    end
    local msg = tostring(res[2]):gsub("^[^:\n]*:%d+: ", "")
    lines[#lines + 1] = label .. ": error " .. show(msg)
  end
  -- takes an idle connection of the pool back if there is one, records
  -- how often it was reused, and closes it
  function t.take(pool)
    local sock = ngx.socket.tcp()
    assert(sock:connect("127.0.0.1", peer.port, { pool = pool }))
    lines[#lines + 1] = line("taken from " .. pool, 1, sock:getreusedtimes())
    sock:close()
  end
  function t.tcp(script, opts)
    local sock = ngx.socket.tcp()
    assert(sock:connect("127.0.0.1", peer.port, opts))
    assert(sock:send(script .. "\n"))
    return sock
  end
  local ok, err = pcall(c.fn, t)
  if not ok then
    lines[#lines + 1] = "case raised: " .. show(tostring(err))
  end
  return table.concat(lines, "\n")
end

return { cases = cases, run = run, show = show }
