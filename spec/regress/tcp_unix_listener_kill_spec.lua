-- Bug: killing a light thread parked in accept() on a unix socket listener
-- closed the listener (as it should) but never removed its socket file:
-- close() and the __gc saw the fd already closed and returned early, so
-- the path stayed taken and listen() on it failed with "address already
-- in use".
-- Fixed (cs_tcp.c, cs_server_close_fd): close() and __gc remove the file
-- even when the fd was closed by the kill (no other listener can have
-- bound the path meanwhile: the file was still there).
local helper = require "spec.helper"
local net = require "spec.support.net"
local cs = helper.cs

describe("regression: kill of a thread parked in a unix accept", function()
  after_each(helper.after_each)

  it("leaves the path free after close()", function()
    local path = net.unix_path()
    net.run(function()
      local srv = assert(cs.socket.listen("unix:" .. path))
      local t = cs.thread.spawn(function() return srv:accept() end)
      assert.equal(1, cs.thread.kill(t))
      assert.same({ nil, "closed" }, { srv:close() })
      assert.is_false(net.exists(path))
      srv = assert(cs.socket.listen("unix:" .. path))
      srv:close()
    end)
  end)
end)
