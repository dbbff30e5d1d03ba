-- Coroutine transparency, differentially: random programs of nested
-- coroutines (create/resume, wrap, yield with values, status, close of
-- suspended ones, isyieldable, running, errors out of them, pcall,
-- to-be-closed variables) run twice: with stock Lua's coroutine functions
-- (cs.raw_coroutine) and no I/O, and inside a light thread with
-- corosched's, where every "io" step really parks the whole thread (a
-- sleep(0), a sleep, or a round trip on a socket pair), at any depth.
-- Everything the program observes (what each resume, yield, wrap call,
-- pcall, close and status returns, in order) must be the same. A fixed
-- seed (CS_CO_SEED picks another).
local helper = require "spec.helper"
local net = require "spec.support.net"
local cs = helper.cs

local SEED = tonumber(os.getenv("CS_CO_SEED")) or 8

local prng = helper.prng

local function show(t, i, j)
  local out = {}
  for k = i or 1, j or t.n do out[#out + 1] = tostring(t[k]) end
  return table.concat(out, ",")
end

-- runs the program of seed with the coroutine library co; io() is the
-- parking step; returns its log (a list of strings)
local function run(seed, co, io)
  local r = prng(seed)
  local log = {}
  local function put(...)
    log[#log + 1] = show(table.pack(...))
  end

  local body
  local function child(depth)
    return function(...) return body(depth, ...) end
  end

  function body(depth, ...)
    put("enter", depth, ...)
    for step = 1, r(1, 8) do
      local a = r(14)
      if a > 11 then a = a % 2 == 0 and 4 or 5 end -- (nest more often)
      if a == 1 or a == 2 then
        io(r)
        put("io", depth)
      elseif a == 3 then
        put("resumed with", co.yield(depth, step))
      elseif a == 4 and depth < 4 then
        local c = co.create(child(depth + 1))
        for k = 1, r(1, 5) do
          put("resume", show(table.pack(co.resume(c, k, "x" .. k))))
          put("status", co.status(c))
        end
        if co.status(c) == "suspended" and r(2) == 1 then
          put("close", show(table.pack(co.close(c))), co.status(c))
        end
      elseif a == 5 and depth < 4 then
        local f = co.wrap(child(depth + 1))
        for k = 1, r(1, 4) do
          local res = table.pack(pcall(f, k))
          put("wrap", show(res))
          if not res[1] then break end
        end
      elseif a == 6 then
        put("pcall", pcall(function()
          io(r)
          error("boom" .. depth, 0)
        end))
      elseif a == 7 then
        put("yieldable", co.isyieldable(), select(2, co.running()))
      elseif a == 8 and r(3) == 1 then
        error("E" .. depth .. "." .. step, 0)
      elseif a == 9 then
        do
          local _ <close> = setmetatable({}, { __close = function(_, e)
            put("tbc closed", depth, e)
          end })
          io(r)
          if r(4) == 1 then error("in tbc " .. depth, 0) end
        end
      elseif a == 10 then
        -- an error inside a nested coroutine caught by xpcall
        put("xpcall", xpcall(function()
          local c = co.create(function() io(r); error("deep", 0) end)
          local ok, e = co.resume(c)
          error(("%s %s"):format(tostring(ok), tostring(e)), 0)
        end, function(m) return "handled " .. m end))
      elseif a == 11 then
        put("running is main", select(2, co.running()))
      end
    end
    return "ret" .. depth, depth
  end

  -- the top: a coroutine driven to its end
  local top = co.create(child(1))
  for k = 1, 50 do
    local res = table.pack(co.resume(top, k))
    put("top", show(res), co.status(top))
    if co.status(top) == "dead" then break end
  end
  return log
end

describe("coroutine model", function()
  after_each(helper.after_each)

  it("random nested coroutines see the same with stock Lua and inside a "
     .. "light thread whose I/O parks", function()
    local programs = math.floor(150 * helper.scale) + 5
    local steps = 0
    net.run(function()
      local a, b = net.pair()
      local ios = 0
      local function io(r)
        ios = ios + 1
        local k = r(3)
        if k == 1 then
          cs.sleep(0)
        elseif k == 2 then
          cs.sleep(0.0005)
        else -- a round trip on the socket pair
          assert(a:send("p"))
          assert.equal("p", b:receive(1))
        end
      end
      for i = 1, programs do
        local seed = SEED * 10000 + i
        local want = run(seed, cs.raw_coroutine, function(r) r(3) end)
        local got = run(seed, coroutine, io)
        for j = 1, math.max(#want, #got) do
          if want[j] ~= got[j] then
            error(("seed %d, event %d: stock Lua %q, corosched %q")
              :format(seed, j, tostring(want[j]), tostring(got[j])), 0)
          end
        end
        steps = steps + #got
      end
      a:close()
      b:close()
      assert.is_true(ios > programs)
    end, { timeout = 60 })
    assert.is_true(steps > programs * 5)
  end)
end)
