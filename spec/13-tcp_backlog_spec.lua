-- connect's pool_size + backlog options: OpenResty's backlog queue. With
-- `backlog`, at most pool_size connections (connected or idle in the pool)
-- exist for the pool key; further connects wait (up to backlog of them)
-- until one closes, or fail.
local helper = require "spec.helper"
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

  it("killing a queued connect leaves the queue consistent", function()
    helper.run(function()
      local srv, port, acceptor = listener()
      local opts = { pool = "bl4", pool_size = 1, backlog = 1 }
      local a = cs.socket.tcp()
      assert.equal(1, a:connect("127.0.0.1", port, opts))
      local t = spawn(function()
        return cs.socket.tcp():connect("127.0.0.1", port, opts)
      end)
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
