-- spec/48's interpreter: runs a program of LuaSocket calls (steps that
-- spec/48 drew at random; see there) and prints one line per step. The
-- same program runs with Debian's LuaSocket (blocking, in a child
-- process) and with corosched.luasocket (in a light thread), against
-- spec/support/luasocket_model_peer.lua; both must print the same lines.
--
--   lua5.4 luasocket_model_probe.lua PROGRAM_FILE   (Debian's LuaSocket)
--   loadfile(probe)("lib") -> run(socket, program, print), for a light
--                             thread (corosched.luasocket)
--
-- A program: { host =, port =, steps = { step, ... } }; a step is a table
-- with a kind k and a label (printed first):
--   new ctor           o = socket[ctor]()
--   connect port script
--                      o:connect(host, port), then o:send(script .. "\n")
--                      when it worked (sconnect: socket.connect)
--   m m a n            o:m(table.unpack(a, 1, n)), or what it raised
--   shape m            o:m() (getpeername, getsockname): ip, the port
--                      (== the peer's, or its type), family
--   stats rx           o:getstats(): tx (and rx when asked)
--   fd                 o:getfd() >= 0
--   cls                tostring(o) without the address
--   sleep t            socket.sleep(t)
--   udp                u (bound to host:0), v (its peer u), w (none)
--   um obj m a n       obj:m(...) on u, v or w; the strings "U_IP" and
--                      "U_PORT" in a stand for u's address
--   ufrom size         u:receivefrom(size): data, ip, whose port it is
local function run(socket, prog, print)
  local function show(v)
    if type(v) == "string" then -- on one line
      return (string.format("%q", v):gsub("\\\n", "\\n"))
    end
    if type(v) == "table" or type(v) == "userdata" then
      return (tostring(v):gsub("0x%x+", "ADDR"))
    end
    return tostring(v)
  end

  local function P(label, ...)
    local t = table.pack(...)
    if t[1] == false and type(t[2]) == "string" then -- raised
      t[2] = t[2]:gsub("^[^:]*:%d+: ", "")
    end
    for i = 1, t.n do t[i] = show(t[i]) end
    print(label .. ": " .. table.concat(t, " ", 1, t.n))
  end

  -- o:m(...) as a method call, so that argument errors name the method
  local calls = {}
  local function call(m)
    if not calls[m] then
      calls[m] = assert(load(("return function(o, ...) return o:%s(...) end")
                             :format(m), "=call"))()
    end
    return calls[m]
  end

  -- a call's values, or "raise" and its message without a position
  local function R(label, f, ...)
    local r = table.pack(pcall(f, ...))
    if r[1] then
      P(label, table.unpack(r, 2, r.n))
    else
      P(label, "raise", (tostring(r[2]):gsub("^[^:]*:%d+: ", "")))
    end
    return r
  end

  local o, u, v, w
  local objs = {}
  local peer_port
  for _, st in ipairs(prog.steps) do
    local k, label = st.k, st.label
    if k == "new" then
      local r = R(label, socket[st.ctor])
      o = r[2]
      if o then P(label .. " class", tostring(o):match("^[^:]*")) end
    elseif k == "connect" or k == "sconnect" then
      local r
      if k == "connect" then
        r = R(label, call("connect"), o, prog.host, st.port)
      else
        r = R(label, socket.connect, prog.host, st.port)
        if r[1] and r[2] then
          o = r[2]
          P(label .. " class", tostring(o):match("^[^:]*"))
        end
      end
      if r[1] and r[2] then
        peer_port = st.port
        if st.script then R(label .. " script", call("send"), o,
                            st.script .. "\n") end
      end
    elseif k == "m" then
      R(label, call(st.m), o, table.unpack(st.a, 1, st.n))
    elseif k == "shape" then
      local r = table.pack(pcall(call(st.m), o))
      if r[1] and r[2] and r.n >= 3 then
        local port = r[3]
        if st.m == "getpeername" then
          port = port == peer_port
        else
          port = type(port)
        end
        P(label, r[2], port, table.unpack(r, 4, r.n))
      else
        P(label, table.unpack(r, 1, r.n))
      end
    elseif k == "stats" then
      local r = table.pack(pcall(call("getstats"), o))
      if not r[1] then P(label, false, r[2])
      elseif st.rx then P(label, r[2], r[3], r.n)
      else P(label, r[3], r.n) end
    elseif k == "fd" then
      local ok, fd = pcall(call("getfd"), o)
      P(label, ok, math.type(fd), ok and fd >= 0)
    elseif k == "cls" then
      P(label, (tostring(o):match("^[^:]*")))
    elseif k == "sleep" then
      socket.sleep(st.t)
    elseif k == "udp" then
      u, v, w = socket.udp(), socket.udp(), socket.udp()
      P(label, u:setsockname(prog.host, 0))
      objs.u, objs.v, objs.w = u, v, w
      local ip, port = u:getsockname()
      objs.ip, objs.port = ip, tonumber(port)
      P(label .. " peer", v:setpeername(ip, objs.port))
      P(label .. " classes", tostring(u):match("^[^:]*"),
        tostring(v):match("^[^:]*"), tostring(w):match("^[^:]*"))
    elseif k == "um" then
      local a = {}
      for i = 1, st.n do
        a[i] = st.a[i]
        if a[i] == "U_IP" then a[i] = objs.ip end
        if a[i] == "U_PORT" then a[i] = objs.port end
      end
      R(label, call(st.m), objs[st.obj], table.unpack(a, 1, st.n))
    elseif k == "ufrom" then
      local r = table.pack(pcall(call("receivefrom"), u, st.size))
      if r[1] and r[2] then
        local from = "other"
        for _, name in ipairs({ "v", "w" }) do
          local _, p = objs[name]:getsockname()
          if tonumber(p) == r[4] then from = name end
        end
        P(label, r[2], r[3], math.type(r[4]), from)
      else
        P(label, table.unpack(r, 1, r.n))
      end
    elseif k == "ushape" then
      local r = table.pack(pcall(call(st.m), objs[st.obj]))
      if r[1] and r[2] and r.n >= 3 then
        P(label, r[2], type(r[3]), table.unpack(r, 4, r.n))
      else
        P(label, table.unpack(r, 1, r.n))
      end
    else
      error("unknown step " .. tostring(k))
    end
  end
end

local first = ...
if first == "lib" then return run end
local prog = assert(loadfile(first))()
io.stdout:setvbuf("line")
run(require "socket", prog, print)
print("end")
