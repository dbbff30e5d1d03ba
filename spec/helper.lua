-- Spec helper: runs a test body inside cs.run with a deadline, reports a
-- failing light thread with its traceback, and checks that nothing leaked.
--
--   local helper = require "spec.helper"
--   local cs = helper.cs
--   after_each(helper.after_each)
--
--   it("...", function()
--     local a, b = helper.run(function() ... return 1, 2 end)
--   end)
--
-- helper.run(fn, opts, ...):
--   * runs fn(...) in a light thread spawned by the entry thread of cs.run
--     (so cs.thread.self() inside fn is that thread, not the entry);
--   * opts.timeout (seconds, default 5, multiplied by helper.slack): if fn
--     and every thread and timer it left behind have not finished by then,
--     the test fails with "deadline ... exceeded" and the cs.dump() text,
--     instead of hanging;
--   * an error raised by fn is re-raised with fn's traceback;
--   * a light thread that fails and that nobody waits for makes the test
--     fail too, unless opts.allow_errors; its report (error and traceback)
--     is in the message. helper.errors lists every such report of the last
--     run ({thread = co, err = "..."}).
--   * when cs.run has returned, asserts that cs.stats() shows no thread,
--     timer, socket, pending I/O or timeout left (helper.assert_clean).
--   Returns fn's results.
--
-- helper.fds(): the number of open file descriptors of this process.
-- helper.slack: factor for generous upper time bounds (greater under
--   valgrind and ASan).
-- helper.scale: CS_STRESS_SCALE (default 1), the fraction of the stress
--   iterations to run.
local cs = require "corosched"

local helper = { cs = cs, errors = {} }

local function under_valgrind()
  local f = io.open("/proc/self/maps", "r")
  if not f then return false end
  local maps = f:read("a")
  f:close()
  return maps:find("vgpreload", 1, true) ~= nil
end

local function under_asan()
  return (os.getenv("LD_PRELOAD") or ""):find("asan", 1, true) ~= nil
end

helper.valgrind = under_valgrind()
helper.asan = under_asan()
helper.gc_stress = os.getenv("CS_GC_STRESS") == "1"
-- (the short-I/O mode makes a system call and a loop turn of every byte)
helper.slack = helper.valgrind and 20 or helper.gc_stress and 10
  or helper.asan and 4 or os.getenv("CS_SHORT_IO") == "1" and 3 or 1
helper.scale = tonumber(os.getenv("CS_STRESS_SCALE"))
  or (helper.valgrind and 0.01 or helper.asan and 0.1 or 1)

-- wall clock with sub-millisecond resolution, independent of cs.now()'s
-- cache (os.time() has whole seconds only, os.clock() is CPU time)
-- (luasystem comes with busted; luasocket is used when it is there)
local has_socket, socket_core = pcall(require, "socket.core")
local has_system, system = pcall(require, "system")
if has_socket and socket_core.gettime then
  helper.clock = socket_core.gettime
elseif has_system and system.gettime then
  helper.clock = system.gettime
else
  error("spec helper: needs luasystem (a busted dependency) or luasocket")
end

-- a random generator of its own (xorshift64) for the model specs:
-- rand(n) in 1..n, rand(a, b) in a..b, as math.random, but unaffected by
-- the draws of other generators (each thread of a test can have one)
function helper.prng(seed)
  local x = seed * 2654435761 + 88172645463325252
  return function(a, b)
    x = x ~ (x << 13)
    x = x ~ (x >> 7)
    x = x ~ (x << 17)
    if not b then a, b = 1, a end
    return a + (x >> 11) % (b - a + 1)
  end
end

-- writes a model spec's path counts to stderr, a "name count" line each,
-- sorted by name
function helper.write_counts(counts)
  local names = {}
  for k in pairs(counts) do names[#names + 1] = k end
  table.sort(names)
  for _, k in ipairs(names) do
    io.stderr:write(("%-24s %d\n"):format(k, counts[k]))
  end
end

-- spins for sec seconds without yielding (time passes, nothing else runs)
function helper.busy(sec)
  local t = helper.clock() + sec
  while helper.clock() < t do end
end

local CLEAN = { "threads", "timers", "sockets", "pending_io", "timeouts" }

-- asserts that nothing the scheduler counts is left
function helper.assert_clean(what)
  local st = cs.stats()
  if st.sockets ~= 0 then
    -- sockets nobody closed are closed by the collector: give it its turn
    collectgarbage()
    collectgarbage()
    st = cs.stats()
  end
  local bad = {}
  for _, k in ipairs(CLEAN) do
    if st[k] ~= nil and st[k] ~= 0 then
      bad[#bad + 1] = k .. "=" .. tostring(st[k])
    end
  end
  if #bad > 0 then
    error(("%sleak: cs.stats() shows %s after cs.run returned\n%s")
      :format(what and (what .. ": ") or "", table.concat(bad, ", "),
              cs.dump()), 2)
  end
  return true
end

-- for after_each(): the handler and the counters go back to a clean state
function helper.after_each()
  cs.on_error(nil)
  helper.assert_clean("after_each")
end

local function live_others()
  -- everything but the entry thread, which runs this
  local st = cs.stats()
  return st.threads - 1 + st.timers
end

function helper.run(fn, opts, ...)
  opts = opts or {}
  local timeout = (opts.timeout or 5) * helper.slack
  local errors = {}
  helper.errors = errors
  cs.on_error(function(th, err)
    errors[#errors + 1] = { thread = th, err = err }
  end)

  local args = table.pack(...)
  local function entry()
    local deadline = helper.clock() + timeout
    -- the watchdog first, so that nothing is spawned while fn runs
    local dog = cs.thread.spawn(function()
      cs.sleep(math.max(0, deadline - helper.clock()))
      return "deadline"
    end)
    local body = cs.thread.spawn(function()
      return table.pack(xpcall(fn, debug.traceback,
                               table.unpack(args, 1, args.n)))
    end)
    local ok, res = cs.thread.wait(body, dog)
    if ok and res == "deadline" then
      local dump = cs.dump()
      error(("helper.run: deadline of %gs exceeded; cs.dump():\n%s")
        :format(timeout, dump), 0)
    end
    cs.thread.kill(dog)
    if not ok then -- xpcall itself cannot fail; the thread was killed?
      error("helper.run: test body failed: " .. tostring(res), 0)
    end
    -- fn returned: wait (polling) for what it left behind
    while live_others() > 0 do
      if helper.clock() > deadline then
        error(("helper.run: deadline of %gs exceeded after the test "
               .. "body returned; cs.stats().threads=%d timers=%d; "
               .. "cs.dump():\n%s")
          :format(timeout, cs.stats().threads, cs.stats().timers,
                  cs.dump()), 0)
      end
      cs.sleep(0.005)
    end
    return res
  end

  local ok, res = pcall(cs.run, entry)
  cs.on_error(nil)
  helper.assert_clean("helper.run")
  if not ok then
    error(res, 0)
  end
  if not res[1] then
    error(tostring(res[2]), 0)
  end
  if #errors > 0 and not opts.allow_errors then
    error("helper.run: a light thread failed and nobody waited for it:\n"
          .. tostring(errors[1].err), 0)
  end
  return table.unpack(res, 2, res.n)
end

-- the number of open file descriptors of this process
function helper.fds()
  local ok, lfs = pcall(require, "lfs")
  local n = 0
  if ok then
    for name in lfs.dir("/proc/self/fd") do
      if name ~= "." and name ~= ".." then n = n + 1 end
    end
    return n - 1 -- the directory lfs.dir itself has open
  end
  local f = assert(io.open("/proc/self/stat", "r"))
  local pid = f:read("n")
  f:close()
  local p = assert(io.popen("ls /proc/" .. pid .. "/fd"))
  for _ in p:lines() do n = n + 1 end
  p:close()
  return n - 1 -- the pipe of io.popen
end

-- VmRSS of this process in KiB
function helper.rss_kb()
  local f = assert(io.open("/proc/self/status", "r"))
  local s = f:read("a")
  f:close()
  return tonumber(s:match("VmRSS:%s*(%d+)"))
end

-- the LUA_PATH and LUA_CPATH assignments (shell words, then a blank) for
-- a child Lua process: corosched from this checkout (build: its build
-- directory, by default this process's), then what this process searches,
-- so that an interpreter whose built-in paths lack the system's modules
-- (a Lua built from source, CS_LUA) finds them in the child too
function helper.lua_env(build)
  local function quote(s) return "'" .. (s:gsub("'", [['\'']])) .. "'" end
  return ("LUA_PATH=%s LUA_CPATH=%s "):format(
    quote("lua/?.lua;lua/?/init.lua;" .. package.path),
    quote((build or helper.build_dir()) .. "/?.so;" .. package.cpath))
end

-- runs a Lua chunk in a fresh lua5.4 with corosched on the path, and the
-- variables of the table env (name -> string) added to its environment;
-- returns stdout, stderr and the exit status (true on success)
function helper.subprocess(code, env)
  local lua = os.getenv("CS_LUA") or "lua5.4"
  local vars = {}
  for name, value in pairs(env or {}) do
    assert(name:match("^[%w_]+$"), name)
    local quoted = tostring(value):gsub("'", [['\'']])
    vars[#vars + 1] = ("%s='%s' "):format(name, quoted)
  end
  local tmp = os.tmpname()
  local f = assert(io.open(tmp, "w"))
  f:write(code)
  f:close()
  local errf = os.tmpname()
  local cmd = ("%s%s%s %s 2>%s")
    :format(table.concat(vars), helper.lua_env(os.getenv("CS_BUILD")), lua,
            tmp, errf)
  local p = assert(io.popen(cmd, "r"))
  local out = p:read("a")
  local ok = p:close()
  local ef = assert(io.open(errf, "r"))
  local err = ef:read("a")
  ef:close()
  os.remove(tmp)
  os.remove(errf)
  return out, err, ok
end

-- the build directory whose corosched/core.so this process loaded
function helper.build_dir()
  local path = package.searchpath("corosched.core", package.cpath)
  if path then
    return (path:gsub("/corosched/core%.so$", ""))
  end
  return "build"
end

return helper
