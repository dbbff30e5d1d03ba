-- corosched.luasocket: LuaSocket's `socket` module on cosockets.
--
-- * Differential: spec/support/luasocket_probe.lua (125 lines of
--   results: classes, return values, error strings, timeouts, partial
--   data, prefixes, shutdown, servers, sinks and sources, DNS, UDP) runs
--   with Debian's LuaSocket 3.1 in a child process and with this module
--   in a light thread, both against the same corosched peer
--   (spec/support/luasocket_peer.lua) in this process; every line must be
--   the same. Without Debian's lua-socket the test is pending.
-- * LuaSocket's own socket.http (Debian's lua-socket), unmodified, on this
--   module: 20 requests that the server answers only once all 20 are in
--   (a blocking client would never get there), a POST through an ltn12
--   source, chunked bodies, refused, timeout.
-- * LuaSocket's socket.smtp, unmodified, on this module: 10 messages sent
--   at once to aiosmtpd (python3-aiosmtpd), a multipart one (its source is
--   a coroutine of smtp.lua's) among them; refused.
-- * redis-lua 2.0.5 (Debian's lua-redis), unmodified, against
--   redis-server: a BLPOP parked in one thread, served by an RPUSH from
--   another, and 20 clients at once.
-- * socket.unix, kills, GC of unclosed sockets, settimeout's meanings,
--   what is not available, and the cosocket's own shutdown("send").
local helper = require "spec.helper"
local net = require "spec.support.net"
local cs = helper.cs

local HOST = "127.0.0.1"
local PROBE = "spec/support/luasocket_probe.lua"
local PEER = "spec/support/luasocket_peer.lua"
local LS_LUA = "/usr/share/lua/5.4/socket.lua"
local HTTP_LUA = "/usr/share/lua/5.4/socket/http.lua"
local REDIS_LUA = "/usr/share/lua/5.1/redis.lua"

local exists = net.exists

-- the names install() takes over, and LuaSocket's modules that captured
-- whichever "socket" was loaded: put back after each test
local NAMES = { "socket", "socket.core", "socket.unix", "socket.http",
                "socket.url", "socket.headers", "ltn12", "mime",
                "mime.core", "redis" }
local saved

local function save()
  saved = {}
  for _, n in ipairs(NAMES) do
    saved[n] = package.loaded[n]
    package.loaded[n] = nil
  end
end

local function restore()
  for _, n in ipairs(NAMES) do package.loaded[n] = saved[n] end
end

-- polls srv.port until it accepts a connection (5 s at most); raises with
-- the server's log when it does not
local function wait_port(srv, what)
  helper.run(function()
    for _ = 1, 500 do
      local c = cs.socket.tcp()
      if c:connect(HOST, srv.port) then
        c:close()
        return
      end
      c:close()
      cs.sleep(0.01)
    end
    error(what .. " did not start: " .. net.server_log(srv))
  end)
end

describe("corosched.luasocket", function()
  local socket

  before_each(function()
    save()
    package.loaded["corosched.luasocket"] = nil
    socket = require("corosched.luasocket").install()
  end)

  after_each(function()
    restore()
    helper.after_each()
  end)

  it("prints what Debian's LuaSocket prints for " .. PROBE, function()
    if not exists(LS_LUA) then
      pending("skipped: apt-get install lua-socket")
      return
    end
    local probe = assert(loadfile(PROBE))("lib")
    local serve = assert(loadfile(PEER))()
    local want, got = {}, {}
    helper.run(function()
      -- Debian's LuaSocket, blocking, in a child process: the peer runs
      -- here while this thread polls for the child's end
      local l = assert(cs.socket.listen(HOST, 0))
      local _, port = l:getsockname()
      local peer = cs.thread.spawn(serve, cs, l)
      local srv = net.server_dir()
      net.spawn(srv, "probe", ("env -u LUA_PATH -u LUA_CPATH lua5.4 %s %d")
                :format(PROBE, port))
      while net.alive(srv.pid) do cs.sleep(0.02) end
      net.stop(srv)
      for line in net.server_log(srv):gmatch("[^\n]*\n") do
        want[#want + 1] = line:sub(1, -2)
      end
      net.remove(srv)
      assert(cs.thread.wait(peer))
      -- this module, in this light thread
      peer = cs.thread.spawn(serve, cs, l)
      probe(socket, port, function(s) got[#got + 1] = s end)
      assert(cs.thread.wait(peer))
      l:close()
    end, { timeout = 20 })
    assert.truthy(#want > 100, table.concat(want, "\n"))
    for i = 1, math.max(#want, #got) do
      assert.equal(want[i], got[i], "line " .. i)
    end
  end)

  describe("LuaSocket's socket.http (Debian's lua-socket)", function()
    local http

    before_each(function()
      if exists(HTTP_LUA) then
        http = require "socket.http"
        assert.equal(socket, require "socket")
      end
    end)

    -- an HTTP/1.1 server: handler(method, path, body) -> status, body,
    -- chunked; it serves n connections, each in its own thread
    local function server(n, handler)
      local l = assert(cs.socket.listen(HOST, 0))
      local _, port = l:getsockname()
      local main = cs.thread.spawn(function()
        local threads = {}
        for i = 1, n do
          local c = assert(l:accept())
          threads[i] = cs.thread.spawn(function()
            local line = assert(c:receive())
            local method, path = line:match("^(%u+) (%S+) HTTP/1%.%d$")
            local len = 0
            while true do
              local h = assert(c:receive())
              if h == "" then break end
              local v = h:lower():match("^content%-length:%s*(%d+)")
              if v then len = tonumber(v) end
            end
            local body = len > 0 and assert(c:receive(len)) or ""
            local status, out, chunked = handler(method, path, body)
            if chunked then
              local parts = { "HTTP/1.1 ", status,
                              " X\r\nTransfer-Encoding: chunked\r\n\r\n" }
              for _, ch in ipairs(out) do
                parts[#parts + 1] = ("%x\r\n%s\r\n"):format(#ch, ch)
              end
              parts[#parts + 1] = "0\r\n\r\n"
              c:send(parts)
            else
              c:send({ "HTTP/1.1 ", status, " X\r\nContent-Length: ", #out,
                       "\r\nConnection: close\r\n\r\n", out })
            end
            c:close()
          end)
        end
        for _, t in ipairs(threads) do assert(cs.thread.wait(t)) end
        l:close()
      end)
      return port, main
    end

    it("20 requests at once, answered only when all 20 are in", function()
      if not http then
        pending("skipped: apt-get install lua-socket")
        return
      end
      helper.run(function()
        local inside, all_in = 0, cs.semaphore.new(0)
        local port, main = server(20, function(_, path)
          inside = inside + 1
          if inside == 20 then all_in:post(20) end
          assert(all_in:wait(5))
          return 200, "body of " .. path .. string.rep("x", 3000)
        end)
        local threads = {}
        for i = 1, 20 do
          threads[i] = cs.thread.spawn(function()
            local body, code, headers, status =
              http.request(("http://%s:%d/r%d"):format(HOST, port, i))
            return body, code, headers["content-length"], status
          end)
        end
        for i = 1, 20 do
          local ok, body, code, len, status = cs.thread.wait(threads[i])
          assert.is_true(ok)
          assert.equal("body of /r" .. i .. string.rep("x", 3000), body)
          assert.equal(200, code)
          assert.equal(tostring(#body), len)
          assert.equal("HTTP/1.1 200 X", status)
        end
        assert(cs.thread.wait(main))
      end)
    end)

    it("a POST through an ltn12 source; a chunked answer", function()
      if not http then
        pending("skipped: apt-get install lua-socket")
        return
      end
      local ltn12 = require "ltn12"
      helper.run(function()
        local port, main = server(2, function(method, path, body)
          if path == "/post" then
            return 201, method .. " " .. #body .. " " .. body:sub(1, 5)
          end
          return 200, { "one,", "two,", string.rep("3", 10000) }, true
        end)
        local out = {}
        local payload = "hello" .. string.rep("y", 20000)
        local one, code = http.request{
          url = ("http://%s:%d/post"):format(HOST, port),
          method = "POST",
          source = ltn12.source.string(payload),
          headers = { ["content-length"] = #payload },
          sink = ltn12.sink.table(out),
        }
        assert.equal(1, one)
        assert.equal(201, code)
        assert.equal("POST 20005 hello", table.concat(out))
        local body
        body, code = http.request(("http://%s:%d/c"):format(HOST, port))
        assert.equal(200, code)
        assert.equal("one,two," .. string.rep("3", 10000), body)
        assert(cs.thread.wait(main))
      end)
    end)

    it("refused; a server that never answers times out", function()
      if not http then
        pending("skipped: apt-get install lua-socket")
        return
      end
      helper.run(function()
        local port = net.free_port()
        local r, err = http.request(("http://%s:%d/"):format(HOST, port))
        assert.is_nil(r)
        assert.equal("connection refused", err)
        local l = assert(cs.socket.listen(HOST, 0))
        local _, lport = l:getsockname()
        local t = cs.thread.spawn(function()
          local c = assert(l:accept())
          c:receive("*a") -- until the client gives up
          c:close()
        end)
        http.TIMEOUT = 0.2
        r, err = http.request(("http://%s:%d/"):format(HOST, lport))
        http.TIMEOUT = 60
        assert.is_nil(r)
        assert.equal("timeout", err)
        assert(cs.thread.wait(t))
        l:close()
      end)
    end)
  end)

  describe("LuaSocket's socket.smtp (Debian's lua-socket) on aiosmtpd",
           function()
    local srv
    local PY = "/usr/bin/python3"

    local function have_aiosmtpd()
      if not (exists(PY) and exists(HTTP_LUA)) then return false end
      return os.execute("env -u LD_PRELOAD " .. PY
                        .. " -c 'import aiosmtpd' 2>/dev/null") == true
    end

    before_each(function()
      if not have_aiosmtpd() then return end
      srv = net.server_dir()
      srv.port = net.free_port()
      -- the Debugging handler prints every message it is given
      net.spawn(srv, "smtp", ("%s -u -m aiosmtpd -n -l %s:%d "
        .. "-c aiosmtpd.handlers.Debugging"):format(PY, HOST, srv.port))
      wait_port(srv, "aiosmtpd")
    end)

    after_each(function()
      if srv then
        net.stop(srv)
        net.remove(srv)
        srv = nil
      end
    end)

    it("10 messages sent at once, a multipart one among them; refused",
       function()
      if not srv then
        pending("skipped: apt-get install lua-socket python3-aiosmtpd")
        return
      end
      local smtp = require "socket.smtp"
      helper.run(function()
        local threads = {}
        for i = 1, 10 do
          threads[i] = cs.thread.spawn(function()
            local body = "body " .. i .. "\r\n"
              .. string.rep(string.rep("z", 70) .. "\r\n", 100)
            if i == 10 then -- its source is a coroutine of smtp.lua's
              body = { preamble = "pre", [1] = { body = "part one" },
                       [2] = { headers = { ["content-type"] =
                                           "text/plain; name=a.txt" },
                               body = "part two" } }
            end
            return smtp.send{
              from = "<from@example.org>",
              rcpt = { "<to" .. i .. "@example.org>" },
              source = smtp.message{
                headers = { subject = "message " .. i,
                            to = "to" .. i .. "@example.org" },
                body = body },
              server = HOST, port = srv.port,
            }
          end)
        end
        for i = 1, 10 do
          local ok, r, err = cs.thread.wait(threads[i])
          assert.is_true(ok)
          assert.equal(1, r, err)
        end
        local r, err = smtp.send{ from = "<a@b>", rcpt = "<c@d>",
                                  source = smtp.message{ body = "x" },
                                  server = HOST, port = net.free_port() }
        assert.is_nil(r)
        assert.equal("connection refused", err)
      end)
      -- what the server was given (its log, once it has printed all 10)
      local log
      helper.run(function()
        for _ = 1, 500 do
          log = net.server_log(srv)
          local _, n = log:gsub("Subject: message %d+", "")
          if n == 10 then return end
          cs.sleep(0.01)
        end
      end)
      for i = 1, 9 do
        assert.truthy(log:find("Subject: message " .. i .. "\n", 1, true)
                      or log:find("Subject: message " .. i .. "\r", 1, true),
                      "message " .. i)
        assert.truthy(log:find("body " .. i, 1, true))
        assert.truthy(log:find("to" .. i .. "@example.org", 1, true))
      end
      assert.truthy(log:find("part one", 1, true))
      assert.truthy(log:find("name=a.txt", 1, true))
      local _, lines = log:gsub(string.rep("z", 70), "")
      assert.equal(900, lines)
    end)
  end)

  describe("redis-lua (Debian's lua-redis) on redis-server", function()
    local srv, redis

    local REDIS_SERVER = net.which("redis-server")
      or (exists("/usr/sbin/redis-server") and "/usr/sbin/redis-server")

    before_each(function()
      if not (REDIS_SERVER and exists(REDIS_LUA)) then return end
      redis = assert(loadfile(REDIS_LUA))()
      srv = net.server_dir()
      srv.port = net.free_port()
      net.spawn(srv, "redis", ("%s --port %d --bind 127.0.0.1 --save '' "
        .. "--appendonly no --daemonize no --dir %s --logfile ''")
        :format(net.sh_quote(REDIS_SERVER), srv.port,
                net.sh_quote(srv.dir)))
      wait_port(srv, "redis-server")
    end)

    after_each(function()
      if srv then
        net.stop(srv)
        net.remove(srv)
        srv = nil
      end
    end)

    it("a BLPOP parked in one thread is served by another's RPUSH; "
       .. "20 clients at once", function()
      if not redis then
        pending("skipped: apt-get install redis-server lua-redis")
        return
      end
      helper.run(function()
        local a = redis.connect(HOST, srv.port)
        assert.is_true(a:ping())
        a:del("q")
        local waiter = cs.thread.spawn(function()
          local b = redis.connect(HOST, srv.port)
          local r = b:blpop("q", 5)
          b:quit()
          return r[1], r[2]
        end)
        cs.sleep(0.05)
        assert.equal(1, a:rpush("q", "item"))
        local ok, k, v = cs.thread.wait(waiter)
        assert.is_true(ok)
        assert.same({ "q", "item" }, { k, v })
        local threads = {}
        for i = 1, 20 do
          threads[i] = cs.thread.spawn(function()
            local c = redis.connect({ host = HOST, port = srv.port,
                                      timeout = 2 })
            c:set("k" .. i, string.rep(tostring(i), 1000))
            local got = c:get("k" .. i)
            c:quit()
            return got
          end)
        end
        for i = 1, 20 do
          local ok2, got = cs.thread.wait(threads[i])
          assert.is_true(ok2)
          assert.equal(string.rep(tostring(i), 1000), got)
        end
        a:quit()
      end)
    end)
  end)

  it("socket.unix: a stream socket to a corosched unix listener",
     function()
    helper.run(function()
      local path = net.unix_path()
      local l = assert(cs.socket.listen("unix:" .. path))
      local t = cs.thread.spawn(function()
        local c = assert(l:accept())
        c:send((assert(c:receive())):upper() .. "\n")
        c:close()
      end)
      local unix = require "socket.unix"
      local c = unix()
      assert.equal("unix{master}", tostring(c):match("^%a+{%a+}"))
      assert.equal(1, c:connect(path))
      assert.equal("unix{client}", tostring(c):match("^%a+{%a+}"))
      c:settimeout(1)
      c:send("hello\n")
      assert.equal("HELLO", c:receive())
      assert.equal(1, c:close())
      assert(cs.thread.wait(t))
      l:close()
      os.remove(path)
    end)
  end)

  it("settimeout: none by default, 0 polls, 'b' and 't' modes", function()
    helper.run(function()
      local l = assert(cs.socket.listen(HOST, 0))
      local _, port = l:getsockname()
      local t = cs.thread.spawn(function()
        local c = assert(l:accept())
        cs.sleep(0.6) -- longer than the 0.1 s timeouts below, together
        c:send("late\n")
        assert(c:receive())
        c:close()
      end)
      local c = socket.tcp4()
      assert.equal(1, c:setoption("tcp-nodelay", true)) -- kept for connect
      assert.equal(1, c:setoption("keepalive", true))
      assert.is_true(c:getoption("tcp-nodelay"))
      assert.equal(1, c:connect(HOST, port))
      assert.is_true(c:getoption("tcp-nodelay"))
      assert.is_true(c:getoption("keepalive"))
      -- LuaSocket's options the cosocket lacks: nil, err (not raised)
      for _, name in ipairs({ "linger", "tcp-keepidle", "reuseport",
                              "tcp-fastopen" }) do
        local v = name == "reuseport" or 1 -- (a boolean, else it raises)
        assert.same({ nil, "option '" .. name
                           .. "' is not available in corosched" },
                    { c:setoption(name, v) })
      end
      assert.equal(1, c:setoption("maxline", 4096)) -- corosched's own
      assert.equal(4096, c:getoption("maxline"))
      assert.same({ -1, -1 }, { c:gettimeout() })
      c:settimeout(0)
      assert.same({ nil, "timeout", "" }, { c:receive() })
      c:settimeout(0.1)
      assert.same({ nil, "timeout", "" }, { c:receive() })
      c:settimeout(nil)
      c:settimeout(0.1, "t")
      assert.same({ -1, 0.1 }, { c:gettimeout() })
      assert.same({ nil, "timeout", "" }, { c:receive() })
      c:settimeout(-1, "t")
      assert.equal("late", c:receive()) -- no timeout: waits for it
      c:send("bye\n")
      c:close()
      assert(cs.thread.wait(t))
      l:close()
    end)
  end)

  it("receive(0) gives \"\" (LuaSocket 3.1 answers \"closed\" and the "
     .. "socket stays broken)", function()
    helper.run(function()
      local l = assert(cs.socket.listen(HOST, 0))
      local _, port = l:getsockname()
      local s = assert(socket.connect(HOST, port))
      local a = assert(l:accept())
      l:close()
      assert.same({ "", nil, nil }, { s:receive(0) })
      assert.same({ "pre", nil, nil }, { s:receive(2, "pre") })
      a:send("x\n")
      s:settimeout(1)
      assert.equal("x", s:receive())
      s:close()
      a:close()
    end)
  end)

  it("a thread killed in receive or accept: its socket is closed",
     function()
    helper.run(function()
      local fds = helper.fds()
      local server = socket.bind(HOST, 0)
      local _, port = server:getsockname()
      local c = assert(socket.connect(HOST, port))
      local a = assert(server:accept())
      local ta = cs.thread.spawn(function() return server:accept() end)
      local tr = cs.thread.spawn(function() return c:receive() end)
      cs.sleep(0.02)
      assert.equal(1, cs.thread.kill(tr))
      assert.equal(1, cs.thread.kill(ta))
      assert.same({ nil, "closed", "" }, { c:receive() })
      assert.same({ nil, "closed" }, { server:accept() })
      c:close()
      a:close()
      server:close()
      assert.equal(fds, helper.fds())
    end)
  end)

  it("sockets never closed are collected with their descriptors",
     function()
    helper.run(function()
      local fds = helper.fds()
      local function leave_open()
        local server = socket.bind(HOST, 0)
        local _, port = server:getsockname()
        local keep = { server }
        for _ = 1, 50 do
          local c = assert(socket.connect(HOST, port))
          c:send("x")
          local u = socket.udp()
          u:setsockname(HOST, 0)
          keep[#keep + 1], keep[#keep + 2] = c, u
        end
        return cs.stats().sockets
      end
      assert.is_true(leave_open() >= 101)
      collectgarbage()
      collectgarbage()
      assert.equal(0, cs.stats().sockets)
      assert.equal(fds, helper.fds())
    end)
  end)

  it("wrong arguments raise LuaSocket's messages; what is not available "
     .. "says so", function()
    helper.run(function()
      local t = socket.tcp()
      assert.has_error(function() t:send("x") end,
        "calling 'send' on bad self (tcp{client} expected)")
      assert.error_matches(function() socket.tcp().connect({}, HOST, 1) end,
        "calling 'connect' on bad self %(tcp{any} expected%)")
      assert.error_matches(function() t:connect(nil, 1) end,
        "bad argument #1 to 'connect' %(string expected, got no value%)")
      assert.error_matches(function() t:settimeout("x") end,
        "bad argument #1 to 'settimeout' %(number expected, got string%)")
      assert.error_matches(function() socket.select({}, {}, 1) end,
        "socket.select is not available")
      local u = socket.udp()
      assert.error_matches(function() u:setpeername("*") end,
        "setpeername%(\"%*\"%) is not available")
      assert.error_matches(function() socket.dns.tohostname(HOST) end,
        "socket.dns.tohostname is not available")
      assert.error_matches(function() socket.connect(HOST, 1, HOST, 5) end,
        "connect with a local port is not available")
      u:close()
      t:close()
    end)
  end)
end)

describe("sock:shutdown(\"send\") (a cosocket extension)", function()
  after_each(helper.after_each)

  it("ends the write half: the peer reads its end and answers", function()
    helper.run(function()
      local c, a = net.pair()
      c:send("12345")
      assert.equal(1, c:shutdown("send"))
      assert.equal("12345", a:receive("*a"))
      a:send("got it")
      a:close()
      assert.same({ nil, "closed" }, { c:send("x") })
      assert.equal("got it", c:receive("*a"))
      assert.same({ nil, "closed" }, { c:setkeepalive() })
      assert.same({ nil, "closed" }, { c:shutdown("send") })
      assert.equal(1, c:close())
      assert.same({ nil, "closed" }, { c:shutdown("send") })
    end)
  end)

  it("raises for other directions and argument counts", function()
    helper.run(function()
      local c, a = net.pair()
      assert.has_error(function() c:shutdown() end,
        "expecting 2 arguments (including the object), but got 1")
      assert.error_matches(function() c:shutdown("receive") end,
        "only \"send\" is supported")
      assert.error_matches(function() c:shutdown({}) end,
        "string expected, got table")
      c:close()
      a:close()
    end)
  end)

  it("says \"socket busy writing\" while a send is parked", function()
    helper.run(function()
      local c, a = net.pair()
      local t = cs.thread.spawn(function()
        return c:send(string.rep("x", net.big(16 * 1024 * 1024)))
      end)
      cs.sleep(0.02)
      assert.same({ nil, "socket busy writing" },
                  { c:shutdown("send") })
      cs.thread.kill(t)
      c:close()
      a:close()
    end)
  end)
end)

describe("udp sendto and receivefrom (cosocket extensions)", function()
  after_each(helper.after_each)

  it("send to an address from an unconnected socket; the sender's "
     .. "address comes back", function()
    helper.run(function()
      local u = cs.socket.udp()
      assert.equal(1, u:bind(HOST, 0))
      local _, port = u:getsockname()
      local w = cs.socket.udp()
      assert.equal(1, w:sendto("one", HOST, port)) -- makes its socket
      assert.equal(1, w:sendto({ "t", { "w", 0 } }, "localhost", port))
      local _, wport = w:getsockname()
      u:settimeout(1000)
      assert.same({ "one", HOST, wport }, { u:receivefrom() })
      assert.same({ "tw", HOST, wport }, { u:receivefrom(2) })
      -- and back to it
      assert.equal(1, u:sendto("reply", HOST, wport))
      w:settimeout(1000)
      assert.same({ "reply", HOST, port }, { w:receivefrom() })
      -- a connected socket says who sent, too
      local v = cs.socket.udp()
      assert.equal(1, v:setpeername(HOST, port))
      v:send("x")
      local _, vport = v:getsockname()
      assert.same({ "x", HOST, vport }, { u:receivefrom() })
      assert.same({ nil, "socket is connected" },
                  { v:sendto("x", HOST, port) })
      u:settimeout(50)
      assert.same({ nil, "timeout" }, { u:receivefrom() })
      u:close()
      v:close()
      w:close()
      assert.same({ nil, "closed" }, { u:receivefrom() })
    end)
  end)

  it("unix datagram sockets: the sender's path", function()
    helper.run(function()
      local p1, p2 = net.unix_path(), net.unix_path()
      local u, w = cs.socket.udp(), cs.socket.udp()
      assert.equal(1, u:bind("unix:" .. p1))
      assert.equal(1, w:bind("unix:" .. p2))
      w:setpeername("unix:" .. p1)
      w:send("hi")
      u:settimeout(1000)
      assert.same({ "hi", "unix:" .. p2 }, { u:receivefrom() })
      u:close()
      w:close()
    end)
  end)

  it("bad arguments, names, busy, a kill while parked", function()
    helper.run(function()
      local u = cs.socket.udp()
      assert.has_error(function() u:sendto("x", HOST) end,
        "expecting 4 arguments (including the object), but got 3")
      assert.has_error(function() u:receivefrom(1, 2) end,
        "expecting 1 or 2 arguments (including the object), but got 3")
      assert.error_matches(function() u:sendto(print, HOST, 1) end,
        "got function")
      assert.same({ nil, "bad port number: 0" }, { u:sendto("x", HOST, 0) })
      assert.same({ nil, "bad port number: 70000" },
                  { u:sendto("x", HOST, 70000) })
      assert.same({ nil, "bad address" },
                  { u:sendto("x", "example.org", 53) })
      assert.equal(1, u:bind(HOST, 0))
      local _, port = u:getsockname()
      local t = cs.thread.spawn(function() return u:receivefrom() end)
      cs.sleep(0.01)
      assert.same({ nil, "socket busy" }, { u:receivefrom() })
      -- a send goes out while another thread waits to receive
      assert.equal(1, u:sendto("to self", HOST, port))
      local ok, d, ip, p = cs.thread.wait(t)
      assert.same({ true, "to self", HOST, port }, { ok, d, ip, p })
      t = cs.thread.spawn(function() return u:receivefrom() end)
      cs.sleep(0.01)
      assert.equal(1, cs.thread.kill(t))
      -- the kill closed it, as for every cosocket parked in I/O
      assert.same({ nil, "closed" }, { u:receivefrom() })
      u:close()
    end)
  end)
end)

-- (another seed: CS_LS_SEED=n; more rounds: CS_STRESS_SCALE)
describe("random arguments (seed 46)", function()
  after_each(helper.after_each)

  -- every call raises or returns; none crashes, parks for long or leaks
  it("to corosched.luasocket's methods and the cosocket extensions",
     function()
    local socket = require "corosched.luasocket"
    local VALUES = { 0, 1, -1, 2.5, -0.0, 1e300, 0 / 0, math.maxinteger,
                     math.mininteger, "", "x", "*l", "*a", "*x", "l", "10",
                     "-3", "127.0.0.1", "::1", "localhost", "unix:/nonexist",
                     "send", "receive", "both", "bogus", "tcp-nodelay",
                     "keepalive", "reuseaddr", "sndbuf", true, false, {},
                     { "a", { "b" } }, print, 65535, 65536, 70000 }
    math.randomseed(tonumber(os.getenv("CS_LS_SEED")) or 46)
    local function any()
      local n = math.random(0, 4)
      local t = {}
      for i = 1, n do t[i] = VALUES[math.random(#VALUES)] end
      return t, n
    end
    local TCP = { "connect", "send", "receive", "shutdown", "setoption",
                  "getoption", "getpeername", "getsockname", "getstats",
                  "setstats", "getfamily", "getfd", "dirty", "gettimeout",
                  "accept", "bind", "listen" }
    local UDP = { "setsockname", "setpeername", "send", "receive", "sendto",
                  "receivefrom", "getsockname", "getpeername", "getfamily",
                  "setoption", "gettimeout" }
    local RAW_TCP = { "shutdown", "send", "receive", "getsockname" }
    local RAW_UDP = { "sendto", "receivefrom", "bind", "getsockname" }
    helper.run(function()
      -- the resolver's socket stays once made (names are looked up below)
      cs.resolve("nonexistent.invalid")
      local fds = helper.fds()
      local l = assert(cs.socket.listen(HOST, 0))
      local _, port = l:getsockname()
      VALUES[#VALUES + 1] = port
      local handlers = {}
      local server = cs.thread.spawn(function()
        while true do
          local c = l:accept()
          if not c then
            for _, t in ipairs(handlers) do cs.thread.wait(t) end
            return
          end
          c:send("data\n")
          handlers[#handlers + 1] = cs.thread.spawn(function()
            c:receive("*a") -- until the client closes
            c:close()
          end)
        end
      end)
      local calls = 0
      local rounds = math.floor(60 * helper.scale) + 10
      for _ = 1, rounds do
        local objs = { socket.tcp(), socket.tcp4(), socket.udp(),
                       assert(socket.connect(HOST, port)) }
        local raw_t, raw_u = cs.socket.tcp(), cs.socket.udp()
        assert(raw_t:connect(HOST, port))
        for _ = 1, 30 do
          local o = objs[math.random(#objs)]
          o:settimeout(0.002)
          raw_t:settimeout(2)
          raw_u:settimeout(2)
          local names = getmetatable(o).__tostring(o):find("^udp") and UDP
                        or TCP
          local name = names[math.random(#names)]
          local args, n = any()
          if name == "connect" then -- never to a name (the resolver)
            args, n = { HOST, VALUES[math.random(#VALUES)] }, 2
          end
          pcall(o[name], o, table.unpack(args, 1, n))
          calls = calls + 1
          local r = math.random(2) == 1 and raw_t or raw_u
          local list = r == raw_t and RAW_TCP or RAW_UDP
          local rname = list[math.random(#list)]
          args, n = any()
          if rname == "sendto" and type(args[2]) == "string"
             and not args[2]:find("^[%d.:]+$") then
            args[2] = HOST -- never a name
          end
          pcall(r[rname], r, table.unpack(args, 1, n))
          calls = calls + 1
        end
        for _, o in ipairs(objs) do o:close() end
        raw_t:close()
        raw_u:close()
      end
      l:close()
      cs.thread.wait(server)
      assert.equal(rounds * 60, calls)
      collectgarbage()
      collectgarbage()
      assert.equal(fds, helper.fds())
    end, { timeout = 60 })
  end)
end)
