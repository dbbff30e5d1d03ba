-- The coroutine.* replacements (API.md "Coroutines"; lua-nginx-module's
-- coroutine API, t/091-coroutine.t): stock Lua 5.4 behaviour outside and
-- inside light threads, parking from any depth, non-yieldable callers.
local helper = require "spec.helper"
local cs = helper.cs
local spawn, wait, kill = cs.thread.spawn, cs.thread.wait, cs.thread.kill
local clock = helper.clock

local function closer(log, name)
  return setmetatable({}, { __close = function(_, e)
    log[#log + 1] = e and (name .. " (error)") or name
  end })
end

-- Scenarios that use only coroutine.*: each returns a value that must be
-- the same outside any loop (stock Lua) and inside a light thread.
local scenarios = {}

scenarios.generator = function()
  local out = {}
  for v in coroutine.wrap(function()
    for i = 1, 5 do coroutine.yield(i, i * i) end
  end) do out[#out + 1] = v end
  return out
end

scenarios.values_both_ways = function()
  local co = coroutine.create(function(a, b)
    local c, d = coroutine.yield(a + b, nil)
    local e = coroutine.yield(c .. d)
    return e, nil, "end"
  end)
  return {
    table.pack(coroutine.resume(co, 1, 2)),
    table.pack(coroutine.resume(co, "x", "y")),
    table.pack(coroutine.resume(co, "z")),
    table.pack(coroutine.resume(co)),
  }
end

scenarios.many_values = function()
  local t = {}
  for i = 1, 200 do t[i] = i end
  local co = coroutine.wrap(function(...)
    local got = table.pack(coroutine.yield(...))
    return got.n, table.unpack(got, 1, got.n)
  end)
  local a = table.pack(co(table.unpack(t)))
  local b = table.pack(co(table.unpack(t, 1, 150)))
  return { a.n, a[200], b.n, b[1], b[151] }
end

scenarios.statuses = function()
  local log = {}
  local outer
  local inner = coroutine.create(function()
    log[#log + 1] = coroutine.status(outer)
    log[#log + 1] = coroutine.isyieldable()
    coroutine.yield()
  end)
  outer = coroutine.create(function()
    log[#log + 1] = coroutine.status(outer)
    log[#log + 1] = (coroutine.running() == outer)
    coroutine.resume(inner)
    log[#log + 1] = coroutine.status(inner)
    coroutine.yield()
  end)
  log[#log + 1] = coroutine.status(outer)
  coroutine.resume(outer)
  log[#log + 1] = coroutine.status(outer)
  coroutine.resume(outer)
  log[#log + 1] = coroutine.status(outer)
  return log
end

scenarios.errors = function()
  local r = {}
  local co = coroutine.create(function() error("boom") end)
  r[1] = table.pack(coroutine.resume(co))
  r[2] = coroutine.status(co)
  r[3] = table.pack(coroutine.resume(co))
  local obj = {}
  co = coroutine.create(function() coroutine.yield(1) error(obj) end)
  coroutine.resume(co)
  r[4] = select(2, coroutine.resume(co)) == obj
  local w = coroutine.wrap(function() error("wrapped") end)
  r[5] = table.pack(pcall(w))
  r[6] = table.pack(pcall(w))
  w = coroutine.wrap(function() error(obj) end)
  r[7] = select(2, pcall(w)) == obj
  w = coroutine.wrap(function() return 1 end)
  w()
  r[8] = table.pack(pcall(w))
  w = coroutine.wrap(function() error("no position", 0) end)
  r[9] = table.pack(pcall(w))
  co = coroutine.create(function() local x = nil; return x.y end)
  r[10] = table.pack(coroutine.resume(co))
  return r
end

scenarios.self_resume = function()
  local co
  co = coroutine.create(function()
    return coroutine.resume(co)
  end)
  local r = table.pack(coroutine.resume(co))
  local w
  w = coroutine.wrap(function() return pcall(w) end)
  return { r, table.pack(w()) }
end

scenarios.resume_normal = function()
  local a, b
  a = coroutine.create(function() return coroutine.resume(b) end)
  b = coroutine.create(function() return coroutine.resume(a) end)
  return table.pack(coroutine.resume(a))
end

scenarios.close = function()
  local log = {}
  local co = coroutine.create(function()
    local _ <close> = closer(log, "a")
    local _ <close> = closer(log, "b")
    coroutine.yield()
  end)
  coroutine.resume(co)
  local r = { table.pack(coroutine.close(co)), coroutine.status(co) }
  r[3] = table.pack(coroutine.close(co)) -- dead: true
  co = coroutine.create(function()
    local _ <close> = setmetatable({}, { __close = function()
      error("close failed", 0) end })
    coroutine.yield()
  end)
  coroutine.resume(co)
  r[4] = table.pack(coroutine.close(co))
  co = coroutine.create(function() error("e", 0) end)
  coroutine.resume(co)
  r[5] = table.pack(coroutine.close(co))
  r[6] = table.pack(pcall(coroutine.close, coroutine.running()))
  local outer = coroutine.running()
  co = coroutine.create(function()
    return pcall(coroutine.close, outer)
  end)
  r[7] = table.pack(coroutine.resume(co))
  r[8] = log
  return r
end

scenarios.tbc_on_error = function()
  local log = {}
  local co = coroutine.create(function()
    local _ <close> = closer(log, "resume")
    error("x", 0)
  end)
  local r = { table.pack(coroutine.resume(co)) }
  r[2] = #log -- stock resume leaves them pending until close
  r[3] = table.pack(coroutine.close(co))
  local w = coroutine.wrap(function()
    local _ <close> = closer(log, "wrap")
    error("y", 0)
  end)
  r[4] = table.pack(pcall(w)) -- wrap closes them
  r[5] = log
  return r
end

scenarios.yield_in_close = function()
  local w = coroutine.wrap(function()
    do
      local _ <close> = setmetatable({}, { __close = function()
        coroutine.yield("in close")
      end })
    end
    return "end"
  end)
  return { w(), w() }
end

scenarios.yield_across_pcall_and_metamethods = function()
  local w = coroutine.wrap(function()
    local ok, v = pcall(function()
      local x = coroutine.yield("in pcall")
      error(x, 0)
    end)
    local t = setmetatable({}, { __index = function(_, k)
      return coroutine.yield("in __index " .. k)
    end })
    local got = t.foo
    return ok, v, got
  end)
  return { w(), w("err"), table.pack(w("meta")) }
end

scenarios.yield_across_c_boundary = function()
  local co = coroutine.create(function()
    table.sort({ 3, 2, 1 }, function(a, b)
      coroutine.yield()
      return a < b
    end)
  end)
  return table.pack(coroutine.resume(co))
end

scenarios.generators_in_c_callbacks = function()
  local function gen(n)
    return coroutine.wrap(function()
      for i = 1, n do coroutine.yield(i) end
    end)
  end
  local t = { 5, 3, 1, 4, 2 }
  table.sort(t, function(a, b)
    local g = gen(2)
    return a + g() < b + g() - 1
  end)
  local s = ("abc"):gsub("%w", function(c)
    local g = gen(3)
    return c .. g() .. g() .. g()
  end)
  local co = coroutine.create(function() coroutine.yield("gc") end)
  local got
  do
    local _ = setmetatable({}, { __gc = function()
      got = select(2, coroutine.resume(co))
    end })
  end
  collectgarbage()
  collectgarbage()
  local str = tostring(setmetatable({}, { __tostring = function()
    return gen(1)() .. "!"
  end }))
  return { t, s, got, str }
end

scenarios.nested_deep = function()
  local function nest(n)
    if n == 0 then
      coroutine.yield("leaf")
      return "bottom"
    end
    local co = coroutine.wrap(function() return nest(n - 1) end)
    local a = co()
    local b = co()
    coroutine.yield(a)
    return b .. n
  end
  local top = coroutine.wrap(function() return nest(50) end)
  return { top(), top() }
end

scenarios.wrap_runs_outer_yield = function()
  local outer = coroutine.wrap(function()
    local inner = coroutine.wrap(function()
      coroutine.yield("inner 1")
      coroutine.yield("inner 2")
    end)
    coroutine.yield(inner())
    coroutine.yield("outer")
    coroutine.yield(inner())
  end)
  return { outer(), outer(), outer() }
end

scenarios.running_and_isyieldable = function()
  local co = coroutine.create(function()
    local me, main = coroutine.running()
    return me == co, main, coroutine.isyieldable()
  end)
  return table.pack(coroutine.resume(co))
end

describe("coroutine.* replacements", function()
  after_each(helper.after_each)

  for name, scenario in pairs(scenarios) do
    it("behave like stock Lua inside a light thread: " .. name, function()
      local outside = scenario()
      local inside = helper.run(scenario)
      assert.same(outside, inside)
    end)
  end

  it("behave like stock Lua outside the loop (checked against the stock "
     .. "library in a fresh interpreter)", function()
    local out, err, ok = helper.subprocess([[
      local raw = {}
      for k, v in pairs(coroutine) do raw[k] = v end
      local cs = require "corosched"
      assert(coroutine.resume ~= raw.resume)
      for k, v in pairs(raw) do
        assert(cs.raw_coroutine[k] == v, "raw_coroutine." .. k)
      end
      local function run()
        local log = {}
        for v in coroutine.wrap(function()
          for i = 1, 3 do coroutine.yield(i) end end) do log[#log + 1] = v end
        local co = coroutine.create(function(a) return coroutine.yield(a) end)
        log[#log + 1] = select(2, coroutine.resume(co, "y"))
        log[#log + 1] = coroutine.status(co)
        log[#log + 1] = tostring(select(2, coroutine.resume(co, "z")))
        log[#log + 1] = coroutine.status(co)
        log[#log + 1] = select(2, coroutine.resume(co))
        log[#log + 1] = select(2, pcall(coroutine.wrap(function()
          error("w") end)))
        log[#log + 1] = tostring(coroutine.isyieldable())
        return table.concat(log, ",")
      end
      local mine = run()
      for k, v in pairs(raw) do coroutine[k] = v end
      local stock = run()
      io.write(mine == stock and "same" or (mine .. "\n" .. stock))
    ]])
    assert.equal("", err)
    assert.is_true(ok)
    assert.equal("same", out)
  end)

  it("keep the originals in cs.raw_coroutine", function()
    for _, k in ipairs({ "create", "resume", "yield", "wrap", "status",
                         "running", "isyieldable", "close" }) do
      assert.is_function(cs.raw_coroutine[k])
    end
    assert.not_equal(coroutine.resume, cs.raw_coroutine.resume)
  end)
end)

describe("inside a light thread", function()
  after_each(helper.after_each)

  it("a user coroutine may sleep: the whole thread parks", function()
    local log = {}
    local t0 = clock()
    helper.run(function()
      local other = spawn(function()
        for i = 1, 3 do log[#log + 1] = "other " .. i cs.sleep(0.01) end
      end)
      local gen = coroutine.wrap(function()
        for i = 1, 3 do
          cs.sleep(0.015)
          coroutine.yield(i)
        end
      end)
      local sum = 0
      for v in gen do sum = sum + v log[#log + 1] = "gen " .. v end
      assert.equal(6, sum)
      wait(other)
    end)
    assert.is_true(clock() - t0 >= 0.044)
    assert.equal("other 1", log[1])
    assert.equal("gen 1", log[3]) -- other ran while the generator slept
  end)

  it("sleep inside coroutine.wrap iterators inside pcall inside five "
     .. "nested coroutines", function()
    local t0 = clock()
    local ticks = 0
    local res
    helper.run(function()
      local ticker = spawn(function()
        for _ = 1, 10 do ticks = ticks + 1 cs.sleep(0.005) end
      end)
      local function level(n)
        if n == 0 then
          local ok, got = pcall(function()
            local acc = {}
            for v in coroutine.wrap(function()
              for i = 1, 3 do
                cs.sleep(0.01)
                coroutine.yield(i)
              end
            end) do
              acc[#acc + 1] = v
              cs.sleep(0.001)
            end
            return table.concat(acc, "+")
          end)
          assert(ok, got)
          return got
        end
        local co = coroutine.create(function()
          local r = level(n - 1)
          coroutine.yield("level " .. n)
          return r .. "@" .. n
        end)
        local ok1, y = coroutine.resume(co)
        local ok2, r = coroutine.resume(co)
        assert(ok1 and ok2 and y == "level " .. n, r)
        assert.equal("dead", coroutine.status(co))
        return r
      end
      res = level(5)
      wait(ticker)
    end)
    assert.equal("1+2+3@1@2@3@4@5", res)
    assert.is_true(clock() - t0 >= 0.03)
    assert.equal(10, ticks)
  end)

  it("errors after a sleep propagate like stock Lua", function()
    helper.run(function()
      local co = coroutine.create(function()
        cs.sleep(0.005)
        error("late boom")
      end)
      local ok, err = coroutine.resume(co)
      assert.is_false(ok)
      assert.matches("^spec/04%-coroutine_spec%.lua:%d+: late boom$", err)
      assert.equal("dead", coroutine.status(co))
      local w = coroutine.wrap(function() cs.sleep(0.005) error("wrapped") end)
      ok, err = pcall(w) -- called from C: no position of the call
      assert.is_false(ok)
      assert.matches("^spec/04%-coroutine_spec%.lua:%d+: wrapped$", err)
      w = coroutine.wrap(function() cs.sleep(0.005) error("wrapped") end)
      ok, err = pcall(function() w() end)
      assert.is_false(ok)
      -- the position of the wrap call, then of the error, as stock Lua
      assert.matches("^spec/04%-coroutine_spec%.lua:%d+: "
                     .. "spec/04%-coroutine_spec%.lua:%d+: wrapped$", err)
    end)
  end)

  it("a failing wrap iterator caught by pcall does not fail the thread",
     function()
    local r = helper.run(function()
      local ok = pcall(function()
        for _ in coroutine.wrap(function()
          cs.sleep(0.001)
          coroutine.yield(1)
          error("iterator failed")
        end) do end
      end)
      return ok
    end)
    assert.is_false(r)
  end)

  it("an uncaught wrap error reports both tracebacks", function()
    local report
    cs.run(function()
      cs.on_error(function(_, err) report = err end)
      spawn(function()
        local function deep_inside_the_wrap() cs.sleep(0.001) error("deep") end
        coroutine.wrap(function() deep_inside_the_wrap() end)()
      end)
    end)
    assert.matches("deep", report, 1, true)
    assert.matches("stack traceback:", report, 1, true)
    assert.matches("coroutine traceback:", report, 1, true)
    assert.matches("deep_inside_the_wrap", report, 1, true)
  end)

  it("coroutine.yield at the top level yields to the scheduler and "
     .. "returns nothing", function()
    local log = {}
    helper.run(function()
      spawn(function() log[#log + 1] = "other" end)
      local t = spawn(function()
        log[#log + 1] = "before"
        local n = select("#", coroutine.yield("dropped", 1, 2))
        log[#log + 1] = "after " .. n
      end)
      log[#log + 1] = "parent"
      wait(t)
      -- in the entry thread too
      assert.equal(0, select("#", coroutine.yield(1)))
    end)
    assert.same({ "other", "before", "parent", "after 0" }, log)
  end)

  it("a coroutine parked in I/O is 'running' to others and cannot be "
     .. "resumed or closed", function()
    helper.run(function()
      local co = coroutine.create(function() cs.sleep(0.03) return "ok" end)
      local w
      local t = spawn(function()
        return coroutine.resume(co)
      end)
      local u = spawn(function()
        w = coroutine.wrap(function() cs.sleep(0.03) end)
        w()
      end)
      assert.equal("running", coroutine.status(co))
      -- OpenResty's words: "cannot resume <status> coroutine"
      assert.same({ false, "cannot resume running coroutine" },
                  { coroutine.resume(co) })
      local ok, err = pcall(w)
      assert.is_false(ok)
      assert.matches("cannot resume running coroutine$", err)
      assert.has_error(function() coroutine.close(co) end,
        "cannot close a running coroutine")
      assert.same({ true, true, "ok" }, { wait(t) })
      assert.equal("dead", coroutine.status(co))
      wait(u)
    end)
  end)

  it("resuming a light thread fails like resuming a running coroutine",
     function()
    helper.run(function()
      local t = spawn(function() cs.sleep(0.01) end)
      local z = spawn(function() end)
      assert.same({ false, "cannot resume running coroutine" },
                  { coroutine.resume(t) })
      assert.same({ false, "cannot resume zombie coroutine" },
                  { coroutine.resume(z) })
      assert.same({ false, "cannot resume running coroutine" },
                  { coroutine.resume(coroutine.running()) })
      assert.has_error(function() coroutine.close(t) end,
        "cannot close a running coroutine")
      assert.has_error(function() coroutine.close(z) end,
        "cannot close a zombie coroutine")
      wait(t)
      wait(z)
      assert.same({ false, "cannot resume dead coroutine" },
                  { coroutine.resume(t) })
      assert.same({ true }, { coroutine.close(z) })
    end)
  end)

  it("a hand-written round robin of coroutines that sleep (091 TEST 24)",
     function()
    local log = {}
    local t0 = clock()
    helper.run(function()
      local function worker(name)
        cs.sleep(0.02)
        coroutine.yield()
        log[#log + 1] = name
      end
      local ccs = {}
      for _, name in ipairs({ "a", "b", "c" }) do
        ccs[#ccs + 1] = coroutine.create(function() worker(name) end)
      end
      while #ccs > 0 do
        local cc = table.remove(ccs, 1)
        assert(coroutine.resume(cc))
        if coroutine.status(cc) ~= "dead" then ccs[#ccs + 1] = cc end
      end
    end)
    assert.same({ "a", "b", "c" }, log)
    assert.is_true(clock() - t0 >= 0.059) -- one light thread: in sequence
  end)

  it("a raw yield at the top level is a cooperative yield", function()
    local log = {}
    helper.run(function()
      local t = spawn(function()
        log[#log + 1] = "t1"
        local n = select("#", cs.raw_coroutine.yield("x"))
        log[#log + 1] = n
        log[#log + 1] = "t2"
      end)
      log[#log + 1] = "parent"
      wait(t)
    end)
    assert.same({ "t1", "parent", 0, "t2" }, log)
  end)

  it("a coroutine may be resumed by another light thread", function()
    helper.run(function()
      local co = coroutine.create(function(a)
        local b = coroutine.yield(a .. "1")
        cs.sleep(0.005)
        return b .. "2"
      end)
      local t1 = spawn(function() return coroutine.resume(co, "A") end)
      local t2 = spawn(function() return coroutine.resume(co, "B") end)
      assert.same({ true, true, "A1" }, { wait(t1) })
      assert.same({ true, true, "B2" }, { wait(t2) })
    end)
  end)

  it("a coroutine started outside the loop continues inside, and back",
     function()
    local co = coroutine.create(function()
      local x = coroutine.yield(1)
      cs.sleep(0.001)
      x = coroutine.yield(x + 1)
      return x + 1
    end)
    assert.same({ true, 1 }, { coroutine.resume(co) })
    local ok, r = helper.run(function() return coroutine.resume(co, 10) end)
    assert.is_true(ok)
    assert.equal(11, r)
    assert.same({ true, 101 }, { coroutine.resume(co, 100) })
  end)

  it("to-be-closed variables close at the end, on error and across sleeps",
     function()
    local log = {}
    helper.run(function()
      local t = spawn(function()
        local _ <close> = closer(log, "thread end")
        cs.sleep(0.005)
        do
          local _ <close> = closer(log, "block")
          cs.sleep(0.005)
        end
        return "done"
      end)
      local u = spawn(function()
        local _ <close> = closer(log, "thread error")
        cs.sleep(0.005)
        error("fail", 0)
      end)
      assert.same({ true, "done" }, { wait(t) })
      assert.same({ false, "fail" }, { wait(u) })
      local co = coroutine.create(function()
        local _ <close> = closer(log, "co closed")
        cs.sleep(0.001)
        coroutine.yield()
      end)
      coroutine.resume(co)
      assert.is_true(coroutine.close(co))
      -- a __close handler may sleep on a normal block exit
      do
        local _ <close> = setmetatable({}, { __close = function()
          cs.sleep(0.005)
          log[#log + 1] = "slept in __close"
        end })
      end
    end)
    assert.same({ "thread error (error)", "block", "thread end", "co closed",
                  "slept in __close" }, log)
  end)

  it("coroutine.close works on a suspended coroutine of a thread",
     function()
    helper.run(function()
      local co = coroutine.wrap(function() end)
      co()
      local c = coroutine.create(function() coroutine.yield() end)
      coroutine.resume(c)
      assert.same({ true }, { coroutine.close(c) })
      assert.equal("dead", coroutine.status(c))
      assert.has_error(function() coroutine.close(1) end,
        "bad argument #1 to 'close' (coroutine expected, got number)")
    end)
  end)
end)

describe("where the caller cannot yield", function()
  after_each(helper.after_each)

  local function gen(n)
    return coroutine.wrap(function()
      for i = 1, n do coroutine.yield(i) end
    end)
  end

  it("generators still work (direct nested resume)", function()
    helper.run(function()
      local t = { 3, 1, 2 }
      table.sort(t, function(a, b)
        local g = gen(1)
        return a + g() < b + 1
      end)
      assert.same({ 1, 2, 3 }, t)
      local s = ("ab"):gsub(".", function(c) local g = gen(2) g()
        return c .. g() end)
      assert.equal("a2b2", s)
      local got
      do
        local _ = setmetatable({}, { __gc = function() got = gen(3)() end })
      end
      collectgarbage()
      collectgarbage()
      assert.equal(1, got)
      -- a generator first resumed by the scheduler, then in a comparator
      local g = gen(10)
      assert.equal(1, g())
      table.sort({ 2, 1 }, function(a, b) g() return a < b end)
      assert.is_true(g() > 2)
      assert.is_false(coroutine.isyieldable() == false)
      table.sort({ 2, 1 }, function(a, b)
        assert.is_false(coroutine.isyieldable())
        return a < b
      end)
    end)
  end)

  it("parking raises an error that names the reason", function()
    helper.run(function()
      local sem = cs.semaphore.new()
      local q = cs.queue.new()
      local child = spawn(function() cs.sleep(0.01) end)
      local cases = {
        { "sleep", function() cs.sleep(0.01) end },
        { "wait on a semaphore", function() sem:wait(1) end },
        { "pop from a queue", function() q:pop() end },
        { "wait", function() wait(child) end },
      }
      for _, case in ipairs(cases) do
        local what, park = case[1], case[2]
        -- directly in a table.sort comparator
        local ok, err = pcall(table.sort, { 2, 1 }, function(a, b)
          park() return a < b
        end)
        assert.is_false(ok)
        assert.matches("corosched: cannot " .. what .. " here: attempt to "
                       .. "yield across a C-call boundary", err, 1, true)
        assert.matches("table.sort comparator", err, 1, true)
        -- in a generator resumed from a string.gsub callback
        ok, err = pcall(string.gsub, "a", ".", function()
          coroutine.wrap(park)()
        end)
        assert.is_false(ok)
        assert.matches("corosched: cannot " .. what .. " here: the "
                       .. "coroutine was resumed from a C function that "
                       .. "cannot yield", err, 1, true)
        assert.matches("string.gsub callback", err, 1, true)
      end
      -- in __tostring called by tostring
      local ok, err = pcall(tostring, setmetatable({}, { __tostring =
        function() cs.sleep(0.01) return "" end }))
      assert.is_false(ok)
      assert.matches("cannot sleep here", err, 1, true)
      wait(child)
      -- nothing leaked: the waits were never armed
      assert.equal(0, sem:count())
    end)
  end)

  it("coroutine.yield at the top level raises the stock error", function()
    helper.run(function()
      local ok, err = pcall(table.sort, { 2, 1 }, function(a, b)
        coroutine.yield()
        return a < b
      end)
      assert.is_false(ok)
      assert.matches("attempt to yield across a C-call boundary", err, 1,
                     true)
    end)
  end)

  it("spawn posts the child instead of running it first", function()
    local log = {}
    helper.run(function()
      local t
      table.sort({ 2, 1 }, function(a, b)
        if not t then
          t = spawn(function() log[#log + 1] = "child" return "r" end)
          log[#log + 1] = "spawned"
        end
        return a < b
      end)
      assert.equal("running", coroutine.status(t))
      assert.same({ true, "r" }, { wait(t) })
    end)
    assert.same({ "spawned", "child" }, log)
  end)

  it("a posted child killed before it ran never runs", function()
    local ran = false
    helper.run(function()
      local t
      table.sort({ 2, 1 }, function(a, b)
        t = t or spawn(function() ran = true end)
        return a < b
      end)
      assert.equal(1, kill(t))
      cs.sleep(0.005)
      assert.equal("dead", coroutine.status(t))
    end)
    assert.is_false(ran)
  end)

  it("kill works from a comparator", function()
    helper.run(function()
      local t = spawn(function() cs.sleep(1) end)
      local r
      table.sort({ 2, 1 }, function(a, b)
        r = r or kill(t)
        return a < b
      end)
      assert.equal(1, r)
    end)
  end)
end)
