-- Run by spec/45 under LuaJIT (its real FFI) and under Lua 5.4 with
-- corosched.ngx's ffi stand-in: each line printed must be the same, once
-- addresses are masked and error messages cut to what both can say (the
-- position prefix and the name of the function in "bad argument"). Only
-- what LuaJIT defines is probed here: nothing out of bounds (where LuaJIT
-- reads or writes past the buffer and the stand-in raises).
local ffi = require "ffi"
local out = {}

local function show(v)
  local s = tostring(v)
  s = s:gsub(": 0x%x+$", ": ADDR")
  return s
end

local function line(...)
  local t = {}
  for i = 1, select("#", ...) do t[i] = show((select(i, ...))) end
  out[#out + 1] = table.concat(t, " ")
end

local function try(f, ...)
  local r = { pcall(f, ...) }
  if r[1] then
    local t = { "ok" }
    for i = 2, select("#", pcall(f, ...)) do t[i] = show(r[i]) end
    out[#out + 1] = table.concat(t, " ")
  else
    local msg = tostring(r[2]):gsub("^[^:]*:%d+: ", "")
      :gsub("bad argument #(%d) to '[^']*'", "bad argument #%1 to ?")
    out[#out + 1] = "error " .. msg
  end
end

local function bytes(p, n) return ffi.string(p, n):byte(1, -1) end

-- ctypes
line(ffi.typeof("char[?]"), ffi.typeof("uint8_t[?]"),
     ffi.typeof("unsigned char [ 4 ]"), ffi.typeof("int8_t[?]"),
     ffi.typeof("  char  [?]  "), ffi.typeof("signed char[16]"))
line(ffi.typeof("char[?]") == ffi.typeof("char [?]"))

-- conversions on store, values on load
local ct = ffi.typeof("char[?]")
local b = ffi.new(ct, 6)
line(b, b[0], b[5], ffi.sizeof(b))
b[0] = 200; b[1] = -1; b[2] = 65.7; b[3] = true; b[4] = false; b[5] = 1e20
line(b[0], b[1], b[2], b[3], b[4], b[5], type(b[0]))
b[5] = 0 / 0
b[1.9] = 9
line(b[1], b[5])
line(bytes(b, 6))
local u = ffi.new("uint8_t[?]", 4)
u[0] = 200; u[1] = -1; u[2] = 256 + 7; u[3] = -129
line(u[0], u[1], u[2], u[3])
try(function() b[0] = "a" end)
try(function() b[0] = nil end)
try(function() u[0] = {} end)
try(function() return b.x end)
try(function() b.x = 1 end)
try(function() return #b end)

-- initializers
local function all(p, n) local t = {} for i = 0, n - 1 do t[#t + 1] = p[i] end
  return table.concat(t, ",") end
line(all(ffi.new("char[5]", 7), 5), all(ffi.new("char[5]", 7, 8), 5))
line(all(ffi.new("char[?]", 4, 7), 4), all(ffi.new("char[?]", 4, 1, 2), 4))
line(all(ffi.new("char[?]", 4, { 1, 2 }), 4), all(ffi.new("char[4]", { 5 }), 4))
line(all(ffi.new("char[4]", { [0] = 5 }), 4),
     all(ffi.new("char[4]", { [0] = 5, 6 }), 4),
     all(ffi.new("char[?]", 4, { 5 }), 4))
line(all(ffi.new("char[4]", {}), 4), all(ffi.new("uint8_t[3]", -1), 3))
local s = ffi.new("char[?]", 8, "hi")
line(ffi.string(s), s[2], ffi.sizeof(s))
line(ffi.string(ffi.new("char[3]", "abcdef"), 3))
line(ffi.string(ffi.new("char[?]", 3, "abc"), 3))
try(ffi.new, "char[2]", 1, 2, 3)
try(ffi.new, "char[2]", { 1, 2, 3 })
try(ffi.new, "char[?]")
try(ffi.new, "char[?]", -1)
try(ffi.new, "char[?]", "3")
line(ffi.sizeof(ffi.new("char[?]", 3.9)), ffi.sizeof(ct(2)), ct(2)[1])

-- strings
line(ffi.string("abc\0def"), #ffi.string("abc\0def", 6), ffi.string("", 0))
line(ffi.string(b, 0) == "", #ffi.string(u, 4))
try(ffi.string, b, "2")

-- pointers
local p = b + 1
line(p, p[0], p[-1], bytes(p, 2))
line((p - 1)[0], p - b, b - p, (1 + b)[0], (b + 1.5)[0])
line(p == b + 1, p == b, b == b, b == nil)
line(ffi.sizeof(p) == ffi.sizeof("char[8]"), ffi.typeof(p),
     ffi.sizeof(ffi.typeof(p)) == ffi.sizeof(p))
try(function() return b + "x" end)
try(function() return {} - b end)

-- copy, fill, sizeof
local c = ffi.new("char[?]", 8)
ffi.copy(c, "xyz")
line(ffi.string(c), bytes(c, 5))
ffi.copy(c + 1, "QQ", 2)
line(ffi.string(c, 4))
ffi.copy(c, b, 3)
line(bytes(c, 4))
ffi.fill(c, 4, 65)
line(ffi.string(c, 4))
ffi.fill(c, 2)
line(c[0], c[1], c[2])
ffi.fill(c + 6, 2, 300)
line(c[6], c[7])
line(ffi.sizeof("char[?]", 5), ffi.sizeof("uint8_t[7]"), ffi.sizeof(ct, 9))

-- what lua-resty-websocket 0.08+ does: mask a payload in a char buffer
local payload = ("\0\1\127\128\255 websocket"):rep(40)
local key = string.char(0x12, 0xab, 0x7f, 0x80)
local buf = ffi.new(ct, #payload)
for i = 1, #payload do
  local x, k = payload:byte(i), key:byte((i - 1) % 4 + 1)
  local v = 0
  for bit = 0, 7 do -- xor without the bit library
    local m = 2 ^ bit
    if (math.floor(x / m) % 2) ~= (math.floor(k / m) % 2) then v = v + m end
  end
  buf[i - 1] = v
end
local masked = ffi.string(buf, #payload)
local sum = 0
for i = 1, #masked do sum = (sum * 31 + masked:byte(i)) % 1000000007 end
line(#masked, sum)

io.write(table.concat(out, "\n"), "\n")
