-- Conformance: lua-resty-core's t/socket-tcp-setoption.t (TEST 1-15)
-- and t/socket-tcp-getoption.t (TEST 1-8), the setoption/getoption of
-- the TCP cosocket (lib/resty/core/socket.lua over lua-nginx-module's
-- ngx_http_lua_ffi_socket_tcp_setoption/getoption), replayed on
-- corosched. Each `it` is one block, named after it ("setoption TEST 4:
-- ..."); the Lua code under test uses the ngx global of corosched.ngx
-- and what it prints with ngx.say is compared with the block's
-- --- response_body (or matched against --- response_body_like). The
-- nginx side ($TEST_NGINX_SERVER_PORT: the blocks only connect and
-- close) is a corosched listener on 127.0.0.1 that accepts and waits
-- for the client to close. A block answered with a 500 whose error log
-- holds a message ("--- error_code: 500") becomes a check that the call
-- raises an error with that message.
--
-- setoption, covered: 1-15.
--   (15: the block breaks the socket's fd through an FFI test hook to
--   make setsockopt fail; here the option fails for real: tcp-nodelay
--   on a unix socket, EOPNOTSUPP.)
-- getoption, covered: 1-8.
-- skipped: none. corosched's own "maxline" option is not in these files.
local helper = require "spec.helper"
local net = require "spec.support.net"
local cs = helper.cs
local ngxc = require "corosched.ngx"
local ngx_env = require "spec.support.ngx_env"
local spawn, wait = cs.thread.spawn, cs.thread.wait

-- the ngx and unpack globals and the package.preload/loaded entries that
-- install() adds are put back after each test (see spec/40-ngx_spec.lua)
local save_globals, restore_globals = ngx_env.saver()

-- net.run(fn(ngx, out)) with the ngx global installed; out.say collects
-- what the block would send as its response body, out.body() returns it
local function run(fn, opts)
  return net.run(function()
    local buf, out = {}, {}
    function out.say(...)
      local t = table.pack(...)
      for i = 1, t.n do buf[#buf + 1] = tostring(t[i]) end
      buf[#buf + 1] = "\n"
    end
    function out.body() return table.concat(buf) end
    return fn(ngxc.install(), out)
  end, opts)
end

local raised = ngx_env.raised
local holds = ngx_env.holds

-- The nginx server of $TEST_NGINX_SERVER_PORT (or a unix socket at
-- path): accepts connections and keeps each open until the client
-- closes it. Returns the port (nil for a path) and stop(), which closes
-- the listener (the connections end when the client closes them).
local function server(path)
  local srv, port
  if path then
    srv = assert(cs.socket.listen("unix:" .. path))
  else
    srv, port = net.listen()
  end
  local th = spawn(function()
    while true do
      local c = srv:accept()
      if not c then return end
      spawn(function()
        c:receive("*a")
        c:close()
      end)
    end
  end)
  return port, function()
    srv:close()
    wait(th)
  end
end

-- (Where a block returns after a failure, nginx closes the socket when
-- the request ends; the helpers below close it themselves.)

-- Setoption TEST 4-12: the default of option opt, then set to `on` and
-- read, then set to `off` and read, as the blocks print it
local function on_off(ngx, out, port, opt, on, off)
  local sock = ngx.socket.tcp()
  local ok, err = sock:connect("127.0.0.1", port)
  if not ok then
    out.say("failed to connect: ", err)
    sock:close()
    return
  end
  local v1, err1 = sock:getoption(opt)
  if not v1 then
    out.say("get default ", opt, " failed: ", err1)
    sock:close()
    return
  end

  ok, err = sock:setoption(opt, on)
  if not ok then
    out.say("enabling ", opt, " failed: ", err)
    sock:close()
    return
  end
  local v2, err2 = sock:getoption(opt)
  if not v2 then
    out.say("get enabled ", opt, " failed: ", err2)
    sock:close()
    return
  end
  out.say(opt, " changes from ", v1, " to ", v2)

  ok, err = sock:setoption(opt, off)
  if not ok then
    out.say("disable ", opt, " failed: ", err)
    sock:close()
    return
  end
  local v3, err3 = sock:getoption(opt)
  if not v3 then
    out.say("get disabled ", opt, " failed: ", err3)
    sock:close()
    return
  end
  out.say(opt, " changes from ", v2, " to ", v3)

  sock:close()
end

-- Setoption TEST 13-14: the default of buffer option opt, then set to
-- 4096 and read
local function buffer_size(ngx, out, port, opt)
  local sock = ngx.socket.tcp()
  local ok, err = sock:connect("127.0.0.1", port)
  if not ok then
    out.say("failed to connect: ", err)
    sock:close()
    return
  end
  local v1, err1 = sock:getoption(opt)
  if not v1 then
    out.say("get default ", opt, " failed: ", err1)
    sock:close()
    return
  end
  ok, err = sock:setoption(opt, 4096)
  if not ok then
    out.say("enabling ", opt, " failed: ", err)
    sock:close()
    return
  end
  local v2, err2 = sock:getoption(opt)
  if not v2 then
    out.say("get enabled ", opt, " failed: ", err2)
    sock:close()
    return
  end
  out.say(opt, " changes from ", v1, " to ", v2)
  sock:close()
end

-- Getoption TEST 4-8: the value of option opt as the blocks print it
local function get_one(ngx, out, port, opt)
  local sock = ngx.socket.tcp()
  local ok, err = sock:connect("127.0.0.1", port)
  if not ok then
    out.say("failed to connect: ", err)
    sock:close()
    return
  end
  local val, err2 = sock:getoption(opt)
  if not val then
    out.say("getoption ", opt, " failed: ", err2)
    sock:close()
    return
  end
  out.say(opt, ": ", val)
  sock:close()
end


describe("lua-resty-core t/socket-tcp-setoption.t", function()
  before_each(save_globals)
  after_each(function()
    restore_globals()
    helper.after_each()
  end)

  it("setoption TEST 1: no parameters", function()
    run(function(ngx, out)
      local port, stop = server()
      local sock = ngx.socket.tcp()
      local ok, err = sock:connect("127.0.0.1", port)
      if not ok then
        out.say("failed to connect: ", err)
      else
        ok, err = sock:setoption()
        if not ok then out.say("setoption failed: ", err) end
        ok, err = sock:setoption("sndbuf")
        if not ok then out.say("setoption failed: ", err) end
        sock:close()
      end
      stop()
      assert.equal('setoption failed: missing the "option" argument\n'
                   .. 'setoption failed: missing the "value" argument\n',
                   out.body())
    end)
  end)

  it("setoption TEST 2: unsuppotrted option name", function()
    run(function(ngx, out)
      local port, stop = server()
      local sock = ngx.socket.tcp()
      local ok, err = sock:connect("127.0.0.1", port)
      if not ok then
        out.say("failed to connect: ", err)
      else
        ok, err = sock:setoption("abc", 123)
        if not ok then out.say("setoption abc failed: ", err) end
        sock:close()
      end
      stop()
      assert.equal("setoption abc failed: unsupported option abc\n",
                   out.body())
    end)
  end)

  it("setoption TEST 3: getoption before calling connect", function()
    run(function(ngx, out)
      local fds = helper.fds()
      local sock = ngx.socket.tcp()
      -- a 500; the error log has the message
      local err = raised(function()
        local sndbuf, err = sock:setoption("sndbuf", 4000)
        if not sndbuf then
          out.say("getoption sndbuf failed: ", err)
          return
        end
        sock:close()
      end)
      assert.is_true(holds(err, "socket is never created nor connected"),
                     tostring(err))
      assert.equal("", out.body())
      assert.equal(fds, helper.fds())
    end)
  end)

  local ON_OFF = {
    { 4, "keepalive set by 1/0", "keepalive", 1, 0 },
    { 5, "keepalive set by true/false", "keepalive", true, false },
    { 6, "keepalive set by ~0/0", "keepalive", 10, 0 },
    { 7, "reuseaddr set by 1/0", "reuseaddr", 1, 0 },
    { 8, "reuseaddr set by true/false", "reuseaddr", true, false },
    { 9, "reuseaddr set by ~0/0", "reuseaddr", 10, 0 },
    { 10, "tcp-nodelay set by 1/0", "tcp-nodelay", 1, 0 },
    { 11, "tcp-nodelay set by true/false", "tcp-nodelay", true, false },
    { 12, "tcp-nodelay set by ~0/0", "tcp-nodelay", 10, 0 },
  }
  for _, t in ipairs(ON_OFF) do
    local n, title, opt, on, off = table.unpack(t)
    it(("setoption TEST %d: %s"):format(n, title), function()
      run(function(ngx, out)
        local port, stop = server()
        on_off(ngx, out, port, opt, on, off)
        stop()
        assert.equal(opt .. " changes from 0 to 1\n"
                     .. opt .. " changes from 1 to 0\n", out.body())
      end)
    end)
  end

  it("setoption TEST 13: sndbuf", function()
    run(function(ngx, out)
      local port, stop = server()
      buffer_size(ngx, out, port, "sndbuf")
      stop()
      assert.matches("^sndbuf changes from %d+ to %d+\n$", out.body())
    end)
  end)

  it("setoption TEST 14: rcvbuf", function()
    run(function(ngx, out)
      local port, stop = server()
      buffer_size(ngx, out, port, "rcvbuf")
      stop()
      assert.matches("^rcvbuf changes from %d+ to %d+\n$", out.body())
    end)
  end)

  -- the block breaks the fd (setsockopt: EBADF); here the kernel refuses
  -- TCP_NODELAY on a unix socket (EOPNOTSUPP)
  local function strerr(ngx, out, path)
    local sock = ngx.socket.tcp()
    local ok, err = sock:connect("unix:" .. path)
    if not ok then
      out.say("failed to connect: ", err)
      return
    end
    ok, err = sock:setoption("tcp-nodelay", 1)
    if not ok then
      out.say("enabling tcp-nodelay failed: ", err)
    end
    sock:close()
  end

  it("setoption TEST 15: strerr", function()
    local path = net.unix_path()
    run(function(ngx, out)
      local _, stop = server(path)
      strerr(ngx, out, path)
      stop()
      -- qr/\Aenabling rcvbuf failed: [\/\s\w]+\n\z/
      assert.matches("^enabling tcp%-nodelay failed: [/%s%w_]+\n$",
                     out.body())
    end)
  end)

  it("setoption TEST 15: strerr (the text as nginx's ngx_strerror gives "
     .. "it)", function()
    local path = net.unix_path()
    run(function(ngx, out)
      local _, stop = server(path)
      strerr(ngx, out, path)
      stop()
      assert.equal("enabling tcp-nodelay failed: Operation not supported\n",
                   out.body())
    end)
  end)
end)


describe("lua-resty-core t/socket-tcp-getoption.t", function()
  before_each(save_globals)
  after_each(function()
    restore_globals()
    helper.after_each()
  end)

  it("getoption TEST 1: no parameters", function()
    run(function(ngx, out)
      local port, stop = server()
      local sock = ngx.socket.tcp()
      local ok, err = sock:connect("127.0.0.1", port)
      if not ok then
        out.say("failed to connect: ", err)
      else
        ok, err = sock:getoption()
        if not ok then out.say("getoption failed: ", err) end
        sock:close()
      end
      stop()
      assert.equal('getoption failed: missing the "option" argument\n',
                   out.body())
    end)
  end)

  it("getoption TEST 2: unsuppotrted option name", function()
    run(function(ngx, out)
      local port, stop = server()
      local sock = ngx.socket.tcp()
      local ok, err = sock:connect("127.0.0.1", port)
      if not ok then
        out.say("failed to connect: ", err)
      else
        local sndbuf, err2 = sock:getoption("abc")
        if not sndbuf then out.say("getoption abc failed: ", err2) end
        sock:close()
      end
      stop()
      assert.equal("getoption abc failed: unsupported option abc\n",
                   out.body())
    end)
  end)

  it("getoption TEST 3: getoption before calling connect", function()
    run(function(ngx, out)
      local fds = helper.fds()
      local sock = ngx.socket.tcp()
      -- a 500; the error log has the message
      local err = raised(function()
        local sndbuf, err = sock:getoption("so_sndbuf")
        if not sndbuf then
          out.say("getoption so_sndbuf failed: ", err)
          return
        end
        sock:close()
      end)
      assert.is_true(holds(err, "socket is never created nor connected"),
                     tostring(err))
      assert.equal("", out.body())
      assert.equal(fds, helper.fds())
    end)
  end)

  local GET = {
    { 4, "keepalive" }, { 5, "reuseaddr" }, { 6, "tcp-nodelay" },
    { 7, "sndbuf" }, { 8, "rcvbuf" },
  }
  for _, t in ipairs(GET) do
    local n, opt = t[1], t[2]
    it(("getoption TEST %d: get %s"):format(n, opt), function()
      run(function(ngx, out)
        local port, stop = server()
        get_one(ngx, out, port, opt)
        stop()
        -- qr/<opt>: \d+/
        assert.is_truthy(out.body():find(opt:gsub("%-", "%%-")
                                         .. ": %d+"), out.body())
      end)
    end)
  end
end)
