-- corosched.ngx: the `ngx` global for OpenResty libraries (API.md
-- "OpenResty compatibility"). The mappings onto corosched, an end-to-end
-- Redis-protocol client written the way lua-resty-redis is, ngx.log, what
-- raises, and the pure-Lua helpers against published vectors (RFC 1321,
-- FIPS 180, RFC 2202, RFC 4648, the BitOp manual, lua-nginx-module's
-- t/006-escape.t and README) and, when python3 is there, against
-- hashlib/hmac/zlib/base64 on random inputs.
local helper = require "spec.helper"
local net = require "spec.support.net"
local cs = helper.cs
local ngxc = require "corosched.ngx"
local ngx_env = require "spec.support.ngx_env"

-- everything install() or these tests may add to package.preload and
-- package.loaded; each test starts without them and they are put back
-- afterwards, with the ngx and unpack globals and the log level, so that
-- other spec files see nothing of this one
local save_globals, restore_globals = ngx_env.saver({ "resty.miniredis" })

local function hex(s)
  return (s:gsub(".", function(c) return ("%02x"):format(c:byte()) end))
end

local function unhex(h)
  return (h:gsub("%x%x", function(x) return string.char(tonumber(x, 16)) end))
end

-- runs fn with io[name] replaced by an object that records what is
-- written; returns the text
local function capture(name, fn)
  local buf, real = {}, io[name]
  io[name] = {
    write = function(self, ...)
      for i = 1, select("#", ...) do buf[#buf + 1] = select(i, ...) end
      return self
    end,
    flush = function(self) return self end,
  }
  local ok, err = pcall(fn)
  io[name] = real
  if not ok then error(err, 0) end
  return table.concat(buf)
end

describe("corosched.ngx", function()
  before_each(save_globals)
  after_each(function()
    restore_globals()
    helper.after_each()
  end)

  describe("install", function()
    it("puts ngx and the package.preload entries in place, once",
       function()
      assert.is_nil(rawget(_G, "ngx"))
      local ngx = ngxc.install()
      assert.equal("table", type(ngx))
      assert.equal(ngx, rawget(_G, "ngx"))
      assert.equal(ngxc.ngx, ngx)
      assert.equal(ngx, ngxc.install())
      assert.equal(ngx, ngxc.install({ log_level = "warn" }))
      assert.equal(ngxc.bit, require "bit")
      assert.equal("function", type(require "table.new"))
      assert.equal("function", type(require "table.clear"))
      assert.equal("function", type(require "table.nkeys"))
      assert.equal("function", type(require "table.isempty"))
      assert.equal("function", type(require "table.isarray"))
      assert.equal("function", type(require "table.clone"))
      assert.equal("function", type(require("ngx.semaphore").new))
      assert.equal("function",
                   type(require("ngx.base64").encode_base64url))
      assert.equal(table.unpack, rawget(_G, "unpack"))
      assert.equal(load, rawget(_G, "loadstring")) -- (LuaJIT's 5.1 name)
      assert.equal(3, loadstring("return 1 + 2")())
    end)

    it("exposes the table without installing anything (ngxc.ngx)",
       function()
      assert.equal("function", type(ngxc.ngx.socket.tcp))
      assert.is_nil(rawget(_G, "ngx"))
      assert.is_nil(package.preload["bit"])
    end)

    it("leaves a foreign ngx global alone and installs nothing",
       function()
      local foreign = { foreign = true }
      rawset(_G, "ngx", foreign)
      assert.equal(foreign, ngxc.install())
      assert.equal(foreign, rawget(_G, "ngx"))
      assert.is_nil(package.preload["bit"])
      assert.is_nil(package.preload["ngx.semaphore"])
    end)

    it("keeps existing package.preload entries", function()
      local mine = function() return "mine" end
      package.preload["bit"] = mine
      ngxc.install()
      assert.equal(mine, package.preload["bit"])
      assert.equal("mine", require "bit")
      assert.equal("function", type(package.preload["table.new"]))
    end)

    it("replaces both with opts.force", function()
      local mine = function() return "mine" end
      package.preload["bit"] = mine
      rawset(_G, "ngx", { foreign = true })
      local ngx = ngxc.install({ force = true })
      assert.equal(ngxc.ngx, ngx)
      assert.equal(ngx, rawget(_G, "ngx"))
      assert.not_equal(mine, package.preload["bit"])
      assert.equal(ngxc.bit, require "bit")
    end)

    it("preloads an ffi stand-in (byte arrays, spec/45; other calls "
       .. "raise); install{ffi = false} leaves it out", function()
      ngxc.install()
      local ffi = require "ffi"
      -- taking the functions at load time works (lua-resty-http 0.17)
      local cast, gc = ffi.cast, ffi.gc
      assert.equal("function", type(cast))
      assert.error_matches(function() cast("void*", nil) end,
                           "corosched.ngx: ffi.cast is not available "
                           .. "(stock Lua has no LuaJIT FFI)", nil, true)
      assert.error_matches(function() gc() end, "ffi.gc is not available",
                           nil, true)
      assert.error_matches(function() ffi.cdef("int x;") end,
                           "ffi.cdef is not available", nil, true)
      assert.error_matches(function() return ffi.C.malloc end,
                           "ffi.C.malloc is not available", nil, true)
      assert.is_nil(ffi.nothing)
      package.loaded["ffi"] = nil
      package.preload["ffi"] = nil
      ngxc.install({ ffi = false })
      assert.is_nil(package.preload["ffi"])
      assert.is_false(pcall(require, "ffi"))
      assert.equal("function", type(package.preload["bit"]))
    end)

    it("keeps an existing unpack global", function()
      local function my_unpack() end
      rawset(_G, "unpack", my_unpack)
      ngxc.install()
      assert.equal(my_unpack, rawget(_G, "unpack"))
    end)
  end)

  describe("mappings", function()
    it("maps sockets, threads, sleep and time onto corosched", function()
      local ngx = ngxc.install()
      assert.equal(cs.socket.tcp, ngx.socket.tcp)
      assert.equal(cs.socket.tcp, ngx.socket.stream)
      assert.equal(cs.socket.udp, ngx.socket.udp)
      assert.equal(cs.thread.spawn, ngx.thread.spawn)
      assert.equal(cs.thread.wait, ngx.thread.wait)
      assert.equal(cs.thread.kill, ngx.thread.kill)
      assert.equal(require("corosched.core").ngx_sleep, ngx.sleep)
      assert.equal(cs.now, ngx.now)
      assert.equal(cs.update_time, ngx.update_time)
      assert.equal(cs.null, ngx.null)
      assert.equal("userdata", type(ngx.null))
      assert.equal(require("corosched").null, ngx.null)
    end)

    it("gives Lua 5.1's module() and package.seeall, as LuaJIT has them",
       function()
      local dir = os.tmpname()
      os.remove(dir)
      assert(os.execute("mkdir -p " .. dir .. "/pkg"))
      local function write(path, text)
        local f = assert(io.open(dir .. "/" .. path, "w"))
        f:write(text)
        f:close()
      end
      -- a library of OpenResty's first years: locals taken before
      -- module(...), its globals are the module's fields
      write("cs_oldmod.lua", [[
local tcp = ngx.socket.tcp
local setmetatable = setmetatable
module(...)
VERSION = "0.1"
local mt = { __index = _M }
function new() return setmetatable({ sock = tcp() }, mt) end
function name(self) return _NAME end
]])
      write("pkg/cs_seeall.lua", [[
module(..., package.seeall)
function twice(x) return tostring(x) .. tostring(x) end
]])
      local saved_path = package.path
      package.path = dir .. "/?.lua;" .. package.path
      local ok, err = pcall(function()
        assert.is_nil(rawget(_G, "module"))
        ngxc.install()
        local m = require "cs_oldmod"
        assert.equal("0.1", m.VERSION)
        assert.equal("cs_oldmod", m._NAME)
        assert.equal("", m._PACKAGE)
        assert.equal(m, m._M)
        assert.equal(m, rawget(_G, "cs_oldmod")) -- 5.1's global too
        assert.is_nil(rawget(_G, "VERSION")) -- not in _G
        local o = m.new()
        assert.equal("cs_oldmod", o:name())
        o.sock:close()
        local s = require "pkg.cs_seeall" -- sees _G through seeall
        assert.equal("44", s.twice(4))
        assert.equal("pkg.", s._PACKAGE)
        assert.equal(s, rawget(_G, "pkg").cs_seeall)
        assert.is_nil(rawget(_G, "twice"))
        assert.has_error(function() module(1) end,
          "bad argument #1 to 'module' (string expected, got number)")
      end)
      package.path = saved_path
      package.loaded["cs_oldmod"], package.loaded["pkg.cs_seeall"] = nil, nil
      rawset(_G, "cs_oldmod", nil)
      rawset(_G, "pkg", nil)
      os.execute("rm -rf " .. dir)
      assert(ok, err)
    end)

    it("makes os.date take a time with a fraction, as LuaJIT's does",
       function()
      local t = 1795801351.912 -- ngx.now() gives such times
      assert.is_false(pcall(os.date, "!%H:%M:%S", t)) -- Lua 5.4's raises
      local date = os.date
      ngxc.install()
      assert.equal("17:42:31", os.date("!%H:%M:%S", t))
      assert.equal("23:59:59", os.date("!%H:%M:%S", -1.5)) -- truncated
      assert.equal(date("!%c", 0), os.date("!%c", 0.0))
      assert.equal("table", type(os.date("*t")))
      -- a second install() does not wrap it again
      local ours = os.date
      ngxc.install()
      assert.equal(ours, os.date)
    end)

    it("ngx.sleep sleeps as cs.sleep in a thread, and blocks where no loop "
       .. "runs (OpenResty's init_by_lua)", function()
      local ngx = ngxc.install()
      -- before cs.run: blocks the process
      cs.update_time()
      local t0 = cs.now()
      assert.is_nil(ngx.sleep(0.05))
      cs.update_time()
      assert.is_true(cs.now() - t0 >= 0.049)
      -- its arguments are checked as in a thread, and raise
      for _, args in ipairs({{-1}, {"x"}, {}, {1, 2}}) do
        local ok_out, err_out = pcall(ngx.sleep, table.unpack(args))
        local err_in
        cs.run(function()
          local ok_in
          ok_in, err_in = pcall(ngx.sleep, table.unpack(args))
          assert.is_false(ok_in)
        end)
        assert.is_false(ok_out)
        assert.equal(err_in, err_out)
      end
      -- in a thread: parks it, other threads run meanwhile
      local order = {}
      cs.run(function()
        cs.thread.spawn(function()
          ngx.sleep(0.02)
          order[#order + 1] = "sleeper"
        end)
        order[#order + 1] = "other"
      end)
      assert.same({"other", "sleeper"}, order)
    end)

    it("has OpenResty's constants, config, worker and ctx", function()
      local ngx = ngxc.install()
      local levels = { STDERR = 0, EMERG = 1, ALERT = 2, CRIT = 3, ERR = 4,
                       WARN = 5, NOTICE = 6, INFO = 7, DEBUG = 8 }
      for k, v in pairs(levels) do assert.equal(v, ngx[k], k) end
      assert.same({ 0, -1, -2, -4, -5 },
                  { ngx.OK, ngx.ERROR, ngx.AGAIN, ngx.DONE, ngx.DECLINED })
      assert.equal(10026, ngx.config.ngx_lua_version)
      assert.equal(1021004, ngx.config.nginx_version)
      assert.equal("http", ngx.config.subsystem)
      assert.is_false(ngx.config.debug)
      assert.equal("", ngx.config.prefix())
      assert.equal("", ngx.config.nginx_configure())
      assert.equal(0, ngx.worker.id())
      assert.equal(1, ngx.worker.count())
      assert.is_false(ngx.worker.exiting())
      -- the shell that io.popen starts is our child
      local p = io.popen("echo $PPID")
      local ppid = tonumber(p:read("l"))
      p:close()
      assert.equal(ppid, ngx.worker.pid())
      assert.equal("timer", ngx.get_phase())
      assert.same({}, ngx.ctx)
      ngx.ctx.x = 1
      assert.equal(1, ngxc.install().ctx.x) -- one per process
      ngx.ctx.x = nil
    end)

    it("leaves unknown fields nil", function()
      local ngx = ngxc.install()
      assert.is_nil(ngx.no_such_thing)
      -- ngx.status raises, read or written, as in OpenResty's timers
      local ok, err = pcall(function() return ngx.status end)
      assert.is_false(ok)
      assert.matches("_spec%.lua:%d+: API disabled in the current context$",
                     err)
      ok, err = pcall(function() ngx.status = 200 end)
      assert.is_false(ok)
      assert.matches("_spec%.lua:%d+: API disabled in the current context$",
                     err)
      assert.is_nil(rawget(ngx, "status"))
      ngx.no_such_thing = 1 -- other fields can be set
      assert.equal(1, ngx.no_such_thing)
      ngx.no_such_thing = nil
      assert.is_nil(ngx.re.opt)
      assert.is_nil(ngx.socket.no_such_thing)
    end)
  end)

  describe("ngx.thread, ngx.sleep, ngx.timer", function()
    it("spawns, waits for and kills threads; sleeps", function()
      helper.run(function()
        local ngx = ngxc.install()
        -- the sleep counts from the cached clock: refreshed with t0, so
        -- that a slow install() (GC stress) does not shorten it
        ngx.update_time()
        local t0 = helper.clock()
        local t = ngx.thread.spawn(function(x)
          ngx.sleep(0.02)
          return x * 2, "done"
        end, 21)
        local k = ngx.thread.spawn(function() ngx.sleep(10) end)
        assert.same({ true, 42, "done" }, { ngx.thread.wait(t) })
        assert.is_true(helper.clock() - t0 >= 0.019)
        assert.equal(1, ngx.thread.kill(k))
        assert.same({ n = 2, nil, "already waited or killed" },
                    table.pack(ngx.thread.kill(k)))
      end)
    end)

    it("timer.at runs fn(false, ...) and returns 1; counts timers",
       function()
      local got, counts, fired
      helper.run(function()
        local ngx = ngxc.install()
        local sem = cs.semaphore.new()
        assert.same({ n = 1, 1 }, table.pack(ngx.timer.at(0.01,
          function(...)
            got = table.pack(...)
            counts = { ngx.timer.running_count(),
                       ngx.timer.pending_count() }
            sem:wait(5)
          end, "x", nil, 3)))
        assert.equal(1, ngx.timer.at(10, function() fired = true end))
        assert.equal(2, ngx.timer.pending_count())
        assert.equal(0, ngx.timer.running_count())
        assert.is_true(net.wait_until(function() return got ~= nil end))
        assert.equal(1, ngx.timer.running_count())
        assert.equal(1, ngx.timer.pending_count())
        sem:post()
        assert.is_true(net.wait_until(function()
          return ngx.timer.running_count() == 0
        end))
        assert.equal(1, ngxc.stop_timers()) -- the 10 s one
        assert.equal(0, ngx.timer.pending_count())
        assert.equal(0, ngxc.stop_timers())
      end)
      assert.same({ n = 4, false, "x", nil, 3 }, got)
      assert.same({ 1, 1 }, counts)
      assert.is_nil(fired)
    end)

    it("timer.every repeats until ngxc.stop_timers()", function()
      local ticks = 0
      helper.run(function()
        local ngx = ngxc.install()
        assert.same({ n = 1, 1 }, table.pack(ngx.timer.every(0.005,
          function(premature, inc)
            assert.is_false(premature)
            ticks = ticks + inc
          end, 1)))
        assert.is_true(net.wait_until(function() return ticks >= 3 end))
        assert.equal(1, ngxc.stop_timers())
        ngx.sleep(0.01) -- a handler already queued may still tick
        local n = ticks
        ngx.sleep(0.03)
        assert.equal(n, ticks)
      end)
    end)

    it("timer.at raises on a bad handler, returns nil, err at teardown",
       function()
      local ngx = ngxc.install()
      local res
      helper.run(function()
        assert.has_error(function() ngx.timer.at(0, "nope") end,
          "bad argument #2 to 'at' (Lua function expected)")
        assert.has_error(function() ngx.timer.every(1) end,
          "expecting at least 2 arguments but got 1")
      end)
      -- when the entry thread fails, pending timers run at once with
      -- premature = true and cannot start new timers
      local ok, err = pcall(cs.run, function()
        ngx.timer.at(10, function(premature)
          res = table.pack(premature, ngx.timer.at(0, function() end))
        end)
        error("entry failed")
      end)
      assert.is_false(ok)
      assert.matches("entry failed", err)
      assert.same({ n = 3, true, nil, "process exiting" }, res)
      helper.assert_clean()
    end)

    it("cs.shutdown() is nginx's graceful exit: ngx.worker.exiting() is "
       .. "true, pending timers run with premature = true, loops on "
       .. "exiting() end", function()
      local ngx = ngxc.install()
      local log = {}
      local t0 = helper.clock()
      cs.run(function()
        assert.is_false(ngx.worker.exiting())
        -- a library's keep-alive loop (luamqtt's loop/nginx.lua)
        assert.equal(1, ngx.timer.at(0, function()
          while not ngx.worker.exiting() do ngx.sleep(0.005) end
          log[#log + 1] = "keep-alive loop ended"
        end))
        assert.equal(1, ngx.timer.every(0.005, function(premature)
          if premature then log[#log + 1] = "every: premature" end
        end))
        assert.equal(1, ngx.timer.at(60, function(premature, x)
          log[#log + 1] = "at: " .. tostring(premature) .. " " .. x
        end, "arg"))
        ngx.sleep(0.02)
        cs.shutdown()
        assert.is_true(ngx.worker.exiting())
        assert.same({ n = 2, nil, "process exiting" },
                    table.pack(ngx.timer.at(1, function() end)))
        assert.equal(1, ngx.timer.at(0, function(premature)
          log[#log + 1] = "zero delay: " .. tostring(premature)
        end))
      end)
      assert.is_true(helper.clock() - t0 < 2 * helper.slack)
      table.sort(log)
      assert.same({ "at: true arg", "every: premature",
                    "keep-alive loop ended", "zero delay: true" }, log)
      assert.is_false(ngx.worker.exiting())
      helper.assert_clean()
    end)
  end)

  describe("ngx.semaphore", function()
    it("is cs.semaphore through require 'ngx.semaphore'", function()
      local log = {}
      helper.run(function()
        local ngx = ngxc.install()
        local semaphore = require "ngx.semaphore"
        local sema = semaphore.new(0)
        local t = ngx.thread.spawn(function()
          log[#log + 1] = "wait"
          local ok = sema:wait(1)
          log[#log + 1] = tostring(ok)
          return ok
        end)
        log[#log + 1] = "post"
        assert.is_true(sema:post(1))
        assert.same({ true, true }, { ngx.thread.wait(t) })
        assert.same({ n = 2, nil, "timeout" }, table.pack(sema:wait(0)))
        assert.equal(2, semaphore.new(2):count())
        assert.equal(0, semaphore.new():count())
      end)
      assert.same({ "wait", "post", "true" }, log)
    end)
  end)

  describe("ngx.socket", function()
    it("connect() gives a connected socket, or nil, err", function()
      net.run(function()
        local ngx = ngxc.install()
        local port = net.serve(function(c) c:send("hi\n") end)
        local sock = assert(ngx.socket.connect("127.0.0.1", port))
        assert.equal("hi", sock:receive("*l"))
        assert.equal(1, sock:close())
        assert.same({ n = 2, nil, "connection refused" },
                    table.pack(ngx.socket.connect("127.0.0.1",
                                                  net.free_port())))
      end)
    end)

    -- A Redis client written the way lua-resty-redis is: everything it
    -- needs comes from the ngx global and require when it is loaded.
    local function miniredis_loader()
      local ngx = rawget(_G, "ngx")
      local tcp, null = ngx.socket.tcp, ngx.null
      local ok, new_tab = pcall(require, "table.new")
      if not ok then new_tab = function() return {} end end
      local clear = require "table.clear"

      local _M = {}
      local mt = { __index = _M }

      function _M.new()
        local sock, err = tcp()
        if not sock then return nil, err end
        return setmetatable({ sock = sock }, mt)
      end
      function _M:set_timeouts(c, s, r)
        return self.sock:settimeouts(c, s, r)
      end
      function _M:connect(...) return self.sock:connect(...) end
      function _M:set_keepalive(...) return self.sock:setkeepalive(...) end
      function _M:get_reused_times() return self.sock:getreusedtimes() end
      function _M:close() return self.sock:close() end

      local function read_reply(sock)
        local line, err = sock:receive("*l")
        if not line then return nil, err end
        local prefix, rest = line:sub(1, 1), line:sub(2)
        if prefix == "+" then return rest end
        if prefix == "-" then return false, rest end
        if prefix == ":" then return tonumber(rest) end
        if prefix == "$" then
          local size = tonumber(rest)
          if size < 0 then return null end
          local data, err2 = sock:receive(size)
          if not data then return nil, err2 end
          local crlf, err3 = sock:receive(2)
          if not crlf then return nil, err3 end
          return data
        end
        return nil, "unknown prefix: " .. prefix
      end

      local req = new_tab(16, 0)
      function _M:cmd(...)
        clear(req)
        local n = select("#", ...)
        req[1], req[2], req[3] = "*", n, "\r\n"
        for i = 1, n do
          local arg = tostring((select(i, ...)))
          local j = #req
          req[j + 1], req[j + 2], req[j + 3] = "$", #arg, "\r\n"
          req[j + 4], req[j + 5] = arg, "\r\n"
        end
        local bytes, err = self.sock:send(req) -- a table, numbers in it
        if not bytes then return nil, err end
        return read_reply(self.sock)
      end

      return _M
    end

    -- A tiny Redis-like server: GET, SET, DEL on `store`, one light thread
    -- per connection. Returns the port, a function that stops it and one
    -- that says how many connections it accepted.
    local function redis_server(store)
      local srv, port = net.listen()
      local conns = 0
      local function reply(c, v)
        if v == nil then return c:send("$-1\r\n") end
        return c:send("$" .. #v .. "\r\n" .. v .. "\r\n")
      end
      local function serve(c)
        while true do
          local line = c:receive("*l")
          if not line then break end
          local args = {}
          for i = 1, assert(tonumber(line:match("^%*(%d+)$"))) do
            local len = tonumber(c:receive("*l"):match("^%$(%d+)$"))
            args[i] = c:receive(len)
            assert.equal("\r\n", c:receive(2))
          end
          local cmd = args[1]:upper()
          if cmd == "GET" then
            reply(c, store[args[2]])
          elseif cmd == "SET" then
            store[args[2]] = args[3]
            c:send("+OK\r\n")
          elseif cmd == "DEL" then
            local n = store[args[2]] ~= nil and 1 or 0
            store[args[2]] = nil
            c:send(":" .. n .. "\r\n")
          else
            c:send("-ERR unknown command '" .. cmd .. "'\r\n")
          end
        end
        c:close()
      end
      local th = cs.thread.spawn(function()
        while true do
          local c = srv:accept()
          if not c then return end
          conns = conns + 1
          cs.thread.spawn(serve, c)
        end
      end)
      return port, function()
        srv:close()
        cs.thread.wait(th)
      end, function() return conns end
    end

    it("runs a resty-style Redis client unmodified, with the pool",
       function()
      local store = {}
      net.run(function()
        local ngx = ngxc.install()
        package.preload["resty.miniredis"] = miniredis_loader
        local redis = require "resty.miniredis"
        local port, stop, conns = redis_server(store)

        local red = assert(redis.new())
        red:set_timeouts(1000, 1000, 1000)
        assert.equal(1, red:connect("127.0.0.1", port))
        assert.equal(0, red:get_reused_times())
        assert.equal(ngx.null, red:cmd("get", "k"))
        assert.equal("OK", red:cmd("set", "k", "v 1\r\n$-1\r\n"))
        assert.equal("v 1\r\n$-1\r\n", red:cmd("get", "k"))
        assert.equal("OK", red:cmd("set", "n", 12))
        assert.equal(1, red:set_keepalive(10000, 10))

        local red2 = assert(redis.new())
        red2:set_timeouts(1000, 1000, 1000)
        assert.equal(1, red2:connect("127.0.0.1", port))
        assert.equal(1, red2:get_reused_times()) -- from the pool
        assert.equal("12", red2:cmd("get", "n"))
        assert.equal(1, red2:cmd("del", "k"))
        assert.equal(0, red2:cmd("del", "k"))
        assert.equal(ngx.null, red2:cmd("get", "k"))
        assert.same({ n = 2, false, "ERR unknown command 'NOPE'" },
                    table.pack(red2:cmd("nope")))
        assert.equal(1, red2:close()) -- not pooled: nothing left behind
        stop()
        assert.equal(1, conns())
      end)
      assert.same({ n = "12" }, store)
    end)
  end)

  describe("ngx.log", function()
    local LINE = "^%d%d%d%d/%d%d/%d%d %d%d:%d%d:%d%d %[(%a*)%] (.-)\n$"

    it("writes error and more severe levels by default", function()
      -- a fresh copy of the module: the other tests change the level
      local path = package.searchpath("corosched.ngx", package.path)
      local ngx = assert(loadfile(path))().ngx
      local out = capture("stderr", function()
        ngx.log(ngx.WARN, "not this")
        ngx.log(ngx.DEBUG, "nor this")
      end)
      assert.equal("", out)
      for lv, name in pairs({ [ngx.STDERR] = "stderr", [ngx.EMERG] = "emerg",
                              [ngx.ALERT] = "alert", [ngx.CRIT] = "crit",
                              [ngx.ERR] = "error" }) do
        out = capture("stderr", function() ngx.log(lv, "m", lv) end)
        assert.same({ name, "m" .. lv }, { out:match(LINE) })
      end
    end)

    it("concatenates nil, booleans, numbers, ngx.null, __tostring",
       function()
      local ngx = ngxc.install()
      local obj = setmetatable({}, { __tostring = function() return "O" end })
      local out = capture("stderr", function()
        ngx.log(ngx.ERR, "a", nil, true, false, 1, 2.5, ngx.null, obj)
      end)
      assert.same({ "error", "aniltruefalse12.5nullO" },
                  { out:match(LINE) })
      assert.equal(os.date("%Y/%m/%d"), out:sub(1, 10))
      assert.has_error(function() ngx.log(ngx.ERR, {}) end,
        "bad argument #1 to 'log' (expected table to have __tostring "
        .. "metamethod)")
      assert.has_error(function() ngx.log("x") end,
        "bad argument #1 to 'log' (number expected, got string)")
      assert.has_error(function() ngx.log(9, "x") end,
        "bad argument #1 to 'log' (bad log level: 9)")
      assert.has_error(function() ngx.log(-1, "x") end,
        "bad argument #1 to 'log' (bad log level: -1)")
    end)

    it("filters at opts.log_level or ngxc.set_log_level", function()
      local ngx = ngxc.install({ log_level = 8 }) -- ngx.DEBUG
      local out = capture("stderr", function()
        ngx.log(ngx.DEBUG, "d")
        ngx.log(ngx.INFO, "i")
      end)
      assert.matches("%[debug%] d\n.*%[info%] i\n$", out)
      assert.equal(8, ngxc.set_log_level("warn"))
      out = capture("stderr", function()
        ngx.log(ngx.NOTICE, "n")
        ngx.log(ngx.WARN, "w")
      end)
      assert.same({ "warn", "w" }, { out:match(LINE) })
      assert.equal(5, ngxc.set_log_level(ngx.NOTICE))
      assert.equal(6, ngxc.set_log_level("ERR"))
      assert.has_error(function() ngxc.set_log_level("loud") end,
        "corosched.ngx: bad log level: loud")
      assert.has_error(function() ngxc.set_log_level(9) end,
        "corosched.ngx: bad log level: 9")
    end)
  end)

  describe("ngx.print, ngx.say", function()
    it("write to io.stdout, flattening arrays", function()
      local ngx = ngxc.install()
      local r = {}
      local out = capture("stdout", function()
        r[1] = ngx.print("a", 1, { "b", { 2, true } }, nil, ngx.null)
        r[2] = ngx.say("x", false)
        r[3] = ngx.say()
        r[4] = ngx.flush()
      end)
      assert.equal("a1b2truenilnullxfalse\n\n", out)
      assert.same({ 1, 1, 1, 1 }, r)
      assert.has_error(function() ngx.say(print) end,
        "bad argument #1 to 'say' (string, number, boolean, nil, ngx.null, "
        .. "or array table expected, but got function)")
    end)
  end)

  -- OpenResty runs on LuaJIT: a number becomes text with "%.14g" (2.0 as
  -- "2"), and ngx.print writes a whole number inside an array as an int
  -- (ngx_http_lua_write_num: -0.0 as "0"); Lua 5.4 integers stay exact
  describe("numbers", function()
    it("are written as OpenResty writes them", function()
      local ngx = ngxc.install()
      assert.equal(ngxc.numstr(2.0), "2")
      assert.equal("n=10&p=2&q=0.5&r=9007199254740993",
                   ngx.encode_args({ n = 10.0, p = 4 / 2, q = 0.5,
                                     r = 9007199254740993 }))
      assert.equal("a=1&a=2", ngx.encode_args({ a = { 1, 2.0 } }))
      assert.equal("10", ngx.escape_uri(10.0))
      assert.equal("1e%2B15", ngx.escape_uri(1e15))
      assert.equal("'10'", ngx.quote_sql_str(10.0))
      assert.equal(ngx.md5("1"), ngx.md5(1.0))
      assert.equal(ngx.encode_base64("3"), ngx.encode_base64(3.0))
      assert.equal(ngx.crc32_long("1"), ngx.crc32_long(1.0))
      assert.equal("2", ngx.re.match(2.0, "\\d+")[0])
      assert.equal("x7", (ngx.re.sub("xy", "y", 7.0)))
      assert.equal("a2b4", (ngx.re.gsub("a1b2", "\\d",
                                         function(m) return m[0] * 2.0 end)))
      local out = capture("stdout", function()
        ngx.print(2.0, " ", -0.0, " ", { 3.0, -0.0, 2^31, 0.25 }, " ", 7)
      end)
      assert.equal("2 -0 302147483648" .. "0.25 7", out)
      local log = capture("stderr", function() ngx.log(ngx.ERR, 1.0) end)
      assert.matches("%] 1\n$", log)
    end)
  end)

  describe("ngx.re", function()
    it("is corosched.re (PCRE2), the same functions", function()
      local ngx = ngxc.install()
      local re = require "corosched.re"
      for _, f in ipairs({ "match", "find", "gmatch", "sub", "gsub" }) do
        assert.equal(re[f], ngx.re[f], f)
      end
      -- lua-resty-http's header parsing, on the way it calls it
      local m = ngx.re.match("Content-Type: text/plain",
                             "([^:\\s]+):\\s*(.*)", "jo")
      assert.same({ [0] = "Content-Type: text/plain", "Content-Type",
                    "text/plain" }, m)
      assert.same({ 1, 3 }, { ngx.re.find("  \t", "^\\s*$", "jo") })
      assert.same({ "a-b-c", 2 }, { ngx.re.gsub("a b c", " ", "-", "jo") })
    end)

    it("raises lua-resty-core's errors for a regex that is no string",
       function()
      local ngx = ngxc.install()
      for _, f in ipairs({ "match", "find", "gmatch", "sub", "gsub" }) do
        assert.has_error(function() ngx.re[f]("a12", 12, "x") end,
          "attempt to get length of local 'regex' (a number value)", f)
        assert.has_error(function() ngx.re[f]("a12", nil, "x") end,
          "attempt to get length of local 'regex' (a nil value)", f)
        assert.has_error(function() ngx.re[f]("a12", {}, "x") end,
          "bad argument #1 to 'ngx_lua_ffi_compile_regex' (cannot convert "
          .. "'table' to 'const unsigned char *')", f)
      end
    end)

    it("raises a clear error when corosched.re is not built", function()
      local mod = ngx_env.ngx_without_re()
      assert.has_error(function() mod.ngx.re.match("a", "a") end,
        "corosched.ngx: ngx.re.match is not available (corosched.re was "
        .. "not built: no PCRE2)")
    end)
  end)

  describe("what cannot be provided", function()
    it("raises a clear error when called or indexed", function()
      local ngx = ngxc.install()
      local REQ = " is not available (no nginx request)"
      assert.has_error(function() ngx.exit(200) end,
        "corosched.ngx: ngx.exit" .. REQ)
      assert.has_error(function() ngx.redirect("/") end,
        "corosched.ngx: ngx.redirect" .. REQ)
      assert.has_error(function() ngx.exec("/") end,
        "corosched.ngx: ngx.exec" .. REQ)
      assert.has_error(function() return ngx.var.uri end,
        "corosched.ngx: ngx.var.uri" .. REQ)
      assert.has_error(function() ngx.var.foo = 1 end,
        "corosched.ngx: ngx.var.foo" .. REQ)
      assert.has_error(function() return ngx.req.get_headers() end,
        "corosched.ngx: ngx.req.get_headers" .. REQ)
      assert.has_error(function() ngx.header["X-A"] = "b" end,
        "corosched.ngx: ngx.header.X-A" .. REQ)
      assert.has_error(function() return ngx.location.capture("/") end,
        "corosched.ngx: ngx.location.capture" .. REQ)
      assert.has_error(function() return ngx.shared.cache end,
        "corosched.ngx: ngx.shared.cache is not available (no nginx "
        .. "shared memory zones)")
    end)
  end)

  describe("request functions", function()
    -- lua-resty-http and lua-resty-upload take ngx.req.socket and others
    -- at load time (local ngx_req_socket = ngx.req.socket); in OpenResty
    -- they are functions that raise only when called where there is no
    -- request (a timer)
    it("are functions that raise when called, nil when unknown",
       function()
      local ngx = ngxc.install()
      local REQ = " is not available (no nginx request)"
      local req_socket = ngx.req.socket
      local get_headers = ngx.req.get_headers
      local get_method = ngx.req.get_method
      assert.equal("function", type(req_socket))
      assert.equal("function", type(get_headers))
      assert.equal("function", type(get_method))
      assert.equal("function", type(ngx.resp.get_headers))
      assert.equal("function", type(ngx.location.capture_multi))
      assert.has_error(function() req_socket() end,
        "corosched.ngx: ngx.req.socket" .. REQ)
      assert.has_error(function() ngx.resp.get_headers() end,
        "corosched.ngx: ngx.resp.get_headers" .. REQ)
      -- (as lua-resty-http's get_client_body_reader does)
      local ok, err = pcall(req_socket)
      assert.is_false(ok)
      assert.matches("ngx.req.socket" .. REQ, err, 1, true)
      assert.is_nil(ngx.req.no_such_function)
      assert.is_nil(ngx.location.no_such_function)
      assert.has_error(function() ngx.req.get_headers = print end,
        "corosched.ngx: ngx.req.get_headers" .. REQ)
      assert.has_error(function() ngx.req.foo = 1 end,
        "corosched.ngx: ngx.req.foo" .. REQ)
      assert.equal(req_socket, ngx.req.socket)
    end)
  end)

  describe("bit (LuaJIT BitOp)", function()
    local bit = ngxc.bit

    it("gives the results of the BitOp manual's examples", function()
      assert.equal(-1, bit.tobit(0xffffffff))
      assert.equal(0, bit.tobit(0xffffffff + 1))
      assert.equal(1234, bit.tobit(2 ^ 40 + 1234))
      assert.equal("00000001", bit.tohex(1))
      assert.equal("ffffffff", bit.tohex(-1))
      assert.equal("ffffffff", bit.tohex(0xffffffff))
      assert.equal("FFFF", bit.tohex(-1, -4))
      assert.equal("0021", bit.tohex(0x21, 4))
      assert.equal("4321", bit.tohex(0x87654321, 4))
      assert.equal("00ff", bit.tohex(255, 4))
      assert.equal("00FF", bit.tohex(255, -4))
      assert.equal(-1, bit.bnot(0))
      assert.equal(-305419897, bit.bnot(0x12345678))
      assert.equal("edcba987", bit.tohex(bit.bnot(0x12345678)))
      assert.equal(15, bit.bor(1, 2, 4, 8))
      assert.equal(0x78, bit.band(0x12345678, 0xff))
      assert.equal(0x0ff00ff0, bit.bxor(0xa5a5f0f0, 0xaa55ff00))
      assert.equal(1, bit.lshift(1, 0))
      assert.equal(256, bit.lshift(1, 8))
      assert.equal(256, bit.lshift(1, 40))
      assert.equal(-2147483648, bit.lshift(1, 31))
      assert.equal(1, bit.rshift(256, 8))
      assert.equal(16777215, bit.rshift(-256, 8))
      assert.equal(1, bit.arshift(256, 8))
      assert.equal(-1, bit.arshift(-256, 8))
      assert.equal("54321000", bit.tohex(bit.lshift(0x87654321, 12)))
      assert.equal("00087654", bit.tohex(bit.rshift(0x87654321, 12)))
      assert.equal("fff87654", bit.tohex(bit.arshift(0x87654321, 12)))
      assert.equal("45678123", bit.tohex(bit.rol(0x12345678, 12)))
      assert.equal("67812345", bit.tohex(bit.ror(0x12345678, 12)))
      assert.equal("78563412", bit.tohex(bit.bswap(0x12345678)))
      assert.equal("12345678", bit.tohex(bit.bswap(0x78563412)))
    end)

    it("takes shift counts mod 32 and wraps every result to int32",
       function()
      assert.equal(bit.lshift(3, 5), bit.lshift(3, 37))
      assert.equal(bit.rshift(-1, 4), bit.rshift(-1, 36))
      assert.equal(bit.rol(0x12345678, 4), bit.rol(0x12345678, 36))
      assert.equal(0x12345678, bit.rol(0x12345678, 0))
      assert.equal(0x12345678, bit.ror(0x12345678, 32))
      assert.equal(-1, bit.bor(0x80000000, 0x7fffffff))
      assert.equal(0, bit.bxor(-1, 0xffffffff))
      assert.equal(-2147483648, bit.tobit(2147483648))
      assert.equal(2147483647, bit.tobit(-2147483649))
      assert.equal(5, bit.band(5))
      assert.equal(0xff, bit.band(-1, 0xfff, 0xff))
      assert.equal(7, bit.bxor(1, 2, 4, 0))
      assert.equal("", bit.tohex(1, 0))
      assert.equal("0000000f", bit.tohex(15, 12))
    end)

    it("rounds non-integral numbers to the nearest, ties to even",
       function()
      assert.equal(2, bit.tobit(1.5))
      assert.equal(2, bit.tobit(2.5))
      assert.equal(3, bit.tobit(2.51))
      assert.equal(-2, bit.tobit(-1.5))
      assert.equal(0, bit.tobit(-0.3))
      assert.equal(0, bit.tobit(0 / 0))
      assert.equal(0, bit.tobit(math.huge))
      assert.equal(1, bit.tobit(2 ^ 52 + 1))
      assert.equal(-2147483648, bit.tobit(2 ^ 63 + 2 ^ 31)) -- not an int64
      assert.equal(0, bit.tobit(-(2 ^ 53)))
      assert.equal(16, bit.tobit("0x10"))
    end)

    it("raises on non-numbers", function()
      assert.has_error(function() bit.band(1, {}) end,
        "bad argument #2 to 'band' (number expected, got table)")
      assert.has_error(function() bit.tobit() end,
        "bad argument #1 to 'tobit' (number expected, got no value)")
      assert.has_error(function() bit.lshift(1, "x") end,
        "bad argument #2 to 'lshift' (number expected, got string)")
    end)
  end)

  describe("table extensions", function()
    it("new, clear, nkeys, isempty, isarray, clone", function()
      ngxc.install()
      local new, clear = require "table.new", require "table.clear"
      local nkeys, isempty = require "table.nkeys", require "table.isempty"
      local isarray, clone = require "table.isarray", require "table.clone"
      local t = new(10, 5)
      assert.same({}, t)
      assert.same({}, new(0, 2.5))
      t = setmetatable({ 1, 2, 3, a = 1, b = 2 }, {})
      local mt = getmetatable(t)
      assert.equal(5, nkeys(t))
      assert.is_false(isempty(t))
      local c = clone(t)
      assert.same({ 1, 2, 3, a = 1, b = 2 }, c)
      assert.not_equal(t, c)
      assert.is_nil(getmetatable(c))
      clear(t)
      assert.equal(0, nkeys(t))
      assert.is_true(isempty(t))
      assert.equal(mt, getmetatable(t)) -- in place
      assert.is_true(isarray({}))
      assert.is_true(isarray({ 1, 2, 3 }))
      assert.is_true(isarray({ [1] = "a", [2] = "b", [3.0] = "c" }))
      -- LuaJIT's: positive integer keys, holes allowed (spec/59)
      assert.is_true(isarray({ 1, 2, nil, 4 }))
      assert.is_true(isarray({ [2] = "b" }))
      assert.is_false(isarray({ [0] = "b" }))
      assert.is_false(isarray({ [1.5] = "b" }))
      assert.is_false(isarray({ 1, x = 2 }))
      assert.is_false(isarray({ [0] = 1 }))
      assert.is_false(isarray({ [1.5] = 1 }))
    end)
  end)

  describe("digests", function()
    local ngx = ngxc.ngx

    it("md5 / md5_bin: the RFC 1321 test suite", function()
      local suite = {
        [""] = "d41d8cd98f00b204e9800998ecf8427e",
        a = "0cc175b9c0f1b6a831c399e269772661",
        abc = "900150983cd24fb0d6963f7d28e17f72",
        ["message digest"] = "f96b697d7cb7938d525a2f31aaf161d0",
        abcdefghijklmnopqrstuvwxyz = "c3fcd3d76192e4007dfb496cca67e13b",
        ["ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"]
          = "d174ab98d277d9f5a5611c2c9f419d9f",
        [("1234567890"):rep(8)] = "57edf4a22be3c955ac49da2e2107b67a",
      }
      for msg, digest in pairs(suite) do
        assert.equal(digest, ngx.md5(msg), msg)
        assert.equal(unhex(digest), ngx.md5_bin(msg), msg)
      end
      assert.equal(ngx.md5(""), ngx.md5(nil))
      assert.equal(ngx.md5("12"), ngx.md5(12))
    end)

    it("sha1_bin: the FIPS 180 examples", function()
      assert.equal("a9993e364706816aba3e25717850c26c9cd0d89d",
                   hex(ngx.sha1_bin("abc")))
      assert.equal("da39a3ee5e6b4b0d3255bfef95601890afd80709",
                   hex(ngx.sha1_bin("")))
      assert.equal("84983e441c3bd26ebaae4aa1f95129e5e54670f1",
        hex(ngx.sha1_bin(
          "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")))
      -- a million "a" (0.1 s; minutes under valgrind)
      if not helper.valgrind then
        assert.equal("34aa973cd4c4daa4f61eeb2bdbad27316534016f",
                     hex(ngx.sha1_bin(("a"):rep(1000000))))
      end
    end)

    it("hmac_sha1: the RFC 2202 test cases", function()
      local cases = {
        { ("\11"):rep(20), "Hi There",
          "b617318655057264e28bc0b6fb378c8ef146be00" },
        { "Jefe", "what do ya want for nothing?",
          "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79" },
        { ("\170"):rep(20), ("\221"):rep(50),
          "125d7342b9ac11cd91a39af48aa17b4f63f175d3" },
        { unhex("0102030405060708090a0b0c0d0e0f10111213141516171819"),
          ("\205"):rep(50), "4c9007f4026250c6bc8414f9bf50c86c2d7235da" },
        { ("\12"):rep(20), "Test With Truncation",
          "4c1a03424b55e07fe7f27be1d58bb9324a9a5a04" },
        { ("\170"):rep(80),
          "Test Using Larger Than Block-Size Key - Hash Key First",
          "aa4ae5e15272d00e95705637ce8a3b55ed402112" },
        { ("\170"):rep(80), "Test Using Larger Than Block-Size Key and "
          .. "Larger Than One Block-Size Data",
          "e8e99d0f45237d786d6bbaa7965c7808bbff1a91" },
      }
      for i, c in ipairs(cases) do
        assert.equal(c[3], hex(ngx.hmac_sha1(c[1], c[2])), "case " .. i)
      end
    end)

    it("crc32_short / crc32_long: zlib's CRC-32", function()
      assert.equal(0xcbf43926, ngx.crc32_short("123456789"))
      assert.equal(0xcbf43926, ngx.crc32_long("123456789"))
      assert.equal(0, ngx.crc32_short(""))
      assert.equal(0x414fa339,
        ngx.crc32_long("The quick brown fox jumps over the lazy dog"))
    end)
  end)

  describe("base64", function()
    local ngx = ngxc.ngx
    local RFC4648 = {
      { "", "" }, { "f", "Zg==" }, { "fo", "Zm8=" }, { "foo", "Zm9v" },
      { "foob", "Zm9vYg==" }, { "fooba", "Zm9vYmE=" },
      { "foobar", "Zm9vYmFy" },
    }

    it("encodes and decodes the RFC 4648 vectors", function()
      for _, v in ipairs(RFC4648) do
        assert.equal(v[2], ngx.encode_base64(v[1]))
        assert.equal((v[2]:gsub("=", "")), ngx.encode_base64(v[1], true))
        assert.equal(v[1], ngx.decode_base64(v[2]))
        assert.equal(v[1], ngx.decode_base64((v[2]:gsub("=", ""))))
      end
      local all = {}
      for i = 0, 255 do all[#all + 1] = string.char(i) end
      all = table.concat(all)
      assert.equal(all, ngx.decode_base64(ngx.encode_base64(all)))
      assert.equal("+/+/", ngx.encode_base64("\251\255\191"))
      assert.equal("", ngx.encode_base64(nil))
    end)

    it("decode_base64 returns nil on invalid input", function()
      assert.is_nil(ngx.decode_base64("Zm9v!"))
      assert.is_nil(ngx.decode_base64("Z"))
      assert.is_nil(ngx.decode_base64("Zm9vY"))
      assert.is_nil(ngx.decode_base64("Zm 9v"))
      assert.is_nil(ngx.decode_base64("Zm9v\n"))
      assert.is_nil(ngx.decode_base64("Zm9-"))
      assert.has_error(function() ngx.decode_base64({}) end,
        "string argument only")
    end)

    it("ngx.base64: the URL-safe alphabet, no padding", function()
      local b64 = ngxc.base64
      assert.equal("-_-_", b64.encode_base64url("\251\255\191"))
      assert.equal("Zg", b64.encode_base64url("f"))
      assert.equal("\251\255\191", b64.decode_base64url("-_-_"))
      assert.same({ n = 2, nil, "invalid input" },
                  table.pack(b64.decode_base64url("+/+/")))
    end)
  end)

  describe("URIs, args, SQL", function()
    local ngx = ngxc.ngx

    it("escape_uri / unescape_uri (lua-nginx-module t/006-escape.t)",
       function()
      assert.equal("a%20%E4%BD%A0", ngx.escape_uri("a 你"))
      assert.equal("a 你", ngx.unescape_uri("a%20%e4%bd%a0"))
      assert.equal("a%2Bb", ngx.escape_uri("a+b"))
      assert.equal("%22a%2Fb%3D%7B%7D%3A%3C%3E%3B%26%5B%5D%5C%5E",
                   ngx.escape_uri('"a/b={}:<>;&[]\\^'))
      assert.equal("abc-._~AZ09", ngx.escape_uri("abc-._~AZ09"))
      assert.equal("", ngx.escape_uri(nil))
      assert.equal("32", ngx.escape_uri(32))
      assert.equal("", ngx.unescape_uri(nil))
      assert.equal("32", ngx.unescape_uri(32))
      assert.equal("a b+c", ngx.unescape_uri("a+b%2Bc"))
      assert.equal("%zz%4", ngx.unescape_uri("%zz%4"))
      local all = {}
      for i = 0, 255 do all[#all + 1] = string.char(i) end
      all = table.concat(all)
      assert.equal(all, ngx.unescape_uri(ngx.escape_uri(all)))
    end)

    it("encode_args / decode_args", function()
      assert.equal("b%20r=hello%20world&foo=3",
                   ngx.encode_args({ foo = 3, ["b r"] = "hello world" }))
      assert.equal("a=1&a=x&t",
                   ngx.encode_args({ a = { 1, "x" }, t = true, f = false }))
      assert.equal("", ngx.encode_args({}))
      assert.same({ a = { "1", "2" }, b = true, c = "", ["d e"] = "f g" },
                  ngx.decode_args("a=1&b&c=&a=2&=x&&d+e=f%20g"))
      local many = {}
      for i = 1, 150 do many[i] = "k" .. i .. "=" .. i end
      many = table.concat(many, "&")
      local n = 0
      for _ in pairs(ngx.decode_args(many)) do n = n + 1 end
      assert.equal(100, n)
      n = 0
      for _ in pairs(ngx.decode_args(many, 0)) do n = n + 1 end
      assert.equal(150, n)
      assert.same({ k1 = "1", k2 = "2" }, ngx.decode_args(many, 2))
    end)

    it("quote_sql_str quotes a MySQL string literal", function()
      assert.equal("'abc'", ngx.quote_sql_str("abc"))
      assert.equal([['a\0b\Z\'\"\\\n\r\t\b']],
                   ngx.quote_sql_str("a\0b\26'\"\\\n\r\t\b"))
      assert.equal("''", ngx.quote_sql_str(""))
    end)
  end)

  describe("time", function()
    local ngx = ngxc.ngx

    it("http_time, cookie_time, parse_http_time", function()
      -- the examples of lua-nginx-module's README
      assert.equal("Thu, 18 Nov 2010 11:27:35 GMT",
                   ngx.http_time(1290079655))
      assert.equal("Thu, 18-Nov-10 11:27:35 GMT",
                   ngx.cookie_time(1290079655))
      assert.equal("Thu, 01 Jan 1970 00:00:00 GMT", ngx.http_time(0))
      assert.equal("Fri, 01-Jan-2038 00:00:00 GMT",
                   ngx.cookie_time(2145916800))
      assert.equal(1290079655,
                   ngx.parse_http_time("Thu, 18 Nov 2010 11:27:35 GMT"))
      assert.equal(1290079655,
                   ngx.parse_http_time("Thursday, 18-Nov-10 11:27:35 GMT"))
      assert.equal(1290079655,
                   ngx.parse_http_time("Thu Nov 18 11:27:35 2010"))
      assert.is_nil(ngx.parse_http_time("yesterday"))
      assert.is_nil(ngx.parse_http_time("Thu, 18 Xoo 2010 11:27:35 GMT"))
      -- nginx reads a month from its first letters (recorded in spec/59):
      -- "Foo" is February, and nothing after the seconds is looked at
      assert.equal(ngx.parse_http_time("Thu, 18 Feb 2010 11:27:35 GMT"),
                   ngx.parse_http_time("Thu, 18 Foo 2010 11:27:35 +0100"))
      assert.is_nil(ngx.parse_http_time("Thu, 30 Feb 2012 11:27:35 GMT"))
      assert.has_error(function() ngx.parse_http_time(1) end,
                       "string argument only")
      assert.has_error(function() ngx.http_time("1") end,
                       "number argument only")
      assert.equal("Thu, 01 Jan 1970 00:00:00 GMT", ngx.http_time(-5))
      for _, t in ipairs({ 0, 951782400, 1709164800, 2145916800,
                           4102444799 }) do
        assert.equal(t, ngx.parse_http_time(ngx.http_time(t)))
      end
    end)

    it("time, localtime, utctime, today", function()
      local t0 = os.time()
      local t = ngx.time()
      assert.equal("integer", math.type(t))
      assert.is_true(t >= t0 and t <= os.time())
      local pat = "^%d%d%d%d%-%d%d%-%d%d %d%d:%d%d:%d%d$"
      assert.matches(pat, ngx.localtime())
      assert.matches(pat, ngx.utctime())
      assert.matches("^%d%d%d%d%-%d%d%-%d%d$", ngx.today())
      -- the same second (a few tries, should a second tick in between)
      for _ = 1, 3 do
        local u, l = os.date("!%Y-%m-%d %H:%M:%S"), ngx.localtime()
        if u == ngx.utctime() and l == os.date("%Y-%m-%d %H:%M:%S") then
          return
        end
      end
      error("utctime/localtime do not match os.date")
    end)
  end)

  describe("against python3", function()
    local ngx = ngxc.ngx

    it("md5, sha1, hmac_sha1, crc32, base64 of random inputs", function()
      if not net.which("python3") then
        pending("python3 not found")
        return
      end
      -- deterministic pseudo-random strings, lengths around the block
      -- boundaries included
      local x = 20231122
      local function rand(n)
        x = (x * 1103515245 + 12345) % 2147483648
        return x % n
      end
      local inputs = {}
      for i = 1, helper.valgrind and 70 or 300 do
        local len = i <= 140 and i - 1 or rand(3000)
        local b = {}
        for j = 1, len do b[j] = string.char(rand(256)) end
        inputs[i] = table.concat(b)
      end
      local inf, outf = os.tmpname(), os.tmpname()
      local f = assert(io.open(inf, "w"))
      for _, s in ipairs(inputs) do f:write(hex(s), "\n") end
      f:close()
      local script = table.concat({
        "import sys, hashlib, hmac, zlib, base64",
        "for line in open(sys.argv[1]):",
        "    s = bytes.fromhex(line.strip())",
        "    k = s[::-1][:100]",
        "    print(hashlib.md5(s).hexdigest(),",
        "          hashlib.sha1(s).hexdigest(),",
        "          hmac.new(k, s, hashlib.sha1).hexdigest(),",
        "          zlib.crc32(s), base64.b64encode(s).decode() or \"-\")",
      }, "\n")
      local cmd = ("env -u LD_PRELOAD python3 -c '%s' %s > %s")
        :format(script, inf, outf)
      assert.is_true(os.execute(cmd))
      local lines = {}
      for line in io.lines(outf) do lines[#lines + 1] = line end
      os.remove(inf)
      os.remove(outf)
      assert.equal(#inputs, #lines)
      for i, s in ipairs(inputs) do
        local k = s:reverse():sub(1, 100)
        local b64 = ngx.encode_base64(s)
        local want = table.concat({
          ngx.md5(s), hex(ngx.sha1_bin(s)), hex(ngx.hmac_sha1(k, s)),
          tostring(ngx.crc32_long(s)), b64 == "" and "-" or b64 }, " ")
        assert.equal(lines[i], want, "input " .. i)
        assert.equal(s, ngx.decode_base64(b64))
      end
    end)
  end)
end)
