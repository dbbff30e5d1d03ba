-- connect's pool_size + backlog options: OpenResty's backlog queue. With
-- `backlog`, at most pool_size connections (connected or idle in the pool)
-- exist for the pool key; further connects wait (up to backlog of them)
-- until one closes, or fail.
local helper = require "spec.helper"
local net = require "spec.support.net"
local cs = helper.cs
local spawn, wait = cs.thread.spawn, cs.thread.wait

local function listener()
  local srv = assert(cs.socket.listen("127.0.0.1", 0))
  local _, port = srv:getsockname()
  local acceptor = spawn(function()
    local conns = {}
    while true do
      local c = srv:accept()
      if not c then break end
      conns[#conns + 1] = c
    end
    for _, c in ipairs(conns) do c:close() end
  end)
  return srv, port, acceptor
end

-- a pool of one connection (a, connected) with a backlog of one, and a
-- thread t whose connect waits in that backlog
local function one_waiting(pool)
  local srv, port, acceptor = listener()
  local opts = { pool = pool, pool_size = 1, backlog = 1 }
  local a = cs.socket.tcp()
  assert.equal(1, a:connect("127.0.0.1", port, opts))
  local t = spawn(function()
    return cs.socket.tcp():connect("127.0.0.1", port, opts)
  end)
  assert.equal("connect backlog", net.parked_on(t))
  return srv, port, acceptor, opts, a, t
end

describe("tcp connect backlog", function()
  after_each(helper.after_each)

  it("queues connects beyond pool_size and fails beyond backlog", function()
    helper.run(function()
      local srv, port, acceptor = listener()
      local opts = { pool = "bl1", pool_size = 2, backlog = 1 }
      local a, b = cs.socket.tcp(), cs.socket.tcp()
      assert.equal(1, a:connect("127.0.0.1", port, opts))
      assert.equal(1, b:connect("127.0.0.1", port, opts))
      local log = {}
      local c = cs.socket.tcp()
      local t = spawn(function()
        local ok, err = c:connect("127.0.0.1", port, opts)
        log[#log + 1] = "c " .. tostring(ok or err)
        return ok
      end)
      assert.same({}, log) -- parked in the backlog queue
      local d = cs.socket.tcp()
      assert.same({ nil, "too many waiting connect operations" },
                  { d:connect("127.0.0.1", port, opts) })
      cs.sleep(0.01)
      assert.same({}, log)
      a:close() -- frees a slot: c goes on
      assert.same({ true, 1 }, { wait(t) })
      assert.same({ "c 1" }, log)
      b:close()
      c:close()
      srv:close()
      wait(acceptor)
    end)
  end)

  it("a queued connect times out with the connect timeout", function()
    helper.run(function()
      local srv, port, acceptor = listener()
      local opts = { pool = "bl2", pool_size = 1, backlog = 5 }
      local a = cs.socket.tcp()
      assert.equal(1, a:connect("127.0.0.1", port, opts))
      local c = cs.socket.tcp()
      c:settimeouts(30, 1000, 1000)
      local t0 = helper.clock()
      assert.same({ nil, "timeout" }, { c:connect("127.0.0.1", port, opts) })
      assert.is_true(helper.clock() - t0 >= 0.025)
      a:close()
      -- the slot is free again
      assert.equal(1, c:connect("127.0.0.1", port, opts))
      c:close()
      srv:close()
      wait(acceptor)
    end)
  end)

  it("an idle pooled connection keeps its slot; reuse takes it back",
     function()
    helper.run(function()
      local srv, port, acceptor = listener()
      local opts = { pool = "bl3", pool_size = 1, backlog = 1 }
      local a = cs.socket.tcp()
      assert.equal(1, a:connect("127.0.0.1", port, opts))
      assert.equal(1, a:setkeepalive(30))
      local b = cs.socket.tcp()
      assert.equal(1, b:connect("127.0.0.1", port, opts))
      assert.equal(1, b:getreusedtimes())
      local c = cs.socket.tcp()
      local t = spawn(function() return c:connect("127.0.0.1", port, opts) end)
      b:close()
      assert.same({ true, 1 }, { wait(t) })
      assert.equal(0, c:getreusedtimes())
      c:close()
      srv:close()
      wait(acceptor)
    end)
  end)

  -- lua-nginx-module: setkeepalive ends by resuming the first waiting
  -- connect (ngx_http_lua_socket_tcp_resume_conn_op), which takes the
  -- idle connection (t/068-socket-keepalive.t TEST 37)
  it("setkeepalive hands the connection to the first queued connect",
     function()
    helper.run(function()
      local srv, port, acceptor = listener()
      local opts = { pool = "bl5", pool_size = 1, backlog = 2 }
      local a = cs.socket.tcp()
      assert.equal(1, a:connect("127.0.0.1", port, opts))
      local _, aport = a:getsockname()
      local b, c = cs.socket.tcp(), cs.socket.tcp()
      local order = {}
      local function queued(sock, name)
        return spawn(function()
          local ok, err = sock:connect("127.0.0.1", port, opts)
          order[#order + 1] = name
          return ok, err
        end)
      end
      local tb, tc = queued(b, "b"), queued(c, "c")
      cs.sleep(0.01)
      assert.equal(1, a:setkeepalive(10000, 1))
      assert.same({ true, 1 }, { wait(tb) }) -- at once, not at a timeout
      assert.same({ "b" }, order)
      assert.equal(1, b:getreusedtimes())
      local _, bport = b:getsockname()
      assert.equal(aport, bport) -- the same connection
      assert.equal(1, b:setkeepalive(10000, 1)) -- and on to c
      assert.same({ true, 1 }, { wait(tc) })
      assert.equal(2, c:getreusedtimes())
      assert.same({ "b", "c" }, order)
      c:close()
      srv:close()
      wait(acceptor)
    end)
  end)

  it("a handed connection whose connect is killed is closed, its slot "
     .. "freed", function()
    helper.run(function()
      local srv, port, acceptor, opts, a, t = one_waiting("bl6")
      local sockets = cs.stats().sockets
      assert.equal(1, a:setkeepalive(10000, 1)) -- handed to t, not run yet
      assert.equal(1, cs.thread.kill(t))
      assert.equal(sockets - 1, cs.stats().sockets)
      -- nothing idle, and the slot is free: a new connection, at once
      local c = cs.socket.tcp()
      c:settimeout(1000)
      assert.equal(1, c:connect("127.0.0.1", port, opts))
      assert.equal(0, c:getreusedtimes())
      c:close()
      srv:close()
      wait(acceptor)
    end)
  end)

  it("a connect woken for a freed slot and killed before it ran gives "
     .. "the slot back", function()
    helper.run(function()
      local srv, port, acceptor, opts, a, t = one_waiting("bl7")
      assert.equal(1, a:close()) -- the slot is reserved for t, not run yet
      assert.equal(1, cs.thread.kill(t))
      -- the slot is free: a new connection at once (had the reservation
      -- stayed, this one would wait in the backlog and time out)
      local c = cs.socket.tcp()
      c:settimeout(1000)
      assert.equal(1, c:connect("127.0.0.1", port, opts))
      -- and only one: the next one waits
      local d = cs.socket.tcp()
      d:settimeout(50)
      assert.same({ nil, "timeout" }, { d:connect("127.0.0.1", port, opts) })
      c:close()
      srv:close()
      wait(acceptor)
    end)
  end)

  it("killing a queued connect leaves the queue consistent", function()
    helper.run(function()
      local srv, port, acceptor, opts, a, t = one_waiting("bl4")
      assert.equal(1, cs.thread.kill(t))
      -- its place in the backlog is free again
      local c = cs.socket.tcp()
      local u = spawn(function() return c:connect("127.0.0.1", port, opts) end)
      a:close()
      assert.same({ true, 1 }, { wait(u) })
      c:close()
      srv:close()
      wait(acceptor)
    end)
  end)
end)
