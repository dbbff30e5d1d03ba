-- A byte-stream model of the TCP cosocket's receives: a corosched peer
-- writes a known random stream (short lines, long runs without a line
-- end, many "--") in random chunks with random pauses, and a reader takes
-- it with a random sequence of receive(n), "*l", "*a", receiveany and
-- receiveuntil iterators (self-overlapping patterns too; with and without
-- a size, inclusive or not, some left after a chunk), each under a random
-- timeout, most of them short; over TLS too, the stream echoed by a
-- Python peer. Everything a call
-- returns, its partial data after a timeout included, plus what a
-- receive consumes without returning (a line's LF, a pattern), must put
-- the stream back together byte for byte: nothing lost, nothing twice,
-- whatever the chunking, the timeouts and the buffered state. Meanwhile
-- another thread checks that a second reader gets "socket busy reading"
-- and sends on the same socket, and some sessions are killed at a random
-- moment (what was read is then a prefix of the stream, and nothing is
-- left open). The other way, random sends (strings up to 200 KB, nested
-- arrays of strings and integers), a few under a timeout short enough to
-- expire, reach a peer that reads with random sizes and pauses as exactly
-- the bytes of the sends that succeeded (then a prefix of the one that
-- timed out), while a second writer gets "socket busy writing". A fixed
-- seed (CS_MODEL_SEED picks another); a mismatch reports the seed, the
-- offset and the last operations.
local helper = require "spec.helper"
local net = require "spec.support.net"
local cs = helper.cs
local spawn, wait, kill = cs.thread.spawn, cs.thread.wait, cs.thread.kill

local SEED = tonumber(os.getenv("CS_MODEL_SEED")) or 15
-- receiveuntil's patterns, self-overlapping ones among them; none can
-- start inside the stream's last bytes, "END\n"
local PATS = { "--", "--", "a-a", "aaa", "-b", "ab-ab", "x-", "---" }
-- how many times a second reader or writer met "socket busy ..."
local busy_seen = 0

local prng = helper.prng

-- the stream: pieces of short lines over "ab-\n" and runs of up to 5,000
-- bytes without a line end; it ends with a line end, so that no reader
-- holds a partial match of a pattern when the stream ends
local function make_stream(rand, len)
  local t, n = {}, 0
  local alphabet = { "a", "a", "a", "a", "b", "-", "-", "\n" }
  while n < len do
    local piece
    if rand(10) == 1 then
      piece = string.rep("x", rand(500, 5000))
    else
      local c = {}
      for i = 1, rand(1, 200) do c[i] = alphabet[rand(#alphabet)] end
      piece = table.concat(c)
    end
    t[#t + 1] = piece
    n = n + #piece
  end
  t[#t + 1] = "END\n"
  return table.concat(t)
end

-- the peer of one session: writes `stream` in random chunks with random
-- pauses, ends its sending half, and drains what the client sends until
-- the client closes
local function serve(c, stream, rand)
  local drain = spawn(function()
    c:settimeout(60000)
    while true do
      local d = c:receiveany(65536)
      if not d then return end
    end
  end)
  local sizes = { 1, 3, 17, 100, 1000, 1460, 9000 }
  local pos = 1
  while pos <= #stream do
    local n = rand(1, sizes[rand(#sizes)])
    local ok, err = c:send(stream:sub(pos, pos + n - 1))
    if not ok then
      -- the reader's thread was killed: the client socket is gone
      break
    end
    pos = pos + n
    local r = rand(4)
    if r == 1 then cs.sleep(rand(0, 3) / 1000) elseif r == 2 then
      cs.sleep(0)
    end
  end
  c:shutdown("send")
  wait(drain)
  c:close()
end

-- the reader of one session: puts what it reads back together in `got`;
-- returns true when it saw the end of the stream. With `limit` (a peer
-- that never closes: TLS), it reads `limit` bytes, no "*a"
local function read_all(sock, rand, log, state, got, limit)
  local total = 0
  local function put(s)
    got[#got + 1] = s
    total = total + #s
  end
  -- (with a limit, the end of the stream is no close: an operation that
  -- wants more than is left waits for its whole timeout)
  local timeouts = { 1, 1, 2, 5, 20, limit and 50 or 1000 }
  local function check(cond, what, ...)
    if not cond then
      local a, b, c = ...
      error(("%s: returned %s, %s, %s; the last calls: %s"):format(what,
        tostring(a), tostring(b), tostring(c),
        table.concat(log, " | ", math.max(1, #log - 12))), 0)
    end
  end
  -- calls op and records its results; returns them
  local function call(name, f, ...)
    state.reading = true
    local a, b, c = f(...)
    state.reading = false
    log[#log + 1] = ("%s -> %s %s %s"):format(name, a and #a or "nil",
                                               tostring(b),
                                               c and #c or "nil")
    if #log > 64 then table.remove(log, 1) end
    return a, b, c
  end
  -- an error result: "timeout" (go on) or "closed" (the end): partial kept
  local function failed(name, a, b, c)
    check(a == nil and (b == "timeout" or b == "closed")
          and type(c) == "string", name .. ": unexpected result", a, b, c)
    put(c)
    return b == "closed"
  end

  while true do
    if limit and total >= limit then return true end
    sock:settimeout(timeouts[rand(#timeouts)])
    local op = rand(100)
    if op > 98 and limit then op = 1 end
    if op <= 30 then
      local n = rand(1, rand(2) == 1 and 20 or 3000)
      if limit then n = math.min(n, limit - total) end
      local a, b, c = call("receive(" .. n .. ")", sock.receive, sock, n)
      if a then
        check(#a == n, "receive(n): wrong length", a, b, c)
        put(a)
      elseif failed("receive(n)", a, b, c) then
        return true
      end
    elseif op <= 50 then
      local a, b, c = call("*l", sock.receive, sock, "*l")
      if a then
        check(not a:find("\n", 1, true), "*l: a LF inside", a, b, c)
        put(a)
        put("\n")
      elseif failed("*l", a, b, c) then
        return true
      end
    elseif op <= 62 then
      local max = rand(1, rand(2) == 1 and 10 or 70000)
      local a, b, c = call("any(" .. max .. ")", sock.receiveany, sock, max)
      if a then
        check(#a >= 1 and #a <= max, "receiveany: wrong length", a, b, c)
        put(a)
      else
        check(a == nil and (b == "timeout" or b == "closed"),
              "receiveany: unexpected result", a, b, c)
        if c then put(c) end
        if b == "closed" then return true end
      end
    elseif op <= 98 then
      -- an iterator, used until it reaches pat or the stream ends (or,
      -- now and then, left after a whole chunk): after a timeout it holds
      -- the bytes of a partial match (OpenResty's rule), which only its
      -- next calls give back
      local inclusive = rand(2) == 1
      local pat = PATS[rand(#PATS)]
      local it = sock:receiveuntil(pat, { inclusive = inclusive })
      local size = rand(3) == 1 and rand(1, 50) or nil
      local name = ("until(%q,%s,%s)"):format(pat, tostring(size),
                                              tostring(inclusive))
      while true do
        local a, b, c
        if size then a, b, c = call(name, it, size)
        else a, b, c = call(name, it) end -- (it(nil) raises)
        if a then
          if size then
            -- the bytes of a failed partial match go out whole (as in
            -- OpenResty), even past the size
            check(#a <= size + #pat - 1 + (inclusive and #pat or 0),
                  name .. ": a chunk over its size", a, b, c)
            put(a)
            -- left after a whole chunk (so the pattern was not met): the
            -- bytes of a partial match it holds go to the next reader
            if not inclusive and #a == size and rand(4) == 1 then break end
          else
            if inclusive then
              check(a:sub(-#pat) == pat, name .. ": no pattern", a, b, c)
              put(a)
            else
              put(a)
              put(pat)
            end
            break
          end
        elseif size and b == nil then -- the boundary, after the last chunk
          check(c == nil, name .. ": boundary with data", a, b, c)
          if not inclusive then put(pat) end
          break
        elseif failed(name, a, b, c) then
          return true
        end
        if limit and total >= limit then return true end
        -- (a timeout, or a chunk: the same iterator goes on)
        sock:settimeout(timeouts[rand(#timeouts)])
      end
    else
      sock:settimeout(1000)
      local a, b, c = call("*a", sock.receive, sock, "*a")
      if a then
        put(a)
        return true
      elseif failed("*a", a, b, c) then
        return true
      end
    end
    local r = rand(8)
    if r == 1 then
      cs.sleep(0)
    elseif r == 2 then
      cs.sleep(rand(1, 3) / 1000)
    end
  end
end

-- one session on its own connection; kill_after: seconds after which the
-- reader is killed, or nil. Returns the stream, what the reader put back
-- together and whether it read to the end
local function session(port, seed, len, kill_after, streams)
  local stream = make_stream(prng(seed), len)
  local idx = #streams + 1
  streams[idx] = { stream = stream, seed = seed }
  local rand = prng(seed + 1)
  local sock = cs.socket.tcp()
  sock:settimeout(5000 * helper.slack)
  assert(sock:connect("127.0.0.1", port))
  assert(sock:send(idx .. "\n"))
  local log = { "seed " .. seed }
  local state, got = { reading = false, done = false }, {}

  local reader = spawn(read_all, sock, rand, log, state, got)
  -- a second reader and a writer on the same socket, meanwhile
  local other = spawn(function()
    local orand = prng(seed + 2)
    while not state.done do
      if state.reading then
        -- the reader is parked in a receive (it sets `reading` around
        -- its calls, and only this thread runs in between)
        local a, b = sock:receive(1)
        assert(a == nil and b == "socket busy reading",
               "a second reader: " .. tostring(a) .. " " .. tostring(b))
        a, b = sock:receiveany(10)
        assert(a == nil and b == "socket busy reading",
               "a second receiveany: " .. tostring(a) .. " " .. tostring(b))
        busy_seen = busy_seen + 1
      end
      if orand(3) == 1 then
        -- "closed" once the reader met the end (a read error closes the
        -- socket) or was killed in a receive
        local n, err = sock:send("ping")
        assert(n == 4 or err == "closed",
               "send: " .. tostring(n) .. " " .. tostring(err))
      end
      cs.sleep(orand(0, 2) / 1000)
    end
  end)

  local ended = false
  if kill_after then
    cs.sleep(kill_after)
    if cs.thread.status(reader) ~= "zombie" then
      assert.equal(1, kill(reader))
      state.reading = false
    end
  end
  if cs.thread.status(reader) ~= "dead" then
    local ok, e = wait(reader)
    if not ok then
      state.done = true
      wait(other)
      sock:close()
      error(e, 0)
    end
    ended = e
  end
  state.done = true
  assert(wait(other))
  sock:close()
  return stream, table.concat(got), ended
end

-- a random argument for send: a string, or a nested array of strings and
-- integers; returns it and the bytes it stands for
local function make_piece(rand, max)
  local block = {}
  for i = 1, 64 do block[i] = string.char(rand(0, 255)) end
  local base = table.concat(block)
  local function str(n)
    local k = rand(1, 64)
    return base:rep(n // 64 + 2):sub(k, k + n - 1)
  end
  if rand(10) <= 6 then
    local v = str(rand(3) == 1 and rand(1, max) or rand(0, 300))
    return v, v
  end
  local parts = {}
  local function array(depth)
    local t = {}
    for i = 1, rand(1, 5) do
      local r = rand(4)
      if r == 1 and depth < 4 then
        t[i] = array(depth + 1)
      elseif r == 2 then
        t[i] = rand(-100000, 100000)
        parts[#parts + 1] = tostring(t[i])
      else
        t[i] = str(rand(0, 50))
        parts[#parts + 1] = t[i]
      end
    end
    return t
  end
  local t = array(1)
  return t, table.concat(parts)
end

-- one connection: the client sends random pieces, the peer reads; returns
-- what was sent whole, the piece whose send timed out (or nil) and what
-- the peer received
local function send_session(seed, npieces, first)
  local rand = prng(seed)
  local prand = prng(seed + 1)
  local max = net.short_io and 2000 or math.floor(200000 / helper.slack)
  local c, p = net.pair()
  local sent, cut = {}, nil
  local state = { writing = false, done = false }

  local peer = spawn(function()
    local got = {}
    p:settimeout(10000 * helper.slack)
    if first then cs.sleep(0.05) end
    while true do
      local r, d, err, partial = prand(3)
      if r == 1 then
        d, err, partial = p:receive(prand(1, 70000))
      elseif r == 2 then
        d, err = p:receiveany(prand(1, 70000))
      else
        d, err, partial = p:receive("*a")
      end
      if d then
        got[#got + 1] = d
        if r == 3 then break end
      else
        assert(err == "closed", "the peer: " .. tostring(err))
        got[#got + 1] = partial
        break
      end
      local pause = prand(20)
      if pause <= 4 then
        cs.sleep(prand(0, 2) / 1000)
      elseif pause == 5 then -- longer than a short send timeout
        cs.sleep(prand(6, 12) / 1000)
      end
    end
    p:close()
    return table.concat(got)
  end)
  local other = spawn(function()
    local orand = prng(seed + 2)
    while not state.done do
      if state.writing then -- the writer is parked in send
        local n, err = c:send("X")
        assert(n == nil and err == "socket busy writing",
               "a second writer: " .. tostring(n) .. " " .. tostring(err))
        busy_seen = busy_seen + 1
      end
      cs.sleep(orand(0, 2) / 1000)
    end
  end)

  for i = 1, npieces do
    local piece, bytes = make_piece(rand, max)
    -- now and then more than the kernel's buffers hold: the send parks
    -- until the peer reads (the first session starts so while its peer
    -- waits, and its second writer meets a parked one), or times out
    if (first and i == 1) or rand(25) == 1 then
      piece = string.rep(string.char(rand(97, 122)),
                         net.big(16 * 1024 * 1024))
      bytes = piece
    end
    c:settimeout((i > 1 and rand(10) == 1) and rand(1, 5)
                 or 10000 * helper.slack)
    state.writing = true
    local n, err = c:send(piece)
    state.writing = false
    if n then
      assert(n == #bytes, "send returned " .. tostring(n) .. " for "
             .. #bytes .. " bytes")
      sent[#sent + 1] = bytes
    else
      assert(err == "timeout", "send: " .. tostring(err))
      cut = bytes
      break
    end
    if rand(6) == 1 then cs.sleep(rand(0, 2) / 1000) end
  end
  state.done = true
  assert(wait(other))
  c:close()
  local ok, got = wait(peer)
  assert(ok, got)
  return table.concat(sent), cut, got
end

-- one session over TLS to the echo peer: a writer thread sends the
-- stream in random pieces with random pauses, the reader takes the echo
-- back; returns the stream and what the reader put back together
local function tls_session(srv, cafile, seed, len)
  local stream = make_stream(prng(seed), len)
  local rand, wrand = prng(seed + 1), prng(seed + 2)
  local sock = cs.socket.tcp()
  sock:settimeout(5000 * helper.slack)
  assert(sock:setcafile(cafile))
  assert(sock:connect(srv.host, srv.port))
  assert(sock:sslhandshake(false, "localhost"))
  local log, state, got = { "seed " .. seed }, { reading = false }, {}
  local writer = spawn(function()
    local pos = 1
    while pos <= #stream do
      local n = wrand(1, ({ 1, 10, 200, 5000 })[wrand(4)])
      assert(sock:send(stream:sub(pos, pos + n - 1)))
      pos = pos + n
      if wrand(3) == 1 then cs.sleep(wrand(0, 3) / 1000) end
    end
  end)
  local reader = spawn(read_all, sock, rand, log, state, got, #stream)
  assert(wait(reader))
  assert(wait(writer))
  sock:close()
  return stream, table.concat(got)
end

local function first_difference(a, b)
  for i = 1, math.max(#a, #b) do
    if a:byte(i) ~= b:byte(i) then return i end
  end
end

describe("tcp receive model", function()
  after_each(helper.after_each)

  it("random receives under random timeouts put the stream back "
     .. "together, byte for byte", function()
    local rand = prng(SEED)
    local rounds = math.floor(8 * helper.scale) + 2
    local per_round = 4
    local len = math.floor(40000 / helper.slack)
    helper.run(function() cs.sleep(0) end) -- (the loop's own descriptors)
    local fds = helper.fds()
    local whole, killed = 0, 0
    busy_seen = 0

    helper.run(function()
      local srv = assert(cs.socket.listen("127.0.0.1", 0))
      local _, port = srv:getsockname()
      local streams = {}
      local acceptor = spawn(function()
        local peers = {}
        while true do
          local c = srv:accept()
          if not c then break end
          peers[#peers + 1] = spawn(function()
            c:settimeout(5000 * helper.slack)
            local st = streams[tonumber(assert(c:receive("*l")))]
            serve(c, st.stream, prng(st.seed + 3))
          end)
        end
        for _, p in ipairs(peers) do assert(wait(p)) end
      end)

      local ok, err = pcall(function()
      for round = 1, rounds do
        local ts = {}
        for s = 1, per_round do
          local kill_after = rand(5) == 1 and rand(0, 30) / 1000 or nil
          ts[s] = spawn(session, port, SEED * 1000 + round * 10 + s,
                        len + rand(0, 100), kill_after, streams)
        end
        for s = 1, per_round do
          local ok, stream, got, ended = wait(ts[s])
          assert(ok, stream)
          if got ~= stream:sub(1, #got) or (ended and got ~= stream) then
            local at = first_difference(stream, got)
            error(("seed %d, round %d, session %d: the stream differs at "
                   .. "byte %d of %d (%d read): expected %q, read %q")
              :format(SEED, round, s, at, #stream, #got,
                      stream:sub(at, at + 20), got:sub(at, at + 20)), 0)
          end
          if ended then whole = whole + 1 else killed = killed + 1 end
        end
      end
      end)
      srv:close() -- (also after a failure: the acceptor ends)
      assert(wait(acceptor))
      assert(ok, err)
    end, { timeout = 60 })

    assert.is_true(whole >= 1)
    assert.is_true(busy_seen >= 1)
    assert.equal(fds, helper.fds())
  end)

  it("over TLS too: random receives of an echoed stream", function()
    local tls = require "spec.support.tls"
    local ok, why = tls.available()
    if not ok then
      pending(why)
      return
    end
    local C = tls.certs()
    local srv = tls.server({ mode = "echo" })
    local rand = prng(SEED + 5)
    local sessions = math.floor(4 * helper.scale) + 2
    local len = math.floor(20000 / helper.slack)
    helper.run(function()
      local ts = {}
      for i = 1, sessions do
        ts[i] = spawn(tls_session, srv, C.ca_crt, SEED * 1000 + 700 + i,
                      len + rand(0, 100))
      end
      for i = 1, sessions do
        local ok2, stream, got = wait(ts[i])
        assert(ok2, stream)
        if got ~= stream then
          local at = first_difference(stream, got)
          error(("seed %d, TLS session %d: the stream differs at byte %d "
                 .. "of %d (%d read): expected %q, read %q")
            :format(SEED, i, at, #stream, #got, stream:sub(at, at + 20),
                    got:sub(at, at + 20)), 0)
        end
      end
    end, { timeout = 60 })
    srv:stop()
  end)

  it("random sends reach the peer as sent, byte for byte", function()
    local rand = prng(SEED + 7)
    local sessions = math.floor(6 * helper.scale) + 2
    helper.run(function() cs.sleep(0) end) -- (the loop's own descriptors)
    local fds = helper.fds()
    busy_seen = 0

    helper.run(function()
      local ts = {}
      for i = 1, sessions do
        ts[i] = spawn(send_session, SEED * 1000 + 500 + i, rand(5, 40),
                      i == 1)
      end
      for i = 1, sessions do
        local ok, all, cut, got = wait(ts[i])
        assert(ok, all)
        local expect_end = cut and #all + #cut or #all
        local good = got:sub(1, #all) == all and #got <= expect_end
          and (cut == nil and #got == #all
               or cut ~= nil and got:sub(#all + 1) == cut:sub(1, #got - #all))
        if not good then
          local whole = all .. (cut or "")
          local at = first_difference(whole, got) or #got + 1
          error(("seed %d, session %d: the peer received %d bytes, %d "
                 .. "sent whole%s; they differ at byte %d")
            :format(SEED, i, #got, #all,
                    cut and (" and " .. #cut .. " cut short") or "", at), 0)
        end
      end
    end, { timeout = 60 })

    assert.is_true(busy_seen >= 1)
    assert.equal(fds, helper.fds())
  end)
end)
