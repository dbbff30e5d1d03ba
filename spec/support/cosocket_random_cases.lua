-- Randomized differential cases for the TCP cosocket's read side: a
-- seeded, deterministic generator (plain Lua 5.1 code, so that OpenResty's
-- LuaJIT runs it as well as Lua 5.4) of connections and of what a client
-- does on them, and a runner that writes one line per step.
-- spec/support/record_cosocket_random.sh runs it in real OpenResty and
-- records the lines in spec/support/cosocket_random_recorded.txt; spec/71
-- runs it on corosched and compares.
--
-- A case is a connection to spec/support/script_peer.py (over TCP, a unix
-- socket or TLS) whose script sends chunks of a small alphabet ("a", "b",
-- "x", CR, LF), each chunk after reading one byte from the client (the
-- first one at once), and after the last one ends: FIN, close, reset, or
-- nothing (it reads until the client closes). The client runs a random
-- list of steps: receive(n) (also as a numeric string), receive("*l"),
-- receive(), receive("*a"), receiveany(n), receiveuntil(pattern [,
-- {inclusive = b}]) making iterators, calls of any iterator made so far
-- (with a size or not), "more" (sends the byte that lets the peer send its
-- next chunk, then sleeps 50 ms so that it has arrived), and at most one
-- last step: setkeepalive() or close(), then a receive (after a
-- setkeepalive that worked, a connect to the case's pool takes the
-- connection back: its getreusedtimes, then close).
--
-- Determinism by design: no byte is ever in flight when a read starts
-- (the peer sends only when told, and the client waits 50 ms after
-- telling it, and after connecting), so a read either finds what it needs in the kernel or
-- times out (settimeout(40) on every socket) with what was there. A read
-- that fails other than by "timeout" ends the case: after such an error
-- corosched closes the socket where OpenResty closes its read half only
-- (API.md), so what follows would differ by design.
local M = {}

M.SEED = 20261128
M.COUNT = 360
M.BATCH = 40 -- cases run at once (the peer's listen queue is 128)

local unpack = unpack or table.unpack
local concat = table.concat

---------------------------------------------------------------------------
-- random numbers: Park-Miller's minimal standard (exact in doubles and in
-- Lua 5.4 integers alike)

local function new_rng(seed)
  local s = seed % 2147483646 + 1
  -- an integer in [1, n]
  return function(n)
    s = s * 48271 % 2147483647
    return s % n + 1
  end
end

local function pick(rand, t) return t[rand(#t)] end

---------------------------------------------------------------------------
-- the generator

local LETTERS = { "a", "a", "a", "b", "b", "x", "\r", "\n", "\n" }
local PAT_LETTERS = { "a", "a", "b", "b", "\r", "\n" }
local PATTERNS = { "\r\n", "\n", "ab", "aab", "aba", "abab", "aaab",
                   "abaab", "\r\n\r\n", "ba", "xa" }

local function text(rand, n, letters)
  local t = {}
  for i = 1, n do t[i] = pick(rand, letters) end
  return concat(t)
end

local function chunk(rand)
  local r = rand(24)
  if r == 1 then return text(rand, 300 + rand(5000), LETTERS) end
  if r <= 3 then return "" end
  return text(rand, pick(rand, { 1, 1, 2, 2, 3, 4, 5, 7, 9, 12, 20 }),
              LETTERS)
end

local function pattern(rand)
  if rand(3) == 1 then return pick(rand, PATTERNS) end
  return text(rand, pick(rand, { 1, 1, 2, 2, 3, 3, 4, 6 }), PAT_LETTERS)
end

-- the peer's script for chunks and an ending ("c", "C", "R" or "")
local function script(chunks, ending)
  local steps = {}
  for i, c in ipairs(chunks) do
    if i > 1 then steps[#steps + 1] = "r:1" end
    steps[#steps + 1] = "w:" .. c:gsub("[%%%c ]", function(ch)
      return ("%%%02X"):format(ch:byte())
    end)
  end
  if ending ~= "" then
    steps[#steps + 1] = "r:1"
    steps[#steps + 1] = ending
  end
  return concat(steps, " ")
end

local function gen_case(rand, i)
  local c = { name = "case " .. i,
              transport = pick(rand, { "tcp", "tcp", "tcp", "unix", "tls" }) }
  local chunks = {}
  for j = 1, rand(5) do chunks[j] = chunk(rand) end
  c.ending = pick(rand, { "c", "c", "C", "R", "" })
  c.script = script(chunks, c.ending)
  -- "more" steps the peer answers: one per chunk after the first, one
  -- for the ending
  local mores = #chunks - 1 + (c.ending ~= "" and 1 or 0)
  local ops, iters = {}, 0
  for _ = 1, 4 + rand(10) do
    local r = rand(22)
    local op
    if r <= 3 then
      op = { "receive", pick(rand, { 0, 1, 1, 2, 3, 4, 5, 8, 13, 40, 6000 }) }
      if rand(6) == 1 then op[2] = tostring(op[2]) end
    elseif r <= 5 then
      op = { "receive", "*l" }
    elseif r == 6 then
      op = { "receive" }
    elseif r == 7 then
      op = { "receive", "*a" }
    elseif r <= 9 then
      op = { "receiveany", pick(rand, { 1, 2, 3, 5, 10, 100, 8192 }) }
    elseif r <= 11 or (r <= 16 and iters == 0) then
      if iters < 3 then
        iters = iters + 1
        local incl = rand(3)
        op = { "receiveuntil", pattern(rand), incl == 1 and true
               or incl == 2 and false or nil, incl == 3 }
      end
    elseif r <= 16 then
      op = { "call", rand(iters), rand(3) == 1 and rand(6) or nil }
    elseif mores > 0 then
      mores = mores - 1
      op = { "more" }
    end
    ops[#ops + 1] = op
  end
  local last = rand(8)
  if last == 1 then
    ops[#ops + 1] = { "setkeepalive" }
  elseif last == 2 then
    ops[#ops + 1] = { "close" }
  end
  local compact = {}
  for _, op in ipairs(ops) do
    if op then compact[#compact + 1] = op end
  end
  c.ops = compact
  return c
end

-- a generator of count items gen(rand, i), the same for a seed in
-- LuaJIT and Lua 5.4 (thread_random_cases.lua's too)
function M.seeded(gen)
  return function(seed, count)
    local rand = new_rng(seed)
    local items = {}
    for i = 1, count do items[i] = gen(rand, i) end
    return items
  end
end

-- the cases
M.generate = M.seeded(gen_case)

---------------------------------------------------------------------------
-- the runner (needs the `ngx` global)

local function describe_op(op, show)
  local k = op[1]
  if k == "receive" or k == "receiveany" then
    return k .. "(" .. (op[2] ~= nil and show(op[2]) or "") .. ")"
  elseif k == "receiveuntil" then
    return "u = receiveuntil(" .. show(op[2])
      .. (op[4] and "" or ", {inclusive = " .. show(op[3]) .. "}") .. ")"
  elseif k == "call" then
    return "u" .. op[2] .. "(" .. (op[3] and show(op[3]) or "") .. ")"
  end
  return k .. "()"
end

local function line(show, label, ...)
  local parts = { label .. ":" }
  for i = 1, select("#", ...) do
    parts[#parts + 1] = show((select(i, ...)))
  end
  return concat(parts, " ")
end

-- runs case c against peer ({ port, unix, tls }); returns its lines
function M.run(c, peer, show)
  local out = {}
  local pool = { pool = c.name }
  local function connect(s)
    if c.transport == "unix" then
      return s:connect("unix:" .. peer.unix, pool)
    end
    return s:connect("127.0.0.1",
                     c.transport == "tls" and peer.tls or peer.port, pool)
  end
  local sock = ngx.socket.tcp()
  local ok, err = connect(sock)
  if ok and c.transport == "tls" then
    ok, err = sock:sslhandshake(false, "test.example", true)
  end
  if ok then ok, err = sock:send(c.script .. "\n") end
  if not ok then
    sock:close()
    return "setup failed: " .. tostring(err)
  end
  sock:settimeout(40)
  ngx.sleep(0.05) -- the first chunk comes at once: let it arrive
  local iters = {}
  for i, op in ipairs(c.ops) do
    local label = i .. " " .. describe_op(op, show)
    local k, res = op[1], nil
    if k == "receive" then
      if op[2] == nil then
        res = { n = 3, sock:receive() }
      else
        res = { n = 3, sock:receive(op[2]) }
      end
    elseif k == "receiveany" then
      res = { n = 2, sock:receiveany(op[2]) }
    elseif k == "receiveuntil" then
      local it, e
      if op[4] then
        it, e = sock:receiveuntil(op[2])
      else
        it, e = sock:receiveuntil(op[2], { inclusive = op[3] })
      end
      iters[#iters + 1] = it
      res = { n = 2, type(it), e }
    elseif k == "call" then
      local it = iters[op[2]]
      if op[3] then
        res = { n = 3, it(op[3]) }
      else
        res = { n = 3, it() }
      end
    elseif k == "more" then
      res = { n = 2, sock:send("t") }
      ngx.sleep(0.05)
    elseif k == "setkeepalive" then
      res = { n = 2, sock:setkeepalive() }
    elseif k == "close" then
      res = { n = 2, sock:close() }
    end
    out[#out + 1] = line(show, label, unpack(res, 1, res.n))
    if k == "setkeepalive" or k == "close" then
      out[#out + 1] = line(show, "after", sock:receive(1))
    end
    if k == "setkeepalive" and res[1] then
      -- take it back from the pool (the case's own), and close it
      local again = ngx.socket.tcp()
      out[#out + 1] = line(show, "connect again", connect(again))
      out[#out + 1] = line(show, "reused", again:getreusedtimes())
      again:close()
    end
    local e = res[2]
    if k ~= "receiveuntil" and e ~= nil and e ~= "timeout" then
      break
    end
  end
  sock:close()
  return concat(out, "\n")
end

-- runs run(case, peer, show) for the cases, batch at a time in light
-- threads (each stagger seconds after the one before, when given);
-- returns their lines in order (udp_random_cases.lua's too)
function M.batched(run, batch, cases, peer, show, stagger)
  local results = {}
  for first = 1, #cases, batch do
    local threads = {}
    local last = math.min(first + batch - 1, #cases)
    for i = first, last do
      if stagger then
        threads[i] = ngx.thread.spawn(function()
          ngx.sleep((i - first) * stagger)
          return run(cases[i], peer, show)
        end)
      else
        threads[i] = ngx.thread.spawn(run, cases[i], peer, show)
      end
    end
    for i = first, last do
      local ok, text = ngx.thread.wait(threads[i])
      results[i] = ok and text or ("case raised: " .. tostring(text))
    end
  end
  return results
end

-- runs the cases, M.BATCH at a time; returns their lines in order
function M.run_all(cases, peer, show)
  return M.batched(M.run, M.BATCH, cases, peer, show)
end

return M
