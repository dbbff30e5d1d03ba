-- Bug 1: killing a light thread parked in accept() on a unix socket
-- listener closed the listener (as it should) but never removed its socket
-- file: close() and the __gc saw the fd already closed and returned early,
-- so the path stayed taken and listen() on it failed with "address already
-- in use".
-- Bug 2 (found by spec/18's listener model), from the first fix, which
-- removed the file at that later close() or collection: a program that
-- had removed the stale file itself and listened on the path again lost
-- the new listener's file when the old listener object was closed or
-- collected (the new listener, still listening, could no longer be
-- reached).
-- Fixed (cs_tcp.c, cs_server_cleanup): the kill closes the listener as
-- close() does, its file removed at once.
local helper = require "spec.helper"
local net = require "spec.support.net"
local cs = helper.cs

describe("regression: kill of a thread parked in a unix accept", function()
  after_each(helper.after_each)

  it("removes the file at once: the path is free", function()
    local path = net.unix_path()
    net.run(function()
      local srv = assert(cs.socket.listen("unix:" .. path))
      local t = cs.thread.spawn(function() return srv:accept() end)
      assert.equal(1, cs.thread.kill(t))
      assert.is_false(net.exists(path))
      assert.same({ nil, "closed" }, { srv:close() })
      srv = assert(cs.socket.listen("unix:" .. path))
      srv:close()
    end)
  end)

  for _, how in ipairs({ "close", "collect" }) do
    it(("the old listener's %s leaves a new listener's file"):format(how),
       function()
      local path = net.unix_path()
      net.run(function()
        local old = assert(cs.socket.listen("unix:" .. path))
        local t = cs.thread.spawn(function() return old:accept() end)
        assert.equal(1, cs.thread.kill(t))
        os.remove(path) -- (what a program did with the stale file)
        local new = assert(cs.socket.listen("unix:" .. path))
        if how == "close" then
          assert.same({ nil, "closed" }, { old:close() })
        else
          old = nil -- luacheck: ignore
          collectgarbage()
          collectgarbage()
        end
        assert.is_true(net.exists(path))
        local c = cs.socket.tcp()
        assert.equal(1, c:connect("unix:" .. path))
        local s = assert(new:accept())
        s:close()
        c:close()
        new:close()
      end)
    end)
  end
end)
