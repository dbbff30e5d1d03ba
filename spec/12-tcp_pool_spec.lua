-- The connection pool of the TCP cosocket on real loopback sockets:
-- setkeepalive, getreusedtimes, pool keys (host:port, unix path, opts.pool),
-- pool_size and LRU eviction, the idle timeout, a peer closing or writing
-- to an idle connection, unread data (API.md "Sockets"; lua-nginx-module's
-- README tcpsock:setkeepalive / getreusedtimes, t/068-socket-keepalive.t).
--
-- Pools outlive cs.run, and helper.run fails on any socket left open, so
-- every test empties the pools it filled: with net.drain() below or by
-- letting a short idle timeout expire.
local helper = require "spec.helper"
local net = require "spec.support.net"
local cs = helper.cs
local spawn, wait = cs.thread.spawn, cs.thread.wait

-- A server thread that answers each line with "<conn id>:<line>" on every
-- connection it accepts (ids count from 1), until the client closes. It
-- records what happened to each connection in `log` ("eof 2", ...).
local function id_server(log)
  local srv, port = net.listen()
  local n = 0
  local th = spawn(function()
    while true do
      local c = srv:accept()
      if not c then return end
      c:setoption("tcp-nodelay", true) -- no Nagle delay for short writes
      n = n + 1
      local id = n
      spawn(function()
        while true do
          local line, err = c:receive()
          if not line then
            if log then log[#log + 1] = err .. " " .. id end
            break
          end
          if line == "quit" then break end
          if line == "junk" then c:send("unasked\n") else
            assert(c:send(id .. ":" .. line .. "\n"))
          end
        end
        c:close()
      end)
    end
  end)
  return port, function() srv:close(); wait(th) end
end

-- asks conn s for `what`; returns the answer ("<id>:<what>")
local function ask(s, what)
  s:setoption("tcp-nodelay", true)
  assert(s:send(what .. "\n"))
  return assert(s:receive())
end

-- takes every idle connection of the pool of (host, port, opts) and
-- closes it; returns how many there were
local function drain(host, port, opts)
  local n = 0
  while true do
    local s = cs.socket.tcp()
    assert(s:connect(host, port, opts))
    local reused = s:getreusedtimes()
    s:close()
    if reused == 0 then return n end
    n = n + 1
  end
end

describe("tcp connection pool", function()
  after_each(helper.after_each)

  it("reuses a connection: getreusedtimes() is 0, 1, 2... (068 TEST 1)",
     function()
    net.run(function()
      local port, stop = id_server()
      for i = 0, 3 do
        local s = cs.socket.tcp()
        assert.equal(1, s:connect("127.0.0.1", port))
        assert.equal(i, s:getreusedtimes())
        assert.equal("1:q" .. i, ask(s, "q" .. i)) -- the same connection
        assert.equal(1, s:setkeepalive())
        -- the object is closed now (068: setkeepalive twice)
        assert.same({ nil, "closed" }, { s:setkeepalive() })
        assert.same({ nil, "closed" }, { s:getreusedtimes() })
        assert.same({ nil, "closed" }, { s:send("x") })
        assert.same({ nil, "closed" }, { s:close() })
      end
      assert.equal(1, drain("127.0.0.1", port))
      stop()
    end)
  end)

  it("counts pooled connections in cs.stats().sockets", function()
    net.run(function()
      local port, stop = id_server()
      local base = cs.stats().sockets
      local a, b = cs.socket.tcp(), cs.socket.tcp()
      assert(a:connect("127.0.0.1", port))
      assert(b:connect("127.0.0.1", port))
      assert.equal("1:x", ask(a, "x"))
      assert.equal("2:y", ask(b, "y"))
      local with_server = cs.stats().sockets -- + the accepted ones
      assert.equal(1, a:setkeepalive())
      assert.equal(1, b:setkeepalive())
      assert.equal(with_server, cs.stats().sockets)
      assert.equal(2, drain("127.0.0.1", port))
      net.wait_until(function() return cs.stats().sockets == base end)
      assert.equal(base, cs.stats().sockets) -- the listener
      stop()
    end)
  end)

  it("gives the most recently used connection first", function()
    net.run(function()
      local port, stop = id_server()
      local a, b = cs.socket.tcp(), cs.socket.tcp()
      assert(a:connect("127.0.0.1", port))
      assert(b:connect("127.0.0.1", port))
      assert.equal("1:a", ask(a, "a"))
      assert.equal("2:b", ask(b, "b"))
      a:setkeepalive()
      b:setkeepalive()
      local s = cs.socket.tcp()
      assert(s:connect("127.0.0.1", port))
      assert.equal("2:s", ask(s, "s"))
      s:close()
      assert.equal(1, drain("127.0.0.1", port))
      stop()
    end)
  end)

  it("keys pools by host:port, unix path or opts.pool", function()
    local path = net.unix_path()
    net.run(function()
      local port, stop = id_server()
      local s = cs.socket.tcp()
      assert(s:connect("127.0.0.1", port))
      assert.equal("1:a", ask(s, "a"))
      s:setkeepalive()
      -- the same peer under another name is another pool
      assert(s:connect("localhost", port))
      assert.equal(0, s:getreusedtimes())
      assert.equal("2:b", ask(s, "b"))
      s:setkeepalive()
      -- a named pool
      assert(s:connect("127.0.0.1", port, { pool = "mine" }))
      assert.equal(0, s:getreusedtimes())
      assert.equal("3:c", ask(s, "c"))
      s:setkeepalive()
      assert(s:connect("localhost", port, { pool = "mine" }))
      assert.equal(1, s:getreusedtimes())
      assert.equal("3:d", ask(s, "d")) -- whatever the host
      s:setkeepalive()
      assert(s:connect("127.0.0.1", port))
      assert.equal("1:e", ask(s, "e"))
      s:setkeepalive()
      assert(s:connect("localhost", port))
      assert.equal("2:f", ask(s, "f"))
      s:setkeepalive()
      assert.equal(1, drain("127.0.0.1", port))
      assert.equal(1, drain("localhost", port))
      assert.equal(1, drain("127.0.0.1", port, { pool = "mine" }))
      stop()
      -- unix sockets: the path is the key
      local usrv = assert(cs.socket.listen("unix:" .. path))
      spawn(function()
        local c = assert(usrv:accept())
        while true do
          local line = c:receive()
          if not line then break end
          c:send("u:" .. line .. "\n")
        end
        c:close()
      end)
      assert(s:connect("unix:" .. path))
      assert.equal("u:1", ask(s, "1"))
      s:setkeepalive()
      assert(s:connect("unix:" .. path))
      assert.equal(1, s:getreusedtimes())
      assert.equal("u:2", ask(s, "2"))
      s:close()
      usrv:close()
    end)
  end)

  it("evicts the least recently used connection beyond pool_size "
     .. "(setkeepalive's size)", function()
    net.run(function()
      local log = {}
      local port, stop = id_server(log)
      local socks = {}
      for i = 1, 3 do
        socks[i] = cs.socket.tcp()
        assert(socks[i]:connect("127.0.0.1", port))
        assert.equal(i .. ":hi", ask(socks[i], "hi"))
      end
      for i = 1, 3 do assert.equal(1, socks[i]:setkeepalive(0, 2)) end
      -- 1 was put first, and is the one closed
      assert.is_true(net.wait_until(function() return #log == 1 end))
      assert.same({ "closed 1" }, log)
      local s = cs.socket.tcp()
      assert(s:connect("127.0.0.1", port))
      assert.equal("3:x", ask(s, "x"))
      s:close()
      assert(s:connect("127.0.0.1", port))
      assert.equal("2:y", ask(s, "y"))
      s:close()
      assert(s:connect("127.0.0.1", port))
      assert.equal(0, s:getreusedtimes())
      s:close()
      stop()
    end)
  end)

  it("takes pool_size from connect's options; the size is fixed when the "
     .. "pool is created", function()
    net.run(function()
      local log = {}
      local port, stop = id_server(log)
      local opts = { pool = "sized", pool_size = 1 }
      local a, b = cs.socket.tcp(), cs.socket.tcp()
      assert(a:connect("127.0.0.1", port, opts))
      assert(b:connect("127.0.0.1", port, opts))
      assert.equal("1:a", ask(a, "a"))
      assert.equal("2:b", ask(b, "b"))
      assert.equal(1, a:setkeepalive(0, 100)) -- 100 ignored: size 1
      assert.equal(1, b:setkeepalive(0, 100))
      assert.is_true(net.wait_until(function() return #log == 1 end))
      assert.same({ "closed 1" }, log)
      assert.equal(1, drain("127.0.0.1", port, opts))
      stop()
    end)
  end)

  -- OpenResty frees a pool when its last connection goes (068 TEST 2): a
  -- pool made again takes the new size; one connection taken from it, still
  -- open, keeps it (068 TEST 27)
  it("a pool with no connection left is made anew: its new size counts",
     function()
    net.run(function()
      local port, stop = id_server()
      local opts = { pool = "anew" }
      local s = cs.socket.tcp()
      assert(s:connect("127.0.0.1", port, opts))
      assert.equal(1, s:setkeepalive(0, 1))
      assert(s:connect("127.0.0.1", port, opts)) -- taken: keeps the pool
      local t = cs.socket.tcp()
      assert(t:connect("127.0.0.1", port, opts))
      assert.equal(1, t:setkeepalive(0, 5)) -- size 1 still
      assert.equal(1, s:setkeepalive(0, 5)) -- evicts t's
      assert.equal(1, drain("127.0.0.1", port, opts))
      -- nothing left: size 3 now
      local socks = {}
      for i = 1, 3 do
        socks[i] = cs.socket.tcp()
        assert(socks[i]:connect("127.0.0.1", port, opts))
      end
      for i = 1, 3 do assert.equal(1, socks[i]:setkeepalive(0, 3)) end
      assert.equal(3, drain("127.0.0.1", port, opts))
      stop()
    end)
  end)

  it("pools of keys no longer used do not pile up", function()
    net.run(function()
      local srv, port = net.listen()
      local server = spawn(function() -- one connection at a time, no thread
        while true do
          local c = srv:accept()
          if not c then return end
          c:receive() -- until the client closes
          c:close()
        end
      end)
      local n = 500
      local function churn(first)
        for i = first, first + n - 1 do
          local s = cs.socket.tcp()
          local opts = { pool = "key" .. i }
          assert(s:connect("127.0.0.1", port, opts))
          assert.equal(1, s:setkeepalive())
          assert(s:connect("127.0.0.1", port, opts)) -- from the pool
          assert.equal(1, s:getreusedtimes())
          s:close()
          cs.sleep(0) -- the server closes its side
        end
        cs.sleep(0.01)
        collectgarbage()
        collectgarbage()
        return collectgarbage("count")
      end
      local base = churn(1)
      local after = churn(n + 1)
      -- without the sweep every key keeps a pool: > 100 bytes each
      assert.is_true(after - base < n * 40 / 1024,
                     ("%.1f KiB more for %d keys"):format(after - base, n))
      srv:close()
      wait(server)
    end)
  end)

  it("closes an idle connection after the idle timeout", function()
    net.run(function()
      local log = {}
      local port, stop = id_server(log)
      local s = cs.socket.tcp()
      assert(s:connect("127.0.0.1", port))
      assert.equal("1:a", ask(s, "a"))
      local base = cs.stats().sockets
      local t0 = helper.clock()
      assert.equal(1, s:setkeepalive(100))
      assert.equal(base, cs.stats().sockets)
      assert.is_true(net.wait_until(function() return #log == 1 end))
      local dt = helper.clock() - t0
      assert.same({ "closed 1" }, log)
      assert.is_true(dt >= 0.095, dt)
      assert.is_true(dt < 1 * helper.slack, dt)
      net.wait_until(function() return cs.stats().sockets == base - 2 end)
      assert.equal(base - 2, cs.stats().sockets)
      assert(s:connect("127.0.0.1", port))
      assert.equal(0, s:getreusedtimes())
      assert.equal("2:b", ask(s, "b"))
      s:close()
      stop()
    end)
  end)

  -- the idle timeout is a heap entry that no thread waits for
  it("an idle timeout is not a pending timeout: cs.stats().timeouts "
     .. "leaves it out, and a deadlock is reported at once", function()
    local srv, port, a
    local t0 = helper.clock()
    local ok, err = pcall(cs.run, function()
      srv, port = net.listen()
      local s = cs.socket.tcp()
      assert(s:connect("127.0.0.1", port))
      a = assert(srv:accept())
      assert.equal(1, s:setkeepalive(60000))
      assert.equal(0, cs.stats().timeouts)
      cs.queue.new():pop()
    end)
    assert.is_false(ok)
    assert.matches("^corosched: deadlock: 1 light thread", err)
    assert.is_true(helper.clock() - t0 < 1 * helper.slack)
    net.run(function()
      assert.equal(1, drain("127.0.0.1", port))
      a:close(); srv:close()
    end)
  end)

  it("keeps an idle connection forever with timeout 0", function()
    net.run(function()
      local port, stop = id_server()
      local s = cs.socket.tcp()
      assert(s:connect("127.0.0.1", port))
      assert.equal("1:a", ask(s, "a"))
      assert.equal(1, s:setkeepalive(0))
      cs.sleep(0.2)
      assert(s:connect("127.0.0.1", port))
      assert.equal(1, s:getreusedtimes())
      assert.equal("1:b", ask(s, "b"))
      s:close()
      stop()
    end)
  end)

  it("drops an idle connection when the peer closes it while pooled",
     function()
    net.run(function()
      local port, stop = id_server()
      local s = cs.socket.tcp()
      assert(s:connect("127.0.0.1", port))
      assert.equal("1:a", ask(s, "a"))
      assert(s:send("quit\n")) -- the server will close it...
      assert.equal(1, s:setkeepalive()) -- ...after it is pooled
      local base = cs.stats().sockets
      assert.is_true(net.wait_until(function() -- both ends are gone
        return cs.stats().sockets == base - 2
      end))
      assert(s:connect("127.0.0.1", port))
      assert.equal(0, s:getreusedtimes())
      assert.equal("2:b", ask(s, "b"))
      s:close()
      stop()
    end)
  end)

  it("drops an idle connection that receives data nobody asked for",
     function()
    net.run(function()
      local port, stop = id_server()
      local s = cs.socket.tcp()
      assert(s:connect("127.0.0.1", port))
      assert.equal("1:a", ask(s, "a"))
      assert(s:send("junk\n")) -- "unasked" comes back later
      assert.equal(1, s:setkeepalive())
      local base = cs.stats().sockets
      assert.is_true(net.wait_until(function() -- both ends are gone
        return cs.stats().sockets == base - 2
      end))
      assert(s:connect("127.0.0.1", port))
      assert.equal(0, s:getreusedtimes())
      s:close()
      stop()
    end)
  end)

  -- in the short-I/O mode every recv reads one byte: nothing is buffered
  local it_buffered = net.short_io and pending or it

  it_buffered("refuses unread data in the buffer: nil, \"unread data in buffer\"; "
     .. "the socket stays usable (068 TEST 6)", function()
    net.run(function()
      local port, stop = id_server()
      local s = cs.socket.tcp()
      assert(s:connect("127.0.0.1", port))
      assert(s:send("abc\n"))
      assert.equal("1", s:receive(1))
      assert.same({ nil, "unread data in buffer" }, { s:setkeepalive() })
      assert.equal(":abc", s:receive())
      assert.equal(1, s:setkeepalive())
      assert.equal(1, drain("127.0.0.1", port))
      stop()
    end)
  end)

  it("refuses data left in the kernel: nil, \"connection in dubious "
     .. "state\" and the socket is closed (068 TEST 5)", function()
    net.run(function()
      local port, stop = id_server()
      local s = cs.socket.tcp()
      assert(s:connect("127.0.0.1", port))
      assert.equal("1:a", ask(s, "a"))
      local base = cs.stats().sockets
      assert(s:send("b\n"))
      cs.sleep(0.05) -- the answer is in the kernel, not read
      assert.same({ nil, "connection in dubious state" },
                  { s:setkeepalive() })
      assert.equal(base - 1, cs.stats().sockets)
      assert.same({ nil, "closed" }, { s:receive() })
      assert(s:connect("127.0.0.1", port))
      assert.equal(0, s:getreusedtimes())
      s:close()
      stop()
    end)
  end)

  -- lua-nginx-module 0.10.21+ (ngx_http_lua_socket_tcp_setkeepalive: read
  -- eof or pending_eof, before the busy and unread-data checks; t/058
  -- TEST 73): nil, "closed", and the socket stays until close()
  it("after the peer's FIN: nil, \"closed\"; never pooled, left open",
     function()
    net.run(function()
      local c, s = net.pair()
      s:close()
      assert.equal("", c:receive("*a"))
      assert.same({ nil, "closed" }, { c:setkeepalive() })
      local c2, s2 = net.pair()
      s2:close()
      cs.sleep(0.01) -- the FIN is in, no read has seen it
      assert.same({ nil, "closed" }, { c2:setkeepalive() })
      local c3, s3 = net.pair()
      s3:send("bye\n")
      s3:close()
      assert.equal("bye", c3:receive()) -- the FIN came with the data
      assert.same({ nil, "closed" }, { c3:setkeepalive() })
      local c4, s4 = net.pair()
      s4:send("more")
      s4:close()
      cs.sleep(0.01) -- unread data and a FIN: "closed" comes first
      assert.same({ nil, "closed" }, { c4:setkeepalive() })
      assert.equal(1, c:close())
      assert.equal(1, c2:close())
      assert.equal(1, c3:close())
      assert.equal(1, c4:close())
      assert.equal(0, cs.stats().sockets)
    end)
  end)

  it("on a closed socket: nil, \"closed\"", function()
    net.run(function()
      assert.same({ nil, "closed" }, { cs.socket.tcp():setkeepalive() })
      local c, s = net.pair()
      c:close()
      assert.same({ nil, "closed" }, { c:setkeepalive() })
      s:close()
    end)
  end)

  it("closes an accepted socket (it has no pool) and returns 1", function()
    net.run(function()
      local c, s = net.pair()
      assert.equal(1, s:setkeepalive())
      assert.same({ nil, "closed" }, { s:close() })
      assert.same({ nil, "closed", "" }, { c:receive() })
      c:close()
    end)
  end)

  it("raises on bad arguments", function()
    net.run(function()
      local c, s = net.pair()
      assert.error_matches(function() c:setkeepalive(10, 0) end,
                           "bad \"pool_size\" option value: 0", nil, true)
      assert.has_error(function() c:setkeepalive("x") end)
      -- a negative idle timeout is no error: OpenResty casts it to an
      -- unsigned count of ms, which has expired at once
      local n = cs.stats().sockets
      assert.equal(1, c:setkeepalive(-1))
      assert.is_true(net.wait_until(function()
        return cs.stats().sockets == n - 1
      end))
      s:close()
    end)
  end)

  it("a connection taken from the pool works for both directions and "
     .. "timeouts", function()
    net.run(function()
      local port, stop = id_server()
      local s = cs.socket.tcp()
      assert(s:connect("127.0.0.1", port))
      assert.equal("1:a", ask(s, "a"))
      s:setkeepalive()
      assert(s:connect("127.0.0.1", port))
      s:settimeout(50)
      assert.same({ nil, "timeout", "" }, { s:receive() })
      assert.equal("1:b", ask(s, "b"))
      assert.equal("127.0.0.1", (s:getpeername()))
      s:close()
      stop()
    end)
  end)
end)

-- Pools outlive cs.run. While no loop runs, nothing watches their idle
-- connections: the next cs.run first closes those whose idle time ran out
-- or whose peer closed meanwhile, so that no connect takes them (in
-- OpenResty the worker's loop never stops). The peer is another process,
-- spec/support/script_peer.py: a script on the connection's first line.
describe("tcp connection pool between two cs.run", function()
  after_each(helper.after_each)

  local function start_peer()
    local dir = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
    local cmd = ("exec env -u LD_PRELOAD python3 %s/support/script_peer.py "
                 .. "--parent %s </dev/null"):format(dir, net.own_pid())
    local proc = assert(io.popen(cmd, "r"))
    local line = proc:read("l") or ""
    local port, pid = line:match("^tcp (%d+) .* pid (%d+)")
    assert(port, "script_peer.py did not start: " .. line)
    return tonumber(port), tonumber(pid), proc
  end

  -- blocks the process (no loop runs)
  local function pause(sec)
    os.execute(("env -u LD_PRELOAD sleep %.2f"):format(sec * helper.slack))
  end

  it("closes the idle connections that expired or whose peer closed "
     .. "while no loop ran", function()
    local port, pid, proc = start_peer()
    -- one cs.run: a connect (a new connection gets `script`), an echo
    -- round trip where the peer echoes, then setkeepalive(idle) or close;
    -- returns getreusedtimes()
    local function once(script, idle)
      local reused
      cs.run(function()
        local s = cs.socket.tcp()
        assert(s:connect("127.0.0.1", port))
        reused = s:getreusedtimes()
        if reused == 0 then assert(s:send(script .. "\n")) end
        if script == "e" then
          assert(s:send("ping\n"))
          assert.equal("ping", s:receive())
        end
        if idle then assert.equal(1, s:setkeepalive(idle)) else s:close() end
      end)
      return reused
    end
    local ok, err = pcall(function()
      assert.equal(0, once("e", 10000))
      -- kept: the next cs.run takes it and it works
      assert.equal(1, once("e", 100))
      assert.equal(1, cs.stats().sockets)
      pause(0.3) -- more than its idle time of 100 ms
      assert.equal(0, once("s:0.1 C", 10000)) -- a new connection
      pause(0.5) -- the peer closes this one meanwhile
      assert.equal(0, once("e", nil)) -- a new one again, closed
      assert.equal(0, cs.stats().sockets)
    end)
    net.stop_process(pid, proc)
    assert(ok, err)
  end)
end)
