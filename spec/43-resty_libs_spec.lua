-- The real client libraries written for OpenResty, as Debian packages them
-- (/usr/share/lua/5.1/nginx/*.lua), run unmodified through corosched.ngx
-- against real servers that this file starts on 127.0.0.1 (free ports, a
-- temporary directory) and stops at the end (versions: Debian 12's):
--   lua-resty-redis 0.27       (lua-nginx-redis)            redis-server
--   lua-resty-redis-connector  (lua-nginx-redis-connector)  redis-server
--     0.06
--   lua-resty-memcached 0.13   (lua-nginx-memcached)        memcached
--   lua-resty-dns 0.20         (lua-nginx-dns)              dnsmasq
--                                                           (dnsmasq-base)
-- Each library is loaded under the name OpenResty users require
-- ("resty.redis", ...) and under the Debian one ("nginx.redis", which the
-- connector requires): one module either way. A missing library or server
-- makes its block pending with the apt-get line. Also
--   lua-resty-websocket 0.08   (lua-nginx-websocket)          Python's
--     (its client)                                           websockets
--                                                    (python3-websockets,
--                                                  spec/support/ws_peer.py)
-- whose protocol.lua masks every frame the client sends in LuaJIT FFI
-- char[?] buffers (corosched.ngx's ffi stand-in has them).
--
-- Every test runs in net.run (helper.run): no thread, timer, socket or
-- pooled connection may be left, and the last test of each block checks
-- that no descriptor is left either.
local helper = require "spec.helper"
local net = require "spec.support.net"
local cs = helper.cs
local ngxc = require "corosched.ngx"
local ngx_env = require "spec.support.ngx_env"

local HOST = "127.0.0.1"
local pack = table.pack
local LIB = "/usr/share/lua/5.1/nginx/"

---------------------------------------------------------------------------
-- the libraries

-- module name -> file; the resty.* names are aliases of the nginx.* ones
local FILES = {
  ["nginx.redis"] = LIB .. "redis.lua",
  ["nginx.redis.connector"] = LIB .. "redis/connector.lua",
  ["nginx.redis.sentinel"] = LIB .. "redis/sentinel.lua",
  ["nginx.memcached"] = LIB .. "memcached.lua",
  ["nginx.dns.resolver"] = LIB .. "dns/resolver.lua",
  ["nginx.websocket.client"] = LIB .. "websocket/client.lua",
  ["nginx.websocket.protocol"] = LIB .. "websocket/protocol.lua",
}
local ALIASES = {
  ["resty.redis"] = "nginx.redis",
  ["resty.redis.connector"] = "nginx.redis.connector",
  ["resty.redis.sentinel"] = "nginx.redis.sentinel",
  ["resty.memcached"] = "nginx.memcached",
  ["resty.dns.resolver"] = "nginx.dns.resolver",
  ["resty.websocket.client"] = "nginx.websocket.client",
  ["resty.websocket.protocol"] = "nginx.websocket.protocol",
}

local names, preload = ngx_env.preloader(FILES, ALIASES)
-- what install() and the preloads below add, put back by each block's
-- teardown with the ngx and unpack globals (as spec/40 and spec/41 do)
local save_globals, restore_globals = ngx_env.saver(names)
local exists = net.exists

-- the ngx global, then package.preload entries that load the Debian files
local function install_libs()
  save_globals()
  local ngx = ngxc.install()
  preload()
  return ngx
end

-- describes block `fn` as `title` when the library file `lib` and the
-- program `prog` are there; else a pending line with the apt-get command
-- for what is missing (Debian packages `lib_pkg`, `prog_pkg`)
local function describe_if(title, lib, lib_pkg, prog, prog_pkg, fn)
  local need = {}
  if not exists(lib) then need[#need + 1] = lib_pkg end
  if not prog then need[#need + 1] = prog_pkg end
  if #need == 0 then
    describe(title, fn)
  else
    describe(title, function()
      pending("skipped: apt-get install " .. table.concat(need, " "))
    end)
  end
end

-- the path of a program: found with command -v, or in /usr/sbin (which a
-- non-root user's PATH may lack)
local function program(name)
  local path = net.which(name)
  if path then return path end
  if exists("/usr/sbin/" .. name) then return "/usr/sbin/" .. name end
  return nil
end
local REDIS_SERVER, MEMCACHED = program("redis-server"), program("memcached")
local DNSMASQ = program("dnsmasq")

---------------------------------------------------------------------------
-- servers: child processes of this one (the shell that starts each one
-- execs it, so io.popen's close reaps it), their files in a temporary
-- directory

local sh_quote, spawn, stop, remove = net.sh_quote, net.spawn, net.stop,
  net.remove

-- polls ready() (inside cs.run) until it returns true, for 5 s at most;
-- on failure stops the server and raises with its log
local function wait_ready(srv, what, ready)
  local ok, err = pcall(net.run, function()
    local deadline = helper.clock() + 5 * helper.slack
    while not ready() do
      assert(net.alive(srv.pid), what .. " exited")
      assert(helper.clock() < deadline, what .. " did not answer")
      cs.sleep(0.01)
    end
  end)
  if not ok then
    local log = net.server_log(srv)
    stop(srv)
    remove(srv)
    error(tostring(err) .. "\n" .. what .. "'s log:\n" .. log, 0)
  end
end

-- the name of the user running this (servers started as root need it to
-- keep their privileges: their files are in a directory only we can read)
local function user_name()
  local p = assert(io.popen("id -un"))
  local u = assert(p:read("l"))
  p:close()
  return u
end

-- a block's last check, once its server is stopped: nothing of corosched
-- is left (cs.stats()), the server's directory goes, and the process has
-- the descriptors it had before the block
local function assert_all_gone(server, fds_before)
  collectgarbage()
  collectgarbage()
  helper.assert_clean()
  remove(server)
  assert.equal(fds_before, helper.fds())
end

---------------------------------------------------------------------------
-- lua-resty-redis and lua-resty-redis-connector

local function redis_block()
  local ngx, redis
  local server = {}
  local fds_before

  -- a lua-resty-redis client connected to the TCP port (or with unix to
  -- the unix socket); opts go to connect
  local function client(opts, unix)
    local red = assert(redis:new())
    red:set_timeout(1000)
    local ok, err
    if unix then
      ok, err = red:connect("unix:" .. server.path, opts)
    else
      ok, err = red:connect(HOST, server.port, opts)
    end
    assert(ok == 1, "connect: " .. tostring(err))
    return red
  end

  -- takes the idle connections out of a pool and closes them; how many
  local function drain(opts, unix)
    return net.drain_pool(function() return client(opts, unix) end)
  end

  -- a field of INFO section `section`, as a number
  local function info(red, section, field)
    local text = assert(red:info(section))
    return tonumber(text:match("\r\n" .. field .. ":(%d+)\r\n"))
  end

  local WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong "
    .. "kind of value"

  lazy_setup(function()
    ngx = install_libs()
    redis = require "resty.redis"
    assert.equal(redis, require "nginx.redis")
    helper.run(function() end) -- whatever the loop keeps open, first
    fds_before = helper.fds()
    net.server_dir(server)
    server.path = server.dir .. "/redis.sock"
    server.port = net.free_port()
    spawn(server, "redis", ("%s --port %d --bind 127.0.0.1 "
      .. "--unixsocket %s --unixsocketperm 700 --save '' --appendonly no "
      .. "--daemonize no --dir %s --logfile '' --loglevel warning")
      :format(sh_quote(REDIS_SERVER), server.port, sh_quote(server.path),
              sh_quote(server.dir)))
    wait_ready(server, "redis-server", function()
      local red = assert(redis:new())
      local ok, err = red:connect(HOST, server.port)
      if not ok then
        assert.equal("connection refused", err)
        return false
      end
      assert.equal("PONG", red:ping())
      assert.equal("OK", red:flushall())
      assert.equal(1, red:close())
      return true
    end)
  end)

  lazy_teardown(function()
    stop(server)
    remove(server)
    restore_globals()
    ngx, redis = nil, nil
  end)

  after_each(helper.after_each)

  it("TCP and unix socket; set/get, ngx.null, binary-safe keys and values",
     function()
    net.run(function()
      local red = client()
      assert.equal(0, red:get_reused_times())
      assert.equal("OK", red:set("dog", "an animal"))
      assert.equal("an animal", red:get("dog"))
      assert.equal(ngx.null, red:get("nokey"))
      -- numbers go out as text, integer replies come back as integers
      assert.equal("OK", red:set("n", 41))
      local n = red:incr("n")
      assert.equal(42, n)
      assert.equal("integer", math.type(n))
      assert.equal("42", red:get("n"))
      local bin = "a\r\nb\0c\r\n$-1\r\n*2\r\n\0\255\r"
      assert.equal("OK", red:set("bin", bin))
      assert.equal(bin, red:get("bin"))
      assert.equal(#bin, red:strlen("bin"))
      local all = {}
      for i = 0, 255 do all[#all + 1] = string.char(i) end
      all = table.concat(all)
      assert.equal("OK", red:set("\0key\r\n", all))
      assert.equal(all, red:get("\0key\r\n"))
      assert.equal("OK", red:set("empty", ""))
      assert.equal("", red:get("empty"))
      -- the same data through the unix socket
      local ured = client(nil, true)
      assert.equal(0, ured:get_reused_times())
      assert.equal("an animal", ured:get("dog"))
      assert.equal(bin, ured:get("bin"))
      local me = ured:client("info")
      assert.truthy(me:find("addr=" .. server.path .. ":0 ", 1, true), me)
      me = red:client("info")
      assert.truthy(me:find("laddr=127.0.0.1:" .. server.port .. " ", 1,
                            true), me)
      assert.equal(5, ured:del("dog", "n", "bin", "\0key\r\n", "empty"))
      assert.equal(ngx.null, red:get("dog"))
      assert.equal(1, ured:close())
      assert.equal(1, red:close())
      -- a closed object: "closed"
      assert.same({ n = 2, nil, "closed" }, pack(red:get("dog")))
    end)
  end)

  it("a 1 MiB value with CR LF inside", function()
    net.run(function()
      local red = client()
      local big = net.payload(net.short_io and 16 * 1024 or 1024 * 1024)
      big = "\r\n\0" .. big:sub(4, -4) .. "\0\r\n"
      assert.equal("OK", red:set("big", big))
      assert.equal(#big, red:strlen("big"))
      local got = red:get("big")
      assert.equal(#big, #got)
      assert.is_true(got == big, "the value read back differs")
      assert.equal(1, red:del("big"))
      assert.equal(1, red:close())
    end, { timeout = 20 })
  end)

  it("init_pipeline/commit_pipeline: 1,000 commands, an error inside, "
     .. "cancel_pipeline", function()
    net.run(function()
      local red = client()
      red:init_pipeline()
      for i = 1, 1000 do
        local r
        if i % 2 == 1 then
          r = pack(red:rpush("plist", "item " .. i))
        else
          r = pack(red:echo("echo\r\n" .. i))
        end
        assert.same({ n = 0 }, r) -- queued, nothing sent
      end
      local replies = assert(red:commit_pipeline())
      assert.equal(1000, #replies)
      for i = 1, 1000 do
        if i % 2 == 1 then
          assert.equal((i + 1) // 2, replies[i])
        else
          assert.equal("echo\r\n" .. i, replies[i])
        end
      end
      local list = red:lrange("plist", 0, -1)
      assert.equal(500, #list)
      for j = 1, 500 do assert.equal("item " .. (2 * j - 1), list[j]) end
      -- an error reply in the middle leaves the others alone
      red:init_pipeline(4)
      red:set("s", "x")
      red:lpop("s")
      red:get("s")
      red:del("s", "plist")
      assert.same({ "OK", { false, WRONGTYPE }, "x", 2 },
                  red:commit_pipeline())
      -- cancelled: nothing reaches the server
      red:init_pipeline()
      red:set("cancelled", "1")
      red:cancel_pipeline()
      assert.same({ n = 2, nil, "no pipeline" }, pack(red:commit_pipeline()))
      assert.equal(ngx.null, red:get("cancelled"))
      assert.equal(1, red:close())
    end)
  end)

  it("hmset/hgetall, array replies (nested, with nulls and errors)",
     function()
    net.run(function()
      local red = client()
      assert.equal("OK", red:hmset("h", { f1 = "v1", f2 = "v\r\n2" }))
      local flat = red:hgetall("h")
      assert.equal(4, #flat)
      assert.same({ f1 = "v1", f2 = "v\r\n2" }, red:array_to_hash(flat))
      assert.same({ "v1", ngx.null, "v\r\n2" },
                  red:hmget("h", "f1", "nope", "f2"))
      assert.equal("OK", red:hmset("h2", "a", 1, "b", 2)) -- varargs form
      assert.equal("2", red:hget("h2", "b"))
      assert.equal(1, red:hexists("h2", "a"))
      assert.equal(ngx.null, red:hget("h2", "zzz"))
      assert.equal(3, red:rpush("l", "a", "b", "c"))
      assert.same({ "a", "b", "c" }, red:lrange("l", 0, -1))
      assert.same({}, red:lrange("nolist", 0, -1))
      assert.equal("OK", red:mset("k1", "x", "k2", "y"))
      assert.same({ "x", ngx.null, "y" }, red:mget("k1", "k0", "k2"))
      assert.equal(3, red:sadd("set", "m3", "m1", "m2"))
      local members = red:smembers("set")
      table.sort(members)
      assert.same({ "m1", "m2", "m3" }, members)
      assert.equal(2, red:zadd("z", 1, "one", 2.5, "two"))
      assert.same({ "one", "1", "two", "2.5" },
                  red:zrange("z", 0, -1, "withscores"))
      assert.same({ 1, { 2, "x", { "deep" } }, "fine", { false, "ERR boom" } },
                  red:eval("return {1, {2, 'x', {'deep'}}, "
                           .. "redis.status_reply('fine'), "
                           .. "redis.error_reply('ERR boom')}", 0))
      -- a BLPOP that the server times out: a null array
      assert.equal(ngx.null, red:blpop("nolist", "0.01"))
      assert.equal(7, red:del("h", "h2", "l", "k1", "k2", "set", "z"))
      assert.equal(1, red:close())
    end)
  end)

  it("error replies: false and the message; the connection stays usable",
     function()
    net.run(function()
      local red = client()
      assert.equal("OK", red:set("s", "text"))
      assert.same({ n = 2, false, WRONGTYPE }, pack(red:lpush("s", "x")))
      assert.same({ n = 2, false, "ERR value is not an integer or out of "
                    .. "range" }, pack(red:incr("s")))
      assert.same({ n = 2, false, "ERR wrong number of arguments for 'get' "
                    .. "command" }, pack(red:get()))
      -- a command the library does not know is generated on first use
      local r = pack(red:nosuchcommand("arg"))
      assert.equal(2, r.n)
      assert.equal(false, r[1])
      assert.equal("ERR unknown command 'nosuchcommand', with args "
                   .. "beginning with: 'arg' ", r[2])
      r = pack(red:eval("return redis.call('nope')", 0))
      assert.equal(false, r[1])
      assert.matches("Unknown Redis command called from script", r[2])
      assert.equal("PONG", red:ping())
      assert.equal("text", red:get("s"))
      assert.equal(1, red:del("s"))
      assert.equal(1, red:close())
    end)
  end)

  it("set_keepalive, then connects that reuse the pool (TCP and unix)",
     function()
    net.run(function()
      local inspector = client()
      local received = info(inspector, "stats", "total_connections_received")
      local red = client()
      local id = red:client("id")
      assert.equal("integer", math.type(id))
      assert.equal("OK", red:client("setname", "pooled"))
      assert.equal(1, red:set_keepalive(10000, 5))
      -- set_keepalive on the object again: it is no longer connected
      assert.same({ n = 2, nil, "closed" }, pack(red:set_keepalive()))
      local red2 = client()
      assert.equal(1, red2:get_reused_times())
      assert.equal(id, red2:client("id"))
      assert.equal("pooled", red2:client("getname"))
      assert.equal(1, red2:set_keepalive(10000, 5))
      local red3 = client()
      assert.equal(2, red3:get_reused_times())
      assert.equal(id, red3:client("id"))
      -- one more connection while red3 is out: a fresh one
      local red4 = client()
      assert.equal(0, red4:get_reused_times())
      assert.is_true(red4:client("id") ~= id)
      assert.equal(1, red3:set_keepalive(10000, 5))
      assert.equal(1, red4:set_keepalive(10000, 5))
      assert.equal(2, info(inspector, "stats", "total_connections_received")
                      - received)
      -- the unix socket's connections are another pool
      local u = client(nil, true)
      assert.equal(0, u:get_reused_times())
      assert.equal(1, u:set_keepalive(10000, 5))
      u = client(nil, true)
      assert.equal(1, u:get_reused_times())
      assert.equal("PONG", u:ping()) -- (the server has accepted it)
      assert.equal(1, u:set_keepalive(10000, 5))
      assert.equal(3, info(inspector, "stats", "total_connections_received")
                      - received)
      assert.equal(4, cs.stats().sockets) -- inspector and 3 idle
      assert.equal(2, drain())
      assert.equal(1, drain(nil, true))
      assert.equal(1, inspector:close())
    end)
  end)

  -- (fewer rounds in the slow modes: valgrind, GC stress, ASan, short I/O)
  local NTH, POOL = 50, 10
  local PER = helper.slack > 1 and 2 or 20

  it(("%d light threads (ngx.thread and cs.thread) share a pool of %d")
     :format(NTH, POOL), function()
    local popts = { pool = "threads" }
    net.run(function()
      local inspector = client()
      local received = info(inspector, "stats", "total_connections_received")
      local fresh, reused = 0, 0
      local function worker(i)
        for j = 1, PER do
          local red = client(popts)
          if red:get_reused_times() == 0 then
            fresh = fresh + 1
          else
            reused = reused + 1
          end
          assert.equal("integer", math.type(red:incr("counter")))
          assert.equal("OK", red:set("t" .. i, j))
          assert.equal(tostring(j), red:get("t" .. i))
          assert.equal(1, red:set_keepalive(10000, POOL))
        end
        return i
      end
      local ths = {}
      for i = 1, NTH do
        local spawn_fn = i % 2 == 0 and ngx.thread.spawn or cs.thread.spawn
        ths[i] = spawn_fn(worker, i)
      end
      for i = 1, NTH do
        assert.same({ true, i }, { ngx.thread.wait(ths[i]) })
      end
      assert.equal(tostring(NTH * PER), inspector:get("counter"))
      for i = 1, NTH do
        assert.equal(tostring(PER), inspector:get("t" .. i))
      end
      assert.equal(NTH * PER, fresh + reused)
      assert.is_true(fresh >= NTH and reused > 0)
      assert.equal(fresh, info(inspector, "stats",
                               "total_connections_received") - received)
      assert.equal(POOL + 1, cs.stats().sockets)
      assert.equal(POOL, drain(popts))
      assert.equal(1, inspector:del("counter"))
      assert.equal(1, inspector:close())
      -- (the t<i> keys go with the FLUSHALL of the next block's tests)
      local cleanup = client()
      for i = 1, NTH do cleanup:del("t" .. i) end
      assert.equal(0, cleanup:dbsize())
      assert.equal(1, cleanup:close())
    end, { timeout = 20 })
  end)

  -- lua-resty-redis 0.27 closes the socket on a read timeout unless
  -- subscribed (_read_reply), so the next command on the object says
  -- "closed"; a new connect on it works
  it("a read timeout in BLPOP: nil, \"timeout\"; the library closes the "
     .. "connection; connect again", function()
    net.run(function()
      local inspector = client()
      local red = client()
      red:set_timeout(100)
      local t, ok, err = net.timed(red.blpop, red, "q", 0)
      assert.same({ nil, "timeout" }, { ok, err })
      assert.is_true(t >= 0.09 and t < 1 * helper.slack, tostring(t))
      assert.same({ n = 2, nil, "closed" }, pack(red:ping()))
      -- the server sees the close: its BLPOP is gone
      assert.is_true(net.wait_until(function()
        return info(inspector, "clients", "blocked_clients") == 0
      end))
      assert.equal(1, inspector:rpush("q", "for nobody"))
      assert.equal(1, red:connect(HOST, server.port))
      red:set_timeout(1000)
      assert.equal(0, red:get_reused_times())
      assert.equal("PONG", red:ping())
      assert.same({ "q", "for nobody" }, red:blpop("q", 0))
      -- a thread parked in BLPOP is woken by a push from another one
      local th = ngx.thread.spawn(function() return red:blpop("q", 0) end)
      assert.is_true(net.wait_until(function()
        return info(inspector, "clients", "blocked_clients") == 1
      end))
      assert.equal(1, inspector:rpush("q", "woken"))
      assert.same({ true, { "q", "woken" } }, { ngx.thread.wait(th) })
      assert.equal(1, red:close())
      assert.equal(1, inspector:close())
    end)
  end)

  it("subscribe/psubscribe and publish between two connections "
     .. "(read_reply, a timeout while subscribed)", function()
    net.run(function()
      local sub = client()
      local pub = client()
      assert.same({ n = 2, nil, "not subscribed" }, pack(sub:read_reply()))
      assert.same({ "subscribe", "news", 1 }, sub:subscribe("news"))
      local msg = "hello\r\n\0world"
      assert.equal(1, pub:publish("news", msg))
      assert.same({ "message", "news", msg }, sub:read_reply())
      -- subscribed: a timeout leaves the socket open
      sub:set_timeout(100)
      assert.same({ n = 2, nil, "timeout" }, pack(sub:read_reply()))
      assert.equal(1, pub:publish("news", "again"))
      sub:set_timeout(1000)
      assert.same({ "message", "news", "again" }, sub:read_reply())
      assert.same({ n = 2, nil, "subscribed state" },
                  pack(sub:set_keepalive()))
      assert.same({ "psubscribe", "n*", 2 }, sub:psubscribe("n*"))
      assert.equal(2, pub:publish("news", "both"))
      local a, b = sub:read_reply(), sub:read_reply()
      assert.same({ "message", "news", "both" }, a)
      assert.same({ "pmessage", "n*", "news", "both" }, b)
      -- a thread parked in read_reply gets the next one
      local th = ngx.thread.spawn(function() return sub:read_reply() end)
      assert.equal(1, pub:publish("nx", "third"))
      assert.same({ true, { "pmessage", "n*", "nx", "third" } },
                  { ngx.thread.wait(th) })
      assert.same({ "unsubscribe", "news", 1 }, sub:unsubscribe("news"))
      assert.same({ "punsubscribe", "n*", 0 }, sub:punsubscribe("n*"))
      assert.same({ n = 2, nil, "not subscribed" }, pack(sub:read_reply()))
      assert.equal("PONG", sub:ping())
      assert.equal(0, pub:publish("news", "gone"))
      assert.equal(1, sub:set_keepalive(10000, 5))
      assert.equal(1, pub:set_keepalive(10000, 5))
      assert.equal(2, drain())
    end)
  end)

  describe("lua-resty-redis-connector", function()
    if not exists(FILES["nginx.redis.connector"]) then
      pending("skipped: apt-get install lua-nginx-redis-connector")
      return
    end
    local connector

    lazy_setup(function()
      connector = require "resty.redis.connector"
    end)

    -- the db a connection uses, from CLIENT INFO
    local function db_of(red)
      return tonumber(assert(red:client("info")):match(" db=(%d+) "))
    end

    it("connects by URL redis://127.0.0.1:PORT/2, set_keepalive, reuse",
       function()
      net.run(function()
        local url = ("redis://%s:%d/2"):format(HOST, server.port)
        local rc = assert(connector.new({ url = url }))
        local red = assert(rc:connect())
        assert.equal(0, red:get_reused_times())
        assert.equal(2, db_of(red))
        assert.equal("OK", red:set("where", "db 2"))
        assert.equal(1, rc:set_keepalive(red))
        -- the same connection from the pool (connect selects the db again)
        red = assert(rc:connect())
        assert.equal(1, red:get_reused_times())
        assert.equal("db 2", red:get("where"))
        assert.equal(1, rc:set_keepalive(red))
        -- what db 0 sees (the connector's connections are in the default
        -- pool, still on db 2: this one is new)
        local plain = client({ pool = "plain" })
        assert.equal(ngx.null, plain:get("where"))
        assert.equal("OK", plain:select(2))
        assert.equal("db 2", plain:get("where"))
        assert.equal(1, plain:del("where"))
        assert.equal(1, plain:close())
        assert.equal(1, drain())
      end)
    end)

    it("connects by parameters (host/port/db, a unix path, a pool), and "
       .. "says connection refused", function()
      net.run(function()
        local rc = assert(connector.new({
          host = HOST, port = server.port, db = 3, connect_timeout = 500,
          read_timeout = 500, keepalive_poolsize = 5,
          connection_options = { pool = "connector" },
        }))
        local red = assert(rc:connect())
        assert.equal(3, db_of(red))
        assert.equal("OK", red:set("p", "db 3"))
        assert.equal(1, rc:set_keepalive(red))
        red = assert(rc:connect())
        assert.equal(1, red:get_reused_times())
        assert.equal("db 3", red:get("p"))
        assert.equal(1, red:del("p"))
        assert.equal(1, rc:set_keepalive(red))
        assert.equal(1, drain({ pool = "connector" }))
        -- parameters given to connect, over the unix socket
        local urc = assert(connector.new())
        local ured = assert(urc:connect({ path = "unix:" .. server.path,
                                          db = 1 }))
        assert.equal(1, db_of(ured))
        assert.truthy(ured:client("info"):find("addr=" .. server.path, 1,
                                               true))
        assert.equal(1, ured:close())
        -- nobody listens there
        local bad = assert(connector.new({ host = HOST,
                                           port = net.free_port() }))
        assert.same({ n = 2, nil, "connection refused" }, pack(bad:connect()))
      end)
    end)
  end)

  it("a stopped server: the pools drop their connections, connect is "
     .. "refused, no descriptor is left", function()
    net.run(function()
      assert.equal(1, client():set_keepalive(10000, 5))
      assert.equal(1, client(nil, true):set_keepalive(10000, 5))
      assert.equal(2, cs.stats().sockets)
      stop(server)
      assert.is_true(net.wait_until(function()
        return cs.stats().sockets == 0
      end))
      local red = assert(redis:new())
      assert.same({ n = 2, nil, "connection refused" },
                  pack(red:connect(HOST, server.port)))
      assert.same({ n = 2, nil, "no such file or directory" },
                  pack(red:connect("unix:" .. server.path)))
    end)
    assert_all_gone(server, fds_before)
  end)
end

describe_if("lua-resty-redis (Debian's lua-nginx-redis) on redis-server",
            FILES["nginx.redis"], "lua-nginx-redis",
            REDIS_SERVER, "redis-server", redis_block)

---------------------------------------------------------------------------
-- lua-resty-memcached

local function memcached_block()
  local ngx, memcached
  local server = {}
  local fds_before

  local function client(opts)
    local memc = assert(memcached:new())
    assert.equal(1, memc:set_timeout(1000))
    local ok, err = memc:connect(HOST, server.port, opts)
    assert(ok == 1, "connect: " .. tostring(err))
    return memc
  end

  local function drain(opts)
    return net.drain_pool(function() return client(opts) end)
  end

  -- the value of one "STAT name value" line of stats(args)
  local function stat(memc, name, args)
    local lines = assert(memc:stats(args))
    for _, line in ipairs(lines) do
      local k, v = line:match("^STAT (%S+) (.*)$")
      if k == name then return v end
    end
    return nil
  end

  lazy_setup(function()
    ngx = install_libs()
    memcached = require "resty.memcached"
    assert.equal(memcached, require "nginx.memcached")
    helper.run(function() end)
    fds_before = helper.fds()
    local p = assert(io.popen("env -u LD_PRELOAD " .. sh_quote(MEMCACHED)
                              .. " -V"))
    server.version = assert(p:read("l")):match("^memcached (%S+)")
    p:close()
    net.server_dir(server)
    server.port = net.free_port()
    spawn(server, "memcached", ("%s -l 127.0.0.1 -p %d -U 0 -m 64 -c 256 "
      .. "-t 2 -u %s"):format(sh_quote(MEMCACHED), server.port,
                              sh_quote(user_name())))
    wait_ready(server, "memcached", function()
      local memc = assert(memcached:new())
      local ok, err = memc:connect(HOST, server.port)
      if not ok then
        assert.equal("connection refused", err)
        return false
      end
      assert.equal(1, memc:flush_all())
      assert.equal(1, memc:close())
      return true
    end)
  end)

  lazy_teardown(function()
    stop(server)
    remove(server)
    restore_globals()
    ngx, memcached = nil, nil
  end)

  after_each(helper.after_each)

  it("set/get/add/replace/append/prepend/delete, flags, a missing key",
     function()
    net.run(function()
      local memc = client()
      assert.equal(1, memc:set("dog", 32))
      assert.same({ n = 2, "32", "0" }, pack(memc:get("dog")))
      assert.equal(1, memc:set("cat", "meow", 0, 1234))
      assert.same({ n = 2, "meow", "1234" }, pack(memc:get("cat")))
      assert.same({ n = 3, nil, nil, nil }, pack(memc:get("nokey")))
      assert.same({ n = 2, nil, "NOT_STORED" }, pack(memc:add("dog", "x")))
      assert.equal(1, memc:add("new", "fresh", 0, 7))
      assert.same({ n = 2, "fresh", "7" }, pack(memc:get("new")))
      assert.same({ n = 2, nil, "NOT_STORED" },
                  pack(memc:replace("nokey", "x")))
      assert.equal(1, memc:replace("dog", "33", 0, 9))
      assert.equal(1, memc:append("dog", "0"))
      assert.equal(1, memc:prepend("dog", "1"))
      assert.same({ n = 2, "1330", "9" }, pack(memc:get("dog")))
      assert.same({ n = 2, nil, "NOT_STORED" },
                  pack(memc:append("nokey", "x")))
      -- keys are URI-escaped by default; values are binary-safe
      local key, val = "a key/with spaces\r\n", "v\r\nEND\r\n\0\255"
      assert.equal(1, memc:set(key, val))
      assert.same({ n = 2, val, "0" }, pack(memc:get(key)))
      -- a table value is concatenated
      assert.equal(1, memc:set("parts", { "a", { "b", "c" }, "d" }))
      assert.equal("abcd", (memc:get("parts")))
      assert.equal(1, memc:delete("dog"))
      assert.same({ n = 2, nil, "NOT_FOUND" }, pack(memc:delete("dog")))
      assert.same({ n = 3, nil, nil, nil }, pack(memc:get("dog")))
      -- gets/cas/touch
      local data, flags, cas = memc:gets("cat")
      assert.equal("meow", data)
      assert.equal("1234", flags)
      assert.matches("^%d+$", cas)
      assert.equal(1, memc:cas("cat", "purr", cas))
      assert.same({ n = 2, nil, "EXISTS" },
                  pack(memc:cas("cat", "hiss", cas)))
      assert.same({ n = 2, "purr", "0" }, pack(memc:get("cat")))
      assert.equal(1, memc:touch("cat", 100))
      assert.same({ n = 2, nil, "NOT_FOUND" }, pack(memc:touch("nokey", 1)))
      assert.equal(1, memc:flush_all())
      assert.equal(1, memc:close())
    end)
  end)

  it("incr/decr, multi-get, stats, version, flush_all", function()
    net.run(function()
      local memc = client()
      assert.equal(1, memc:set("n", 10))
      assert.same({ n = 1, "15" }, pack(memc:incr("n", 5)))
      assert.same({ n = 1, "0" }, pack(memc:decr("n", 20))) -- floors at 0
      assert.same({ n = 2, nil, "NOT_FOUND" }, pack(memc:incr("nokey", 1)))
      assert.equal(1, memc:set("s", "abc"))
      assert.same({ n = 2, nil, "CLIENT_ERROR cannot increment or decrement "
                    .. "non-numeric value" }, pack(memc:incr("s", 1)))
      -- multi-get: present keys only, { data, flags } each
      assert.equal(1, memc:set("a", "1"))
      assert.equal(1, memc:set("b", "2", 0, 5))
      -- (memcached keeps the length of a decremented number: "15" became
      -- "0 ", space-padded, as its protocol.txt allows)
      assert.same({ a = { "1", "0" }, b = { "2", "5" }, n = { "0 ", "0" } },
                  memc:get({ "a", "b", "nokey", "n" }))
      assert.same({}, memc:get({}))
      local multi = memc:gets({ "a", "b" })
      assert.same({ "2", "5" }, { multi.b[1], multi.b[2] })
      assert.matches("^%d+$", multi.a[3])
      assert.equal(server.version, memc:version())
      -- the server's own view: its pid, its port
      assert.equal(tostring(server.pid), stat(memc, "pid"))
      assert.equal(tostring(server.port), stat(memc, "tcpport", "settings"))
      assert.same({ n = 2, nil, "ERROR" }, pack(memc:stats("nosuchgroup")))
      assert.equal(1, memc:flush_all())
      assert.same({ n = 3, nil, nil, nil }, pack(memc:get("a")))
      assert.same({}, memc:get({ "a", "b", "n", "s" }))
      assert.equal(1, memc:verbosity(0))
      assert.equal(1, memc:close())
    end)
  end)

  it("a 512 KiB value", function()
    net.run(function()
      local memc = client()
      -- (16 KiB when every system call moves one byte)
      local big = net.payload(net.short_io and 16 * 1024 or 512 * 1024)
      big = "\r\n" .. big:sub(3, -8) .. "\r\nEND\r\n"
      assert.equal(1, memc:set("big", big, 0, 3))
      local got, flags = memc:get("big")
      assert.equal("3", flags)
      assert.equal(#big, #got)
      assert.is_true(got == big, "the value read back differs")
      local multi = memc:get({ "big", "nokey" })
      assert.is_true(multi.big[1] == big, "the multi-get value differs")
      assert.equal(1, memc:delete("big"))
      assert.equal(1, memc:close())
    end, { timeout = 20 })
  end)

  it("set_keepalive and reuse; threads sharing the pool", function()
    net.run(function()
      local inspector = client()
      local before = tonumber(stat(inspector, "total_connections"))
      local memc = client()
      assert.equal(0, memc:get_reused_times())
      assert.equal(1, memc:set("kept", "alive"))
      assert.equal(1, memc:set_keepalive(10000, 5))
      memc = client()
      assert.equal(1, memc:get_reused_times())
      assert.equal("alive", (memc:get("kept")))
      assert.equal(1, memc:set_keepalive(10000, 5))
      -- 20 threads x 10 round trips through a pool of 5
      assert.equal(1, inspector:set("kept-n", 0))
      local popts = { pool = "memc-threads" }
      local ths = {}
      for i = 1, 20 do
        ths[i] = ngx.thread.spawn(function()
          for j = 1, 10 do
            local m = client(popts)
            assert.equal(1, m:set("t" .. i, i * 100 + j))
            assert.equal(tostring(i * 100 + j), (m:get("t" .. i)))
            assert.matches("^%d+$", (m:incr("kept-n", 1)))
            assert.equal(1, m:set_keepalive(10000, 5))
          end
          return i
        end)
      end
      for i = 1, 20 do
        assert.same({ true, i }, { ngx.thread.wait(ths[i]) })
      end
      assert.equal("200", (inspector:get("kept-n")))
      local total = tonumber(stat(inspector, "total_connections")) - before
      -- the first one, 20 for the threads at most (when each opened one),
      -- and the reconnects after the pool of 5 was full
      assert.is_true(total >= 21 and total < 1 + 200, tostring(total))
      assert.equal(6 + 1, cs.stats().sockets)
      assert.equal(5, drain(popts))
      assert.equal(1, drain())
      assert.equal(1, inspector:flush_all())
      assert.equal(1, inspector:close())
    end)
  end)

  it("a read timeout against a server that accepts and never answers",
     function()
    net.run(function()
      local srv, port = net.listen()
      local th = cs.thread.spawn(function()
        local c = assert(srv:accept())
        srv:close()
        local got = { c:receive("*a") } -- until the client closes
        c:close()
        return got[1] or got[3]
      end)
      local memc = assert(memcached:new())
      memc:set_timeout(100)
      assert.equal(1, memc:connect(HOST, port))
      local t, a, b, c = net.timed(memc.get, memc, "k")
      assert.same({ nil, nil, "timeout" }, { a, b, c })
      assert.is_true(t >= 0.09 and t < 1 * helper.slack, tostring(t))
      -- the library closed the socket after the timeout
      assert.same({ n = 2, nil, "closed" }, pack(memc:set("k", "v")))
      assert.same({ true, "get k\r\n" }, { cs.thread.wait(th) })
    end)
  end)

  it("a stopped server: connect is refused, no descriptor is left",
     function()
    net.run(function()
      assert.equal(1, client():set_keepalive(10000, 5))
      assert.equal(1, cs.stats().sockets)
      stop(server)
      assert.is_true(net.wait_until(function()
        return cs.stats().sockets == 0
      end))
      local memc = assert(memcached:new())
      assert.same({ n = 2, nil, "connection refused" },
                  pack(memc:connect(HOST, server.port)))
    end)
    assert_all_gone(server, fds_before)
  end)
end

describe_if("lua-resty-memcached (Debian's lua-nginx-memcached) on "
            .. "memcached", FILES["nginx.memcached"], "lua-nginx-memcached",
            MEMCACHED, "memcached", memcached_block)

---------------------------------------------------------------------------
-- lua-resty-dns against dnsmasq

local function dns_block()
  local ngx, resolver
  local server = {}
  local fds_before
  local NTH, BIG = 20, 60

  local function new_resolver(opts)
    opts = opts or {}
    opts.nameservers = opts.nameservers or { { HOST, server.port } }
    opts.retrans = opts.retrans or 2
    opts.timeout = opts.timeout or 1000
    return assert(resolver:new(opts))
  end

  local function start_dnsmasq()
    net.server_dir(server)
    local hosts = { "127.0.0.5 www.test", "10.1.2.3 multi.test",
                    "10.1.2.4 multi.test" }
    for i = 1, NTH do
      hosts[#hosts + 1] = ("10.0.1.%d t%d.test"):format(i, i)
    end
    -- more A records than a 512-byte UDP reply holds
    for i = 1, BIG do
      hosts[#hosts + 1] = ("10.2.0.%d big.test"):format(i)
    end
    local f = assert(io.open(server.dir .. "/hosts", "w"))
    f:write(table.concat(hosts, "\n"), "\n")
    f:close()
    server.port = net.free_port()
    local args = {
      DNSMASQ, "--no-daemon", "--port=" .. server.port,
      "--listen-address=127.0.0.1", "--bind-interfaces", "--no-resolv",
      "--no-hosts", "--conf-file=/dev/null", "--user=" .. user_name(),
      "--addn-hosts=" .. server.dir .. "/hosts",
      "--pid-file=" .. server.dir .. "/dnsmasq.pid",
      "--local=/test/", "--local-ttl=300",
      "--host-record=v6.test,2001:db8::1:2,10.0.0.6",
      "--cname=alias.test,www.test",
      "--mx-host=mail.test,mx1.test,10",
      "--txt-record=txt.test,hello world,second",
      "--txt-record=txt1.test,v=spf1 -all",
      "--srv-host=_ldap._tcp.test,ldap.test,389,1,5",
    }
    for i, a in ipairs(args) do args[i] = sh_quote(a) end
    spawn(server, "dnsmasq", table.concat(args, " "))
    wait_ready(server, "dnsmasq", function()
      local r = new_resolver({ retrans = 1, timeout = 50 })
      local ans, err = r:query("www.test")
      if not ans then
        -- nothing bound there yet: refused or no answer
        assert.matches(": connection refused$", err)
        return false
      end
      return true
    end)
  end

  lazy_setup(function()
    ngx = install_libs()
    resolver = require "resty.dns.resolver"
    assert.equal(resolver, require "nginx.dns.resolver")
    helper.run(function() end)
    fds_before = helper.fds()
    start_dnsmasq()
  end)

  lazy_teardown(function()
    stop(server)
    remove(server)
    restore_globals()
    ngx, resolver = nil, nil
  end)

  after_each(helper.after_each)

  local function A(name, addr, ttl)
    return { name = name, type = 1, class = 1, section = 1, ttl = ttl or 300,
             address = addr }
  end

  it("A, AAAA, CNAME, MX, TXT, SRV and PTR answers over UDP", function()
    net.run(function()
      local r = new_resolver()
      assert.same({ A("www.test", "127.0.0.5") }, r:query("www.test"))
      local multi = assert(r:query("multi.test", { qtype = r.TYPE_A }))
      table.sort(multi, function(x, y) return x.address < y.address end)
      assert.same({ A("multi.test", "10.1.2.3"), A("multi.test", "10.1.2.4") },
                  multi)
      local v6 = r:query("v6.test", { qtype = r.TYPE_AAAA })
      assert.same({ { name = "v6.test", type = 28, class = 1, section = 1,
                      ttl = 300, address = "2001:db8:0:0:0:0:1:2" } }, v6)
      assert.equal("2001:db8::1:2", resolver.compress_ipv6_addr(v6[1].address))
      assert.same({ A("v6.test", "10.0.0.6") }, r:query("v6.test"))
      local cname = r:query("alias.test")
      assert.same({ { name = "alias.test", type = 5, class = 1, section = 1,
                      ttl = 300, cname = "www.test" },
                    A("www.test", "127.0.0.5") }, cname)
      assert.same({ { name = "mail.test", type = 15, class = 1, section = 1,
                      ttl = 300, preference = 10, exchange = "mx1.test" } },
                  r:query("mail.test", { qtype = r.TYPE_MX }))
      assert.same({ { name = "txt.test", type = 16, class = 1, section = 1,
                      ttl = 300, txt = { "hello world", "second" } } },
                  r:query("txt.test", { qtype = r.TYPE_TXT }))
      assert.same({ { name = "txt1.test", type = 16, class = 1, section = 1,
                      ttl = 300, txt = "v=spf1 -all" } },
                  r:query("txt1.test", { qtype = r.TYPE_TXT }))
      assert.same({ { name = "_ldap._tcp.test", type = 33, class = 1,
                      section = 1, ttl = 300, priority = 1, weight = 5,
                      port = 389, target = "ldap.test" } },
                  r:query("_ldap._tcp.test", { qtype = r.TYPE_SRV }))
      assert.equal("5.0.0.127.in-addr.arpa", resolver.arpa_str("127.0.0.5"))
      assert.same({ { name = "5.0.0.127.in-addr.arpa", type = 12, class = 1,
                      section = 1, ttl = 300, ptrdname = "www.test" } },
                  r:reverse_query("127.0.0.5"))
      local arpa6 = "2.0.0.0.1.0.0.0." .. ("0."):rep(16) .. "8.b.d.0.1.0.0.2"
        .. ".ip6.arpa"
      assert.equal(arpa6, resolver.arpa_str("2001:db8::1:2"))
      assert.same({ { name = arpa6, type = 12, class = 1, section = 1,
                      ttl = 300, ptrdname = "v6.test" } },
                  r:reverse_query("2001:db8::1:2"))
      -- a name that exists with no record of that type: no answer
      assert.same({}, r:query("www.test", { qtype = r.TYPE_MX }))
    end)
  end)

  it("NXDOMAIN: errcode 3, \"name error\"", function()
    net.run(function()
      local r = new_resolver()
      assert.same({ errcode = 3, errstr = "name error" },
                  r:query("nosuchname.test"))
      assert.same({ errcode = 3, errstr = "name error" },
                  r:query("nosuchname.test", { qtype = r.TYPE_AAAA }))
      assert.same({ errcode = 3, errstr = "name error" },
                  r:tcp_query("no.such.name.test"))
      assert.same({ n = 2, nil, "bad name" }, pack(r:query(".test")))
    end)
  end)

  it("tcp_query: the same answers over TCP, twice on one resolver; a "
     .. "truncated UDP reply goes over TCP", function()
    net.run(function()
      local r = new_resolver()
      -- the UDP reply has the TC bit: query() asks again over TCP (and
      -- says so in ngx.log at the debug level)
      local buf, real = {}, io.stderr
      io.stderr = ngx_env.sink(buf) -- luacheck: ignore 122
      local level = ngxc.set_log_level("debug")
      local ok, big = pcall(r.query, r, "big.test")
      ngxc.set_log_level(level)
      io.stderr = real -- luacheck: ignore 122
      assert(ok, big)
      assert.matches("%[debug%] query the TCP server due to reply "
                     .. "truncation\n", table.concat(buf))
      assert(big)
      assert.equal(BIG, #big)
      table.sort(big, function(x, y)
        return tonumber(x.address:match("%d+$"))
               < tonumber(y.address:match("%d+$"))
      end)
      for i = 1, BIG do
        assert.same(A("big.test", "10.2.0." .. i), big[i])
      end
      assert.same(big, (function()
        local t = assert(r:tcp_query("big.test"))
        table.sort(t, function(x, y)
          return tonumber(x.address:match("%d+$"))
                 < tonumber(y.address:match("%d+$"))
        end)
        return t
      end)())
      assert.same({ A("www.test", "127.0.0.5") }, r:tcp_query("www.test"))
      -- the library closed its TCP socket; the next query connects again
      assert.same({ { name = "txt.test", type = 16, class = 1, section = 1,
                      ttl = 300, txt = { "hello world", "second" } } },
                  r:tcp_query("txt.test", { qtype = r.TYPE_TXT }))
      local srv = assert(r:tcp_query("_ldap._tcp.test",
                                     { qtype = r.TYPE_SRV }))
      assert.equal("ldap.test", srv[1].target)
      -- a port where nothing listens
      local port = net.free_port()
      local bad = new_resolver({ nameservers = { { HOST, port } } })
      assert.same({ n = 2, nil, ("failed to connect to TCP server "
                    .. "127.0.0.1:%d: connection refused"):format(port) },
                  pack(bad:tcp_query("www.test")))
    end)
  end)

  it("UDP: a timeout where nothing answers (retrans 1 and 2), and "
     .. "connection refused where nothing is bound", function()
    net.run(function()
      -- bound, never answering: the queries pile up there
      local silent = cs.socket.udp()
      assert.equal(1, silent:bind(HOST, 0))
      local _, port = assert(silent:getsockname())
      local r = new_resolver({ nameservers = { { HOST, port } },
                               retrans = 1, timeout = 100 })
      r._id = 0x1234 -- the library's hook for a fixed id
      local expect = "\18\52\1\0\0\1\0\0\0\0\0\0\3www\4test\0\0\1\0\1"
      local t, a, err = net.timed(r.query, r, "www.test")
      assert.is_nil(a)
      assert.equal(("failed to receive reply from UDP server 127.0.0.1:%d: "
                    .. "timeout"):format(port), err)
      assert.is_true(t >= 0.09 and t < 1 * helper.slack, tostring(t))
      assert.equal(expect, silent:receive())
      r = new_resolver({ nameservers = { { HOST, port } }, retrans = 2,
                         timeout = 50 })
      r._id = 0x1234
      t, a, err = net.timed(r.query, r, "www.test")
      assert.is_nil(a)
      assert.matches(": timeout$", err)
      assert.is_true(t >= 0.09 and t < 1 * helper.slack, tostring(t))
      assert.equal(expect, silent:receive())
      assert.equal(expect, silent:receive())
      silent:settimeout(10)
      assert.same({ nil, "timeout" }, { silent:receive() })
      assert.equal(1, silent:close())
      -- nothing bound: the kernel's ICMP error ends the wait at once
      local free = net.free_port()
      r = new_resolver({ nameservers = { { HOST, free } }, retrans = 3,
                         timeout = 1000 })
      t, a, err = net.timed(r.query, r, "www.test")
      assert.is_nil(a)
      assert.equal(("failed to receive reply from UDP server 127.0.0.1:%d: "
                    .. "connection refused"):format(free), err)
      assert.is_true(t < 0.5 * helper.slack, tostring(t))
    end)
  end)

  it(("%d light threads query in parallel, each with its resolver")
     :format(NTH), function()
    net.run(function()
      local ths = {}
      for i = 1, NTH do
        ths[i] = ngx.thread.spawn(function()
          local r = new_resolver()
          local out = {}
          for round = 1, 3 do
            local name = ("t%d.test"):format((i + round - 2) % NTH + 1)
            local ans = assert(r:query(name))
            out[round] = ans[1].address
          end
          local nx = assert(r:query(("nx%d.test"):format(i)))
          out[4] = nx.errcode
          out[5] = assert(r:tcp_query(("t%d.test"):format(i)))[1].address
          return out
        end)
      end
      for i = 1, NTH do
        local ok, out = ngx.thread.wait(ths[i])
        assert.is_true(ok, out)
        assert.same({ ("10.0.1.%d"):format(i),
                      ("10.0.1.%d"):format(i % NTH + 1),
                      ("10.0.1.%d"):format((i + 1) % NTH + 1),
                      3, ("10.0.1.%d"):format(i) }, out)
      end
    end)
  end)

  it("a stopped server: no answer, no descriptor left", function()
    stop(server)
    net.run(function()
      local r = new_resolver({ retrans = 1, timeout = 100 })
      local a, err = r:query("www.test")
      assert.is_nil(a)
      assert.equal(("failed to receive reply from UDP server 127.0.0.1:%d: "
                    .. "connection refused"):format(server.port), err)
    end)
    assert_all_gone(server, fds_before)
  end)
end

describe_if("lua-resty-dns (Debian's lua-nginx-dns) on dnsmasq",
            FILES["nginx.dns.resolver"], "lua-nginx-dns",
            DNSMASQ, "dnsmasq-base", dns_block)

---------------------------------------------------------------------------
-- lua-resty-websocket's client against Python's websockets

-- Debian's python3 with python3-websockets (not another python3 on PATH)
local function ws_python()
  local py = "/usr/bin/python3"
  if not exists(py) then return nil end
  local ok = os.execute("env -u LD_PRELOAD " .. py
                        .. " -c 'import websockets' 2>/dev/null")
  return ok and py or nil
end
local WS_PYTHON = ws_python()

local function websocket_block()
  local client
  local server = {}
  local fds_before
  local SPEC_DIR = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
  local CERTS = SPEC_DIR .. "/support/certs/"

  local function url(path, tls)
    return ("%s://127.0.0.1:%d%s"):format(tls and "wss" or "ws",
                                          tls and server.tls_port
                                            or server.port, path)
  end

  -- a client connected to path (ws://, or wss:// when opts.tls)
  local function connect(path, opts, new_opts)
    opts = opts or {}
    local ws = assert(client:new(new_opts or { timeout = 2000 }))
    local ok, err = ws:connect(url(path, opts.tls), opts)
    assert(ok == 1, "connect: " .. tostring(err))
    return ws
  end

  local function echo(ws, data, binary)
    local bytes, err
    if binary then
      bytes, err = ws:send_binary(data)
    else
      bytes, err = ws:send_text(data)
    end
    assert(bytes, err)
    local got, typ, rerr = ws:recv_frame()
    assert(got, rerr)
    assert.equal(binary and "binary" or "text", typ)
    return got
  end

  lazy_setup(function()
    install_libs()
    client = require "resty.websocket.client"
    assert.equal(client, require "nginx.websocket.client")
    helper.run(function() end)
    fds_before = helper.fds()
    net.server_dir(server)
    server.port, server.tls_port = net.free_port(), net.free_port()
    spawn(server, "ws_peer", ("%s %s %d %d %s %s"):format(
      sh_quote(WS_PYTHON), sh_quote(SPEC_DIR .. "/support/ws_peer.py"),
      server.port, server.tls_port, sh_quote(CERTS .. "peer.crt"),
      sh_quote(CERTS .. "peer.key")))
    wait_ready(server, "ws_peer.py", function()
      return net.server_log(server):find("ready", 1, true) ~= nil
    end)
  end)

  lazy_teardown(function()
    stop(server)
    remove(server)
    restore_globals()
    client = nil
  end)

  after_each(helper.after_each)

  it("text and binary messages of 0 to 200,000 bytes, masked by the "
     .. "client and echoed", function()
    net.run(function()
      local ws = connect("/echo", nil, { max_payload_len = 300000 })
      for _, n in ipairs({ 0, 1, 125, 126, 127, 65535, 65536,
                           net.big(200000) }) do
        local text = ("websocket\n"):rep(n // 10 + 1):sub(1, n)
        assert.equal(text, echo(ws, text))
        local bin = ("\0\255\128\127"):rep(n // 4 + 1):sub(1, n)
        assert.equal(bin, echo(ws, bin, true))
      end
      -- the server saw 16 messages on this one connection
      assert.equal("16", echo(ws, "count"))
      assert.equal("/echo", echo(ws, "path"))
      assert.equal(1, ws:close())
    end)
  end)

  it("a fragmented message: \"again\" until its last frame", function()
    net.run(function()
      local ws = connect("/frag")
      local got = {}
      repeat
        local data, typ, err = ws:recv_frame()
        assert(data, typ)
        got[#got + 1] = { data, typ, err }
      until err ~= "again"
      assert.same({ { "ab", "text", "again" },
                    { "cd", "continuation", "again" },
                    { "ef", "continuation", "again" },
                    { "", "continuation", nil } }, got)
      assert.equal("after", echo(ws, "after"))
      assert.equal(1, ws:close())
    end)
  end)

  it("pings both ways: the server's answered with send_pong, the "
     .. "client's answered by the server", function()
    net.run(function()
      local ws = connect("/ping")
      assert.same({ "hi", "ping" }, { ws:recv_frame() })
      assert.equal(8, ws:send_pong("hi")) -- 2 + 4 (mask) + 2
      assert.same({ "pong received", "text" }, { ws:recv_frame() })
      assert.equal(11, ws:send_ping("12345"))
      assert.same({ "12345", "pong" }, { ws:recv_frame() })
      assert.equal("x", echo(ws, "x"))
      assert.equal(1, ws:close())
    end)
  end)

  it("the server's close frame: its reason, \"close\" and its code",
     function()
    net.run(function()
      local ws = connect("/close")
      assert.same({ "bye", "close", 4001 }, { ws:recv_frame() })
      -- send_close answers it; the library then refuses to send
      assert.is_truthy(ws:send_close(1000, "ok"))
      assert.same({ n = 2, nil, "already closed" }, pack(ws:send_text("x")))
      assert.equal(1, ws.sock:close())
    end)
  end)

  it("a message over max_payload_len, an unmasked frame, a refused "
     .. "handshake, a dropped connection: errors, then fatal", function()
    net.run(function()
      local ws = connect("/big?70000") -- default limit: 65535
      assert.same({ n = 3, nil, nil, "exceeding max payload len" },
                  pack(ws:recv_frame()))
      assert.same({ n = 3, nil, nil, "fatal error already happened" },
                  pack(ws:recv_frame()))
      assert.same({ n = 2, nil, "fatal error already happened" },
                  pack(ws:close()))
      assert.equal(1, ws.sock:close())

      -- an unmasked frame (send_unmasked): the server closes with 1002
      ws = connect("/echo", nil, { send_unmasked = true, timeout = 2000 })
      assert.equal(7, ws:send_text("hello"))
      local reason, typ, code = ws:recv_frame()
      assert.equal("close", typ, tostring(code))
      assert.equal(1002, code)
      assert.is_string(reason)
      assert.equal(1, ws.sock:close())

      -- 0.08's connect checks the status line's start only: the 403's
      -- body is then read as a frame
      ws = connect("/forbidden")
      assert.same({ n = 3, nil, nil, "bad RSV1, RSV2, or RSV3 bits" },
                  pack(ws:recv_frame()))
      assert.equal(1, ws.sock:close())

      ws = connect("/drop")
      assert.same({ n = 3, nil, nil, "failed to receive the first 2 "
                                     .. "bytes: closed" },
                  pack(ws:recv_frame()))
      assert.same({ n = 2, nil, "fatal error already happened" },
                  pack(ws:send_text("x")))
      assert.equal(1, ws.sock:close())
    end)
  end)

  it("a read timeout is not fatal: the same client goes on", function()
    net.run(function()
      local ws = connect("/echo")
      ws:set_timeout(50)
      local t, a, b, c = net.timed(ws.recv_frame, ws)
      assert.same({ nil, nil, "failed to receive the first 2 bytes: "
                              .. "timeout" }, { a, b, c })
      assert.is_true(t >= 0.045 and t < 1 * helper.slack, tostring(t))
      ws:set_timeout(2000)
      assert.equal("still here", echo(ws, "still here"))
      assert.equal(1, ws:close())
    end)
  end)

  it("wss://: TLS unverified, verified against the test CA, and a "
     .. "failed verification", function()
    net.run(function()
      local ws = connect("/echo", { tls = true })
      assert.equal("over TLS", echo(ws, "over TLS"))
      assert.equal(1, ws:close())

      assert(cs.socket.setcafile(CERTS .. "ca.crt"))
      local ok, err = pcall(function()
        ws = connect("/echo", { tls = true, ssl_verify = true }, {
          timeout = 2000, max_payload_len = 100000 })
        assert.equal(("v"):rep(net.big(100000)),
                     echo(ws, ("v"):rep(net.big(100000)), true))
        assert.equal(1, ws:close())
      end)
      cs.socket.setcafile(nil)
      assert(ok, err)

      ws = assert(client:new())
      local r = pack(ws:connect(url("/echo", true), { ssl_verify = true }))
      assert.is_nil(r[1])
      -- (README, deliberate differences: OpenResty says "20: unable ...")
      assert.equal("ssl handshake failed: handshake failed: unable to get "
                   .. "local issuer certificate", r[2])
      -- a failed handshake closed the socket (as lua-resty-core's does)
      assert.same({ n = 2, nil, "closed" }, pack(ws.sock:close()))
    end)
  end)

  it("set_keepalive: the next connect through the pool skips the "
     .. "handshake and goes on with the same server connection", function()
    net.run(function()
      local ws = connect("/echo", { pool = "ws-pool" })
      assert.equal("a", echo(ws, "a"))
      assert.equal(0, ws.sock:getreusedtimes())
      assert.equal(1, ws:set_keepalive(10000, 4))
      local ws2 = connect("/echo", { pool = "ws-pool" })
      assert.equal(1, ws2.sock:getreusedtimes())
      assert.equal("1", echo(ws2, "count")) -- the server's count goes on
      assert.equal(1, ws2:close())
      assert.equal(0, cs.stats().sockets)
    end)
  end)

  it(("%d light threads, %d messages each, on their own connections")
     :format(50, 20), function()
    net.run(function()
      local ths = {}
      for i = 1, 50 do
        ths[i] = ngx.thread.spawn(function()
          local ws = connect("/echo")
          for j = 1, 20 do
            local msg = ("%d/%d "):format(i, j):rep(j * 10)
            assert.equal(msg, echo(ws, msg, j % 2 == 0))
          end
          assert.equal("20", echo(ws, "count"))
          assert.equal(1, ws:close())
          return i
        end)
      end
      for i = 1, 50 do
        assert.same({ true, i }, { ngx.thread.wait(ths[i]) })
      end
    end)
  end)

  it("a thread killed in recv_frame, clients never closed, a stopped "
     .. "server: no descriptor is left", function()
    net.run(function()
      local ws
      local th = ngx.thread.spawn(function()
        ws = connect("/stall")
        return ws:recv_frame()
      end)
      assert.is_true(net.wait_until(function()
        return cs.stats().sockets == 1 and ws ~= nil
      end))
      cs.sleep(0.02)
      assert.equal(1, ngx.thread.kill(th))
      assert.equal(0, cs.stats().sockets) -- the kill closed it
      assert.same({ n = 3, nil, nil, "failed to receive the first 2 bytes: "
                                     .. "closed" }, pack(ws:recv_frame()))
      for _ = 1, 5 do
        local left = connect("/echo")
        assert.equal("left", echo(left, "left"))
      end
    end)
    collectgarbage()
    collectgarbage()
    helper.assert_clean()
    stop(server)
    net.run(function()
      local ws = assert(client:new())
      assert.same({ n = 2, nil, "failed to connect: connection refused" },
                  pack(ws:connect(url("/echo"))))
    end)
    assert_all_gone(server, fds_before)
  end)
end

describe_if("lua-resty-websocket (Debian's lua-nginx-websocket) on "
            .. "Python's websockets", FILES["nginx.websocket.client"],
            "lua-nginx-websocket", WS_PYTHON, "python3-websockets",
            websocket_block)
