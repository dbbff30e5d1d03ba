-- Bug: a receive after the last data waited for its timeout (60 s by
-- default) instead of returning the peer's reset, when the socket was
-- watched by a libevent event rather than by corosched's epoll set (the
-- path of kqueue platforms, and of core._testing.no_epoll, which
-- check-gcstress runs). A read shorter than the buffer was taken to mean
-- "drained, wait for the next edge", unless the peer's FIN had been seen
-- with the data (EV_CLOSED). But libevent reports a reset as EV_READ
-- alone, and kqueue has no EV_CLOSED at all: the reset (or FIN) came
-- under the same edge as the data, and no edge followed. Found by spec/66
-- (stream-lua-nginx-module's t/023-preread/tcp-socket.t TEST 1).
-- Fixed (cs_tcp.c, cs_tcp_fill): a short read ends the reading only on a
-- socket of the epoll set, whose events say a FIN, a reset or an error
-- came with the data (cs_socket.c, cs_poll_run).
local helper = require "spec.helper"
local net = require "spec.support.net"
local cs = helper.cs

local T = require("corosched.core")._testing

describe("regression: the peer's last data and its reset or FIN", function()
  after_each(helper.after_each)

  -- the peer sends its answer and closes: with the request unread, the
  -- close is a reset; with it read (drain), a FIN
  local function scenario(drain)
    local c, s = net.pair()
    local req = "a request the server never reads"
    c:settimeout(2000 * helper.slack)
    assert(c:send(req))
    if drain then assert(s:receive(#req)) end
    local peer = cs.thread.spawn(function()
      cs.sleep(0.05)
      assert(s:send("testing\npreread\n"))
      s:close()
    end)
    local r = {}
    for i = 1, 3 do r[i] = { c:receive() } end
    c:close()
    assert(cs.thread.wait(peer))
    return r
  end

  for _, mode in ipairs({ "the epoll set", "libevent's events" }) do
    local run_it = it
    if mode ~= "the epoll set" and not T then run_it = pending end
    -- (short-I/O: recv moves one byte and the reads go on anyway)
    run_it("a reset after the last data ends the read at once (" .. mode
           .. ")", function()
      net.run(function()
        local was = T and T.no_epoll(mode ~= "the epoll set")
        local t0 = cs.now()
        local r = scenario(false)
        if T then T.no_epoll(was) end
        cs.update_time()
        assert.same({ "testing" }, r[1])
        assert.same({ "preread" }, r[2])
        assert.same({ nil, "connection reset by peer", "" }, r[3])
        assert.is_true(cs.now() - t0 < 1.5 * helper.slack)
      end)
    end)

    run_it("a FIN after the last data ends the read at once (" .. mode
           .. ")", function()
      net.run(function()
        local was = T and T.no_epoll(mode ~= "the epoll set")
        local t0 = cs.now()
        local r = scenario(true)
        if T then T.no_epoll(was) end
        cs.update_time()
        assert.same({ "testing" }, r[1])
        assert.same({ "preread" }, r[2])
        assert.same({ nil, "closed", "" }, r[3])
        assert.is_true(cs.now() - t0 < 1.5 * helper.slack)
      end)
    end)
  end
end)
