-- Bug: with the edge-triggered persistent read events (commit 51d998b),
-- the write event of a parked send or connect was level-triggered.
-- libevent keeps one epoll registration per fd and takes EPOLLET from the
-- event being added or removed, so the first write park turned the fd's
-- registration level-triggered for good (epoll_ctl MOD EPOLLIN|EPOLLOUT,
-- then EPOLLIN, without EPOLLET). From then on, whenever the socket had
-- unread data and nobody read it, the persistent read event fired on
-- every loop iteration: 100% CPU while the program slept (36,000
-- epoll_wait calls in 0.3 s).
-- Fixed (cs_socket.c, cs_sock_park): the write event is edge-triggered
-- too (it is one-shot, added only after a short send or a connect in
-- progress, so an edge always follows).
local helper = require "spec.helper"
local net = require "spec.support.net"
local cs = helper.cs

-- seconds of CPU this process used while fn ran
local function cpu_of(fn)
  local t0 = os.clock()
  fn()
  return os.clock() - t0
end

describe("regression: unread data and a parked send", function()
  after_each(helper.after_each)

  -- a spinning loop burns about the whole 0.3 s; an idle one next to
  -- nothing
  local LIMIT = 0.1 * helper.slack
  -- the short-I/O mode uses level-triggered events: nothing to check
  local it = net.short_io and pending or it

  it("do not make the loop spin while the send is parked", function()
    net.run(function()
      local c, s = net.pair()
      c:setoption("sndbuf", 65536)
      s:setoption("rcvbuf", 65536)
      c:settimeout(20)
      assert.same({ nil, "timeout", "" }, { c:receive() }) -- a read park
      assert(s:send("nobody reads this"))
      cs.sleep(0.01)
      local data = ("x"):rep(net.big(16 * 1024 * 1024))
      c:settimeouts(1000, 300, 1000)
      local cpu = cpu_of(function()
        assert.same({ nil, "timeout" }, { c:send(data) }) -- parks 0.3 s
      end)
      assert.is_true(cpu < LIMIT, ("%.3f s of CPU"):format(cpu))
      c:close(); s:close()
    end)
  end)

  it("nor after it", function()
    net.run(function()
      local c, s = net.pair()
      c:setoption("sndbuf", 65536)
      s:setoption("rcvbuf", 65536)
      c:settimeout(20)
      assert.same({ nil, "timeout", "" }, { c:receive() })
      -- the sends below wait for the reader: under GC stress beside
      -- another gate, 20 ms without progress happened (CI)
      c:settimeout(5000 * helper.slack)
      for _ = 1, 3 do
        local data = ("x"):rep(net.big(4 * 1024 * 1024))
        local reader = cs.thread.spawn(function()
          return #s:receive(#data)
        end)
        assert.equal(#data, c:send(data)) -- write parks
        assert.same({ true, #data }, { cs.thread.wait(reader) })
        assert(s:send("unread"))
        local cpu = cpu_of(function() cs.sleep(0.1) end)
        assert.is_true(cpu < LIMIT / 2, ("%.3f s of CPU"):format(cpu))
        assert.equal("unread", c:receive(6))
      end
      c:close(); s:close()
    end)
  end)
end)
