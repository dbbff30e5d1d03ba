-- corosched.luasocket against Debian's LuaSocket 3.1, on random programs.
--
-- A seeded generator (helper.prng; CS_LUASOCKET_SEED picks another seed)
-- draws programs of LuaSocket calls: TCP scenes (a client made by tcp(),
-- tcp4() or socket.connect, options and timeouts set before connect,
-- refused connects and calls on the client they leave, then random
-- calls: settimeout with values and modes, gettimeout, send(data, i, j)
-- with random and out-of-range i/j,
-- receive("*l" | "*a" | n | "*line"..., prefix) ending with data, with
-- "closed" (the peer closed mid-read) or with a timeout and its partial
-- result, shutdown("send" | "receive" | "both"), getpeername and
-- getsockname shapes, setoption/getoption, getstats/setstats, getfd,
-- getfamily, close and calls after it, and misuse: wrong argument types
-- and methods on the wrong class, compared by whether they raise and their
-- message without position) and UDP scenes (send, sendto, receive(size),
-- receivefrom, timeouts, options, close). Each program runs twice, at the
-- same time: with Debian's LuaSocket in a child lua5.4 (env -u LUA_PATH -u
-- LUA_CPATH, as spec/46) and with corosched.luasocket in a light thread,
-- both through spec/support/luasocket_model_probe.lua and against the
-- scripted peer spec/support/luasocket_model_peer.lua in this process (the
-- first line of each connection tells it what to send, with which pauses,
-- and whether to close, hold or echo). Every printed line must be the
-- same; the first divergence of each scene is reported with the seed, the
-- step and the lines before it.
--
-- Determinism by design: a model of each connection's stream says how each
-- receive ends. One that gets its data (or "closed") waits with no timeout
-- or one of 0.5 s at least, and the peer's pauses are 10 ms at most; one
-- that must time out waits 80 to 150 ms, long after the peer has sent
-- everything it will send, or polls once a sleep of 80 ms has let
-- everything arrive. Sends never go to a peer that may have closed.
--
-- Left out, as the README's luasocket section documents them: receive(0)
-- without a prefix, getstats' received count (printed only right after
-- setstats), dirty(), linger and the other options corosched lacks,
-- sends after a receive said "closed", a UDP receive with a negative size;
-- where LuaSocket has a descriptor and the cosocket none: getfd on a
-- tcp4() or bound master, after a failed connect and after a receive
-- said "closed", options there, getsockname after a failed connect, the
-- buffer sizes' getoption before connect (the kernel's values), UDP
-- options on an object with a descriptor (only their errors and those of
-- objects with none are compared); connect on a closed or failed object
-- (LuaSocket's makes a new socket); receives once both halves are shut
-- down while data may still come (Linux resets the connection, corosched
-- reads on), and getsockname, getpeername and options then.
-- Also left out: receives after close() while bytes are left that
-- LuaSocket may have buffered (its buffer outlives close: what it returns
-- depends on timing), UDP I/O on a closed object (LuaSocket's sendto
-- answers as if it had sent), connect on a master (a real connect: the
-- refused scenes draw it) and on a client after shutdown("send") (Linux's
-- answer depends on the TCP state), listen on a master that would become
-- a server (a tcp4() or bound one), and getpeername after shutdown("send")
-- until a sleep (whether the peer's FIN came is timing).
local helper = require "spec.helper"
local net = require "spec.support.net"
local cs = helper.cs

local HOST = "127.0.0.1"
local PROBE = "spec/support/luasocket_model_probe.lua"
local PEER = "spec/support/luasocket_model_peer.lua"
local LS_LUA = "/usr/share/lua/5.4/socket.lua"
local SEED = tonumber(os.getenv("CS_LUASOCKET_SEED")) or 48
local ALL = os.getenv("CS_LUASOCKET_ALL") == "1" -- every scene's first
-- CS_LUASOCKET_SKIP="fd,setstats": leave out the calls of these methods
-- (or step kinds), to see what a known divergence hides
local SKIP = {}
for w in (os.getenv("CS_LUASOCKET_SKIP") or ""):gmatch("[^,%s]+") do
  SKIP[w] = true
end

------------------------------------------------------------------------
-- the generator

local function pick(rand, t) return t[rand(#t)] end

local function hex(s)
  if s == "" then return "-" end
  return (s:gsub(".", function(c) return ("%02x"):format(c:byte()) end))
end

-- bytes the peer sends: lines, CRs, blanks, now and then a long run
local function peer_bytes(rand)
  if rand(6) == 1 then
    local n = rand(1000, 12000)
    local line = ("0123456789abcdef"):rep(8):sub(1, rand(10, 120)) .. "\n"
    local s = line:rep(n // #line + 1)
    return s:sub(rand(1, #line), n)
  end
  local t = {}
  for i = 1, rand(0, 30) do
    t[i] = pick(rand, { "a", "b", "c", "x", " ", "\n", "\n", "\r", "\r\n" })
  end
  return table.concat(t)
end

-- bytes the client sends (no CR: the echoing peer's "*l" drops them)
local function client_bytes(rand)
  local t = {}
  for i = 1, rand(0, 14) do t[i] = pick(rand, { "a", "b", "z", " ", "\n" }) end
  return table.concat(t)
end

local function tonum(v)
  if v == nil then return -1 end
  return tonumber(v)
end

local function gen(seed, refused, port)
  local rand = helper.prng(seed)
  local steps = {}
  local budget = { timeouts = 6, sleeps = 6 }
  local scene, n
  local c -- the model of the scene's connection

  local function add(st)
    if SKIP[st.m or st.k] then return st end
    n = n + 1
    st.label = ("s%d.%d %s"):format(scene, n, st.m or st.k)
    st.scene = scene
    steps[#steps + 1] = st
    return st
  end
  local function m(name, ...)
    return add({ k = "m", m = name, a = { ... }, n = select("#", ...) })
  end

  local function sleep()
    add({ k = "sleep", t = 0.08 })
    if c then c.settled = true end
  end

  -- timeouts such that a call ends without waiting long (complete) or
  -- times out after everything has arrived (timeout)
  local function timeouts_ok(want)
    local b, t = c.b, c.t
    if want == "complete" then
      return c.settled or ((b < 0 or b >= 0.5) and (t < 0 or t >= 0.5))
    end
    local e
    if b >= 0 then e = b end
    if t >= 0 and (not e or t < e) then e = t end
    return e ~= nil and e <= 0.15 and (c.settled or e >= 0.08)
  end
  local function fix_timeouts(want)
    if timeouts_ok(want) then return end
    if want == "complete" then
      if not (c.b < 0 or c.b >= 0.5) then
        local v = pick(rand, { false, -1, 0.6, 1.5, "0.7", 3 })
        if v == false then m("settimeout") else m("settimeout", v) end
        c.b = v and tonum(v) or -1
      end
      if not (c.t < 0 or c.t >= 0.5) then
        local v = pick(rand, { -1, 0.6, 2 })
        m("settimeout", v, pick(rand, { "t", "r", "total" }))
        c.t = v
      end
    else
      local vals = c.settled and { 0, 0.01, 0.1 } or { 0.1, 0.12, "0.09" }
      local v = pick(rand, vals)
      if rand(3) == 1 then
        m("settimeout", v, "t")
        c.t = tonum(v)
        if not (c.b < 0 or c.b >= c.t) then
          m("settimeout", -1)
          c.b = -1
        end
      else
        m("settimeout", v, pick(rand, { "b", "block" }))
        c.b = tonum(v)
        if not (c.t < 0 or c.t >= c.b) then
          m("settimeout", nil, "t")
          c.t = -1
        end
      end
    end
    assert(timeouts_ok(want))
  end

  -- what receive(pattern, prefix) does: "skip" (not drawn), "complete"
  -- (data or "closed") or "timeout"; how many stream bytes it takes
  local function predict(pattern, prefix)
    if c.lossy then return "skip" end
    -- README: differs (closed or not)
    if pattern == 0 and (prefix == nil or prefix == "") then return "skip" end
    if c.closed then
      -- LuaSocket's buffer outlives close(): only when it is empty
      if c.pos < #c.S then return "skip" end
      return "complete", 0
    end
    if c.rdown and not c.settled then return "skip" end
    local rest = c.S:sub(c.pos + 1)
    local final = c.final or c.rdown
    local kind = pattern == nil and "*l" or pattern
    if type(kind) == "string" and not tonumber(kind) then
      kind = kind:sub(1, 2)
    end
    if kind == "*l" then
      local i = rest:find("\n", 1, true)
      if i then return "complete", i end
      return final and "complete" or "timeout", #rest, final
    elseif kind == "*a" then
      if final then return "complete", #rest, true end
      return "timeout", #rest
    end
    local want = math.floor(tonumber(kind))
    local size = #(prefix and tostring(prefix) or "")
    if size > 0 and want <= size then return "complete", 0 end
    local need = want - size
    if need <= #rest then return "complete", need end
    return final and "complete" or "timeout", #rest, final
  end

  local function receive()
    local pattern = pick(rand, { false, "*l", "*l", "*a", 1, 3, 5, 10, 40,
                                 2000, "4", 2.7, "*line", "*all", 0 })
    local prefix = pick(rand, { false, false, false, "", "P", "prefix", 7,
                                "0123456789" })
    if pattern == false then pattern = nil end
    if SKIP.star and (pattern == "*line" or pattern == "*all") then
      pattern = pattern:sub(1, 2)
    end
    if prefix == false then prefix = nil end
    local outcome, took, closed = predict(pattern, prefix)
    if outcome == "skip" and c.rdown and budget.sleeps > 0 then
      budget.sleeps = budget.sleeps - 1
      sleep()
      outcome, took, closed = predict(pattern, prefix)
    end
    if outcome == "skip" then return end
    if outcome == "timeout" and not c.settled then
      if budget.timeouts == 0 then return end
      budget.timeouts = budget.timeouts - 1
    end
    if not c.closed then fix_timeouts(outcome) end
    if prefix ~= nil then m("receive", pattern, prefix)
    elseif pattern ~= nil then m("receive", pattern)
    else m("receive") end
    c.pos = c.pos + took
    if closed then c.eof = true end
    c.rx_known = false
  end

  local function send()
    local data = client_bytes(rand)
    if rand(8) == 1 then data = rand(0, 999) end
    local len = #tostring(data)
    local function ij()
      local r = rand(8)
      if r <= 3 then return nil end
      if r == 4 then return rand(-len - 3, len + 3) + 0.5 end
      return rand(-len - 3, len + 3)
    end
    local i, j = ij(), ij()
    if j ~= nil then m("send", data, i, j)
    elseif i ~= nil then m("send", data, i)
    else m("send", data) end
    if c.closed or c.wdown then return end
    local function trunc(x) return x < 0 and -math.floor(-x)
                                       or math.floor(x) end
    i, j = trunc(i or 1), trunc(j or -1)
    if i < 0 then i = len + i + 1 end
    if j < 0 then j = len + j + 1 end
    if i < 1 then i = 1 end
    if j > len then j = len end
    if i > j then return end
    local out = tostring(data):sub(i, j)
    c.sent = c.sent + #out
    if c.mode == "E" then
      local line = c.part .. out
      for l in line:gmatch("([^\n]*)\n") do
        c.S = c.S .. l .. "\n"
        c.settled = false
      end
      c.part = line:match("([^\n]*)$")
    end
  end

  local function shutdown()
    local how = pick(rand, { "send", "send", "receive", "both", false,
                             "bogus", 3 })
    if SKIP.shutrd and how ~= "send" then how = "bogus" end
    if how == false then m("shutdown") else m("shutdown", how) end
    if how == false then how = "both" end
    if c.closed or (how ~= "send" and how ~= "receive" and how ~= "both")
    then
      return
    end
    local settled = c.settled
    if how ~= "receive" and not c.wdown then
      c.wdown = true
      c.final = true
      c.settled = false
      if c.mode == "E" then
        c.S = c.S .. c.sent .. " bytes\n"
        settled = false
      end
    end
    if how ~= "send" then c.rdown = true end
    -- both halves down (FIN_WAIT and SHUT_RD): Linux resets the
    -- connection when data comes after, and it is lost (corosched reads
    -- it: README); what comes then is left out
    if c.rdown and c.wdown and not settled then c.lossy = true end
  end

  local OPTS = {
    { "tcp-nodelay", true }, { "tcp-nodelay", false },
    { "keepalive", true }, { "keepalive", false }, { "reuseaddr", true },
    { "send-buffer-size", 16384 }, { "recv-buffer-size", 8192 },
    { "send-buffer-size", 65536.0 },
  }
  local function option()
    local o = pick(rand, OPTS)
    -- (LuaSocket's descriptor stays after a failed connect and a read
    -- error, the cosocket's not; a reset one's values may differ)
    if not c.closed and (c.failed or c.eof or c.lossy) then return end
    if rand(2) == 1 then m("setoption", o[1], o[2])
    -- (the kernel's buffer sizes before connect: corosched has no socket)
    elseif c.closed or c.kind == "client" or not o[1]:find("buffer") then
      m("getoption", o[1])
    end
  end

  local MISUSE = {
    { "send", {} }, { "send" }, { "send", "x", "a" }, { "send", true },
    { "receive", {} }, { "receive", -1 }, { "receive", "*x" },
    { "receive", "l" }, { "receive", "a" }, { "receive", true },
    { "receive", 5, {} }, { "settimeout", "abc" }, { "settimeout", true },
    { "settimeout", 1, "x" }, { "settimeout", 1, 5 },
    { "shutdown", {} }, { "setoption", "bogus", 1 }, { "setoption" },
    { "getoption", "bogus" }, { "getoption" }, { "setoption", "keepalive" },
    { "setoption", "send-buffer-size", "x" },
    { "setoption", "tcp-nodelay", 1 }, { "accept" }, { "listen" },
    { "bind", HOST, 0 }, { "setsockname", HOST, 0 }, { "setstats", "x" },
    { "connect" }, { "connect", HOST }, { "connect", HOST, {} },
    { "setpeername", HOST, refused },
  }
  local function misuse()
    local t = pick(rand, MISUSE)
    local live = c.kind == "client" and not (c.closed or c.failed)
    -- a connect on a client: 1.0, then "already connected", but on a
    -- closed or failed one (LuaSocket's makes a new socket) and once the
    -- connection may have ended (its TCP state); on a master it connects
    if t[1] == "setpeername" and not (live and not c.wdown and not c.lossy)
    then
      return
    end
    -- listen on a master: only where it fails (a server from tcp4()
    -- would go on with a connect on a listening socket)
    if t[1] == "listen" and c.kind == "master"
       and (c.ctor ~= "tcp" or c.bound) then
      return
    end
    -- (a valid option: as option())
    if t[1] == "setoption" and t[3] == "x" and not c.closed
       and (c.failed or c.eof or c.lossy) then
      return
    end
    m(t[1], table.unpack(t, 2, #t + 0))
    steps[#steps].n = #t - 1
    if t[1] == "setpeername" and rand(2) == 1 then -- (then again)
      m(t[1], table.unpack(t, 2, #t + 0))
    end
    if (t[1] == "bind" or t[1] == "setsockname") and c.kind == "master" then
      c.bound = true
    end
  end

  local function settimeout()
    local v = pick(rand, { false, -1, -2.5, 0, 0.01, 0.1, 0.6, 2, "0.6" })
    local mode = pick(rand, { false, "b", "t", "r", "block", "total" })
    if v == false then v = nil end
    if mode then m("settimeout", v, mode) else m("settimeout", v) end
    if mode and mode:sub(1, 1) ~= "b" then c.t = tonum(v)
    else c.b = tonum(v) end
  end

  local function setstats()
    local a = { rand(0, 100), rand(0, 100) + 0.0, rand(0, 50) + 0.5, nil }
    local r = pick(rand, a)
    local t = pick(rand, a)
    m("setstats", r, t, rand(0, 3))
    c.rx_known = true
  end

  -- a call any object takes (before connect and after close too)
  local function anytime()
    local r = rand(12)
    if r == 1 then settimeout()
    elseif r == 2 then m("gettimeout")
    elseif r == 3 then
      -- (after its FIN went out, LuaSocket's says "not connected" once
      -- the peer's came: when that is, is timing)
      if c.closed or not (c.lossy or (c.wdown and not c.settled)) then
        add({ k = "shape", m = "getpeername" })
      end
    elseif r == 4 then
      -- (a failed connect's socket has an address in LuaSocket)
      if c.closed or not (c.failed or c.lossy) then
        add({ k = "shape", m = "getsockname" })
      end
    elseif r == 5 then option()
    elseif r == 6 then add({ k = "stats", rx = c.rx_known })
    elseif r == 7 then setstats()
    elseif r == 8 then
      -- (where LuaSocket has a descriptor and the cosocket none: a tcp4()
      -- or bound master, a failed connect, after a read error)
      if c.closed or (c.kind == "master" and c.ctor == "tcp" and not c.bound)
         or (c.kind == "client" and not (c.failed or c.eof)) then
        add({ k = "fd" })
      end
    elseif r == 9 then m("getfamily")
    elseif r == 10 then add({ k = "cls" })
    else misuse() end
  end

  local function script()
    c.mode = rand(3) == 1 and "E" or "D"
    if c.mode == "E" then return "E" end
    c.ending = rand(2) == 1 and "close" or "hold"
    local words = { "D", c.ending }
    for i = 1, rand(0, 4) do
      local s = peer_bytes(rand)
      c.S = c.S .. s
      words[#words + 1] = hex(s) .. "/" .. (rand(2) == 1 and 0
                                                or rand(1, 10))
    end
    c.final = c.ending == "close"
    return table.concat(words, " ")
  end

  local function tcp_scene()
    c = { S = "", pos = 0, b = -1, t = -1, sent = 0, part = "",
          settled = false }
    local r = rand(10)
    local function new()
      c.ctor, c.kind = pick(rand, { "tcp", "tcp4" }), "master"
      c.b, c.t, c.failed, c.bound = -1, -1, nil, nil
      add({ k = "new", ctor = c.ctor })
    end
    if r <= 6 then
      new()
      for _ = 1, rand(0, 3) do anytime() end
      if rand(4) == 1 then
        -- a client still, as LuaSocket's (no use after but these calls: a
        -- new one connects)
        fix_timeouts("complete")
        add({ k = "connect", port = refused })
        c.kind, c.failed = "client", true
        for _ = 1, rand(0, 3) do anytime() end
        new()
      end
      fix_timeouts("complete")
      add({ k = "connect", port = r == 6 and tostring(port) or port,
            script = script() })
    else
      if r == 10 then add({ k = "sconnect", port = refused }) end
      add({ k = "sconnect", port = port, script = script() })
    end
    c.kind = "client"
    for _ = 1, rand(4, 18) do
      local k = rand(20)
      if k <= 6 then receive()
      elseif k <= 9 then
        -- no sends to a peer that closes on its own, nor (echoes arriving
        -- after shutdown("receive")) to one that echoes
        if c.closed or c.wdown
           or (c.ending ~= "close" and not (c.mode == "E" and c.rdown))
        then
          send()
        end
      elseif k == 10 then
        if not (c.mode == "E" and c.rdown) then shutdown() end
      elseif k == 11 and budget.sleeps > 0 then
        budget.sleeps = budget.sleeps - 1
        sleep()
      elseif k == 12 and rand(3) == 1 then
        m("close")
        c.closed = true
      else
        anytime()
      end
    end
    m("close")
    c.closed = true
    for _ = 1, rand(0, 2) do anytime() end
  end

  -- UDP: u bound, v connected to u, w unconnected; queue: what u has
  local function udp_scene()
    add({ k = "udp" })
    local queue, closed, tm = {}, {}, {}
    local wfd -- w has a descriptor (LuaSocket 3.1 makes it at sendto)
    local function data()
      return pick(rand, { "", "d", "dgram", "0123456789", "x y z" })
    end
    local function set(obj, v)
      if tm[obj] ~= v then
        add({ k = "um", obj = obj, m = "settimeout", a = { v }, n = 1 })
        tm[obj] = v
      end
    end
    for _ = 1, rand(4, 14) do
      local k = rand(14)
      local obj = pick(rand, { "u", "v", "w" })
      if k <= 2 then
        local d = data()
        if closed.v then goto next end
        add({ k = "um", obj = "v", m = "send", a = { d }, n = 1 })
        if not closed.u then queue[#queue + 1] = d end
      elseif k <= 4 then
        local d = data()
        if closed.w then goto next end
        add({ k = "um", obj = "w", m = "sendto",
              a = { d, "U_IP", "U_PORT" }, n = 3 })
        wfd = true
        if not closed.u then queue[#queue + 1] = d end
      elseif k <= 7 then
        local size = pick(rand, { false, 1, 3, 8, 2.9, 100 })
        if closed.u then goto next end
        set("u", #queue > 0 and 1 or 0)
        if k == 7 then
          add({ k = "ufrom", size = size or nil })
        elseif size then
          add({ k = "um", obj = "u", m = "receive", a = { size }, n = 1 })
        else
          add({ k = "um", obj = "u", m = "receive", a = {}, n = 0 })
        end
        table.remove(queue, 1)
      elseif k == 8 then
        if obj ~= "u" and not closed[obj] then
          set(obj, 0)
          add({ k = "um", obj = obj, m = "receive", a = {}, n = 0 })
        end
      elseif k == 9 then
        add({ k = "ushape", obj = obj,
              m = pick(rand, { "getsockname", "getpeername" }) })
      elseif k == 10 then
        local o = pick(rand, { { "broadcast", true }, { "dontroute", false },
                               { "bogus", 1 }, { "reuseaddr", true },
                               { "ip-multicast-ttl", 2 }, { "broadcast", 1 } })
        local set = rand(2) == 1
        -- (the UDP cosocket takes no options: only where LuaSocket has no
        -- descriptor, and its errors, are compared)
        local function nofd_(x) return closed[x] or (x == "w" and not wfd) end
        if not nofd_(obj) then
          for _, x in ipairs({ "w", "u", "v" }) do
            if nofd_(x) then obj = x end
          end
        end
        local nofd = nofd_(obj)
        if set and (nofd or o[1] == "bogus" or o[2] == 1) then
          add({ k = "um", obj = obj, m = "setoption", a = o, n = 2 })
        elseif not set and (nofd or o[1] == "bogus"
                            or o[1] == "ip-multicast-ttl") then
          add({ k = "um", obj = obj, m = "getoption", a = { o[1] }, n = 1 })
        end
      elseif k == 11 then
        set(obj, 0) -- (some of these are no misuse: receivefrom on w)
        local t = pick(rand, { { "send", "x" }, { "sendto", "x", "U_IP",
                               "U_PORT" },
                               { "gettimeout" }, { "getfamily" },
                               { "settimeout", "x" }, { "send", {} },
                               { "setsockname", HOST, 0 },
                               { "receive", {} } })
        add({ k = "um", obj = obj, m = t[1], a = { table.unpack(t, 2) },
              n = #t - 1 })
        if obj == "w" and (t[1] == "sendto" or t[1] == "setsockname") then
          wfd = true
        end
        if obj == "v" then -- receivefrom on u or w would print a port
          add({ k = "um", obj = "v", m = "receivefrom", a = {}, n = 0 })
        end
      elseif k == 12 and rand(3) == 1 then
        add({ k = "um", obj = obj, m = "close", a = {}, n = 0 })
        closed[obj] = true
        if obj == "u" then queue = {} end
      else
        add({ k = "um", obj = obj, m = "gettimeout", a = {}, n = 0 })
      end
      ::next::
    end
    for _, obj in ipairs({ "u", "v", "w" }) do
      add({ k = "um", obj = obj, m = "close", a = {}, n = 0 })
    end
  end

  for s = 1, 14 do
    scene, n, c = s, 0, nil
    if s % 5 == 0 then udp_scene() else tcp_scene() end
  end
  return steps
end

------------------------------------------------------------------------
-- a program as a Lua chunk, for the child

local function ser(v)
  local t = type(v)
  if t == "string" then return (("%q"):format(v):gsub("\\\n", "\\n")) end
  if t == "number" then return ("%q"):format(v) end
  if t == "table" then
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = k end
    table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
    local out = {}
    for _, k in ipairs(keys) do
      out[#out + 1] = "[" .. ser(k) .. "]=" .. ser(v[k])
    end
    return "{" .. table.concat(out, ",") .. "}"
  end
  return tostring(v)
end

local function clip(s)
  if s and #s > 300 then return s:sub(1, 300) .. "..." end
  return tostring(s)
end

-- a step as it reads in a program
local function show_step(st)
  if st.k == "m" or st.k == "um" then
    local a = {}
    for i = 1, st.n do a[i] = clip(ser(st.a[i])) end
    return ("%s:%s(%s)"):format(st.obj or "o", st.m, table.concat(a, ", "))
  end
  local t = {}
  for k, v in pairs(st) do
    if k ~= "label" and k ~= "scene" then
      t[#t + 1] = k .. "=" .. clip(ser(v))
    end
  end
  table.sort(t)
  return table.concat(t, " ")
end

describe("corosched.luasocket against Debian's LuaSocket (random)",
         function()
  local NAMES = { "socket", "socket.core", "socket.unix" }
  local saved, socket

  before_each(function()
    saved = {}
    for _, k in ipairs(NAMES) do
      saved[k] = package.loaded[k]
      package.loaded[k] = nil
    end
    package.loaded["corosched.luasocket"] = nil
    socket = require("corosched.luasocket").install()
  end)

  after_each(function()
    for _, k in ipairs(NAMES) do package.loaded[k] = saved[k] end
    helper.after_each()
  end)

  it("prints the same lines for seed " .. SEED, function()
    if not net.exists(LS_LUA) then
      pending("skipped: apt-get install lua-socket")
      return
    end
    local run = assert(loadfile(PROBE))("lib")
    local serve = assert(loadfile(PEER))()
    local want, got = {}, {}
    local steps, prog
    helper.run(function()
      local l = assert(cs.socket.listen(HOST, 0))
      local _, port = l:getsockname()
      local peer = cs.thread.spawn(serve, cs, l)
      steps = gen(SEED, net.free_port(), port)
      prog = { host = HOST, steps = steps }
      local srv = net.server_dir()
      local file = srv.dir .. "/program.lua"
      local f = assert(io.open(file, "w"))
      f:write("return ", ser(prog), "\n")
      f:close()
      -- Debian's LuaSocket in a child, this module here, at the same time
      net.spawn(srv, "probe", ("env -u LUA_PATH -u LUA_CPATH lua5.4 %s %s")
                :format(PROBE, net.sh_quote(file)))
      -- (bounded: a call that waits forever would keep the peer too)
      local body = cs.thread.spawn(function()
        local ok, err = pcall(run, socket, prog,
                              function(s) got[#got + 1] = s end)
        if not ok then got[#got + 1] = "probe raised: " .. tostring(err) end
        got[#got + 1] = "end"
      end)
      local dog = cs.thread.spawn(function()
        cs.sleep(20)
        return "deadline"
      end)
      local _, res = cs.thread.wait(body, dog)
      if res == "deadline" then
        cs.thread.kill(body)
        got[#got + 1] = "corosched.luasocket's run did not end in 20 s"
      else
        cs.thread.kill(dog)
      end
      local deadline = helper.clock() + 20
      while net.alive(srv.pid) and helper.clock() < deadline do
        cs.sleep(0.02)
      end
      net.stop(srv)
      for line in net.server_log(srv):gmatch("[^\n]*\n") do
        want[#want + 1] = line:sub(1, -2)
      end
      net.remove(srv)
      l:close()
      assert(cs.thread.wait(peer))
    end, { timeout = 30 })
    if os.getenv("CS_LUASOCKET_DUMP") then -- both outputs, for a look
      local d = os.getenv("CS_LUASOCKET_DUMP")
      for name, lines in pairs({ luasocket = want, corosched = got }) do
        local f = assert(io.open(d .. "/" .. name .. ".txt", "w"))
        f:write(table.concat(lines, "\n"), "\n")
        f:close()
      end
    end
    -- each step's lines (they begin with its label "sS.N"), compared step
    -- by step: the first divergence of each scene
    local function by_step(lines)
      local t = {}
      for _, line in ipairs(lines) do
        local id = line:match("^(s%d+%.%d+) ") or "tail"
        t[id] = t[id] or {}
        table.insert(t[id], line)
      end
      return t
    end
    local w, g = by_step(want), by_step(got)
    local reports, seen = {}, {}
    local ids = {}
    for _, st in ipairs(steps) do ids[#ids + 1] = st end
    ids[#ids + 1] = { label = "tail", scene = "tail" }
    for i, st in ipairs(ids) do
      local id = st.label:match("^%S+")
      local a = table.concat(w[id] or { "(nothing)" }, "\n    ")
      local b = table.concat(g[id] or { "(nothing)" }, "\n    ")
      if a ~= b and not seen[st.scene] then
        seen[st.scene] = true
        local ctx = {}
        for j = math.max(1, i - 6), i - 1 do
          if ids[j].scene == st.scene then
            local pid = ids[j].label:match("^%S+")
            ctx[#ctx + 1] = "    " .. show_step(ids[j]) .. " -> "
              .. clip(table.concat(w[pid] or {}, " | "))
          end
        end
        reports[#reports + 1] = table.concat({
          ("seed %d, step %s: %s"):format(SEED, st.label, show_step(st)),
          "  before it (LuaSocket's lines):", table.concat(ctx, "\n"),
          "  LuaSocket:  " .. clip(a),
          "  corosched:  " .. clip(b) }, "\n")
        if not ALL then break end
      end
    end
    assert(#want > 20, "LuaSocket's run printed:\n" .. table.concat(want,
                                                                    "\n"))
    if #reports > 0 then
      error(table.concat(reports, "\n\n"), 0)
    end
  end)
end)
