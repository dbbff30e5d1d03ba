-- Randomized differential programs for the light-thread scheduler: a
-- seeded, deterministic generator (plain Lua 5.1 code, so that OpenResty's
-- LuaJIT runs it as well as Lua 5.4) of small programs of light threads,
-- and a runner that executes one with the `ngx` global only and writes one
-- line per event, in the global order the events happened.
-- spec/support/record_thread_random.sh runs them in real OpenResty and
-- records the lines in spec/support/thread_random_recorded.txt; spec/72
-- runs them on corosched and compares.
--
-- A program is a tree of light threads t1, t2, ... (t1 is spawned by the
-- runner; the others by a "spawn" step of their parent, with arguments),
-- each a list of steps ending in a return (values with nils and holes) or
-- an error (error(string, 0), error(table), error(nil)): ngx.sleep(0),
-- coroutine.yield() at the thread's top level, timed steps (below),
-- spawns, ngx.thread.wait on one or several threads (own children, dead
-- ones, waited twice, a non-child: its error), ngx.thread.kill (of
-- children in any state, of a non-child, of itself), coroutine.status of
-- any thread, ngx.semaphore post(n), wait(0) and count() (one or two
-- semaphores per program, new(n)), pcall around a yielding step, user
-- coroutines made with coroutine.create (resumed until dead: yields with
-- values, sleeps and semaphore posts inside, status and running (LuaJIT
-- has no isyieldable), a last return or error) or coroutine.wrap (never failing),
-- and ngx.timer.at(0, f) whose callbacks run a few steps of their own.
--
-- Determinism by design. Debian's lua-nginx-module (no posted-delayed-events
-- patch) makes ngx.sleep(0) and ngx.timer.at(0) 0 ms nginx timers, which
-- expire in the next expiry pass; nothing in a program depends on the
-- clock as long as no two timers with a delay are pending whose deadlines
-- are close but created at different times. So a program has at most
-- three "timed" steps (ngx.sleep(d) or sema:wait(d)), each with its own d
-- from DELAYS, whose sums are all different and at least 30 ms apart:
-- two pending delays never race (unless the process stalls that long:
-- with 20 ms, a recording on a loaded machine once woke a 20 ms sleep
-- with a 40 ms one). Left out, as documented differences
-- (README "Deliberate differences from OpenResty"): error(string) with
-- a position (wait gives the value raised, with its position, OpenResty
-- the argument), a failing coroutine.wrap function (pcall around it), and
-- a thread that a multi-thread wait did not return still waited on: after
-- wait(a, b, ...) returns, the runner at once waits again on those of
-- them that are not dead (so that no such thread ends while its parent
-- is parked elsewhere), and a wait on several threads names children
-- only (lua-nginx-module marks the children listed before a non-child as
-- waited on, then raises for the non-child: the first of them to end
-- later resumes its parent wherever it is parked, e.g. in a sleep(0),
-- which returns that child's results). ngx.exit is not available. A thread that spawned
-- never raises: in lua-nginx-module 0.10.23 a thread that raises while a
-- child of it has ended and not been waited for (a zombie) hangs the
-- request (no response, not even a semaphore timeout fires). A thread
-- that some step kills never sleeps inside a coroutine: lua-nginx-module
-- 0.10.23's kill returns 1 there but the sleep's timer still resumes the
-- thread, which goes on (corosched cancels it, README).
local M = {}

M.SEED = 20261129
M.COUNT = 300

local unpack = unpack or table.unpack
local concat = table.concat

local function pack(...) return { n = select("#", ...), ... } end

-- the delays of timed steps (each used at most once per program)
M.DELAYS = { 0.03, 0.06, 0.12 }

-- (dofile: OpenResty runs this file with dofile, from its directory)
local cosocket_cases = dofile((debug.getinfo(1, "S").source:sub(2)
  :match("^(.*)/[^/]*$") or ".") .. "/cosocket_random_cases.lua")

local function pick(rand, t) return t[rand(#t)] end

---------------------------------------------------------------------------
-- the generator

local VALUES = { 1, 2, "x", "y", true, false, 0.5 }

-- a list of values with nils (n counts the trailing ones)
local function values(rand, max)
  local n = rand(max + 1) - 1
  local v = { n = n }
  for i = 1, n do
    if rand(4) ~= 1 then v[i] = pick(rand, VALUES) end
  end
  return v
end

local function errvalue(rand)
  local r = rand(4)
  if r <= 2 then return { "error", "boom" .. rand(9) } end
  if r == 3 then return { "error", { code = rand(9) }, table = true } end
  return { "error" }
end

-- the state of the generation of one program
local function new_gen(rand, timed, zero_time)
  local delays = {}
  if timed then
    for _, d in ipairs(M.DELAYS) do
      if rand(2) == 1 then delays[#delays + 1] = d end
    end
  end
  return { rand = rand, nthreads = 0, threads = {}, timers = {},
           delays = delays, zero_time = zero_time,
           nsems = rand(2) }
end

-- a delay not used yet in this program, or nil
local function take_delay(g)
  if #g.delays == 0 then return nil end
  return table.remove(g.delays, g.rand(#g.delays))
end

local gen_thread

-- the steps of a coroutine's body (kind "co" steps)
local function gen_co_body(g, may_fail)
  local rand = g.rand
  local steps = {}
  for _ = 1, rand(4) do
    local r = rand(10)
    if r <= 4 then
      steps[#steps + 1] = { "yield", values(rand, 2) }
    elseif r <= 6 then
      steps[#steps + 1] = { "sleep", 0 }
    elseif r == 7 then
      local d = take_delay(g)
      steps[#steps + 1] = d and { "sleep", d } or { "sleep", 0 }
    elseif r == 8 then
      steps[#steps + 1] = { "post", rand(g.nsems), 1 }
    else
      steps[#steps + 1] = { "costate" }
    end
  end
  if may_fail and rand(3) == 1 then
    steps[#steps + 1] = { "error", "co" .. rand(9) }
  else
    steps[#steps + 1] = { "return", values(rand, 2) }
  end
  return steps
end

-- a thread for a wait or kill: one of children (n - 1 times in n) or
-- any thread so far (itself, its parent, others)
local function target(g, children, n)
  if #children > 0 and g.rand(n) > 1 then return pick(g.rand, children) end
  return g.rand(g.nthreads)
end

-- one step of thread k; known: its children spawned so far
local function gen_step(g, k, children, depth)
  local rand = g.rand
  local r = rand(30)
  if r <= 5 then
    return { "sleep", 0 }
  elseif r == 6 then
    return { "yield" }
  elseif r <= 8 then
    local d = take_delay(g)
    if d then return { "sleep", d } end
    return { "sleep", 0 }
  elseif r <= 11 and g.nthreads < 6 and depth < 4 then
    local c = gen_thread(g, depth + 1)
    children[#children + 1] = c
    local args = values(rand, 3)
    return { "spawn", c, args }
  elseif r <= 15 then
    -- targets: children mostly, sometimes any thread, self
    local targets = {}
    for _ = 1, rand(3) do targets[#targets + 1] = target(g, children, 5) end
    -- several only of its children (see the header)
    for _, t in ipairs(targets) do
      local child = false
      for _, c in ipairs(children) do child = child or c == t end
      if not child then return { "wait", { t } } end
    end
    return { "wait", targets }
  elseif r <= 17 then
    return { "kill", target(g, children, 4) }
  elseif r == 18 then
    return { "status", rand(g.nthreads) }
  elseif r <= 20 then
    return { "post", rand(g.nsems), rand(2) }
  elseif r == 21 then
    local d = take_delay(g)
    return { "semwait", rand(g.nsems), d or 0 }
  elseif r == 22 then
    return { "count", rand(g.nsems) }
  elseif r <= 25 then
    local wrap = rand(3) == 1
    return { "co", gen_co_body(g, not wrap), wrap = wrap }
  elseif r <= 27 then
    local inner = rand(4)
    local s
    if inner == 1 then s = { "yield" }
    elseif inner == 2 then s = { "semwait", rand(g.nsems), 0 }
    else s = { "sleep", 0 } end
    return { "pcall", s, fail = rand(2) == 1 }
  elseif g.zero_time and #g.timers < 2 then
    local body = {}
    for _ = 1, rand(3) do
      local q = rand(4)
      if q == 1 then body[#body + 1] = { "post", rand(g.nsems), 1 }
      elseif q == 2 then body[#body + 1] = { "semwait", rand(g.nsems), 0 }
      else body[#body + 1] = { "sleep", 0 } end
    end
    g.timers[#g.timers + 1] = body
    return { "timer", #g.timers }
  end
  return { "sleep", 0 }
end

-- a new thread (its number) and its steps
function gen_thread(g, depth)
  local rand = g.rand
  g.nthreads = g.nthreads + 1
  local k = g.nthreads
  local th = { steps = {} }
  g.threads[k] = th
  local children = {}
  for _ = 1, rand(5) - (depth > 1 and 1 or 0) do
    th.steps[#th.steps + 1] = gen_step(g, k, children, depth)
  end
  -- (a thread that raises while a child of it is a zombie hangs
  -- lua-nginx-module 0.10.23's request: its spawners only return)
  if rand(4) == 1 and #children == 0 then
    th.steps[#th.steps + 1] = errvalue(rand)
  else
    th.steps[#th.steps + 1] = { "return", values(rand, 3) }
  end
  return k
end

local function gen_program(rand, i)
  local r = rand(10)
  local g = new_gen(rand, r <= 3, r > 3)
  local p = { name = "program " .. i, sems = {} }
  for j = 1, g.nsems do p.sems[j] = rand(3) - 1 end
  p.args = values(rand, 2)
  gen_thread(g, 1)
  -- a killed thread parks in none of its coroutines (see the header)
  for _, th in ipairs(g.threads) do
    for _, s in ipairs(th.steps) do
      local t = s[1] == "kill" and g.threads[s[2]]
      for _, ts in ipairs(t and t.steps or {}) do
        for _, cs in ipairs(ts[1] == "co" and ts[2] or {}) do
          if cs[1] == "sleep" then cs[1] = "costate" end
        end
      end
    end
  end
  p.threads, p.timers = g.threads, g.timers
  return p
end

-- the programs, the same for a seed in LuaJIT and Lua 5.4
M.generate = cosocket_cases.seeded(gen_program)

---------------------------------------------------------------------------
-- the runner (needs the `ngx` global)

-- runs program p; returns its lines
function M.run(p, show)
  local out = {}
  local handles, names = {}, {}
  local live = 0
  local done = require("ngx.semaphore").new(0)
  local sems = {}
  for j, n in ipairs(p.sems) do sems[j] = require("ngx.semaphore").new(n) end

  -- a value as text: threads by name, an error's position in this file
  -- as "pos" (OpenResty's dofile and busted's require name the file
  -- differently, and the recording stays valid when lines move)
  local function val(v)
    if type(v) == "thread" then return names[v] or "thread?" end
    if type(v) == "string" then
      v = v:gsub("[^%s\"]*thread_random_cases%.lua:%d+:", "pos:")
    end
    return show(v)
  end
  local function vals(n, ...)
    local parts = {}
    for i = 1, n do parts[i] = val((select(i, ...))) end
    return concat(parts, " ")
  end
  local function emit(label, n, ...)
    local s = vals(n, ...)
    out[#out + 1] = s == "" and label or (label .. " -> " .. s)
  end
  local function ended()
    live = live - 1
    if live == 0 then done:post(1) end
  end
  local function tname(k) return "t" .. k end

  local run_steps

  -- a coroutine body's steps, inside the coroutine
  local function co_body(label, steps)
    return function(...)
      out[#out + 1] = label .. " co start " .. vals(select("#", ...), ...)
      for i, s in ipairs(steps) do
        local l = label .. " co " .. i .. " "
        local kind = s[1]
        if kind == "yield" then
          local v = s[2]
          local r = pack(coroutine.yield(unpack(v, 1, v.n)))
          emit(l .. "yield(" .. vals(v.n, unpack(v, 1, v.n)) .. ")", r.n,
               unpack(r, 1, r.n))
        elseif kind == "sleep" then
          emit(l .. "sleep(" .. s[2] .. ")", select("#", ngx.sleep(s[2])))
        elseif kind == "post" then
          emit(l .. "post(s" .. s[2] .. ")", 1, sems[s[2]]:post(s[3]))
        elseif kind == "costate" then
          local co = coroutine.running()
          emit(l .. "state", 2, coroutine.status(co), names[co] or "co")
        elseif kind == "error" then
          out[#out + 1] = l .. "error"
          error(s[2])
        elseif kind == "return" then
          local v = s[2]
          out[#out + 1] = l .. "return"
          return unpack(v, 1, v.n)
        end
      end
    end
  end

  local function spawn_thread(k, args)
    local th = p.threads[k]
    local h
    live = live + 1
    h = ngx.thread.spawn(function(...)
      local self = coroutine.running()
      handles[k], names[self] = self, tname(k)
      out[#out + 1] = tname(k) .. " start " .. vals(select("#", ...), ...)
      return run_steps(tname(k), k, th.steps)
    end, unpack(args, 1, args.n))
    handles[k] = h
    names[h] = tname(k)
    return h
  end

  local function one_step(label, k, s)
    local kind = s[1]
    if kind == "sleep" then
      emit(label .. "sleep(" .. s[2] .. ")", select("#", ngx.sleep(s[2])))
    elseif kind == "yield" then
      local r = pack(coroutine.yield())
      emit(label .. "yield()", r.n, unpack(r, 1, r.n))
    elseif kind == "spawn" then
      local h = spawn_thread(s[2], s[3])
      emit(label .. "spawn(t" .. s[2] .. ")", 1, h)
    elseif kind == "wait" then
      local hs, ts = {}, {}
      for i, t in ipairs(s[2]) do
        hs[i] = handles[t]
        ts[i] = "t" .. t
        if not hs[i] then
          emit(label .. "wait: t" .. t .. " not spawned", 0)
          return
        end
      end
      local res = pack(pcall(ngx.thread.wait, unpack(hs)))
      emit(label .. "wait(" .. concat(ts, ",") .. ")", res.n,
           unpack(res, 1, res.n))
      -- the others are waited on again at once (see the header)
      if res[1] and #hs > 1 then
        local rest, rn = {}, {}
        for i, h in ipairs(hs) do
          local st = coroutine.status(h)
          if st ~= "dead" then
            rest[#rest + 1] = h
            rn[#rn + 1] = ts[i]
          end
        end
        while #rest > 0 do
          local again = pack(pcall(ngx.thread.wait, unpack(rest)))
          emit(label .. "wait again(" .. concat(rn, ",") .. ")", again.n,
               unpack(again, 1, again.n))
          if not again[1] then break end
          local r2, n2 = {}, {}
          for i, h in ipairs(rest) do
            if coroutine.status(h) ~= "dead" then
              r2[#r2 + 1] = h
              n2[#n2 + 1] = rn[i]
            end
          end
          if #r2 == #rest then break end
          rest, rn = r2, n2
        end
      end
    elseif kind == "kill" then
      local h = handles[s[2]]
      if not h then
        emit(label .. "kill: t" .. s[2] .. " not spawned", 0)
        return
      end
      local res = { pcall(ngx.thread.kill, h) }
      if res[1] and res[2] then ended() end
      emit(label .. "kill(t" .. s[2] .. ")", 3, unpack(res, 1, 3))
    elseif kind == "status" then
      local h = handles[s[2]]
      emit(label .. "status(t" .. s[2] .. ")", 1,
           h and coroutine.status(h) or "not spawned")
    elseif kind == "post" then
      emit(label .. "post(s" .. s[2] .. ", " .. s[3] .. ")", 2,
           sems[s[2]]:post(s[3]))
    elseif kind == "semwait" then
      emit(label .. "s" .. s[2] .. ":wait(" .. s[3] .. ")", 2,
           sems[s[2]]:wait(s[3]))
    elseif kind == "count" then
      emit(label .. "s" .. s[2] .. ":count()", 1, sems[s[2]]:count())
    elseif kind == "co" then
      local body = co_body(label, s[2])
      if s.wrap then
        local f = coroutine.wrap(body)
        local calls = 1
        for _, cs in ipairs(s[2]) do
          if cs[1] == "yield" then calls = calls + 1 end
        end
        for i = 1, calls do
          local r = pack(f(i))
          emit(label .. "wrap call " .. i, r.n, unpack(r, 1, r.n))
        end
      else
        local co = coroutine.create(body)
        names[co] = label .. "co"
        for i = 1, 8 do
          local r = pack(coroutine.resume(co, i))
          emit(label .. "resume " .. i, r.n, unpack(r, 1, r.n))
          emit(label .. "co status", 1, coroutine.status(co))
          if coroutine.status(co) == "dead" then break end
        end
      end
    elseif kind == "pcall" then
      local r = pack(pcall(function()
        one_step(label .. "pcall ", k, s[2])
        if s.fail then error("inner", 0) end
        return "ok"
      end))
      emit(label .. "pcall", r.n, unpack(r, 1, r.n))
    elseif kind == "timer" then
      local body = p.timers[s[2]]
      live = live + 1
      local tl = "timer" .. s[2]
      local ok, err = ngx.timer.at(0, function(premature)
        out[#out + 1] = tl .. " start " .. val(premature)
        for i, st in ipairs(body) do
          one_step(tl .. " " .. i .. " ", 0, st)
        end
        out[#out + 1] = tl .. " end"
        ended()
      end)
      if not ok then ended() end
      emit(label .. "timer.at(0)", 2, ok, err)
    end
  end

  function run_steps(name, k, steps)
    for i, s in ipairs(steps) do
      local label = name .. " " .. i .. " "
      local kind = s[1]
      if kind == "return" then
        local v = s[2]
        emit(label .. "return", v.n, unpack(v, 1, v.n))
        ended()
        return unpack(v, 1, v.n)
      elseif kind == "error" then
        out[#out + 1] = label .. "error " .. val(s[2])
        ended()
        if s[2] == nil then error() end
        error(s[2], 0)
      end
      one_step(label, k, s)
    end
  end

  local t1 = spawn_thread(1, p.args)
  if live > 0 then
    local ok, err = done:wait(10)
    if not ok then out[#out + 1] = "runner: " .. tostring(err) end
  end
  local r = pack(ngx.thread.wait(t1))
  emit("runner wait(t1)", r.n, unpack(r, 1, r.n))
  return concat(out, "\n")
end

-- runs the programs one after the other; returns their lines in order
function M.run_all(programs, show)
  local results = {}
  for i, p in ipairs(programs) do
    local ok, text = pcall(M.run, p, show)
    results[i] = ok and text or ("program raised: " .. tostring(text))
  end
  return results
end

return M
