-- Randomized differential cases for the pure ngx helpers and ngx.re:
-- a seeded, deterministic generator (plain Lua 5.1 code, so that
-- OpenResty's LuaJIT runs it as well as Lua 5.4) of inputs, and a runner
-- that calls the `ngx` given and writes one line per input:
--   <n> <function>(<arguments>) => <results>
-- spec/support/record_ngx_random.sh runs it in real OpenResty and records
-- the lines in spec/support/ngx_random_recorded.txt; spec/70 runs it on
-- corosched and compares.
local M = {}

M.SEED = 20261127

-- inputs per function, in the order they are generated
M.PLAN = {
  { "escape_uri", 300 }, { "unescape_uri", 250 }, { "encode_args", 300 },
  { "decode_args", 300 }, { "quote_sql_str", 150 },
  { "encode_base64", 200 }, { "decode_base64", 250 }, { "md5", 80 },
  { "md5_bin", 40 }, { "sha1_bin", 80 }, { "crc32_short", 60 },
  { "crc32_long", 60 }, { "hmac_sha1", 80 }, { "http_time", 150 },
  { "cookie_time", 150 }, { "parse_http_time", 300 },
  { "re.match", 500 }, { "re.find", 300 }, { "re.gmatch", 200 },
  { "re.sub", 250 }, { "re.gsub", 350 }, { "re.split", 200 },
}

local unpack = unpack or table.unpack
local byte, char, concat = string.byte, string.char, table.concat
local format = string.format

---------------------------------------------------------------------------
-- random numbers: Park-Miller's minimal standard (exact in doubles and in
-- Lua 5.4 integers alike)

local function new_rng(seed)
  local s = seed % 2147483646 + 1
  local r = {}
  -- an integer in [1, n]
  function r.int(n)
    s = s * 48271 % 2147483647
    return s % n + 1
  end
  -- true with probability p/100
  function r.pct(p) return r.int(100) <= p end
  function r.pick(t) return t[r.int(#t)] end
  return r
end

---------------------------------------------------------------------------
-- serialization

local function qstr(s)
  local out = {}
  for i = 1, #s do
    local b = byte(s, i)
    if b == 92 then
      out[i] = "\\\\"
    elseif b == 34 then
      out[i] = '\\"'
    elseif b >= 32 and b <= 126 then
      out[i] = char(b)
    else
      out[i] = format("\\%03d", b)
    end
  end
  return '"' .. concat(out) .. '"'
end

local function numstr(n)
  if n ~= n then return "nan" end
  if n == 1 / 0 then return "inf" end
  if n == -1 / 0 then return "-inf" end
  return format("%.17g", n)
end

local ser

local function sertable(t, depth)
  if depth > 4 then return "{...}" end
  local items = {}
  for k, v in pairs(t) do
    items[#items + 1] = "[" .. ser(k, depth + 1) .. "]=" .. ser(v, depth + 1)
  end
  table.sort(items)
  return "{" .. concat(items, ",") .. "}"
end

ser = function(v, depth)
  depth = depth or 0
  local t = type(v)
  if t == "string" then return qstr(v) end
  if t == "number" then return numstr(v) end
  if t == "table" then return sertable(v, depth) end
  if t == "function" then return "<function>" end
  if t == "nil" or t == "boolean" then return tostring(v) end
  return "<" .. t .. ">"
end
M.ser = ser

-- an error's message without the position error() adds
local function errstr(e)
  if type(e) ~= "string" then return "error: " .. ser(e) end
  e = e:gsub("^[^%s:]+:%d+: ", "")
  return "error: " .. qstr(e)
end
M.errstr = errstr

local function serargs(args, n)
  local out = {}
  for i = 1, n do out[i] = ser(args[i]) end
  return concat(out, ", ")
end

---------------------------------------------------------------------------
-- random values

local PUNCT = "-_.~!*'();:@&=+$,/?#[]% <>\"{}|\\^`"

local function rbyte(r)
  local k = r.int(10)
  if k <= 4 then
    return char(96 + r.int(26))
  elseif k == 5 then
    return char(64 + r.int(26))
  elseif k == 6 then
    return char(47 + r.int(10))
  elseif k <= 8 then
    local i = r.int(#PUNCT)
    return PUNCT:sub(i, i)
  else
    return char(r.int(256) - 1)
  end
end

local function rstr(r, maxlen)
  local n = r.int((maxlen or 12) + 1) - 1
  local out = {}
  for i = 1, n do out[i] = rbyte(r) end
  return concat(out)
end

-- numbers: small integers, negatives, fractions, whole floats, huge
local function rnum(r)
  local k = r.int(12)
  if k <= 3 then return r.int(1000) - 1 end
  if k == 4 then return -r.int(1000) end
  if k == 5 then return r.int(100000) / 100 end
  if k == 6 then return -r.int(100000) / 1000 end
  if k == 7 then return r.int(1000) + 0.0 end
  if k == 8 then return r.int(1000000) * 1e12 end
  if k == 9 then return r.int(100) * 1e-7 end
  if k == 10 then return r.pick({ 0.1, 1 / 3, 2 ^ 31, 2 ^ 31 - 1, -2 ^ 31,
                                  2 ^ 32, 2 ^ 53, 1e15, 123456789012,
                                  -0.0, 1e100, 0.5 }) end
  if k == 11 then return r.int(2147483647) end
  return r.pick({ 1 / 0, -1 / 0, 1e300 * 1e10, 3.5e-320 })
end

-- the string argument of a string helper: mostly a string, sometimes a
-- number, nil or a boolean (no table: it would print its address)
local function rstrarg(r, maxlen)
  local k = r.int(20)
  if k <= 16 then return rstr(r, maxlen) end
  if k <= 18 then return rnum(r) end
  if k == 19 then return nil end
  return r.pct(50)
end

---------------------------------------------------------------------------
-- per-function argument generators: return args, n

local G = {}

G.escape_uri = function(r)
  local s = rstrarg(r, 16)
  local k = r.int(10)
  if k <= 4 then return { s }, 1 end
  if k <= 8 then return { s, r.int(8) - 1 }, 2 end
  -- (not NaN: it passes lua-resty-core 0.1.25's range check and crashes
  -- nginx)
  return { s, r.pick({ -1, 7, 8.0, 2.5, "2", true, 6.5, 1e10, false }) },
         2
end

local HEX = "0123456789abcdefABCDEFgG"

local function rescaped(r)
  local n = r.int(10) - 1
  local out = {}
  for i = 1, n do
    local k = r.int(8)
    if k <= 2 then
      local a, b = r.int(#HEX), r.int(#HEX)
      out[i] = "%" .. HEX:sub(a, a) .. HEX:sub(b, b)
    elseif k == 3 then
      out[i] = r.pick({ "%", "%%", "%2", "%u0041", "%00", "%zz", "%%41" })
    elseif k == 4 then
      out[i] = "+"
    else
      out[i] = rbyte(r)
    end
  end
  return concat(out)
end

G.unescape_uri = function(r)
  if r.pct(10) then return { rstrarg(r) }, 1 end
  return { rescaped(r) }, 1
end

local function rkey(r)
  if r.pct(70) then return rstr(r, 5) end
  return rescaped(r)
end

local function rargval(r)
  local k = r.int(10)
  if k <= 4 then return rstr(r, 6) end
  if k <= 6 then return rnum(r) end
  if k == 7 then return true end
  if k == 8 then return false end
  local arr = {}
  for i = 1, r.int(4) - 1 do
    local j = r.int(6)
    if j <= 3 then
      arr[i] = rstr(r, 4)
    elseif j == 4 then
      arr[i] = rnum(r)
    else
      arr[i] = j == 5
    end
  end
  return arr
end

G.encode_args = function(r)
  local k = r.int(25)
  if k == 1 then
    return { r.pick({ "a=1", 1, true }) }, 1
  elseif k == 2 then
    return {}, 0
  end
  local t = {}
  for _ = 1, r.int(5) - 1 do t[rkey(r)] = rargval(r) end
  if r.pct(12) then -- exactly one bad entry
    local j = r.int(6)
    if j == 1 then
      t[r.int(3)] = "x"
    elseif j == 2 then
      t[rkey(r) .. "!"] = { "a", { "nested" } }
    elseif j == 3 then
      t[rkey(r) .. "!"] = print
    elseif j == 4 then
      t[1.5] = "y"
    elseif j == 5 then
      t[true] = "z"
    else
      t[rkey(r) .. "!"] = { b = "c" }
    end
  end
  return { t }, 1
end

local function rquery(r, nparts)
  local parts = {}
  for i = 1, nparts do
    local k = r.int(10)
    if k == 1 then
      parts[i] = ""
    elseif k == 2 then
      parts[i] = rescaped(r)
    elseif k == 3 then
      parts[i] = "=" .. rescaped(r)
    elseif k == 4 then
      parts[i] = r.pick({ "a", "b", "a%3D" }) .. "=" .. rescaped(r) .. "="
        .. rescaped(r)
    else
      parts[i] = r.pick({ "a", "b", "c", "a+b", "%61", "x%00", rkey(r) })
        .. "=" .. rescaped(r)
    end
  end
  return concat(parts, "&")
end

G.decode_args = function(r)
  local k = r.int(20)
  local s
  if k == 1 then
    s = rstrarg(r)
  elseif k == 2 then
    s = rquery(r, 95 + r.int(15))
  else
    s = rquery(r, r.int(8) - 1)
    if r.pct(15) then s = "&" .. s end
    if r.pct(15) then s = s .. "&" end
  end
  if r.pct(50) then return { s }, 1 end
  return { s, r.pick({ 0, 1, 2, 3, 5, -1, 100, 2.5, "3", false }) }, 2
end

G.quote_sql_str = function(r)
  if r.pct(15) then return { rstrarg(r) }, 1 end
  local out = {}
  for i = 1, r.int(10) - 1 do
    out[i] = r.pct(40) and r.pick({ "\0", "\b", "\n", "\r", "\t", "\26",
                                    "\\", "'", '"', "%", "_", "\255" })
             or rbyte(r)
  end
  return { concat(out) }, 1
end

G.encode_base64 = function(r)
  local s = rstrarg(r, 14)
  local k = r.int(10)
  if k <= 4 then return { s }, 1 end
  if k <= 8 then return { s, r.pct(50) }, 2 end
  return { s, r.pick({ 1, "true", 0, false }) }, 2
end

local B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

local function b64(s)
  local out = {}
  for i = 1, #s, 3 do
    local a, b, c = byte(s, i, i + 2)
    local n = a * 65536 + (b or 0) * 256 + (c or 0)
    local q = {}
    for j = 4, 1, -1 do
      local d = n % 64
      q[j] = B64:sub(d + 1, d + 1)
      n = (n - d) / 64
    end
    if not b then q[3], q[4] = "=", "=" elseif not c then q[4] = "=" end
    out[#out + 1] = concat(q)
  end
  return concat(out)
end

G.decode_base64 = function(r)
  local k = r.int(10)
  if k == 1 then return { rstrarg(r) }, 1 end
  local s = b64(rstr(r, 10))
  if k <= 4 then return { s }, 1 end
  if k == 5 then -- no padding
    return { (s:gsub("=", "")) }, 1
  end
  -- a mutation
  local i = r.int(#s + 1)
  local ins = r.pick({ "=", "==", "-", "_", " ", "\n", "*", "A", "\0",
                       "\255", "" })
  if r.pct(50) then
    s = s:sub(1, i - 1) .. ins .. s:sub(i + 1)
  else
    s = s:sub(1, i - 1) .. ins .. s:sub(i)
  end
  return { s }, 1
end

local function rdata(r)
  if r.pct(8) then return { rstrarg(r) }, 1 end
  local n = r.pick({ 0, 1, 3, 55, 56, 57, 63, 64, 65, 100, r.int(20) })
  local out = {}
  for i = 1, n do out[i] = rbyte(r) end
  return { concat(out) }, 1
end

G.md5, G.md5_bin, G.sha1_bin = rdata, rdata, rdata
G.crc32_short, G.crc32_long = rdata, rdata

G.hmac_sha1 = function(r)
  local key = rdata(r)[1]
  if r.pct(20) then key = r.pick({ "", ("k"):rep(64), ("k"):rep(65),
                                   ("\255"):rep(100) }) end
  return { key, rdata(r)[1] }, 2
end

local function rtime(r)
  local k = r.int(10)
  if k <= 3 then return r.int(2147483647) end
  if k <= 5 then return rnum(r) end
  if k == 6 then return r.int(4000000000) + r.int(1000) / 1000 end
  if k == 7 then return r.pick({ 0, -1, 2145916799, 2145916800, 253402300799,
                                 253402300800, 1e11, 1e13, 1e18, 2 ^ 63,
                                 -2 ^ 31, 951782400, 951868799, 1 / 0,
                                 -1 / 0, 2 ^ 62 }) end
  if k == 8 then return r.int(10000000000) end
  if k == 9 then
    local v = r.pick({ "100", "nil", true, "x" })
    if v == "nil" then return nil end
    return v
  end
  return r.int(100000) * 86400 + r.int(86400) - 1
end

G.http_time = function(r) return { rtime(r) }, 1 end
G.cookie_time = G.http_time

local WDAYS = { "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat",
                "Sunday", "Monday", "Thursday" }
local MONS = { "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug",
               "Sep", "Oct", "Nov", "Dec", "January", "jan", "JAN", "Foo",
               "Ju", "Ma" }

local function p2(n) return format("%02d", n) end

local function rdate(r)
  local y = r.pick({ 1969, 1970, 1999, 2000, 2024, 2037, 2038, 2106, 9999,
                     1600 + r.int(600), 70, 99, 38, 1 })
  local mo = r.int(10) <= 8 and r.int(12) or r.int(#MONS)
  local d = r.pct(85) and r.int(28) or r.pick({ 0, 29, 30, 31, 32, 99 })
  local h = r.pct(90) and r.int(24) - 1 or r.pick({ 24, 25, 99 })
  local mi = r.pct(90) and r.int(60) - 1 or r.pick({ 60, 99 })
  local sc = r.pct(90) and r.int(60) - 1 or r.pick({ 60, 61, 99 })
  local wd, mn = r.pick(WDAYS), MONS[mo]
  local hms = p2(h) .. ":" .. p2(mi) .. ":" .. p2(sc)
  local form = r.int(4)
  if form == 1 then
    return wd .. ", " .. p2(d) .. " " .. mn .. " " .. y .. " " .. hms
      .. " GMT"
  elseif form == 2 then
    return wd .. ", " .. p2(d) .. "-" .. mn .. "-" .. p2(y % 100) .. " "
      .. hms .. " GMT"
  elseif form == 3 then
    return wd .. " " .. mn .. " " .. (d < 10 and " " .. d or d) .. " "
      .. hms .. " " .. y
  end
  return wd .. ", " .. d .. "-" .. mn .. "-" .. y .. " " .. hms .. " GMT"
end

G.parse_http_time = function(r)
  local k = r.int(20)
  if k == 1 then return { rstrarg(r) }, 1 end
  local s = rdate(r)
  if k <= 8 then return { s }, 1 end
  -- mutations
  for _ = 1, r.int(2) do
    local i = r.int(#s)
    local j = r.int(5)
    if j == 1 then
      s = s:sub(1, i - 1) .. s:sub(i + 1)
    elseif j == 2 then
      s = s:sub(1, i - 1) .. rbyte(r) .. s:sub(i + 1)
    elseif j == 3 then
      s = s:sub(1, i - 1) .. r.pick({ " ", "0", "9", "-", ":", "\0" })
        .. s:sub(i)
    elseif j == 4 then
      s = s:sub(1, i)
    else
      s = s .. r.pick({ " ", "x", " +0100", "0", "\n" })
    end
  end
  return { s }, 1
end

---------------------------------------------------------------------------
-- ngx.re: regexes from a small grammar over subjects of a small alphabet

local SUBJ = { "a", "a", "b", "b", "c", "A", "B", " ", "1", "2", "\n", "-",
               "\195\169", "x", "_" }

local function rsubject(r)
  local out = {}
  for i = 1, r.int(12) - 1 do out[i] = r.pick(SUBJ) end
  if r.pct(3) then out[#out + 1] = "\255" end
  return concat(out)
end

local ATOMS = { "a", "b", "c", "a", "b", "A", ".", "[ab]", "[^a]", "[a-c]",
                "\\d", "\\w", "\\s", "\\W", " ", "1", "x", "\\.", "\\n",
                "[[:alpha:]]", "\195\169", "-" }
local QUANTS = { "*", "+", "?", "{1,2}", "{2}", "*?", "+?", "??", "{0,}",
                 "*+" }
local BAD = { "(", ")", "[a", "*a", "a{2,1}", "(?<1a>x)", "\\", "a)",
              "(?<x>a)(?<x>b)", "[z-a]", "(?P<", "a**", "\\k<nope>",
              "(?", "x{99999999}" }

local rre

local function ratom(r, depth)
  local k = r.int(12)
  if depth < 2 and k <= 3 then
    local kind = r.int(5)
    local inner = rre(r, depth + 1)
    if kind <= 2 then return "(" .. inner .. ")" end
    if kind == 3 then return "(?:" .. inner .. ")" end
    return "(?<" .. r.pick({ "x", "y", "nm" }) .. ">" .. inner .. ")"
  elseif k == 4 then
    return r.pick({ "^", "$", "\\b", "\\A", "\\z", "\\B" })
  end
  return r.pick(ATOMS)
end

rre = function(r, depth)
  local alts = {}
  for a = 1, (r.pct(20) and 2 or 1) do
    local seq = {}
    for i = 1, r.int(4) - (depth > 0 and 1 or 0) do
      local atom = ratom(r, depth)
      if r.pct(25) and atom ~= "^" and atom ~= "$" then
        atom = atom .. r.pick(QUANTS)
      end
      seq[i] = atom
    end
    alts[a] = concat(seq)
  end
  return concat(alts, "|")
end

local function rregex(r)
  if r.pct(5) then
    local s = rre(r, 0)
    local i = r.int(#s + 1)
    return s:sub(1, i - 1) .. r.pick(BAD) .. s:sub(i)
  end
  return rre(r, 0)
end

local FLAGS = "ijmoxsuDJ"

local function ropts(r)
  local k = r.int(10)
  if k <= 3 then return nil end
  local out = {}
  for i = 1, #FLAGS do
    if r.pct(18) then out[#out + 1] = FLAGS:sub(i, i) end
  end
  if r.pct(3) then out[#out + 1] = r.pick({ "H", "Q", "a", "U", "d" }) end
  -- shuffled
  for i = #out, 2, -1 do
    local j = r.int(i)
    out[i], out[j] = out[j], out[i]
  end
  return concat(out)
end

local function rtemplate(r)
  local out = {}
  for i = 1, r.int(5) - 1 do
    local k = r.int(10)
    if k <= 4 then
      out[i] = r.pick({ "$0", "$1", "$2", "${1}", "${0}", "$$", "${x}",
                        "$10", "$9" })
    elseif k == 5 then
      out[i] = r.pick({ "$", "${", "${1", "$a", "${}", "\\$1", "$-" })
    else
      out[i] = r.pick({ "<", ">", "z", "-", "\\", "%1", "%", " " })
    end
  end
  return concat(out)
end

local function repl_fn(m)
  return "<" .. tostring(m[0]) .. "|" .. tostring(m[1]) .. ">"
end

local function rctx(r)
  if r.pct(80) then return nil end
  -- (not 0 or less: OpenResty reads before the subject then)
  return { pos = r.pick({ 1, 2, 3, 5, 12, 20 }) }
end

G["re.match"] = function(r)
  local args = { rsubject(r), rregex(r), ropts(r), rctx(r) }
  return args, args[4] and 4 or 3
end

G["re.find"] = function(r)
  local args = { rsubject(r), rregex(r), ropts(r), rctx(r) }
  if r.pct(30) then args[5] = r.int(4) - 1 end
  return args, 5
end

G["re.gmatch"] = function(r)
  return { rsubject(r), rregex(r), ropts(r) }, 3
end

G["re.sub"] = function(r)
  local repl = r.pct(90) and rtemplate(r) or repl_fn
  return { rsubject(r), rregex(r), repl, ropts(r) }, 4
end
G["re.gsub"] = G["re.sub"]

G["re.split"] = function(r)
  local args = { rsubject(r), rregex(r), ropts(r), rctx(r) }
  if r.pct(40) then args[5] = r.int(5) - 2 end
  return args, 5
end

---------------------------------------------------------------------------
-- calls

-- encode_args's result with its "key[=value]" parts sorted by key, those
-- of one key kept in their order: OpenResty follows the hash order of the
-- table, which changes from one run to the next
local function sort_args(s)
  local parts = {}
  for part in (s .. "&"):gmatch("([^&]*)&") do
    parts[#parts + 1] = { key = part:match("^[^=]*"), i = #parts + 1,
                          part = part }
  end
  table.sort(parts, function(a, b)
    if a.key ~= b.key then return a.key < b.key end
    return a.i < b.i
  end)
  local out = {}
  for i, p in ipairs(parts) do out[i] = p.part end
  return concat(out, "&")
end

local function results(ok, ...)
  if not ok then return errstr((...)) end
  local n = select("#", ...)
  local out = {}
  for i = 1, n do out[i] = ser((select(i, ...))) end
  return concat(out, " ")
end

-- the function to call for name (re.* from ngx.re, split from the
-- "ngx.re" module)
local function callee(ngx, name)
  if name == "re.split" then return require("ngx.re").split end
  local re = name:match("^re%.(.*)")
  if re == "gmatch" then
    -- the captures of up to 10 iterations
    return function(...)
      local it, err = ngx.re.gmatch(...)
      if not it then return nil, err end
      local got = {}
      for i = 1, 10 do
        local m, e = it()
        if not m then
          got[i] = e and ("error " .. ser(e)) or "end"
          break
        end
        got[i] = m
      end
      return got
    end
  end
  if re then return ngx.re[re] end
  if name == "encode_args" then
    return function(...)
      local s = ngx.encode_args(...)
      return type(s) == "string" and sort_args(s) or s
    end
  end
  return ngx[name]
end

-- a line for each input, given to emit(line, name, args)
function M.run(ngx, emit, seed)
  local r = new_rng(seed or M.SEED)
  local idx = 0
  for _, p in ipairs(M.PLAN) do
    local name, count = p[1], p[2]
    local f = callee(ngx, name)
    for _ = 1, count do
      idx = idx + 1
      local args, n = G[name](r)
      local input = name .. "(" .. serargs(args, n) .. ")"
      local ctx = args[4]
      local ctxpos = type(ctx) == "table" and ctx.pos
      local out = results(pcall(f, unpack(args, 1, n)))
      if ctxpos then out = out .. " ctx.pos=" .. ser(ctx.pos) end
      emit(idx .. " " .. input .. " => " .. out, name, args)
    end
  end
  return idx
end

return M
