-- A random workload on UDP cosockets (cs.socket.udp()), checked against a
-- model of every receiving socket's queue. Five receivers (three on
-- 127.0.0.1, two unix datagram sockets), each served by a reader thread
-- whose parent, a manager, kills it or closes its socket at random
-- moments and then binds a new socket (a new port or path); six senders
-- (connected with setpeername, three of them bound first) send datagrams
-- of 0 to 70,000 bytes (strings or nested arrays) that name their sender
-- and number, re-peer to other receivers, send on to dead ones, park in
-- receive, drop their socket for the collector; the supervisor kills
-- senders (parked in a receive or not), probes parked readers, asks
-- managers for kills and closes, makes a manager run between a
-- datagram's wake-up and its reader (woken, not yet run), and creates
-- sockets it drops. The readers take datagrams with receive or
-- receivefrom (some inside a user coroutine or a pcall), a random size
-- (none, 0, a few bytes, 65536, more, a float, a numeric string) and a
-- random timeout (1 to 20 ms mostly). Checked:
--   * every datagram received is the one sent, cut to the size asked for
--     (65536 at most), from the sender receivefrom names: nothing
--     corrupted, merged, invented or received twice, each sender's
--     datagrams in order (a "" result, from receive(0) or an empty
--     datagram, stands for one datagram, matched later);
--   * no datagram is lost while its socket lives (the senders keep what
--     is queued under the receive buffer; after the run each reader
--     drains its queue), and a receive with a long timeout never times
--     out while a datagram waits;
--   * sends to a live peer succeed ("message too long" above 65507
--     bytes; a unix peer's full queue, "resource temporarily
--     unavailable"); to a dead one: "connection refused" only after a
--     datagram went there (unix: then "transport endpoint is not
--     connected"), and never once the socket has another peer;
--   * a second receive, setpeername or bind while a reader is parked (or
--     woken, not yet run) says "socket busy", send "closed" (no peer);
--     sendto still works, and the sink receives each of its datagrams
--     once, from the right port;
--   * close() from another thread gives the parked reader nil, "closed"
--     ("timeout" only if its own timeout woke it first), also when the
--     object is used again (sendto) before the reader runs; a kill
--     (parked, woken, or just after the datagram that will wake it was
--     sent) closes the socket: receive and close then say "closed", a
--     unix socket's file is gone, and the object is as after close()
--     (sendto makes a new socket); a kill outside a receive leaves the
--     socket open, and a new reader finds the queue intact;
--   * sent = received + "" results + lost with a closed socket, and at
--     the end no socket, thread, descriptor or unix socket file is left.
-- A contract violation (a wrong return value) is recorded and the run
-- goes on; the test then fails listing them, and any path of the counted
-- ones that the run never took. A fixed seed (CS_UDP_SEED picks another;
-- CS_UDP_COUNTS=1 prints the counts).
local helper = require "spec.helper"
local net = require "spec.support.net"
local cs = helper.cs
local spawn, wait, kill = cs.thread.spawn, cs.thread.wait, cs.thread.kill
local prng = helper.prng

local SEED = tonumber(os.getenv("CS_UDP_SEED")) or 21
local SLOTS = { "udp", "udp", "udp", "unix", "unix" } -- the receivers
local SENDERS = { { "udp", false }, { "udp", true }, { "udp", false },
                  { "udp", true }, { "unix", false }, { "unix", true } }
-- what a receiver may have queued: at most MAXQ datagrams and BUDGET
-- bytes, each counted as 2 * len + 2048 (more than the kernel charges),
-- well under the receive buffer (212992 bytes by default)
local MAXQ, BUDGET = 8, 150000
local TIMEOUTS = { 1, 1, 2, 2.7, 3, 5, 5, 20 } -- ms (2.7: 2)
-- ms: a receive that must not time out while a datagram waits
local LONG = 250 * helper.slack
local short_io = os.getenv("CS_SHORT_IO") == "1"

local state, counts

-- a yield, a short sleep, or nothing
local function pause(rand)
  local p = rand(3)
  if p == 1 then cs.sleep(0) elseif p == 2 then
    cs.sleep(rand(0, 2) / 1000)
  end
end

local function count(k, n)
  counts[k] = (counts[k] or 0) + (n or 1)
end

-- a model failure: recorded (the first one is reported), every socket
-- closed so that every thread ends, and raised
local function fail(fmt, ...)
  local msg = ("seed %d: " .. fmt):format(SEED, ...)
  if not state.failed then
    state.failed = debug.traceback(msg, 2)
    state.abort = true
    for s in pairs(state.socks) do s:close() end
  end
  error(msg, 0)
end

local function check(cond, fmt, ...)
  if not cond then fail(fmt, ...) end
end

-- a wrong return value: recorded, the run goes on
local function violation(label, fmt, ...)
  local v = state.violations[label]
  if not v then
    v = { n = 0, first = fmt:format(...) }
    state.violations[label] = v
    state.vorder[#state.vorder + 1] = label
  end
  v.n = v.n + 1
end

local function new_udp()
  local s = cs.socket.udp()
  state.socks[s] = true -- (weak: for the abort)
  return s
end

local function show(...)
  local t = table.pack(...)
  for i = 1, t.n do
    local v = t[i]
    t[i] = type(v) == "string" and ("%q"):format(v:sub(1, 40))
      or tostring(v)
  end
  return table.concat(t, ", ", 1, t.n)
end

-- "ready" (woken, not yet run), "parked", ... (from cs.dump())
local function state_of(th)
  local addr = tostring(th):match("0x%x+")
  for line in cs.dump():gmatch("[^\n]+") do
    local a, st = line:match("^%a[%a ]* (0x%x+): (%a+)")
    if a == addr then return st end
  end
end

-- {====== datagrams and the model of a receiver's queue ======

-- bytes that datagrams are cut from
local BASE
local function make_base()
  local rand, t = prng(SEED + 77), {}
  for i = 1, 4096 + 70000 do t[i] = string.char(rand(0, 255)) end
  BASE = table.concat(t)
end

-- the datagram number seq of sender sid, len bytes: the sender's letter,
-- seq and len (4 bytes each), then bytes of BASE from an offset that
-- depends on both; a shorter one is the start of that header
local function datagram(sid, seq, len)
  local head = string.char(64 + sid) .. string.pack(">I4I4", seq, len)
  if len <= #head then return head:sub(1, len) end
  local k = (sid * 7919 + seq * 104729) % 4096 + 1
  return head .. BASE:sub(k, k + len - #head - 1)
end

local function dgname(d)
  if #d >= 9 then
    local seq, len = string.unpack(">I4I4", d, 2)
    return ("%s#%d(%d bytes, %d here)"):format(d:sub(1, 1), seq, len, #d)
  end
  return ("%q"):format(d)
end

local function cost(len) return 2 * len + 2048 end

-- the datagrams in rx's kernel queue (a "" result took one, unknown)
local function waiting(rx)
  return rx.npending - rx.any - rx.empty
end

local function room(rx, len)
  return not rx.dead and rx.npending < MAXQ
    and rx.cost + cost(len) <= BUDGET
end

-- a send to rx returned 1
local function queued(rx, sid, seq, data, from)
  local q = rx.q[sid]
  if not q then q = {} rx.q[sid] = q end
  q[#q + 1] = { data = data, seq = seq, from = from }
  rx.npending = rx.npending + 1
  rx.cost = rx.cost + cost(#data)
  if #data == 0 then rx.nempty = rx.nempty + 1 end
  count("sent")
end

local function unqueue(rx, q)
  local d = table.remove(q, 1)
  rx.npending = rx.npending - 1
  rx.cost = rx.cost - cost(#d.data)
  if #d.data == 0 then rx.nempty = rx.nempty - 1 end
end

-- the "" results (any: from receive(0), empty: from an empty datagram)
-- can stand for datagrams still queued in the model
local function feasible(rx)
  check(rx.any + rx.empty <= rx.npending and rx.empty <= rx.nempty,
        "receiver %s: %d \"\" results (%d of size 0) but only %d "
        .. "datagrams queued (%d empty): one was invented or received "
        .. "twice", rx.name, rx.any + rx.empty, rx.any, rx.npending,
        rx.nempty)
end

-- rx is closed: what it had queued is lost
local function die(rx)
  if rx.dead then return end
  rx.dead = true
  feasible(rx)
  count("lost_with_socket", waiting(rx))
end

local function heads(rx)
  local t = {}
  for sid, q in pairs(rx.q) do
    if q[1] then
      t[#t + 1] = ("%s: %d queued, first %s"):format(string.char(64 + sid),
                                                     #q, dgname(q[1].data))
    end
  end
  return table.concat(t, "; ")
end

-- r (a packed result) came from a receive of size n on rx
local function take(rx, r, n, from)
  local got = r[1]
  check(type(got) == "string" and #got <= n,
        "receiver %s: receive(%d) returned %s", rx.name, n, show(got))
  count("received_calls")
  if got == "" then
    if n == 0 then rx.any = rx.any + 1 else rx.empty = rx.empty + 1 end
    count("ambiguous")
    feasible(rx)
    return
  end
  -- the candidates: the datagrams of its sender that got matches, each
  -- after datagrams that "" results may have taken (a few bytes may
  -- match more than one: receivefrom's address then tells)
  local sid = got:byte(1) - 64
  local q = rx.q[sid] or {}
  local any, empty, cands = rx.any, rx.empty, {}
  for j = 1, #q do
    local d = q[j]
    if got == d.data:sub(1, n) then
      cands[#cands + 1] = { j = j, any = any, empty = empty }
    end
    -- d can be passed only if a "" result took it
    if #d.data == 0 and empty > 0 then
      empty = empty - 1
    elseif any > 0 then
      any = any - 1
    else
      break
    end
  end
  local c = cands[1]
  check(c, "receiver %s: receive(%d) returned %s, which is no datagram "
        .. "sent there or not the next one of its sender (corrupted, "
        .. "invented, received twice or out of order); queued: %s",
        rx.name, n, dgname(got), heads(rx))
  if from then
    count("receivefrom")
    local function sent_from(k)
      local f = q[k.j].from
      return r.n == f.n + 1 and r[2] == f[1] and r[3] == f[2]
    end
    for _, k in ipairs(cands) do
      if sent_from(k) then c = k break end
    end
    local f = q[c.j].from
    check(sent_from(c), "receiver %s: receivefrom gave %s for %s, sent "
          .. "from %s", rx.name, show(table.unpack(r, 2, r.n)),
          dgname(q[c.j].data), show(table.unpack(f, 1, f.n)))
  end
  local d = q[c.j]
  for _ = 1, c.j - 1 do unqueue(rx, q) end -- what "" results took
  rx.any, rx.empty = c.any, c.empty
  unqueue(rx, q)
  count("received")
  if #got < #d.data then count("truncated") end
  if #d.data > 65536 then count("cut_at_64k") end
end

-- }======


-- {====== receivers ======

-- a random size for receive: the argument and the size it stands for
local function pick_size(rand)
  local r = rand(100)
  if r <= 20 then return nil, 65536
  elseif r <= 22 then return 0, 0
  elseif r <= 40 then local n = rand(1, 12) return n, n
  elseif r <= 60 then local n = rand(13, 400) return n, n
  elseif r <= 78 then local n = rand(401, 12000) return n, n
  elseif r <= 86 then return 65536, 65536
  elseif r <= 90 then
    return ({ 100000, -1, 1e9, 0 / 0 })[rand(4)], 65536 -- the most
  elseif r <= 95 then local n = rand(1, 9000) return n + 0.75, n
  else local n = rand(1, 500) return tostring(n), n
  end
end

-- the result r of the reader's receive, once the manager closed rx
local function closed_result(rx, r)
  if r[1] == nil and r[2] == "closed" then
    count("closed_wakeups")
  elseif r[1] == nil and r[2] == "timeout" and rx.timeout_ok then
    count("closed_after_timeout")
  else
    violation(rx.close_sendto and "close+sendto" or "close",
              "a receive %s when another thread closed its socket%s "
              .. "returned %s, not nil, \"closed\"",
              rx.close_state == "ready" and "woken (not yet run)"
                or "parked",
              rx.close_sendto and " and called sendto on the object "
                .. "(a new socket)" or "",
              show(table.unpack(r, 1, r.n)))
  end
end

local function reader(rx)
  local rand = prng(SEED * 17 + rx.serial * 7)
  while true do
    if state.abort then return "abort" end
    if rx.closing then return "closed" end
    local queue = waiting(rx)
    local t
    if state.draining then
      t = queue > 0 and LONG or 20 * helper.slack
    elseif rx.want_long or (queue > 0 and rand(8) == 1) then
      t = LONG
    else
      t = TIMEOUTS[rand(#TIMEOUTS)]
    end
    local size, n = pick_size(rand)
    local from = rand(4) == 1
    rx.sock:settimeout(t)
    rx.cur_timeout = t
    rx.reading = true
    local r
    local function call()
      if from then return table.pack(rx.sock:receivefrom(size)) end
      return table.pack(rx.sock:receive(size))
    end
    local how = rand(6)
    if how == 1 then -- parked inside a user coroutine (a kill cancels it)
      r = coroutine.wrap(call)()
    elseif how == 2 then
      local ok
      ok, r = pcall(call)
      check(ok, "receive raised %s", tostring(r))
    else
      r = call()
    end
    rx.reading = false
    if state.abort then return "abort" end
    if rx.closing then
      closed_result(rx, r)
      return "closed"
    end
    if r[1] then
      take(rx, r, n, from)
    elseif r[2] == "timeout" and r.n == 2 then
      check(t ~= LONG or queue == 0, "receiver %s: a receive with a %s ms "
            .. "timeout timed out while %d datagrams waited", rx.name,
            t, queue)
      count("timeouts")
      if state.draining and waiting(rx) == 0 then return "drained" end
    else
      fail("receiver %s: receive returned %s", rx.name,
           show(table.unpack(r, 1, r.n)))
    end
    pause(rand)
  end
end

-- a datagram to the sink from sock (from: the port it comes from, or
-- true: any); returns sendto's results
local function ping(sock, from)
  state.nping = state.nping + 1
  local id = "P" .. state.nping
  state.pings[id] = from
  state.pings_out = state.pings_out + 1
  local n, err = sock:sendto(id, "127.0.0.1", state.sink_port)
  if n ~= 1 then
    state.pings[id] = nil
    state.pings_out = state.pings_out - 1
  else
    count("pings")
  end
  return n, err
end

-- a new socket for slot m, and its reader (a child of m's thread)
local function new_rx(m)
  state.serial = state.serial + 1
  local rx = { slot = m, family = m.family, q = {}, npending = 0,
               nempty = 0, cost = 0, any = 0, empty = 0,
               serial = state.serial }
  local s = new_udp()
  if m.family == "unix" then
    rx.path = net.unix_path()
    check(s:bind("unix:" .. rx.path) == 1, "bind %s", rx.path)
    rx.name = ("%d (unix %d)"):format(m.id, rx.serial)
  else
    -- never a port a receiver had (senders may still send to it)
    local spare = {}
    while true do
      check(s:bind("127.0.0.1", 0) == 1, "bind")
      local _, port = s:getsockname()
      if not state.ports[port] then
        state.ports[port] = true
        rx.port = port
        break
      end
      spare[#spare + 1] = s
      s = new_udp()
    end
    for _, x in ipairs(spare) do x:close() end
    rx.name = ("%d (port %d)"):format(m.id, rx.port)
  end
  rx.sock = s
  m.rx = rx
  rx.reader = spawn(reader, rx)
  count("receivers")
  return rx
end

-- a datagram of sender tx ({sid, seq, sock}) to rx, if rx has room
local function inject(tx, rx, rand)
  local len = rand(1, 64)
  if not room(rx, len) then return false end
  if not tx.sock then tx.sock = new_udp() end
  local ok, err
  if rx.family == "unix" then
    ok, err = tx.sock:setpeername("unix:" .. rx.path)
  else
    ok, err = tx.sock:setpeername("127.0.0.1", rx.port)
  end
  check(ok == 1, "setpeername to %s: %s", rx.name, show(ok, err))
  tx.from = table.pack(tx.sock:getsockname())
  tx.seq = tx.seq + 1
  local data = datagram(tx.sid, tx.seq, len)
  local n, e = tx.sock:send(data)
  check(n == 1, "send to %s: %s", rx.name, show(n, e))
  queued(rx, tx.sid, tx.seq, data, tx.from)
  return true
end

-- what a kill that closed rx's socket left
-- after a kill in receive: the unix file the socket was bound to (if
-- any) is gone, as after close()
local function file_gone(path)
  if path and net.exists(path) then
    violation("kill leaves the unix file", "a kill of a thread parked in "
              .. "receive on a socket bound to %s closed it but left the "
              .. "file (close() removes it)", path)
    os.remove(path)
  end
end

local function after_kill(rx)
  local a, b = rx.sock:receive()
  check(a == nil and b == "closed", "receive after the kill: %s",
        show(a, b))
  a, b = rx.sock:close()
  check(a == nil and b == "closed", "close after the kill: %s",
        show(a, b))
  file_gone(rx.path)
end

-- kills rx's reader, parked in a receive (or woken, not yet run)
local function kill_reader(rx, what)
  local st = state_of(rx.reader)
  local k, kerr = kill(rx.reader)
  check(k == 1, "kill of a reader in receive: %s", show(k, kerr))
  rx.reader, rx.reading = nil, false
  count(what or (st == "ready" and "kill_woken" or "kill_parked"))
  die(rx)
  after_kill(rx)
end

-- closes rx while its reader is in a receive; with_sendto: then uses the
-- object again (sendto makes a new socket) before the reader runs
local function close_rx(rx, with_sendto)
  local st = state_of(rx.reader)
  rx.closing, rx.close_state, rx.close_sendto = true, st, with_sendto
  -- woken by its own timeout, the reader may say "timeout"
  rx.timeout_ok = st == "ready" and rx.cur_timeout ~= LONG
  check(rx.sock:close() == 1, "close")
  local a, b = rx.sock:close()
  check(a == nil and b == "closed", "close again: %s", show(a, b))
  die(rx)
  if with_sendto then
    local n, err = ping(rx.sock, true)
    check(n == 1, "sendto on a closed socket: %s", show(n, err))
  end
  local ok, v = wait(rx.reader)
  rx.reader = nil
  if state.abort then return end
  check(ok and v == "closed", "the reader: %s", show(ok, v))
  if with_sendto then check(rx.sock:close() == 1, "close the new one") end
  count(st == "ready" and "close_woken" or "close_parked")
  if rx.path and net.exists(rx.path) then
    fail("close() left %s", rx.path)
  end
end

-- kills rx's reader outside a receive: the socket stays open
local function kill_idle_reader(rx, rand)
  local k, kerr = kill(rx.reader)
  check(k == 1, "kill of a reader outside receive: %s", show(k, kerr))
  rx.reader = nil
  count("kill_idle")
  local r = rand(3)
  if r == 1 then -- a new reader: the queue must be intact
    rx.reader = spawn(reader, rx)
    count("reader_restarts")
  elseif r == 2 then
    die(rx)
    check(rx.sock:close() == 1, "close after a kill outside receive")
  else -- left to the collector
    die(rx)
    if rx.path then state.dropped_paths[#state.dropped_paths + 1] = rx.path end
    rx.sock, rx.dropped = nil, true
    count("dropped_receivers")
  end
end

local function triggered(rx, what)
  count("triggers_received")
  if rx.dead or not rx.reading then
    count("triggers_missed")
    return
  end
  if state_of(rx.reader) == "ready" then count("woken_" .. what) end
  if what == "kill" then
    kill_reader(rx)
  else
    close_rx(rx, what == "sendto")
  end
end

local function act(m, rx, rand)
  local a = rand(100)
  -- what the supervisor asked for (so that each run does some)
  local req = m.request
  if req and (req == "kill_idle") == not rx.reading then
    m.request = nil
    a = ({ kill = 1, kill_after_send = 3, close = 5, kill_idle = 1 })[req]
  end
  if not rx.reading then
    if a <= 2 then kill_idle_reader(rx, rand) end
  elseif a <= 2 then
    kill_reader(rx)
  elseif a <= 4 then
    -- the datagram that will wake it is queued; killed in the same turn
    if inject(m.tx, rx, rand) then kill_reader(rx, "kill_after_send") end
  elseif a <= 7 then
    close_rx(rx, rx.family == "udp" and rand(3) == 1)
  elseif a <= 12 and rx.family == "udp" then
    -- sendto is allowed while a thread is parked in receive
    local n, err = ping(rx.sock, rx.port)
    check(n == 1, "sendto while parked: %s", show(n, err))
  end
end

-- after the run: the reader takes what is queued and ends
local function drain(rx)
  local ok, v = wait(rx.reader)
  rx.reader = nil
  if state.abort then return end
  check(ok and v == "drained", "the reader: %s", show(ok, v))
  check(rx.npending == rx.any + rx.empty,
        "receiver %s: %d datagrams queued, but only %d \"\" results could "
        .. "have taken them: lost while the socket was open (%s)", rx.name,
        rx.npending, rx.any + rx.empty, heads(rx))
  die(rx)
  check(rx.sock:close() == 1, "close")
end

local function manager(m)
  local rand = prng(SEED * 13 + m.id * 101)
  while not state.abort do
    local rx = m.rx
    if state.draining then
      if rx and not rx.dead then drain(rx) end
      break
    end
    if not rx or rx.dead then rx = new_rx(m) end
    m.trig:settimeout(rand(1, 6))
    m.on_trigger = true
    local what, err = m.trig:receive()
    m.on_trigger = false
    if state.abort then break end
    if what then
      if not state.draining then triggered(rx, what) end
    elseif err == "timeout" then
      if not state.draining then act(m, rx, rand) end
    else
      fail("manager %d: trigger receive: %s", m.id, show(what, err))
    end
  end
  local rx = m.rx
  if rx and rx.reader then wait(rx.reader) end
  m.trig:close()
  if m.tx.sock then m.tx.sock:close() end
end

-- }======


-- {====== senders ======

local function pick_len(rand, family)
  local r = rand(100)
  if r <= 3 then return 0
  elseif r <= 25 then return rand(1, 12)
  elseif r <= 60 then return rand(13, 400)
  elseif r <= 93 then return rand(401, 9000)
  elseif r <= 98 then
    return family == "udp" and rand(9001, 65507) or rand(9001, 70000)
  end
  return family == "udp" and rand(65508, 70000) or rand(60000, 70000)
end

local function open_sender(sd)
  sd.sock = new_udp()
  sd.rx, sd.err_pending = nil, false
  if sd.bound then
    if sd.family == "unix" then
      sd.path = net.unix_path()
      check(sd.sock:bind("unix:" .. sd.path) == 1, "bind %s", sd.path)
    else
      check(sd.sock:bind("127.0.0.1", 0) == 1, "bind")
    end
  end
end

local function live_receivers(family)
  local t = {}
  for _, m in ipairs(state.managers) do
    local rx = m.rx
    if m.family == family and rx and not rx.dead and not rx.closing then
      t[#t + 1] = rx
    end
  end
  return t
end

local function repeer(sd, rand)
  local live = live_receivers(sd.family)
  if #live == 0 then return end
  local rx = live[rand(#live)]
  local ok, err
  if sd.family == "unix" then
    ok, err = sd.sock:setpeername("unix:" .. rx.path)
  else
    local f = rand(4)
    if f == 1 then
      ok, err = sd.sock:setpeername("localhost", rx.port)
    elseif f == 2 then -- the port in the host string wins
      ok, err = sd.sock:setpeername("127.0.0.1:" .. rx.port,
                                    rand(1, 65535))
    else
      ok, err = sd.sock:setpeername("127.0.0.1", rx.port)
    end
  end
  check(ok == 1, "sender %d: setpeername to %s: %s", sd.sid, rx.name,
        show(ok, err))
  sd.rx = rx
  sd.from = table.pack(sd.sock:getsockname())
  if not sd.bound then sd.err_pending = false end -- a new socket
  count("setpeername")
end

-- a "connection refused" (send or receive) of a UDP sender: the answer
-- to a datagram it sent to a dead receiver, and to that peer only
local function refused(sd, what)
  if not sd.err_pending then
    fail("sender %d: %s: \"connection refused\" but it sent nothing to a "
         .. "closed port", sd.sid, what)
  end
  sd.err_pending = false
  if sd.err_peer ~= sd.rx then
    violation("stale refused", "a bound socket that sent to a closed port "
              .. "and then setpeername to a live receiver: its %s "
              .. "returned nil, \"connection refused\" (the old peer's "
              .. "ICMP error)", what)
  else
    count("refused_" .. what)
  end
end

local function send_one(sd, rand)
  local rx = sd.rx
  local len = pick_len(rand, sd.family)
  local too_long = sd.family == "udp" and len > 65507
  if not rx.dead and not too_long and not room(rx, len) then
    len = rand(0, 12)
    if not room(rx, len) then
      cs.sleep(rand(1, 3) / 1000)
      return
    end
  end
  sd.seq = sd.seq + 1
  local data = datagram(sd.sid, sd.seq, len)
  local payload = data
  if len > 9 and rand(5) == 1 then -- a nested array makes the same bytes
    payload = { data:sub(1, 4), { data:sub(5, 9), { data:sub(10) } } }
  end
  local n, err = sd.sock:send(payload)
  if too_long and err == "message too long" and n == nil then
    count("too_long")
  elseif rx.dead then
    if n == 1 then
      -- (a dropped one lives until the collector comes)
      check(sd.family == "udp" or rx.dropped, "sender %d: a send to a "
            .. "closed unix socket returned 1", sd.sid)
      count("sent_to_dead")
      sd.err_pending, sd.err_peer = true, rx
    elseif sd.family == "udp" and err == "connection refused" then
      refused(sd, "send")
    elseif sd.family == "unix" and (err == "connection refused"
           or err == "transport endpoint is not connected") then
      count("unix_dead_send")
    elseif rx.dropped and err == "resource temporarily unavailable" then
      count("eagain") -- (its queue is full: nobody reads it)
    else
      fail("sender %d: send to closed receiver %s: %s", sd.sid, rx.name,
           show(n, err))
    end
  elseif n == 1 and not too_long then
    queued(rx, sd.sid, sd.seq, data, sd.from)
  elseif sd.family == "udp" and err == "connection refused" then
    refused(sd, "send")
  elseif sd.family == "unix" and err == "resource temporarily unavailable"
         and waiting(rx) >= 2 then
    count("eagain")
  else
    fail("sender %d: send of %d bytes to %s: %s", sd.sid, len, rx.name,
         show(n, err))
  end
end

-- a unix sender fills its receiver's queue: the send that finds it full
-- says "resource temporarily unavailable" and sends nothing
local function burst(sd, rand)
  local rx = sd.rx
  for _ = 1, 14 do
    local len = rand(0, 40)
    if rx.dead or rx.cost + cost(len) > BUDGET then return end
    sd.seq = sd.seq + 1
    local data = datagram(sd.sid, sd.seq, len)
    local n, err = sd.sock:send(data)
    if n == 1 then
      queued(rx, sd.sid, sd.seq, data, sd.from)
    else
      check(err == "resource temporarily unavailable" and waiting(rx) >= 2,
            "sender %d: burst send to %s: %s (%d queued)", sd.sid, rx.name,
            show(n, err), waiting(rx))
      count("eagain")
      return
    end
  end
end

local function sender_receive(sd, rand)
  sd.sock:settimeout(rand(1, 8))
  sd.reading = true
  local a, b = sd.sock:receive()
  sd.reading = false
  if state.abort then return end
  if a == nil and b == "timeout" then
    count("sender_timeouts")
  elseif a == nil and b == "connection refused" and sd.family == "udp" then
    refused(sd, "receive")
  else
    fail("sender %d: receive: %s", sd.sid, show(a, b))
  end
end

local function sender(sd)
  local rand = prng(SEED * 7 + sd.sid * 1009 + sd.incarnation * 31)
  while not state.stop and not state.abort do
    if not sd.sock then open_sender(sd) end
    local r = rand(100)
    local rx = sd.rx
    if not rx or (rx.dead and r <= 30) or r <= 3 then
      repeer(sd, rand)
    elseif r <= 5 then -- dropped for the collector
      if sd.path then
        state.dropped_paths[#state.dropped_paths + 1] = sd.path
      end
      sd.sock, sd.rx, sd.path = nil, nil, nil
      count("dropped_senders")
      if rand(2) == 1 then collectgarbage() end
    elseif r <= 11 then
      sender_receive(sd, rand)
    elseif r <= 12 and sd.family == "unix" and not rx.dead then
      burst(sd, rand)
    else
      send_one(sd, rand)
    end
    pause(rand)
  end
end

-- }======


-- {====== the supervisor ======

local function sink_reader(s)
  local rand = prng(SEED + 5)
  while true do
    local long = state.sink_stop and state.pings_out > 0
    s:settimeout(long and LONG or rand(2, 10))
    local d, ip, port = s:receivefrom()
    if state.abort then return end
    if d then
      local from = state.pings[d]
      check(from ~= nil, "the sink received %q: nobody sent it, or it "
            .. "came twice", d)
      check(ip == "127.0.0.1" and (from == true or port == from),
            "the sink received %s from %s:%s, sent from port %s", d,
            tostring(ip), tostring(port), tostring(from))
      state.pings[d] = nil
      state.pings_out = state.pings_out - 1
      count("pings_received")
    elseif ip == "timeout" then
      check(not long, "the sink: %d datagrams lost", state.pings_out)
      if state.sink_stop then return end
    else
      fail("the sink: receivefrom: %s", show(d, ip, port))
    end
  end
end

-- a second caller on a socket whose reader is in a receive
local function probe(rx)
  local s = rx.sock
  local a, b = s:receive()
  check(a == nil and b == "socket busy", "a second receive: %s", show(a, b))
  a, b = s:receivefrom(10)
  check(a == nil and b == "socket busy", "a second receivefrom: %s",
        show(a, b))
  a, b = s:setpeername("127.0.0.1", 9)
  check(a == nil and b == "socket busy", "setpeername: %s", show(a, b))
  a, b = s:bind("127.0.0.1", 0)
  check(a == nil and b == "socket busy", "bind: %s", show(a, b))
  a, b = s:send("x")
  check(a == nil and b == "closed", "send without a peer: %s", show(a, b))
  if rx.family == "udp" then
    a, b = ping(s, rx.port)
    check(a == 1, "sendto while a receive is parked: %s", show(a, b))
  end
  count("busy_probes")
end

-- makes slot m's manager run between the wake-up of its reader by a
-- datagram and the reader's turn: its trigger socket gets a datagram
-- first, then the receiver (both come out of the same poll, in order)
local function woken(m, rand)
  local rx = m.rx
  if not rx or rx.dead or rx.closing then return end
  if not (rx.reading and rx.cur_timeout == LONG) then
    rx.want_long = true
    return
  end
  rx.want_long = false
  if m.on_trigger and room(rx, 64) then
    local opts = rx.family == "udp" and { "kill", "close", "sendto" }
      or { "kill", "close" }
    local what = opts[rand(#opts)]
    check(state.trig_tx:setpeername("127.0.0.1", m.trig_port) == 1, "peer")
    check(state.trig_tx:send(what) == 1, "trigger")
    count("triggers")
  end
  inject(state.tx, rx, rand)
end

local function kill_sender(sd)
  if cs.thread.status(sd.th) ~= "running" then return end
  local in_receive = sd.reading
  check(kill(sd.th) == 1, "kill sender")
  sd.reading = false
  if in_receive then
    count("kill_sender_in_receive")
    local s = sd.sock
    local a, b = s:send("x")
    check(a == nil and b == "closed", "send after the kill: %s", show(a, b))
    if sd.family == "udp" then
      -- closed by the kill as by close(): sendto makes a new socket
      a, b = ping(s, true)
      if a == 1 then
        check(s:close() == 1, "close")
      else
        violation("sendto after kill", "sendto on a connected socket "
                  .. "that a kill (parked in receive) closed returned %s; "
                  .. "after close() it returns 1", show(a, b))
        s:close()
      end
    end
    file_gone(sd.path)
    sd.sock, sd.rx, sd.path = nil, nil, nil
  else
    count("kill_sender_idle") -- its socket stays open: the next one uses it
  end
  sd.incarnation = sd.incarnation + 1
  sd.th = spawn(sender, sd)
end

-- sockets nobody closes: the collector does (a unix one's file too)
local function churn(rand)
  local paths = {}
  for _ = 1, rand(1, 4) do
    local s = cs.socket.udp()
    local k = rand(4)
    if k == 1 then
      check(s:bind("127.0.0.1", 0) == 1, "bind")
    elseif k == 2 then
      paths[#paths + 1] = net.unix_path()
      check(s:bind("unix:" .. paths[#paths]) == 1, "bind")
    elseif k == 3 then
      check(s:setpeername("127.0.0.1", state.sink_port) == 1, "peer")
    end
  end
  return paths
end

local function gc_churn(rand)
  local paths = churn(rand)
  collectgarbage()
  collectgarbage()
  for _, p in ipairs(paths) do
    check(not net.exists(p), "a collected socket left %s", p)
  end
  count("gc_churns")
end

local function wait_ok(th, what)
  local ok, err = wait(th)
  if not ok and not state.abort then fail("%s failed: %s", what, err) end
end

local function supervise(rounds)
  local rand = prng(SEED)
  local sink = new_udp()
  check(sink:bind("127.0.0.1", 0) == 1, "bind")
  state.sink_port = select(2, sink:getsockname())
  local sink_th = spawn(sink_reader, sink)
  state.trig_tx = new_udp()
  state.tx = { sid = #SENDERS + 1, seq = 0 }
  local ok, err = pcall(function()
    for i, family in ipairs(SLOTS) do
      local m = { id = i, family = family, trig = new_udp(),
                  tx = { sid = #SENDERS + 1 + i, seq = 0 } }
      check(m.trig:bind("127.0.0.1", 0) == 1, "bind")
      m.trig_port = select(2, m.trig:getsockname())
      state.managers[i] = m
      m.th = spawn(manager, m)
    end
    for i, s in ipairs(SENDERS) do
      local sd = { sid = i, family = s[1], bound = s[2], seq = 0,
                   incarnation = 0 }
      state.senders[i] = sd
      sd.th = spawn(sender, sd)
    end
    for _ = 1, rounds do
      cs.sleep(rand(0, 3) / 1000)
      local a = rand(100)
      if a <= 10 then
        local rx = state.managers[rand(#SLOTS)].rx
        if rx and not rx.dead and not rx.closing and rx.reading then
          probe(rx)
        end
      elseif a <= 13 then
        local sd = state.senders[rand(#SENDERS)]
        if sd.reading then
          local x, y = sd.sock:receive()
          check(x == nil and y == "socket busy", "second receive: %s",
                show(x, y))
          count("busy_probes")
        end
      elseif a <= 25 then
        woken(state.managers[rand(#SLOTS)], rand)
      elseif a <= 28 then
        local sd = state.senders[rand(#SENDERS)]
        if rand(2) == 1 then -- one parked in a receive, if any
          for _, x in ipairs(state.senders) do
            if x.reading then sd = x break end
          end
        end
        kill_sender(sd)
      elseif a <= 30 then
        gc_churn(rand)
      elseif a <= 34 then
        state.managers[rand(#SLOTS)].request =
          ({ "kill", "kill_after_send", "close", "kill_idle" })[rand(4)]
      end
    end
    -- a sender killed while parked in its receive: the turns above meet
    -- one about 5 times a run, and a loaded machine made it 0 once; then
    -- wait for one to read (it does every 16 turns or so) and kill it
    for _ = 1, 2000 do
      if (counts.kill_sender_in_receive or 0) > 0 then break end
      for _, sd in ipairs(state.senders) do
        if sd.reading then kill_sender(sd) break end
      end
      cs.sleep(0.001)
    end
  end)
  if not ok and not state.failed then pcall(fail, "%s", err) end
  -- the end: senders stop, readers drain their queues
  state.stop = true
  for _, sd in ipairs(state.senders) do
    wait_ok(sd.th, "sender " .. sd.sid)
    if sd.sock then sd.sock:close() end
  end
  for _, m in ipairs(state.managers) do
    local rx = m.rx
    if rx and not rx.dead and not rx.closing then
      rx.want_long = false
      if rx.reading and rx.cur_timeout == LONG and not state.abort then
        inject(state.tx, rx, rand) -- (wakes it)
      end
    end
  end
  state.draining = true
  for _, m in ipairs(state.managers) do wait_ok(m.th, "manager " .. m.id) end
  state.sink_stop = true
  wait_ok(sink_th, "the sink")
  sink:close()
  state.trig_tx:close()
  if state.tx.sock then state.tx.sock:close() end
end

-- }======


describe("udp model", function()
  after_each(helper.after_each)

  it("random datagrams, receives, kills and closes keep every invariant",
     function()
    local rounds = math.floor(500 * helper.scale) + 100
    make_base()
    helper.run(function() -- (the loop's own descriptors, the resolver's)
      local s = cs.socket.udp()
      assert(s:setpeername("localhost", 9))
      s:close()
    end)
    local fds = helper.fds()
    counts = {}
    state = { socks = setmetatable({}, { __mode = "k" }), violations = {},
              vorder = {}, managers = {}, senders = {}, ports = {},
              pings = {}, nping = 0, pings_out = 0, serial = 0,
              dropped_paths = {} }

    net.run(supervise, { timeout = 60 }, rounds)
    collectgarbage()
    collectgarbage()

    if os.getenv("CS_UDP_COUNTS") == "1" then helper.write_counts(counts) end
    assert(not state.failed, state.failed)
    -- what is wrong: contract violations, paths never taken, datagrams
    -- unaccounted for, what is left open
    local bad = {}
    for _, label in ipairs(state.vorder) do
      local v = state.violations[label]
      bad[#bad + 1] = ("[%s] %d times; first: %s"):format(label, v.n,
                                                          v.first)
    end
    local function c(k) return counts[k] or 0 end
    local need = { "received", "truncated", "timeouts", "busy_probes",
                   "closed_wakeups", "setpeername", "receivefrom",
                   "pings_received", "dropped_senders", "sent_to_dead",
                   "kills" }
    counts.kills = c("kill_parked") + c("kill_woken") + c("kill_after_send")
    if helper.scale >= 1 then
      for _, k in ipairs({ "ambiguous", "too_long", "eagain", "kill_parked",
                           "kill_after_send", "kill_idle",
                           "kill_sender_in_receive", "close_parked",
                           "refused_send", "unix_dead_send",
                           "lost_with_socket", "cut_at_64k",
                           "gc_churns" }) do
        need[#need + 1] = k
      end
      if not short_io then
        need[#need + 1] = "kill_woken"
        need[#need + 1] = "close_woken"
      end
    end
    for _, k in ipairs(need) do
      if c(k) == 0 then
        bad[#bad + 1] = ("[path] the workload never took path %q"):format(k)
      end
    end
    local took = c("received") + c("ambiguous") + c("lost_with_socket")
    if c("sent") ~= took then
      bad[#bad + 1] = ("[conservation] sent %d, received %d + %d \"\" "
                       .. "+ %d lost with their socket"):format(c("sent"),
        c("received"), c("ambiguous"), c("lost_with_socket"))
    end
    for _, p in ipairs(state.dropped_paths) do
      if net.exists(p) then
        bad[#bad + 1] = "[collector] a collected socket left " .. p
      end
    end
    if helper.fds() ~= fds then
      bad[#bad + 1] = ("[fds] %d descriptors open, %d before")
        :format(helper.fds(), fds)
    end
    assert(#bad == 0, ("seed %d:\n%s"):format(SEED, table.concat(bad, "\n")))
  end)
end)
