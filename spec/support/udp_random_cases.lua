-- Randomized differential cases for the UDP cosocket (ngx.socket.udp): a
-- seeded, deterministic generator (plain Lua 5.1 code, so that OpenResty's
-- LuaJIT runs it as well as Lua 5.4) of what a client does on one UDP
-- socket, and a runner that writes one line per step.
-- spec/support/record_udp_random.sh runs it in real OpenResty and records
-- the lines in spec/support/udp_random_recorded.txt; spec/73 runs it on
-- corosched and compares.
--
-- A case is a socket and a random list of steps: setpeername to
-- spec/support/script_peer.py's UDP port (a number, a numeric string, a
-- float, in the host string, none), to its "udp_refused" port (nothing
-- bound: a send's ICMP answer makes a later receive fail) or to bad hosts;
-- settimeout with good and bad values; send of strings (empty to 70,000
-- bytes), numbers, booleans, nil, nested arrays, "n:N" (the peer answers N
-- bytes) and "silent" (no answer); receive() and receive(size) with sizes
-- of every kind; close; and calls with the wrong argument counts and
-- types (under pcall: "error <message>", without its position). Names
-- are numeric addresses only (nginx resolves others with its resolver,
-- which the recording has none of).
--
-- Determinism by design: the peer answers at once and every send sleeps
-- 25 ms after it, so the answer is in the kernel before the next step; a
-- receive with nothing there times out (settimeout(30) on every socket,
-- and again after a settimeout whose value is no good one: those mean
-- the 60 s default). At most one datagram over 8 KB waits at a time in a
-- socket, and the cases of a batch start 3 ms apart, so that no socket
-- buffer overflows. A setpeername that fails ends the case: corosched
-- closes the socket there, OpenResty keeps an unconnected one (a
-- deliberate difference the README lists).
local M = {}

M.SEED = 20261129
M.COUNT = 240
M.BATCH = 12 -- cases run at once

local unpack = unpack or table.unpack
local concat = table.concat

-- (dofile: OpenResty runs this file with dofile, from its directory)
local cosocket_cases = dofile((debug.getinfo(1, "S").source:sub(2)
  :match("^(.*)/[^/]*$") or ".") .. "/cosocket_random_cases.lua")

local function pick(rand, t) return t[rand(#t)] end

---------------------------------------------------------------------------
-- the generator

local WORDS = { "abcdefghij", "xy", "q", "hello world ", "0123" }

-- a string of n bytes (made of WORDS, never "n:" nor "silent" first)
local function bytes(rand, n)
  local w = pick(rand, WORDS)
  return w:rep(math.floor(n / #w) + 1):sub(1, n)
end

local SMALL = { 0, 1, 2, 3, 5, 10, 17, 100, 1000 }
local BIG = { 4096, 8192, 8193, 20000, 65507, 65508, 70000 }

-- a value send() takes, and the size of its answer if it is over 8 KB
local function send_data(rand)
  local r = rand(20)
  if r <= 7 then return bytes(rand, pick(rand, SMALL)) end
  if r == 8 then
    local n = pick(rand, BIG)
    return bytes(rand, n), n <= 65507 and n > 8192
  end
  if r <= 11 then
    -- (at most 65,507: the largest datagram the peer can send)
    local n = pick(rand, { 0, 1, 10, 1000, 8192, 8193, 30000, 65507 })
    return "n:" .. n, n > 8192 and n <= 65507
  end
  if r == 12 then return "silent" .. bytes(rand, rand(5)) end
  if r == 13 then return pick(rand, { 0, 7, -3, 2.5, 1e20, -0.0, 10.0 }) end
  if r == 14 then return pick(rand, { true, false }) end
  if r == 15 then return nil end
  if r <= 18 then
    return pick(rand, {
      { "a", "b" }, {}, { "x", { "y", { "z", 5 } }, 2.5 }, { { {} } },
      { "n:", "20" }, { 1, 2, 3 }, { "", "" },
    })
  end
  -- raises
  return pick(rand, { { "a", true }, { "a", { nil, "b" } }, { x = 1 },
                      { "a", print } })
end

local SIZES = { 0, 1, 2, 5, 10, 100, 8192, 8193, 65536, 65537, 100000,
                1e10, "10", "abc", 2.5, -1, "0x10", 0.5 }

local TIMEOUTS = { 1, 10, 30, 50, 0, -1, "20", "abc", 0.5, 1.5, true }

local function gen_case(rand, i)
  local c = { name = "udp case " .. i }
  local ops = {}
  local big = false -- an answer over 8 KB may be waiting
  local first = rand(8) > 1
  for j = 1, 3 + rand(10) do
    local r = rand(30)
    local op
    if (j == 1 and first) or r <= 2 then
      op = { "peer", pick(rand, { "num", "num", "num", "str", "float",
                                  "hostport", "refused" }) }
    elseif r == 3 then
      op = { "peer", pick(rand, { "noport", "badhost", "badport",
                                  "bigport", "both" }) }
    elseif r <= 5 then
      op = { "settimeout", pick(rand, TIMEOUTS), rand(6) == 1 }
    elseif r <= 14 then
      local data, large = send_data(rand)
      if not (large and big) then
        big = big or large
        op = { "send", data, data == nil and rand(2) == 1 }
      end
    elseif r <= 24 then
      if rand(3) == 1 then
        op = { "receive" }
      else
        op = { "receive", pick(rand, SIZES) }
      end
      big = false
    elseif r <= 26 then
      op = { "close" }
      big = false
    else
      op = { "bad", rand(9) }
    end
    ops[#ops + 1] = op -- (none when op is nil)
  end
  c.ops = ops
  return c
end

M.generate = cosocket_cases.seeded(gen_case)

---------------------------------------------------------------------------
-- the runner (needs the `ngx` global)

-- a value as text, a long string by its length and ends
local function brief(show, v)
  if type(v) == "string" and #v > 40 then
    return ("<%d bytes %s...%s>"):format(#v, show(v:sub(1, 12)),
                                         show(v:sub(-12)))
  end
  return show(v)
end

local function peer_args(op, peer)
  local k, p = op[2], peer.udp
  if k == "num" then return 2, "127.0.0.1", p end
  if k == "str" then return 2, "127.0.0.1", tostring(p) end
  if k == "float" then return 2, "127.0.0.1", p + 0.5 end
  if k == "hostport" then return 1, "127.0.0.1:" .. p end
  if k == "refused" then return 2, "127.0.0.1", peer.udp_refused end
  if k == "noport" then return 1, "127.0.0.1" end
  if k == "badhost" then return 2, "", p end
  if k == "badport" then return 2, "127.0.0.1", "abc" end
  if k == "bigport" then return 2, "127.0.0.1", 70000 end
  return 2, "127.0.0.1:" .. p, p + 1 -- "both": the host's port wins
end

-- the wrong calls ("bad" steps): label, method and arguments (called
-- through pcall, not as methods: Lua 5.4 names a method called in a tail
-- call in "bad argument" messages, LuaJIT does not)
local BAD = {
  { "send()", "send", 0 },
  { "send(\"a\", \"b\")", "send", 2, "a", "b" },
  { "receive(1, 2)", "receive", 2, 1, 2 },
  { "settimeout()", "settimeout", 0 },
  { "settimeout(1, 2)", "settimeout", 2, 1, 2 },
  { "setpeername()", "setpeername", 0 },
  { "close(1)", "close", 1, 1 },
  { "receive({})", "receive", 1, {} },
  { "setpeername({}, 1)", "setpeername", 2, {}, 1 },
}

local function pack(...) return { n = select("#", ...), ... } end

-- runs fn(...) under pcall: its results, or "error <message>" (the
-- message without its position)
local function try(show, fn, ...)
  local res = pack(pcall(fn, ...))
  if not res[1] then
    local msg = tostring(res[2]):gsub("^[^:\n]*:%d+: ", "")
    return "error " .. show(msg)
  end
  local parts = {}
  for i = 2, res.n do parts[#parts + 1] = brief(show, res[i]) end
  return concat(parts, " "), res
end

local function describe_data(show, v)
  if type(v) == "table" then return show(v) end
  return brief(show, v)
end

-- runs case c against peer ({ udp, udp_refused }); returns its lines
function M.run(c, peer, show)
  local out = {}
  local sock = ngx.socket.udp()
  sock:settimeout(30)
  for i, op in ipairs(c.ops) do
    local k, label, text, res = op[1], nil, nil, nil
    if k == "peer" then
      local n, host, port = peer_args(op, peer)
      label = "setpeername(" .. op[2] .. ")"
      if n == 1 then
        text, res = try(show, sock.setpeername, sock, host)
      else
        text, res = try(show, sock.setpeername, sock, host, port)
      end
    elseif k == "settimeout" then
      label = "settimeout(" .. show(op[2]) .. ")"
      text = try(show, sock.settimeout, sock, op[2])
      local v = op[2]
      if type(v) ~= "number" or v < 1 then sock:settimeout(30) end
    elseif k == "send" then
      label = "send(" .. (op[3] and "" or describe_data(show, op[2])) .. ")"
      if op[3] then
        text = try(show, sock.send, sock)
      else
        text = try(show, sock.send, sock, op[2])
      end
      ngx.sleep(0.025)
    elseif k == "receive" then
      label = "receive(" .. (op[2] ~= nil and show(op[2]) or "") .. ")"
      if op[2] == nil then
        text = try(show, sock.receive, sock)
      else
        text = try(show, sock.receive, sock, op[2])
      end
    elseif k == "close" then
      label = "close()"
      text = try(show, sock.close, sock)
    else
      local bad = BAD[op[2]]
      label = bad[1]
      text = try(show, sock[bad[2]], sock, unpack(bad, 4, 3 + bad[3]))
    end
    out[#out + 1] = i .. " " .. label .. ": " .. text
    if k == "peer" and res and not res[2] then break end
  end
  sock:close()
  return concat(out, "\n")
end

-- runs the cases, M.BATCH at a time in light threads, each 3 ms after the
-- one before; returns their lines in order
function M.run_all(cases, peer, show)
  return cosocket_cases.batched(M.run, M.BATCH, cases, peer, show, 0.003)
end

return M
