-- Conformance with lua-nginx-module's t/071-idle-socket.t (cosockets left
-- idle while the request does something else) and t/083-bad-sock-self.t
-- (cosocket methods called with `.` instead of `:`): each `it` replays
-- one "=== TEST N" on corosched through the ngx global of corosched.ngx
-- and asserts what its --- response_body says: the body the block writes
-- with ngx.say/ngx.print is collected and compared whole. The nginx side
-- (`location /foo` with the echo module, memcached on its port) is a
-- corosched peer on 127.0.0.1 sending the bytes nginx and memcached send.
--
-- 071-idle-socket.t, covered: 1-6, all adapted the same way:
--   ngx.location.capture("/sleep") (a subrequest whose location does
--   echo_sleep 0.5, during which the cosocket is idle) is ngx.sleep(IDLE)
--   here (README: ngx.location is not available); the times are shorter:
--   the echo module's echo_sleep 0.3 between the two chunks of /foo is
--   PEER_GAP, the 300/400 ms socket timeouts of 2-4 are TIMEOUT ms, and
--   the idle time IDLE stays longer than both, as in the blocks.
--   The tests also check that the idle time did what the block relies
--   on: /foo's second part and FIN came while idle (1, 5), memcached
--   answered the command sent after it (2), nothing went to the pool (5).
--   The blocks are those of the file's newest stored copy: TEST 1 ends
--   "close: 1 nil" (older copies, 5ba9195 and d6bc3d5, said "close: nil
--   closed"), TEST 5 accepts "unread data in buffer", "closed" or
--   "connection in dubious state" (older copies: not "closed"); here it
--   is "closed", the peer's FIN having been seen while idle (README).
--   6 is left pending in the short-I/O mode (make check-shortio): there
--   receive(1) reads one byte from the kernel, so the rest of the reply
--   waits in the kernel ("connection in dubious state") instead of in the
--   socket's buffer ("unread data in buffer").
-- 071, skipped: none.
--
-- 083-bad-sock-self.t, covered: 1-7. Each block calls a method with `.`,
--   so that its first argument is not the socket; nginx answers 500 and
--   logs the Lua error. Here the call runs under pcall and the message
--   raised is asserted: the text after its position ("file:line: ", as
--   LuaJIT adds it there too) must be OpenResty's, except that it says
--   "corosched.tcp expected" where OpenResty says "table expected"
--   (README, deliberate differences: cosockets are userdata, OpenResty's
--   are tables).
--   1, 2 adapted: ngx.req.socket() (the downstream socket, not available
--   here) is the accepted end of a connection to a corosched listener,
--   the same kind of socket (as spec/51 does for 066 TEST 19).
--   3: the number of arguments is checked before the type of self, as
--   in every method of lua-nginx-module (and a test beyond the file
--   checks it for each method with a count check).
-- 083, skipped: none.
--
-- No difference from OpenResty outside the README's list was left.
local helper = require "spec.helper"
local net = require "spec.support.net"
local cs = helper.cs
local ngxc = require "corosched.ngx"
local ngx_env = require "spec.support.ngx_env"
local run, lines = ngx_env.run, ngx_env.lines

-- the ngx global and what install() adds are put back after each test
local save_globals, restore_globals = ngx_env.saver()

-- short-I/O mode: every recv gives one byte; a test whose output shows
-- how many bytes one read took from the kernel is left pending there
local it_full_io = net.short_io and pending or it

-- times of 071 (seconds; the timeouts in ms): the blocks' 0.3 s gap of
-- /foo, 300/400 ms timeouts and 0.5 s subrequest, shorter and in the
-- same order (IDLE longer under valgrind and ASan, so that /foo's second
-- part still comes while the socket is idle)
local PEER_GAP = 0.1
local TIMEOUT = 100
local IDLE = 0.15 + 0.1 * helper.slack

---------------------------------------------------------------------------
-- the nginx side

-- the request 071 TEST 1 and 5 send: 57 bytes
local REQ = "GET /foo HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
  .. "\r\n"

-- what nginx sends for `location /foo { echo -n foofoo; echo_flush;
-- echo_sleep 0.3; echo -n barbar; }` to that HTTP/1.1 request
-- (server_tokens off, Date cleared): the head, the first chunk (flushed),
-- then after the sleep the second chunk and the last one, then it closes
local FOO_HEAD = "HTTP/1.1 200 OK\r\nServer: nginx\r\n"
  .. "Content-Type: text/plain\r\nTransfer-Encoding: chunked\r\n"
  .. "Connection: close\r\n\r\n"
local FOO_FIRST = "6\r\nfoofoo\r\n"
local FOO_REST = "6\r\nbarbar\r\n0\r\n\r\n"

-- `location /foo` as above: one request, answered in two parts PEER_GAP
-- apart, then closed. Returns the port and a function telling whether
-- the peer has sent everything and closed.
local function foo_location()
  local done = false
  local port = net.serve(function(c)
    c:setoption("tcp-nodelay", true)
    local req = c:receiveuntil("\r\n\r\n")()
    assert(req == REQ:sub(1, -5), "request head: " .. tostring(req))
    assert(c:send(FOO_HEAD .. FOO_FIRST))
    cs.sleep(PEER_GAP)
    assert(c:send(FOO_REST))
    c:close()
    done = true
  end)
  return port, function() return done end
end

-- memcached on its port: "flush_all" gets OK until the client closes.
-- Returns the port and a function giving how many commands it answered.
local function memcached()
  local answered = 0
  local port = net.serve(function(c)
    c:setoption("tcp-nodelay", true)
    while true do
      local line = c:receive()
      if not line then break end
      if line == "flush_all" then
        answered = answered + 1
        c:send("OK\r\n") -- (the client may be gone: TEST 3 reads nothing)
      end
    end
  end)
  return port, function() return answered end
end

---------------------------------------------------------------------------
-- errors raised

-- the message fn raised, without its position ("file:line: "), and the
-- position (nil when there was none)
local function raised(fn)
  local ok, err = pcall(fn)
  assert.is_false(ok, "no error was raised")
  assert.is_string(err)
  local where, msg = err:match("^([^\n]-:%d+): (.*)$")
  if where then return msg, where end
  return err, nil
end

-- the position of an error raised by a call written in this file
local HERE = "60%-conformance_idle_badself_spec%.lua:%d+$"

describe("conformance with lua-nginx-module (idle sockets, bad self)",
         function()
  before_each(save_globals)
  after_each(function()
    restore_globals()
    helper.after_each()
  end)

  -------------------------------------------------------------------------
  describe("t/071-idle-socket.t", function()
    it("071 TEST 1: read events come when socket is idle", function()
      local peer_done_during_idle
      local body = run(function(ngx)
        local port, peer_done = foo_location()
        local sock = ngx.socket.tcp()

        local ok, err = sock:connect("127.0.0.1", port)
        if not ok then
          ngx.say("failed to connect: ", err)
          return
        end

        ngx.say("connected: ", ok)

        local bytes
        bytes, err = sock:send(REQ)
        if not bytes then
          ngx.say("failed to send request: ", err)
          return
        end
        ngx.say("request sent: ", bytes)

        local reader = sock:receiveuntil("foofoo\r\n")
        local line, part
        line, err, part = reader()
        if line then
          ngx.print("read: ", line)
        else
          ngx.say("failed to read a line: ", err, " [", part, "]")
        end

        -- (the subrequest to /sleep) the rest of the reply and the FIN
        -- arrive meanwhile
        ngx.sleep(IDLE)
        peer_done_during_idle = peer_done()

        local data
        data, err, part = sock:receive("*a") -- luacheck: ignore part
        if not data then
          ngx.say("failed to read the 2nd part: ", err)
        else
          ngx.say("2nd part: [", data, "]")
        end

        ok, err = sock:close()
        ngx.say("close: ", ok, " ", err)
      end)
      assert.is_true(peer_done_during_idle)
      assert.equal("connected: 1\nrequest sent: 57\n"
                   .. "read: " .. FOO_HEAD .. "6\r\n"
                   .. "2nd part: [" .. FOO_REST .. "]\n"
                   .. "close: 1 nil\n", body)
    end)

    it("071 TEST 2: read timer cleared in time", function()
      local commands
      local body = run(function(ngx)
        local port, answered = memcached()
        local sock = ngx.socket.tcp()

        sock:settimeout(TIMEOUT) -- (400 ms in the block)

        local ok, err = sock:connect("127.0.0.1", port)
        if not ok then
          ngx.say("failed to connect: ", err)
          return
        end

        ngx.say("connected: ", ok)

        local req = "flush_all\r\n"

        local bytes
        bytes, err = sock:send(req)
        if not bytes then
          ngx.say("failed to send request: ", err)
          return
        end
        ngx.say("request sent: ", bytes)

        local line, part
        line, err, part = sock:receive()
        if line then
          ngx.say("received: ", line)
        else
          ngx.say("failed to receive a line: ", err, " [", part, "]")
        end

        ngx.sleep(IDLE) -- (the subrequest), longer than the read timeout

        bytes, err = sock:send(req)
        if not bytes then
          ngx.say("failed to send request: ", err)
          return
        end
        ngx.say("request sent again: ", bytes)

        -- (memcached answered the second command too: nothing timed out)
        assert.equal("OK", sock:receive())
        commands = answered()

        ok, err = sock:close()
        ngx.say("close: ", ok, " ", err)
      end)
      assert.equal(lines("connected: 1", "request sent: 11", "received: OK",
                         "request sent again: 11", "close: 1 nil"), body)
      assert.equal(2, commands)
    end)

    it("071 TEST 3: connect timer cleared in time", function()
      local body = run(function(ngx)
        local port = memcached()
        local sock = ngx.socket.tcp()

        sock:settimeout(TIMEOUT) -- (300 ms in the block)

        local ok, err = sock:connect("127.0.0.1", port)
        if not ok then
          ngx.say("failed to connect: ", err)
          return
        end

        ngx.say("connected: ", ok)

        ngx.sleep(IDLE) -- (the subrequest), longer than the timeout

        local req = "flush_all\r\n"
        local bytes
        bytes, err = sock:send(req)
        if not bytes then
          ngx.say("failed to send request: ", err)
          return
        end
        ngx.say("request sent: ", bytes)

        ok, err = sock:close()
        ngx.say("close: ", ok, " ", err)
      end)
      assert.equal(lines("connected: 1", "request sent: 11", "close: 1 nil"),
                   body)
    end)

    it("071 TEST 4: send timer cleared in time", function()
      local body = run(function(ngx)
        local port = memcached()
        local sock = ngx.socket.tcp()

        sock:settimeout(TIMEOUT) -- (300 ms in the block)

        local ok, err = sock:connect("127.0.0.1", port)
        if not ok then
          ngx.say("failed to connect: ", err)
          return
        end

        ngx.say("connected: ", ok)

        local req = "flush_all\r\n"

        local bytes
        bytes, err = sock:send(req)
        if not bytes then
          ngx.say("failed to send request: ", err)
          return
        end
        ngx.say("request sent: ", bytes)

        ngx.sleep(IDLE) -- (the subrequest), longer than the timeout

        local line, part
        line, err, part = sock:receive()
        if line then
          ngx.say("received: ", line)
        else
          ngx.say("failed to receive a line: ", err, " [", part, "]")
          sock:close()
          return
        end

        ok, err = sock:close()
        ngx.say("close: ", ok, " ", err)
      end)
      assert.equal(lines("connected: 1", "request sent: 11", "received: OK",
                         "close: 1 nil"), body)
    end)

    it("071 TEST 5: set keepalive when system socket recv buffer has "
       .. "unread data", function()
      local peer_done_during_idle, pooled
      local body = run(function(ngx)
        local port, peer_done = foo_location()
        local sock = ngx.socket.tcp()

        local ok, err = sock:connect("127.0.0.1", port)
        if not ok then
          ngx.say("failed to connect: ", err)
          return
        end

        ngx.say("connected: ", ok)

        local bytes
        bytes, err = sock:send(REQ)
        if not bytes then
          ngx.say("failed to send request: ", err)
          return
        end
        ngx.say("request sent: ", bytes)

        local reader = sock:receiveuntil("foofoo\r\n")
        local line, part
        line, err, part = reader()
        if line then
          ngx.print("read: ", line)
        else
          ngx.say("failed to read a line: ", err, " [", part, "]")
        end

        ngx.sleep(IDLE) -- (the subrequest)
        peer_done_during_idle = peer_done()

        ok, err = sock:setkeepalive()
        if not ok then
          ngx.say("failed to set keepalive: ", err)
        end
        -- nothing went to the pool
        local s2 = ngx.socket.tcp()
        pooled = s2:connect("127.0.0.1", port) and s2:getreusedtimes()
        s2:close()
        sock:close() -- (nginx: the request ends)
      end)
      assert.is_true(peer_done_during_idle)
      assert.falsy(pooled) -- (the listener is gone: refused)
      -- OpenResty: response_body_like, any of three errors; here the
      -- peer's FIN was seen while idle: "closed"
      local head = "connected: 1\nrequest sent: 57\n"
        .. "read: " .. FOO_HEAD .. "6\r\n"
      assert.equal(head .. "failed to set keepalive: closed\n", body)
    end)

    it_full_io("071 TEST 6: set keepalive when cosocket recv buffer has "
               .. "unread data", function()
      local body = run(function(ngx)
        local port = memcached()
        local sock = ngx.socket.tcp()

        local ok, err = sock:connect("127.0.0.1", port)
        if not ok then
          ngx.say("failed to connect: ", err)
          return
        end

        ngx.say("connected: ", ok)

        local req = "flush_all\r\n"

        local bytes
        bytes, err = sock:send(req)
        if not bytes then
          ngx.say("failed to send request: ", err)
          return
        end

        ngx.say("request sent: ", bytes)

        local data
        data, err = sock:receive(1)
        if not data then
          ngx.say("failed to read the 1st byte: ", err)
          return
        end

        ngx.say("read: ", data)

        ok, err = sock:setkeepalive()
        if not ok then
          ngx.say("failed to set keepalive: ", err)
        end
        -- the socket is left as it was: the rest of the line is there
        assert.equal("K", sock:receive())
        sock:close() -- (nginx: the request ends)
      end)
      assert.equal(lines("connected: 1", "request sent: 11", "read: O",
                         "failed to set keepalive: unread data in buffer"),
                   body)
    end)
  end)

  -------------------------------------------------------------------------
  describe("t/083-bad-sock-self.t", function()
    -- runs block(sock, ngx) under pcall with sock the accepted end of a
    -- connection (for ngx.req.socket()) or a fresh ngx.socket.tcp();
    -- returns what it printed, the message it raised and its position
    local function replay(kind, block)
      local msg, where
      local body = run(function(ngx)
        local srv, port, client, sock
        if kind == "req" then
          srv, port = net.listen()
          client = ngx.socket.tcp()
          assert(client:connect("127.0.0.1", port))
          sock = assert(srv:accept())
          srv:close()
        else
          sock = ngx.socket.tcp()
        end
        msg, where = raised(function() block(sock, ngx) end)
        sock:close()
        if client then client:close() end
      end)
      return body, msg, where
    end

    it("083 TEST 1: receive", function()
      local body, msg, where = replay("req", function(sock)
        sock.receive("l")
      end)
      assert.equal("", body)
      assert.matches(HERE, where)
      -- OpenResty: "bad argument #1 to 'receive' (table expected, got
      -- string)"
      assert.equal("bad argument #1 to 'receive' (corosched.tcp expected, "
                   .. "got string)", msg)
    end)

    it("083 TEST 2: receiveuntil", function()
      local body, msg, where = replay("req", function(sock)
        sock.receiveuntil(32, "ab")
      end)
      assert.equal("", body)
      assert.matches(HERE, where)
      -- OpenResty: "bad argument #1 to 'receiveuntil' (table expected, got
      -- number)"
      assert.equal("bad argument #1 to 'receiveuntil' (corosched.tcp "
                   .. "expected, got number)", msg)
    end)

    it("083 TEST 3: send (bad arg number)", function()
      local body, msg, where = replay("tcp", function(sock)
        sock.send("hello")
      end)
      assert.equal("", body)
      assert.matches(HERE, where)
      assert.equal("expecting 2 arguments (including the object), but got 1",
                   msg)
    end)

    -- beyond the file: every method checks the number of its arguments
    -- before the type of self, as lua-nginx-module's C functions do
    it("083 (extra): the argument count is checked before self", function()
      local tcp = {
        {"receive", 3, "expecting 1 or 2 arguments (including the object), "
          .. "but got 3"},
        {"receive", 0, "expecting 1 or 2 arguments (including the object), "
          .. "but got 0"},
        {"receiveany", 1, "expecting 2 arguments (including the object), "
          .. "but got 1"},
        {"receiveuntil", 1, "expecting 2 or 3 arguments (including the "
          .. "object), but got 1"},
        {"send", 3, "expecting 2 arguments (including the object), but got 3"},
        {"connect", 1, "ngx.socket connect: expecting 2, 3, or 4 arguments "
          .. "(including the object), but seen 1"},
        {"setkeepalive", 4, "expecting 1 to 3 arguments (including the "
          .. "object), but got 4"},
        {"setkeepalive", 0, "expecting 1 to 3 arguments (including the "
          .. "object), but got 0"},
        {"getreusedtimes", 2, "expecting 1 argument (including the object), "
          .. "but got 2"},
        {"settimeout", 1, "ngx.socket settimeout: expecting 2 arguments "
          .. "(including the object) but seen 1"},
        {"settimeouts", 2, "ngx.socket settimeout: expecting 4 arguments "
          .. "(including the object) but seen 2"},
      }
      local udp = {
        {"setpeername", 1, "ngx.socket.udp setpeername: expecting 2 or 3 "
          .. "arguments (including the object), but seen 1"},
        {"send", 1, "expecting 2 arguments (including the object), but got 1"},
        {"receive", 3, "expecting 1 or 2 arguments (including the object), "
          .. "but got 3"},
        {"settimeout", 1, "ngx.socket settimeout: expecting at least 2 "
          .. "arguments (including the object) but seen 1"},
      }
      run(function(ngx)
        local sets = { { ngx.socket.tcp(), tcp }, { ngx.socket.udp(), udp } }
        for _, set in ipairs(sets) do
          local sock, cases = set[1], set[2]
          for _, c in ipairs(cases) do
            -- self is a number: only the count can make these messages
            local args = {}
            for i = 1, c[2] do args[i] = 32 end
            local msg = raised(function()
              sock[c[1]](table.unpack(args, 1, c[2]))
            end)
            assert.equal(c[3], msg, c[1] .. " with " .. c[2] .. " arguments")
          end
          sock:close()
        end
      end)
    end)

    it("083 TEST 4: send (bad self)", function()
      local body, msg, where = replay("tcp", function(sock)
        sock.send("hello", 32)
      end)
      assert.equal("", body)
      assert.matches(HERE, where)
      -- OpenResty: "bad argument #1 to 'send' (table expected, got
      -- string)"
      assert.equal("bad argument #1 to 'send' (corosched.tcp expected, got "
                   .. "string)", msg)
    end)

    it("083 TEST 5: getreusedtimes (bad self)", function()
      local body, msg, where = replay("tcp", function(sock)
        sock.getreusedtimes(2)
      end)
      assert.equal("", body)
      assert.matches(HERE, where)
      -- OpenResty: "bad argument #1 to 'getreusedtimes' (table expected,
      -- got number)"
      assert.equal("bad argument #1 to 'getreusedtimes' (corosched.tcp "
                   .. "expected, got number)", msg)
    end)

    it("083 TEST 6: close (bad self)", function()
      local body, msg, where = replay("tcp", function(sock)
        sock.close(2)
      end)
      assert.equal("", body)
      assert.matches(HERE, where)
      -- OpenResty: "bad argument #1 to 'close' (table expected, got
      -- number)"
      assert.equal("bad argument #1 to 'close' (corosched.tcp expected, "
                   .. "got number)", msg)
    end)

    it("083 TEST 7: setkeepalive (bad self)", function()
      local body, msg, where = replay("tcp", function(sock)
        sock.setkeepalive(2)
      end)
      assert.equal("", body)
      assert.matches(HERE, where)
      -- OpenResty: "bad argument #1 to 'setkeepalive' (table expected,
      -- got number)"
      assert.equal("bad argument #1 to 'setkeepalive' (corosched.tcp "
                   .. "expected, got number)", msg)
    end)
  end)
end)
