-- Random programs of light threads, checked against what each call must
-- return. Every thread runs a random sequence of actions: spawn a child
-- (nested up to 4 deep), wait for one child or the first of two, kill
-- one, sleep, sleep(0), yield, wait on a semaphore (with a timeout) or
-- post it, push to and pop from a queue, run a coroutine.wrap generator
-- that sleeps, spawns and waits inside, fail inside pcall; then it
-- returns its number or raises. The model keeps what happened to each
-- thread (returned, raised, killed, waited), so that:
--   * wait gives `true, n` for a thread that returned, `false, "E<n>"`
--     for one that raised, `nil, "already waited or killed"` for one
--     waited or killed before; the first of two is one of the two;
--   * kill gives 1 for a thread that has not ended, "already terminated"
--     for a zombie (which it deletes, as OpenResty's does), "already
--     waited or killed" after a wait or a kill;
--   * status is "running" (or "normal" while it runs a generator) until
--     a thread ends, "zombie" until it is waited for, then "dead";
--   * a generator yields 1..k in order and then returns;
--   * cs.run returns, and nothing is left (threads, timers, sockets).
-- Fixed seeds (CS_SCHED_SEED picks another).
local helper = require "spec.helper"
local cs = helper.cs
local spawn, wait, kill = cs.thread.spawn, cs.thread.wait, cs.thread.kill
local status = cs.thread.status

local SEED = tonumber(os.getenv("CS_SCHED_SEED")) or 7

local prng = helper.prng

-- one program: `roots` threads spawned by the test body, at most `max`
-- threads in all; returns counts of what was checked
local function program(seed, roots, max)
  local rand = prng(seed)
  local fate = {}  -- thread -> "return" | "raise" (set as it ends)
  local gone = {}  -- thread -> true once waited for or killed
  local num = {}   -- thread -> its number
  local nthreads = 0
  local checked = { waits = 0, kills = 0, gens = 0, statuses = 0 }
  local sem = cs.semaphore.new(0)
  local q = cs.queue.new(4)

  local function expect_wait(t, ok, v)
    if gone[t] then
      assert.same({ nil, "already waited or killed" }, { ok, v })
    elseif fate[t] == "return" then
      assert.same({ true, num[t] }, { ok, v })
    else
      assert.same({ false, "E" .. num[t] }, { ok, v })
    end
    gone[t] = true
    checked.waits = checked.waits + 1
  end

  local body
  -- one random action of the thread (or generator: in_gen) whose
  -- children are `kids`; depth: how deep it is
  local function act(kids, depth, r, in_gen)
    local a = r(14)
    a = a <= 3 and 1 or a - 2 -- (spawns three times as often)
    if a == 1 and depth < 4 and nthreads < max then
      nthreads = nthreads + 1
      local n = nthreads
      local t = spawn(body, n, depth + 1, rand(1, 1 << 30))
      num[t] = n
      kids[#kids + 1] = t
    elseif a == 2 and #kids > 0 then
      local t = kids[r(#kids)]
      local st = status(t)
      local ok, v = wait(t)
      if not gone[t] then
        -- it had ended (zombie) or ends while we wait ("normal": it was
        -- inside a generator of its own, parked)
        assert(st == "zombie" or st == "running" or st == "normal", st)
      end
      expect_wait(t, ok, v)
      assert.equal("dead", status(t))
    elseif a == 3 and #kids > 1 then
      local t1, t2 = kids[r(#kids)], kids[r(#kids)]
      if t1 ~= t2 and not gone[t1] and not gone[t2] then
        local ok, v = wait(t1, t2)
        -- the first to end: the value says which
        local t = (v == num[t1] or v == "E" .. num[t1]) and t1 or t2
        expect_wait(t, ok, v)
        local other = t == t1 and t2 or t1
        assert(status(other) ~= "dead" or gone[other])
      end
    elseif a == 4 and #kids > 0 then
      local t = kids[r(#kids)]
      local st = status(t)
      local ok, err = kill(t)
      if gone[t] then
        assert.same({ nil, "already waited or killed" }, { ok, err })
      elseif st == "zombie" then
        -- (and it is gone: OpenResty's kill deletes a zombie)
        assert.same({ nil, "already terminated" }, { ok, err })
        gone[t] = true
        assert.equal("dead", status(t))
      else
        assert(st == "running" or st == "normal", st)
        assert.same({ 1 }, { ok, err })
        gone[t] = true
        assert.equal("dead", status(t))
      end
      checked.kills = checked.kills + 1
    elseif a == 5 then
      cs.sleep(r(0, 3) / 1000)
    elseif a == 6 then
      cs.sleep(0)
    elseif a == 7 and not in_gen then -- (in a generator: to its caller)
      coroutine.yield()
    elseif a == 8 then
      if r(2) == 1 then
        sem:post(r(1, 2))
      else
        local ok, err = sem:wait(r(0, 3) / 1000)
        assert(ok == true or (not ok and err == "timeout"), tostring(err))
      end
    elseif a == 9 then
      if r(2) == 1 then
        local ok, err = q:push(r(100), r(0, 3) / 1000)
        assert(ok or err == "timeout", tostring(err))
      else
        local v, err = q:pop(r(0, 3) / 1000)
        assert(v or err == "timeout", tostring(err))
      end
    elseif a == 10 and depth < 4 then
      -- a generator that parks, spawns and waits inside
      local k = r(1, 4)
      local gen = coroutine.wrap(function()
        local inner = {}
        for i = 1, k do
          act(inner, depth + 1, r, true)
          coroutine.yield(i)
        end
        for _, t in ipairs(inner) do -- its own children, waited here
          expect_wait(t, wait(t))
        end
        return "done"
      end)
      for i = 1, k do assert.equal(i, gen()) end
      assert.equal("done", gen())
      checked.gens = checked.gens + 1
    elseif a == 11 then
      local ok, err = pcall(function()
        cs.sleep(r(0, 2) / 1000)
        error("inside pcall", 0)
      end)
      assert.same({ false, "inside pcall" }, { ok, err })
    elseif a == 12 and #kids > 0 then
      local t = kids[r(#kids)]
      local st = status(t)
      if gone[t] then
        assert.equal("dead", st)
      elseif fate[t] then
        assert.equal("zombie", st)
      else
        assert(st == "running" or st == "normal", st)
      end
      checked.statuses = checked.statuses + 1
    end
  end

  function body(n, depth, seed2)
    local r = prng(seed2)
    local kids = {}
    for _ = 1, r(0, 12) do act(kids, depth, r) end
    -- its children that are still waited for or not: left as they are
    -- (a zombie is discarded with its parent, a running one when it ends)
    if r(5) == 1 then
      fate[coroutine.running()] = "raise"
      error("E" .. n, 0)
    end
    fate[coroutine.running()] = "return"
    return n
  end

  local kids = {}
  for _ = 1, roots do
    nthreads = nthreads + 1
    local n = nthreads
    local t = spawn(body, n, 1, rand(1, 1 << 30))
    num[t] = n
    kids[#kids + 1] = t
  end
  for _, t in ipairs(kids) do
    if not gone[t] then expect_wait(t, wait(t)) end
  end
  return checked, nthreads
end

-- timers: random at/every timers (delays 0 to 6 ms), cancels, pending();
-- callbacks that sleep or raise. Returns what was checked
local function timers(seed, n)
  local rand = prng(seed)
  local recs, order = {}, {}
  local raised, reported = 0, 0 -- (a detached thread's error is reported)
  cs.on_error(function() reported = reported + 1 end)
  local function make()
    local every = rand(4) == 1
    local delay = rand(every and 1 or 0, 6) / 1000
    local rec = { every = every, fired = 0, cancelled = false,
                  deadline = cs.now() + delay, serial = #recs + 1 }
    local function cb(premature, r)
      assert.is_false(premature)
      assert.equal(rec, r)
      if rec.cancelled then
        -- cancel stops the expiries to come: the callback of a repeating
        -- timer's period that had expired already still runs (as an `at`
        -- timer's, once expired); an `at` timer cancelled never runs
        assert(rec.every and not rec.late, "fired after its cancel")
        rec.late = true
      end
      r.fired = r.fired + 1
      if r.fired == 1 then order[#order + 1] = r end
      if rand(4) == 1 then cs.sleep(rand(0, 3) / 1000) end
      if rand(8) == 1 then
        raised = raised + 1
        error("timer " .. r.serial, 0)
      end
    end
    local h
    if every then
      h = assert(cs.timer.every(delay, cb, rec))
    else
      h = assert(cs.timer.at(delay, cb, rec))
    end
    rec.h = h
    recs[#recs + 1] = rec
  end
  for _ = 1, n do
    local a = rand(6)
    if a <= 3 then
      make()
    elseif a == 4 and #recs > 0 then
      local rec = recs[rand(#recs)]
      local was = rec.h:pending()
      local ok, err = rec.h:cancel()
      if was then
        assert.equal(1, ok)
        rec.cancelled = true
      else
        assert.same({ nil, "not pending" }, { ok, err })
        -- a repeating timer is pending until it is cancelled (an `at`
        -- one stops being pending when it expires, before its callback)
        if rec.every then assert.is_true(rec.cancelled) end
      end
      assert.is_false(rec.h:pending())
    elseif a == 5 then
      cs.sleep(rand(0, 3) / 1000)
    else
      cs.sleep(0)
    end
  end
  -- the repeating ones are cancelled; then every `at` timer must fire
  for _, rec in ipairs(recs) do
    if rec.every and not rec.cancelled then
      assert.equal(1, rec.h:cancel())
      rec.cancelled = true
    end
  end
  while cs.stats().timers > 0 do cs.sleep(0.002) end
  cs.sleep(0.01) -- (callbacks still sleeping end)
  for _, rec in ipairs(recs) do
    if not rec.every then
      assert.equal(rec.cancelled and 0 or 1, rec.fired)
    end
  end
  -- first firings in the order of the deadlines: cs.now() has ms
  -- resolution (as ngx.now()), so deadlines seen from here are up to 1 ms
  -- early, and only ones more than 1 ms apart are known to be in order
  for i = 2, #order do
    local a, b = order[i - 1], order[i]
    assert(a.deadline <= b.deadline + 0.001 + 1e-6,
           ("timer %d (deadline %.6f) fired before timer %d (%.6f)")
             :format(a.serial, a.deadline, b.serial, b.deadline))
  end
  assert.equal(raised, reported)
  cs.on_error(nil)
  return #recs
end

describe("scheduler model", function()
  after_each(helper.after_each)

  it("random timers: each fires once unless cancelled in time, in the "
     .. "order of their deadlines", function()
    local made = 0
    for i = 1, math.floor(20 * helper.scale) + 3 do
      made = made + helper.run(timers, { allow_errors = true },
                               SEED * 100 + i, 120)
    end
    assert.is_true(made > 20)
  end)

  it("random programs of light threads: every wait, kill and status "
     .. "as the model says", function()
    local programs = math.floor(40 * helper.scale) + 3
    local total = { waits = 0, kills = 0, gens = 0, statuses = 0 }
    local threads = 0
    for i = 1, programs do
      local checked, n = helper.run(program, { allow_errors = true },
                                    SEED * 1000 + i, 8, 150)
      for k, v in pairs(checked) do total[k] = total[k] + v end
      threads = threads + n
    end
    assert.is_true(total.waits > 0 and total.kills > 0 and total.gens > 0
                   and total.statuses > 0 and threads > programs * 8)
  end)
end)
