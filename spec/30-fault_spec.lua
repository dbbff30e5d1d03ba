-- Fault injection on real loopback sockets, with the testing build's hooks
-- (core._testing.inject(op, errno, count): the next `count` calls of op
-- fail with errno before reaching the system; csrc/cs_net.h). Run by
-- `make check-shortio` (testing build, CS_SHORT_IO=1: every recv/send
-- moves one byte and every other call says EAGAIN) and by `make test`
-- when the testing build is the one loaded; with a normal build the whole
-- file is pending.
--
-- What is checked, per injected errno:
--   ECONNRESET / EPIPE / ENOBUFS on recv or send: the operation returns
--     nil and the error string of cs_net.h's table, the socket is closed
--     (the next call says "closed"), the peer and the other threads go on.
--   EINTR on socket, connect, accept, recv, send: retried, invisible.
--   EMFILE / ENFILE on socket (connect, listen, udp) and accept: a clear
--     error, no fd taken, and the next attempt works; accept leaves the
--     connection queued for the next accept.
-- and after each test: cs.stats() clean (helper.run) and as many open fds
-- as before. The last test lowers the soft fd limit for real (a child
-- lua5.4 under `ulimit -n 64`) and opens sockets until EMFILE.
local helper = require "spec.helper"
local net = require "spec.support.net"
local cs = helper.cs
local core = require "corosched.core"
local T = core._testing

-- Linux errno numbers
local E = { EINTR = 4, EPIPE = 32, EMFILE = 24, ENFILE = 23, ENOBUFS = 105,
            ECONNRESET = 104, ECONNABORTED = 103, ECONNREFUSED = 111 }

local MSG = {
  ECONNRESET = "connection reset by peer",
  EPIPE = "broken pipe",
  ENOBUFS = "no buffer space available",
  EMFILE = "too many open files",
  ENFILE = "too many open files in system",
  ECONNREFUSED = "connection refused",
}

if not T then
  describe("fault injection", function()
    pending("needs a testing build (make check-shortio, or "
            .. "make BUILD=build-testing DEFS=-DCS_TESTING all and "
            .. "LUA_CPATH=build-testing/?.so): core._testing is absent")
  end)
  return
end

local function inject(op, name, count)
  assert(T.inject(op, assert(E[name], name), count or 1))
end

-- runs fn inside helper.run and checks that no fd was left open (the
-- event base, created by the first cs.run of the process, stays: it is
-- made first)
local based = false
local function run(fn, opts)
  if not based then
    cs.run(function() end)
    based = true
  end
  collectgarbage()
  collectgarbage()
  local before = helper.fds()
  local res = table.pack(helper.run(fn, opts))
  collectgarbage()
  collectgarbage()
  assert.equal(before, helper.fds(), "open fds before and after")
  return table.unpack(res, 1, res.n)
end

-- a thread that counts while the test runs: the loop must go on (it
-- stops by itself after 2 s, so that a failing test does not hang)
local function ticker()
  local n = { count = 0, stop = false }
  n.th = cs.thread.spawn(function()
    local deadline = helper.clock() + 2
    while not n.stop and helper.clock() < deadline do
      n.count = n.count + 1
      cs.sleep(0.001)
    end
  end)
  function n.finish()
    n.stop = true
    cs.thread.wait(n.th)
    return n.count
  end
  return n
end

describe("fault injection", function()
  after_each(function()
    T.inject() -- clears every op
    helper.after_each()
  end)

  describe("recv", function()
    for _, name in ipairs({ "ECONNRESET", "ENOBUFS" }) do
      it(name .. ": receive returns the error and closes the socket",
         function()
        run(function()
          local tick = ticker()
          local c, s = net.pair()
          assert(s:send("hello\n"))
          assert.equal("hello", c:receive("*l"))
          local sockets = cs.stats().sockets
          assert(s:send("world\n"))
          inject("recv", name)
          local data, err, partial = c:receive("*l")
          assert.is_nil(data)
          assert.equal(MSG[name], err)
          assert.equal("", partial)
          -- closed (API.md: a send after it says so; OpenResty 0.10.x
          -- ends the read half only); close() says 1 once, as there
          assert.equal(sockets - 1, cs.stats().sockets)
          assert.same({ nil, "closed" }, { c:receive("*l") })
          assert.same({ nil, "closed" }, { c:send("x") })
          assert.equal(1, c:close())
          assert.same({ nil, "closed" }, { c:close() })
          -- the peer sees the close (a reset: "world" was never read)
          local d2, err2 = s:receive("*l")
          assert.is_nil(d2)
          assert.is_truthy(err2 == "closed" or err2 == MSG.ECONNRESET, err2)
          s:close()
          assert(tick.finish() > 0)
        end)
      end)
    end

    it("ECONNRESET after part of a line: the parked reader gets the "
       .. "error and the partial line", function()
      run(function()
        local c, s = net.pair()
        local r = cs.thread.spawn(function() return c:receive("*l") end)
        assert(s:send("abc"))
        cs.sleep(0.02) -- r has read "abc" and parks for the rest
        inject("recv", "ECONNRESET")
        -- wakes r; its next recv fails (with short I/O, "d" may already
        -- have made r close with unread data: then this send is reset)
        s:send("d\n")
        assert.same({ true, nil, MSG.ECONNRESET, "abc" },
                    { cs.thread.wait(r) })
        assert.same({ nil, "closed" }, { c:receive(1) })
        c:close()
        s:close()
      end)
    end)

    it("ECONNRESET in receive(n), receiveany and a receiveuntil iterator",
       function()
      run(function()
        local calls = {
          function(c) return c:receive(4) end,
          function(c) return c:receiveany(10) end,
          function(c) return c:receiveuntil("--")() end,
          function(c) return c:receive("*a") end,
        }
        for _, call in ipairs(calls) do
          local c, s = net.pair()
          assert(s:send("z")) -- readable, so that a recv is attempted
          inject("recv", "ECONNRESET")
          local d, err = call(c)
          assert.is_nil(d)
          assert.equal(MSG.ECONNRESET, err)
          assert.same({ nil, "closed" }, { c:receive(1) })
          assert.same({ nil, "closed" }, { c:send("x") })
          assert.equal(1, c:close())
          s:close()
        end
      end)
    end)

    it("EINTR is retried: the data arrives intact", function()
      run(function()
        local c, s = net.pair()
        inject("recv", "EINTR", 5)
        assert(s:send("one\ntwo\n"))
        assert.equal("one", c:receive("*l"))
        assert.equal("two", c:receive("*l"))
        c:close()
        s:close()
      end)
    end)
  end)

  describe("send", function()
    for _, name in ipairs({ "EPIPE", "ECONNRESET", "ENOBUFS" }) do
      it(name .. ": send returns the error and ends the write half",
         function()
        run(function()
          local tick = ticker()
          local c, s = net.pair()
          local sockets = cs.stats().sockets
          inject("send", name)
          assert.same({ nil, MSG[name] }, { c:send("hello\n") })
          -- the write half is over (OpenResty), the read half goes on
          assert.equal(sockets, cs.stats().sockets)
          assert.same({ nil, "closed" }, { c:send("x") })
          assert(s:send("still\n"))
          assert.equal("still", c:receive())
          assert.equal(1, c:close())
          assert.equal(sockets - 1, cs.stats().sockets)
          assert.same({ nil, "closed", "" }, { s:receive("*l") })
          s:close()
          assert(tick.finish() > 0)
        end)
      end)
    end

    it("EPIPE in the middle of a send: the error, the write half ended",
       function()
      run(function()
        local c, s = net.pair()
        assert(c:setoption("sndbuf", 4096))
        assert(s:setoption("rcvbuf", 4096))
        local data = ("x"):rep(1000000)
        local w = cs.thread.spawn(function() return c:send(data) end)
        cs.sleep(0.01) -- some bytes went; the buffers are full: w parks
        inject("send", "EPIPE")
        local d = cs.thread.spawn(function() return s:receive("*a") end)
        local ok, n, err = cs.thread.wait(w) -- woken by d's reads: fails
        assert.is_true(ok)
        assert.is_nil(n)
        assert.equal(MSG.EPIPE, err)
        assert.equal(1, c:close()) -- (only the write half had ended)
        local ok2, got = cs.thread.wait(d) -- up to the close
        assert.is_true(ok2)
        assert(#got > 0 and #got < #data, #got)
        assert.equal(data:sub(1, #got), got)
        s:close()
      end)
    end)

    it("EINTR is retried: the data arrives intact", function()
      run(function()
        local c, s = net.pair()
        inject("send", "EINTR", 5)
        assert.equal(9, c:send({ "one\n", "two", "\n", 1 }))
        assert.equal("one", s:receive("*l"))
        assert.equal("two", s:receive("*l"))
        assert.equal("1", s:receive(1))
        c:close()
        s:close()
      end)
    end)
  end)

  describe("socket", function()
    for _, name in ipairs({ "EMFILE", "ENFILE", "ENOBUFS" }) do
      it(name .. ": connect says so, takes no fd, and works next time",
         function()
        run(function()
          local srv, port = net.listen()
          local fds, sockets = helper.fds(), cs.stats().sockets
          local c = cs.socket.tcp()
          inject("socket", name)
          assert.same({ nil, MSG[name] }, { c:connect("127.0.0.1", port) })
          assert.equal(fds, helper.fds())
          assert.equal(sockets, cs.stats().sockets)
          assert.same({ nil, "closed" }, { c:send("x") })
          -- the same object connects once the fds are back
          assert.equal(1, c:connect("127.0.0.1", port))
          local s = assert(srv:accept())
          assert(c:send("ok\n"))
          assert.equal("ok", s:receive())
          c:close()
          s:close()
          srv:close()
        end)
      end)
    end

    it("EMFILE: listen says so", function()
      run(function()
        inject("socket", "EMFILE")
        assert.same({ nil, MSG.EMFILE },
                    { cs.socket.listen("127.0.0.1", 0) })
        local srv = assert(cs.socket.listen("127.0.0.1", 0))
        srv:close()
      end)
    end)

    it("EMFILE: a udp setpeername says so", function()
      if not cs.socket.udp then
        pending("no cs.socket.udp in this build")
        return
      end
      run(function()
        local u = cs.socket.udp()
        inject("socket", "EMFILE")
        assert.same({ nil, MSG.EMFILE }, { u:setpeername("127.0.0.1", 9) })
        assert.equal(1, u:setpeername("127.0.0.1", 9))
        u:close()
      end)
    end)

    it("EINTR is retried", function()
      run(function()
        local srv, port = net.listen()
        inject("socket", "EINTR", 3)
        local c = cs.socket.tcp()
        assert.equal(1, c:connect("127.0.0.1", port))
        c:close()
        srv:close()
      end)
    end)
  end)

  describe("connect", function()
    it("ECONNREFUSED / ENOBUFS: the error, the fd closed", function()
      run(function()
        local srv, port = net.listen()
        for _, name in ipairs({ "ECONNREFUSED", "ENOBUFS" }) do
          local fds = helper.fds()
          local c = cs.socket.tcp()
          inject("connect", name)
          assert.same({ nil, MSG[name] }, { c:connect("127.0.0.1", port) })
          assert.equal(fds, helper.fds())
          assert.same({ nil, "closed" }, { c:receive() })
        end
        srv:close()
      end)
    end)

    it("EINTR is retried", function()
      run(function()
        local srv, port = net.listen()
        inject("connect", "EINTR", 2)
        local c = cs.socket.tcp()
        assert.equal(1, c:connect("127.0.0.1", port))
        local s = assert(srv:accept())
        assert(c:send("x\n"))
        assert.equal("x", s:receive())
        c:close()
        s:close()
        srv:close()
      end)
    end)
  end)

  describe("accept", function()
    for _, name in ipairs({ "EMFILE", "ENFILE" }) do
      it(name .. ": accept says so, the connection waits for the next one",
         function()
        run(function()
          local tick = ticker()
          local srv, port = net.listen()
          local c = cs.socket.tcp()
          assert.equal(1, c:connect("127.0.0.1", port))
          local sockets = cs.stats().sockets
          inject("accept", name, 3)
          for _ = 1, 3 do
            assert.same({ nil, MSG[name] }, { srv:accept() })
            assert.equal(sockets, cs.stats().sockets)
          end
          local s = assert(srv:accept())
          assert(c:send("still here\n"))
          assert.equal("still here", s:receive())
          c:close()
          s:close()
          srv:close()
          assert(tick.finish() > 0)
        end)
      end)
    end

    it("EMFILE while an acceptor is parked: it wakes with the error, and "
       .. "a later accept gets the connection", function()
      run(function()
        local srv, port = net.listen()
        local a = cs.thread.spawn(function() return srv:accept() end)
        cs.sleep(0.01)
        inject("accept", "EMFILE")
        local c = cs.socket.tcp()
        assert.equal(1, c:connect("127.0.0.1", port))
        assert.same({ true, nil, MSG.EMFILE }, { cs.thread.wait(a) })
        local s = assert(srv:accept())
        assert(c:send("x\n"))
        assert.equal("x", s:receive())
        c:close()
        s:close()
        srv:close()
      end)
    end)

    it("EINTR and ECONNABORTED are retried", function()
      run(function()
        local srv, port = net.listen()
        local c = cs.socket.tcp()
        assert.equal(1, c:connect("127.0.0.1", port))
        inject("accept", "EINTR", 2)
        local s = assert(srv:accept())
        s:close()
        c:close()
        c = cs.socket.tcp()
        assert.equal(1, c:connect("127.0.0.1", port))
        inject("accept", "ECONNABORTED", 2)
        s = assert(srv:accept())
        assert(c:send("x\n"))
        assert.equal("x", s:receive())
        s:close()
        c:close()
        srv:close()
      end)
    end)
  end)

  describe("a real EMFILE (ulimit -n 64 in a child process)", function()
    it("connect and accept say \"too many open files\"; the listener "
       .. "works again once fds are freed; nothing leaks", function()
      local code = [=[
local core = require "corosched.core"
if os.getenv("CS_SHORT_IO") == "1" and core._testing then
  core._testing.short_io(true)
end
local cs = require "corosched"
local lfs = require "lfs"
local function fds()
  local n = 0
  for f in lfs.dir("/proc/self/fd") do
    if f ~= "." and f ~= ".." then n = n + 1 end
  end
  return n - 1
end
local out = {}
local function say(k, v) out[#out + 1] = k .. "=" .. tostring(v) end
cs.run(function() end) -- the event base and the sockets' epoll set stay
local fds0 = fds()
cs.run(function()
  local srv = assert(cs.socket.listen("127.0.0.1", 0))
  local _, port = srv:getsockname()
  local clients, err = {}, nil
  while #clients < 200 do
    local c = cs.socket.tcp()
    local ok, e = c:connect("127.0.0.1", port)
    if not ok then err = e break end
    clients[#clients + 1] = c
  end
  say("connect_err", err)
  say("clients", #clients)
  say("sockets_full", cs.stats().sockets == #clients + 1)
  -- every fd is taken: accept cannot take a queued connection
  local s, aerr = srv:accept()
  say("accept_err", aerr)
  say("accept_again", select(2, srv:accept()))
  -- free two fds: accept works, and gets the oldest connection
  clients[#clients]:close()
  clients[#clients] = nil
  clients[#clients]:close()
  clients[#clients] = nil
  s = assert(srv:accept())
  assert(clients[1]:send("first\n"))
  say("first", s:receive("*l"))
  s:close()
  -- the loop goes on: a sleep and a timer still work
  local fired = false
  cs.timer.at(0.001, function() fired = true end)
  cs.sleep(0.01)
  say("timer", fired)
  for _, c in ipairs(clients) do c:close() end
  -- the rest of the backlog: accept and close each
  srv:settimeout(100)
  local n = 0
  while true do
    local a = srv:accept()
    if not a then break end
    n = n + 1
    a:close()
  end
  say("drained", n > 0)
  srv:close()
end)
collectgarbage()
say("sockets", cs.stats().sockets)
say("fds_back", fds() == fds0)
print(table.concat(out, ";"))
]=]
      local tmp = os.tmpname()
      local f = assert(io.open(tmp, "w"))
      f:write(code)
      f:close()
      local cmd = ("ulimit -n 64 && %s%s %s 2>&1")
        :format(helper.lua_env(), os.getenv("CS_LUA") or "lua5.4", tmp)
      local p = assert(io.popen(cmd, "r"))
      local out = p:read("a")
      local ok = p:close()
      os.remove(tmp)
      assert(ok, "child failed:\n" .. out)
      local r = {}
      for k, v in out:gmatch("([%w_]+)=([^;\n]*)") do r[k] = v end
      assert.equal(MSG.EMFILE, r.connect_err, out)
      assert(tonumber(r.clients) > 20, out)
      assert.equal("true", r.sockets_full, out)
      assert.equal(MSG.EMFILE, r.accept_err, out)
      assert.equal(MSG.EMFILE, r.accept_again, out)
      assert.equal("first", r.first, out)
      assert.equal("true", r.timer, out)
      assert.equal("true", r.drained, out)
      assert.equal("0", r.sockets, out)
      assert.equal("true", r.fds_back, out)
    end)
  end)
end)
