-- corosched.ngx: an `ngx` table for stock Lua 5.4, so that cosocket client
-- libraries written for OpenResty (lua-resty-redis, lua-resty-memcached,
-- lua-resty-mysql, pgmoon...) run unmodified inside cs.run.
--
--   local ngxc = require "corosched.ngx"
--   ngxc.install()                    -- the `ngx` global, package.preload
--   local redis = require "resty.redis"
--   cs.run(function() ... redis:new() ... end)
--
-- What maps onto corosched is an alias of the corosched function (sockets,
-- light threads, sleep, time); timers are thin wrappers that return what
-- OpenResty returns. The helpers those libraries call (base64, MD5, SHA-1,
-- HMAC-SHA1, CRC-32, URI escaping, args, SQL quoting, LuaJIT's `bit` and
-- `table.*` extensions) are written here in plain Lua 5.4 from their
-- specifications; lua-resty-string's and lua-resty-openssl's digest, HMAC,
-- PBKDF2 and random modules (FFI there) are built on cs.crypto (OpenSSL).
-- What needs an nginx request, shared memory or PCRE
-- raises a clear error when called (or, for tables, indexed); every other
-- field is nil, so that libraries' feature tests see the truth.
local cs = require "corosched"

local byte, char, concat = string.byte, string.char, table.concat
local sub = string.sub
local format, pack, sunpack = string.format, string.pack, string.unpack
local floor, huge = math.floor, math.huge
local mtype, tointeger = math.type, math.tointeger
local select, type, tostring = select, type, tostring

local M32 = 0xffffffff

local _M = { _VERSION = "0.1" }

---------------------------------------------------------------------------
-- argument checks, with the messages OpenResty/LuaJIT give

-- level: 3 blames the caller of the function that calls argerror (as
-- luaL_argerror does); the checks below, one call deeper, pass 4. A
-- function called from C (pcall(ngx.encode_args, true)) has no name:
-- luaL_argerror then says '?', and so does this (unless a tail call in
-- between hides the frames)
local function argerror(n, fname, msg, level)
  level = level or 3
  local ar
  for l = 2, level - 1 do
    ar = debug.getinfo(l, "nt")
    if not ar or ar.istailcall then
      ar = nil
      break
    end
  end
  if ar and ar.namewhat == "" then fname = "?" end
  error(("bad argument #%d to '%s' (%s)"):format(n, fname, msg), level)
end

-- a number as LuaJIT's tostring (so OpenResty) writes it: a float with
-- "%.14g" (2.0 as "2"); an integer exactly (LuaJIT has none). in_table:
-- as ngx_http_lua_write_num writes the numbers of an array (ngx.print),
-- a whole float in the int32 range as that int (-0.0 as "0")
local function numstr(n, in_table)
  if mtype(n) ~= "float" then return tostring(n) end
  if in_table and n >= -2147483648 and n <= 2147483647 and n == floor(n) then
    return format("%d", n)
  end
  return format("%.14g", n)
end
_M.numstr = numstr

-- the string argument of the string helpers: nil counts as "" and numbers
-- are converted, as in ngx_lua
local function checkstr(s, fname, n)
  local t = type(s)
  if t == "string" then return s end
  if t == "nil" then return "" end
  if t == "number" then return numstr(s) end
  argerror(n or 1, fname, "string expected, got " .. t, 4)
end

-- the string argument of the helpers ngx_lua writes in C with
-- luaL_checklstring (decode_args, hmac_sha1, quote_sql_str): numbers are
-- converted, anything else raises, nil too
local function checklstr(s, fname, n)
  local t = type(s)
  if t == "string" then return s end
  if t == "number" then return numstr(s) end
  argerror(n or 1, fname, "string expected, got " .. t, 4)
end

-- the same for the helpers lua-resty-core implements (md5, sha1_bin,
-- encode_base64, escape_uri, crc32...): nil and false count as "", any
-- other value as tostring(value)
local function tostr(s)
  if type(s) == "string" then return s end
  if not s then return "" end
  if type(s) == "number" then return numstr(s) end
  return tostring(s)
end

---------------------------------------------------------------------------
-- bit: LuaJIT's BitOp on 32-bit signed results (http://bitop.luajit.org/)

-- normalizes x to a signed 32-bit integer: integers wrap modulo 2^32,
-- floats are rounded to the nearest integer (ties to even, as BitOp's
-- "add 2^52 + 2^51" trick does) first; NaN and infinities give 0
local function tobit(x, fname, n)
  if mtype(x) ~= "integer" then
    local v = type(x) == "string" and tonumber(x) or mtype(x) and x
    if not v then
      argerror(n or 1, fname or "tobit", "number expected, got " .. type(x),
               4)
    end
    if mtype(v) == "float" then
      if v ~= v or v == huge or v == -huge then return 0 end
      local f = floor(v) -- an integer when it fits in 64 bits
      local d = v - f
      if d > 0.5 or (d == 0.5 and f % 2 == 1) then f = f + 1 end
      if mtype(f) == "float" then f = tointeger(f % 4294967296) end
      v = f
    end
    x = v
  end
  x = x & M32
  if x >= 0x80000000 then x = x - 0x100000000 end
  return x
end

local bit = {}

function bit.tobit(...)
  if select("#", ...) == 0 then -- BitOp's luaL_checknumber message
    argerror(1, "tobit", "number expected, got no value", 3)
  end
  return tobit((...), "tobit", 1)
end

function bit.tohex(x, n)
  x = tobit(x, "tohex", 1) & M32
  n = n == nil and 8 or tobit(n, "tohex", 2)
  local digits = "%08x"
  if n < 0 then n, digits = -n, "%08X" end
  if n > 8 then n = 8 end
  return format(digits, x):sub(9 - n)
end

function bit.bnot(x) return ~tobit(x, "bnot", 1) end

-- the variadic operations fold left; sign-extended operands give
-- sign-extended results under &, | and ~, so no renormalization is needed
local function bitfold(fname, op)
  return function(x, ...)
    local r = tobit(x, fname, 1)
    for i = 1, select("#", ...) do
      r = op(r, tobit((select(i, ...)), fname, i + 1))
    end
    return r
  end
end

bit.band = bitfold("band", function(a, b) return a & b end)
bit.bor = bitfold("bor", function(a, b) return a | b end)
bit.bxor = bitfold("bxor", function(a, b) return a ~ b end)

-- shift counts are taken modulo 32, as BitOp does
function bit.lshift(x, n)
  return tobit(tobit(x, "lshift", 1) << (tobit(n, "lshift", 2) & 31))
end

function bit.rshift(x, n)
  return tobit((tobit(x, "rshift", 1) & M32)
               >> (tobit(n, "rshift", 2) & 31))
end

function bit.arshift(x, n)
  -- floor division by 2^n is the arithmetic shift
  return tobit(x, "arshift", 1) // (1 << (tobit(n, "arshift", 2) & 31))
end

function bit.rol(x, n)
  local u = tobit(x, "rol", 1) & M32
  n = tobit(n, "rol", 2) & 31
  return tobit((u << n) | (u >> (32 - n)))
end

function bit.ror(x, n)
  local u = tobit(x, "ror", 1) & M32
  n = tobit(n, "ror", 2) & 31
  return tobit((u >> n) | (u << (32 - n)))
end

function bit.bswap(x)
  local u = tobit(x, "bswap", 1) & M32
  return tobit((u & 0xff) << 24 | (u & 0xff00) << 8
               | (u >> 8) & 0xff00 | u >> 24)
end

_M.bit = bit

---------------------------------------------------------------------------
-- LuaJIT/OpenResty table extensions (require "table.new" etc.)

-- Lua 5.4 cannot preallocate from Lua; the sizes are only a hint
local function table_new(narr, nrec) -- luacheck: no unused args
  return {}
end

-- empties t in place (raw, as LuaJIT's table.clear)
local function table_clear(t)
  for k in next, t do t[k] = nil end
end

local function table_nkeys(t)
  local n = 0
  for _ in next, t do n = n + 1 end
  return n
end

local function table_isempty(t)
  return next(t) == nil
end

-- true when every key is a positive integer, holes allowed (LuaJIT's,
-- recorded in spec/59: {1, nil, 3} and {[2] = 1} are arrays; an empty
-- table is one)
local function table_isarray(t)
  for k in next, t do
    -- (a float key with an integer value is stored as an integer)
    if mtype(k) ~= "integer" or k < 1 then return false end
  end
  return true
end

-- a shallow raw copy; the metatable is not copied (as OpenResty's)
local function table_clone(t)
  local c = {}
  for k, v in next, t do c[k] = v end
  return c
end

_M.table = {
  new = table_new, clear = table_clear, nkeys = table_nkeys,
  isempty = table_isempty, isarray = table_isarray, clone = table_clone,
}

---------------------------------------------------------------------------
-- base64 (RFC 4648)

local function b64_alphabet(last2)
  local enc, dec = {}, {}
  local chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
    .. "0123456789" .. last2
  for i = 0, 63 do
    local c = chars:sub(i + 1, i + 1)
    enc[i] = c
    dec[byte(c)] = i
  end
  return enc, dec
end

local B64_ENC, B64_DEC = b64_alphabet("+/")
local B64URL_ENC, B64URL_DEC = b64_alphabet("-_")

local function b64_encode(s, enc, padding)
  local out, n, len = {}, 0, #s
  for i = 1, len - 2, 3 do
    local a, b, c = byte(s, i, i + 2)
    local v = a << 16 | b << 8 | c
    n = n + 1
    out[n] = enc[v >> 18] .. enc[v >> 12 & 63] .. enc[v >> 6 & 63]
      .. enc[v & 63]
  end
  local rest = len % 3
  if rest == 1 then
    local v = byte(s, len) << 16
    out[n + 1] = enc[v >> 18] .. enc[v >> 12 & 63]
      .. (padding and "==" or "")
  elseif rest == 2 then
    local a, b = byte(s, len - 1, len)
    local v = a << 16 | b << 8
    out[n + 1] = enc[v >> 18] .. enc[v >> 12 & 63] .. enc[v >> 6 & 63]
      .. (padding and "=" or "")
  end
  return concat(out)
end

-- nginx's rules (ngx_decode_base64): the data ends at the first "=" (what
-- follows is ignored), padding is optional, a character outside the
-- alphabet or a length of 4k+1 makes the input invalid (nil)
local function b64_decode(s, dec)
  local len = #s
  local eq = s:find("=", 1, true)
  if eq then len = eq - 1 end
  if len % 4 == 1 then return nil end
  local out, n, i = {}, 0, 1
  while i + 3 <= len do
    local a, b, c, d = byte(s, i, i + 3)
    a, b, c, d = dec[a], dec[b], dec[c], dec[d]
    if not (a and b and c and d) then return nil end
    local v = a << 18 | b << 12 | c << 6 | d
    n = n + 1
    out[n] = char(v >> 16, v >> 8 & 255, v & 255)
    i = i + 4
  end
  local rest = len - i + 1
  if rest > 0 then
    local a, b, c = byte(s, i, len)
    a, b = dec[a], dec[b]
    if not (a and b) then return nil end
    if rest == 2 then
      out[n + 1] = char(a << 2 | b >> 4)
    else
      c = dec[c]
      if not c then return nil end
      local v = a << 12 | b << 6 | c
      out[n + 1] = char(v >> 10, v >> 2 & 255)
    end
  end
  return concat(out)
end

-- (lua-resty-core's check: false and nil pad, true does not, any other
-- value raises)
local function encode_base64(s, no_padding)
  s = tostr(s)
  if no_padding and no_padding ~= true then
    error("bad no_padding: boolean expected, got " .. type(no_padding), 2)
  end
  return b64_encode(s, B64_ENC, not no_padding)
end

-- (lua-resty-core's message for anything but a string, numbers too)
local function decode_base64(s)
  if type(s) ~= "string" then error("string argument only", 2) end
  return b64_decode(s, B64_DEC)
end

-- MIME's base64 (ngx.decode_base64mime, lua-nginx-module 0.10.28): every
-- byte outside the alphabet (line breaks...) is skipped, then the rules
-- of decode_base64 apply
local function decode_base64mime(s)
  if type(s) ~= "string" then error("string argument only", 2) end
  return b64_decode(s:gsub("[^A-Za-z0-9+/=]", ""), B64_DEC)
end

-- require "ngx.base64" (lua-resty-core): URL-safe alphabet, no padding
_M.base64 = {
  -- (what is not a string: nil, err, as lua-resty-core)
  encode_base64url = function(s)
    if type(s) ~= "string" then return nil, "must provide a string" end
    return b64_encode(s, B64URL_ENC, false)
  end,
  decode_base64url = function(s)
    if type(s) ~= "string" then return nil, "must provide a string" end
    local r = b64_decode(s, B64URL_DEC)
    if r == nil then return nil, "invalid input" end
    return r
  end,
}

---------------------------------------------------------------------------
-- MD5 (RFC 1321)

-- T[i] = floor(2^32 * |sin(i)|), the table of RFC 1321 section 3.4 (as
-- constants, not computed, so that no libm rounding can change them)
local MD5_T = {
  0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee,
  0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
  0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be,
  0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
  0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa,
  0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
  0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed,
  0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
  0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c,
  0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
  0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05,
  0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
  0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039,
  0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
  0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1,
  0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
}

-- per step: the shift amount and the index of the message word
local MD5_S, MD5_G = {}, {}
do
  local shifts = {
    { 7, 12, 17, 22 }, { 5, 9, 14, 20 }, { 4, 11, 16, 23 }, { 6, 10, 15, 21 },
  }
  for i = 0, 63 do
    local r = i // 16
    MD5_S[i + 1] = shifts[r + 1][i % 4 + 1]
    local g = r == 0 and i or r == 1 and (5 * i + 1) or r == 2
      and (3 * i + 5) or 7 * i
    MD5_G[i + 1] = g % 16 + 1
  end
end

-- the message padded to a multiple of 64 bytes, with its bit length
-- (little-endian for MD5, big-endian for SHA-1)
local function md_pad(s, lenfmt)
  local len = #s
  return s .. "\128" .. ("\0"):rep((55 - len) % 64)
    .. pack(lenfmt, len * 8)
end

local MD5_WORDS = "<" .. ("I4"):rep(16)

local function md5_bin(s)
  s = md_pad(tostr(s), "<I8")
  local h0, h1, h2, h3 = 0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476
  local T, S, G = MD5_T, MD5_S, MD5_G
  local X = {}
  for pos = 1, #s, 64 do
    X[1], X[2], X[3], X[4], X[5], X[6], X[7], X[8], X[9], X[10], X[11],
      X[12], X[13], X[14], X[15], X[16] = sunpack(MD5_WORDS, s, pos)
    local a, b, c, d = h0, h1, h2, h3
    for i = 1, 64 do
      local f
      if i <= 16 then
        f = (b & c) | (~b & d)
      elseif i <= 32 then
        f = (b & d) | (c & ~d)
      elseif i <= 48 then
        f = b ~ c ~ d
      else
        f = c ~ (b | ~d)
      end
      f = (f + a + T[i] + X[G[i]]) & M32
      local sh = S[i]
      a, d, c = d, c, b
      b = (b + ((f << sh) | (f >> (32 - sh)))) & M32
    end
    h0 = (h0 + a) & M32
    h1 = (h1 + b) & M32
    h2 = (h2 + c) & M32
    h3 = (h3 + d) & M32
  end
  return pack("<I4I4I4I4", h0, h1, h2, h3)
end

local function tohex(s)
  return (s:gsub(".", function(c) return format("%02x", byte(c)) end))
end

local function md5(s)
  return tohex(md5_bin(tostr(s)))
end

---------------------------------------------------------------------------
-- SHA-1 (FIPS 180-4) and HMAC-SHA1 (RFC 2104)

local SHA1_WORDS = ">" .. ("I4"):rep(16)

local function sha1_bin(s)
  s = md_pad(tostr(s), ">I8")
  local h0, h1, h2, h3, h4 =
    0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0
  local w = {}
  for pos = 1, #s, 64 do
    w[1], w[2], w[3], w[4], w[5], w[6], w[7], w[8], w[9], w[10], w[11],
      w[12], w[13], w[14], w[15], w[16] = sunpack(SHA1_WORDS, s, pos)
    for i = 17, 80 do
      local x = w[i - 3] ~ w[i - 8] ~ w[i - 14] ~ w[i - 16]
      w[i] = (x << 1 | x >> 31) & M32
    end
    local a, b, c, d, e = h0, h1, h2, h3, h4
    for i = 1, 20 do
      local t = (a << 5 | a >> 27) + ((b & c) | (~b & d)) + e
        + 0x5a827999 + w[i]
      a, b, c, d, e = t & M32, a, (b << 30 | b >> 2) & M32, c, d
    end
    for i = 21, 40 do
      local t = (a << 5 | a >> 27) + (b ~ c ~ d) + e + 0x6ed9eba1 + w[i]
      a, b, c, d, e = t & M32, a, (b << 30 | b >> 2) & M32, c, d
    end
    for i = 41, 60 do
      local t = (a << 5 | a >> 27) + ((b & c) | (b & d) | (c & d)) + e
        + 0x8f1bbcdc + w[i]
      a, b, c, d, e = t & M32, a, (b << 30 | b >> 2) & M32, c, d
    end
    for i = 61, 80 do
      local t = (a << 5 | a >> 27) + (b ~ c ~ d) + e + 0xca62c1d6 + w[i]
      a, b, c, d, e = t & M32, a, (b << 30 | b >> 2) & M32, c, d
    end
    h0 = (h0 + a) & M32
    h1 = (h1 + b) & M32
    h2 = (h2 + c) & M32
    h3 = (h3 + d) & M32
    h4 = (h4 + e) & M32
  end
  return pack(">I4I4I4I4I4", h0, h1, h2, h3, h4)
end

local function xor_bytes(s, k)
  return (s:gsub(".", function(c) return char(byte(c) ~ k) end))
end

local function hmac_sha1(key, msg)
  key = checklstr(key, "hmac_sha1", 1)
  msg = checklstr(msg, "hmac_sha1", 2)
  if #key > 64 then key = sha1_bin(key) end
  key = key .. ("\0"):rep(64 - #key)
  return sha1_bin(xor_bytes(key, 0x5c)
                  .. sha1_bin(xor_bytes(key, 0x36) .. msg))
end

---------------------------------------------------------------------------
-- CRC-32 (ISO 3309 / zlib's crc32: reflected polynomial 0xedb88320)

local CRC_TABLE = {}
for i = 0, 255 do
  local c = i
  for _ = 1, 8 do
    if c & 1 == 1 then c = 0xedb88320 ~ (c >> 1) else c = c >> 1 end
  end
  CRC_TABLE[i] = c
end

local function crc32(s)
  local crc = M32
  for i = 1, #s do
    crc = CRC_TABLE[(crc ~ byte(s, i)) & 0xff] ~ (crc >> 8)
  end
  return crc ~ M32
end

---------------------------------------------------------------------------
-- URIs, query strings, SQL

-- ngx.escape_uri's types, nginx's ngx_escape_uri tables (ESCAPE[t] maps
-- each byte to escape to "%XX"): 0 URI, 1 query args, 2 URI component
-- (the default; ngx_lua's own table), 3 HTML, 4 refresh, 5 memcached and
-- 6 mail_auth. Types 0 to 4 escape the control bytes, space, DEL and the
-- bytes >= 0x80 plus the characters listed; 5 and 6 escape only control
-- bytes, space and "%".
local ESCAPE = {}
do
  local listed = {
    [0] = "#%?", "#%?+", "\"#$%&+,/:;<=>?@[\\]^`{|}", "\"#%'", "\"'",
  }
  for t = 0, 6 do
    local e = {}
    for b = 0, 255 do
      local c = char(b)
      local esc
      if t >= 5 then
        esc = b <= 0x20 or c == "%"
      else
        esc = b <= 0x20 or b >= 0x7f or listed[t]:find(c, 1, true) ~= nil
      end
      if esc then e[c] = format("%%%02X", b) end
    end
    ESCAPE[t] = e
  end
end

-- lua-resty-core's checks of the type, with its messages and level
local function escape_uri(s, esc_type)
  s = tostr(s)
  if esc_type == nil then
    esc_type = 2
  elseif type(esc_type) ~= "number" then
    error('"type" is not a number', 3)
  elseif not (esc_type >= 0 and esc_type <= 6) then -- (NaN too)
    error('"type" ' .. numstr(esc_type) .. " out of range", 3)
  end
  -- (the FFI passes an int: a fraction is dropped)
  return (s:gsub(".", ESCAPE[floor(esc_type)]))
end

-- "%XX" (either case) decoded, "+" is a space (as ngx_lua does); a "%"
-- not followed by two hex digits stays as it is
local function unescape_uri(s)
  s = tostr(s)
  s = s:gsub("+", " ")
  return (s:gsub("%%(%x%x)", function(h) return char(tonumber(h, 16)) end))
end

-- keys in sorted order (OpenResty follows the hash order), so the result
-- is deterministic; true gives a bare key, false is left out, a table
-- gives the key once per element (true and false as above); the errors
-- are ngx_lua's (ngx_http_lua_process_args_option)
local function encode_args(...)
  local t = ...
  if select("#", ...) ~= 1 then
    error("expecting 1 argument but seen " .. select("#", ...), 2)
  end
  if type(t) ~= "table" then
    argerror(1, "encode_args", "table expected, got " .. type(t))
  end
  local keys = {}
  for k in next, t do
    if type(k) ~= "string" then
      error('attempt to use a non-string key in the "args" option table', 2)
    end
    keys[#keys + 1] = k
  end
  table.sort(keys)
  local out = {}
  local function add(ek, v)
    local tv = type(v)
    if v == true then
      out[#out + 1] = ek
    elseif tv == "string" or tv == "number" then
      out[#out + 1] = ek .. "=" .. escape_uri(v)
    elseif v ~= false then
      error("attempt to use " .. tv .. " as query arg value", 3)
    end
  end
  for _, k in ipairs(keys) do
    local ek, v = escape_uri(k), t[k]
    if type(v) == "table" then
      for _, e in next, v do add(ek, e) end
    else
      add(ek, v)
    end
  end
  return concat(out, "&")
end

-- sets the argument k (unescaped already) to v; a repeated key gives an
-- array; an empty key is dropped
local function set_arg(res, k, v)
  if k == "" then return end
  local old = res[k]
  if old == nil then
    res[k] = v
  elseif type(old) == "table" then
    old[#old + 1] = v
  else
    res[k] = { old, v }
  end
end

-- one "key=value" or "key" of a query string into res
local function decode_pair(res, pair)
  local k, v = pair:match("^([^=]*)=(.*)$")
  if k then
    set_arg(res, unescape_uri(k), unescape_uri(v))
  else
    set_arg(res, unescape_uri(pair), true)
  end
end

-- "a=1&b&c=" -> {a = "1", b = true, c = ""}, as ngx_http_lua_parse_args:
-- every "&" ends a pair (an empty one too) and counts towards max_args
-- (default 100; 0 or less: no limit); at the limit the table is returned
-- with "truncated". As ngx_lua's C function: one or two arguments, the
-- string as luaL_checklstring takes it, max_args as luaL_checkint (a
-- number or a numeric string, truncated; nil raises)
local function decode_args(...)
  local n, s, max_args = select("#", ...), ...
  if n ~= 1 and n ~= 2 then
    error("expecting 1 or 2 arguments but seen " .. n, 2)
  end
  s = checklstr(s, "decode_args")
  if n == 2 then
    local m = tonumber(max_args)
    if not m then
      argerror(2, "decode_args", "number expected, got "
               .. type(max_args))
    end
    -- (LuaJIT's lua_tointeger truncates; as C's int)
    m = (m ~= m or m >= 2^31 or m < -2^31) and 0
        or tointeger(m >= 0 and floor(m) or -floor(-m))
    max_args = m
  else
    max_args = 100
  end
  local res, count, pos = {}, 0, 1
  while true do
    local amp = s:find("&", pos, true)
    if not amp then break end
    decode_pair(res, s:sub(pos, amp - 1))
    pos = amp + 1
    count = count + 1
    if max_args > 0 and count == max_args then return res, "truncated" end
  end
  if pos <= #s then decode_pair(res, s:sub(pos)) end
  return res
end

-- MySQL string literal quoting, as ngx.quote_sql_str
local SQL_ESC = {
  ["\0"] = "\\0", ["\b"] = "\\b", ["\n"] = "\\n", ["\r"] = "\\r",
  ["\t"] = "\\t", ["\26"] = "\\Z", ["\\"] = "\\\\", ["'"] = "\\'",
  ['"'] = '\\"',
}

local function quote_sql_str(s)
  s = checklstr(s, "quote_sql_str") -- (nil raises, spec/59)
  return "'" .. s:gsub("[\0\b\n\r\t\26\\'\"]", SQL_ESC) .. "'"
end

---------------------------------------------------------------------------
-- time

local DAYS = { "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat" }
local MONTHS = { "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug",
                 "Sep", "Oct", "Nov", "Dec" }

-- a time for http_time / cookie_time as nginx takes it: a number only
-- (lua-resty-core's message), made a time_t by the FFI (truncated; NaN,
-- infinities and what int64 cannot hold become its minimum, as x86's
-- conversion does), what is before 1970 as 1970, and what is after
-- 9999-12-31 23:59:59 as that (ngx_gmtime)
local function time_arg(sec)
  if type(sec) ~= "number" then error("number argument only", 3) end
  if mtype(sec) == "float" then
    if sec ~= sec or sec >= 2^63 or sec < -2^63 then
      sec = 0
    else
      sec = tointeger(sec >= 0 and floor(sec) or -floor(-sec))
    end
  end
  if sec < 0 then sec = 0 end
  if sec > 253402300799 then sec = 253402300799 end
  return sec, os.date("!*t", sec)
end

-- names from tables, not os.date's %a/%b, which follow the C locale
local function http_time(sec)
  local _, t = time_arg(sec)
  return format("%s, %02d %s %d %02d:%02d:%02d GMT", DAYS[t.wday], t.day,
                MONTHS[t.month], t.year, t.hour, t.min, t.sec)
end

-- nginx writes a two-digit year before 2038 (old Netscape cookies)
local function cookie_time(sec)
  local t
  sec, t = time_arg(sec)
  local year = sec < 2145916800 and format("%02d", t.year % 100) or t.year
  return format("%s, %02d-%s-%s %02d:%02d:%02d GMT", DAYS[t.wday], t.day,
                MONTHS[t.month], year, t.hour, t.min, t.sec)
end

-- days since 1970-01-01 of a proleptic Gregorian date (the usual
-- era/day-of-era computation, with March as the first month); linear in d
local function days_from_civil(y, m, d)
  if m <= 2 then y = y - 1 end
  local era = y // 400
  local yoe = y - era * 400
  local doy = (153 * ((m + 9) % 12) + 2) // 5 + d - 1
  return era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468
end

local MDAY = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 }

-- the n decimal digits of s at i, or nil
local function digits(s, i, n)
  local v = 0
  for k = i, i + n - 1 do
    local b = byte(s, k)
    if not b or b < 48 or b > 57 then return nil end
    v = v * 10 + b - 48
  end
  return v
end

-- the month at i as nginx reads it: from its first letters only ("Jux" is
-- July, "Nox" November)
local function month_at(s, i)
  local c, c1, c2 = sub(s, i, i), sub(s, i + 1, i + 1), sub(s, i + 2, i + 2)
  if c == "J" then return c1 == "a" and 1 or (c2 == "n" and 6 or 7) end
  if c == "M" then return c2 == "r" and 3 or 5 end
  if c == "A" then return c1 == "p" and 4 or 8 end
  return ({ F = 2, S = 9, O = 10, N = 11, D = 12 })[c]
end

-- an HTTP date -> seconds, or nil, as nginx's ngx_parse_http_time reads
-- it (recorded in spec/59): RFC 1123 "Thu, 18 Nov 2010 11:27:35 GMT",
-- RFC 850 "Thursday, 18-Nov-10 11:27:35 GMT" and asctime "Thu Nov 18
-- 11:27:35 2010"; the weekday is not checked, the day has two digits
-- (asctime: one or two), nothing after the seconds (the year in asctime)
-- is looked at, and a day past the month's end is refused
local function parse_http_time(s)
  if type(s) ~= "string" then error("string argument only", 2) end
  local len, p, fmt = #s, 1, nil
  while p <= len do -- the weekday: up to a "," (or a " ": asctime)
    local c = byte(s, p)
    if c == 44 then break end
    if c == 32 then fmt = "asctime"; break end
    p = p + 1
  end
  p = p + 1
  while byte(s, p) == 32 do p = p + 1 end
  if len - p + 1 < 18 then return nil end
  local day, year
  if fmt ~= "asctime" then
    day = digits(s, p, 2)
    if not day then return nil end
    p = p + 2
    local c = byte(s, p)
    if c == 32 then
      if len - p + 1 < 18 then return nil end
      fmt = "rfc1123"
    elseif c == 45 then
      fmt = "rfc850"
    else
      return nil
    end
    p = p + 1
  end
  local month = month_at(s, p)
  if not month then return nil end
  p = p + 3
  local sep = byte(s, p)
  if (fmt == "rfc1123" and sep ~= 32) or (fmt == "rfc850" and sep ~= 45) then
    return nil
  end
  p = p + 1
  if fmt == "rfc1123" then
    year = digits(s, p, 4)
    p = p + 4
  elseif fmt == "rfc850" then
    year = digits(s, p, 2)
    year = year and year + (year < 70 and 2000 or 1900)
    p = p + 2
  else
    if byte(s, p) == 32 then p = p + 1 end
    day = digits(s, p, 1)
    if not day then return nil end
    p = p + 1
    if byte(s, p) ~= 32 then
      local d2 = digits(s, p, 1)
      if not d2 then return nil end
      day, p = day * 10 + d2, p + 1
    end
    if len - p + 1 < 14 then return nil end
    year = 0
  end
  if not year or byte(s, p) ~= 32 then return nil end
  local hh, mm, ss = digits(s, p + 1, 2), digits(s, p + 4, 2),
                     digits(s, p + 7, 2)
  if not (hh and mm and ss) or byte(s, p + 3) ~= 58
     or byte(s, p + 6) ~= 58 then
    return nil
  end
  if fmt == "asctime" then
    year = byte(s, p + 9) == 32 and digits(s, p + 10, 4)
    if not year then return nil end
  end
  if hh > 23 or mm > 59 or ss > 59 then return nil end
  if day == 29 and month == 2 then
    if year % 4 ~= 0 or (year % 100 == 0 and year % 400 ~= 0) then
      return nil
    end
  elseif day > MDAY[month] then
    return nil
  end
  return days_from_civil(year, month, day) * 86400 + hh * 3600 + mm * 60
         + ss
end

---------------------------------------------------------------------------
-- logging and output

local LEVELS = { "STDERR", "EMERG", "ALERT", "CRIT", "ERR", "WARN",
                 "NOTICE", "INFO", "DEBUG" }
local LEVEL_NAMES = { [0] = "stderr", "emerg", "alert", "crit", "error",
                      "warn", "notice", "info", "debug" }

-- nginx's default error_log level is "error": ERR and more severe
local log_level = 4

local function level_of(v)
  if type(v) == "string" then
    local lv = v:lower()
    for i = 0, 8 do
      if LEVEL_NAMES[i] == lv or LEVELS[i + 1]:lower() == lv then
        return i
      end
    end
  else
    local i = tointeger(v)
    if i and i >= 0 and i <= 8 then return i end
  end
  error("corosched.ngx: bad log level: " .. tostring(v), 3)
end

-- sets the level below which ngx.log discards messages (a number or a
-- name: "error", "warn", "debug"...); returns the previous one
function _M.set_log_level(level)
  local old = log_level
  log_level = level_of(level)
  return old
end

-- the text ngx.log and ngx.print make of a value: nil, booleans and
-- ngx.null by name, tables only with __tostring (ngx.log)
local function log_str(v, i)
  local t = type(v)
  if t == "string" then return v end
  if t == "number" then return numstr(v) end
  if t == "boolean" or t == "nil" then return tostring(v) end
  if v == cs.null then return "null" end
  if t == "table" then
    local mt = getmetatable(v)
    if type(mt) == "table" and mt.__tostring then return tostring(v) end
    argerror(i, "log", "expected table to have __tostring metamethod", 4)
  end
  argerror(i, "log", "string, number, boolean, or nil expected, got " .. t,
           4)
end

-- as ngx_http_lua_ngx_log: the level is checked (luaL_checkint: a numeric
-- string will do, a fraction is dropped), then removed, so that the
-- messages are arguments #1, #2... of the errors
local function log(...)
  local level = ...
  local lv = type(level) == "string" and tonumber(level) or level
  if type(lv) ~= "number" then
    argerror(1, "log", "number expected, got "
             .. (select("#", ...) == 0 and "no value" or type(level)))
  end
  lv = lv < 0 and -floor(-lv) or floor(lv) -- truncated
  if mtype(lv) ~= "integer" or lv < 0 or lv > 8 then
    argerror(1, "log", "bad log level: " .. tostring(lv))
  end
  if lv > log_level then return end
  local n = select("#", ...) - 1
  local args = { select(2, ...) }
  local parts = {}
  for i = 1, n do parts[i] = log_str(args[i], i) end
  -- looked up at each call, so that io.stderr can be redirected
  io.stderr:write(os.date("%Y/%m/%d %H:%M:%S"), " [", LEVEL_NAMES[lv],
                  "] ", concat(parts), "\n")
end

-- ngx.print's values, as ngx_http_lua_ngx_echo writes them: an array
-- (only keys 1, 2...; its elements up to the largest key, a hole written
-- "nil") is flattened, nested too. Appends to parts; returns an error
-- message for what cannot be written.
local function out_table(parts, t)
  local max = 0
  for k in next, t do
    if mtype(k) ~= "integer" or k < 1 then return "non-array table found" end
    if k > max then max = k end
  end
  for j = 1, max do
    local v = rawget(t, j)
    local vt = type(v)
    if vt == "string" then
      parts[#parts + 1] = v
    elseif vt == "number" then
      parts[#parts + 1] = numstr(v, true)
    elseif vt == "boolean" or vt == "nil" then
      parts[#parts + 1] = tostring(v)
    elseif v == cs.null then
      parts[#parts + 1] = "null"
    elseif vt == "table" then
      local err = out_table(parts, v)
      if err then return err end
    else
      return "bad data type " .. vt .. " found"
    end
  end
end

local function output(fname, nl, ...)
  local parts = {}
  local args, n = { ... }, select("#", ...)
  for i = 1, n do
    local v = args[i]
    local t, err = type(v), nil
    if t == "string" then
      parts[#parts + 1] = v
    elseif t == "number" then
      parts[#parts + 1] = numstr(v)
    elseif t == "boolean" or t == "nil" then
      parts[#parts + 1] = tostring(v)
    elseif v == cs.null then
      parts[#parts + 1] = "null"
    elseif t == "table" then
      err = out_table(parts, v)
    else
      err = "string, number, boolean, nil, ngx.null, or array table "
        .. "expected, but got " .. t
    end
    -- (output is tail-called by ngx.say/ngx.print: level 3 blames their
    -- caller)
    if err then argerror(i, fname, err) end
  end
  if nl then parts[#parts + 1] = "\n" end
  io.stdout:write(concat(parts))
  return 1
end

---------------------------------------------------------------------------
-- timers

-- the light threads running an ngx.timer handler now (weak: a handler
-- that failed, or was killed at teardown, leaves a dead entry behind)
local running = setmetatable({}, { __mode = "k" })
-- the handles of ngx timers, for _M.stop_timers (pending ones are
-- anchored by the scheduler, so weak keys lose only finished ones)
local handles = setmetatable({}, { __mode = "k" })

local function counted(fn)
  return function(...)
    local co = coroutine.running()
    running[co] = true
    fn(...)
    running[co] = nil
  end
end

-- the checks of ngx_http_lua_ngx_timer_helper, with its messages (called
-- by ngx.timer.at/every, so the errors blame their caller); returns the
-- delay as a number
local function timer_check(fname, nargs, delay, fn)
  if nargs < 2 then
    error(("expecting at least 2 arguments but got %d"):format(nargs), 3)
  end
  local d = tonumber(delay) -- luaL_checknumber: a numeric string will do
  if type(delay) ~= "number" and (type(delay) ~= "string" or not d) then
    argerror(1, fname, "number expected, got " .. type(delay), 4)
  end
  -- (the delay is taken in whole milliseconds)
  if fname == "every" and d >= 0 and d < 0.001 then
    error("delay cannot be zero", 3)
  end
  if type(fn) ~= "function" or debug.getinfo(fn, "S").what == "C" then
    argerror(2, fname, "Lua function expected", 4)
  end
  return d
end

-- 1 (as ngx_lua's lua_pushinteger(L, 1)), or nil, err
local function timer_new(make, delay, fn, ...)
  local h, err = make(delay, counted(fn), ...)
  if not h then return nil, err end
  handles[h] = true
  return 1
end

local timer = {
  at = function(...)
    local d = timer_check("at", select("#", ...), ...)
    return timer_new(cs.timer.at, d, select(2, ...))
  end,
  every = function(...)
    local d = timer_check("every", select("#", ...), ...)
    return timer_new(cs.timer.every, d, select(2, ...))
  end,
  -- every corosched timer that has not fired yet (cs.timer ones too)
  pending_count = function() return cs.stats().timers end,
  -- the ngx.timer handlers running now
  running_count = function()
    local n = 0
    for co in pairs(running) do
      if cs.thread.status(co) == "dead" then
        running[co] = nil
      else
        n = n + 1
      end
    end
    return n
  end,
}

-- OpenResty timers cannot be cancelled (ngx.timer.every runs until the
-- worker exits); here a pending ngx.timer.every would keep cs.run alive
-- for ever, so this cancels every pending ngx.timer timer. Returns how
-- many were pending.
function _M.stop_timers()
  local n = 0
  for h in pairs(handles) do
    if h:pending() then
      h:cancel()
      n = n + 1
    end
    handles[h] = nil
  end
  return n
end

---------------------------------------------------------------------------
-- what cannot be provided

local function na_msg(name, why)
  return ("corosched.ngx: %s is not available (%s)"):format(name, why)
end

local function unavailable(name, why)
  return function() error(na_msg(name, why), 2) end
end

-- a table whose every field (read or written) raises
local function unavailable_table(name, why)
  local function raise(_, k)
    error(na_msg(name .. "." .. tostring(k), why), 2)
  end
  return setmetatable({}, {
    __index = raise,
    __newindex = raise,
    __tostring = function() return na_msg(name, why) end,
  })
end

-- LuaJIT's ffi: stock Lua has none. This stand-in has FFI's byte arrays
-- (csrc/cs_cdata.c: typeof, new, string, copy, fill, sizeof on char[?],
-- uint8_t[N]...), which libraries use as scratch buffers
-- (lua-resty-websocket 0.08+ masks frames in a char[?]). Any other
-- function raises when called: a library that takes them at load time but
-- calls them only on a path the user may not take (lua-resty-http 0.17's
-- http_connect: ffi.cast and ffi.gc for mTLS client certificates given as
-- cdata) loads. install{ffi = false} leaves it out (for a library that
-- tries pcall(require, "ffi") and has a fallback of its own).
local ffi_stub = {}
for _, f in ipairs({ "cdef", "load", "cast", "metatype", "gc", "alignof",
                     "offsetof", "istype", "errno", "abi" }) do
  ffi_stub[f] = unavailable("ffi." .. f, "stock Lua has no LuaJIT FFI")
end
for f, fn in pairs(require("corosched.core").ffi) do ffi_stub[f] = fn end
ffi_stub.C = unavailable_table("ffi.C", "stock Lua has no LuaJIT FFI")

-- a table of request functions (ngx.req, ngx.resp, ngx.location): the
-- fields OpenResty has are functions that raise when called, as
-- OpenResty's do where there is no request, so that a library may take
-- them at load time (lua-resty-http: local ngx_req_socket =
-- ngx.req.socket); other fields are nil; writing one raises
local function request_functions(name, why, fields)
  local t = {}
  for _, f in ipairs(fields) do
    t[f] = unavailable(name .. "." .. f, why)
  end
  return setmetatable({}, {
    __index = t,
    __newindex = function(_, k)
      error(na_msg(name .. "." .. tostring(k), why), 2)
    end,
    __tostring = function() return na_msg(name, why) end,
  })
end

local NO_REQUEST = "no nginx request"

---------------------------------------------------------------------------
-- the ngx table

local function worker_pid()
  local f = io.open("/proc/self/stat", "r")
  if not f then return 0 end
  local pid = f:read("n")
  f:close()
  return tointeger(pid) or 0
end

local tcp = cs.socket.tcp

local ngx = {
  null = cs.null,
  OK = 0, ERROR = -1, AGAIN = -2, DONE = -4, DECLINED = -5,

  socket = {
    tcp = tcp,
    stream = tcp,
    udp = cs.socket.udp,
    -- a new TCP cosocket, connected: sock, or nil, err
    connect = function(...)
      local sock = tcp()
      local ok, err = sock:connect(...)
      if not ok then
        sock:close()
        return nil, err
      end
      return sock
    end,
  },

  thread = {
    spawn = cs.thread.spawn,
    wait = cs.thread.wait,
    kill = cs.thread.kill,
  },
  -- cs.sleep, but where no loop runs it blocks (as OpenResty's does in
  -- init_by_lua*)
  sleep = require("corosched.core").ngx_sleep,
  now = cs.now,
  update_time = cs.update_time,
  time = function() return os.time() end,
  localtime = function() return os.date("%Y-%m-%d %H:%M:%S") end,
  utctime = function() return os.date("!%Y-%m-%d %H:%M:%S") end,
  today = function() return os.date("%Y-%m-%d") end,
  http_time = http_time,
  cookie_time = cookie_time,
  parse_http_time = parse_http_time,
  timer = timer,

  log = log,
  print = function(...) return output("print", false, ...) end,
  say = function(...) return output("say", true, ...) end,
  flush = function()
    io.stdout:flush()
    return 1
  end,

  -- there is no request: the closest phase that allows cosockets
  get_phase = function() return "timer" end,
  config = {
    ngx_lua_version = 10026,
    nginx_version = 1021004,
    subsystem = "http",
    debug = false,
    prefix = function() return "" end,
    nginx_configure = function() return "" end,
  },
  worker = {
    pid = worker_pid,
    -- (lua-resty-core's: every worker's pid; one worker here)
    pids = function() return { worker_pid() } end,
    id = function() return 0 end,
    count = function() return 1 end,
    -- true once cs.shutdown() was called (or the entry thread failed):
    -- nginx's worker shutting down
    exiting = cs.exiting,
  },

  encode_base64 = encode_base64,
  decode_base64 = decode_base64,
  decode_base64mime = decode_base64mime,
  md5 = md5,
  md5_bin = md5_bin,
  sha1_bin = sha1_bin,
  hmac_sha1 = hmac_sha1,
  crc32_short = function(s) return crc32(tostr(s)) end,
  crc32_long = function(s) return crc32(tostr(s)) end,
  escape_uri = escape_uri,
  unescape_uri = unescape_uri,
  encode_args = encode_args,
  decode_args = decode_args,
  quote_sql_str = quote_sql_str,

  exit = unavailable("ngx.exit", NO_REQUEST),
  redirect = unavailable("ngx.redirect", NO_REQUEST),
  exec = unavailable("ngx.exec", NO_REQUEST),
  -- (lua-nginx-module's README lists these)
  req = request_functions("ngx.req", NO_REQUEST, {
    "is_internal", "start_time", "http_version", "raw_header",
    "get_method", "set_method", "set_uri", "set_uri_args", "get_uri_args",
    "get_query_args", "get_post_args", "get_headers", "set_header",
    "clear_header", "read_body", "discard_body", "get_body_data",
    "get_body_file", "set_body_data", "set_body_file", "init_body",
    "append_body", "finish_body", "socket",
  }),
  var = unavailable_table("ngx.var", NO_REQUEST),
  header = unavailable_table("ngx.header", NO_REQUEST),
  resp = request_functions("ngx.resp", NO_REQUEST, { "get_headers" }),
  location = request_functions("ngx.location", NO_REQUEST,
                               { "capture", "capture_multi" }),
  shared = unavailable_table("ngx.shared",
                             "no nginx shared memory zones"),
  re = {},
}
-- ngx.re: corosched.re (PCRE2), when it was built
local re_ok, re_mod = pcall(require, "corosched.re")
for _, f in ipairs({ "match", "find", "gmatch", "sub", "gsub" }) do
  ngx.re[f] = re_ok and re_mod[f]
    or unavailable("ngx.re." .. f, "corosched.re was not built: no PCRE2")
end
for i, name in ipairs(LEVELS) do ngx[name] = i - 1 end

-- ngx.status, read or written, raises as in OpenResty's timers (what
-- light threads stand for: get_phase() says "timer"). ngx.ctx is one
-- table per process, not per request; it can be replaced by another
-- table only, as lua-resty-core's.
local function status_disabled(k)
  if k == "status" then error("API disabled in the current context", 3) end
end
local ngx_ctx = {}
setmetatable(ngx, {
  __index = function(_, k)
    if k == "ctx" then return ngx_ctx end
    status_disabled(k)
  end,
  __newindex = function(t, k, v)
    if k == "ctx" then
      if type(v) ~= "table" then
        error("ctx should be a table while getting a " .. type(v), 2)
      end
      ngx_ctx = v
      return
    end
    status_disabled(k)
    rawset(t, k, v)
  end,
})

_M.ngx = ngx

---------------------------------------------------------------------------
-- require "ngx.re": lua-resty-core's split and opt, on corosched.re's
-- match (with ctx.pos); only when corosched.re was built

local ngx_re
if re_ok then
  local re_match = re_mod.match

  -- whether UTF mode is on (opts u or U, or a leading (*UTF)): an empty
  -- match is then followed by a search one character on, as corosched.re
  -- does (lua-resty-core steps one byte and fails inside a character)
  local function split_utf(regex, opts)
    if opts and opts:find("[uU]") then return true end
    local i = 1
    while true do
      local verb, j = regex:match("^%(%*([%w_=]+)%)()", i)
      if not verb then return false end
      if verb == "UTF" then return true end
      i = j
    end
  end

  -- res, or nil, err. A match separates two fields unless it is empty
  -- and starts where the current field does (so "" and "|" split into
  -- characters, and "^" without "m" splits nothing); group 1 of the
  -- match, when it took part, goes between them; with max > 0 at most
  -- max - 1 matches are used and the rest of the subject is the last
  -- field; without, the empty fields at the end are dropped when the
  -- subject ends with a match. The entry after the last is set to nil
  -- (res may be a table reused as is); ctx.pos becomes where the next
  -- search would start
  local function split(subj, regex, opts, ctx, max, res)
    if type(subj) ~= "string" then
      subj = mtype(subj) and numstr(subj) or tostring(subj)
    end
    if mtype(regex) then
      regex = numstr(regex)
    elseif type(regex) ~= "string" then
      argerror(2, "split", "string expected, got " .. type(regex))
    end
    if opts and type(opts) ~= "string" then
      argerror(3, "split", "string expected, got " .. type(opts))
    end
    local start = 1
    if ctx then
      if type(ctx) ~= "table" then
        argerror(4, "split", "table expected, got " .. type(ctx))
      end
      if ctx.pos == nil then ctx.pos = 1 end
      local p = tonumber(ctx.pos)
      if not p then
        error("bad ctx.pos (number expected, got " .. type(ctx.pos) .. ")",
              2)
      end
      if p > 1 then start = floor(p) end -- (below 1, NaN: the start)
    end
    if not max then
      max = 0
    elseif not mtype(max) then
      argerror(5, "split", "number expected, got " .. type(max))
    end
    if not res then
      res = {}
    elseif type(res) ~= "table" then
      error("res is not a table", 2)
    end

    local len = #subj
    if start > len then
      res[1] = nil
      return res
    end

    -- in UTF mode the first search checks the whole subject; the next
    -- ones skip the check ("U"), as corosched.re's gmatch and gsub do
    local utf = split_utf(regex, opts)
    local mopts, next_opts = opts, opts
    if utf and not (opts and opts:find("U", 1, true)) then
      next_opts = (opts or ""):gsub("u", "") .. "U"
    end
    local mctx, caps = {}, {}
    local field, from, n, count = start, start, 0, 1
    while (max <= 0 or count < max) and from <= len + 1 do
      mctx.pos = from
      local m, err = re_match(subj, regex, mopts, mctx, caps)
      if not m then
        if err then return nil, err end
        break
      end
      mopts = next_opts
      local e = mctx.pos -- after the match
      local s = e - #m[0]
      from = e
      if s == e then
        from = e + 1
        while utf and from <= len and byte(subj, from) & 0xc0 == 0x80 do
          from = from + 1
        end
      end
      if s > field or s < e then
        n = n + 1
        res[n] = subj:sub(field, s - 1)
        if m[1] then
          n = n + 1
          res[n] = m[1]
        end
        field = e
        count = count + 1
        if field > len then break end
      end
    end

    if max <= 0 and field > len then
      local top = n
      while n > 0 and res[n] == "" do
        res[n] = nil
        n = n - 1
      end
      if n == 0 then res[top + 1] = nil end
    else
      n = n + 1
      res[n] = subj:sub(field)
    end
    res[n + 1] = nil
    if ctx then ctx.pos = from end
    return res
  end

  -- whether corosched.re's "o" cache holds a regex (lua-resty-core's
  -- is_regex_cache_empty)
  local function re_cached() return re_mod.cached() > 0 end

  -- lua-resty-core's checks and messages; then nothing: corosched.re
  -- keeps PCRE2's default JIT stack (32 KiB), a match that needs more
  -- fails with "pcre_exec() failed: -46"
  local function opt(option, value)
    if option ~= "jit_stack_size" then
      error("unrecognized option name", 2)
    end
    if re_cached() then
      error("changing jit stack size is not allowed when some regexs have "
            .. "already been compiled and cached", 2)
    end
    -- (the FFI's int: any number will do)
    if not mtype(value) then
      argerror(2, "opt", "number expected, got " .. type(value))
    end
  end

  ngx_re = { split = split, opt = opt }
end

-- The part of lua-resty-openssl (an FFI library) that pgmoon's
-- SCRAM-SHA-256-PLUS uses over TLS for its channel binding:
-- ssl.from_socket(sock):get_peer_certificate() (:to_PEM(),
-- :get_signature_name(), :digest(alg)) and x509.new(pem, "PEM"):digest(alg).
local x509_obj = {}
x509_obj.__index = x509_obj

function x509_obj:to_PEM() return self.pem end
function x509_obj:get_signature_name()
  if not self.signame then return nil, "x509:get_signature_name: unknown" end
  return self.signame
end
-- the digest of the DER form; alg: a digest or signature algorithm name
function x509_obj:digest(alg)
  return cs.socket.x509_digest(self.pem, alg or "sha1")
end

local resty_openssl_x509 = {
  new = function(data, fmt)
    if type(data) ~= "string" then
      error("x509.new: expect nil or a string at #1", 2)
    end
    if fmt ~= nil and fmt ~= "PEM" and fmt ~= "*" then
      return nil, "x509.new: only PEM is supported (corosched.ngx)"
    end
    if not cs.socket.x509_digest(data, "sha1") then
      return nil, "x509.new: bad certificate"
    end
    return setmetatable({ pem = data }, x509_obj)
  end,
}

local ssl_obj = {}
ssl_obj.__index = ssl_obj

function ssl_obj:get_peer_certificate()
  local pem, signame = self.sock:getpeercert()
  if not pem then return nil, "ssl:get_peer_certificate: " .. signame end
  return setmetatable({ pem = pem, signame = signame }, x509_obj)
end

local resty_openssl_ssl = {
  from_socket = function(sock)
    if type(sock) ~= "userdata" or not sock.getpeercert then
      return nil, "ssl.from_socket: expect a corosched tcp socket"
    end
    return setmetatable({ sock = sock }, ssl_obj)
  end,
}

---------------------------------------------------------------------------
-- lua-resty-string's digests, resty.string and resty.random, and the
-- digest, hmac, kdf (PBKDF2) and rand modules of lua-resty-openssl: FFI
-- modules both, so rebuilt here on cs.crypto (OpenSSL). lua-resty-mysql
-- requires resty.sha256 at load time; pgmoon's SCRAM-SHA-256 takes
-- resty.openssl.* when luaossl is not installed.

local crypto = cs.crypto

-- resty.sha1, resty.md5, resty.sha256...: new() (also :new()) -> object
-- with update(s) -> true, final() -> the digest, reset() -> true
local function resty_digest(alg)
  local class = {}
  local obj = { __index = {
    update = function(self, s) return self.d:update(s) end,
    final = function(self) return self.d:final() end,
    reset = function(self) return self.d:reset() end,
  } }
  function class.new()
    local d = crypto.digest(alg)
    if not d then return nil end
    return setmetatable({ d = d }, obj)
  end
  return class
end

local resty_string = {
  to_hex = function(s)
    s = checkstr(s, "to_hex", 1)
    return (s:gsub(".", function(c) return format("%02x", byte(c)) end))
  end,
  -- the string's bytes as a C int (atoi)
  atoi = function(s) return tointeger(tonumber(s:match("^%s*([+-]?%d+)"))
                                      or 0) or 0 end,
}

local function random_bytes(len)
  if mtype(len) == "float" then len = floor(len) end
  if type(len) ~= "number" or len < 0 then return nil, "bad length" end
  return crypto.random(len)
end

-- lua-resty-openssl's digest and hmac objects: update(...) takes any
-- number of strings; final([s]) adds s first
local function update_all(self, ...)
  for i = 1, select("#", ...) do
    local s = select(i, ...)
    if type(s) ~= "string" then
      return nil, self.name .. ":update: expect a string at #" .. i
    end
    self:_add(s)
  end
  return true
end

-- final([s]) of both: s is added first, then finish(self) gives the result
local function final_with(finish)
  return function(self, s)
    if s ~= nil then
      local ok, err = self:update(s)
      if not ok then return nil, err end
    end
    return finish(self)
  end
end

local digest_obj = { __index = {
  name = "digest",
  _add = function(self, s) self.d:update(s) end,
  update = update_all,
  final = final_with(function(self) return self.d:final() end),
  reset = function(self) return self.d:reset() end,
} }

-- HMAC: the message is gathered and its MAC computed by final()
local hmac_obj = { __index = {
  name = "hmac",
  _add = function(self, s) self.parts[#self.parts + 1] = s end,
  update = update_all,
  final = final_with(function(self)
    local mac, err = crypto.hmac(self.alg, self.key, concat(self.parts))
    self.parts = {}
    return mac, err
  end),
  reset = function(self) self.parts = {} return true end,
} }

local function openssl_alg(alg, fname)
  alg = alg or "sha1"
  if type(alg) ~= "string" then
    return nil, fname .. ": expect a string at #1"
  end
  if not crypto.digest(alg) then
    return nil, fname .. ": invalid digest type \"" .. alg .. "\""
  end
  return alg
end

local resty_openssl_kdf = { PBKDF2 = 69, HKDF = 1036, TLS1_PRF = 1021,
                            SCRYPT = 973 }

function resty_openssl_kdf.derive(o)
  local E = "kdf.derive: "
  if type(o) ~= "table" then return nil, E .. "expect a table at #1" end
  if o.type == nil then return nil, E .. '"type" must be set' end
  if type(o.type) ~= "number" then
    return nil, E .. 'expect a number as "type"'
  end
  if o.type ~= resty_openssl_kdf.PBKDF2 then
    return nil, E .. "only PBKDF2 is available (corosched.ngx)"
  end
  if o.outlen == nil then return nil, E .. '"outlen" must be set' end
  if type(o.pass) ~= "string" then
    return nil, E .. 'except a string as "pass"'
  end
  local alg, err = openssl_alg(o.md, "kdf.derive")
  if not alg then return nil, err end
  return crypto.pbkdf2(alg, o.pass, o.salt or "", o.pbkdf2_iter or 1,
                       o.outlen)
end

local resty_modules = {
  ["resty.string"] = resty_string,
  ["resty.random"] = { bytes = function(len) return random_bytes(len) end },
  ["resty.openssl.digest"] = {
    new = function(alg)
      local name, err = openssl_alg(alg, "digest.new")
      if not name then return nil, err end
      return setmetatable({ d = crypto.digest(name) }, digest_obj)
    end,
  },
  ["resty.openssl.hmac"] = {
    new = function(key, alg)
      if type(key) ~= "string" then
        return nil, "hmac.new: expect a string at #1"
      end
      local name, err = openssl_alg(alg, "hmac.new")
      if not name then return nil, err end
      return setmetatable({ key = key, alg = name, parts = {} }, hmac_obj)
    end,
  },
  ["resty.openssl.kdf"] = resty_openssl_kdf,
  ["resty.openssl.rand"] = {
    bytes = function(len) return random_bytes(len) end,
  },
}
for _, alg in ipairs({ "md5", "sha1", "sha224", "sha256", "sha384",
                       "sha512" }) do
  resty_modules["resty." .. alg] = resty_digest(alg)
end

-- the modules install() adds to package.preload
_M.modules = {
  ["resty.openssl.ssl"] = resty_openssl_ssl,
  ["resty.openssl.x509"] = resty_openssl_x509,
  -- new(n) as lua-resty-core's: n = tonumber(n) or 0, so that
  -- semaphore:new(0) (a method call) works too; the FFI's int drops a
  -- fraction
  ["ngx.semaphore"] = {
    new = function(n)
      n = tonumber(n) or 0
      if n < 0 then error("no negative number", 2) end
      return cs.semaphore.new(floor(n))
    end,
  },
  ["ngx.base64"] = _M.base64,
  ["ngx.re"] = ngx_re, -- (nil without corosched.re)
  ["bit"] = bit,
  ["table.new"] = table_new,
  ["table.clear"] = table_clear,
  ["table.nkeys"] = table_nkeys,
  ["table.isempty"] = table_isempty,
  ["table.isarray"] = table_isarray,
  ["table.clone"] = table_clone,
  ["ffi"] = ffi_stub,
}
for name, mod in pairs(resty_modules) do _M.modules[name] = mod end

-- os.date as LuaJIT's: a time with a fraction (ngx.now()'s) is cut to
-- whole seconds, where Lua 5.4's raises "number has no integer
-- representation" (lua-resty-mail dates its messages with ngx.now())
local function os_date_of(date)
  return function(fmt, t, ...)
    if mtype(t) == "float" and t == t and t > -huge and t < huge then
      t = t >= 0 and floor(t) or -floor(-t)
    end
    return date(fmt, t, ...)
  end
end
local our_os_date -- (what install() put in place, once)

-- Lua 5.1's module(name, ...) and package.seeall, which OpenResty's
-- LuaJIT has: libraries of its first years declare themselves so
-- (lua-resty-rabbitmqstomp: `module(...)`). The module's table is found
-- or made (package.loaded[name], or the dotted path from _G), gets _M,
-- _NAME and _PACKAGE, and becomes the calling chunk's _ENV (5.1's
-- setfenv). Lua 5.4's require passes the file name too: only functions
-- among the other arguments are options.
local function seeall(m)
  setmetatable(m, { __index = _G })
end

local function module51(name, ...)
  if type(name) ~= "string" then
    argerror(1, "module", "string expected, got " .. type(name))
  end
  local m = package.loaded[name]
  if type(m) ~= "table" then
    m = _G
    for part in name:gmatch("[^.]+") do
      local t = rawget(m, part)
      if t == nil then
        t = {}
        rawset(m, part, t)
      elseif type(t) ~= "table" then
        error("name conflict for module '" .. name .. "'", 2)
      end
      m = t
    end
    package.loaded[name] = m
  end
  if rawget(m, "_NAME") == nil then
    m._M, m._NAME = m, name
    m._PACKAGE = name:match("^(.*%.)[^.]*$") or ""
  end
  local caller = debug.getinfo(2, "f").func
  for i = 1, math.huge do
    local up = debug.getupvalue(caller, i)
    if up == nil then break end
    if up == "_ENV" then
      debug.setupvalue(caller, i, m)
      break
    end
  end
  for i = 1, select("#", ...) do
    local opt = select(i, ...)
    if type(opt) == "function" then opt(m) end
  end
end

-- Puts the `ngx` global and the package.preload entries in place and
-- returns the ngx table; calling it again returns the same table.
-- opts.log_level: see _M.set_log_level (default "error", nginx's).
-- opts.force: replace an `ngx` global and package.preload entries that
-- are not ours. Without it, an `ngx` global already there (inside
-- OpenResty itself, say) is left alone and returned, and nothing else is
-- installed; existing package.preload entries are kept.
-- Lua 5.1's `unpack`, which these libraries use as a global, is set to
-- table.unpack when there is none, `loadstring` to load, `module` and
-- package.seeall to 5.1's (above); os.date drops a time's fraction
-- (above). opts.ffi = false: no "ffi" stand-in.
function _M.install(opts)
  opts = opts or {}
  if opts.log_level ~= nil then _M.set_log_level(opts.log_level) end
  local g = rawget(_G, "ngx")
  if g ~= nil and g ~= ngx and not opts.force then
    return g
  end
  for name, mod in pairs(_M.modules) do
    if (package.preload[name] == nil or opts.force)
        and (name ~= "ffi" or opts.ffi ~= false) then
      package.preload[name] = function() return mod end
    end
  end
  if rawget(_G, "unpack") == nil then
    rawset(_G, "unpack", table.unpack)
  end
  if rawget(_G, "loadstring") == nil then
    rawset(_G, "loadstring", load)
  end
  if rawget(_G, "module") == nil then
    rawset(_G, "module", module51)
  end
  if package.seeall == nil then package.seeall = seeall end
  if os.date ~= our_os_date then
    our_os_date = os_date_of(os.date)
    os.date = our_os_date
  end
  rawset(_G, "ngx", ngx)
  return ngx
end

return _M
