-- Light threads: cs.thread.spawn/wait/kill/status/self (API.md "Light
-- threads"; lua-nginx-module's ngx.thread.*, t/093-uthread-spawn.t,
-- t/098-uthread-wait.t, t/127-uthread-kill.t).
local helper = require "spec.helper"
local cs = helper.cs
local spawn, wait, kill = cs.thread.spawn, cs.thread.wait, cs.thread.kill
local clock = helper.clock

local function logger()
  local log = {}
  return log, function(s) log[#log + 1] = s end
end

describe("cs.thread.spawn", function()
  after_each(helper.after_each)

  it("returns the thread's coroutine, the same as self() and running()",
     function()
    helper.run(function()
      local inside, running, ismain
      local t = spawn(function()
        inside = cs.thread.self()
        running, ismain = coroutine.running()
      end)
      assert.equal("thread", type(t))
      assert.equal(t, inside)
      assert.equal(t, running)
      assert.is_false(ismain)
      assert.equal(cs.thread.self(), (coroutine.running()))
      wait(t)
    end)
  end)

  it("passes its extra arguments", function()
    helper.run(function()
      local t = spawn(function(...) return select("#", ...), ... end,
                      1, nil, "x", nil)
      assert.same({ n = 6, true, 4, 1, nil, "x", nil }, table.pack(wait(t)))
    end)
  end)

  it("runs the child at once, until it ends (093 TEST 1, 2)", function()
    local log, say = logger()
    helper.run(function()
      say("before 1")
      spawn(function() say("in thread 1") end)
      say("after 1")
      say("before 2")
      spawn(function() say("in thread 2") end)
      say("after 2")
    end)
    assert.same({ "before 1", "in thread 1", "after 1",
                  "before 2", "in thread 2", "after 2" }, log)
  end)

  it("runs the child until it parks (093 TEST 3, 4)", function()
    local log, say = logger()
    helper.run(function()
      say("1: before thread create")
      spawn(function()
        say("1: before sleep"); cs.sleep(0.02); say("1: after sleep")
      end)
      say("1: after thread create")
      say("2: before thread create")
      spawn(function()
        say("2: before sleep"); cs.sleep(0.01); say("2: after sleep")
      end)
      say("2: after thread create")
    end)
    assert.same({
      "1: before thread create", "1: before sleep", "1: after thread create",
      "2: before thread create", "2: before sleep", "2: after thread create",
      "2: after sleep", "1: after sleep" }, log)
  end)

  it("nests (093 TEST 10, 11)", function()
    local log, say = logger()
    helper.run(function()
      say("before f")
      spawn(function()
        say("before g")
        spawn(function() say("hello in g()") end)
        say("after g")
      end)
      say("after f")
    end)
    -- f was posted behind the entry when it spawned g (093 TEST 10)
    assert.same({ "before f", "before g", "hello in g()", "after f",
                  "after g" }, log)

    log, say = logger()
    helper.run(function()
      say("before f")
      spawn(function()
        say("before g")
        spawn(function() cs.sleep(0.01) say("hello in g()") end)
        say("after g")
      end)
      say("after f")
    end)
    assert.same({ "before f", "before g", "after f", "after g",
                  "hello in g()" }, log)
  end)

  it("posts the caller behind threads posted earlier", function()
    local log, say = logger()
    helper.run(function()
      spawn(function() say("A1") coroutine.yield() say("A2") end)
      say("E1")
      spawn(function() say("B") cs.sleep(0.01) end)
      say("E2")
    end)
    -- A yielded, so it was posted before the caller of the second spawn
    assert.same({ "A1", "E1", "B", "A2", "E2" }, log)
  end)

  it("manual time slicing with coroutine.yield (093 TEST 16, 17)",
     function()
    local log, say = logger()
    helper.run(function()
      local yield = coroutine.yield
      say("0"); yield(); say("1")
      spawn(function()
        say("f 1"); yield(); say("f 2"); yield(); say("f 3")
      end)
      say("2"); yield(); say("3"); yield(); say("4")
    end)
    assert.same({ "0", "1", "f 1", "2", "f 2", "3", "f 3", "4" }, log)

    log, say = logger()
    helper.run(function()
      local yield = coroutine.yield
      spawn(function()
        say("f 1"); yield(); say("f 2"); yield(); say("f 3")
      end)
      spawn(function()
        say("g 1"); yield(); say("g 2"); yield(); say("g 3")
      end)
      say("done")
    end)
    assert.same({ "f 1", "g 1", "f 2", "done", "g 2", "f 3", "g 3" }, log)
  end)

  it("runs posted threads before a thread whose timer expired", function()
    local log, say = logger()
    helper.run(function()
      spawn(function() cs.sleep(0.001) say("timer woke") end)
      spawn(function() coroutine.yield() say("posted") end)
      helper.busy(0.01) -- the sleep is over by now
      say("yielding")
      coroutine.yield()
      say("entry again")
      cs.sleep(0.01)
    end)
    assert.same({ "yielding", "posted", "entry again", "timer woke" }, log)
  end)

  it("does not let threads that yield starve a sleeping one", function()
    local woke, spins = false, 0
    helper.run(function()
      spawn(function() cs.sleep(0.01) woke = true end)
      for _ = 1, 2 do
        spawn(function()
          while not woke do
            spins = spins + 1
            if spins > 1e7 then error("starved") end
            coroutine.yield()
          end
        end)
      end
    end)
    assert.is_true(woke)
  end)

  it("from a user coroutine: the coroutine is the parent", function()
    local log, say = logger()
    helper.run(function()
      say("before f")
      local co = coroutine.create(function()
        say("before g")
        local t = spawn(function() say("hello in g()") return "g" end)
        say("after g")
        -- the coroutine may wait on it
        assert.same({ true, "g" }, { wait(t) })
        local u = spawn(function() cs.sleep(0.01) return "u" end)
        coroutine.yield(u)
        return "co done"
      end)
      local ok, u = coroutine.resume(co)
      assert.is_true(ok)
      -- the enclosing light thread is not u's parent
      assert.has_error(function() wait(u) end,
        "only the parent coroutine can wait on the thread")
      local r = table.pack(kill(u))
      assert.same({ n = 2, nil, "killer not parent" }, r)
      assert.same({ true, "co done" }, { coroutine.resume(co) })
      say("after f")
    end)
    assert.same({ "before f", "before g", "hello in g()", "after g",
                  "after f" }, log)
  end)

  it("checks its argument", function()
    helper.run(function()
      assert.has_error(function() spawn() end,
        "bad argument #1 to 'spawn' (Lua function expected)")
      assert.has_error(function() spawn({}) end,
        "bad argument #1 to 'spawn' (Lua function expected)")
    end)
    assert.has_error(function() spawn(function() end) end,
      "corosched: spawn: no running loop (call it inside cs.run)")
  end)
end)

describe("cs.thread.status and coroutine.status", function()
  after_each(helper.after_each)

  it("gives running, zombie, dead (093 TEST 12, 13; 098 TEST 1, 2)",
     function()
    helper.run(function()
      local t = spawn(function() end)
      assert.equal("zombie", coroutine.status(t))
      assert.equal("zombie", cs.thread.status(t))
      wait(t)
      assert.equal("dead", coroutine.status(t))
      local s = spawn(function() cs.sleep(0.01) end)
      assert.equal("running", coroutine.status(s)) -- parked
      local r = spawn(function() coroutine.yield() end)
      assert.equal("running", coroutine.status(r)) -- ready
      assert.equal("running", coroutine.status(coroutine.running()))
      wait(s)
      wait(r)
    end)
  end)

  it("gives normal for a thread that resumed a coroutine (093 TEST 14)",
     function()
    helper.run(function()
      local seen
      local t = spawn(function()
        local co = coroutine.create(function() cs.sleep(0.02) end)
        coroutine.resume(co)
      end)
      seen = coroutine.status(t)
      wait(t)
      assert.equal("normal", seen)
    end)
  end)

  it("gives normal for the parent seen from a child it resumed", function()
    helper.run(function()
      local me = coroutine.running()
      local co = coroutine.create(function()
        return coroutine.status(me)
      end)
      assert.same({ true, "normal" }, { coroutine.resume(co) })
    end)
  end)

  it("checks its argument", function()
    assert.has_error(function() cs.thread.status(1) end,
      "bad argument #1 to 'status' (coroutine expected, got number)")
  end)
end)

describe("cs.thread.self", function()
  after_each(helper.after_each)

  it("is the current light thread, also inside a user coroutine",
     function()
    helper.run(function()
      local me = cs.thread.self()
      assert.equal("thread", type(me))
      local inner = coroutine.wrap(function() return cs.thread.self() end)()
      assert.equal(me, inner)
    end)
  end)

  it("is nil outside the loop", function()
    assert.is_nil(cs.thread.self())
  end)
end)

describe("cs.thread.wait", function()
  after_each(helper.after_each)

  it("returns true and the results of a zombie at once (098 TEST 1, 5)",
     function()
    local log, say = logger()
    helper.run(function()
      local t = spawn(function() say("hello in thread") return "done", 3.14 end)
      say("thread created: " .. coroutine.status(t))
      collectgarbage()
      local ok, r1, r2 = wait(t)
      say(("%s %s %s"):format(tostring(ok), r1, r2))
    end)
    assert.same({ "hello in thread", "thread created: zombie",
                  "true done 3.14" }, log)
  end)

  it("parks until the thread ends (098 TEST 2, 6)", function()
    local log, say = logger()
    local t0 = clock()
    helper.run(function()
      local t = spawn(function()
        cs.sleep(0.05) say("hello in thread") return "done", 3.14
      end)
      say("thread created: " .. coroutine.status(t))
      local ok, r1, r2 = wait(t)
      say(("%s %s %s"):format(tostring(ok), r1, r2))
    end)
    assert.same({ "thread created: running", "hello in thread",
                  "true done 3.14" }, log)
    assert.is_true(clock() - t0 >= 0.049)
  end)

  it("returns false and the error of a failed thread (098 TEST 7, 8)",
     function()
    helper.run(function()
      local t = spawn(function() error("bad bad!") end)
      assert.equal("zombie", coroutine.status(t))
      local ok, err = wait(t)
      assert.is_false(ok)
      assert.matches("^spec/02%-thread_spec%.lua:%d+: bad bad!$", err)

      t = spawn(function() cs.sleep(0.01) error("bad bad!") end)
      ok, err = wait(t)
      assert.is_false(ok)
      assert.matches("^spec/02%-thread_spec%.lua:%d+: bad bad!$", err)

      local obj = {}
      t = spawn(function() cs.sleep(0.01) error(obj) end)
      assert.same({ false, obj }, { wait(t) })
      t = spawn(function() error("no position", 0) end)
      assert.same({ false, "no position" }, { wait(t) })
    end)
  end)

  it("waits in the reverse order of termination (098 TEST 3, 4)",
     function()
    local log, say = logger()
    helper.run(function()
      local tf = spawn(function() cs.sleep(0.01) say("f: hello") return "f" end)
      local tg = spawn(function() cs.sleep(0.03) say("g: hello") return "g" end)
      say("g: " .. select(2, wait(tg)))
      say("f status: " .. coroutine.status(tf))
      say("f: " .. select(2, wait(tf)))
    end)
    assert.same({ "f: hello", "g: hello", "g: g", "f status: zombie",
                  "f: f" }, log)
  end)

  it("on several threads returns the first to end (098 TEST 11-15)",
     function()
    local log, say = logger()
    helper.run(function()
      local tf = spawn(function() say("f: hello") return "f done" end)
      local tg = spawn(function() say("g: hello") return "g done" end)
      local ok, res = wait(tf, tg)
      say("res: " .. tostring(ok) .. " " .. res)
      say("f status: " .. coroutine.status(tf))
      say("g status: " .. coroutine.status(tg))
      wait(tg)
    end)
    assert.same({ "f: hello", "g: hello", "res: true f done",
                  "f status: dead", "g status: zombie" }, log)

    log, say = logger()
    helper.run(function()
      local tf = spawn(function() cs.sleep(0.03) say("f: hello") end)
      local tg = spawn(function()
        cs.sleep(0.01) say("g: hello") error("g failed", 0)
      end)
      local ok, res = wait(tf, tg)
      say("res: " .. tostring(ok) .. " " .. res)
      say("f status: " .. coroutine.status(tf))
      say("g status: " .. coroutine.status(tg))
      wait(tf)
    end)
    assert.same({ "g: hello", "res: false g failed", "f status: running",
                  "g status: dead", "f: hello" }, log)
  end)

  it("accepts one array of threads", function()
    helper.run(function()
      local ts = {}
      for i = 1, 3 do
        ts[i] = spawn(function() cs.sleep(0.01 * i) return i end)
      end
      assert.same({ true, 1 }, { wait(ts) })
      assert.same({ true, 2 }, { wait(ts) }) -- 1 is dead: skipped
      assert.same({ true, 3 }, { wait(ts) })
      assert.same({ nil, "already waited or killed" }, { wait(ts) })
    end)
  end)

  it("after returning for t1, t2 is no longer waited on", function()
    local t0 = clock()
    helper.run(function()
      local t1 = spawn(function() cs.sleep(0.01) return 1 end)
      local t2 = spawn(function() cs.sleep(0.02) return 2 end)
      assert.same({ true, 1 }, { wait(t1, t2) })
      -- t2 ends during this sleep: it must not wake us
      cs.sleep(0.06)
      assert.is_true(clock() - t0 >= 0.069)
      assert.equal("zombie", coroutine.status(t2))
      assert.same({ true, 2 }, { wait(t2) })
    end)
  end)

  it("a later wait on the same thread is not confused by an earlier one",
     function()
    helper.run(function()
      local t1 = spawn(function() cs.sleep(0.01) return 1 end)
      local t2 = spawn(function() cs.sleep(0.03) return 2 end)
      local t3 = spawn(function() cs.sleep(0.05) return 3 end)
      assert.same({ true, 1 }, { wait(t1, t2) })
      -- t2 still runs; now wait on t3 and t2 again
      assert.same({ true, 2 }, { wait(t3, t2) })
      assert.same({ true, 3 }, { wait(t3) })
    end)
  end)

  it("on a dead thread: nil, 'already waited or killed'", function()
    helper.run(function()
      local t = spawn(function() return 1 end)
      wait(t)
      assert.same({ n = 2, nil, "already waited or killed" },
                  table.pack(wait(t)))
      local k = spawn(function() cs.sleep(1) end)
      kill(k)
      assert.same({ n = 2, nil, "already waited or killed" },
                  table.pack(wait(k)))
      -- a dead thread is skipped unless it is the last argument, as in
      -- lua-nginx-module's ngx_http_lua_uthread_wait
      local alive = spawn(function() cs.sleep(0.01) return "alive" end)
      assert.same({ n = 2, nil, "already waited or killed" },
                  table.pack(wait(alive, t)))
      assert.same({ true, "alive" }, { wait(t, alive) })
    end)
  end)

  it("raises on a thread that is not a child", function()
    helper.run(function()
      local other
      local t = spawn(function()
        other = spawn(function() cs.sleep(0.02) end)
        cs.sleep(0.01)
      end)
      -- t was posted behind us when it spawned: let it see spawn return
      coroutine.yield()
      assert.has_error(function() wait(other) end,
        "only the parent coroutine can wait on the thread")
      wait(t)
      -- a grandchild whose parent has ended is nobody's child
      assert.has_error(function() wait(other) end,
        "only the parent coroutine can wait on the thread")
      -- a child may not wait on its parent, or a sibling
      local me = coroutine.running()
      local sib = spawn(function() cs.sleep(0.01) end)
      local u = spawn(function()
        local ok1, e1 = pcall(wait, me)
        local ok2, e2 = pcall(wait, sib)
        return ok1, e1, ok2, e2
      end)
      local _, ok1, e1, ok2, e2 = wait(u)
      assert.is_false(ok1)
      assert.is_false(ok2)
      assert.equal("only the parent coroutine can wait on the thread", e2)
      assert.is_string(e1)
      wait(sib)
    end)
  end)

  it("raises on what is not a light thread", function()
    local ok, err
    cs.run(function()
      local entry = coroutine.running()
      spawn(function()
        ok, err = pcall(wait, entry)
      end)
    end)
    assert.is_false(ok)
    assert.equal("attempt to wait on a coroutine that is not a user thread",
                 err)

    helper.run(function()
      local co = coroutine.create(function() end)
      assert.has_error(function() wait(co) end,
        "attempt to wait on a coroutine that is not a user thread")
      local timer_thread
      cs.timer.at(0, function() timer_thread = coroutine.running()
        cs.sleep(0.02) end)
      cs.sleep(0.01)
      assert.has_error(function() wait(timer_thread) end,
        "attempt to wait on a coroutine that is not a user thread")
      assert.has_error(function() wait() end,
        "at least one coroutine should be specified")
      assert.has_error(function() wait(1) end,
        "bad argument #1 to 'wait' (lua thread expected)")
      local t = spawn(function() cs.sleep(0.01) end)
      assert.has_error(function() wait(t, "x") end,
        "bad argument #2 to 'wait' (lua thread expected)")
      assert.has_error(function() wait({}) end,
        "bad argument #1 to 'wait' (lua thread expected)")
      wait(t)
    end)
  end)

  it("raises outside a light thread", function()
    local t
    cs.run(function() t = spawn(function() cs.sleep(0.01) end) end)
    assert.has_error(function() wait(coroutine.create(function() end)) end,
      "corosched: wait: no running loop (call it inside cs.run)")
  end)

  it("works from inside a user coroutine that is the parent", function()
    helper.run(function()
      local gen = coroutine.wrap(function()
        local t = spawn(function() cs.sleep(0.01) return "x" end)
        coroutine.yield("spawned")
        coroutine.yield(select(2, wait(t)))
      end)
      assert.equal("spawned", gen())
      assert.equal("x", gen())
    end)
  end)
end)

describe("cs.thread.kill", function()
  after_each(helper.after_each)

  it("kills a sleeping child; a second kill says so (127 TEST 1)",
     function()
    local log, say = logger()
    local t0 = clock()
    helper.run(function()
      local t = spawn(function() say("hello from f()") cs.sleep(1)
        say("not reached") end)
      say("thread created: " .. coroutine.status(t))
      collectgarbage()
      local before = cs.stats()
      assert.equal(1, kill(t))
      say("killed")
      local after = cs.stats()
      assert.equal(before.threads - 1, after.threads)
      assert.equal(before.timeouts - 1, after.timeouts) -- the sleep is gone
      assert.equal("dead", coroutine.status(t))
      local ok, err = kill(t)
      say("failed to kill thread: " .. err)
      assert.is_nil(ok)
    end)
    assert.same({ "hello from f()", "thread created: running", "killed",
                  "failed to kill thread: already waited or killed" }, log)
    assert.is_true(clock() - t0 < 0.5 * helper.slack)
  end)

  it("after wait: already waited or killed (127 TEST 2)", function()
    helper.run(function()
      local t = spawn(function() cs.sleep(0.001) return 32 end)
      assert.same({ true, 32 }, { wait(t) })
      assert.same({ n = 2, nil, "already waited or killed" },
                  table.pack(kill(t)))
    end)
  end)

  it("a zombie: already terminated, and it is gone (127 TEST 8)",
     function()
    helper.run(function()
      local t = spawn(function() return 1 end)
      assert.equal("zombie", coroutine.status(t))
      assert.same({ n = 2, nil, "already terminated" }, table.pack(kill(t)))
      assert.equal("dead", coroutine.status(t))
      assert.same({ n = 2, nil, "already waited or killed" },
                  table.pack(wait(t)))
      assert.same({ n = 2, nil, "already waited or killed" },
                  table.pack(kill(t)))
    end)
  end)

  it("self and the entry: not user thread, killer not parent (127 TEST 9)",
     function()
    local log, say = logger()
    cs.run(function()
      local ok, err = kill(coroutine.running())
      say(ok and "killed main thread." or "failed to kill main thread: " .. err)
      local t = spawn(function()
        local ok2, err2 = kill(coroutine.running())
        say(ok2 and "user thread thread."
            or "failed to kill user thread: " .. err2)
      end)
      say("thread created: " .. coroutine.status(t))
    end)
    assert.same({ "failed to kill main thread: not user thread",
                  "failed to kill user thread: killer not parent",
                  "thread created: zombie" }, log)
    helper.assert_clean()
  end)

  it("returns nil, err for what it may not kill", function()
    helper.run(function()
      local co = coroutine.create(function() end)
      assert.same({ n = 2, nil, "not user thread" }, table.pack(kill(co)))
      local timer_thread
      cs.timer.at(0, function()
        timer_thread = coroutine.running() cs.sleep(0.02)
      end)
      cs.sleep(0.01)
      assert.same({ n = 2, nil, "not user thread" },
                  table.pack(kill(timer_thread)))
      local grandchild
      local t = spawn(function()
        grandchild = spawn(function() cs.sleep(0.02) end)
        cs.sleep(0.01)
      end)
      coroutine.yield()
      assert.same({ n = 2, nil, "killer not parent" },
                  table.pack(kill(grandchild)))
      local me = coroutine.running()
      local u = spawn(function() return kill(me) end)
      assert.same({ true, nil, "killer not parent" }, { wait(u) })
      wait(t)
      assert.has_error(function() kill(1) end,
        "bad argument #1 to 'kill' (lua thread expected)")
      assert.has_error(function() kill() end,
        "bad argument #1 to 'kill' (lua thread expected)")
    end)
  end)

  it("kills a ready thread before it runs again", function()
    local log, say = logger()
    helper.run(function()
      local t = spawn(function() say("1") coroutine.yield() say("2") end)
      assert.equal(1, kill(t))
      cs.sleep(0.01)
    end)
    assert.same({ "1" }, log)
  end)

  it("kills a thread parked in wait; its children live on", function()
    local log, say = logger()
    helper.run(function()
      local t = spawn(function()
        local c = spawn(function() cs.sleep(0.02) say("child done") end)
        wait(c)
        say("not reached")
      end)
      assert.equal(1, kill(t))
      cs.sleep(0.04)
    end)
    assert.same({ "child done" }, log)
  end)

  it("cancels a semaphore wait: the waiter is gone", function()
    helper.run(function()
      local sem = cs.semaphore.new()
      local t = spawn(function() sem:wait(1) error("not reached") end)
      assert.equal(-1, sem:count())
      assert.equal(1, kill(t))
      assert.equal(0, sem:count())
      sem:post()
      assert.equal(1, sem:count())
      assert.is_true(sem:wait(0))
    end)
  end)

  it("cancels a queue pop and push", function()
    helper.run(function()
      local q = cs.queue.new(1)
      local p = spawn(function() q:pop() error("not reached") end)
      assert.equal(1, kill(p))
      assert.equal(1, q:push("a"))
      local s = spawn(function() q:push("b") error("not reached") end)
      assert.equal(1, kill(s))
      assert.equal("a", q:pop())
      assert.same({ nil, "timeout" }, { q:pop(0) })
    end)
  end)

  it("cancels the pending operation of a nested user coroutine", function()
    local t0 = clock()
    helper.run(function()
      local sem = cs.semaphore.new()
      local base = cs.stats()
      local t = spawn(function()
        local co = coroutine.wrap(function()
          coroutine.wrap(function()
            pcall(function() cs.sleep(5) end)
          end)()
        end)
        co()
      end)
      local u = spawn(function()
        coroutine.wrap(function() sem:wait(5) end)()
      end)
      assert.equal(base.timeouts + 2, cs.stats().timeouts)
      assert.equal(1, kill(t))
      assert.equal(1, kill(u))
      assert.equal(base.timeouts, cs.stats().timeouts)
      assert.equal(0, sem:count())
    end)
    assert.is_true(clock() - t0 < 1 * helper.slack)
  end)

  it("closes to-be-closed variables, innermost first", function()
    local log, say = logger()
    helper.run(function()
      local function closer(name)
        return setmetatable({}, { __close = function() say(name) end })
      end
      local t = spawn(function()
        local _ <close> = closer("thread")
        coroutine.wrap(function()
          local _ <close> = closer("outer co")
          coroutine.wrap(function()
            local _ <close> = closer("inner co")
            cs.sleep(5)
          end)()
        end)()
      end)
      say("killing")
      kill(t)
      say("killed")
    end)
    assert.same({ "killing", "inner co", "outer co", "thread", "killed" },
                log)
  end)

  it("a coroutine of the killed thread is dead afterwards", function()
    helper.run(function()
      local co
      local t = spawn(function()
        co = coroutine.create(function() cs.sleep(5) end)
        coroutine.resume(co)
      end)
      assert.equal("running", coroutine.status(co))
      kill(t)
      assert.equal("dead", coroutine.status(co))
      assert.same({ false, "cannot resume dead coroutine" },
                  { coroutine.resume(co) })
    end)
  end)
end)

describe("zombies and parents", function()
  after_each(helper.after_each)

  it("a zombie holds its results until waited", function()
    helper.run(function()
      local t = spawn(function() return { 1, 2 } end)
      cs.sleep(0.01)
      collectgarbage()
      assert.equal("zombie", coroutine.status(t))
      local ok, r = wait(t)
      assert.is_true(ok)
      assert.same({ 1, 2 }, r)
    end)
  end)

  it("zombies of an ended parent are discarded", function()
    helper.run(function()
      local base = cs.stats().threads
      local zombies
      local p = spawn(function()
        spawn(function() return 1 end)
        spawn(function() return 2 end)
        zombies = cs.stats().zombies
        cs.sleep(0.01)
      end)
      wait(p)
      assert.equal(2, zombies)
      -- p was waited; its two zombie children are gone with it
      assert.equal(base, cs.stats().threads)
      assert.equal(0, cs.stats().zombies)
    end)
  end)

  it("a thread whose parent has ended is discarded when it ends",
     function()
    helper.run(function()
      local base = cs.stats().threads
      local child
      local p = spawn(function()
        child = spawn(function() cs.sleep(0.02) return "lost" end)
      end)
      wait(p)
      assert.equal(base + 1, cs.stats().threads)
      assert.equal("running", coroutine.status(child))
      cs.sleep(0.04)
      assert.equal(base, cs.stats().threads)
      assert.equal(0, cs.stats().zombies)
      assert.equal("dead", coroutine.status(child))
    end)
  end)

  it("a failure in one thread does not stop the others", function()
    local done = {}
    helper.run(function()
      local a = spawn(function() cs.sleep(0.01) error("a failed") end)
      local b = spawn(function() cs.sleep(0.02) done.b = true return "b" end)
      spawn(function() cs.sleep(0.005) error("unwaited") end)
      assert.is_false((wait(a)))
      assert.same({ true, "b" }, { wait(b) })
      done.parent = true
    end, { allow_errors = true })
    assert.same({ b = true, parent = true }, done)
    assert.equal(1, #helper.errors)
    assert.matches("unwaited", helper.errors[1].err, 1, true)
  end)

  it("runtime errors carry their position; to-be-closed run first",
     function()
    local log, say = logger()
    helper.run(function()
      local t = spawn(function()
        local _ <close> = setmetatable({}, { __close = function(_, e)
          say("closed with " .. tostring(e):match("attempt to %a+"))
        end })
        local x = nil
        return x.field
      end)
      local ok, err = wait(t)
      assert.is_false(ok)
      assert.matches("^spec/02%-thread_spec%.lua:%d+: attempt to index", err)
    end)
    assert.same({ "closed with attempt to index" }, log)
  end)
end)
