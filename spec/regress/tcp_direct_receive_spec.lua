-- Guards the receive fast path (cs_tcp.c, cs_tcp_rx_direct): a result
-- that is whole in what one recv returned is pushed from there, and the
-- rest is kept for the next receive. Every pattern must give exactly what
-- the general path gives when one read holds several results, a CR sits
-- inside a line, a line is exactly maxline long or one byte longer, and
-- when the leftover is then consumed by another pattern.
local helper = require "spec.helper"
local net = require "spec.support.net"
local cs = helper.cs

-- c receives all of `data` in one piece (sent before the first receive)
local function one_read(data, maxline)
  local c, s = net.pair()
  assert(s:send(data))
  if maxline then c:setoption("maxline", maxline) end
  cs.sleep(0.01) -- the bytes are in c's kernel buffer: one recv gets them
  return c, s
end

describe("regression: receive straight from the read", function()
  after_each(helper.after_each)

  it("serves mixed patterns out of one read, in order", function()
    net.run(function()
      local c, s = one_read("ab\r\ncd\nxyz12345c\rr\nnext\r\r\ntail")
      assert.equal("ab", c:receive())
      assert.equal("cd", c:receive("*l"))
      assert.equal("xyz", c:receive(3))
      -- (the short-I/O build hands bytes over one by one: no one read)
      local any = os.getenv("CS_SHORT_IO") and c:receive(2)
                  or c:receiveany(2)
      assert.equal("12", any)
      assert.equal("345", c:receive("3"))
      assert.equal("cr", c:receive()) -- a CR inside the line is dropped
      assert.equal("next", c:receive()) -- two CRs before the LF
      local tail = os.getenv("CS_SHORT_IO") and c:receive(4)
                   or c:receiveany(100)
      assert.equal("tail", tail)
      s:close()
      assert.same({ nil, "closed", "" }, { c:receive() })
      c:close()
    end)
  end)

  it("keeps maxline exact: maxline bytes pass, one more fails", function()
    net.run(function()
      local c, s = one_read("12345678\r\n123456789\nrest\n", 8)
      assert.equal("12345678", c:receive())
      assert.same({ nil, "line too long", "12345678" }, { c:receive() })
      c:close(); s:close()
    end)
  end)

  it("hands the leftover to receiveuntil and \"*a\"", function()
    net.run(function()
      local c, s = one_read("line\nA--B--C")
      assert.equal("line", c:receive())
      local r = c:receiveuntil("--")
      assert.equal("A", r())
      assert.equal("B", r())
      s:close()
      assert.equal("C", c:receive("*a"))
      c:close()
    end)
  end)

  it("joins a result that arrives after a part was read", function()
    net.run(function()
      local c, s = net.pair()
      cs.thread.spawn(function()
        s:send("hel"); cs.sleep(0.01); s:send("lo\nwor"); cs.sleep(0.01)
        s:send("ld\n")
      end)
      assert.equal("hello", c:receive())
      assert.equal("world", c:receive())
      c:close(); s:close()
    end, { timeout = 5 })
  end)
end)
