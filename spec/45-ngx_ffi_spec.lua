-- corosched.ngx's "ffi" stand-in: LuaJIT FFI's byte arrays
-- (csrc/cs_cdata.c), which OpenResty libraries use as scratch buffers
-- (lua-resty-websocket 0.08+ masks frames in a char[?]), and the other
-- FFI functions, which raise when called.
--
-- The first test runs spec/support/ffi_probe.lua under LuaJIT (Debian's
-- luajit, when installed) and under this stand-in and compares every
-- line: types, conversions, initializers, strings, pointers, copy, fill,
-- sizeof. The others check where the stand-in deliberately differs: what
-- LuaJIT leaves undefined (reads and writes out of bounds) raises here.
require "spec.helper"
local ngxc = require "corosched.ngx"
local ngx_env = require "spec.support.ngx_env"

local save, restore_globals = ngx_env.saver()
local ffi

local PROBE = "spec/support/ffi_probe.lua"
local LUAJIT = "/usr/bin/luajit"

local exists = require("spec.support.net").exists

describe("the ffi stand-in (corosched.ngx)", function()
  before_each(function()
    save()
    ngxc.install()
    ffi = require "ffi"
  end)
  after_each(restore_globals)

  it("prints what LuaJIT's FFI prints for spec/support/ffi_probe.lua",
     function()
    if not exists(LUAJIT) then
      pending("skipped: apt-get install luajit")
      return
    end
    local p = assert(io.popen("env -u LD_PRELOAD " .. LUAJIT .. " " .. PROBE
                              .. " 2>&1"))
    local want = p:read("a")
    p:close()
    -- the probe, run here with the stand-in as its "ffi"
    local chunk = assert(loadfile(PROBE))
    local lines = {}
    local real_write = io.write
    io.write = function(...) -- luacheck: ignore
      for _, s in ipairs({ ... }) do lines[#lines + 1] = s end
    end
    local ok, err = pcall(chunk)
    io.write = real_write -- luacheck: ignore
    assert(ok, err)
    local got = table.concat(lines)
    assert.truthy(#want > 1000, want)
    local w, g = {}, {}
    for l in want:gmatch("[^\n]*") do w[#w + 1] = l end
    for l in got:gmatch("[^\n]*") do g[#g + 1] = l end
    for i = 1, math.max(#w, #g) do
      assert.equal(w[i], g[i], "line " .. i .. " of the probe")
    end
  end)

  it("raises where LuaJIT reads or writes out of bounds", function()
    local b = ffi.new("char[?]", 4)
    local oob = "out of bounds of 'char [?]'"
    assert.error_matches(function() return b[4] end,
                         "corosched.ngx: ffi: index 4 " .. oob
                         .. " (4 bytes from element 0)", nil, true)
    assert.error_matches(function() b[-1] = 0 end, "index -1 " .. oob,
                         nil, true)
    assert.error_matches(function() return (b + 4)[0] end,
                         "index 0 out of bounds of 'char *' (0 bytes", nil,
                         true)
    assert.equal(0, (b + 4)[-4]) -- back inside the array
    assert.error_matches(function() return b + 5 end,
                         "pointer offset 5 " .. oob, nil, true)
    assert.error_matches(function() return b - 1 end,
                         "pointer offset -1 " .. oob, nil, true)
    assert.error_matches(function() return ffi.string(b, 5) end,
                         "ffi.string: length 5 out of bounds (4 bytes there)",
                         nil, true)
    assert.error_matches(function() return ffi.string(b + 1, -1) end,
                         "length -1 out of bounds", nil, true)
    assert.error_matches(function() return ffi.string("abc", 4) end,
                         "length 4 out of bounds (3 bytes there)", nil, true)
    ffi.fill(b, 4, 1)
    assert.error_matches(function() return ffi.string(b) end,
                         "ffi.string: no zero byte in the 4 bytes there",
                         nil, true)
    assert.error_matches(function() ffi.copy(b, "abcd") end,
                         "ffi.copy: 5 bytes do not fit the 4 there", nil,
                         true)
    assert.error_matches(function() ffi.copy(b + 2, "abc", 3) end,
                         "3 bytes do not fit the 2 there", nil, true)
    assert.error_matches(function() ffi.copy(b, "ab", 4) end,
                         "ffi.copy: length 4 out of bounds (3 bytes there)",
                         nil, true)
    assert.error_matches(function() ffi.fill(b + 1, 4) end,
                         "ffi.fill: length 4 out of bounds", nil, true)
    assert.error_matches(function() ffi.new("char[?]", 2, "abc") end,
                         "ffi.new: a string of 3 bytes does not fit "
                         .. "'char [?]' of 2", nil, true)
    -- what fits stays as LuaJIT has it
    ffi.copy(b, "abc")
    assert.equal("abc", ffi.string(b))
    assert.equal("ab", ffi.string(ffi.new("char[?]", 2, "ab"), 2))
  end)

  it("a pointer keeps its array alive", function()
    local p = ffi.new("uint8_t[?]", 3, { 1, 2, 3 }) + 1
    local q = p + 1
    collectgarbage()
    collectgarbage()
    assert.equal(2, p[0])
    assert.equal(3, q[0])
    assert.equal(1, q - p)
    assert.equal("\2\3", ffi.string(p, 2))
    assert.error_matches(function() return q - ffi.new("char[1]") end,
                         "difference of pointers into different arrays", nil,
                         true)
  end)

  it("other C types and the other functions raise \"not available\"",
     function()
    for _, decl in ipairs({ "int[4]", "char *", "const char[?]",
                            "char[?][2]", "char[-1]", "char[", "char[?]x",
                            "unsigned int[2]", "struct { int a; }" }) do
      assert.error_matches(function() ffi.new(decl, 1) end,
                           "corosched.ngx: ffi C type '" .. decl
                           .. "' is not available (stock Lua has no LuaJIT "
                           .. "FFI; byte arrays only", nil, true)
    end
    assert.error_matches(function() ffi.typeof("double") end,
                         "ffi C type 'double' is not available", nil, true)
    assert.error_matches(function() ffi.new(ffi.typeof(ffi.new("char[1]") + 0))
                         end, "ffi.new('char *') is not available", nil, true)
    for _, f in ipairs({ "cdef", "load", "cast", "metatype", "gc", "istype",
                         "alignof", "offsetof", "errno", "abi" }) do
      assert.error_matches(function() ffi[f]("char[?]") end,
                           "corosched.ngx: ffi." .. f .. " is not available",
                           nil, true)
    end
    assert.error_matches(function() return ffi.C.memcpy end,
                         "ffi.C.memcpy is not available", nil, true)
    assert.error_matches(function() ffi.string(nil) end,
                         "bad argument #1 to 'string' (cannot convert 'nil' "
                         .. "to 'const char *')", nil, true)
    assert.error_matches(function() ffi.copy("x", "y", 1) end,
                         "cannot convert 'string' to 'void *'", nil, true)
    assert.error_matches(function() ffi.copy(ffi.new("char[2]"), {}, 1) end,
                         "cannot convert 'table' to 'const char *'", nil,
                         true)
    assert.error_matches(function() ffi.copy(ffi.new("char[2]"),
                                             ffi.new("char[2]")) end,
                         "bad argument #3 to 'copy' (value expected)", nil,
                         true)
    assert.error_matches(function() return ffi.new("char[1]")[{}] end,
                         "'char [1]' cannot be indexed with 'table'", nil,
                         true)
  end)

  it("ctypes are values LuaJIT's are: one per type, callable, printable",
     function()
    local ct = ffi.typeof("char[?]")
    assert.equal(ct, ffi.typeof(" char [ ? ] "))
    assert.equal(ffi.typeof("int8_t[?]"), ct) -- x86: char is signed
    assert.equal(ffi.typeof("uint8_t[?]"), ffi.typeof("unsigned char[?]"))
    assert.not_equal(ct, ffi.typeof("uint8_t[?]"))
    assert.equal("ctype<char [?]>", tostring(ct))
    local b = ct(3, 65)
    assert.equal("AAA", ffi.string(b, 3))
    assert.matches("^cdata<char %[%?%]>: 0x%x+$", tostring(b))
    assert.equal(ffi.typeof("char[3]"), ffi.typeof(ffi.new("char[3]")))
    assert.equal(ct, ffi.typeof(b))
    -- type() is Lua's: cdata are userdata here
    assert.equal("userdata", type(b))
    assert.equal(3, ffi.sizeof(b))
    assert.is_nil(ffi.sizeof(ct, -1))
    -- only + and - are defined
    assert.error_matches(function() return b * 2 end,
                         "attempt to perform arithmetic on a corosched.cdata "
                         .. "value", nil, true)
  end)

  it("random declarations and arguments raise or return, never crash",
     function()
    math.randomseed(45) -- the same cases each run
    local rnd = math.random
    local pieces = { "char", "unsigned", "signed", " ", "[", "]", "?", "0",
                     "9", "18446744073709551617", "uint8_t", "int8_t", "*",
                     "\0", "const", "4294967296" }
    local values = { 0, -1, 1.5, 0 / 0, math.huge, -math.huge,
                     math.maxinteger, math.mininteger, 2 ^ 53, "", "abc\0d",
                     true, false, {}, { 1, 2, 3 }, { [0] = 7 }, io.stdout,
                     print }
    local arrays = {}
    for i = 1, 3000 do
      local decl = {}
      for k = 1, rnd(6) do decl[k] = pieces[rnd(#pieces)] end
      decl = table.concat(decl)
      local a = arrays[rnd(#arrays + 1)] or values[rnd(#values)]
      local v1, v2 = values[rnd(#values)], values[rnd(#values)]
      local ok, r = pcall(({
        function() return ffi.typeof(decl) end,
        function() return ffi.new(decl, v1, v2) end,
        function() return ffi.new("char[?]", v1, v2) end,
        function() return ffi.new("uint8_t[3]", v1, v2, v1) end,
        function() return ffi.string(a, v1) end,
        function() ffi.copy(a, v1, v2) end,
        function() ffi.copy(a, a, v1) end,
        function() ffi.fill(a, v1, v2) end,
        function() return ffi.sizeof(a, v1) end,
        function() return a[v1] end,
        function() a[v1] = v2 end,
        function() return a + v1 end,
        function() return a - v1 end,
        function() return v1 - a end,
        function() return tostring(a) end,
      })[rnd(15)])
      if ok and getmetatable(r) and tostring(r):match("^cdata<") then
        arrays[#arrays % 20 + 1] = r
      elseif not ok then
        assert.is_string(r, "at " .. i)
      end
      if i % 500 == 0 then collectgarbage() end
    end
  end)

  it("a 1 MiB buffer masked byte by byte, as a WebSocket client does",
     function()
    local n = 1024 * 1024
    local payload = ("websocket\0\255"):rep(n // 11 + 1):sub(1, n)
    local key = { 0x37, 0xfa, 0x21, 0x3d }
    local buf = ffi.new("char[?]", n)
    local byte = string.byte
    for i = 1, n do
      buf[i - 1] = byte(payload, i) ~ key[(i - 1) % 4 + 1]
    end
    local masked = ffi.string(buf, n)
    assert.equal(n, #masked)
    local back = ffi.new("uint8_t[?]", n)
    for i = 1, n do
      back[i - 1] = byte(masked, i) ~ key[(i - 1) % 4 + 1]
    end
    assert.equal(payload, ffi.string(back, n))
    assert.equal(0x77 ~ 0x37, byte(masked, 1))
  end)
end)
