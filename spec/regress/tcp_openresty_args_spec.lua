-- Bug (OpenResty differences in argument handling, cs_tcp.c):
-- * connect(host, port, {pool = 42}) raised 'bad "pool" option type:
--   number'; OpenResty takes a number as its text (lua_tostring in
--   ngx_http_lua_socket_tcp_connect).
-- * a failed receiveany() returned nil, err; OpenResty's
--   receive_retval_handler returns the partial data as a third value for
--   every read ("" for receiveany), as receive() does.
-- * setoption() returned 1 and raised for an unknown option or a missing
--   argument; lua-resty-core's setoption (lib/resty/core/socket.lua)
--   returns true, or nil with 'unsupported option <name>', 'missing the
--   "option" argument', 'missing the "value" argument'; getoption was
--   missing.
local helper = require "spec.helper"
local net = require "spec.support.net"
local cs = helper.cs

describe("regression: OpenResty's answers to arguments", function()
  after_each(helper.after_each)

  it("connect takes a numeric pool name", function()
    net.run(function()
      local port = net.serve(function(c) c:send("ok\n") end)
      local s = cs.socket.tcp()
      assert.equal(1, s:connect("127.0.0.1", port, { pool = 42 }))
      assert.equal("ok", s:receive())
      s:close()
    end)
  end)

  it("receiveany fails with nil, err, \"\"", function()
    net.run(function()
      local c, s = net.pair()
      c:settimeout(10)
      assert.same({ n = 3, nil, "timeout", "" }, table.pack(c:receiveany(5)))
      s:close()
      assert.same({ n = 3, nil, "closed", "" }, table.pack(c:receiveany(5)))
      c:close()
    end)
  end)

  it("setoption returns true or nil, err; getoption reads", function()
    net.run(function()
      local c, s = net.pair()
      assert.is_true(c:setoption("tcp-nodelay", true))
      assert.equal(1, c:getoption("tcp-nodelay"))
      assert.same({ nil, "unsupported option nope" },
                  { c:setoption("nope", 1) })
      assert.same({ nil, 'missing the "option" argument' }, { c:setoption() })
      assert.same({ nil, 'missing the "value" argument' },
                  { c:setoption("keepalive") })
      c:close(); s:close()
      assert.same({ nil, "closed" }, { c:setoption("keepalive", true) })
    end)
  end)
end)
