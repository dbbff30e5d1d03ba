-- Bug (found by spec/15's stream model): a thread parked in a socket
-- operation stopped being the socket's reader (or writer) when its event
-- or timeout woke it, not when it ran. A thread that ran in between (woken
-- in the same turn, ahead of it) could start its own operation on the
-- socket: it did not get "socket busy ...", and the two shared the
-- socket's receive state. A receiveuntil iterator parked that way had its
-- matcher taken away by the first thread's "timeout" return (a crash, a
-- NULL matcher), a line read lost its partial data, and a send's progress
-- was the other send's. In OpenResty the handler resumes the thread at
-- once, so the socket is busy until the call returns.
-- Fixed (cs_socket.c: cs_sock_wake keeps the thread as the socket's reader
-- or writer, and the park's cleanup for a kill, until its continuation
-- calls cs_sock_resumed).
--
-- Each test parks thread a with a 200 ms timeout, and thread b with a
-- sleep that ends earlier; the test body then blocks the loop past both
-- deadlines, so both are woken in the same turn, b first.
local helper = require "spec.helper"
local net = require "spec.support.net"
local cs = helper.cs
local spawn, wait = cs.thread.spawn, cs.thread.wait

local function race(op_a, op_b)
  local a = spawn(op_a)
  local b = spawn(function()
    cs.sleep(0.1)
    return op_b()
  end)
  helper.busy(0.4)
  return { wait(a) }, { wait(b) }
end

describe("regression: an operation woken but not yet resumed", function()
  after_each(helper.after_each)

  it("keeps a line read busy, and its partial data", function()
    net.run(function()
      local c, p = net.pair()
      assert(p:send("par"))
      c:settimeout(200)
      local ra, rb = race(function() return c:receive("*l") end,
                          function() return c:receiveuntil("xx")() end)
      assert.same({ true, nil, "timeout", "par" }, ra)
      assert.same({ true, nil, "socket busy reading" }, rb)
      assert(p:send("tial\nabcxx"))
      assert.equal("tial", c:receive())
      assert.equal("abc", c:receiveuntil("xx")())
      c:close()
      p:close()
    end)
  end)

  it("keeps a receiveuntil iterator's matcher (it crashed)", function()
    net.run(function()
      local c, p = net.pair()
      c:settimeout(200)
      local ra, rb = race(function() return c:receiveuntil("--")() end,
                          function() return c:receiveuntil("xx")() end)
      assert.same({ true, nil, "timeout", "" }, ra)
      assert.same({ true, nil, "socket busy reading" }, rb)
      assert(p:send("abcxxdef--"))
      assert.equal("abc", c:receiveuntil("xx")())
      assert.equal("def", c:receiveuntil("--")())
      c:close()
      p:close()
    end)
  end)

  it("keeps a send busy", function()
    if net.short_io then
      -- (one byte per call: the send never stalls long enough to time out)
      pending("a send that fills the buffers")
      return
    end
    net.run(function()
      local c, p = net.pair()
      c:settimeout(200)
      local big = string.rep("z", 64 * 1024 * 1024)
      local ra, rb = race(function() return c:send(big) end,
                          function() return c:send("x") end)
      assert.same({ true, nil, "timeout" }, ra)
      assert.same({ true, nil, "socket busy writing" }, rb)
      c:close()
      p:close()
    end)
  end)

  it("keeps a connect busy", function()
    net.run(function()
      local port, done = net.full_listener()
      local c = cs.socket.tcp()
      c:settimeout(200)
      local ra, rb = race(function() return c:connect("127.0.0.1", port) end,
                          function() return c:send("x") end)
      assert.same({ true, nil, "timeout" }, ra)
      assert.same({ true, nil, "socket busy connecting" }, rb)
      c:close()
      done()
    end)
  end)

  it("keeps an accept busy", function()
    net.run(function()
      local srv = net.listen()
      srv:settimeout(200)
      local ra, rb = race(function() return srv:accept() end,
                          function() return srv:accept() end)
      assert.same({ true, nil, "timeout" }, ra)
      assert.same({ true, nil, "socket busy accepting" }, rb)
      srv:close()
    end)
  end)

  it("keeps a UDP receive busy", function()
    net.run(function()
      local u = cs.socket.udp()
      assert(u:setpeername("127.0.0.1", net.free_port()))
      u:settimeout(200)
      local ra, rb = race(function() return u:receive() end,
                          function() return u:receive() end)
      assert.same({ true, nil, "timeout" }, ra)
      assert.same({ true, nil, "socket busy" }, rb)
      u:close()
    end)
  end)

  it("a kill before it runs cancels it and closes the socket", function()
    net.run(function()
      local c, p = net.pair()
      c:settimeout(200)
      local a = spawn(function() return c:receive() end)
      spawn(function()
        cs.sleep(0.01)
        helper.busy(0.4)
      end)
      cs.sleep(0.1) -- woken with a, ahead of it
      assert.equal("running", cs.thread.status(a))
      assert.equal(1, cs.thread.kill(a))
      assert.same({ nil, "closed" }, { c:receive() })
      assert.same({ nil, "closed" }, { c:send("x") })
      p:close()
    end)
  end)
end)
