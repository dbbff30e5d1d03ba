-- The TCP cosocket against a real redis-server, through the ngx global of
-- corosched.ngx and a Redis client written here the way lua-resty-redis is
-- (one send of the RESP request as a nested array, replies read line by
-- line and bulk bodies by size, the connection pool). The file starts its
-- own redis-server on a free 127.0.0.1 port and on a unix socket, both in
-- a temporary directory, and stops it at the end; without redis-server it
-- is pending. What it covers: round trips, binary-safe and 1 MiB values,
-- a 1,000-command pipeline, 100 light threads sharing a pool (with and
-- without the backlog option), read timeouts on a blocking
-- command and while subscribed (the socket stays usable, as
-- lua-nginx-module's tcpsock:receive says), pub/sub, the server closing
-- connections, setkeepalive with unread data, unix sockets, a stopped
-- server; no descriptor or process is left behind.
local helper = require "spec.helper"
local net = require "spec.support.net"
local cs = helper.cs
local ngxc = require "corosched.ngx"
local ngx_env = require "spec.support.ngx_env"

if not net.which("redis-server") then
  describe("redis-server as the peer", function()
    pending("skipped: redis-server is not installed (apt-get install "
            .. "redis-server)")
  end)
  return
end

local HOST = "127.0.0.1"
local pack = table.pack

---------------------------------------------------------------------------
-- the server: a child process of this one (the shell that starts it execs
-- it, so io.popen's close reaps it), its files in a temporary directory

local server = {}

local alive = net.alive

local function start_server()
  net.server_dir(server)
  server.path = server.dir .. "/redis.sock"
  server.port = net.free_port()
  local q = net.sh_quote
  net.spawn(server, "redis", ("redis-server --port %d --bind 127.0.0.1 "
    .. "--unixsocket %s --unixsocketperm 700 --save '' --appendonly no "
    .. "--daemonize no --dir %s --logfile '' --loglevel warning")
    :format(server.port, q(server.path), q(server.dir)))
end

local function stop_server() net.stop(server) end
local function remove_dir() net.remove(server) end

---------------------------------------------------------------------------
-- A Redis client written the way lua-resty-redis is: everything it needs
-- comes from the ngx global when it is loaded.

local function redis_loader()
  local ngx = rawget(_G, "ngx")
  local tcp, null = ngx.socket.tcp, ngx.null

  local R = {}
  local mt = { __index = R }

  function R.new()
    local sock, err = tcp()
    if not sock then return nil, err end
    return setmetatable({ sock = sock }, mt)
  end

  function R:set_timeouts(c, s, r) return self.sock:settimeouts(c, s, r) end
  function R:connect(...) return self.sock:connect(...) end
  function R:set_keepalive(...) return self.sock:setkeepalive(...) end
  function R:get_reused_times() return self.sock:getreusedtimes() end
  function R:close() return self.sock:close() end

  -- the RESP request of one command: "*n\r\n" then "$len\r\narg\r\n" per
  -- argument, as a nested array for send() (numbers in it too)
  local function request(args)
    local n = args.n or #args
    local req = { "*", n, "\r\n" }
    for i = 1, n do
      local a = args[i]
      if type(a) ~= "string" then a = tostring(a) end
      req[i + 3] = { "$", #a, "\r\n", a, "\r\n" }
    end
    return req
  end
  R.request = request

  -- one reply: a status string, false and the message for an error, an
  -- integer, a string or ngx.null for a bulk, an array (its error
  -- elements as { false, msg }); nil, err when the socket fails
  local function read_reply(sock)
    local line, err = sock:receive()
    if not line then return nil, err end
    local kind, rest = line:sub(1, 1), line:sub(2)
    if kind == "+" then
      return rest
    elseif kind == "-" then
      return false, rest
    elseif kind == ":" then
      return math.tointeger(tonumber(rest))
    elseif kind == "$" then
      local size = math.tointeger(tonumber(rest))
      if not size then return nil, "bad reply: " .. line end
      if size < 0 then return null end
      local data, err2 = sock:receive(size)
      if not data then return nil, err2 end
      local crlf, err3 = sock:receive(2)
      if not crlf then return nil, err3 end
      if crlf ~= "\r\n" then return nil, "bad bulk end" end
      return data
    elseif kind == "*" then
      local n = math.tointeger(tonumber(rest))
      if not n then return nil, "bad reply: " .. line end
      if n < 0 then return null end
      local vals = {}
      for i = 1, n do
        local v, e = read_reply(sock)
        if v == nil then return nil, e end
        vals[i] = v == false and { false, e } or v
      end
      return vals
    end
    return nil, "bad reply: " .. line
  end

  function R:read_reply() return read_reply(self.sock) end

  -- sends one command without reading its reply: bytes sent or nil, err
  function R:send_cmd(...)
    return self.sock:send(request(pack(...)))
  end

  function R:cmd(...)
    local bytes, err = self:send_cmd(...)
    if not bytes then return nil, err end
    return read_reply(self.sock)
  end

  -- cmds: a list of argument lists, sent in one send(); the list of
  -- replies (errors as { false, msg }) or nil, err
  function R:pipeline(cmds)
    local reqs = {}
    for i, args in ipairs(cmds) do reqs[i] = request(args) end
    local bytes, err = self.sock:send(reqs)
    if not bytes then return nil, err end
    local replies = {}
    for i = 1, #cmds do
      local v, e = read_reply(self.sock)
      if v == nil then return nil, e end
      replies[i] = v == false and { false, e } or v
    end
    return replies
  end

  return R
end

---------------------------------------------------------------------------

-- what install() and this file add to package.preload / package.loaded,
-- put back afterwards with the ngx and unpack globals (as spec/40 does)
local save_globals, restore_globals = ngx_env.saver({ "resty.specredis" })

local ngx, redis

-- a client connected to the server's port, or with unix to its unix
-- socket; opts go to connect (timeouts: 1 s)
local function client(opts, unix, connect_ms)
  local red = assert(redis.new())
  red:set_timeouts(connect_ms or 1000, 1000, 1000)
  local ok, err
  if unix then
    ok, err = red:connect("unix:" .. server.path, opts)
  else
    ok, err = red:connect(HOST, server.port, opts)
  end
  assert(ok == 1, "connect: " .. tostring(err))
  return red
end

-- takes every idle connection out of a pool and closes it; returns how
-- many there were (pools outlive cs.run; helper.run counts them)
local function drain(opts, unix)
  return net.drain_pool(function() return client(opts, unix) end)
end

-- the field of INFO section `section`, as a number
local function info(red, section, field)
  local text = assert(red:cmd("INFO", section))
  return tonumber(text:match("\r\n" .. field .. ":(%d+)\r\n"))
end

local fds_before

describe("redis-server as the peer", function()
  lazy_setup(function()
    save_globals()
    ngx = ngxc.install()
    package.preload["resty.specredis"] = redis_loader
    redis = require "resty.specredis"
    helper.run(function() end) -- whatever the loop keeps open, first
    fds_before = helper.fds()
    start_server()
    -- bounded wait until it answers
    local ok, err = pcall(net.run, function()
      local deadline = helper.clock() + 5 * helper.slack
      while true do
        local red = assert(redis.new())
        local c, cerr = red:connect(HOST, server.port)
        if c then
          assert.equal("PONG", red:cmd("PING"))
          assert.equal("OK", red:cmd("FLUSHALL"))
          red:close()
          return
        end
        assert.equal("connection refused", cerr)
        assert(alive(server.pid), "redis-server exited")
        assert(helper.clock() < deadline, "redis-server did not listen")
        cs.sleep(0.01)
      end
    end)
    if not ok then
      local log = net.server_log(server)
      stop_server()
      remove_dir()
      error(tostring(err) .. "\nredis-server's log:\n" .. log, 0)
    end
  end)

  lazy_teardown(function()
    stop_server()
    remove_dir()
    restore_globals()
    ngx, redis = nil, nil
  end)

  after_each(helper.after_each)

  it("SET/GET round trips, binary-safe values, error replies", function()
    net.run(function()
      local red = client()
      assert.equal(0, red:get_reused_times())
      assert.equal(ngx.null, red:cmd("GET", "k"))
      assert.equal("OK", red:cmd("SET", "k", "v1"))
      assert.equal("v1", red:cmd("GET", "k"))
      assert.equal("OK", red:cmd("SET", "n", 12)) -- a number argument
      assert.equal(13, red:cmd("INCR", "n"))
      assert.equal("13", red:cmd("GET", "n"))
      local bin = "a\r\nb\0c\r\n$-1\r\n*2\r\n\0\255\r"
      assert.equal("OK", red:cmd("SET", "bin", bin))
      assert.equal(bin, red:cmd("GET", "bin"))
      assert.equal(#bin, red:cmd("STRLEN", "bin"))
      local all = {}
      for i = 0, 255 do all[#all + 1] = string.char(i) end
      all = table.concat(all)
      assert.equal("OK", red:cmd("SET", "\0key\r\n", all))
      assert.equal(all, red:cmd("GET", "\0key\r\n"))
      assert.equal("OK", red:cmd("SET", "empty", ""))
      assert.equal("", red:cmd("GET", "empty"))
      assert.same({ "v1", ngx.null, bin, "" },
                  red:cmd("MGET", "k", "nope", "bin", "empty"))
      assert.same({ n = 2, false, "WRONGTYPE Operation against a key "
                    .. "holding the wrong kind of value" },
                  pack(red:cmd("LPUSH", "k", "x")))
      local r = pack(red:cmd("NOPE", "x"))
      assert.equal(false, r[1])
      assert.matches("^ERR unknown command 'NOPE'", r[2])
      assert.equal(5, red:cmd("DEL", "k", "n", "bin", "\0key\r\n", "empty"))
      assert.equal(1, red:close())
    end)
  end)

  it("a 1 MiB value (many partial reads and writes)", function()
    net.run(function()
      local red = client()
      -- (16 KiB when every system call moves one byte)
      local big = net.payload(net.short_io and 16 * 1024 or 1024 * 1024)
      big = "\r\n\0" .. big:sub(4, -4) .. "\0\r\n"
      assert.equal("OK", red:cmd("SET", "big", big))
      assert.equal(#big, red:cmd("STRLEN", "big"))
      local got = red:cmd("GET", "big")
      assert.equal(#big, #got)
      assert.is_true(got == big, "the value read back differs")
      -- twice in one pipeline: the second body follows the first
      local rs = red:pipeline({ { "GET", "big" }, { "GET", "big" },
                                { "DEL", "big" } })
      assert.is_true(rs[1] == big and rs[2] == big, "the value differs")
      assert.equal(1, rs[3])
      assert.equal(1, red:close())
    end, { timeout = 20 })
  end)

  it("pipelines 1,000 commands in one send and reads 1,000 replies",
     function()
    net.run(function()
      local red = client()
      local cmds = {}
      for i = 1, 1000 do
        if i % 2 == 1 then
          cmds[i] = { "RPUSH", "plist", "item " .. i }
        else
          cmds[i] = { "ECHO", "echo\r\n" .. i }
        end
      end
      local replies = assert(red:pipeline(cmds))
      assert.equal(1000, #replies)
      for i = 1, 1000 do
        if i % 2 == 1 then
          assert.equal((i + 1) // 2, replies[i])
        else
          assert.equal("echo\r\n" .. i, replies[i])
        end
      end
      local list = red:cmd("LRANGE", "plist", 0, -1)
      assert.equal(500, #list)
      for j = 1, 500 do assert.equal("item " .. (2 * j - 1), list[j]) end
      -- an error in the middle of a pipeline leaves the others alone
      local rs = red:pipeline({ { "SET", "s", "x" }, { "LPOP", "s" },
                                { "GET", "s" }, { "DEL", "s", "plist" } })
      assert.same({ "OK", { false, "WRONGTYPE Operation against a key "
                    .. "holding the wrong kind of value" }, "x", 2 }, rs)
      assert.equal(1, red:close())
    end)
  end)

  -- (valgrind, or one byte per system call: fewer rounds)
  local NTH, POOL = 100, 10
  -- (fewer in the slow modes: valgrind, GC stress, ASan, short I/O)
  local PER = helper.slack > 1 and 5 or 50

  it(("%d light threads x %d INCRs on one key, connections from the pool")
     :format(NTH, PER), function()
    local popts = { pool = "incr" }
    net.run(function()
      local inspector = client()
      assert.equal(0, inspector:cmd("EXISTS", "counter"))
      local received = info(inspector, "stats", "total_connections_received")
      local fresh, reused, most = 0, 0, 0
      -- PER times: a connection from the pool, one INCR, back to the pool
      -- (which keeps POOL idle ones and closes the least recently used)
      local function worker()
        for _ = 1, PER do
          local red = client(popts)
          local n = red:get_reused_times()
          if n == 0 then fresh = fresh + 1 else reused = reused + 1 end
          most = math.max(most, n)
          assert.equal("integer", math.type(red:cmd("INCR", "counter")))
          assert.equal(1, red:set_keepalive(10000, POOL))
        end
      end
      local ths = {}
      for i = 1, NTH do ths[i] = ngx.thread.spawn(worker) end
      for i = 1, NTH do assert.same({ true }, { ngx.thread.wait(ths[i]) }) end
      assert.equal(tostring(NTH * PER), inspector:cmd("GET", "counter"))
      -- every thread opened one at first (the pool was empty); later
      -- connects mostly found one in the pool
      assert.is_true(fresh >= NTH)
      assert.equal(NTH * PER, fresh + reused)
      assert.is_true(reused > 0 and most > 0)
      assert.equal(fresh, info(inspector, "stats",
                               "total_connections_received") - received)
      -- what is left: POOL idle connections, and the server sees them
      -- (and the inspector) once it has handled the closed ones
      assert.equal(POOL + 1, cs.stats().sockets)
      assert.is_true(net.wait_until(function()
        return info(inspector, "clients", "connected_clients") == POOL + 1
      end), "the server still sees more connections")
      assert.equal(POOL, drain(popts))
      assert.equal(1, inspector:cmd("DEL", "counter"))
      assert.equal(1, inspector:close())
    end, { timeout = 20 })
  end)

  -- With connect's backlog option a pool opens POOL connections at most;
  -- the other connects wait for one. Each thread here takes a connection,
  -- does its INCRs and puts it back: as in OpenResty, that setkeepalive
  -- hands the connection to the first waiting connect
  -- (ngx_http_lua_socket_tcp_setkeepalive ends with
  -- ngx_http_lua_socket_tcp_resume_conn_op; lua-nginx-module's
  -- t/068-socket-keepalive.t TEST 37 "conn queuing: in uthread"), so the
  -- server sees POOL connections and every later thread a reused one.
  it(("%d light threads x %d INCRs through a pool of %d with backlog")
     :format(NTH, PER, POOL), function()
    local popts = { pool = "incr-backlog", pool_size = POOL, backlog = NTH }
    net.run(function()
      local inspector = client()
      local received = info(inspector, "stats", "total_connections_received")
      local ids, fresh = {}, 0
      -- one connection from the pool for PER INCRs, then back to the pool;
      -- returns its getreusedtimes()
      local function worker()
        -- (the wait in the backlog counts against the connect timeout)
        local red = client(popts, nil, 30000)
        local n = red:get_reused_times()
        if n == 0 then -- a new connection: name it, note its id
          fresh = fresh + 1
          ids[assert(red:cmd("CLIENT", "ID"))] = true
          assert.equal("OK", red:cmd("CLIENT", "SETNAME", "incr"))
        end
        for _ = 1, PER do
          assert.equal("integer", math.type(red:cmd("INCR", "counter2")))
        end
        assert.equal(1, red:set_keepalive(10000, POOL))
        return n
      end
      local ths = {}
      for i = 1, NTH do ths[i] = ngx.thread.spawn(worker) end
      for i = 1, NTH do
        local ok, n = ngx.thread.wait(ths[i])
        assert.is_true(ok, n)
        -- the first POOL threads opened every connection there is; the
        -- others waited in the backlog and had a reused one
        if i <= POOL then assert.equal(0, n) else assert.is_true(n > 0) end
      end
      assert.equal(tostring(NTH * PER), inspector:cmd("GET", "counter2"))
      assert.equal(POOL, fresh)
      local distinct = 0
      for _ in pairs(ids) do distinct = distinct + 1 end
      assert.equal(POOL, distinct)
      -- what the server saw: POOL connections, all still open (idle)
      assert.equal(POOL, info(inspector, "stats",
                              "total_connections_received") - received)
      local named = 0
      for line in inspector:cmd("CLIENT", "LIST"):gmatch("[^\n]+") do
        if line:find(" name=incr ", 1, true) then named = named + 1 end
      end
      assert.equal(POOL, named)
      assert.equal(POOL, drain(popts))
      assert.equal(1, inspector:cmd("DEL", "counter2"))
      assert.equal(1, inspector:close())
    end, { timeout = 20 })
  end)

  it("a read timeout in BLPOP leaves the connection usable", function()
    net.run(function()
      local red = client()
      red:set_timeouts(1000, 1000, 100)
      assert.same({ n = 2, nil, "timeout" }, pack(red:cmd("BLPOP", "q", 0)))
      -- again on the socket itself: nothing came, the partial data is ""
      assert.same({ n = 3, nil, "timeout", "" }, pack(red.sock:receive()))
      -- the BLPOP still waits on the server: its reply comes late
      local other = client()
      assert.equal(1, other:cmd("RPUSH", "q", "late"))
      red:set_timeouts(1000, 1000, 1000)
      assert.same({ "q", "late" }, red:read_reply())
      assert.equal("PONG", red:cmd("PING"))
      assert.equal(0, other:cmd("EXISTS", "q"))
      -- a BLPOP that times out on the server: a null array
      assert.equal(ngx.null, red:cmd("BLPOP", "q", "0.01"))
      -- a thread parked in BLPOP is woken by a push from another one
      local th = ngx.thread.spawn(function()
        return red:cmd("BLPOP", "q", 0)
      end)
      assert.equal(1, other:cmd("RPUSH", "q", "woken"))
      assert.same({ true, { "q", "woken" } }, { ngx.thread.wait(th) })
      assert.equal(1, red:close())
      assert.equal(1, other:close())
    end)
  end)

  it("pub/sub: messages, a read timeout while subscribed, more messages",
     function()
    net.run(function()
      local sub = client()
      assert.same({ "subscribe", "news", 1 }, sub:cmd("SUBSCRIBE", "news"))
      local pub = client()
      local msg = "hello\r\n\0world"
      assert.equal(1, pub:cmd("PUBLISH", "news", msg))
      assert.same({ "message", "news", msg }, sub:read_reply())
      sub:set_timeouts(1000, 1000, 100)
      assert.same({ n = 2, nil, "timeout" }, pack(sub:read_reply()))
      assert.same({ n = 3, nil, "timeout", "" }, pack(sub.sock:receive()))
      assert.equal(1, pub:cmd("PUBLISH", "news", "again"))
      sub:set_timeouts(1000, 1000, 1000)
      assert.same({ "message", "news", "again" }, sub:read_reply())
      -- a thread parked in receive gets the next one
      local th = ngx.thread.spawn(function() return sub:read_reply() end)
      assert.equal(1, pub:cmd("PUBLISH", "news", "third"))
      assert.same({ true, { "message", "news", "third" } },
                  { ngx.thread.wait(th) })
      assert.equal(0, pub:cmd("PUBLISH", "other", "nobody"))
      assert.same({ "unsubscribe", "news", 0 },
                  sub:cmd("UNSUBSCRIBE", "news"))
      assert.equal("PONG", sub:cmd("PING"))
      assert.equal(0, pub:cmd("PUBLISH", "news", "gone"))
      assert.equal(1, sub:close())
      assert.equal(1, pub:close())
    end)
  end)

  it("the server closes the connection: receive says closed", function()
    net.run(function()
      local victim = client()
      local id = victim:cmd("CLIENT", "ID")
      assert.equal("integer", math.type(id))
      -- a thread parked in receive (BLPOP) when the server kills it
      local th = ngx.thread.spawn(function()
        return pack(victim:cmd("BLPOP", "never", 0))
      end)
      local killer = client()
      -- once the server has the whole command and blocks (a kill with
      -- request bytes still unread would make its kernel send a reset)
      assert.is_true(net.wait_until(function()
        return info(killer, "clients", "blocked_clients") == 1
      end))
      assert.equal(1, killer:cmd("CLIENT", "KILL", "ID", id))
      assert.same({ true, { n = 2, nil, "closed" } },
                  { ngx.thread.wait(th) })
      assert.same({ n = 2, nil, "closed" }, pack(victim.sock:receive()))
      -- as OpenResty: the read half is over, the request still goes out
      -- and the reply's receive says "closed" (with one byte per send,
      -- make check-shortio, the server's reset fails the send first)
      local r = pack(victim:cmd("PING"))
      assert.is_nil(r[1])
      assert.truthy(r[2] == "closed" or r[2] == "broken pipe"
                    or r[2] == "connection reset by peer", r[2])
      victim:close() -- 1, or nil, "closed" if the send failed too
      assert.same({ n = 2, nil, "closed" }, pack(victim:close()))

      -- QUIT: +OK, then the end
      local q = client()
      assert.equal("OK", q:cmd("QUIT"))
      assert.same({ n = 3, nil, "closed", "" }, pack(q.sock:receive()))
      assert.equal(1, q:close())

      -- an idle connection in the pool killed by the server: the pool
      -- closes it, the next connect opens a new one
      local idle = client({ pool = "killed" })
      local idle_id = idle:cmd("CLIENT", "ID")
      assert.equal(1, idle:set_keepalive(10000, 5))
      local open = cs.stats().sockets -- the killer and the idle one
      assert.equal(2, open)
      assert.equal(1, killer:cmd("CLIENT", "KILL", "ID", idle_id))
      assert.is_true(net.wait_until(function()
        return cs.stats().sockets == 1
      end))
      local again = client({ pool = "killed" })
      assert.equal(0, again:get_reused_times())
      assert.equal(1, again:close())
      assert.equal(1, killer:close())
    end)
  end)

  it("setkeepalive with unread data fails as in OpenResty", function()
    net.run(function()
      -- the rest of a reply in our buffer: "unread data in buffer", and
      -- the connection stays as it is (lua-nginx-module t/068 TEST 6)
      local red = client({ pool = "dubious" })
      assert(red:send_cmd("ECHO", "x")) -- one write: "$1\r\nx\r\n"
      assert.equal("$1", red.sock:receive())
      if net.short_io then -- one byte per recv: the rest is in the kernel
        assert.same({ n = 2, nil, "connection in dubious state" },
                    pack(red:set_keepalive()))
        assert.same({ n = 2, nil, "closed" }, pack(red.sock:receive()))
      else
        assert.same({ n = 2, nil, "unread data in buffer" },
                    pack(red:set_keepalive()))
        assert.equal("x", red.sock:receive())
        assert.equal("PONG", red:cmd("PING"))
        assert.equal(1, red:set_keepalive())
      end
      -- a reply nobody asked for yet in the kernel's buffer: "connection
      -- in dubious state", and the connection is closed
      local red2 = client({ pool = "dubious" })
      assert(red2:send_cmd("PING"))
      -- two round trips on another connection: by the second one the
      -- server has written the first connection's PONG
      local other = client()
      assert.equal("PONG", other:cmd("PING"))
      assert.equal("PONG", other:cmd("PING"))
      assert.same({ n = 2, nil, "connection in dubious state" },
                  pack(red2:set_keepalive()))
      assert.same({ n = 2, nil, "closed" }, pack(red2.sock:receive()))
      assert.equal(0, drain({ pool = "dubious" }))
      assert.equal(1, other:close())
    end)
  end)

  it("connects through the unix socket, with its own pool", function()
    net.run(function()
      local red = client(nil, true)
      assert.equal(0, red:get_reused_times())
      assert.equal("OK", red:cmd("SET", "via", "unix"))
      local me = red:cmd("CLIENT", "INFO")
      assert.truthy(me:find("addr=" .. server.path .. ":0 ", 1, true), me)
      assert.equal(1, red:set_keepalive(10000, 5))
      local red2 = client(nil, true)
      assert.equal(1, red2:get_reused_times())
      assert.equal("unix", red2:cmd("GET", "via"))
      -- the TCP port: the same data, another pool
      local tcp = client()
      assert.equal(0, tcp:get_reused_times())
      assert.equal("unix", tcp:cmd("GET", "via"))
      assert.equal(1, tcp:cmd("DEL", "via"))
      assert.equal(1, tcp:close())
      assert.equal(1, red2:set_keepalive(10000, 5))
      -- a named pool on the unix socket
      local named = client({ pool = "unix-named" }, true)
      assert.equal(0, named:get_reused_times())
      assert.equal(1, named:set_keepalive(10000, 5))
      assert.equal(1, drain({ pool = "unix-named" }, true))
      assert.equal(1, drain(nil, true))
    end)
  end)

  it("a stopped server: the pools drop their connections, connect is "
     .. "refused, no descriptor is left", function()
    net.run(function()
      assert.equal(1, client():set_keepalive(10000, 5))
      assert.equal(1, client(nil, true):set_keepalive(10000, 5))
      assert.equal(2, cs.stats().sockets)
      stop_server()
      -- both pools see the ends and close their idle connections
      assert.is_true(net.wait_until(function()
        return cs.stats().sockets == 0
      end))
      local red = assert(redis.new())
      assert.same({ n = 2, nil, "connection refused" },
                  pack(red:connect(HOST, server.port)))
      -- redis-server removed its socket file
      assert.same({ n = 2, nil, "no such file or directory" },
                  pack(red:connect("unix:" .. server.path)))
    end)
    helper.assert_clean()
    remove_dir()
    assert.equal(fds_before, helper.fds())
  end)
end)
