-- Conformance with lua-nginx-module's t/060-lua-memcached.t and
-- t/061-lua-redis.t (client libraries written for LuaSocket, run on
-- cosockets by putting ngx.socket in package.loaded.socket) and
-- t/090-log-socket-errors.t (what a connect or UDP read timeout returns):
-- each `it` replays one "=== TEST N" on corosched through the ngx global
-- of corosched.ngx and asserts what its --- response_body says: the body
-- the block writes with ngx.say is collected and compared whole; where
-- the block has `--- no_error_log [error]`, what ngx.log wrote is
-- collected too and must hold no "[error]" line. The nginx side
-- (memcached, redis) is a corosched peer on 127.0.0.1 sending the bytes
-- the real servers send (checked against memcached 1.6.18 and
-- redis-server 7.0.15 for every exchange below); each peer also records
-- the bytes each connection sent it, and the tests assert them, so that a
-- replay that strayed from the library's traffic would fail.
--
-- The libraries: t/lib/Memcached.lua (Neil Richardson's LuaSocket
-- client) and t/lib/Redis.lua (redis-lua, Daniele Alessandri) are not in
-- lua-nginx-module's stored tree (a fork holds them) and neither loads on
-- Lua 5.4 (module(), table.maxn); 060 TEST 2's resty/memcached.lua comes
-- with the block (--- user_files) and uses module() as well. None of
-- their code is here: each test replays, in its own words, the cosocket
-- calls the library makes for what the block asks of it, in the same
-- order and with the same arguments (see the comments above memcached_lua,
-- raw_memcached and redis_lua).
--
-- Copies of the files: the stored copies differ; these are the newest.
-- 060: b238ca5 (two blocks, Test::Nginx::Socket::Lua; an older copy,
--   166a711, has TEST 1 only; a third copy has the same two blocks).
-- 061: f0b5373 (the messages encoded with t/lib/ljson.lua, keys sorted;
--   the older 5cb6e9f and a third copy use cjson, whose order differs,
--   and the oldest lacks the second line, "abort: function").
-- 090: the copy whose TEST 2 expects the error_log line "lua tcp socket
--   connect timed out, when connecting to 172.105.207.225:12345", taken
--   as the newest: it extends the line of 6e38c11 (the copy find_files
--   names for the path, otherwise the same) with the address; older:
--   26be99d (no ipv6=off), and a copy connecting to 8.8.8.8:80 with no
--   resolver. Their Lua code is the same but for the peer's address.
--
-- 060-lua-memcached.t, covered: 1, 2.
--   1: the library's connect, set and get; the socket is closed after the
--     block (nginx closes it when the request ends).
--   2: the block runs twice in the same process, as repeat_each(2) has
--     nginx (workers 1) run it: the second request takes the connection
--     the first put in the pool with setkeepalive(0, 100) (0: no idle
--     timeout); a third connect then shows it reused twice. Its error
--     path (ngx.exit(500)) is left as written: here ngx.exit raises, which
--     would fail the test. What the library writes with print() (nginx's
--     error log, at the notice level; the block does not check it) is
--     recorded by a local print, as spec/62 does, and asserted: "size:
--     nil, flags: 10" per request (`size` is an undefined global there).
--     Not replayed: `--- error_log lua reuse free buf memory` (nginx's
--     debug log of its buffer reuse).
-- 060, skipped: none.
-- 061-lua-redis.t, covered: 1, 2.
--   1: the library's connect (with setoption("tcp-nodelay", true)), SET
--     and GET.
--   2: pub/sub through a coroutine.wrap iterator doing the reads (cosocket
--     I/O inside a user coroutine); the peer plays redis for both
--     connections, delivering PUBLISH to the subscriber as redis does. The
--     messages are encoded by a JSON encoder of this file with ljson's
--     sorted keys. Before the sockets are closed (the request's end) the
--     test waits for the peer to have read the PUNSUBSCRIBE that abort()
--     sends (its reply is never read), so that the peer's transcript is
--     the same in every run.
-- 061, skipped: none.
-- 090-log-socket-errors.t, covered: 1-4, the Lua-visible part only
--   (lua_socket_log_errors changes what nginx logs, nothing a call
--   returns): 1, 2 are the same code, and so are 3, 4.
--   Adapted: agentzh.org:12345 (DNS and the Internet) is a host that does
--   not answer on 127.0.0.1: for TCP a listener whose accept queue is
--   full (the SYN is dropped, the connect stays pending), for UDP a bound
--   socket that never sends (the block sends nothing either);
--   lua_socket_connect_timeout 1ms is settimeouts(1, 0, 0) (0: the
--   default) and lua_socket_read_timeout 1ms is the UDP settimeout(1).
--   Not replayed: the error_log lines of 2 and 3 (nginx's log).
-- 090, skipped: none.
--
-- No difference from OpenResty outside the README's list was found.
local helper = require "spec.helper"
local net = require "spec.support.net"
local cs = helper.cs
local ngxc = require "corosched.ngx"
local ngx_env = require "spec.support.ngx_env"
local lines, recorder = ngx_env.lines, ngx_env.recorder

-- the ngx global and what install() adds are put back after each test,
-- and package.loaded.socket, which the blocks set to ngx.socket (and
-- resty.memcached, 060 TEST 2's library)
local save_globals, restore_globals =
  ngx_env.saver({ "socket", "resty.memcached" })

-- Runs fn(ngx) with net.run (a deadline, the leak checks) and the ngx
-- global installed; returns what fn wrote with ngx.say/ngx.print (the
-- response body) and what ngx.log wrote (the error log), then fn's
-- results.
local function run(fn, opts)
  local buf, logbuf = {}, {}
  local real_out, real_err = io.stdout, io.stderr
  io.stdout, io.stderr = ngx_env.sink(buf), ngx_env.sink(logbuf)
  local r = table.pack(pcall(net.run, function()
    return fn(ngxc.install())
  end, opts))
  io.stdout, io.stderr = real_out, real_err
  if not r[1] then
    io.stderr:write(table.concat(logbuf))
    error(r[2], 0)
  end
  return table.concat(buf), table.concat(logbuf), table.unpack(r, 2, r.n)
end

-- `--- no_error_log [error]`: nothing was logged at the error level
local function assert_no_error_log(log)
  assert.is_nil(log:find("[error]", 1, true), "error log: " .. log)
end

---------------------------------------------------------------------------
-- the nginx side

-- memcached on its port, for one connection (the listener is closed once
-- it is accepted, so that a second connection would be refused): set and
-- get as memcached answers them. Returns the port and the list of the
-- commands the connection sent, each with its data block.
local function memcached_peer()
  local srv, port = net.listen()
  local seen, store = {}, {}
  cs.thread.spawn(function()
    local c = assert(srv:accept())
    srv:close()
    c:setoption("tcp-nodelay", true)
    while true do
      local line = c:receive()
      if not line then break end
      local cmd = line .. "\r\n"
      seen[#seen + 1] = cmd
      local key, flags, n = line:match("^set (%S+) (%d+) %d+ (%d+)$")
      if key then
        local data = c:receive(tonumber(n) + 2)
        if not data then break end
        seen[#seen] = cmd .. data
        assert(data:sub(-2) == "\r\n", "no CRLF after the data block")
        store[key] = { flags = flags, data = data:sub(1, -3) }
        c:send("STORED\r\n")
      elseif line:match("^get %S+$") then
        local item = store[line:sub(5)]
        if item then
          c:send(("VALUE %s %s %d\r\n%s\r\nEND\r\n")
            :format(line:sub(5), item.flags, #item.data, item.data))
        else
          c:send("END\r\n")
        end
      else
        c:send("ERROR\r\n")
      end
    end
    c:close()
  end)
  return port, seen
end

-- the RESP encoding of a bulk string
local function bulk(s)
  return "$" .. #s .. "\r\n" .. s .. "\r\n"
end

-- redis on its port, for n connections at once (the listener is closed
-- after the n-th): SET, GET, SUBSCRIBE, PUBLISH (delivered to the
-- subscribers first, then answered), UNSUBSCRIBE and PUNSUBSCRIBE (no
-- argument), with redis's replies. Returns the port and a list per
-- connection, in the order of their connects, of the commands it sent
-- (their bytes).
local function redis_peer(n)
  local srv, port = net.listen()
  local seen, store, subs = {}, {}, {}

  -- one command of connection c: its arguments, or nil when c is gone
  local function read_cmd(c, got)
    local line = c:receive()
    if not line then return nil end
    local raw = { line, "\r\n" }
    local argc = assert(tonumber(line:match("^%*(%d+)$")), line)
    local args = {}
    for i = 1, argc do
      local head = c:receive()
      if not head then return nil end
      local len = assert(tonumber(head:match("^%$(%d+)$")), head)
      local data = c:receive(len + 2)
      if not data then return nil end
      raw[#raw + 1] = head .. "\r\n" .. data
      args[i] = data:sub(1, -3)
    end
    got[#got + 1] = table.concat(raw)
    return args
  end

  local function serve(c, got)
    c:setoption("tcp-nodelay", true)
    local mine = {} -- the channels c subscribed to, in order
    while true do
      local args = read_cmd(c, got)
      if not args then break end
      local name = args[1]:upper()
      if name == "SET" then
        store[args[2]] = args[3]
        c:send("+OK\r\n")
      elseif name == "GET" then
        local v = store[args[2]]
        c:send(v and bulk(v) or "$-1\r\n")
      elseif name == "SUBSCRIBE" then
        for i = 2, #args do
          subs[args[i]] = subs[args[i]] or {}
          subs[args[i]][#subs[args[i]] + 1] = c
          mine[#mine + 1] = args[i]
          c:send("*3\r\n" .. bulk("subscribe") .. bulk(args[i]) .. ":"
                 .. #mine .. "\r\n")
        end
      elseif name == "PUBLISH" then
        local to = subs[args[2]] or {}
        for _, s in ipairs(to) do
          s:send("*3\r\n" .. bulk("message") .. bulk(args[2])
                 .. bulk(args[3]))
        end
        c:send(":" .. #to .. "\r\n")
      elseif name == "UNSUBSCRIBE" and #args == 1 then
        if #mine == 0 then
          c:send("*3\r\n" .. bulk("unsubscribe") .. "$-1\r\n:0\r\n")
        end
        while #mine > 0 do
          local ch = table.remove(mine, 1)
          for i, s in ipairs(subs[ch]) do
            if s == c then table.remove(subs[ch], i) break end
          end
          c:send("*3\r\n" .. bulk("unsubscribe") .. bulk(ch) .. ":"
                 .. #mine .. "\r\n")
        end
      elseif name == "PUNSUBSCRIBE" and #args == 1 then
        -- (no pattern was ever subscribed to here)
        c:send("*3\r\n" .. bulk("punsubscribe") .. "$-1\r\n:" .. #mine
               .. "\r\n")
      else
        c:send("-ERR unknown command '" .. args[1] .. "'\r\n")
      end
    end
    c:close()
  end

  cs.thread.spawn(function()
    for i = 1, n do
      local c = assert(srv:accept())
      seen[i] = {}
      cs.thread.spawn(serve, c, seen[i])
    end
    srv:close()
  end)
  return port, seen
end

---------------------------------------------------------------------------
-- the libraries' traffic, replayed (none of their code)

-- t/lib/Memcached.lua, for Connect(host, port), set(key, value) and
-- get(key) with one server:
--   Connect: the library's `socket` is require("socket"), which the block
--     made ngx.socket: socket.connect(host, port), i.e. ngx.socket.connect
--   set: one send of "set <key> 0 0 <#value>\r\n<value>" .. "\r\n", then
--     one receive() of the answer line: true when it is STORED, else
--     false and the line
--   get: one send of "get <key>" .. "\r\n", then receive() of lines until
--     END; after "VALUE <key> <flags> <size>", receive(size) with size the
--     string the line holds (lua-nginx-module's receive takes a numeric
--     string as a number), the data kept as a string unless it reads as a
--     number, true or false (none of which "hello 1234" is); the CRLF
--     after the data is the next receive(): an empty line, skipped
local function memcached_lua(host, port)
  local sock = require("socket").connect(host, port)
  assert(sock, "Could not connect to " .. host .. ":" .. port)
  local memc = { sock = sock }

  function memc.set(_, key, value)
    local s = tostring(value)
    sock:send("set " .. key .. " 0 0 " .. #s .. "\r\n" .. s .. "\r\n")
    local line, err = sock:receive()
    local res = not err and line or nil
    if res ~= "STORED" then return false, res end
    return true
  end

  function memc.get(_, key)
    sock:send("get " .. key .. "\r\n")
    local found = {}
    while true do
      local line = sock:receive()
      if line == "END" then break end
      if line:sub(1, 5) == "VALUE" then
        local k, size = line:match("^VALUE (%S+) %d+ (%d+)")
        local data = sock:receive(size) -- (size: a string)
        local v = tonumber(data)
        if v == nil and (data == "true" or data == "false") then
          v = data == "true"
        end
        if v == nil and data ~= "nil" then v = data end
        found[k] = v
      end
    end
    return found[key]
  end

  return memc
end

-- 060 TEST 2's resty/memcached.lua (--- user_files), for connect(...),
-- set(key, value), get(key) and set_keepalive():
--   connect: ngx.socket.connect(...) (its error is dropped)
--   set: one send of "set <escape_uri(key)> <flags 0> <exptime 0>
--     <#value>\r\n<value>\r\n", one receive() of the answer: true when it
--     begins with STORED, else false and receive's error
--   get: one send of "get <escape_uri(key)>\r\n"; receive() of a line: END
--     gives nil, nil; "VALUE <key> <flags> <len>": print("size: ", size,
--     ", flags: ", len) (size: an undefined global, nil), receive(len)
--     with len a string, receive(2) for the CRLF, receive() for END; the
--     data
--   set_keepalive: sock:setkeepalive(0, 100)
local function raw_memcached(ngx, print)
  local lib = {}
  local methods = {}
  local mt = { __index = methods }

  function lib.connect(...)
    local sock = ngx.socket.connect(...)
    return setmetatable({ sock = sock }, mt)
  end

  function methods.get(self, key)
    local bytes, err = self.sock:send("get " .. ngx.escape_uri(key)
                                      .. "\r\n")
    if not bytes then return nil, err end
    local line
    line, err = self.sock:receive()
    if line == "END" then return nil, nil end
    local flags, len = line:match("^VALUE %S+ (%d+) (%d+)")
    if not flags then return nil, "bad response: " .. line end
    print("size: ", nil, ", flags: ", len)
    local data
    data, err = self.sock:receive(len) -- (len: a string)
    if not data then return nil, err end
    line, err = self.sock:receive(2)
    if not line then
      return nil, nil, "failed to receive CRLF: " .. (err or "")
    end
    line, err = self.sock:receive()
    if not line then
      return nil, nil, "failed to receive END CRLF: " .. (err or "")
    end
    return data
  end

  function methods.set(self, key, value)
    local cmd = table.concat({ "set ", ngx.escape_uri(key), " ", 0, " ", 0,
                               " ", #value, "\r\n", value, "\r\n" })
    local bytes, err = self.sock:send(cmd)
    if not bytes then return nil, err end
    local data
    data, err = self.sock:receive()
    if data:sub(1, 6) == "STORED" then return true end
    return false, err
  end

  function methods.set_keepalive(self)
    return self.sock:setkeepalive(0, 100)
  end

  return lib
end

-- t/lib/Redis.lua, for connect(host, port), set, get, publish and
-- pubsub{subscribe = channel}:
--   connect: require("socket").tcp() (ngx.socket.tcp, as the block made
--     it), connect(host, port) (a failure raises "could not connect to
--     <host>:<port> [<err>]"), setoption("tcp-nodelay", true)
--   a command: one send of the whole request, "*<argc>\r\n" then
--     "$<len>\r\n<arg>\r\n" for the name (SET, GET, PUBLISH; subscribe,
--     unsubscribe, punsubscribe in lower case) and each argument; a send
--     error raises it
--   a reply: receive("*l"), then by its first character: "+" a status
--     (OK: true), ":" a number, "$<len>" receive(len + 2) without the
--     CRLF (-1: nil), "*<n>" n replies, "-" raises "redis error: ..."; a
--     receive error raises "connection error: <err>"
--   pubsub: sends subscribe, returns a coroutine.wrap iterator that reads
--     one reply per call and yields {kind, channel, payload} and abort,
--     counting subscriptions; abort() sends unsubscribe then
--     punsubscribe (no argument) and, once the count is back to 0, the
--     iterator ends (its call returns nothing)
local function redis_lua(host, port)
  local sock = require("socket").tcp()
  local ok, err = sock:connect(host, port)
  if not ok then
    error("could not connect to " .. host .. ":" .. port .. " [" .. err
          .. "]", 2)
  end
  sock:setoption("tcp-nodelay", true)
  local red = { sock = sock }

  local function command(name, args)
    local parts = { "*" .. (#args + 1) .. "\r\n", bulk(name) }
    for _, a in ipairs(args) do parts[#parts + 1] = bulk(tostring(a)) end
    local _, serr = sock:send(table.concat(parts))
    if serr then error(serr, 2) end
  end

  local function read(len)
    local data, rerr = sock:receive(len or "*l")
    if rerr then error("connection error: " .. rerr, 2) end
    return data
  end

  local function reply()
    local line = read()
    local kind, rest = line:sub(1, 1), line:sub(2)
    if kind == "+" then
      if rest == "OK" then return true end
      return rest
    elseif kind == ":" then
      return tonumber(rest)
    elseif kind == "$" then
      local len = tonumber(rest)
      if len == -1 then return nil end
      return read(len + 2):sub(1, -3)
    elseif kind == "*" then
      local count = tonumber(rest)
      if count == -1 then return nil end
      local list = {}
      for i = 1, count do list[i] = reply() end
      return list
    elseif kind == "-" then
      error("redis error: " .. rest, 2)
    end
    error("unknown response prefix: " .. kind, 2)
  end

  function red.set(_, key, value)
    command("SET", { key, value })
    return reply()
  end
  function red.get(_, key)
    command("GET", { key })
    return reply()
  end
  function red.publish(_, channel, msg)
    command("PUBLISH", { channel, msg })
    return reply()
  end

  function red.pubsub(_, subscriptions)
    local channel = subscriptions.subscribe
    if channel then
      command("subscribe", type(channel) == "table" and channel
                           or { channel })
    end
    local aborting, count = false, 0
    local function abort()
      if not aborting then
        command("unsubscribe", {})
        command("punsubscribe", {})
        aborting = true
      end
    end
    return coroutine.wrap(function()
      while true do
        local r = reply()
        local msg
        if r[1] == "pmessage" then
          msg = { kind = r[1], pattern = r[2], channel = r[3],
                  payload = r[4] }
        else
          msg = { kind = r[1], channel = r[2], payload = r[3] }
        end
        if msg.kind:match("^p?subscribe$") then count = count + 1 end
        if msg.kind:match("^p?unsubscribe$") then count = count - 1 end
        if aborting and count == 0 then break end
        coroutine.yield(msg, abort)
      end
    end)
  end

  return red
end

-- a flat table of strings and numbers as JSON, its keys sorted (as
-- t/lib/ljson.lua's encode writes them)
local function json(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys)
  local function str(s)
    return '"' .. s:gsub('[%c"\\]', function(ch)
      local esc = { ['"'] = '\\"', ["\\"] = "\\\\", ["\n"] = "\\n",
                    ["\r"] = "\\r", ["\t"] = "\\t" }
      return esc[ch] or ("\\u%04x"):format(ch:byte())
    end) .. '"'
  end
  local parts = {}
  for i, k in ipairs(keys) do
    local v = t[k]
    parts[i] = str(k) .. ":" .. (type(v) == "string" and str(v)
                                 or tostring(v))
  end
  return "{" .. table.concat(parts, ",") .. "}"
end

---------------------------------------------------------------------------

describe("conformance with lua-nginx-module (memcached, redis, socket "
         .. "errors)", function()
  before_each(save_globals)
  after_each(function()
    restore_globals()
    helper.after_each()
  end)

  -------------------------------------------------------------------------
  describe("t/060-lua-memcached.t", function()
    it("060 TEST 1: sanity", function()
      local seen
      local body, log = run(function(ngx)
        local port
        port, seen = memcached_peer()

        package.loaded["socket"] = ngx.socket
        local Memcached = { Connect = memcached_lua }
        Memcached.socket = ngx.socket

        local memc = Memcached.Connect("127.0.0.1", port)

        memc:set("some_key", "hello 1234")
        local data = memc:get("some_key")
        ngx.say("some_key: ", data)

        memc.sock:close() -- (nginx: the request ends)
      end)
      assert.equal("some_key: hello 1234\n", body)
      assert_no_error_log(log)
      assert.same({ "set some_key 0 0 10\r\nhello 1234\r\n",
                    "get some_key\r\n" }, seen)
    end)

    it("060 TEST 2: raw memcached (twice, as repeat_each(2))", function()
      local seen, reused, last_reused = nil, {}, nil
      local notices = recorder()
      local body, log = run(function(ngx)
        local port
        port, seen = memcached_peer()
        package.loaded["resty.memcached"] = raw_memcached(ngx, notices.print)

        for request = 1, 2 do
          -- (the block)
          local memcached = require "resty.memcached"
          local memc, err = memcached.connect("127.0.0.1", port)

          local ok
          ok, err = memc:set("some_key", "hello 1234")
          if not ok then
            ngx.log(ngx.ERR, "failed to set some_key: ", err)
            ngx.exit(500)
          end

          local data
          data, err = memc:get("some_key")
          if not data and err then
            ngx.log(ngx.ERR, "failed to get some_key: ", err)
            ngx.exit(500)
          end

          ngx.say("some_key: ", data)

          -- (not the block's: which connection this is)
          reused[request] = memc.sock:getreusedtimes()
          local res
          res, err = memc:set_keepalive()
          if not res then
            ngx.say("failed to set keepalive: ", err)
            return
          end
          -- (end of the block)
        end

        -- the connection is in the pool (no idle timeout): taken again,
        -- then closed, which ends the peer
        local sock = assert(ngx.socket.connect("127.0.0.1", port))
        last_reused = sock:getreusedtimes()
        sock:close()
        package.loaded["resty.memcached"] = nil
      end)
      assert.equal(lines("some_key: hello 1234", "some_key: hello 1234"),
                   body)
      assert_no_error_log(log)
      assert.same({ 0, 1 }, reused)
      assert.same({ "size: nil, flags: 10", "size: nil, flags: 10" },
                  { notices[1], notices[2], notices[3] })
      assert.equal(2, last_reused)
      local round = { "set some_key 0 0 10\r\nhello 1234\r\n",
                      "get some_key\r\n" }
      assert.same({ round[1], round[2], round[1], round[2] }, seen)
    end)
  end)

  -------------------------------------------------------------------------
  describe("t/061-lua-redis.t", function()
    it("061 TEST 1: sanity", function()
      local seen
      local body, log = run(function(ngx)
        local port
        port, seen = redis_peer(1)

        package.loaded["socket"] = ngx.socket
        local Redis = { connect = redis_lua }

        local redis = Redis.connect("127.0.0.1", port)

        redis:set("some_key", "hello 1234")
        local data = redis:get("some_key")
        ngx.say("some_key: ", data)

        redis.sock:close() -- (nginx: the request ends)
      end)
      assert.equal("some_key: hello 1234\n", body)
      assert_no_error_log(log)
      assert.same({ { "*3\r\n$3\r\nSET\r\n$8\r\nsome_key\r\n$10\r\n"
                      .. "hello 1234\r\n",
                      "*2\r\n$3\r\nGET\r\n$8\r\nsome_key\r\n" } }, seen)
    end)

    it("061 TEST 2: coroutine-based pub/sub", function()
      local seen
      local body, log = run(function(ngx)
        local port
        port, seen = redis_peer(2)

        package.loaded["socket"] = ngx.socket
        local Redis = { connect = redis_lua }

        local ljson = { encode = json }

        local r1 = Redis.connect("127.0.0.1", port)

        local r2 = Redis.connect("127.0.0.1", port)

        local loop = r2:pubsub({ subscribe = "foo" })
        local msg, abort = loop()
        ngx.say("msg type: ", type(msg))
        ngx.say("abort: ", type(abort))

        if msg then
          ngx.say("msg: ", ljson.encode(msg))
        end

        for i = 1, 3 do
          r1:publish("foo", "test " .. i)
          msg, abort = loop()
          if msg then
            ngx.say("msg: ", ljson.encode(msg))
          end
          ngx.say("abort: ", type(abort))
        end

        abort()

        msg, abort = loop() -- luacheck: ignore abort
        ngx.say("msg type: ", type(msg))

        -- (nginx: the request ends) once redis has seen the
        -- punsubscribe, whose reply nobody reads
        assert(net.wait_until(function()
          return seen[2] and #seen[2] == 3
        end))
        r1.sock:close()
        r2.sock:close()
      end)
      assert.equal(lines(
        "msg type: table",
        "abort: function",
        'msg: {"channel":"foo","kind":"subscribe","payload":1}',
        'msg: {"channel":"foo","kind":"message","payload":"test 1"}',
        "abort: function",
        'msg: {"channel":"foo","kind":"message","payload":"test 2"}',
        "abort: function",
        'msg: {"channel":"foo","kind":"message","payload":"test 3"}',
        "abort: function",
        "msg type: nil"), body)
      assert_no_error_log(log)
      local function publish(i)
        return "*3\r\n$7\r\nPUBLISH\r\n$3\r\nfoo\r\n$6\r\ntest " .. i
          .. "\r\n"
      end
      assert.same({ publish(1), publish(2), publish(3) }, seen[1])
      assert.same({ "*2\r\n$9\r\nsubscribe\r\n$3\r\nfoo\r\n",
                    "*1\r\n$11\r\nunsubscribe\r\n",
                    "*1\r\n$12\r\npunsubscribe\r\n" }, seen[2])
    end)
  end)

  -------------------------------------------------------------------------
  describe("t/090-log-socket-errors.t", function()
    -- TEST 1, 2: a connect that does not complete within 1 ms
    local function tcp_block()
      local connect_ok
      local body, log = run(function(ngx)
        local port, done = net.full_listener()

        local sock = ngx.socket.tcp()
        sock:settimeouts(1, 0, 0) -- (lua_socket_connect_timeout 1ms)
        local ok, err = sock:connect("127.0.0.1", port)
        ngx.say(err)

        connect_ok = ok
        sock:close() -- (nginx: the request ends)
        done()
      end)
      assert.is_nil(connect_ok)
      return body, log
    end

    -- TEST 3, 4: a UDP read that gets nothing within 1 ms
    local function udp_block()
      local peer_ok
      local body, log = run(function(ngx)
        -- (agentzh.org:12345) a peer that never sends anything
        local srv = cs.socket.udp()
        assert(srv:bind("127.0.0.1", 0))
        local _, port = srv:getsockname()

        local sock = ngx.socket.udp()
        sock:settimeout(1) -- (lua_socket_read_timeout 1ms)
        local ok, err = sock:setpeername("127.0.0.1", port)
        peer_ok = ok
        ok, err = sock:receive()
        ngx.say(err)

        sock:close() -- (nginx: the request ends)
        srv:close()
      end)
      assert.equal(1, peer_ok)
      return body, log
    end

    it("090 TEST 1: log socket errors off (tcp)", function()
      local body, log = tcp_block()
      assert.equal("timeout\n", body)
      assert_no_error_log(log)
    end)

    it("090 TEST 2: log socket errors on (tcp)", function()
      -- (the error_log line is nginx's log: not replayed)
      local body = tcp_block()
      assert.equal("timeout\n", body)
    end)

    it("090 TEST 3: log socket errors on (udp)", function()
      -- (the error_log line is nginx's log: not replayed)
      local body = udp_block()
      assert.equal("timeout\n", body)
    end)

    it("090 TEST 4: log socket errors off (udp)", function()
      local body, log = udp_block()
      assert.equal("timeout\n", body)
      assert_no_error_log(log)
    end)
  end)
end)
