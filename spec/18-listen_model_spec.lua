-- A random workload on the server side. Listeners: TCP on 127.0.0.1 and
-- ::1 (port 0, random backlogs, some with reuseport and a twin on the
-- same port) and unix sockets on two paths (one 107 bytes long) listened
-- on again and again; each with one or two acceptor threads looping
-- accept() (plain, inside pcall, inside a user coroutine) under random
-- accept timeouts (mostly 1-5 ms, some none), the second one meeting
-- "socket busy accepting" while the first is in accept. An accepted
-- socket goes to a handler thread that reads a hello line under short
-- read timeouts (gathering the partial data) and answers it, tagged with
-- its listener and accept number. Clients connect under random connect
-- timeouts, then say hello and have the handler echo lines, close, reset
-- (close with unread data), setkeepalive (an accepted socket has no pool:
-- it closes) or drop its socket for the collector; or say hello late, in
-- pieces; or connect and close; or stay silent a while; or connect to a
-- dead listener's address. A supervisor kills acceptors at random moments
-- (parked in accept, woken by a connection and not yet run, elsewhere),
-- closes listeners from outside, probes them with a second accept, kills
-- clients, keeps the objects of listeners closed by a kill a while
-- (listening on the unix path again at once, or not) and then closes
-- them or drops them for the collector; kills acceptors with
-- connections queued, fills a backlog (a connect times out), listens
-- where another listener is, and drops listeners with connections queued.
-- Invariants:
--   * an answer is the client's own, from a listener at the address it
--     connected to; each hello is accepted and handled once; a client not
--     killed whose hello was handled gets its answer and the handler's
--     close, reset or echoes; a connect or call fails only as the kernel
--     may (a timeout; refused or reset when a listener at its address
--     died since the connect began, its connection never accepted);
--   * accept() while another thread is in accept() on that listener
--     (parked, or woken and not yet run) returns exactly nil, "socket
--     busy accepting", and otherwise never; "timeout" only with an accept
--     timeout set, not much before it; no socket from a closed listener:
--     accept says "closed", a parked or woken one too (one woken by its
--     timeout before the close says "timeout");
--   * a kill of a thread in accept closes the listener as close() does
--     (accept, getsockname and close say "closed") and removes its unix
--     socket file at once (a unix connect there says "no such file or
--     directory", a listen there succeeds); a kill elsewhere leaves it
--     open; close() removes the file at once; neither the old object's
--     close() nor its collection removes the file of a listener that
--     listens on the path since (which still accepts);
--   * a listen where a listener is: "address already in use"; a connect
--     where nothing listens: "connection refused" (TCP) or "no such file
--     or directory" (unix);
--   * every call returns what the contract lists, nothing else; every
--     descriptor is a socket cs.stats() counts; at the end no socket,
--     thread, descriptor or socket file is left, each dropped socket was
--     collected.
-- Every path is counted and must have been taken (a last phase forces
-- the rare ones). A fixed seed (CS_LISTEN_SEED picks another;
-- CS_LISTEN_VERBOSE=1 prints the counts).
local helper = require "spec.helper"
local net = require "spec.support.net"
local cs = helper.cs
local spawn, wait, kill = cs.thread.spawn, cs.thread.wait, cs.thread.kill
local status = cs.thread.status

local SEED = tonumber(os.getenv("CS_LISTEN_SEED")) or 18
local RESET, PIPE = "connection reset by peer", "broken pipe"
local BUSY = "socket busy accepting"
local prng = helper.prng
local pack = table.pack

-- what a close() after an error may return: 1 once, "closed" when both
-- halves were ended already
local function closes(sock, what)
  local r = pack(sock:close())
  assert(r[1] == 1 and r.n == 1 or r[1] == nil and r[2] == "closed",
         what .. ": close: " .. tostring(r[1]) .. " " .. tostring(r[2]))
end

local function show(r)
  local t = {}
  for i = 1, r.n do t[i] = tostring(r[i]) end
  return "(" .. table.concat(t, ", ") .. ")"
end

local function run_model(seed)
  local rand = prng(seed)
  local slack = helper.slack
  local steps = math.floor(500 * helper.scale) + 30
  local counts = setmetatable({}, { __index = function() return 0 end })
  local function count(k) counts[k] = counts[k] + 1 end

  local listeners, clients, handled = {}, {}, {}
  local keys = {}         -- address key -> what is known of it
  -- (the second path is as long as a unix socket's can be: 107 bytes)
  local paths = { net.unix_path(), net.unix_path() }
  paths[2] = paths[2]:sub(1, -6) .. ("x"):rep(107 - #paths[2]) .. ".sock"
  assert(#paths[2] == 107)
  local path_owner = {}   -- path slot -> the open listener whose file it
                          -- holds
  local acceptors = {}    -- live acceptor records (the supervisor's kids)
  local live = {}         -- live client records
  local helpers = {}      -- other threads of the supervisor
  local dropped = setmetatable({}, { __mode = "k" }) -- sockets left to GC
  local unlinked = {}     -- socket files of live listeners removed
  local tick_c, tick_s    -- a connected pair for the race step
  local seedtag = " (CS_LISTEN_SEED=" .. seed .. ")"

  -- {====== addresses and listeners ======

  local function K(key)
    local k = keys[key]
    if not k then
      -- nopen: listeners open there; deaths: listeners that died there;
      -- gaps: times nopen fell to 0; file: a unix socket file is there;
      -- gone: times it was removed
      k = { nopen = 0, deaths = 0, gaps = 0, file = false, gone = 0 }
      keys[key] = k
    end
    return k
  end

  local function snap(key)
    local k, s = K(key), {}
    for f, v in pairs(k) do s[f] = v end
    return s
  end

  -- whether nobody listened at key at some moment since snapshot s
  local function no_listener(key, s)
    local k = K(key)
    return s.nopen == 0 or k.nopen == 0 or k.gaps ~= s.gaps
  end
  local function no_file(key, s)
    local k = K(key)
    return not s.file or not k.file or k.gone ~= s.gone
  end

  local function file_removed(L)
    local k = K(L.key)
    assert.is_false(net.exists(L.path), "socket file of listener "
                    .. L.id .. " left" .. seedtag)
    assert((k.file or L.file_lost) and path_owner[L.slot] == L)
    k.file, k.gone = false, k.gone + 1
    path_owner[L.slot] = nil
  end

  -- L stopped listening: "killed" (by a kill in accept), "closed"
  -- (close()): either way its file is removed at once, its path free
  local function listener_died(L, how)
    assert(L.state == "open")
    local A = L.in_accept
    if A then -- (a thread woken by its timeout still says "timeout")
      A.woken_at_close = net.parked_on(A.th) ~= "accept"
    end
    L.state, L.in_accept = how, nil
    local k = K(L.key)
    k.nopen, k.deaths = k.nopen - 1, k.deaths + 1
    if k.nopen == 0 then k.gaps = k.gaps + 1 end
    if L.path then file_removed(L) end
  end

  local function live_acceptors(L)
    local n = 0
    for A in pairs(acceptors) do
      if A.L == L then n = n + 1 end
    end
    return n
  end

  -- }====== {====== the handler of an accepted connection ======

  local function handler(s, L, aseq, hrand)
    count("handlers")
    local H = ("handler L%d A%d"):format(L.id, aseq)
    s:settimeout(hrand(2, 8))
    local got, deadline = "", helper.clock() + 3 * slack
    local line
    while true do
      local r = pack(s:receive())
      if r[1] then
        assert.equal(1, r.n)
        line = got .. r[1]
        break
      end
      assert.equal(3, r.n, H .. ": receive " .. show(r))
      got = got .. r[3]
      if r[2] == "timeout" then
        count("hello_timeouts")
        if r[3] ~= "" then count("partial_timeouts") end
        assert(helper.clock() < deadline, H .. ": no hello" .. seedtag)
      else
        -- the client closed before its hello (it quit, was silent, was
        -- killed, or its connect timed out): a prefix of a hello at most
        assert(r[2] == "closed" and ("hello "):find(got:sub(1, 6), 1, true)
               == 1, H .. ": receive " .. show(r) .. " after " .. got)
        count("hello_closed")
        assert.equal(1, s:close())
        count("handlers_done")
        return
      end
    end
    local cid, mode, k = line:match("^hello (%d+) (%a+) (%d+)$")
    cid, k = tonumber(cid), tonumber(k)
    local C = clients[cid]
    assert(C, H .. ": bad hello " .. line)
    assert(not handled[cid], H .. ": client " .. cid .. " handled twice, by "
           .. tostring(handled[cid] and handled[cid].tag) .. seedtag)
    assert.equal(C.key, L.key, H .. ": client " .. cid .. " connected to "
                 .. C.key)
    local tag = ("L%d A%d"):format(L.id, aseq)
    handled[cid] = { tag = tag, lid = L.id }
    s:settimeout(3000 * slack)

    -- a failed call: only when the client was killed
    local function failed(r, what, ...)
      local ok = {}
      for _, e in ipairs({ ... }) do ok[e] = true end
      assert(C.killed and ok[r[2]], H .. ": client " .. cid .. " ("
             .. C.mode .. "): " .. what .. " " .. show(r) .. seedtag)
      count("handler_client_killed")
      closes(s, H)
      count("handlers_done")
    end

    local ans = ("%d %s"):format(cid, tag)
    local r = pack(s:send(ans .. "\n"))
    if not r[1] then return failed(r, "send", RESET, PIPE) end
    assert.same({ #ans + 1, n = 1 }, r)

    if mode == "echo" then
      for i = 1, k do
        r = pack(s:receive())
        if not r[1] then return failed(r, "receive", "closed", RESET) end
        assert.equal("echo " .. i, r[1])
        local e = ("%d:%d:%s\n"):format(cid, i, tag)
        r = pack(s:send(e))
        if not r[1] then return failed(r, "send", RESET, PIPE) end
        assert.equal(#e, r[1])
      end
      r = pack(s:receive())
      if r[2] ~= "closed" or C.killed then
        return failed(r, "last receive", "closed", RESET)
      end
      assert.same({ nil, "closed", "", n = 3 }, r)
      assert.equal(1, s:close())
    elseif mode == "reset" then
      -- closed with the client's "junk" unread: a reset
      while not (C.junk_sent or C.killed) do
        assert(helper.clock() < deadline, H .. ": no junk" .. seedtag)
        cs.sleep(0.001)
      end
      assert.equal(1, s:close())
    elseif mode == "keepalive" then
      -- an accepted socket has no pool: setkeepalive closes it (a killed
      -- client's end makes it refuse)
      r = pack(s:setkeepalive())
      if not r[1] then
        return failed(r, "setkeepalive", "closed",
                      "connection in dubious state")
      end
      assert.same({ 1, n = 1 }, r, H)
      assert.same({ nil, "closed" }, { s:close() }, H)
    elseif mode == "gc" then
      dropped[s] = true
      s = nil -- luacheck: ignore (the collector closes it)
      -- (when the handler has not parked yet, the acceptor's spawn call
      -- still holds it: that returns first)
      cs.sleep(0)
      collectgarbage()
      count("handler_gc_drops")
    else -- "close", "late"
      assert.equal(1, s:close())
    end
    count("handlers_done")
  end

  -- }====== {====== acceptors ======

  local function acceptor(A, L, arand)
    local srv = L.srv
    local kids = {}
    while true do
      -- the handlers that ended: their failures are the acceptor's
      for i = #kids, 1, -1 do
        if status(kids[i]) == "zombie" then
          local ok, err = wait(kids[i])
          assert(ok, err)
          table.remove(kids, i)
        end
      end
      A.state, A.woken_at_close = "accept", nil
      local busy = L.in_accept ~= nil and L.state == "open"
      local t = 0
      if L.state == "open" and not busy then
        local r = arand(20)
        t = r <= 14 and arand(1, 5) or r <= 17 and 0 or arand(10, 30)
        srv:settimeout(t)
        L.in_accept = A
      end
      local t0 = helper.clock()
      local r, how = nil, arand(4)
      if how == 1 then -- parked inside pcall
        r = pack(pcall(srv.accept, srv))
        assert(r[1], r[2])
        r = pack(table.unpack(r, 2, r.n))
      elseif how == 2 then -- parked inside a user coroutine
        r = coroutine.wrap(function() return pack(srv:accept()) end)()
      else
        r = pack(srv:accept())
      end
      A.state = "run"
      if L.in_accept == A then L.in_accept = nil end
      local what = ("acceptor %d of L%d: accept %s%s")
        :format(A.id, L.id, show(r), seedtag)
      if L.state ~= "open" and A.woken_at_close and t > 0
         and r[2] == "timeout" then
        -- woken by its timeout, then the listener was closed: the
        -- timeout came first
        assert.equal(2, r.n, what)
        count("timeout_then_closed")
        A.state = "done"
        return "closed"
      elseif L.state ~= "open" then
        assert.same({ nil, "closed", n = 2 }, r, what)
        count("accept_closed")
        A.state = "done"
        return "closed"
      elseif busy then
        assert.same({ nil, BUSY, n = 2 }, r, what)
        count("accept_busy")
        A.state = "sleep"
        cs.sleep(arand(1, 3) / 1000)
        A.state = "run"
      elseif r[1] then
        assert(r.n == 1 and tostring(r[1]):find("^corosched%.tcp"), what)
        local s = r[1]
        L.nacc = L.nacc + 1
        count("accepts")
        assert.same(L.name, { s:getsockname() }, what)
        if L.path then
          local p = pack(s:getpeername())
          assert(p[1] == "unix:" and p.n == 1 or p[1] == nil and p[2]
                 == "transport endpoint is not connected", show(p))
        else
          local p = pack(s:getpeername())
          assert(p[1] == L.host and math.type(p[2]) == "integer"
                 or p[1] == nil and p[2]
                 == "transport endpoint is not connected", show(p))
        end
        kids[#kids + 1] = spawn(handler, s, L, L.nacc,
                                prng(seed * 7919 + L.id * 131 + L.nacc))
      else
        assert(r.n == 2 and r[2] == "timeout" and t > 0, what)
        local dt = helper.clock() - t0
        -- (a read timer may end a read 5 ms early: cs_socket.c)
        assert(dt >= (t - 6) / 1000, what .. " after " .. dt .. " s")
        count("accept_timeouts")
      end
    end
  end

  local nacceptors = 0
  local has_v6 = false
  local function start_acceptor(L)
    nacceptors = nacceptors + 1
    local A = { id = nacceptors, L = L, state = "new" }
    acceptors[A] = true
    A.th = spawn(acceptor, A, L, prng(seed * 31 + nacceptors))
    return A
  end

  local function open_listener(kind, slot)
    local L = { id = #listeners + 1, state = "open", nacc = 0 }
    if not slot and (kind == "unix" or not kind and rand(2) == 1) then
      for i = 1, #paths do
        if not path_owner[i] then slot = i break end
      end
    end
    if slot then
      L.slot, L.path = slot, paths[slot]
      L.key, L.addr = "unix:" .. L.path, { "unix:" .. L.path }
      L.name = L.addr
      assert.is_false(net.exists(L.path))
      local r = pack(cs.socket.listen("unix:" .. L.path))
      assert(tostring(r[1]):find("^corosched%.server"), show(r))
      L.srv = r[1]
      assert.same({ "unix:" .. L.path }, { L.srv:getsockname() })
      assert.is_true(net.exists(L.path))
      path_owner[slot] = L
      count("unix_listens")
    else
      local twin
      for _, o in ipairs(listeners) do
        if o.state == "open" and o.reuseport then twin = o end
      end
      -- (no backlog so short that a burst overflows it: Linux then drops
      -- the handshake's last ACK, and the connection, established for the
      -- client, waits for retransmissions for seconds; full_queue() fills
      -- a backlog of 1 on purpose)
      local opts = { backlog = ({ 8, 16, 64, false })[rand(4)] or nil }
      if twin and (kind == "twin" or rand(2) == 1) then
        opts.reuseport = true
        count("reuseport_twins")
      else
        twin = nil
        opts.reuseport = kind == "twin" or rand(3) == 1
      end
      -- (IPv6 on ::1 too: its ports are other addresses than IPv4's)
      local v6
      if twin then v6 = twin.v6 else v6 = has_v6 and rand(4) == 1 end
      L.v6, L.host = v6, v6 and "::1" or "127.0.0.1"
      local r = pack(cs.socket.listen(L.host, twin and twin.port or 0,
                                      opts))
      assert(tostring(r[1]):find("^corosched%.server"), show(r))
      L.srv = r[1]
      local host, port = L.srv:getsockname()
      assert.equal(L.host, host)
      assert(port > 0 and (not twin or port == twin.port))
      L.port, L.reuseport, L.backlog = port, opts.reuseport, opts.backlog
      L.key = (v6 and "tcp6:" or "tcp:") .. port
      L.addr = { v6 and "[::1]" or "127.0.0.1", port }
      L.name = { L.host, port }
      count("tcp_listens")
      if v6 then count("tcp6_listens") end
    end
    local k = K(L.key)
    k.nopen = k.nopen + 1
    if L.path then k.file = true end
    listeners[L.id] = L
    for _ = 1, rand(2) do start_acceptor(L) end
    return L
  end

  -- }====== {====== clients ======

  local function client(C, crand)
    local s0 = snap(C.key)
    local sock = cs.socket.tcp()
    sock:settimeout(C.ctimeout)
    C.state = "connect"
    local r = pack(sock:connect(table.unpack(C.addr)))
    C.state = "run"
    local what = ("client %d (%s, to %s)"):format(C.id, C.mode, C.key)
    if not r[1] then
      local e = r[2]
      assert.equal(2, r.n)
      if e == "timeout" then
        count("connect_timeouts")
      elseif e == "connection refused" then
        assert(not C.unix and no_listener(C.key, s0),
               what .. ": refused" .. seedtag)
        count("connect_refused")
      elseif e == RESET then
        -- completed, then reset in the queue of a listener that died
        -- before the connect returned
        assert(not handled[C.id] and K(C.key).deaths ~= s0.deaths,
               what .. ": connect " .. show(r) .. seedtag)
        count("connect_resets")
      else
        assert(e == "no such file or directory" and C.unix
               and no_file(C.key, s0), what .. ": connect " .. show(r))
        count("connect_enoent")
      end
      assert.same({ nil, "closed" }, { sock:close() })
      C.result = e
      return
    end
    assert.same({ 1, n = 1 }, r, what)
    C.connected = true
    local mode = C.mode
    if mode == "quit" then
      assert.equal(1, sock:close())
      count("quits")
      C.result = "quit"
      return
    end
    sock:settimeout(3000 * slack)

    -- a failed call: only when a listener at its address died since the
    -- connect began, with the connection still queued (never accepted)
    local function lost(res, op, ...)
      local ok = {}
      for _, e in ipairs({ ... }) do ok[e] = true end
      assert(ok[res[2]] and not handled[C.id]
             and K(C.key).deaths ~= s0.deaths,
             what .. ": " .. op .. " " .. show(res) .. ", handled by "
             .. tostring(handled[C.id] and handled[C.id].tag) .. seedtag)
      count("queued_resets")
      C.result = "lost"
      closes(sock, what)
    end

    if mode == "silent" then
      C.state = "sleep"
      cs.sleep(crand(3, 25) / 1000)
      C.state = "run"
      sock:settimeout(crand(1, 3))
      C.state = "recv"
      r = pack(sock:receive())
      C.state = "run"
      if r[2] ~= "timeout" then return lost(r, "receive", RESET) end
      assert.same({ nil, "timeout", "", n = 3 }, r, what)
      assert.equal(1, sock:close())
      count("silents")
      C.result = "silent"
      return
    end

    local hello = ("hello %d %s %d\n"):format(C.id, mode, C.k)
    if mode == "late" then
      C.state = "sleep"
      cs.sleep(crand(3, 20) / 1000)
      C.state = "run"
      r = pack(sock:send(hello:sub(1, 3)))
      if not r[1] then return lost(r, "send", RESET, PIPE) end
      assert.equal(3, r[1])
      C.state = "sleep"
      cs.sleep(crand(2, 10) / 1000)
      C.state = "run"
      hello = hello:sub(4)
    end
    r = pack(sock:send(hello))
    if not r[1] then return lost(r, "send", RESET, PIPE) end
    assert.same({ #hello, n = 1 }, r)
    C.state = "recv"
    r = pack(sock:receive())
    C.state = "run"
    if not r[1] then return lost(r, "receive", RESET) end
    local tag, lid = r[1]:match("^" .. C.id .. " (L(%d+) A%d+)$")
    lid = tonumber(lid)
    assert(lid, what .. ": got " .. r[1] .. seedtag)
    assert(handled[C.id] and handled[C.id].tag == tag,
           what .. ": answer " .. r[1])
    assert.equal(C.key, listeners[lid].key, what .. ": answered by L" .. lid)
    count("answers")
    C.result = "answered"
    if mode == "echo" then
      for i = 1, C.k do
        if C.pause then -- (a kill now leaves the socket to the collector)
          C.state = "sleep"
          cs.sleep(C.pause)
          C.state = "run"
        end
        local e = "echo " .. i .. "\n"
        assert.equal(#e, sock:send(e))
        C.state = "recv"
        assert.equal(("%d:%d:%s"):format(C.id, i, tag), sock:receive())
        C.state = "run"
        count("echoes")
      end
      assert.equal(1, sock:close())
    elseif mode == "reset" then
      assert.equal(4, sock:send("junk"))
      C.junk_sent = true
      C.state = "recv"
      assert.same({ nil, RESET, "" }, { sock:receive() }, what)
      assert.equal(1, sock:close())
      count("resets")
    else -- "close", "late", "gc", "keepalive": the handler's close, or
      -- the collector's
      C.state = "recv"
      assert.same({ nil, "closed", "" }, { sock:receive() }, what)
      assert.equal(1, sock:close())
      count(mode == "gc" and "gc_closed" or mode == "late" and "lates"
            or mode == "keepalive" and "keepalive_closed"
            or "closed_by_handler")
    end
  end

  local MODES = { "close", "close", "echo", "echo", "reset", "gc", "late",
                  "late", "quit", "silent", "keepalive" }
  local function new_client(L, mode, k)
    local C = { id = #clients + 1, key = L.key, addr = L.addr, state = "new",
                unix = L.path ~= nil, mode = mode or MODES[rand(#MODES)],
                k = k or rand(1, 3) }
    if rand(3) == 1 then C.pause = rand(1, 3) / 1000 end
    C.ctimeout = ({ 2, 20, 200, 1000 * slack })[rand(4)]
    clients[C.id] = C
    live[C] = true
    C.th = spawn(client, C, prng(seed * 1009 + C.id))
    return C
  end

  -- }====== {====== the supervisor's steps ======

  local function open_ones()
    local t = {}
    for _, L in ipairs(listeners) do
      if L.state == "open" then t[#t + 1] = L end
    end
    return t
  end

  local function pick(t) return t[rand(#t)] end

  local function reap()
    for C in pairs(live) do
      if status(C.th) == "zombie" then
        local ok, err = wait(C.th)
        assert(ok, err)
        live[C] = nil
      end
    end
    for A in pairs(acceptors) do
      if status(A.th) == "zombie" then
        assert.same({ true, "closed" }, { wait(A.th) })
        acceptors[A] = nil
      end
    end
    for i = #helpers, 1, -1 do
      if status(helpers[i]) == "zombie" then
        assert(wait(helpers[i]))
        table.remove(helpers, i)
      end
    end
  end

  -- relisten: whether to listen on a unix listener's path again right
  -- after a kill in accept closed it (nil: at random)
  local function kill_acceptor(A, relisten)
    local L = A.L
    local on = net.parked_on(A.th)
    local closing = L.in_accept == A -- (in accept, parked or woken)
    assert.equal(1, kill(A.th))
    acceptors[A] = nil
    A.state = "killed"
    if closing then
      count(on == "accept" and "akill_parked" or "akill_woken")
      listener_died(L, "killed")
      assert.same({ nil, "closed" }, { L.srv:accept() })
      assert.same({ nil, "closed" }, { L.srv:getsockname() })
      if L.path then
        if relisten == nil then relisten = rand(3) == 1 end
        if relisten then
          -- (the path is free at once: no "address already in use")
          open_listener("unix", L.slot)
          count("kill_relistens")
        else
          local c = cs.socket.tcp()
          assert.same({ nil, "no such file or directory" },
                      { c:connect("unix:" .. L.path) },
                      "connect to L" .. L.id .. "'s path after the kill")
          assert.same({ nil, "closed" }, { c:close() })
          count("killed_enoent")
        end
      end
    else
      count("akill_elsewhere")
      if L.state == "open" then
        assert.same(L.name, { L.srv:getsockname() })
        if live_acceptors(L) == 0 then start_acceptor(L) end
      end
    end
  end

  local function close_listener(L, how)
    local A = L.in_accept
    local on = A and net.parked_on(A.th)
    assert.equal(1, L.srv:close())
    listener_died(L, "closed")
    count(how or (on == "accept" and "close_parked" or A and "close_woken"
                  or "close_idle"))
    assert.same({ nil, "closed" }, { L.srv:close() })
    assert.same({ nil, "closed" }, { L.srv:accept() })
  end

  -- the object of a listener closed by a kill in accept, kept a while:
  -- its close() says "closed" (how: "close"), or it is dropped for the
  -- collector ("drop", only when no acceptor holds it; nil: at random);
  -- neither touches the path again, which may hold the file of a new
  -- listener (NL) by now: that file stays, and NL still accepts
  local function retire(L, how)
    local NL = L.path and path_owner[L.slot]
    assert(not NL or NL.state == "open" and NL.id > L.id)
    if not how then
      how = (live_acceptors(L) > 0 or rand(2) == 1) and "close" or "drop"
    end
    if how == "close" then
      assert.same({ nil, "closed" }, { L.srv:close() })
      count("killed_closes")
    else
      assert.equal(0, live_acceptors(L))
      L.srv = nil
      collectgarbage()
      collectgarbage()
      count("killed_drops")
    end
    L.srv, L.retired = nil, true
    if not L.path then return end
    if not NL then
      assert.is_false(net.exists(L.path), L.path .. " of L" .. L.id)
      return
    end
    if not net.exists(NL.path) then
      -- (recorded, and reported at the end; NL, unreachable, is closed
      -- and the rest goes on)
      unlinked[#unlinked + 1] = ("%s L%d (its accept killed) removed the "
        .. "socket file of L%d, listening on %s since the kill")
        :format(how == "close" and "closing" or "collecting", L.id, NL.id,
                NL.path)
      NL.file_lost = true
      local k = K(NL.key)
      k.file, k.gone = false, k.gone + 1
      close_listener(NL, "unreachable_closes")
      return
    end
    count(how == "close" and "kept_closes" or "kept_drops")
    -- NL still accepts: a client there is answered
    local C = new_client(NL, "close")
    local deadline = helper.clock() + 3 * slack
    while status(C.th) == "running" and helper.clock() < deadline do
      cs.sleep(0.001)
    end
    assert(C.result == "answered" and handled[C.id].lid == NL.id,
           ("client %d of L%d after L%d's %s: %s"):format(C.id, NL.id, L.id,
           how, tostring(C.result)) .. seedtag)
  end

  -- the listeners closed by a kill whose object is kept yet
  local function killed_ones()
    local t = {}
    for _, L in ipairs(listeners) do
      if L.state == "killed" and not L.retired then t[#t + 1] = L end
    end
    return t
  end

  -- a thread woken by a connection and not yet run: the supervisor is
  -- woken by tick_c first (X writes to it before connecting)
  local function race(L, action)
    local A = L.in_accept
    if not A or net.parked_on(A.th) ~= "accept" then return false end
    helpers[#helpers + 1] = spawn(function()
      cs.sleep(0) -- (the supervisor parks first)
      assert.equal(1, tick_s:send("x"))
      local c = cs.socket.tcp()
      c:settimeout(1000 * slack)
      local r = pack(c:connect(table.unpack(L.addr)))
      -- (reset: the listener died with it queued before the connect
      -- returned; refused: it died before the SYN came, which a loaded
      -- machine may process late)
      assert(r[1] == 1 or r[2] == "timeout" or r[2] == RESET
             or r[2] == "connection refused" and L.state ~= "open",
             show(r))
      closes(c, "racer")
    end)
    assert.equal("x", tick_c:receive(1))
    if L.in_accept ~= A or net.parked_on(A.th) == "accept" then
      return false
    end
    count("woken")
    action = action or ({ "busy", "kill", "close" })[rand(3)]
    if action == "busy" then
      assert.same({ nil, BUSY }, { L.srv:accept() })
      count("woken_busy")
    elseif action == "kill" then
      kill_acceptor(A)
    else
      close_listener(L)
    end
    return true
  end

  -- a listener without acceptor, a connection queued, then closed or
  -- collected: the connection is reset, the address refuses
  local function orphan(how)
    local unix = rand(2) == 1
    local path = unix and net.unix_path()
    local srv, addr
    if unix then
      srv = assert(cs.socket.listen("unix:" .. path))
      addr = { "unix:" .. path }
    else
      srv = assert(cs.socket.listen("127.0.0.1", 0, { backlog = 4 }))
      addr = { "127.0.0.1", select(2, srv:getsockname()) }
    end
    local c = cs.socket.tcp()
    c:settimeout(1000 * slack)
    assert.equal(1, c:connect(table.unpack(addr)))
    how = how or (rand(2) == 1 and "close" or "gc")
    if how == "close" then
      assert.equal(1, srv:close())
    else
      srv = nil -- luacheck: ignore
      collectgarbage()
      collectgarbage()
    end
    count("orphan_" .. how)
    if unix then assert.is_false(net.exists(path)) end
    local r = pack(c:send("hello\n"))
    if r[1] then
      assert.same({ nil, RESET, "" }, { c:receive() })
    else
      assert(r[2] == RESET or r[2] == PIPE, show(r))
    end
    closes(c, "orphan client")
    count("orphan_resets")
    c = cs.socket.tcp()
    assert.same({ nil, unix and "no such file or directory"
                       or "connection refused" },
                { c:connect(table.unpack(addr)) })
    assert.same({ nil, "closed" }, { c:close() })
  end

  local function kill_client(state)
    local t, r = {}, {}
    for C in pairs(live) do
      if status(C.th) == "running" then
        t[#t + 1] = C
        if C.state == "recv" then r[#r + 1] = C end
      end
    end
    -- (those waiting for an answer first: their handler then fails)
    if #r > 0 and (state == "recv" or rand(2) == 1) then t = r end
    table.sort(t, function(a, b) return a.id < b.id end)
    if #t == 0 or state and t[1].state ~= state then return end
    local C = pick(t)
    assert.equal(1, kill(C.th))
    C.killed = true
    live[C] = nil
    count("ckills")
    count("ckill_" .. C.state)
    -- (a kill in a sleep leaves the socket to the collector: its handler
    -- sees the end once it is collected)
    collectgarbage()
  end

  local function sorted_acceptors()
    local t = {}
    for A in pairs(acceptors) do
      if status(A.th) == "running" then t[#t + 1] = A end
    end
    table.sort(t, function(a, b) return a.id < b.id end)
    return t
  end

  -- a listener whose accept queue is full (backlog 1, no acceptor): a
  -- connect times out (Linux drops the SYN); an accept takes the first
  -- connection queued, and close() resets the others
  local function full_queue()
    local srv = assert(cs.socket.listen("127.0.0.1", 0, { backlog = 1 }))
    local _, port = srv:getsockname()
    local fill = {}
    for _ = 1, 16 do
      local c = cs.socket.tcp()
      c:settimeout(5 * slack)
      local r = pack(c:connect("127.0.0.1", port))
      if not r[1] then
        assert.same({ nil, "timeout", n = 2 }, r)
        assert.same({ nil, "closed" }, { c:close() })
        count("connect_timeouts")
        break
      end
      fill[#fill + 1] = c
    end
    assert(#fill >= 1 and #fill < 16, #fill .. " connects")
    srv:settimeout(1000 * slack)
    local s = assert(srv:accept())
    assert.same({ fill[1]:getsockname() }, { s:getpeername() })
    assert.equal(1, srv:close())
    assert.equal(2, fill[1]:send("x\n"))
    assert.equal("x", s:receive())
    assert.equal(1, s:close())
    assert.equal(1, fill[1]:close())
    for i = 2, #fill do
      fill[i]:settimeout(1000 * slack)
      assert.same({ nil, RESET, "" }, { fill[i]:receive() })
      assert.equal(1, fill[i]:close())
      count("queued_resets")
    end
  end

  local function step(action, arg)
    local open = open_ones()
    if action == "clients" then
      for _ = 1, rand(1, 4) do new_client(pick(open)) end
    elseif action == "dead_client" then
      local dead = {}
      for _, L in ipairs(listeners) do
        if L.state ~= "open" then dead[#dead + 1] = L end
      end
      if #dead > 0 then
        new_client(pick(dead), "close")
        count("dead_clients")
      end
    elseif action == "kill_acceptor" then
      local t = sorted_acceptors()
      if #t > 0 then kill_acceptor(pick(t)) end
    elseif action == "close" then
      if #open > 1 then close_listener(pick(open)) end
    elseif action == "probe" then
      local L = pick(open)
      if L.in_accept then
        assert.same({ nil, BUSY }, { L.srv:accept() })
        count("probe_busy")
      end
    elseif action == "race" then
      race(pick(open))
    elseif action == "kill_client" then
      kill_client()
    elseif action == "orphan" then
      orphan()
    elseif action == "burst_kill" then
      -- clients whose connections are queued (a TCP connect parked, a
      -- unix one waiting for its answer) when the listener dies
      local L = arg or pick(open)
      local A = L.in_accept
      if A and net.parked_on(A.th) == "accept" then
        for _ = 1, rand(1, 3) do new_client(L, "close") end
        if L.in_accept == A then kill_acceptor(A) end
      end
    elseif action == "conflict" then
      -- listen where a listener is: refused, and the failed listener's
      -- collection removes no file
      local L = pick(open)
      local r
      if L.path then
        r = pack(cs.socket.listen("unix:" .. L.path))
      else
        r = pack(cs.socket.listen(L.host, L.port,
                                  { reuseport = not L.reuseport }))
      end
      assert.same({ nil, "address already in use", n = 2 }, r,
                  ("listen on L%d (%s, %s)"):format(L.id, L.key, L.state))
      r = nil -- luacheck: ignore
      collectgarbage()
      if L.path then assert.is_true(net.exists(L.path)) end
      count("listen_conflicts")
    elseif action == "retire" then
      local t = killed_ones()
      if #t > 0 then retire(pick(t)) end
    elseif action == "gc" then
      collectgarbage()
    elseif action == "full" then
      full_queue()
    end
  end

  local ACTIONS = { "clients", "clients", "clients", "clients", "clients",
                    "dead_client", "kill_acceptor", "close", "probe",
                    "race", "race", "kill_client", "kill_client", "orphan",
                    "retire", "gc", "burst_kill", "conflict", "full" }

  -- an open unix listener (made when there is none)
  local function unix_listener()
    for _, L in ipairs(open_ones()) do
      if L.path then return L end
    end
    for i = 1, #paths do
      if not path_owner[i] then return open_listener("unix") end
    end
  end

  -- an open listener with a thread in accept, if there is one
  local function serving()
    local t = {}
    for _, L in ipairs(open_ones()) do
      if L.in_accept then t[#t + 1] = L end
    end
    return pick(#t > 0 and t or open_ones())
  end

  -- a listener closed by a kill: an acceptor killed in accept (of a unix
  -- listener when unix; relisten as kill_acceptor's)
  local function make_killed(unix, relisten)
    if unix and not unix_listener() then return end
    for _, A in ipairs(sorted_acceptors()) do
      if A.L.in_accept == A and net.parked_on(A.th) == "accept"
         and (not unix or A.L.path) then
        return kill_acceptor(A, relisten)
      end
    end
  end

  -- a killed listener's object retired (how) while a new listener holds
  -- its path (a drop once the listener's other acceptor ended)
  local function retire_kept(how)
    local waiting
    for _, L in ipairs(killed_ones()) do
      if L.path and path_owner[L.slot] then
        if how == "close" or live_acceptors(L) == 0 then
          return retire(L, how)
        end
        waiting = true
      end
    end
    if not waiting then make_killed(true, true) end
  end

  -- the paths the random steps may have missed, and how to force them
  local FORCE = {
    { "akill_parked", function()
        for _, A in ipairs(sorted_acceptors()) do
          if A.L.in_accept == A and net.parked_on(A.th) == "accept" then
            return kill_acceptor(A)
          end
        end
      end },
    { "akill_woken", function() race(pick(open_ones()), "kill") end },
    { "close_woken", function() race(pick(open_ones()), "close") end },
    { "woken_busy", function() race(pick(open_ones()), "busy") end },
    { "close_parked", function()
        for _, L in ipairs(open_ones()) do
          if L.in_accept and net.parked_on(L.in_accept.th) == "accept" then
            return close_listener(L)
          end
        end
      end },
    { "akill_elsewhere", function()
        for _, A in ipairs(sorted_acceptors()) do
          if A.L.in_accept ~= A then return kill_acceptor(A) end
        end
        -- a second acceptor sleeps after its "socket busy accepting"
        for _, L in ipairs(open_ones()) do
          if L.in_accept then
            local B = start_acceptor(L)
            assert.equal("sleep", B.state)
            return kill_acceptor(B)
          end
        end
      end },
    { "probe_busy", function() step("probe") end },
    { "orphan_gc", function() orphan("gc") end },
    { "orphan_close", function() orphan("close") end },
    { "killed_drops", function()
        local t = killed_ones()
        for _, L in ipairs(t) do
          if live_acceptors(L) == 0 then return retire(L, "drop") end
        end
        if #t == 0 then make_killed() end
      end },
    { "killed_closes", function()
        make_killed()
        local t = killed_ones()
        if #t > 0 then retire(t[1], "close") end
      end },
    { "ckills", kill_client },
    { "handler_client_killed", function()
        -- an echo client killed in the middle: its handler's next call
        -- fails
        local C = new_client(serving(), "echo", 3)
        C.pause = 0.005
        local deadline = helper.clock() + slack
        while status(C.th) == "running" and helper.clock() < deadline
              and not (handled[C.id] and C.state == "sleep") do
          cs.sleep(0.001)
        end
        if status(C.th) == "running" then
          assert.equal(1, kill(C.th))
          C.killed = true
          live[C] = nil
          count("ckills")
          collectgarbage()
        end
      end },
    { "queued_resets", function()
        local L = unix_listener()
        if L then step("burst_kill", L) end
      end },
    { "connect_resets", function()
        for _, L in ipairs(open_ones()) do
          if not L.path then return step("burst_kill", L) end
        end
      end },
    { "reuseport_twins", function() open_listener("twin") end },
    { "kill_relistens", function() make_killed(true, true) end },
    { "killed_enoent", function() make_killed(true, false) end },
    { "kept_closes", function() retire_kept("close") end },
    { "kept_drops", function() retire_kept("drop") end },
    { "listen_conflicts", function() step("conflict") end },
    { "connect_enoent", function()
        local L = unix_listener()
        if L then
          close_listener(L)
          new_client(L, "close")
          count("dead_clients")
        end
      end },
    { "connect_refused", function()
        -- a TCP address nobody listens on any more
        local D
        for _, L in ipairs(listeners) do
          if L.port and K(L.key).nopen == 0 then D = L end
        end
        if not D then
          for _, L in ipairs(open_ones()) do
            if L.port and K(L.key).nopen == 1 then D = L end
          end
          if not D then return end
          close_listener(D)
        end
        new_client(D, "close")
        count("dead_clients")
      end },
    { "unix_listens", function()
        open_listener("unix")
      end },
    { "connect_timeouts", function() full_queue() end },
    { "accept_busy", function()
        for _, L in ipairs(open_ones()) do
          if L.in_accept then return start_acceptor(L) end
        end
      end },
    { "accept_timeouts", function() cs.sleep(0.005) end },
    { "accept_closed", function()
        local open = open_ones()
        close_listener(open[#open])
      end },
    { "woken", function() race(pick(open_ones()), "busy") end },
  }
  -- the paths of the clients' modes
  for _, f in ipairs({
    { "answers", "close" }, { "closed_by_handler", "close" },
    { "echoes", "echo" }, { "resets", "reset" }, { "gc_closed", "gc" },
    { "handler_gc_drops", "gc" }, { "keepalive_closed", "keepalive" },
    { "lates", "late" }, { "hello_timeouts", "late" },
    { "partial_timeouts", "late" }, { "quits", "quit" },
    { "hello_closed", "quit" }, { "silents", "silent" },
  }) do
    FORCE[#FORCE + 1] = { f[1], function()
      local C = new_client(serving(), f[2])
      local deadline = helper.clock() + slack
      while status(C.th) == "running" and helper.clock() < deadline do
        cs.sleep(0.001)
      end
    end }
  end

  local function keep_listening()
    local open = open_ones()
    while #open < 2 or #open < 4 and rand(8) == 1 do
      open[#open + 1] = open_listener()
    end
  end

  -- every descriptor beyond the loop's own is a socket cs.stats() counts
  -- (at each step only when helper.fds() is cheap: with lfs)
  local fd_base
  local cheap_fds = pcall(require, "lfs")
  local function check_fds(always)
    if not (always or cheap_fds) then return end
    assert.equal(fd_base + cs.stats().sockets, helper.fds(),
                 "descriptors vs cs.stats().sockets")
  end

  local function supervise()
    local v6 = cs.socket.listen("::1", 0)
    if v6 then
      has_v6 = true
      v6:close()
    end
    fd_base = helper.fds() - cs.stats().sockets
    tick_c, tick_s = net.pair()
    tick_c:settimeout(5000 * slack)
    keep_listening()
    for _ = 1, steps do
      step(ACTIONS[rand(#ACTIONS)])
      check_fds()
      -- a killed listener's object is retired some steps after its kill
      for _, L in ipairs(killed_ones()) do
        L.kept_steps = (L.kept_steps or rand(0, 8)) - 1
        if L.kept_steps < 0 then retire(L) end
      end
      reap()
      keep_listening()
      cs.sleep(rand(0, 3) / 1000)
    end
    -- forced: each path the random steps missed (a bounded number of
    -- tries: some need a moment, as an acceptor parked in accept)
    for _, f in ipairs(FORCE) do
      local tries = 0
      while counts[f[1]] == 0 and tries < 200 do
        tries = tries + 1
        f[2]()
        if tries % 4 == 0 then step("clients") end
        reap()
        keep_listening()
        cs.sleep(rand(0, 2) / 1000)
      end
    end
    -- the clients end (silent ones and late ones take a while)
    local deadline = helper.clock() + 10 * slack
    while next(live) do
      assert(helper.clock() < deadline, "clients do not end")
      collectgarbage()
      reap()
      cs.sleep(0.002)
    end
    for _, L in ipairs(listeners) do
      if L.state == "open" then
        close_listener(L, "final_closes")
      elseif L.state == "killed" and not L.retired then
        retire(L)
      end
    end
    -- the acceptors end ("closed"), and the handlers
    deadline = helper.clock() + 10 * slack
    while next(acceptors) or #helpers > 0
          or counts.handlers_done < counts.handlers do
      -- (a thread that failed with nobody waiting: its report)
      assert(not helper.errors[1], helper.errors[1] and helper.errors[1].err)
      assert(helper.clock() < deadline, "threads do not end")
      reap()
      cs.sleep(0.002)
    end
    collectgarbage()
    collectgarbage()
    check_fds(true)
    assert.equal(2, cs.stats().sockets, cs.dump()) -- (the tick pair's)
    tick_c:close()
    tick_s:close()
    for _, p in ipairs(paths) do
      assert.is_false(net.exists(p), p .. " left")
    end
  end

  local fds
  helper.run(function() cs.sleep(0) end) -- (the loop's own descriptors)
  fds = helper.fds()
  net.run(function()
    local ok, err = xpcall(supervise, debug.traceback)
    if not ok then -- what is left goes (a kill in accept closes)
      for A in pairs(acceptors) do kill(A.th) end
      for C in pairs(live) do kill(C.th) end
      for _, t in ipairs(helpers) do kill(t) end
      for _, L in ipairs(listeners) do
        if L.srv then L.srv:close() end
      end
      if tick_c then tick_c:close(); tick_s:close() end
      error(err, 0)
    end
  end, { timeout = 60 })
  collectgarbage()
  collectgarbage()
  assert.is_nil(next(dropped), "a dropped socket was not collected")
  assert.equal(fds, helper.fds())

  -- the clients' and the handlers' views agree
  for cid, C in ipairs(clients) do
    if handled[cid] then
      assert(C.killed or C.result == "answered", ("client %d (%s) handled "
             .. "by %s: %s"):format(cid, C.mode, handled[cid].tag,
                                    tostring(C.result)) .. seedtag)
    end
    assert(C.result ~= "answered" or handled[cid])
    assert(C.killed or C.result, "client " .. cid .. " did not end")
  end
  assert.equal(counts.handlers, counts.handlers_done)
  local naccepted = 0
  for _, L in ipairs(listeners) do naccepted = naccepted + L.nacc end
  assert.equal(counts.accepts, naccepted)
  assert.equal(counts.accepts, counts.handlers)
  return counts, unlinked
end

describe("listener model", function()
  after_each(helper.after_each)

  it("random listens, accepts, kills, closes and clients keep every "
     .. "invariant", function()
    local counts, unlinked = run_model(SEED)
    if os.getenv("CS_LISTEN_VERBOSE") then helper.write_counts(counts) end
    assert(#unlinked == 0, #unlinked .. " socket files of live listeners "
           .. "removed (CS_LISTEN_SEED=" .. SEED .. "), first: "
           .. tostring(unlinked[1]))
    -- every path was taken, so that the test cannot pass vacuously
    for _, k in ipairs({
      "tcp_listens", "unix_listens", "accepts", "accept_timeouts",
      "accept_busy", "accept_closed", "probe_busy", "woken", "woken_busy",
      "akill_parked", "akill_woken", "akill_elsewhere", "close_parked",
      "close_woken", "killed_closes", "killed_drops", "orphan_gc",
      "orphan_close", "orphan_resets", "ckills", "connect_refused",
      "answers", "echoes", "resets", "gc_closed", "handler_gc_drops",
      "lates", "hello_timeouts", "partial_timeouts", "hello_closed",
      "quits", "silents", "final_closes", "queued_resets", "keepalive_closed",
      "connect_resets", "connect_enoent", "handler_client_killed",
      "listen_conflicts", "reuseport_twins", "connect_timeouts",
      "kill_relistens", "killed_enoent", "kept_closes", "kept_drops",
    }) do
      assert(counts[k] > 0, "path not taken: " .. k)
    end
  end)
end)
