-- corosched.luasocket: LuaSocket's `socket` module on corosched's
-- cosockets. Code written for LuaSocket (blocking calls, `settimeout` in
-- seconds, `receive(pattern, prefix)`, `socket.try`/`protect`...) runs in
-- light threads, and a call that would block parks its thread instead.
--
--   local socket = require "corosched.luasocket"
--   socket.install()    -- require "socket" (and socket.http, redis-lua...)
--                       -- now get this module
--
-- The values, classes ("tcp{client}"...) and error strings are LuaSocket
-- 3's (recorded against Debian's lua-socket 3.1.0 by spec/46); what it
-- cannot do is listed in the README and raises when called.
local cs = require "corosched"

local error, type, tostring, tonumber = error, type, tostring, tonumber
local setmetatable, getmetatable = setmetatable, getmetatable
local select, pcall, pairs = select, pcall, pairs
local floor = math.floor
local sfind, sformat, ssub = string.find, string.format, string.sub

local M = {
  _VERSION = "LuaSocket 3.0.0",
  _SETSIZE = 1024,
  _SOCKETINVALID = -1,
  _DATAGRAMSIZE = 8192,
  BLOCKSIZE = 2048,
}

-- corosched's longest socket timeout (2^31 - 1 ms, 24.8 days) stands for
-- LuaSocket's "no timeout"
local FOREVER = 2147483647

local function argerror(n, fname, msg)
  error(sformat("bad argument #%d to '%s' (%s)", n, fname, msg), 3)
end

local function checkclass(self, mt, kinds, fname)
  if getmetatable(self) ~= mt or not kinds[self.kind] then
    -- luaL_argerror's words for a method's object
    error(sformat("calling '%s' on bad self (%s expected)", fname,
                  kinds.name), 3)
  end
  return self
end

-- a string (or number) argument, as luaL_checklstring / luaL_optlstring
local function checkstr(v, n, fname, opt)
  local t = type(v)
  if t == "string" then return v end
  if t == "number" then return tostring(v) end
  if opt and v == nil then return nil end
  argerror(n, fname, "string expected, got " .. (v == nil and "no value"
                                                   or t))
end

local function checknum(v, n, fname, default)
  if v == nil and default ~= nil then return default end
  local x = tonumber(v)
  if x == nil then
    argerror(n, fname, "number expected, got " .. (v == nil and "no value"
                                                     or type(v)))
  end
  return x
end

local function family(ip)
  return ip and sfind(ip, ":", 1, true) and "inet6" or "inet"
end

-- corosched's errors as LuaSocket words them: its own words for some
-- errnos (socket_strerror), strerror's text (capitalised) for the others
local LSWORDS = {
  ["broken pipe"] = "closed", ["connection reset by peer"] = "closed",
  ["software caused connection abort"] = "closed",
  ["connection timed out"] = "timeout",
  ["transport endpoint is already connected"] = "already connected",
}
-- (corosched's texts of errnos, lower case: cs_net_errstr's, but those
-- LuaSocket has words of its own for)
local STRERROR = {}
for w in ([[no route to host|network is unreachable|network is down|
host is down|machine is not on the network|cannot assign requested address|
address family not supported by protocol|protocol family not supported|
protocol not supported|protocol wrong type for socket|
socket type not supported|protocol not available|protocol error|
operation not supported|transport endpoint is not connected|
cannot send after transport endpoint shutdown|destination address required|
message too long|socket operation on non-socket|bad file descriptor|
invalid argument|bad address|resource temporarily unavailable|
operation now in progress|operation already in progress|
interrupted system call|no buffer space available|cannot allocate memory|
too many open files|too many open files in system|operation not permitted|
no such file or directory|not a directory|file name too long|
too many levels of symbolic links|read-only file system|input/output error|
function not implemented]]):gmatch("[^|\n]+") do
  STRERROR[w] = true
end

local function lserr(err)
  if err == nil then return nil end
  local w = LSWORDS[err]
  if w then return w end
  if STRERROR[err] then return (err:gsub("^%l", string.upper)) end
  if sfind(err, "could not be resolved", 1, true) then
    return "host or service not provided, or not known"
  end
  return err
end

-- errno texts LuaSocket answers with
local EBADF = "Bad file descriptor"
local ENOTCONN = "Transport endpoint is not connected"

------------------------------------------------------------------------
-- timeouts: LuaSocket's seconds ("block" per call and "total"), turned
-- into the cosocket's ms before each operation. Negative: none. A zero
-- timeout (poll) waits at most 1 ms, corosched's shortest.

local function settimeout(self, fname, t, mode)
  t = checknum(t, 1, fname, -1)
  mode = checkstr(mode, 2, fname, true) or "b"
  local m = ssub(mode, 1, 1)
  if m == "b" then self.block = t
  elseif m == "r" or m == "t" then self.total = t
  else argerror(2, fname, "invalid timeout mode") end
  return 1.0
end

local function timeout_ms(self)
  local b, t = self.block, self.total
  local s
  if b >= 0 and t >= 0 then s = b < t and b or t
  elseif b >= 0 then s = b
  elseif t >= 0 then s = t
  else return FOREVER end
  local ms = floor(s * 1000 + 0.5)
  if ms < 1 then return 1 end
  if ms > FOREVER then return FOREVER end
  return ms
end

local function arm(self)
  self.s:settimeout(timeout_ms(self))
end

-- the methods TCP and UDP objects share, for any class of the kind
local function common(methods, mt, any)
  function methods.settimeout(self, t, mode)
    checkclass(self, mt, any, "settimeout")
    return settimeout(self, "settimeout", t, mode)
  end

  function methods.gettimeout(self)
    checkclass(self, mt, any, "gettimeout")
    return self.block + 0.0, self.total + 0.0
  end

  function methods.close(self)
    checkclass(self, mt, any, "close")
    if not self.closed then
      self.closed = true
      self.s:close()
    end
    return 1.0
  end

  function methods.getfamily(self)
    checkclass(self, mt, any, "getfamily")
    return self.fam == "inet6" and "inet6" or "inet4"
  end
end

-- "*" is every address of the object's family
local function any_addr(self, address)
  if address ~= "*" then return address end
  return self.fam == "inet6" and "::" or "0.0.0.0"
end

-- LuaSocket's option names -> the cosocket's; true: LuaSocket has it, the
-- cosocket not (nil, err); absent: raises, as LuaSocket's unknown names.
-- Its getoption knows other names than its setoption.
local TCP_SET = {
  ["keepalive"] = "keepalive", ["tcp-nodelay"] = "tcp-nodelay",
  ["reuseaddr"] = "reuseaddr", ["send-buffer-size"] = "sndbuf",
  ["recv-buffer-size"] = "rcvbuf",
  ["maxline"] = "maxline", -- corosched's own
  ["reuseport"] = true, -- for a server: kept for bind
  ["linger"] = true, ["tcp-keepidle"] = true, ["tcp-keepcnt"] = true,
  ["tcp-keepintvl"] = true, ["ipv6-v6only"] = true,
  ["tcp-defer-accept"] = true, ["tcp-fastopen"] = true,
  ["tcp-fastopen-connect"] = true,
}
local TCP_GET = {
  ["keepalive"] = "keepalive", ["tcp-nodelay"] = "tcp-nodelay",
  ["reuseaddr"] = "reuseaddr", ["send-buffer-size"] = "sndbuf",
  ["recv-buffer-size"] = "rcvbuf", ["maxline"] = "maxline",
  ["reuseport"] = true, ["linger"] = true, ["tcp-keepidle"] = true,
  ["tcp-keepcnt"] = true, ["tcp-keepintvl"] = true, ["error"] = true,
}
-- UDP: the cosocket takes no options
local UDP_SET, UDP_GET = {}, {}
for name in ([[dontroute broadcast reuseaddr reuseport ip-multicast-if
ip-multicast-loop ipv6-unicast-hops ipv6-multicast-hops ipv6-multicast-loop
ipv6-v6only recv-buffer-size send-buffer-size]]):gmatch("%S+") do
  UDP_SET[name], UDP_GET[name] = true, true
end
for name in ([[ip-multicast-ttl ip-add-membership ip-drop-membership
ipv6-add-membership ipv6-drop-membership]]):gmatch("%S+") do
  UDP_SET[name] = true
end
UDP_GET["error"] = true
-- the values LuaSocket checks: booleans (luaL_checktype); a number (int)
-- lua_tonumber(), what is none 0
local BOOLEAN, INTEGER = {}, {}
for name in ([[keepalive tcp-nodelay reuseaddr reuseport ipv6-v6only
dontroute broadcast ip-multicast-loop ipv6-multicast-loop]]):gmatch("%S+") do
  BOOLEAN[name] = true
end
for name in ([[send-buffer-size recv-buffer-size tcp-keepidle tcp-keepcnt
tcp-keepintvl tcp-defer-accept tcp-fastopen tcp-fastopen-connect
ip-multicast-ttl ipv6-unicast-hops ipv6-multicast-hops]]):gmatch("%S+") do
  INTEGER[name] = true
end

-- (the counts and ints are C's there: truncated)
local function trunc(x) return x < 0 and -floor(-x) or floor(x) end

local function option(names, name, fname)
  local o = names[name]
  if not o then argerror(1, fname, "unsupported option `" .. name .. "'") end
  return o
end

local function option_value(name, value)
  if BOOLEAN[name] and type(value) ~= "boolean" then
    argerror(2, "setoption", "boolean expected, got "
             .. (value == nil and "no value" or type(value)))
  end
  if INTEGER[name] then return trunc(tonumber(value) or 0) end
  return value
end

local function not_available(name)
  return nil, "option '" .. name .. "' is not available in corosched"
end

------------------------------------------------------------------------
-- TCP: tcp{master} (made by socket.tcp()), tcp{client} (connected or
-- accepted, or whose connect failed, as LuaSocket's), tcp{server} (bound
-- and listening)

local tcp = {}
local tcp_mt = { __index = tcp }

tcp_mt.__tostring = function(self)
  return sformat("%s{%s}: %p", self.path and "unix" or "tcp", self.kind,
                 self)
end

local ANY = { name = "tcp{any}", master = true, client = true, server = true }
local CLIENT = { name = "tcp{client}", client = true }
local MASTER = { name = "tcp{master}", master = true }
local SERVER = { name = "tcp{server}", server = true }
local MASTER_OR_CLIENT = { name = "tcp{any}", master = true, client = true }
common(tcp, tcp_mt, ANY)

local function new_tcp(kind, s, fam)
  return setmetatable({
    kind = kind, s = s, fam = fam or "inet", block = -1, total = -1,
    rx = 0, tx = 0, born = M.gettime(),
  }, tcp_mt)
end

-- tcp() makes no descriptor until connect or bind (LuaSocket 3's family
-- "unspec"): options cannot be set on it yet
function M.tcp()
  local s = new_tcp("master", cs.socket.tcp())
  s.unspec = true
  return s
end

function M.tcp4()
  return new_tcp("master", cs.socket.tcp(), "inet")
end

function M.tcp6()
  return new_tcp("master", cs.socket.tcp(), "inet6")
end

-- a connection's addresses, kept: a read error closes the cosocket (its
-- rule) while LuaSocket's descriptor stays and still answers
local function keep_names(self)
  self.name = { self.s:getsockname() }
  self.peer = { self.s:getpeername() }
end

-- a client whose descriptor LuaSocket has and the cosocket not: its
-- connect failed, or a read error closed it
local function gone(self)
  return self.s:getfd() < 0
end

-- LuaSocket has no descriptor: closed, or tcp()'s before connect or bind
local function nofd(self)
  return self.closed or (self.unspec and self.kind == "master")
end

-- connect, or its other name setpeername (for the messages)
local function connector(fname)
  return function(self, address, port)
  checkclass(self, tcp_mt, MASTER_OR_CLIENT, fname)
  address = checkstr(address, 1, fname)
  local p
  if not self.path then
    p = tonumber(checkstr(port, 2, fname))
  end
  if self.closed then return nil, "closed" end
  if self.kind == "client" and not self.failed then
    -- Linux: the first connect() after a non-blocking one that went
    -- through completes it (0); then, after a shutdown (which completes
    -- it too) and on an accepted socket, EISCONN
    if self.accepted or self.again then return nil, "already connected" end
    self.again = true
    return 1.0
  end
  if self.path then -- socket.unix
    address = "unix:" .. address
  elseif p == nil then
    return nil, "service not supported for socket type"
  end
  if self.bound then -- bind() then connect(): a client from that address
    local host, lport = self.s:getsockname()
    self.s:close()
    self.s, self.bound = cs.socket.tcp(), nil
    self.s:bind(host:find(":", 1, true) and ("[" .. host .. "]:" .. lport)
                or (host .. ":" .. lport))
  end
  arm(self)
  local ok, err
  if p then ok, err = self.s:connect(address, p)
  else ok, err = self.s:connect(address) end
  -- a client even when it failed, as LuaSocket's (it sets the class
  -- first); a later connect tries again
  self.kind = "client"
  if not ok then
    self.failed = true
    return nil, lserr(err)
  end
  -- (a shutdown of the failed one's is no more)
  self.failed, self.again, self.rdown, self.wdown, self.reset = nil
  keep_names(self)
  for name, value in pairs(self.opts or {}) do -- set before connect
    local o = TCP_SET[name]
    if o ~= true then self.s:setoption(o, value) end
  end
  self.opts = nil
  return 1.0
  end
end
tcp.connect, tcp.setpeername = connector("connect"), connector("setpeername")

-- bind, or its other name setsockname
local function binder(fname)
  return function(self, address, port)
  checkclass(self, tcp_mt, MASTER, fname)
  address = any_addr(self, checkstr(address, 1, fname))
  if not self.path then port = checknum(port, 2, fname) end
  if self.closed then return nil, EBADF end
  if self.bound then return nil, "Invalid argument" end -- (EINVAL)
  local l, err
  if self.path then
    l, err = cs.socket.listen("unix:" .. address)
  else
    local opts = self.opts or {}
    l, err = cs.socket.listen(address, port,
                              { reuseaddr = opts.reuseaddr and true or nil,
                                reuseport = opts.reuseport and true or nil })
  end
  if not l then return nil, lserr(err) end
  -- the cosocket made by tcp() is left unused: the listener replaces it
  self.s:close()
  self.s, self.bound, self.unspec = l, true, nil
  return 1.0
  end
end
tcp.bind, tcp.setsockname = binder("bind"), binder("setsockname")

function tcp.listen(self, backlog)
  checkclass(self, tcp_mt, MASTER, "listen")
  checknum(backlog, 1, "listen", 32)
  if nofd(self) or (self.path and not self.bound) then return nil, EBADF end
  if not self.bound then
    -- Linux binds a socket that listens unbound: any address, a free port
    local ok, err = tcp.bind(self, "*", 0)
    if not ok then return nil, err end
  end
  self.kind = "server"
  return 1.0
end

function tcp.accept(self)
  checkclass(self, tcp_mt, SERVER, "accept")
  if self.closed then return nil, "closed" end
  local ms = timeout_ms(self)
  self.s:settimeout(ms == FOREVER and 0 or ms) -- 0: none, for a server
  local c, err = self.s:accept()
  if not c then return nil, lserr(err) end
  local o = new_tcp("client", c, self.fam)
  o.path, o.accepted = self.path, true
  keep_names(o)
  return o
end

function tcp.send(self, data, i, j)
  checkclass(self, tcp_mt, CLIENT, "send")
  data = checkstr(data, 1, "send")
  i = checknum(i, 2, "send", 1)
  j = checknum(j, 3, "send", -1)
  local n = #data
  -- truncated toward zero first, as LuaSocket's (long) casts do
  i, j = trunc(i), trunc(j)
  if i < 0 then i = n + i + 1 end
  if j < 0 then j = n + j + 1 end
  if i < 1 then i = 1 end
  if j > n then j = n end
  if i > j then return i - 1.0, nil, nil end -- (no I/O: closed too)
  if self.closed then return nil, "closed", i - 1.0 end
  arm(self)
  local sent, err = self.s:send(i == 1 and j == n and data
                                or ssub(data, i, j))
  if not sent then return nil, lserr(err), i - 1.0 end
  self.tx = self.tx + sent
  return j + 0.0, nil, nil -- LuaSocket's three values
end

-- receive(pattern, prefix): "*l" (the default), "*a" or a byte count
function tcp.receive(self, pattern, prefix)
  checkclass(self, tcp_mt, CLIENT, "receive")
  local want
  if pattern == nil then
    want = "*l"
  elseif tonumber(pattern) then
    want = tonumber(pattern)
    if want < 0 then argerror(1, "receive", "invalid receive pattern") end
    want = floor(want)
  elseif type(pattern) == "string" then
    -- (LuaSocket looks at the first two characters only: "*line")
    want = pattern:sub(1, 2)
    if want ~= "*l" and want ~= "*a" then
      argerror(1, "receive", "invalid receive pattern")
    end
  else
    checkstr(pattern, 1, "receive")
  end
  prefix = checkstr(prefix, 2, "receive", true) or ""
  if type(want) == "number" then
    want = want - #prefix
    if want <= 0 then return prefix, nil, nil end -- (no I/O: closed too)
  end
  if self.closed then return nil, "closed", prefix end
  local data, err, partial
  if self.rdown then
    -- after shutdown("receive"), what the kernel holds is still read,
    -- and then the end comes at once (Linux's SHUT_RD)
    self.s:settimeout(1)
    data, err, partial = self.s:receive(want)
    if err == "timeout" then
      if want == "*a" then data, err = partial, nil else err = "closed" end
    end
  else
    arm(self)
    data, err, partial = self.s:receive(want)
  end
  if data then
    -- getstats counts bytes taken from the stream: a line's LF too (the
    -- CRs "*l" drops are not seen here)
    self.rx = self.rx + #data + (want == "*l" and 1 or 0)
    if want == "*a" and data == "" then return nil, "closed", prefix end
    return prefix .. data, nil, nil -- LuaSocket's three values
  end
  partial = partial or ""
  self.rx = self.rx + #partial
  if err == "connection reset by peer" then self.reset = true end
  return nil, lserr(err), prefix .. partial
end

function tcp.shutdown(self, how)
  checkclass(self, tcp_mt, CLIENT, "shutdown")
  how = checkstr(how, 1, "shutdown", true) or "both"
  if how ~= "both" and how ~= "send" and how ~= "receive" then
    argerror(1, "shutdown", "invalid option '" .. how .. "'")
  end
  if self.closed then return 1.0 end
  self.again = true -- (see connect)
  if how ~= "send" then self.rdown = true end
  if how ~= "receive" and not self.wdown then
    self.wdown = true
    self.s:shutdown("send")
  end
  return 1.0
end

-- an address as LuaSocket gives it: getsockname's port a string,
-- getpeername's a number, then the family; a unix socket's path alone
local function lsaddr(self, ip, port, which)
  if not ip then return nil, lserr(port) end
  if self.path then return ip end
  if which == "getsockname" then port = tostring(port) end
  return ip, port, family(ip)
end

function tcp.getsockname(self)
  checkclass(self, tcp_mt, ANY, "getsockname")
  if nofd(self) then return nil, EBADF end
  if self.kind == "master" and not self.bound and not self.path then
    return any_addr(self, "*"), "0", self.fam -- (tcp4(): not bound yet)
  end
  if self.kind == "client" and gone(self) then
    if not self.name then return nil, EBADF end -- (a failed connect's)
    return lsaddr(self, self.name[1], self.name[2], "getsockname")
  end
  local ip, port = self.s:getsockname()
  return lsaddr(self, ip, port, "getsockname")
end

function tcp.getpeername(self)
  checkclass(self, tcp_mt, ANY, "getpeername")
  if nofd(self) then return nil, EBADF end
  if self.kind ~= "client" or self.failed then return nil, ENOTCONN end
  if gone(self) then
    -- the peer closed or reset it; LuaSocket's is still connected unless
    -- it was reset or its own FIN went out too
    if self.wdown or self.reset or not self.peer then
      return nil, ENOTCONN
    end
    return lsaddr(self, self.peer[1], self.peer[2], "getpeername")
  end
  local ip, port = self.s:getpeername()
  return lsaddr(self, ip, port, "getpeername")
end

function tcp.setoption(self, name, value)
  checkclass(self, tcp_mt, ANY, "setoption")
  name = checkstr(name, 1, "setoption")
  local o = option(TCP_SET, name, "setoption")
  value = option_value(name, value)
  if nofd(self) then return nil, "setsockopt failed" end
  if self.kind ~= "client" then -- before connect or bind: kept for them
    if o == true and name ~= "reuseport" then return not_available(name) end
    self.opts = self.opts or {}
    self.opts[name] = value
    return 1.0
  end
  if o == true then return not_available(name) end
  if gone(self) then return nil, "setsockopt failed" end
  if not self.s:setoption(o, value) then return nil, "setsockopt failed" end
  return 1.0
end

function tcp.getoption(self, name)
  checkclass(self, tcp_mt, ANY, "getoption")
  name = checkstr(name, 1, "getoption")
  local o = option(TCP_GET, name, "getoption")
  if nofd(self) then return nil, "getsockopt failed" end
  if self.kind ~= "client" then
    local v = self.opts and self.opts[name]
    -- (a tcp4/tcp6 socket exists there: its booleans start off)
    if BOOLEAN[name] then return v or false end
    if o == "maxline" and not self.bound then
      return v or self.s:getoption(o)
    end
    if o == true then return not_available(name) end
    -- the kernel's sizes (doubled, bounded) are not known before connect
    return nil, "option '" .. name .. "' is not available before "
                .. "connect in corosched"
  end
  if o == true then return not_available(name) end
  if gone(self) then return nil, "getsockopt failed" end
  local v = self.s:getoption(o)
  if v == nil then return nil, "getsockopt failed" end
  if BOOLEAN[name] then return v ~= 0 end -- LuaSocket's booleans
  if o == "maxline" then return v end
  return v + 0.0 -- LuaSocket's numbers are floats
end

function tcp.getstats(self)
  checkclass(self, tcp_mt, CLIENT, "getstats")
  return self.rx + 0.0, self.tx + 0.0, M.gettime() - self.born
end

function tcp.setstats(self, rx, tx, age)
  checkclass(self, tcp_mt, CLIENT, "setstats")
  self.rx = trunc(checknum(rx, 1, "setstats", self.rx))
  self.tx = trunc(checknum(tx, 2, "setstats", self.tx))
  self.born = M.gettime() - checknum(age, 3, "setstats", 0)
  return 1.0
end

function tcp.getfd(self)
  checkclass(self, tcp_mt, ANY, "getfd")
  -- (a number: LuaSocket pushes a lua_Number)
  if self.closed or self.kind == "server" or self.bound then return -1.0 end
  return self.s:getfd() + 0.0
end

-- no unread bytes are visible from outside a cosocket: socket.select,
-- the only reader of this, is not provided
function tcp.dirty(self)
  checkclass(self, tcp_mt, ANY, "dirty")
  return false
end

function tcp.setfd()
  error("corosched.luasocket: setfd is not available", 2)
end

tcp.class = "tcp{any}" -- as LuaSocket's method table has it

------------------------------------------------------------------------
-- UDP: udp{unconnected} and udp{connected}, on cs.socket.udp(). Only a
-- connected socket sends, as the cosocket does; an unconnected one that
-- was bound (setsockname) receives.

local udp = {}
local udp_mt = { __index = udp }

udp_mt.__tostring = function(self)
  return sformat("udp{%s}: %p", self.kind, self)
end

local UANY = { name = "udp{any}", unconnected = true, connected = true }
local UCONN = { name = "udp{connected}", connected = true }
local UUNCONN = { name = "udp{unconnected}", unconnected = true }
common(udp, udp_mt, UANY)

-- fresh: neither bound, connected nor sent from yet (the cosocket has no
-- descriptor); unspec: udp()'s, which LuaSocket 3.1 makes no descriptor
-- for until then either
local function new_udp(fam)
  return setmetatable({ kind = "unconnected", s = cs.socket.udp(),
                        fam = fam or "inet", unspec = not fam, fresh = true,
                        block = -1, total = -1 },
                      udp_mt)
end

function M.udp() return new_udp() end
function M.udp4() return new_udp("inet") end
function M.udp6() return new_udp("inet6") end

local function udp_nofd(self)
  return self.closed or (self.fresh and self.unspec)
end

function udp.setsockname(self, address, port)
  checkclass(self, udp_mt, UUNCONN, "setsockname")
  address = any_addr(self, checkstr(address, 1, "setsockname"))
  port = checknum(port, 2, "setsockname")
  local ok, err = self.s:bind(address, port)
  if not ok then return nil, lserr(err) end
  self.fresh = nil
  return 1.0
end

function udp.setpeername(self, address, port)
  checkclass(self, udp_mt, UANY, "setpeername")
  address = checkstr(address, 1, "setpeername")
  if address == "*" then
    error("corosched.luasocket: setpeername(\"*\") is not available (a "
          .. "cosocket stays connected; make a new udp object)", 2)
  end
  port = checknum(port, 2, "setpeername")
  local ok, err = self.s:setpeername(address, port)
  if not ok then return nil, lserr(err) end
  self.kind, self.fresh = "connected", nil
  return 1.0
end

function udp.send(self, data)
  checkclass(self, udp_mt, UCONN, "send")
  data = checkstr(data, 1, "send")
  if self.closed then return nil, "closed" end
  local ok, err = self.s:send(data)
  if not ok then return nil, lserr(err) end
  return #data + 0.0
end

-- receive's and receivefrom's size argument: a negative one is the whole
-- datagram, as OpenResty's unsigned cast makes it (LuaSocket answers "out
-- of memory")
local function dgram_size(size, fname)
  size = floor(checknum(size, 1, fname, M._DATAGRAMSIZE))
  return size >= 0 and size or M._DATAGRAMSIZE
end

-- udp4()/udp6() not bound yet: LuaSocket's socket has no port, nothing
-- comes (the cosocket has no descriptor yet)
local function unbound_wait(self)
  cs.sleep(timeout_ms(self) / 1000)
  return nil, "timeout"
end

function udp.receive(self, size)
  checkclass(self, udp_mt, UANY, "receive")
  size = dgram_size(size, "receive")
  if self.closed then return nil, "closed" end
  -- LuaSocket's recv on no descriptor answers "closed" at once, which its
  -- UDP receive returns as an empty datagram
  if self.fresh and self.unspec then return "" end
  if self.fresh then return unbound_wait(self) end
  arm(self)
  local data, err = self.s:receive(size)
  if not data then return nil, lserr(err) end
  return data
end

-- sendto takes address literals only, as LuaSocket 3.1's (AI_NUMERICHOST)
local function udp_addr(host)
  if sfind(host, "^%d+%.%d+%.%d+%.%d+$") or sfind(host, ":", 1, true) then
    return host
  end
  return nil, "Name or service not known"
end

function udp.sendto(self, data, ip, port)
  checkclass(self, udp_mt, UUNCONN, "sendto")
  data = checkstr(data, 1, "sendto")
  ip = checkstr(ip, 2, "sendto")
  port = checknum(port, 3, "sendto")
  if self.closed then return nil, "closed" end
  local addr, err = udp_addr(ip)
  if not addr then return nil, err end
  local ok
  ok, err = self.s:sendto(data, addr, port)
  self.fresh = nil -- (its socket is made, whether it went out or not)
  if not ok then return nil, lserr(err) end
  return #data + 0.0
end

function udp.receivefrom(self, size)
  checkclass(self, udp_mt, UUNCONN, "receivefrom")
  size = dgram_size(size, "receivefrom")
  if self.closed then return nil, "closed" end
  if self.fresh and not self.unspec then return unbound_wait(self) end
  arm(self)
  local data, ip, port = self.s:receivefrom(size)
  if not data then return nil, lserr(ip) end
  return data, ip, port
end

function udp.getsockname(self)
  checkclass(self, udp_mt, UANY, "getsockname")
  if udp_nofd(self) then return nil, EBADF end
  if self.fresh then -- (udp4(): not bound yet)
    return any_addr(self, "*"), "0", self.fam
  end
  local ip, port = self.s:getsockname()
  if not ip then return nil, lserr(port) end
  return ip, tostring(port), family(ip)
end

function udp.getpeername(self)
  checkclass(self, udp_mt, UCONN, "getpeername")
  if self.closed then return nil, EBADF end
  local ip, port = self.s:getpeername()
  if not ip then return nil, lserr(port) end
  return ip, port, family(ip)
end

-- LuaSocket's UDP options: none on the cosocket (nil, err, as TCP's it
-- lacks); where LuaSocket has no descriptor, its own failure
function udp.setoption(self, name, value)
  checkclass(self, udp_mt, UANY, "setoption")
  name = checkstr(name, 1, "setoption")
  option(UDP_SET, name, "setoption")
  option_value(name, value)
  if udp_nofd(self) then return nil, "setsockopt failed" end
  return not_available(name)
end

function udp.getoption(self, name)
  checkclass(self, udp_mt, UANY, "getoption")
  name = checkstr(name, 1, "getoption")
  option(UDP_GET, name, "getoption")
  if udp_nofd(self) then return nil, "getsockopt failed" end
  return not_available(name)
end

-- (the UDP cosocket does not show its descriptor)
function udp.getfd(self)
  checkclass(self, udp_mt, UANY, "getfd")
  return -1.0
end

function udp.dirty(self)
  checkclass(self, udp_mt, UANY, "dirty")
  return false
end

udp.class = "udp{any}"

------------------------------------------------------------------------
-- module functions

function M.connect(address, port, laddress, lport, fam)
  local s = new_tcp("master", cs.socket.tcp(), fam)
  if laddress ~= nil and laddress ~= "*" then
    if lport ~= nil and tonumber(lport) ~= 0 then
      error("corosched.luasocket: connect with a local port is not "
            .. "available", 2)
    end
    local ok, err = s.s:bind(laddress)
    if not ok then return nil, err end
  end
  local ok, err = s:connect(address, port)
  if not ok then
    s:close()
    return nil, err
  end
  return s
end

function M.connect4(address, port, laddress, lport)
  return M.connect(address, port, laddress, lport, "inet")
end

function M.connect6(address, port, laddress, lport)
  return M.connect(address, port, laddress, lport, "inet6")
end

function M.bind(host, port, backlog)
  local s = sfind(checkstr(host, 1, "bind"), ":", 1, true) and M.tcp6()
            or M.tcp4()
  s:setoption("reuseaddr", true)
  local ok, err = s:bind(host, port)
  if not ok then
    s:close()
    return nil, err
  end
  s:listen(backlog)
  return s
end

function M.gettime()
  cs.update_time()
  return cs.now()
end

function M.sleep(t)
  t = checknum(t, 1, "sleep")
  cs.sleep(t > 0 and t or 0)
end

function M.select()
  error("corosched.luasocket: socket.select is not available (run each "
        .. "socket in its own light thread)", 2)
end

function M.skip(d, ...)
  return select(d + 1, ...)
end

-- try/protect: an error raised by try is a table LuaSocket's protect
-- turns back into nil, err; any other error goes on
local exc_mt = {
  __tostring = function(e) return tostring(e[1]) end,
}

function M.newtry(finalizer)
  return function(...)
    local ok = ...
    if ok then return ... end
    if finalizer then pcall(finalizer) end
    error(setmetatable({ (select(2, ...)) }, exc_mt), 0)
  end
end

M.try = M.newtry()

local function unwrap(ok, ...)
  if ok then return ... end
  local e = ...
  if getmetatable(e) == exc_mt then return nil, e[1] end
  error(e, 0)
end

function M.protect(f)
  return function(...)
    return unwrap(pcall(f, ...))
  end
end

function M.choose(t)
  return function(name, opt1, opt2)
    if type(name) ~= "string" then
      name, opt1, opt2 = "default", name, opt1
    end
    local f = t[name or "nil"]
    if not f then error("unknown key (" .. tostring(name) .. ")", 3) end
    return f(opt1, opt2)
  end
end

-- sinks and sources over a socket, LuaSocket's set (ltn12-style)
local sinkt, sourcet = {}, {}
M.sinkt, M.sourcet = sinkt, sourcet

local function wrap(sock, call)
  return setmetatable({
    getfd = function() return sock:getfd() end,
    dirty = function() return sock:dirty() end,
  }, { __call = call })
end

sinkt["close-when-done"] = function(sock)
  return wrap(sock, function(_, chunk)
    if not chunk then
      sock:close()
      return 1
    end
    return sock:send(chunk)
  end)
end

sinkt["keep-open"] = function(sock)
  return wrap(sock, function(_, chunk)
    if chunk then return sock:send(chunk) end
    return 1
  end)
end

sinkt["default"] = sinkt["keep-open"]
M.sink = M.choose(sinkt)

sourcet["by-length"] = function(sock, length)
  return wrap(sock, function()
    if length <= 0 then return nil end
    local chunk, err = sock:receive(length < M.BLOCKSIZE and length
                                    or M.BLOCKSIZE)
    if err then return nil, err end
    length = length - #chunk
    return chunk
  end)
end

sourcet["until-closed"] = function(sock)
  local done
  return wrap(sock, function()
    if done then return nil end
    local chunk, err, partial = sock:receive(M.BLOCKSIZE)
    if not err then return chunk end
    if err == "closed" then
      sock:close()
      done = true
      return partial
    end
    return nil, err
  end)
end

sourcet["default"] = sourcet["until-closed"]
M.source = M.choose(sourcet)

------------------------------------------------------------------------
-- socket.dns

local dns = {}
M.dns = dns

local function resolve(name)
  name = checkstr(name, 1, "toip")
  local list, err = cs.resolve(name)
  if not list then return nil, err end
  return list
end

function dns.toip(name)
  local list = resolve(name)
  if not list or #list == 0 then return nil, "host not found" end
  local ips = {}
  for _, a in ipairs(list) do
    if not sfind(a, ":", 1, true) then ips[#ips + 1] = a end
  end
  if #ips == 0 then return nil, "host not found" end
  return ips[1], { name = name, alias = {}, ip = ips }
end

function dns.getaddrinfo(name)
  local list = resolve(name)
  if not list or #list == 0 then
    return nil, "host or service not provided, or not known"
  end
  local r = {}
  for i, a in ipairs(list) do
    r[i] = { family = family(a), addr = a }
  end
  return r
end

function dns.gethostname()
  local f = io.open("/proc/sys/kernel/hostname")
  local name = f and f:read("l")
  if f then f:close() end
  if not name then return nil, "host not found" end
  return name
end

local function dns_unavailable(name)
  return function()
    error("corosched.luasocket: socket.dns." .. name .. " is not "
          .. "available (corosched resolves names to addresses only)", 2)
  end
end
dns.tohostname = dns_unavailable("tohostname")
dns.getnameinfo = dns_unavailable("getnameinfo")

------------------------------------------------------------------------
-- socket.unix: stream sockets on a path (connect(path), bind(path))

local unix = {}

function unix.stream()
  local s = new_tcp("master", cs.socket.tcp())
  s.path = true
  return s
end

setmetatable(unix, { __call = function() return unix.stream() end })
M.unix = unix

------------------------------------------------------------------------

-- require "socket", "socket.core" and "socket.unix" return this module
-- (and its unix table) from now on, so LuaSocket's own socket.http,
-- socket.smtp, socket.ftp and libraries such as redis-lua use it. Call it
-- before anything requires "socket".
function M.install()
  package.loaded["socket"] = M
  package.loaded["socket.core"] = M
  package.loaded["socket.unix"] = unix
  return M
end

M.__unload = function() end

return M
