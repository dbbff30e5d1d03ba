-- Divergences of corosched.luasocket from Debian's LuaSocket 3.1, found
-- by a random differential run (the same programs on both); the values
-- expected here are what LuaSocket printed for the same calls:
--  * shutdown("receive") (or "both") threw away what the peer had sent
--    already: receive said "closed" (LuaSocket reads what the kernel
--    holds, then the end comes);
--  * receive(n, prefix) with #prefix >= n, and send(data, i, j) with an
--    empty range, said "closed" on a closed socket (LuaSocket does no I/O
--    there and answers);
--  * "*line" and "*all" raised (LuaSocket reads two characters);
--  * bind() then connect() raised (a nil method), and setpeername /
--    setsockname, LuaSocket's other names, were missing;
--  * getstats/setstats answered on a master (LuaSocket: a client only),
--    setstats kept fractions (LuaSocket's longs truncate), getfd gave an
--    integer (LuaSocket a float);
--  * setoption of a boolean took any value (LuaSocket checks its type);
--    getoption of a boolean before connect failed on a tcp4() (it has a
--    descriptor in LuaSocket: false).
local helper = require "spec.helper"
local cs = helper.cs
local socket = require "corosched.luasocket"

local function pair()
  local s = assert(socket.bind("127.0.0.1", 0))
  local _, port = s:getsockname()
  local c = socket.tcp()
  assert(c:connect("127.0.0.1", tonumber(port)))
  local a = assert(s:accept())
  s:close()
  return c, a
end

local function pack(...) return { n = select("#", ...), ... } end

describe("regression: corosched.luasocket as LuaSocket 3.1", function()
  after_each(helper.after_each)

  it("shutdown(\"receive\") still reads what came", function()
    helper.run(function()
      local c, a = pair()
      a:send("line1\nrest")
      cs.sleep(0.05)
      assert.equal(1, c:shutdown("receive"))
      c:settimeout(1)
      assert.same(pack("line1", nil, nil), pack(c:receive()))
      assert.same(pack("rest", nil, nil), pack(c:receive("*a")))
      c:close()
      a:close()
    end)
  end)

  it("no I/O after close: a prefix that is enough, an empty range",
     function()
    helper.run(function()
      local c, a = pair()
      c:close()
      assert.same(pack("prefix", nil, nil), pack(c:receive(3, "prefix")))
      assert.same(pack(4.0, nil, nil), pack(c:send("abc", 5)))
      assert.same(pack(3.0, nil, nil), pack(c:send("abcdef", 4, 2)))
      assert.same({ nil, "closed", "P" }, { c:receive(5, "P") })
      a:close()
    end)
  end)

  it("\"*line\" and \"*all\"", function()
    helper.run(function()
      local c, a = pair()
      a:send("one\ntwo\n")
      a:close()
      c:settimeout(1)
      assert.same(pack("one", nil, nil), pack(c:receive("*line")))
      assert.same(pack("two\n", nil, nil), pack(c:receive("*all")))
      c:close()
    end)
  end)

  it("bind() then connect(); setsockname and setpeername", function()
    helper.run(function()
      local s = assert(socket.bind("127.0.0.1", 0))
      local _, port = s:getsockname()
      local t = socket.tcp4()
      assert.equal(1.0, t:setsockname("127.0.0.1", 0))
      local t2 = socket.tcp4()
      assert.equal(1.0, t2:setpeername("127.0.0.1", tonumber(port)))
      local t3 = socket.tcp4()
      assert.equal(1.0, t3:bind("127.0.0.1", 0))
      local _, lport = t3:getsockname()
      assert.equal(1.0, t3:connect("127.0.0.1", tonumber(port)))
      local _, cport = t3:getsockname()
      assert.equal(lport, cport) -- from the address bind() gave
      t:close()
      t2:close()
      t3:close()
      s:close()
    end)
  end)

  it("getstats/setstats on clients only, truncated; getfd a float",
     function()
    helper.run(function()
      local c, a = pair()
      assert.equal("float", math.type(c:getfd()))
      assert.equal(1.0, c:setstats(10.7, 3.2))
      local rx, tx = c:getstats()
      assert.same({ 10.0, 3.0 }, { rx, tx })
      local m = socket.tcp4()
      local ok, err = pcall(m.getstats, m)
      assert.is_false(ok)
      assert.matches("calling 'getstats' on bad self %(tcp{client} "
                     .. "expected%)", err)
      ok, err = pcall(m.setstats, m, 1, 2)
      assert.is_false(ok)
      assert.matches("calling 'setstats' on bad self", err)
      m:close()
      c:close()
      a:close()
    end)
  end)

  it("setoption checks a boolean's type; getoption before connect",
     function()
    helper.run(function()
      local m = socket.tcp4()
      assert.is_false(m:getoption("tcp-nodelay"))
      local ok, err = pcall(m.setoption, m, "tcp-nodelay", 1)
      assert.is_false(ok)
      assert.matches("bad argument #2 to 'setoption' %(boolean expected, "
                     .. "got number%)", err)
      ok, err = pcall(m.setoption, m, "keepalive")
      assert.is_false(ok)
      assert.matches("boolean expected, got no value", err)
      m:close()
    end)
  end)
end)
