-- Conformance with lua-nginx-module's own tests of cosocket timeouts,
-- receiveuntil, receiveany and duplex use: each block below replays one
-- "=== TEST N" on corosched through the ngx global of corosched.ngx and
-- asserts what its --- response_body says (one ngx.say line per element).
-- The nginx side (a location answering, memcached on its port, an
-- unreachable host) is a corosched peer on 127.0.0.1 sending the same
-- bytes. Where OpenResty's test needed mockeagain to stall a send, the
-- peer stops reading and the payload outgrows the socket buffers.
--
-- Covered / skipped, by file (lua-nginx-module t/):
-- 065-tcp-socket-timeout.t: 2, 7, 12, 17, 18, 21, 23 as written; 3, 4, 8,
--   9, 13, 14 adapted (there is no lua_socket_*_timeout directive: they
--   check that settimeout(nil/0) restores the 60 s default); 5, 10, 15
--   ("-1 is bad timeout value", a 500 in nginx: here the error raised);
--   22 without f's close() (README: close() from another thread wakes the
--   parked one). Skipped: 1, 6, 11 (only a config directive), 16, 19, 20
--   (ngx.exit, ngx.req.socket).
-- 066-socket-receiveuntil.t: 1-18, 20-24; 19 on an accepted socket (for
--   ngx.req.socket()); 8, 9, 16, 18, 20, 23, 24 set lua_socket_buffer_size
--   to 1-3 bytes: here the peer writes the body a byte at a time. Skipped:
--   25, 26 (README: a sized iterator's chunks are exactly `size` bytes;
--   OpenResty returns "ab1" for reader(2) there).
-- 128-duplex-tcp-socket.t: 1, 2, 3; 5, 7, 8 without f's close() (README,
--   as above). Skipped: 4 (README: a read error closes the socket and send
--   then says "closed"), 6 (needs a resolver directive).
-- 147-tcp-socket-timeouts.t: 1-10; 6 and 7 play the raw request socket
--   with the accepted connection; gaps and timeouts are 100/30/300 ms
--   instead of 120/100/200 ms for a wider margin.
-- receiveany: 156-slow-network.t 1 (with receiveany(1024) as in later
--   copies of the test: the stored one calls receiveany() without max,
--   which 058 TEST 67 refuses); 058-tcp-socket.t 65, 67, 68, 69. Skipped:
--   058 66 (README: read error, then send says "closed"), 058 73 (depends
--   on how nginx splits its keep-alive responses and on epoll's RDHUP).
-- Timeouts of 300-500 ms in the tests are 100 ms here (128 TEST 5, 7, 8,
-- 147 TEST 4); where a test needs no timeout, none is asserted.
--
-- Differences from OpenResty that are not in the README are left pending,
-- marked DIVERGENCE, with OpenResty's expectation in the body.
local helper = require "spec.helper"
local net = require "spec.support.net"
local cs = helper.cs
local ngxc = require "corosched.ngx"
local ngx_env = require "spec.support.ngx_env"

-- short-I/O mode: every recv gives one byte; tests whose output shows how
-- many bytes one read returns, or that must fill the socket buffers, are
-- left pending there
local it_full_io = net.short_io and pending or it

-- the ngx global and what install() adds are put back after each test
local save, restore_globals = ngx_env.saver()
local function save_globals()
  save()
  ngxc.install()
end

-- what ngx.say would print: one string per call, nil as "nil"
local function recorder()
  local out = {}
  return out, function(...)
    local t = table.pack(...)
    for i = 1, t.n do t[i] = tostring(t[i]) end
    out[#out + 1] = table.concat(t, "", 1, t.n)
  end
end

local function has_line(out, line)
  for _, l in ipairs(out) do
    if l == line then return true end
  end
  return false
end

---------------------------------------------------------------------------
-- the nginx side

local REQ = "GET /foo HTTP/1.0\r\nHost: localhost\r\nConnection: close\r\n"
  .. "\r\n"

-- the head nginx sends (server_tokens off, Date cleared); `length` adds
-- the Content-Length that content_by_lua computes for HTTP/1.0
local function head(length)
  return "HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Type: text/plain\r\n"
    .. (length and ("Content-Length: " .. length .. "\r\n") or "")
    .. "Connection: close\r\n\r\n"
end

-- `location /foo`: one request, answered with head(#body) (or without a
-- length: opts.echo, the echo module) and body. opts.delay: seconds before
-- the answer; opts.bytewise: the body a byte at a time (for
-- lua_socket_buffer_size 1-3); opts.pieces: the body in these pieces,
-- 10 ms apart after the head (ngx.flush + ngx.sleep(0.01)).
local function foo_location(body, opts)
  opts = opts or {}
  return net.serve(function(c)
    c:setoption("tcp-nodelay", true)
    local req = c:receiveuntil("\r\n\r\n")()
    if req == nil then return end
    if opts.delay then cs.sleep(opts.delay) end
    if opts.pieces then
      local len = 0
      for _, p in ipairs(opts.pieces) do len = len + #p end
      if not c:send(head(len)) then return end
      for _, p in ipairs(opts.pieces) do
        cs.sleep(0.01)
        if not c:send(p) then return end
      end
      return
    end
    local h = head(not opts.echo and #body or nil)
    if not opts.bytewise then
      c:send(h .. body)
      return
    end
    c:send(h)
    for i = 1, #body do
      cs.sleep(0.001)
      if not c:send(body:sub(i, i)) then return end
    end
  end)
end

-- memcached on its port: "flush_all" gets OK, "get <key>" END (an empty
-- cache), until the client closes
local function memcached(n)
  return net.serve(function(c)
    c:setoption("tcp-nodelay", true)
    while true do
      local line = c:receive()
      if not line then break end
      if line == "flush_all" then
        c:send("OK\r\n")
      elseif line:find("^get ") then
        c:send("END\r\n")
      end
    end
  end, n)
end

-- a peer that stops reading (mockeagain's write timeout pattern): small
-- socket buffers; it reads nothing until release() is called, then
-- drains and closes. Returns the port and release.
local function stalled_peer()
  local sema = cs.semaphore.new(0)
  local port = net.serve(function(c)
    c:setoption("rcvbuf", 65536)
    sema:wait(30)
    c:settimeout(2000)
    c:receive("*a")
  end)
  return port, function() sema:post(1) end
end

-- a payload that cannot fit in the socket buffers of a stalled peer
local function stuck(s, data)
  s:setoption("sndbuf", 65536)
  return data:rep((16 * 1024 * 1024) // #data)
end

-- takes the idle connection of the pool of 127.0.0.1:port and closes it
local function drain_pool(port)
  local s = ngx.socket.tcp()
  assert(s:connect("127.0.0.1", port))
  local reused = s:getreusedtimes()
  s:close()
  return reused
end

describe("conformance with lua-nginx-module (timeouts, receiveuntil, "
         .. "receiveany, duplex)", function()
  before_each(save_globals)
  after_each(function()
    restore_globals()
    helper.after_each()
  end)

  -------------------------------------------------------------------------
  describe("t/065-tcp-socket-timeout.t", function()
    it("065 TEST 2: sock:settimeout() overrides the connect timeout",
       function()
      net.run(function()
        local out, say = recorder()
        local port, done = net.full_listener()
        local sock = ngx.socket.tcp()
        sock:settimeout(150)
        local ok, err = sock:connect("127.0.0.1", port)
        if not ok then
          say("failed to connect: ", err)
        else
          say("connected: ", ok)
        end
        done()
        assert.same({ "failed to connect: timeout" }, out)
      end)
    end)

    for _, v in ipairs({ { 3, "nil" }, { 4, "0" } }) do
      it(("065 TEST %d: sock:settimeout(%s) does not override the "
          .. "default connect timeout (60 s here: still connecting after "
          .. "0.1 s)"):format(v[1], v[2]), function()
        net.run(function()
          local port, done = net.full_listener()
          local sock = ngx.socket.tcp()
          sock:settimeout(30)
          sock:settimeout(tonumber(v[2]))
          local t = ngx.thread.spawn(function()
            return sock:connect("127.0.0.1", port)
          end)
          ngx.sleep(0.1)
          assert.equal("socket connect", net.parked_on(t))
          assert.equal(1, ngx.thread.kill(t))
          done()
        end)
      end)
    end

    for _, n in ipairs({ 5, 10, 15 }) do
      it(("065 TEST %d: -1 is bad timeout value"):format(n), function()
        net.run(function()
          local sock = ngx.socket.tcp()
          assert.same({ false, "bad timeout value" },
                      { pcall(sock.settimeout, sock, -1) })
        end)
      end)
    end

    it("065 TEST 7: sock:settimeout() overrides the read timeout",
       function()
      net.run(function()
        local out, say = recorder()
        local port = memcached()
        local sock = ngx.socket.tcp()
        local ok, err = sock:connect("127.0.0.1", port)
        if not ok then say("failed to connect: ", err) return end
        say("connected: ", ok)
        sock:settimeout(150)
        local line
        line, err = sock:receive()
        if line then
          say("received: ", line)
        else
          say("failed to receive: ", err)
        end
        sock:close()
        assert.same({ "connected: 1", "failed to receive: timeout" }, out)
      end)
    end)

    for _, v in ipairs({ { 8, "nil" }, { 9, "0" } }) do
      it(("065 TEST %d: sock:settimeout(%s) does not override the "
          .. "default read timeout (60 s here: an answer after 0.1 s "
          .. "arrives)"):format(v[1], v[2]), function()
        net.run(function()
          local out, say = recorder()
          local port = net.serve(function(c)
            cs.sleep(0.1)
            c:send("late\r\n")
            c:receive()
          end)
          local sock = ngx.socket.tcp()
          local ok, err = sock:connect("127.0.0.1", port)
          if not ok then say("failed to connect: ", err) return end
          say("connected: ", ok)
          sock:settimeout(30)
          sock:settimeout(tonumber(v[2]))
          local line
          line, err = sock:receive()
          if line then
            say("received: ", line)
          else
            say("failed to receive: ", err)
          end
          sock:close()
          assert.same({ "connected: 1", "received: late" }, out)
        end)
      end)
    end

    it_full_io("065 TEST 12: sock:settimeout() overrides the send timeout",
       function()
      net.run(function()
        local out, say = recorder()
        local port, release = stalled_peer()
        local sock = ngx.socket.tcp()
        local ok, err = sock:connect("127.0.0.1", port)
        if not ok then say("failed to connect: ", err) return end
        say("connected: ", ok)
        sock:settimeout(150)
        local bytes
        bytes, err = sock:send(stuck(sock, "get helloworld!"))
        if bytes then
          say("sent: ", bytes)
        else
          say("failed to send: ", err)
        end
        sock:close()
        release()
        assert.same({ "connected: 1", "failed to send: timeout" }, out)
      end, { timeout = 10 })
    end)

    for _, v in ipairs({ { 13, "nil" }, { 14, "0" } }) do
      it_full_io(("065 TEST %d: sock:settimeout(%s) does not override the "
          .. "default send timeout (60 s here: the peer reads after 0.1 s "
          .. "and the send completes)"):format(v[1], v[2]), function()
        net.run(function()
          local out, say = recorder()
          local port, release = stalled_peer()
          local sock = ngx.socket.tcp()
          local ok, err = sock:connect("127.0.0.1", port)
          if not ok then say("failed to connect: ", err) return end
          say("connected: ", ok)
          sock:settimeout(30)
          sock:settimeout(tonumber(v[2]))
          local data = stuck(sock, "get helloworld!")
          ngx.thread.spawn(function()
            ngx.sleep(0.1)
            release()
          end)
          local bytes
          bytes, err = sock:send(data)
          if bytes then
            say("sent: ", bytes)
          else
            say("failed to send: ", err)
          end
          sock:close()
          assert.same({ "connected: 1", "sent: " .. #data }, out)
        end, { timeout = 10 })
      end)
    end

    it("065 TEST 17: re-connect after timed out", function()
      net.run(function()
        local out, say = recorder()
        local port, done = net.full_listener()
        local server_port = net.serve(function() end)
        local sock = ngx.socket.tcp()
        sock:settimeout(100) -- lua_socket_connect_timeout 100ms
        local ok, err = sock:connect("127.0.0.1", port)
        if not ok then
          say("1: failed to connect: ", err)
          ok, err = sock:connect("127.0.0.1", server_port)
          if not ok then
            say("2: failed to connect: ", err)
          else
            say("2: connected: ", ok)
          end
        else
          say("1: connected: ", ok)
        end
        sock:close()
        done()
        assert.same({ "1: failed to connect: timeout", "2: connected: 1" },
                    out)
      end)
    end)

    it_full_io("065 TEST 18: re-send on the same object after a send "
       .. "timeout happens", function()
      net.run(function()
        local out, say = recorder()
        local port, release = stalled_peer()
        local sock = ngx.socket.tcp()
        sock:settimeout(100) -- lua_socket_send_timeout 100ms
        local ok, err = sock:connect("127.0.0.1", port)
        if not ok then say("failed to connect: ", err) return end
        say("connected: ", ok)
        local bytes
        bytes, err = sock:send(stuck(sock, "get helloworld!"))
        if bytes then
          say("sent: ", bytes)
        else
          say("failed to send: ", err)
          bytes, err = sock:send("blah")
          if not bytes then
            say("failed to send again: ", err)
          end
        end
        sock:close()
        release()
        assert.same({ "connected: 1", "failed to send: timeout",
                      "failed to send again: closed" }, out)
      end, { timeout = 10 })
    end)

    it("065 TEST 21: read timeout on receive(N)", function()
      net.run(function()
        local out, say = recorder()
        local port = memcached()
        local sock = ngx.socket.tcp()
        local ok, err = sock:connect("127.0.0.1", port)
        if not ok then say("failed to connect: ", err) return end
        say("connected: ", ok)
        sock:settimeout(10)
        local line
        line, err = sock:receive(3)
        if line then
          say("received: ", line)
        else
          say("failed to receive: ", err)
        end
        sock:close()
        assert.same({ "connected: 1", "failed to receive: timeout" }, out)
      end)
    end)

    it_full_io("065 TEST 22: concurrent operations while writing "
       .. "(without f's close())", function()
      net.run(function()
        local out, say = recorder()
        local port, release = stalled_peer()
        local sock = ngx.socket.tcp()
        local ready = false

        local function f()
          while not ready do
            ngx.sleep(0.001)
          end
          -- mockeagain stalls the send at once; here the buffers fill
          -- first: wait until no byte moves any more
          ngx.sleep(0.05)
          local bytes, err = sock:send("flush_all")
          say("send: ", bytes, " ", err)
          -- (here OpenResty's f calls close(): "socket busy writing")
          local ok
          ok, err = sock:getreusedtimes()
          say("getreusedtimes: ", ok, " ", err)
          ok, err = sock:setkeepalive()
          say("setkeepalive: ", ok, " ", err)
          ok, err = sock:connect("127.0.0.1", port)
          say("connect: ", ok, " ", err)
          sock:settimeout(1)
          local res
          res, err = sock:receive(1)
          say("receive: ", res, " ", err)
        end

        local th = ngx.thread.spawn(f)
        local ok, err = sock:connect("127.0.0.1", port)
        say("connect: ", ok, " ", err)
        ready = true
        sock:settimeout(300)
        local bytes
        bytes, err = sock:send(stuck(sock, "get helloworld!"))
        if not bytes then
          say("send failed: ", err)
        end
        ok, err = sock:close()
        say("close: ", ok, " ", err)
        ngx.thread.wait(th)
        release()
        assert.same({
          "connect: 1 nil",
          "send: nil socket busy writing",
          "getreusedtimes: 0 nil",
          "setkeepalive: nil socket busy writing",
          "connect: nil socket busy writing",
          "receive: nil timeout",
          "send failed: timeout",
          "close: 1 nil",
        }, out)
      end, { timeout = 10 })
    end)

    it("065 TEST 23: timeout overflow detection", function()
      net.run(function()
        local out, say = recorder()
        local sock = ngx.socket.tcp()
        local ok, err = pcall(sock.settimeout, sock, (2 ^ 31) - 1)
        if not ok then
          say("failed to set timeout: ", err)
        else
          say("settimeout: ok")
        end
        ok, err = pcall(sock.settimeout, sock, 2 ^ 31)
        if not ok then
          say("failed to set timeout: ", err)
        else
          say("settimeout: ok")
        end
        assert.same({ "settimeout: ok",
                      "failed to set timeout: bad timeout value" }, out)
      end)
    end)
  end)

  -------------------------------------------------------------------------
  describe("t/066-socket-receiveuntil.t", function()
    -- connects to `port`, sends the GET /foo request; returns the socket
    local function get_foo(port, say)
      local sock = ngx.socket.tcp()
      local ok, err = sock:connect("127.0.0.1", port)
      if not ok then
        say("failed to connect: ", err)
        return nil
      end
      say("connected: ", ok)
      local bytes
      bytes, err = sock:send(REQ)
      if not bytes then
        say("failed to send request: ", err)
        return nil
      end
      say("request sent: ", bytes)
      return sock
    end

    -- the head read in one go, as the tests do before their own reader
    local function skip_head(sock, say)
      local read_headers = sock:receiveuntil("\r\n\r\n")
      local headers, err, part = read_headers()
      if not headers then
        say("failed to read headers: ", err, " [", part, "]")
      end
    end

    local function close(sock, say)
      local ok, err = sock:close()
      say("close: ", ok, " ", err)
    end

    it("066 TEST 1: memcached read lines", function()
      net.run(function()
        local out, say = recorder()
        local port = memcached()
        local sock = ngx.socket.tcp()
        local ok, err = sock:connect("127.0.0.1", port)
        if not ok then say("failed to connect: ", err) return end
        say("connected: ", ok)
        local bytes
        bytes, err = sock:send("flush_all\r\n")
        if not bytes then say("failed to send request: ", err) return end
        say("request sent: ", bytes)
        local readline = sock:receiveuntil("\r\n")
        local line, part
        line, err, part = readline()
        if line then
          say("received: ", line)
        else
          say("failed to receive a line: ", err, " [", part, "]")
        end
        close(sock, say)
        assert.same({ "connected: 1", "request sent: 11", "received: OK",
                      "close: 1 nil" }, out)
      end)
    end)

    it("066 TEST 2: http read lines", function()
      net.run(function()
        local out, say = recorder()
        local sock = get_foo(foo_location("foo\n"), say)
        local readline = sock:receiveuntil("\r\n")
        for _ = 1, 7 do
          local line, err, part = readline()
          if line then
            say("read: ", line)
          else
            say("failed to read a line: ", err, " [", part, "]")
          end
        end
        close(sock, say)
        assert.same({
          "connected: 1",
          "request sent: 57",
          "read: HTTP/1.1 200 OK",
          "read: Server: nginx",
          "read: Content-Type: text/plain",
          "read: Content-Length: 4",
          "read: Connection: close",
          "read: ",
          "failed to read a line: closed [foo\n]",
          "close: 1 nil",
        }, out)
      end)
    end)

    it("066 TEST 3: http read all the headers in a single run", function()
      net.run(function()
        local out, say = recorder()
        local sock = get_foo(foo_location("foo\n"), say)
        local read_headers = sock:receiveuntil("\r\n\r\n")
        for _ = 1, 2 do
          local line, err, part = read_headers()
          if line then
            say("read: ", line)
          else
            say("failed to read a line: ", err, " [", part, "]")
          end
        end
        close(sock, say)
        assert.same({
          "connected: 1",
          "request sent: 57",
          "read: HTTP/1.1 200 OK\r\nServer: nginx\r\n"
            .. "Content-Type: text/plain\r\nContent-Length: 4\r\n"
            .. "Connection: close",
          "failed to read a line: closed [foo\n]",
          "close: 1 nil",
        }, out)
      end)
    end)

    -- TEST, pattern, body of /foo, echo (no Content-Length), bytewise
    -- (lua_socket_buffer_size), what the two reads of the pattern say
    local AMBIGUOUS = {
      { 4, "abcabd", "abcabcabd\n", false, false, "abc", "\n" },
      { 5, "aa", "abcabcaad\n", false, false, "abcabc", "d\n" },
      { 6, "aaa", "abaabcaaaef\n", true, false, "abaabc", "ef\n" },
      { 7, "aaaaad", "baaaaaaaaeaaaaaaadf\n", true, false,
        "baaaaaaaaeaa", "f\n" },
      { 8, "aaaaad", "baaaaaaaaeaaaaaaadf\n", true, true,
        "baaaaaaaaeaa", "f\n" },
      { 9, "aaaaad", "baaaaaaaaeaaaaaaadf\n", true, true,
        "baaaaaaaaeaa", "f\n" },
      { 10, "abcabdabcabe", "abcabdabcabdabcabe\n", true, false,
        "abcabd", "\n" },
      { 11, "abcabdabcabe", "abcabdabcabcabdabcabe\n", true, false,
        "abcabdabc", "\n" },
      { 12, "abcabdabcabe", "abcabcabdabcabe\n", true, false, "abc",
        "\n" },
      { 13, "abcabdabcabe", "ababcabdabcabe\n", true, false, "ab", "\n" },
      { 14, "--abc", "----abc\n", true, false, "--", "\n" },
      { 18, "abcabd", "abcabcabd\n", true, true, "abc", "\n" },
    }

    for _, v in ipairs(AMBIGUOUS) do
      local n, pattern, body, echo, bytewise, first, rest =
        table.unpack(v, 1, 7)
      it(("066 TEST %d: ambiguous boundary patterns (%s)%s")
         :format(n, pattern, bytewise and ", small buffer" or ""),
         function()
        net.run(function()
          local out, say = recorder()
          local port = foo_location(body,
                                    { echo = echo, bytewise = bytewise })
          local sock = get_foo(port, say)
          skip_head(sock, say)
          local reader = sock:receiveuntil(pattern)
          for _ = 1, 2 do
            local line, err, part = reader()
            if line then
              say("read: ", line)
            else
              say("failed to read a line: ", err, " [", part, "]")
            end
          end
          close(sock, say)
          assert.same({ "connected: 1", "request sent: 57",
                        "read: " .. first,
                        "failed to read a line: closed [" .. rest .. "]",
                        "close: 1 nil" }, out)
        end)
      end)
    end

    for _, v in ipairs({ { 15, false }, { 16, true } }) do
      it(("066 TEST %d: ambiguous boundary patterns (--abc)%s, reader(4)")
         :format(v[1], v[2] and ", small buffer" or ""), function()
        net.run(function()
          local out, say = recorder()
          local port = foo_location("hello, world ----abc\n",
                                    { echo = true, bytewise = v[2] })
          local sock = get_foo(port, say)
          skip_head(sock, say)
          local reader = sock:receiveuntil("--abc")
          for _ = 1, 6 do
            local line, err, part = reader(4)
            if line then
              say("read: ", line)
            else
              say("failed to read a line: ", err, " [", part, "]")
            end
          end
          close(sock, say)
          assert.same({
            "connected: 1",
            "request sent: 57",
            "read: hell",
            "read: o, w",
            "read: orld",
            "read:  --",
            "failed to read a line: nil [nil]",
            "failed to read a line: closed [\n]",
            "close: 1 nil",
          }, out)
        end)
      end)
    end

    it("066 TEST 17: ambiguous boundary patterns (--abc), small buffer, "
       .. "mixed by other reading calls", function()
      net.run(function()
        local out, say = recorder()
        local port = foo_location("hello, world ----abc\n",
                                  { echo = true, bytewise = true })
        local sock = get_foo(port, say)
        skip_head(sock, say)
        local reader = sock:receiveuntil("--abc")
        for _ = 1, 7 do
          local line, err, part = reader(4)
          if line then
            say("read: ", line)
          else
            say("failed to read a chunk: ", err, " [", part, "]")
          end
          local data
          data, err, part = sock:receive(1)
          if not data then
            say("failed to read a byte: ", err, " [", part, "]")
            break
          else
            say("read one byte: ", data)
          end
        end
        close(sock, say)
        assert.same({
          "connected: 1",
          "request sent: 57",
          "read: hell",
          "read one byte: o",
          "read: , wo",
          "read one byte: r",
          "read: ld -",
          "read one byte: -",
          "read: ",
          "read one byte: \n",
          "failed to read a chunk: nil [nil]",
          "failed to read a byte: closed []",
          "close: 1 nil",
        }, out)
      end)
    end)

    it("066 TEST 19: long patterns (on an accepted socket, for "
       .. "ngx.req.socket())", function()
      net.run(function()
        local out, say = recorder()
        local c, s = net.pair()
        local reader, err = s:receiveuntil(
          "------------------------------------------- "
          .. "abcdefghijklmnopqrstuvwxyz")
        if not reader then
          say("failed to get reader: ", err)
        else
          say("ok")
        end
        c:close()
        s:close()
        assert.same({ "ok" }, out)
      end)
    end)

    it("066 TEST 20: add pending bytes (small buffer, reader(2))",
       function()
      net.run(function()
        local out, say = recorder()
        local port = foo_location("-----abc\n",
                                  { echo = true, bytewise = true })
        local sock = get_foo(port, say)
        skip_head(sock, say)
        local reader = sock:receiveuntil("--abc")
        for _ = 1, 4 do
          local line, err, part = reader(2)
          if line then
            say("read: ", line)
          else
            say("failed to read a line: ", err, " [", part, "]")
          end
        end
        close(sock, say)
        assert.same({
          "connected: 1",
          "request sent: 57",
          "read: --",
          "read: -",
          "failed to read a line: nil [nil]",
          "failed to read a line: closed [\n]",
          "close: 1 nil",
        }, out)
      end)
    end)

    for _, v in ipairs({ { 21, false }, { 23, true } }) do
      it(("066 TEST %d: ambiguous boundary patterns (--abc), mixed by "
          .. "other reading calls consume boundary%s")
         :format(v[1], v[2] and ", small buffer" or ""), function()
        net.run(function()
          local out, say = recorder()
          local port = foo_location("----abc----abc-\n",
                                    { echo = true, bytewise = v[2] })
          local sock = get_foo(port, say)
          skip_head(sock, say)
          local reader = sock:receiveuntil("--abc")
          for _ = 1, 5 do
            local line, err, part = reader(2)
            if not line then
              say("failed to read a line: ", err, " [", part, "]")
              break
            else
              say("read: ", line)
            end
            local data
            data, err, part = sock:receive(1)
            if not data then
              say("failed to read a byte: ", err, " [", part, "]")
              break
            else
              say("read one byte: ", data)
            end
          end
          local line, err, part = reader(2)
          if not line then
            say("failed to read a line: ", err, " [", part, "]")
          else
            say("read: ", line)
          end
          close(sock, say)
          assert.same({
            "connected: 1",
            "request sent: 57",
            "read: --",
            "read one byte: -",
            "read: -a",
            "read one byte: b",
            "read: c-",
            "read one byte: -",
            "read: ",
            "read one byte: -",
            "failed to read a line: nil [nil]",
            "failed to read a line: closed [\n]",
            "close: 1 nil",
          }, out)
        end)
      end)
    end

    -- the "-" that reader1(1) holds back as a possible start of "--abc"
    -- goes back into the buffer when reader2 reads (OpenResty's
    -- read_prepare)
    for _, v in ipairs({ { 22, false }, { 24, true } }) do
      it(("066 TEST %d: ambiguous boundary patterns (--abc), mixed by "
          .. "other reading calls (including receiveuntil) consume "
          .. "boundary%s")
         :format(v[1], v[2] and ", small buffer" or ""), function()
        net.run(function()
          local out, say = recorder()
          local port = foo_location("------abd----abc\n",
                                    { echo = true, bytewise = v[2] })
          local sock = get_foo(port, say)
          skip_head(sock, say)
          local reader1 = sock:receiveuntil("--abc")
          local reader2 = sock:receiveuntil("-ab")
          local function show(line, err, part)
            if not line then
              say("failed to read a line: ", err, " [", part, "]")
            else
              say("read: ", line)
            end
          end
          show(reader1(2))
          local data, err, part = sock:receive(1)
          if not data then
            say("failed to read a byte: ", err, " [", part, "]")
          else
            say("read one byte: ", data)
          end
          show(reader1(1))
          show(reader2(2))
          show(reader1())
          show(reader1())
          close(sock, say)
          assert.same({
            "connected: 1",
            "request sent: 57",
            "read: --",
            "read one byte: -",
            "read: -",
            "read: -",
            "read: d--",
            "failed to read a line: closed [\n]",
            "close: 1 nil",
          }, out)
        end)
      end)
    end
  end)

  -------------------------------------------------------------------------
  describe("t/128-duplex-tcp-socket.t", function()
    it("128 TEST 1: pipelined memcached requests (sent one byte at a "
       .. "time)", function()
      net.run(function()
        local out, say = recorder()
        local port = memcached()
        local sock = ngx.socket.tcp()
        local ok, err = sock:connect("127.0.0.1", port)
        if not ok then say("failed to connect: ", err) return end
        say("connected: ", ok)
        local req = "flush_all\r\nget foo\r\nget bar\r\n"
        local send_idx = 1

        local function writer()
          while send_idx <= #req do
            local bytes, err2 = sock:send(req:sub(send_idx, send_idx))
            if not bytes then
              say("failed to send request: ", err2)
              return
            end
            ngx.sleep(0.001)
            send_idx = send_idx + 1
          end
        end

        local th = ngx.thread.spawn(writer)
        for _ = 1, 3 do
          local line, part
          line, err, part = sock:receive()
          if line then
            say("received: ", line)
          else
            say("failed to receive a line: ", err, " [", part, "]")
            break
          end
        end
        ok, err = sock:setkeepalive()
        say("setkeepalive: ", ok, " ", err)
        ngx.thread.wait(th)
        assert.same({ "connected: 1", "received: OK", "received: END",
                      "received: END", "setkeepalive: 1 nil" }, out)
        assert.equal(1, drain_pool(port))
      end)
    end)

    it("128 TEST 2: read timeout errors won't affect writing", function()
      net.run(function()
        local out, say = recorder()
        local port = memcached()
        local sock = ngx.socket.tcp()
        local ok, err = sock:connect("127.0.0.1", port)
        if not ok then say("failed to connect: ", err) return end
        say("connected: ", ok)
        local req = "flush_all\r\n"
        local send_idx = 1
        sock:settimeout(1)

        local function writer()
          while send_idx <= #req do
            local bytes, err2 = sock:send(req:sub(send_idx, send_idx))
            if not bytes then
              say("failed to send request: ", err2)
              return
            end
            ngx.sleep(0.001)
            send_idx = send_idx + 1
          end
        end

        local th = ngx.thread.spawn(writer)
        local data, ntm, done = "", 0, false
        for _ = 1, 300 do
          local line, part
          line, err, part = sock:receive()
          if not line then
            if part then data = data .. part end
            if err ~= "timeout" then
              say("failed to receive: ", err)
              return
            end
            ntm = ntm + 1
          else
            data = data .. line
            say("received: ", data)
            done = true
            break
          end
        end
        if not done then say("partial read: ", data) end
        say("read timed out: ", ntm)
        ok, err = sock:close()
        say("close: ", ok, " ", err)
        ngx.thread.wait(th)
        -- ^connected: 1\n(?:received: OK|failed to send request:
        -- timeout\npartial read: )\nread timed out: [1-9]\d*\nclose: 1 nil$
        assert.equal(4, #out)
        assert.equal("connected: 1", out[1])
        assert.equal("received: OK", out[2])
        assert.matches("^read timed out: [1-9]%d*$", out[3])
        assert.equal("close: 1 nil", out[4])
      end)
    end)

    it("128 TEST 3: writes are rejected while reads are not", function()
      net.run(function()
        local out, say = recorder()
        -- tcp_reply "OK!", not closing until the client does
        local port = net.serve(function(c)
          c:send("OK!")
          c:receive("*a")
        end)
        local sock = ngx.socket.tcp()
        local ok, err = sock:connect("127.0.0.1", port)
        if not ok then say("failed to connect: ", err) return end
        say("connected: ", ok)
        local req = "flush_all\r\n"
        local send_idx = 1

        local function writer()
          while send_idx <= #req do
            local bytes, err2 = sock:send(req:sub(send_idx, send_idx))
            if not bytes then
              say("failed to send request: ", err2)
              return
            end
            ngx.sleep(0.001)
            send_idx = send_idx + 1
          end
        end

        local th = ngx.thread.spawn(writer)
        local data = ""
        for _ = 1, 3 do
          local res, err2 = sock:receive(1)
          if not res then
            say("failed to receive: ", err2)
            return
          else
            data = data .. res
          end
          ngx.sleep(0.001)
        end
        say("received: ", data)
        ok, err = sock:close()
        say("close: ", ok, " ", err)
        ngx.thread.wait(th)
        -- ^connected: 1\nreceived: OK!\nclose: (?:nil socket busy
        -- writing|1 nil\nfailed to send request: closed)$
        local got = table.concat(out, "\n")
        assert.truthy(got == "connected: 1\nreceived: OK!\nclose: nil "
                      .. "socket busy writing"
                      or got == "connected: 1\nreceived: OK!\nclose: 1 "
                      .. "nil\nfailed to send request: closed", got)
      end)
    end)

    it("128 TEST 5: concurrent socket operations while connecting "
       .. "(without f's close())", function()
      net.run(function()
        local out, say = recorder()
        local port, done = net.full_listener()
        local sock = ngx.socket.tcp()

        local function f()
          ngx.sleep(0.001)
          local res, err = sock:receive(1)
          say("receive: ", res, " ", err)
          local bytes
          bytes, err = sock:send("hello")
          say("send: ", bytes, " ", err)
          -- (here OpenResty's f calls close(): "socket busy connecting")
          local ok
          ok, err = sock:getreusedtimes()
          say("getreusedtimes: ", ok, " ", err)
          ok, err = sock:setkeepalive()
          say("setkeepalive: ", ok, " ", err)
          ok, err = sock:connect("127.0.0.1", port) -- (memcached there)
          say("connect: ", ok, " ", err)
        end

        local th = ngx.thread.spawn(f)
        sock:settimeout(100) -- (300 in the test)
        local ok, err = sock:connect("127.0.0.1", port)
        say("connect: ", ok, " ", err)
        ok, err = sock:close()
        say("close: ", ok, " ", err)
        ngx.thread.wait(th)
        done()
        assert.same({
          "receive: nil socket busy connecting",
          "send: nil socket busy connecting",
          "getreusedtimes: 0 nil",
          "setkeepalive: nil socket busy connecting",
          "connect: nil socket busy connecting",
          "connect: nil timeout",
          "close: nil closed",
        }, out)
      end)
    end)

    -- 128 TEST 7 and 8: the entry thread reads with receive(1) or with a
    -- receiveuntil iterator while f tries everything else
    for _, v in ipairs({ { 7, "receive" }, { 8, "receiveuntil" } }) do
      it(("128 TEST %d: concurrent operations while reading (%s) "
          .. "(without f's close())"):format(v[1], v[2]), function()
        net.run(function()
          local out, say = recorder()
          local port = memcached()
          local sock = ngx.socket.tcp()
          local ready = false

          local function f()
            while not ready do
              ngx.sleep(0.001)
            end
            local res, err = sock:receive(1)
            say("receive: ", res, " ", err)
            local bytes
            bytes, err = sock:send("flush_all")
            say("send: ", bytes, " ", err)
            -- (here OpenResty's f calls close(): "socket busy reading")
            local ok
            ok, err = sock:getreusedtimes()
            say("getreusedtimes: ", ok, " ", err)
            ok, err = sock:setkeepalive()
            say("setkeepalive: ", ok, " ", err)
            ok, err = sock:connect("127.0.0.1", port)
            say("connect: ", ok, " ", err)
          end

          local th = ngx.thread.spawn(f)
          sock:settimeout(100) -- (300 in the test)
          local ok, err = sock:connect("127.0.0.1", port)
          say("connect: ", ok, " ", err)
          ready = true
          local last
          if v[2] == "receive" then
            local res
            res, err = sock:receive(1)
            say("receive: ", res, " ", err)
            last = "receive: nil timeout"
          else
            local it2
            it2, err = sock:receiveuntil("\r\n")
            if not it2 then
              say("receiveuntil() failed: ", err)
              return
            end
            local res
            res, err = it2()
            say("receiveuntil() iterator: ", res, " ", err)
            last = "receiveuntil() iterator: nil timeout"
          end
          ok, err = sock:close()
          say("close: ", ok, " ", err)
          ngx.thread.wait(th)
          assert.same({
            "connect: 1 nil",
            "receive: nil socket busy reading",
            "send: 9 nil",
            "getreusedtimes: 0 nil",
            "setkeepalive: nil socket busy reading",
            "connect: nil socket busy reading",
            last,
            "close: 1 nil",
          }, out)
        end)
      end)
    end
  end)

  -------------------------------------------------------------------------
  describe("t/147-tcp-socket-timeouts.t", function()
    -- the /t client of TEST 1 and 2: every line of the answer to GET /foo
    local function read_lines(port, say, timeouts)
      local sock = ngx.socket.tcp()
      sock:settimeouts(table.unpack(timeouts))
      local ok, err = sock:connect("127.0.0.1", port)
      if not ok then say("failed to connect: ", err) return end
      local bytes
      bytes, err = sock:send(REQ)
      if not bytes then say("failed to send request: ", err) return end
      while true do
        local line, part
        line, err, part = sock:receive()
        if line then
          say("received: ", line)
        else
          say("failed to receive a line: ", err, " [", part, "]")
          break
        end
      end
      sock:close()
    end

    it("147 TEST 1: sanity", function()
      net.run(function()
        local out, say = recorder()
        local port = foo_location("foo\n", { delay = 0.01 })
        read_lines(port, say, { 150, 150, 150 })
        -- response_body_like: received: foo
        assert.is_true(has_line(out, "received: foo"),
                       table.concat(out, "\n"))
      end)
    end)

    it("147 TEST 2: read timeout", function()
      net.run(function()
        local out, say = recorder()
        -- (10 ms in the test; longer here so that 2 ms surely expire)
        local port = foo_location("foo\n", { delay = 0.05 })
        read_lines(port, say, { 150, 150, 2 })
        -- response_body_like: failed to receive a line: timeout \[\]
        assert.is_true(has_line(out, "failed to receive a line: timeout []"),
                       table.concat(out, "\n"))
      end)
    end)

    -- the /t client of TEST 3 and 4: POSTs num times data; prep(sock),
    -- when given, is called once connected and returns the data to send
    local function post(port, say, timeouts, data, num, prep)
      local sock = ngx.socket.tcp()
      sock:settimeouts(table.unpack(timeouts))
      local ok, err = sock:connect("127.0.0.1", port)
      if not ok then say("failed to connect: ", err) return end
      if prep then data = prep(sock) end
      local req = "POST /foo HTTP/1.0\r\nHost: localhost\r\n"
        .. "Content-Length: " .. #data * num .. "\r\n"
        .. "Connection: close\r\n\r\n"
      local bytes
      bytes, err = sock:send(req)
      if not bytes then
        say("failed to send request: ", err)
        sock:close()
        return
      end
      for _ = 1, num do
        bytes, err = sock:send(data)
        if not bytes then
          say("failed to send body: ", err)
          sock:close()
          return
        end
      end
      while true do
        local line, part
        line, err, part = sock:receive()
        if line then
          say("received: ", line)
        else
          say("failed to receive a line: ", err, " [", part, "]")
          break
        end
      end
      sock:close()
    end

    it("147 TEST 3: send ok", function()
      net.run(function()
        local out, say = recorder()
        local port = net.serve(function(c)
          local h = c:receiveuntil("\r\n\r\n")()
          local len = tonumber(h:match("Content%-Length: (%d+)"))
          c:settimeouts(500, 500, 500)
          for _ = 1, len, 8 do
            local data, err = c:receive(8)
            if not data then
              c:send(head(#("failed to receive chunk: " .. err .. "\n"))
                     .. "failed to receive chunk: " .. err .. "\n")
              return
            end
          end
          local body = "got len: " .. len .. "\n"
          c:send(head(#body) .. body)
        end)
        post(port, say, { 500, 500, 500 }, ("a"):rep(8), 10)
        -- response_body_like: received: got len: 80
        assert.is_true(has_line(out, "received: got len: 80"),
                       table.concat(out, "\n"))
      end)
    end)

    it_full_io("147 TEST 4: send timeout", function()
      net.run(function()
        local out, say = recorder()
        local sema = cs.semaphore.new(0)
        local port = net.serve(function(c)
          c:setoption("rcvbuf", 65536)
          c:receiveuntil("\r\n\r\n")()
          sema:wait(30) -- reads no body ("slowdata" stalls in the test)
        end)
        -- (500 ms in the test)
        post(port, say, { 100, 100, 100 }, "slowdata", 10, function(sock)
          return stuck(sock, "slowdata")
        end)
        sema:post(1)
        assert.same({ "failed to send body: timeout" }, out)
      end, { timeout = 10 })
    end)

    it("147 TEST 5: connection timeout (tcp)", function()
      net.run(function()
        local out, say = recorder()
        local port, done = net.full_listener()
        local sock = ngx.socket.tcp()
        sock:settimeouts(100, 100, 100)
        local ok, err = sock:connect("127.0.0.1", port)
        say("connect: ", ok, " ", err)
        local bytes
        bytes, err = sock:send("hello")
        say("send: ", bytes, " ", err)
        local line
        line, err = sock:receive()
        say("receive: ", line, " ", err)
        ok, err = sock:close()
        say("close: ", ok, " ", err)
        done()
        assert.same({ "connect: nil timeout", "send: nil closed",
                      "receive: nil closed", "close: nil closed" }, out)
      end)
    end)

    -- TEST 6 and 7: the client sends its body in 3 pieces GAP apart; /foo
    -- takes the raw request socket (here: the accepted connection) and
    -- reads the body in a thread while it sends "ok\n"; setup(c, read)
    -- sets the timeouts and spawns that thread. nginx's lingering close
    -- is played by reading what is left of the body before closing.
    -- Returns the client's lines and the server's read error (nil when it
    -- read the whole body).
    local GAP, SHORT, LONG = 0.1, 30, 300

    local function duplex(setup)
      local out, say = recorder()
      local read_err
      local port = net.serve(function(c)
        local h = c:receiveuntil("\r\n\r\n")()
        local len = tonumber(h:match("Content%-Length: (%d+)"))
        local got = 0
        local co = setup(c, function()
          local data, err, part = c:receive(len)
          if not data then read_err = err end
          got = #(data or part)
        end)
        c:send("ok\n")
        ngx.thread.wait(co)
        c:settimeout(5000)
        if got < len then c:receive(len - got) end
      end)
      local sock = ngx.socket.tcp()
      sock:settimeouts(LONG, LONG, LONG)
      local ok, err = sock:connect("127.0.0.1", port)
      if not ok then say("failed to connect: ", err) return out end
      local data, num = ("a"):rep(4), 3
      local req = "POST /foo HTTP/1.0\r\nHost: localhost\r\n"
        .. "Content-Length: " .. #data * num .. "\r\n"
        .. "Connection: close\r\n\r\n"
      local bytes
      bytes, err = sock:send(req)
      if not bytes then say("failed to send request: ", err) return out end
      for _ = 1, num do
        bytes, err = sock:send(data)
        if not bytes then
          say("failed to send body: ", err)
          return out
        end
        ngx.sleep(GAP)
      end
      while true do
        local line, part
        line, err, part = sock:receive()
        if line then
          say("received: ", line)
        else
          say("failed to receive a line: ", err, " [", part, "]")
          break
        end
      end
      sock:close()
      return out, read_err
    end

    it("147 TEST 6: different timeout with duplex socket (settimeout)",
       function()
      net.run(function()
        local out, read_err = duplex(function(c, read)
          local co = ngx.thread.spawn(function()
            c:settimeout(LONG) -- read: LONG
            read()
          end)
          c:settimeout(SHORT) -- send: SHORT (and read, for what follows)
          return co
        end)
        assert.same({ "received: ok", "failed to receive a line: closed []" },
                    out)
        -- error_log: failed to receive data: timeout
        assert.equal("timeout", read_err)
      end)
    end)

    it("147 TEST 7: different timeout with duplex socket (settimeouts)",
       function()
      net.run(function()
        local out, read_err = duplex(function(c, read)
          c:settimeouts(0, SHORT, LONG) -- send: SHORT, read: LONG
          return ngx.thread.spawn(read)
        end)
        assert.same({ "received: ok", "failed to receive a line: closed []" },
                    out)
        assert.is_nil(read_err) -- no_error_log: [error]
      end)
    end)

    for i, what in ipairs({ "connection", "send", "read" }) do
      it(("147 TEST %d: %s timeout overflow detection"):format(7 + i, what),
         function()
        net.run(function()
          local out, say = recorder()
          local sock = ngx.socket.tcp()
          local args = { 500, 500, 500 }
          args[i] = (2 ^ 31) - 1
          local ok, err = pcall(sock.settimeouts, sock,
                                table.unpack(args))
          if not ok then
            say("failed to set timeouts: ", err)
          else
            say("settimeouts: ok")
          end
          args[i] = 2 ^ 31
          ok, err = pcall(sock.settimeouts, sock, table.unpack(args))
          if not ok then
            say("failed to set timeouts: ", err)
          else
            say("settimeouts: ok")
          end
          assert.same({ "settimeouts: ok",
                        "failed to set timeouts: bad timeout value" }, out)
        end)
      end)
    end
  end)

  -------------------------------------------------------------------------
  describe("receiveany (t/156-slow-network.t, t/058-tcp-socket.t)",
           function()
    -- the /t client: GET /foo, the head skipped line by line, then
    -- receiveany(max) until "closed" (once unless `loop`)
    local function get_any(port, say, max, loop)
      local sock = ngx.socket.tcp()
      sock:settimeout(500)
      assert(sock:connect("127.0.0.1", port))
      local req = {
        "GET /foo HTTP/1.0\r\n",
        "Host: localhost\r\n",
        "Connection: close\r\n\r\n",
      }
      local ok, err = sock:send(req)
      if not ok then
        say("send request failed: ", err)
        return
      end
      while true do
        local data
        data, err = sock:receive("*l")
        if err then
          say("unexpected error occurs when receiving http head: ", err)
          return
        end
        if #data == 0 then break end
      end
      repeat
        local data
        data, err = sock:receiveany(max)
        if err then
          if err ~= "closed" then say("unexpected err: ", err) end
          break
        end
        say(data)
      until not loop
      sock:close()
    end

    it("156 TEST 1: receiveany returns anything once socket receives",
       function()
      net.run(function()
        local out, say = recorder()
        -- mockeagain writes "1", "hello" a byte at a time
        local port = foo_location(nil,
          { pieces = { "1", "h", "e", "l", "l", "o" } })
        get_any(port, say, 1024, true)
        assert.same({ "1", "h", "e", "l", "l", "o" }, out)
      end)
    end)

    it_full_io("058 TEST 65: receiveany method in cosocket", function()
      net.run(function()
        local out, say = recorder()
        local port = foo_location(nil,
          { pieces = { "1", "22", "hello world" } })
        get_any(port, say, 1024, true)
        assert.same({ "1", "22", "hello world" }, out)
      end)
    end)

    it("058 TEST 67: receiveany with limited, max <= 0", function()
      net.run(function()
        local out, say = recorder()
        local port = net.serve(function(c) c:receive("*a") end)
        local sock = ngx.socket.tcp()
        sock:settimeout(500)
        assert(sock:connect("127.0.0.1", port))
        local function receiveany_say_err(...)
          local ok, err = pcall(sock.receiveany, sock, ...)
          if not ok then say(err) end
        end
        receiveany_say_err(0)
        receiveany_say_err(-1)
        receiveany_say_err()
        receiveany_say_err(nil)
        sock:close()
        assert.same({
          "bad argument #2 to '?' (bad max argument)",
          "bad argument #2 to '?' (bad max argument)",
          "expecting 2 arguments (including the object), but got 1",
          "bad argument #2 to '?' (bad max argument)",
        }, out)
      end)
    end)

    it_full_io("058 TEST 68: receiveany with limited, max is larger than "
               .. "data", function()
      net.run(function()
        local out, say = recorder()
        local port = foo_location(nil, { pieces = { "hello world" } })
        get_any(port, say, 128, false)
        assert.same({ "hello world" }, out)
      end)
    end)

    it_full_io("058 TEST 69: receiveany with limited, max is smaller than "
               .. "data", function()
      net.run(function()
        local out, say = recorder()
        local port = foo_location(nil, { pieces = { "hello world" } })
        get_any(port, say, 7, true)
        assert.same({ "hello w", "orld" }, out)
      end)
    end)
  end)
end)
