-- The TCP cosocket on real loopback sockets: every method, pattern and
-- error string of cs.socket.tcp() (API.md "Sockets"; lua-nginx-module's
-- README tcpsock:*, t/058-tcp-socket.t, t/066-socket-receiveuntil.t).
-- The peers are corosched listeners run by light threads of the test.
local helper = require "spec.helper"
local net = require "spec.support.net"
local cs = helper.cs
local spawn, wait = cs.thread.spawn, cs.thread.wait

-- A server thread sends each piece, sleeping `gap` seconds between them,
-- then closes; with keep_open it first waits until the client closes.
-- Returns the client socket.
local function feed(pieces, gap, keep_open)
  local c, s = net.pair()
  spawn(function()
    for i, p in ipairs(pieces) do
      if i > 1 and gap then cs.sleep(gap) end
      if not s:send(p) then break end
    end
    if keep_open then s:receive("*a") end
    s:close()
  end)
  return c
end

-- every byte separately, 1 ms apart
local function bytes_of(str)
  local t = {}
  for i = 1, #str do t[i] = str:sub(i, i) end
  return t
end

describe("tcp:connect", function()
  after_each(helper.after_each)

  it("connects to 127.0.0.1 and returns 1", function()
    net.run(function()
      local port = net.serve(function(c)
        assert.equal("ping", c:receive())
        assert(c:send("pong\n"))
      end)
      local s = cs.socket.tcp()
      assert.equal(1, s:connect("127.0.0.1", port))
      assert.equal(0, s:getreusedtimes())
      assert.equal(5, s:send("ping\n"))
      assert.equal("pong", s:receive())
      assert.equal(1, s:close())
    end)
  end)

  it("resolves a host name (localhost) without blocking", function()
    net.run(function()
      local addrs = assert(cs.resolve("localhost"))
      local srv = assert(cs.socket.listen(addrs[1], 0))
      local _, port = srv:getsockname()
      spawn(function()
        local c = assert(srv:accept())
        assert(c:send("hi\n"))
        c:close()
        srv:close()
      end)
      local s = cs.socket.tcp()
      assert.equal(1, s:connect("localhost", port))
      assert.equal("hi", s:receive())
      s:close()
    end)
  end)

  it("accepts a numeric string as the port", function()
    net.run(function()
      local port = net.serve(function(c) c:send("x\n") end)
      local s = cs.socket.tcp()
      assert.equal(1, s:connect("127.0.0.1", tostring(port)))
      assert.equal("x", s:receive())
      s:close()
    end)
  end)

  it("connects to a unix socket (unix:/path)", function()
    local path = net.unix_path()
    net.run(function()
      local srv = assert(cs.socket.listen("unix:" .. path))
      assert.is_true(net.exists(path))
      assert.equal("unix:" .. path, srv:getsockname())
      spawn(function()
        local c = assert(srv:accept())
        assert.equal("hello", c:receive())
        assert(c:send("world\n"))
        c:close()
        srv:close()
      end)
      local s = cs.socket.tcp()
      assert.equal(1, s:connect("unix:" .. path))
      local peer, port = s:getpeername()
      assert.equal("unix:" .. path, peer)
      assert.is_nil(port)
      assert(s:send("hello\n"))
      assert.equal("world", s:receive())
      s:close()
    end)
    assert.is_false(net.exists(path), "close() unlinks the socket file")
  end)

  it("fails on a unix path nobody listens on", function()
    net.run(function()
      local s = cs.socket.tcp()
      assert.same({ nil, "no such file or directory" },
                  { s:connect("unix:" .. net.unix_path()) })
    end)
  end)

  it("refused: nil, \"connection refused\", and the socket is closed "
     .. "(058 TEST 5)", function()
    net.run(function()
      local s = cs.socket.tcp()
      local fds = helper.fds()
      assert.same({ nil, "connection refused" },
                  { s:connect("127.0.0.1", net.free_port()) })
      assert.equal(fds, helper.fds())
      assert.same({ nil, "closed" }, { s:send("hello") })
      assert.same({ nil, "closed" }, { s:receive() })
      assert.same({ nil, "closed" }, { s:close() })
      assert.equal(0, cs.stats().sockets)
    end)
  end)

  it("without a port: nil, \"missing the port number\"", function()
    net.run(function()
      local s = cs.socket.tcp()
      local msg = "missing the port number"
      assert.same({ nil, msg }, { s:connect("127.0.0.1") })
      assert.same({ nil, msg }, { s:connect("127.0.0.1", nil) })
      assert.same({ nil, msg }, { s:connect("127.0.0.1", {}) })
      assert.same({ nil, msg }, { s:connect("127.0.0.1", nil, {}) })
      -- as OpenResty: what lua_isnumber() refuses is missing too, and a
      -- float port is truncated
      assert.same({ nil, msg }, { s:connect("127.0.0.1", "http") })
      assert.same({ nil, msg }, { s:connect("127.0.0.1", true) })
      assert.same({ nil, "connection refused" },
                  { s:connect("127.0.0.1", net.free_port() + 0.9) })
      assert.equal(0, cs.stats().sockets)
    end)
  end)

  it("with a port out of range: nil, \"bad port number: N\"", function()
    net.run(function()
      local s = cs.socket.tcp()
      assert.same({ nil, "bad port number: 65536" },
                  { s:connect("127.0.0.1", 65536) })
      assert.same({ nil, "bad port number: -1" },
                  { s:connect("127.0.0.1", -1) })
      assert.same({ nil, "bad port number: 70000" },
                  { s:connect("127.0.0.1", "70000") })
    end)
  end)

  it("an unresolvable host: \"<host> could not be resolved (N: ...)\" "
     .. "(058 TEST 8)", function()
    net.run(function()
      local s = cs.socket.tcp()
      local ok, err = s:connect("no-such-host.invalid", 80)
      assert.is_nil(ok)
      assert.matches("^no%-such%-host%.invalid could not be resolved "
                     .. "%(%d+: [%a ]+%)$", err)
      assert.same({ nil, "closed" }, { s:send("x") })
      local r, err2 = cs.resolve("no-such-host.invalid")
      assert.is_nil(r)
      assert.equal(err, err2)
    end)
  end)

  it("cs.resolve returns literals as they are, names as address lists",
     function()
    net.run(function()
      assert.same({ "127.0.0.1" }, cs.resolve("127.0.0.1"))
      assert.same({ "::1" }, cs.resolve("::1"))
      local addrs = assert(cs.resolve("localhost"))
      assert.is_true(#addrs >= 1)
      for _, a in ipairs(addrs) do
        assert.truthy(a == "127.0.0.1" or a == "::1", a)
      end
    end)
  end)

  it("a bad host literal: \"failed to parse host name\"", function()
    net.run(function()
      local s = cs.socket.tcp()
      -- nginx's URL parser's reasons (recorded in spec/59)
      assert.same({ nil, 'failed to parse host name "[::1": invalid host' },
                  { s:connect("[::1", 80) })
      assert.same({ nil, 'failed to parse host name "::1": invalid port' },
                  { s:connect("::1", 80) }) -- IPv6 goes in brackets
      assert.same({ nil, 'failed to parse host name "[127.0.0.1]": '
                         .. "invalid IPv6 address" },
                  { s:connect("[127.0.0.1]", 80) })
      assert.same({ nil, 'failed to parse host name "127.0.0.1/x": '
                         .. "invalid host" },
                  { s:connect("127.0.0.1/x", 80) })
    end)
  end)

  it("connecting again closes the previous connection", function()
    net.run(function()
      local got
      local fds = helper.fds()
      local port1, _, t1 = net.serve(function(c)
        got = { c:receive() } -- the client's reconnect closes us
      end)
      local port2, _, t2 = net.serve(function(c) c:send("two\n") end)
      local s = cs.socket.tcp()
      assert.equal(1, s:connect("127.0.0.1", port1))
      cs.sleep(0.01) -- the server parks in receive
      assert.equal(1, s:connect("127.0.0.1", port2))
      assert.equal("two", s:receive())
      wait(t1)
      assert.same({ nil, "closed", "" }, got)
      wait(t2)
      assert.equal(fds + 1, helper.fds()) -- only s is left
      s:close()
      assert.equal(fds, helper.fds())
    end)
  end)

  it("checks its options", function()
    net.run(function()
      local s = cs.socket.tcp()
      assert.has_error(function() s:connect("127.0.0.1", 1, { pool = {} }) end)
      assert.has_error(function()
        s:connect("127.0.0.1", 1, { pool_size = 0 })
      end)
      assert.has_error(function()
        s:connect("127.0.0.1", 1, { pool_size = "x" })
      end)
      assert.has_error(function() s:connect({}, 1) end)
      assert.has_error(function() s:connect() end)
      assert.has_error(function() s.connect(nil, "127.0.0.1", 1) end)
      assert.has_error(function() s.connect({}, "127.0.0.1", 1) end)
    end)
  end)

  it("takes a numeric pool name (OpenResty: lua_tostring)", function()
    net.run(function()
      local port = net.serve(function(c) c:send("x\n") end)
      local s = cs.socket.tcp()
      assert.equal(1, s:connect("127.0.0.1", port, { pool = 42 }))
      assert.equal("x", s:receive())
      s:close()
    end)
  end)

  it("raises outside a light thread", function()
    local s = cs.socket.tcp()
    assert.has_error(function() s:connect("127.0.0.1", 1) end)
  end)
end)

describe("tcp:send", function()
  after_each(helper.after_each)

  it("sends a string and returns its length", function()
    net.run(function()
      local c, s = net.pair()
      assert.equal(11, c:send("hello world"))
      assert.equal("hello world", s:receive(11))
      c:close(); s:close()
    end)
  end)

  it("sends numbers as text", function()
    net.run(function()
      local c, s = net.pair()
      assert.equal(2, c:send(42))
      assert.equal(3, c:send(1.5))
      assert.equal(2, c:send(-7))
      assert.equal("421.5-7", s:receive(7))
      c:close(); s:close()
    end)
  end)

  -- LuaJIT writes numbers with "%.14g" (ngx_http_lua_write_num in
  -- tables): a whole float has no ".0"; integers stay exact
  it("writes floats as OpenResty does (%.14g), integers exactly", function()
    net.run(function()
      local c, s = net.pair()
      assert.equal(2, c:send(10.0))
      assert.equal(15, c:send(3.14159265357939723846))
      assert.equal("103.1415926535794", s:receive(17))
      -- a whole float in the int32 range is written as that int
      -- (ngx_http_lua_write_num), so -0.0 as "0", alone or in a table
      -- (recorded from OpenResty in spec/59)
      assert.equal(1, c:send(-0.0))
      assert.equal("0", s:receive(1))
      local t = { 3.0, "|", -0.0, "|", 1e15, "|", 2^53, "|",
                  math.tointeger(2^53), "|", 1/0, "|", 0.1, "|", 2^31 }
      local want = "3|0|1e+15|9.007199254741e+15|9007199254740992|inf|0.1"
                   .. "|2147483648"
      assert.equal(#want, c:send(t))
      assert.equal(want, s:receive(#want))
      assert.equal(3.0, t[1]) -- the caller's table is left alone
      c:close(); s:close()
    end)
  end)

  it("sends nested arrays of strings and numbers", function()
    net.run(function()
      local c, s = net.pair()
      assert.equal(7, c:send({ "a", { "b", 1, { "c", {} } }, 2.5, "" }))
      assert.equal("ab1c2.5", s:receive(7))
      assert.equal(0, c:send({}))
      assert.equal(0, c:send(""))
      c:close(); s:close()
    end)
  end)

  it("raises on values it cannot send", function()
    net.run(function()
      local c, s = net.pair()
      assert.has_error(function() c:send() end)
      assert.has_error(function() c:send(function() end) end)
      assert.error_matches(function() c:send({ "a", true }) end,
                           "bad data type boolean found")
      assert.error_matches(function() c:send({ "a", { {}, print } }) end,
                           "bad data type function found")
      assert.error_matches(function() c:send({ "a", nil, "b" }) end,
                           "bad data type nil found")
      assert.error_matches(function() c:send({ "a", x = "b" }) end,
                           "non%-array table found")
      -- nothing was sent
      c:settimeout(1)
      s:settimeout(30)
      assert.same({ nil, "timeout", "" }, { s:receive(1) })
      c:close(); s:close()
    end)
  end)

  it("copies the data: the caller may change the table at once, even "
     .. "while the send is parked", function()
    net.run(function()
      local c, s = net.pair()
      c:setoption("sndbuf", 65536)
      s:setoption("rcvbuf", 65536)
      local piece = net.payload(net.big(64 * 1024 * 64) // 64)
      local t = {}
      for i = 1, 64 do t[i] = piece end -- 4 MiB (64 KiB in short-I/O)
      local want = table.concat(t)
      local sender = spawn(function() return c:send(t) end)
      -- the sender is parked: the socket buffers are full
      assert.equal("socket write", net.parked_on(sender))
      for i = 1, 64 do t[i] = "changed" end
      t[65] = "extra"
      local got = assert(s:receive(#want))
      assert.is_true(got == want, "the data changed")
      assert.same({ true, #want }, { wait(sender) })
      c:close()
      assert.same({ nil, "closed", "" }, { s:receive(1) })
      s:close()
    end, { timeout = 20 })
  end)

  it("sends a large payload across many partial writes", function()
    net.run(function()
      local c, s = net.pair()
      c:setoption("sndbuf", 65536)
      s:setoption("rcvbuf", 65536)
      local data = net.payload(net.big(8 * 1024 * 1024))
      local reader = spawn(function()
        local parts, n = {}, 0
        while n < #data do
          local chunk = assert(s:receiveany(65536))
          parts[#parts + 1] = chunk
          n = n + #chunk
        end
        return table.concat(parts)
      end)
      assert.equal(#data, c:send(data))
      local ok, got = wait(reader)
      assert.is_true(ok)
      assert.is_true(got == data, "the data was altered")
      c:close(); s:close()
    end, { timeout = 30 })
  end)

  it("to a peer that closed: the first send is buffered, then an errno "
     .. "string, then \"closed\"", function()
    net.run(function()
      local c, s = net.pair()
      s:close()
      -- the kernel takes the first one (unless a short write parks it
      -- until the RST came back), then the errno string
      local ok, err = c:send("hello")
      if ok then
        assert.equal(5, ok)
        assert.is_true(net.wait_until(function()
          ok, err = c:send("again")
          return not ok
        end))
      end
      assert.is_nil(ok)
      assert.truthy(err == "broken pipe" or err == "connection reset by peer",
                    err)
      assert.same({ nil, "closed" }, { c:send("x") })
      -- as OpenResty: the error ended the write half only, so a receive
      -- still reads (and finds the end); then both halves are gone
      local data, rerr, partial = c:receive()
      assert.is_nil(data)
      assert.truthy(rerr == "closed" or rerr == "connection reset by peer",
                    rerr)
      assert.equal("", partial)
      assert.same({ nil, "closed" }, { c:receive() })
      assert.same({ nil, "closed" }, { c:close() })
    end)
  end)

  it("after close: nil, \"closed\"", function()
    net.run(function()
      local c, s = net.pair()
      assert.equal(1, c:close())
      assert.same({ nil, "closed" }, { c:send("x") })
      assert.same({ nil, "closed" }, { c:send({}) })
      s:close()
      assert.same({ nil, "closed" }, { cs.socket.tcp():send("never") })
    end)
  end)
end)

describe("tcp:receive", function()
  after_each(helper.after_each)

  it("reads lines by default, dropping every CR (\"*l\", \"l\")", function()
    net.run(function()
      local c = feed({ "one\r\ntw\ro\n\r\nthree\nfour\r\nla", "st" })
      assert.equal("one", c:receive())
      assert.equal("two", c:receive("*l"))
      assert.equal("", c:receive("l"))
      assert.equal("three", c:receive(nil))
      assert.equal("four", c:receive())
      assert.same({ nil, "closed", "last" }, { c:receive() })
      assert.same({ nil, "closed" }, { c:receive() })
      assert.equal(1, c:close()) -- 058 TEST 1: close after "closed" is 1
    end)
  end)

  it("assembles a line from many packets", function()
    net.run(function()
      local c = feed(bytes_of("split\r\nline\n"), 0.001)
      assert.equal("split", c:receive())
      assert.equal("line", c:receive())
      assert.same({ nil, "closed", "" }, { c:receive() })
      c:close()
    end)
  end)

  it("reads everything up to the peer's close (\"*a\", \"a\")", function()
    net.run(function()
      local c = feed({ "hello\r\n", "world" }, 0.01)
      assert.equal("hello", c:receive())
      assert.equal("world", c:receive("*a"))
      assert.equal(1, c:close()) -- 058 TEST 11
      local big = net.payload(net.big(300000))
      local c2 = feed({ big })
      assert.equal(big, c2:receive("a"))
      c2:close()
      local c3 = feed({})
      assert.equal("", c3:receive("*a"))
      c3:close()
    end)
  end)

  it("reads byte counts, numeric strings included", function()
    net.run(function()
      local c = feed({ "hello world", "!!abc" }, 0.01)
      assert.equal("hello", c:receive(5))
      assert.equal(" wor", c:receive("4"))
      assert.equal("ld!", c:receive(3)) -- across packets
      assert.equal("!", c:receive(1))
      assert.same({ nil, "closed", "abc" }, { c:receive(10) })
      c:close()
    end)
  end)

  it("receive(0) returns \"\" at once", function()
    net.run(function()
      local c, s = net.pair()
      c:settimeout(10)
      assert.equal("", c:receive(0))
      assert.equal("", c:receive("0"))
      c:close(); s:close()
    end)
  end)

  it("mixes patterns over one buffer", function()
    net.run(function()
      local c = feed({ "a line\r\n12345end of it--x--rest" })
      assert.equal("a line", c:receive())
      assert.equal("123", c:receive(3))
      assert.equal("4", c:receiveany(1))
      assert.equal("5", c:receive(1))
      local r = c:receiveuntil("--")
      assert.equal("end of it", r())
      assert.equal("x", r())
      assert.equal("rest", c:receive("*a"))
      c:close()
    end)
  end)

  it("raises on a bad pattern", function()
    net.run(function()
      local c, s = net.pair()
      for _, p in ipairs({ "*x", "x", "*", "**l", "", "-1", -1, {},
                           true, 0 / 0, math.huge }) do
        assert.error_matches(function() c:receive(p) end,
                             "bad pattern argument", nil, true, tostring(p))
      end
      -- a float count is truncated, as OpenResty's lua_tointeger on LuaJIT
      assert(s:send("abc"))
      assert.equal("a", c:receive(1.5))
      assert.equal("bc", c:receive("2.9"))
      assert.equal("", c:receive(0.5))
      c:close(); s:close()
    end)
  end)

  it("on a closed socket: nil, \"closed\" (a bad pattern still raises)",
     function()
    net.run(function()
      local c = cs.socket.tcp()
      assert.has_error(function() c:receive("*x") end)
      assert.same({ nil, "closed" }, { c:receive() })
      assert.same({ nil, "closed" }, { c:receive(10) })
      assert.same({ nil, "closed" }, { c:receiveany(10) })
      assert.same({ nil, "closed" }, { c:receiveuntil("x")() })
    end)
  end)

  it("returns a string with the partial data on a failure", function()
    net.run(function()
      local c = feed({ "abc" })
      local r = table.pack(c:receive(10))
      assert.same({ n = 3, nil, "closed", "abc" }, r)
      c:close()
    end)
  end)
end)

describe("tcp:receiveany", function()
  after_each(helper.after_each)

  it("returns what is there, up to max, and waits when nothing is",
     function()
    net.run(function()
      local c, s = net.pair()
      local go, posted = cs.semaphore.new(0), false
      spawn(function()
        s:send("hello")
        go:wait(10)
        s:send("world")
        s:close()
      end)
      -- everything that came, in pieces of at most max bytes
      local got = {}
      repeat
        local piece = assert(c:receiveany(3))
        assert.is_true(#piece >= 1 and #piece <= 3, piece)
        got[#got + 1] = piece
      until #table.concat(got) >= 5
      assert.equal("hello", table.concat(got))
      -- nothing is there: it waits for the 2nd packet, sent only once
      -- another thread lets the peer go on (no clock involved: a loaded
      -- machine under valgrind made a 30 ms bound flaky)
      spawn(function()
        cs.sleep(0.02)
        posted = true
        go:post(1)
      end)
      local w = c:receiveany(100)
      assert.is_true(posted)
      while #w < 5 do w = w .. assert(c:receiveany(100)) end
      assert.equal("world", w)
      assert.same({ nil, "closed", "" }, { c:receiveany(100) })
      c:close()
    end)
  end)

  it("raises on a bad max", function()
    net.run(function()
      local c, s = net.pair()
      for _, m in ipairs({ 0, -1, "0" }) do
        assert.error_matches(function() c:receiveany(m) end,
                             "bad max argument", nil, true, tostring(m))
      end
      -- OpenResty's messages (058 TEST 67)
      assert.error_matches(function() c:receiveany("x") end,
                           "bad max argument", nil, true)
      assert.error_matches(function() c:receiveany(nil) end,
                           "bad max argument", nil, true)
      assert.error_matches(function() c:receiveany() end,
                           "expecting 2 arguments (including the object), "
                           .. "but got 1", nil, true)
      assert.error_matches(function() c:receiveany(1, 2) end,
                           "expecting 2 arguments (including the object), "
                           .. "but got 3", nil, true)
      s:send("ab")
      assert.equal("a", c:receiveany(1.5)) -- truncated, as LuaJIT does
      assert.equal("b", c:receiveany(2 ^ 60)) -- no huge reservation
      c:close(); s:close()
    end)
  end)
end)

describe("tcp:receiveuntil", function()
  after_each(helper.after_each)

  it("returns the data before each occurrence, then nil, \"closed\", "
     .. "partial", function()
    net.run(function()
      local c = feed({ "hello--abc----world" })
      local r = c:receiveuntil("--")
      assert.equal("hello", r())
      assert.equal("abc", r())
      assert.equal("", r())
      assert.same({ nil, "closed", "world" }, { r() })
      c:close()
    end)
  end)

  it("appends the pattern when inclusive", function()
    net.run(function()
      local c = feed({ "hello--abc--world" })
      local r = c:receiveuntil("--", { inclusive = true })
      assert.equal("hello--", r())
      assert.equal("abc--", r())
      assert.same({ nil, "closed", "world" }, { r() })
      local c2 = feed({ "x--y" })
      local r2 = c2:receiveuntil("--", { inclusive = false })
      assert.equal("x", r2())
      c:close(); c2:close()
    end)
  end)

  it("with a size: chunks, then nil at the boundary (README example)",
     function()
    net.run(function()
      local c = feed({ "hello, world! -agentzh\r\n--abcedhb blah blah" })
      local r = c:receiveuntil("\r\n--abcedhb")
      local got = {}
      while true do
        local data, err, partial = r(4)
        if not data then
          assert.is_nil(err)
          assert.is_nil(partial)
          break
        end
        got[#got + 1] = data
      end
      assert.same({ "hell", "o, w", "orld", "! -a", "gent", "zh" }, got)
      assert.equal(" bla", r(4)) -- the next search
      assert.equal("h bl", r(4))
      c:close()
    end)
  end)

  it("with a size: the nil at the boundary is three nils, and the call "
     .. "after it looks for the next occurrence", function()
    net.run(function()
      local c = feed({ "abcd--efg--" })
      local r = c:receiveuntil("--")
      assert.equal("ab", r(2))
      assert.equal("cd", r(2))
      assert.equal("", r(2)) -- the chunk that ends at the pattern
      assert.same({ n = 3 }, table.pack(r(2)))
      assert.equal("ef", r(2))
      assert.equal("g", r(2))
      assert.same({ n = 3 }, table.pack(r(2)))
      assert.same({ nil, "closed", "" }, { r(2) })
      c:close()
    end)
  end)

  it("finds the pattern split across packets (one byte at a time)",
     function()
    net.run(function()
      local c = feed(bytes_of("aaa--bb-b--c-"), 0.001)
      local r = c:receiveuntil("--")
      assert.equal("aaa", r())
      assert.equal("bb-b", r())
      -- the "-" of a partial match is dropped at the end (OpenResty)
      assert.same({ nil, "closed", "c" }, { r() })
      c:close()
    end)
  end)

  it("handles self-overlapping patterns split across packets", function()
    net.run(function()
      local c = feed(bytes_of("aaab" .. "aabaab" .. "ababaab" .. "x"), 0.001)
      local r = c:receiveuntil("aab")
      assert.equal("a", r())
      assert.equal("", r())
      assert.equal("", r())
      assert.equal("abab", r())
      assert.same({ nil, "closed", "x" }, { r() })
      c:close()
      -- the same with a size: no byte is lost or duplicated
      local data = "xaaxaaaxaabaaaab" .. "aabyy"
      local c2 = feed(bytes_of(data), 0.001)
      local r2 = c2:receiveuntil("aaab")
      local rebuilt = {}
      for _ = 1, 40 do
        local d, err, partial = r2(3)
        if d then
          -- the bytes of a failed partial match go out whole, as in
          -- OpenResty, even past the size
          assert.is_true(#d <= 3 + #"aaab" - 1, d)
          rebuilt[#rebuilt + 1] = d
        elseif err then
          assert.equal("closed", err)
          rebuilt[#rebuilt + 1] = partial
          break
        else
          rebuilt[#rebuilt + 1] = "aaab" -- the boundary
        end
      end
      assert.equal(data, table.concat(rebuilt))
      c2:close()
    end)
  end)

  it("drops the bytes of a partial match when the stream ends inside it "
     .. "(as OpenResty), not those of a failed one", function()
    net.run(function()
      local c = feed({ "data-", "-x-" }, 0.01)
      local r = c:receiveuntil("---")
      assert.same({ nil, "closed", "data--x" }, { r() })
      c:close()
    end)
  end)

  it("rejects an empty pattern with nil, \"pattern is empty\"", function()
    net.run(function()
      local c, s = net.pair()
      assert.same({ nil, "pattern is empty" }, { c:receiveuntil("") })
      c:close(); s:close()
    end)
  end)

  it("raises on bad arguments", function()
    net.run(function()
      local c, s = net.pair()
      assert.error_matches(function()
        c:receiveuntil("x", { inclusive = 1 })
      end, 'bad "inclusive" option value type: number')
      assert.has_error(function() c:receiveuntil() end)
      assert.has_error(function() c:receiveuntil("x", "y") end)
      local r = c:receiveuntil("x")
      assert.has_error(function() r("abc") end)
      c:close(); s:close()
    end)
  end)

  it("works after the socket is connected again", function()
    net.run(function()
      local p1 = net.serve(function(c) c:send("one|") end)
      local p2 = net.serve(function(c) c:send("two|") end)
      local s = cs.socket.tcp()
      local r = s:receiveuntil("|")
      assert(s:connect("127.0.0.1", p1))
      assert.equal("one", r())
      assert(s:connect("127.0.0.1", p2))
      assert.equal("two", r())
      s:close()
    end)
  end)
end)

describe("tcp:setoption(\"maxline\")", function()
  after_each(helper.after_each)

  it("bounds \"*l\": nil, \"line too long\", partial", function()
    net.run(function()
      local c = feed({ "short\nthis line is too long\n" }, nil, true)
      assert.is_true(c:setoption("maxline", 10))
      assert.equal(10, c:getoption("maxline"))
      assert.equal("short", c:receive())
      assert.same({ nil, "line too long", "this line " }, { c:receive() })
      assert.same({ nil, "closed" }, { c:receive() })
      c:close()
    end)
  end)

  it("bounds receiveuntil without a size, not with one", function()
    net.run(function()
      local c = feed({ "0123456789abcdef--" }, nil, true)
      c:setoption("maxline", 8)
      local r = c:receiveuntil("--")
      assert.same({ nil, "line too long", "01234567" }, { r() })
      local c2 = feed({ "0123456789abcdef--" }, nil, true)
      c2:setoption("maxline", 8)
      local r2 = c2:receiveuntil("--")
      assert.equal("0123456789", r2(10))
      assert.equal("abcdef", r2(10))
      c:close(); c2:close()
    end)
  end)

  it("defaults to 1 MiB", function()
    net.run(function()
      local c = feed({ ("x"):rep(1024 * 1024 + 10) .. "\n" })
      assert.equal(1024 * 1024, c:getoption("maxline"))
      local ok, err, partial = c:receive()
      assert.is_nil(ok)
      assert.equal("line too long", err)
      assert.equal(1024 * 1024, #partial)
      c:close()
    end, { timeout = net.short_io and 60 or 10 }) -- 1 MiB, a byte a call
  end)

  it("raises on a bad value", function()
    net.run(function()
      local c = cs.socket.tcp()
      assert.has_error(function() c:setoption("maxline", 0) end)
      assert.has_error(function() c:setoption("maxline", "x") end)
    end)
  end)
end)

describe("tcp:setoption / getoption", function()
  after_each(helper.after_each)

  it("sets the OpenResty options and returns true", function()
    net.run(function()
      local c, s = net.pair()
      assert.is_true(c:setoption("keepalive", true))
      assert.equal(1, c:getoption("keepalive"))
      assert.is_true(c:setoption("keepalive", false))
      assert.equal(0, c:getoption("keepalive"))
      assert.is_true(c:setoption("tcp-nodelay", true))
      assert.equal(1, c:getoption("tcp-nodelay"))
      assert.is_true(c:setoption("reuseaddr", 1))
      assert.equal(1, c:getoption("reuseaddr"))
      assert.is_true(c:setoption("sndbuf", 65536))
      assert.is_true(c:getoption("sndbuf") >= 65536)
      assert.is_true(c:setoption("rcvbuf", 65536))
      assert.is_true(c:getoption("rcvbuf") >= 65536)
      c:close(); s:close()
    end)
  end)

  it("answers bad names and missing values with nil, err "
     .. "(as lua-resty-core)", function()
    net.run(function()
      local c, s = net.pair()
      assert.same({ nil, "unsupported option foo" }, { c:setoption("foo", 1) })
      assert.same({ nil, "unsupported option foo" }, { c:getoption("foo") })
      assert.same({ nil, 'missing the "option" argument' },
                  { c:setoption(nil, 1) })
      assert.same({ nil, 'missing the "value" argument' },
                  { c:setoption("keepalive") })
      assert.same({ nil, 'missing the "option" argument' },
                  { c:getoption() })
      assert.has_error(function() c:setoption("sndbuf", "big") end)
      c:close(); s:close()
    end)
  end)

  it("on a closed socket: nil, \"closed\"", function()
    net.run(function()
      local c, s = net.pair()
      c:close(); s:close()
      assert.same({ nil, "closed" }, { c:setoption("keepalive", true) })
      assert.same({ nil, "closed" }, { c:getoption("keepalive") })
      -- a failed connect made it too (lua-resty-core: cosocket[1] is set)
      local f = cs.socket.tcp()
      assert.is_nil(f:connect("127.0.0.1", 1))
      assert.same({ nil, "closed" }, { f:setoption("keepalive", true) })
    end)
  end)

  it("raises on a socket connect was never called on (lua-resty-core); "
     .. "maxline, ours, is allowed", function()
    net.run(function()
      local c = cs.socket.tcp()
      assert.error_matches(function() c:setoption("keepalive", true) end,
                           "socket is never created nor connected")
      assert.error_matches(function() c:getoption("keepalive") end,
                           "socket is never created nor connected")
      assert.is_true(c:setoption("maxline", 10))
      assert.equal(10, c:getoption("maxline"))
    end)
  end)
end)

describe("tcp:close", function()
  after_each(helper.after_each)

  it("returns 1, then nil, \"closed\"", function()
    net.run(function()
      local c, s = net.pair()
      local fds = helper.fds()
      assert.equal(1, c:close())
      assert.equal(fds - 1, helper.fds())
      assert.same({ nil, "closed" }, { c:close() })
      assert.same({ nil, "closed" }, { cs.socket.tcp():close() })
      assert.same({ nil, "closed", "" }, { s:receive() })
      s:close()
    end)
  end)

  it("closes at the end of a to-be-closed variable", function()
    net.run(function()
      local c0, s = net.pair()
      do
        local c <close> = c0
        assert.equal(1, c:send("x"))
      end
      assert.same({ nil, "closed" }, { c0:send("x") })
      assert.equal("x", s:receive(1))
      s:close()
    end)
  end)

  it("has a tostring", function()
    net.run(function()
      local c, s = net.pair()
      assert.matches("^corosched%.tcp %(fd %d+%)", tostring(c))
      c:close(); s:close()
      assert.matches("^corosched%.tcp %(closed%)", tostring(c))
    end)
  end)
end)

-- lua-nginx-module's tcpsock:bind (t/168-tcp-socket-bind.t; "ip:port"
-- since lua-nginx-module PR 2381)
describe("tcp:bind", function()
  after_each(helper.after_each)

  -- connects c to a fresh listener; the address the server sees
  local function seen_from(c)
    local srv, port = net.listen()
    local ok, err = c:connect("127.0.0.1", port)
    if not ok then srv:close(); return nil, err end
    local s = assert(srv:accept())
    srv:close()
    local host, sport = s:getpeername()
    s:close()
    return host, sport
  end

  it("binds the next connects to a local address", function()
    net.run(function()
      local c = cs.socket.tcp()
      assert.same({ true }, { c:bind("127.0.0.2") })
      assert.equal("127.0.0.2", (seen_from(c)))
      assert.equal("127.0.0.2", (c:getsockname()))
      c:close()
      -- it stays for the next connect, and a later bind replaces it
      assert.equal("127.0.0.2", (seen_from(c)))
      c:close()
      assert.is_true(c:bind("127.0.0.3"))
      assert.equal("127.0.0.3", (seen_from(c)))
      c:close()
    end)
  end)

  it("takes ip:port", function()
    net.run(function()
      local c = cs.socket.tcp()
      local port = net.free_port()
      assert.is_true(c:bind("127.0.0.2:" .. port))
      assert.same({ "127.0.0.2", port }, { seen_from(c) })
      c:close()
      assert.is_true(c:bind("[::1]:" .. port)) -- parsed; fails at connect
      assert.is_true(c:bind("::1"))
    end)
  end)

  it("says \"bad address\" for what is not an IP address", function()
    net.run(function()
      local c = cs.socket.tcp()
      for _, bad in ipairs({ "localhost", "example.com", "unix:/tmp/x",
                             "1.2.3", "", "127.0.0.1:", "127.0.0.1:0",
                             "127.0.0.1:65536", "127.0.0.1:8x",
                             "[::1]:", "[::1]x", "[1.2.3.4]:80",
                             "1::2::3:80" }) do -- (not an IPv6 address)
        assert.same({ nil, "bad address" }, { c:bind(bad) }, bad)
      end
      -- a failed bind leaves the earlier one alone, and connect works
      assert.is_true(c:bind("127.0.0.2"))
      assert.same({ nil, "bad address" }, { c:bind("nope") })
      assert.equal("127.0.0.2", (seen_from(c)))
      c:close()
    end)
  end)

  it("makes connect fail when the address cannot be bound", function()
    net.run(function()
      local fds = helper.fds()
      local c = cs.socket.tcp()
      assert.is_true(c:bind("8.8.8.8")) -- not an address of this host
      assert.same({ nil, "cannot assign requested address" },
                  { seen_from(c) })
      assert.same({ nil, "closed" }, { c:send("x") })
      assert.is_true(c:bind("::1")) -- the wrong family for the peer
      local ok, err = seen_from(c)
      assert.is_nil(ok)
      assert.is_string(err)
      c:close()
      assert.equal(fds, helper.fds())
    end)
  end)

  it("goes with pooled connections (t/168 TEST 3)", function()
    net.run(function()
      local srv, port = net.listen()
      spawn(function()
        local s = srv:accept()
        s:receive("*a")
        s:close()
      end)
      local reused = {}
      for i = 1, 2 do
        local c = cs.socket.tcp()
        assert.is_true(c:bind("127.0.0.1"))
        assert.equal(1, c:connect("127.0.0.1", port))
        reused[i] = c:getreusedtimes()
        assert.equal(1, c:setkeepalive())
      end
      assert.same({ 0, 1 }, reused)
      local c = cs.socket.tcp()
      assert.equal(1, c:connect("127.0.0.1", port))
      c:close()
      srv:close()
    end)
  end)

  it("raises for wrong arguments", function()
    net.run(function()
      local c = cs.socket.tcp()
      assert.has_error(function() c:bind() end,
                       "expecting 2 arguments, but got 1")
      assert.has_error(function() c:bind("127.0.0.1", 80) end,
                       "expecting 2 arguments, but got 3")
      assert.error_matches(function() c:bind({}) end,
                           "bad argument #1 to 'bind' %(string expected")
      assert.error_matches(function() cs.socket.tcp().bind(1, "1.2.3.4") end,
                           "corosched.tcp expected")
    end)
  end)
end)

describe("tcp:getpeername / getsockname", function()
  after_each(helper.after_each)

  it("give the addresses and ports of both ends", function()
    net.run(function()
      local srv, port = net.listen()
      assert.same({ "127.0.0.1", port }, { srv:getsockname() })
      local c = cs.socket.tcp()
      assert(c:connect("127.0.0.1", port))
      local s = assert(srv:accept())
      srv:close()
      assert.same({ "127.0.0.1", port }, { c:getpeername() })
      local host, cport = c:getsockname()
      assert.equal("127.0.0.1", host)
      assert.is_true(cport > 0 and cport ~= port)
      assert.same({ host, cport }, { s:getpeername() })
      assert.same({ "127.0.0.1", port }, { s:getsockname() })
      c:close(); s:close()
      assert.same({ nil, "closed" }, { c:getpeername() })
      assert.same({ nil, "closed" }, { c:getsockname() })
      assert.same({ nil, "closed" }, { srv:getsockname() })
    end)
  end)

  it("work on IPv6 loopback when it is there", function()
    net.run(function()
      local srv = cs.socket.listen("::1", 0)
      if not srv then return end -- no IPv6 here
      local _, port = srv:getsockname()
      local c = cs.socket.tcp()
      assert.equal(1, c:connect("[::1]", port)) -- in brackets, as nginx
      local s = assert(srv:accept())
      assert.same({ "::1", port }, { c:getpeername() })
      s:close()
      -- a port in the host string wins, as in OpenResty
      assert.equal(1, c:connect("[::1]:" .. port, 1))
      s = assert(srv:accept())
      assert.same({ "::1", port }, { c:getpeername() })
      srv:close(); c:close(); s:close()
    end)
  end)
end)

describe("tcp methods", function()
  after_each(helper.after_each)

  it("raise on a wrong self", function()
    net.run(function()
      local c = cs.socket.tcp()
      for _, m in ipairs({ "connect", "send", "receive", "receiveany",
                           "receiveuntil", "close", "setkeepalive",
                           "getreusedtimes", "settimeout", "settimeouts",
                           "setoption", "getoption", "getpeername",
                           "getsockname" }) do
        assert.has_error(function() c[m]({}) end, nil, m)
        assert.has_error(function() c[m](nil) end, nil, m)
      end
    end)
  end)

  it("settimeout(s) raise on a bad value", function()
    local c = cs.socket.tcp()
    assert.has_error(function() c:settimeout(-1) end)
    -- what is no number is 0, the default (OpenResty's lua_tonumber)
    assert.has_no_error(function() c:settimeout("x") end)
    assert.has_error(function() c:settimeouts(1, -1, 1) end)
    assert.has_error(function() c:settimeout(2 ^ 31) end)
    assert.has_no_error(function() c:settimeout(0) end)
    assert.has_no_error(function() c:settimeouts(1, 2, 3) end)
  end)
end)

describe("cs.socket.listen", function()
  after_each(helper.after_each)

  it("accepts connections and closes", function()
    net.run(function()
      local srv, port = net.listen({ backlog = 16, reuseaddr = true })
      local c = cs.socket.tcp()
      assert(c:connect("127.0.0.1", port))
      local s = assert(srv:accept())
      assert.equal(1, srv:close())
      assert.same({ nil, "closed" }, { srv:close() })
      assert.same({ nil, "closed" }, { srv:accept() })
      assert(c:send("x"))
      assert.equal("x", s:receive(1))
      c:close(); s:close()
    end)
  end)

  it("times accept out with settimeout", function()
    net.run(function()
      local srv = net.listen()
      srv:settimeout(50)
      local dt, ok, err = net.timed(srv.accept, srv)
      assert.same({ nil, "timeout" }, { ok, err })
      assert.is_true(dt >= 0.045, dt)
      assert.is_true(dt < 2 * helper.slack, dt)
      srv:close()
    end)
  end)

  it("says \"address already in use\", or needs a numeric address",
     function()
    net.run(function()
      local srv, port = net.listen()
      assert.same({ nil, "address already in use" },
                  { cs.socket.listen("127.0.0.1", port, { reuseaddr = false }) })
      assert.same({ nil, "listen needs a numeric address" },
                  { cs.socket.listen("example.invalid", 0) })
      assert.has_error(function() cs.socket.listen("127.0.0.1", 70000) end)
      srv:close()
    end)
  end)

  it("\"*\" listens on every address, \"localhost\" on 127.0.0.1", function()
    net.run(function()
      local srv = assert(cs.socket.listen("*", 0))
      assert.equal("0.0.0.0", (srv:getsockname()))
      srv:close()
      srv = assert(cs.socket.listen("localhost", 0))
      assert.equal("127.0.0.1", (srv:getsockname()))
      srv:close()
    end)
  end)
end)


describe("tcp with a real program as the peer", function()
  after_each(helper.after_each)

  local it_socat = net.which("socat") and it or pending

  -- socat echoes what it reads (PIPE); the port is chosen here, so wait
  -- until it listens
  local function socat_echo()
    local port = net.free_port()
    local proc = io.popen(("env -u LD_PRELOAD "
                           .. "socat TCP-LISTEN:%d,bind=127.0.0.1,reuseaddr "
                           .. "PIPE 2>&1"):format(port), "r")
    return port, proc
  end

  local function connect_retry(port)
    local s = cs.socket.tcp()
    local deadline = helper.clock() + 5 * helper.slack
    while true do
      local ok, err = s:connect("127.0.0.1", port)
      if ok then return s end
      assert.equal("connection refused", err)
      assert.is_true(helper.clock() < deadline, "socat did not listen")
      cs.sleep(0.01)
    end
  end

  it_socat("socat echo: every pattern over a real peer (skipped without "
           .. "socat)", function()
    local port, proc = socat_echo()
    net.run(function()
      local s = connect_retry(port)
      local big = net.payload(net.big(1024 * 1024))
      local reader = spawn(function() return s:receive(#big) end)
      assert.equal(#big, s:send(big))
      local ok, got = wait(reader)
      assert.is_true(ok)
      assert.is_true(got == big, "the echo differs")
      assert(s:send({ "one\r\n", "two\n", "x--y--", "abcdef" }))
      assert.equal("one", s:receive())
      assert.equal("two", s:receive("*l"))
      local r = s:receiveuntil("--")
      assert.equal("x", r())
      assert.equal("y", r())
      assert.equal("abc", s:receive(3))
      local rest = s:receiveany(10)
      while #rest < 3 do rest = rest .. s:receiveany(10) end
      assert.equal("def", rest)
      s:settimeout(50)
      assert.same({ nil, "timeout", "" }, { s:receive() })
      assert.equal(1, s:close()) -- socat sees the end and exits
    end)
    proc:read("a")
    proc:close()
  end)
end)
