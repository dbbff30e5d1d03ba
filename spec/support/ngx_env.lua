-- What corosched.ngx's install() changes, put back after each test: the
-- ngx, unpack, loadstring and module globals, package.seeall, os.date,
-- the package.preload/loaded entries of its modules (and of a spec's
-- own, listed by the spec), the log level and pending ngx.timer timers,
-- so that the spec files that install it leave nothing behind for the
-- others. Also the helpers the conformance specs share.
--
--   local ngx_env = require "spec.support.ngx_env"
--   local save_globals, restore_globals = ngx_env.saver({ "resty.x" })
--   before_each(save_globals); after_each(restore_globals)
local ngxc = require "corosched.ngx"

local M = {}

-- Debian's OpenResty libraries loaded as they are (loadfile: nothing in
-- them is changed): files maps module names to paths, aliases names to
-- those names. Returns every name (for M.saver) and a function that puts
-- the package.preload entries in place.
function M.preloader(files, aliases)
  local names = {}
  for name in pairs(files) do names[#names + 1] = name end
  for name in pairs(aliases) do names[#names + 1] = name end
  return names, function()
    for name, path in pairs(files) do
      package.preload[name] = function(...)
        return assert(loadfile(path))(...)
      end
    end
    for name, target in pairs(aliases) do
      package.preload[name] = function() return require(target) end
    end
  end
end

-- save and restore functions for the module names in extra (optional)
-- plus corosched.ngx's own
function M.saver(extra)
  local names = {}
  for _, name in ipairs(extra or {}) do names[#names + 1] = name end
  for name in pairs(ngxc.modules) do names[#names + 1] = name end
  local saved

  local function save()
    saved = { ngx = rawget(_G, "ngx"), unpack = rawget(_G, "unpack"),
              loadstring = rawget(_G, "loadstring"),
              module = rawget(_G, "module"), seeall = package.seeall,
              os_date = os.date, preload = {}, loaded = {} }
    for _, name in ipairs(names) do
      saved.preload[name] = package.preload[name]
      saved.loaded[name] = package.loaded[name]
      package.preload[name] = nil
      package.loaded[name] = nil
    end
    rawset(_G, "ngx", nil)
  end

  local function restore()
    if not saved then return end -- (save did not run)
    rawset(_G, "ngx", saved.ngx)
    rawset(_G, "unpack", saved.unpack)
    rawset(_G, "loadstring", saved.loadstring)
    rawset(_G, "module", saved.module)
    package.seeall = saved.seeall
    os.date = saved.os_date
    for _, name in ipairs(names) do
      package.preload[name] = saved.preload[name]
      package.loaded[name] = saved.loaded[name]
    end
    ngxc.set_log_level("error")
    ngxc.stop_timers()
    saved = nil
  end

  return save, restore
end

-- an io.stdout stand-in collecting what ngx.say/ngx.print write into buf
-- (the response body of a replayed OpenResty block)
function M.sink(buf)
  return {
    write = function(self, ...)
      for i = 1, select("#", ...) do
        buf[#buf + 1] = tostring((select(i, ...)))
      end
      return self
    end,
    flush = function(self) return self end,
  }
end

-- Runs fn(ngx) in a light thread with net.run (a deadline, the leak
-- checks) and the ngx global installed; returns what the threads wrote
-- with ngx.say/ngx.print (the response body) until everything ended,
-- then fn's results.
function M.run(fn, opts)
  local buf, real = {}, io.stdout
  io.stdout = M.sink(buf)
  local r = table.pack(pcall(require("spec.support.net").run, function()
    return fn(ngxc.install())
  end, opts))
  io.stdout = real
  if not r[1] then error(r[2], 0) end
  return table.concat(buf), table.unpack(r, 2, r.n)
end

-- Runs fn(ngx) as the entry thread of cs.run (nginx's entry thread: its
-- error ends the request with a 500 and kills the other threads); returns
-- the body, whether cs.run succeeded, its error, and the errors of threads
-- nobody waited for. Asserts that nothing is left afterwards.
function M.run_entry(fn)
  local helper = require "spec.helper"
  local cs = helper.cs
  local buf, errors, real = {}, {}, io.stdout
  io.stdout = M.sink(buf)
  cs.on_error(function(_, err) errors[#errors + 1] = err end)
  local ok, err = pcall(cs.run, function() return fn(ngxc.install()) end)
  cs.on_error(nil)
  io.stdout = real
  helper.assert_clean("run_entry")
  return table.concat(buf), ok, err, errors
end

-- the lines given, each ended by "\n", as ngx.say writes them
function M.lines(...)
  return table.concat({ ... }, "\n") .. "\n"
end

-- true when string s contains plain text part
function M.holds(s, part)
  return type(s) == "string" and s:find(part, 1, true) ~= nil
end

-- true when string s ends with tail (an error message: a Lua position
-- such as "content_by_lua(nginx.conf:40):6: " may come first)
function M.ends_with(s, tail)
  return type(s) == "string" and s:sub(-#tail) == tail
end

-- the error raised by fn(...), or nil
function M.raised(fn, ...)
  local ok, err = pcall(fn, ...)
  if ok then return nil end
  return err
end

-- a recorder standing for print() (nginx's error log): log.print(...)
-- appends its arguments, made text with tostring, as one entry
function M.recorder()
  local log = {}
  function log.print(...)
    local t = table.pack(...)
    for i = 1, t.n do t[i] = tostring(t[i]) end
    log[#log + 1] = table.concat(t, "", 1, t.n)
  end
  return log
end

-- fn() with io.stderr replaced by a collector (ngx.log looks it up at
-- each call; nginx's error log); returns what was written
function M.stderr_of(fn)
  local buf, real = {}, io.stderr
  io.stderr = M.sink(buf)
  local ok, err = pcall(fn)
  io.stderr = real
  if not ok then error(err, 0) end
  return table.concat(buf)
end

-- the level's name and the message of each line ngx.log wrote
function M.log_lines(text)
  local t = {}
  for level, msg in text:gmatch(
      "%d%d%d%d/%d%d/%d%d %d%d:%d%d:%d%d %[(%a*)%] ([^\n]*)\n") do
    t[#t + 1] = { level, msg }
  end
  return t
end

-- the whole body, one line, and that line matches the Lua pattern
function M.one_line(body, pattern)
  local assert = require "luassert" -- (busted's assert, in a support file)
  assert.is_string(body)
  local line = body:match("^([^\n]*)\n$")
  assert.is_string(line, ("one line expected, got %q"):format(body))
  assert.is_truthy(line:match(pattern),
                   ("%q does not match %q"):format(line, pattern))
  return line
end

-- true when text is os.date(fmt, t) for a t in [t0, t1]
function M.date_between(text, fmt, t0, t1)
  for t = t0, t1 do
    if os.date(fmt, t) == text then return true end
  end
  return false
end

-- "yyyy-mm-dd hh:mm:ss" (ngx.localtime, ngx.utctime)
M.DATETIME = "^%d%d%d%d%-%d%d%-%d%d %d%d:%d%d:%d%d$"

-- the pid of this process as a child shell sees it ($PPID): what nginx's
-- $pid variable gives in the worker.t blocks
function M.process_pid()
  local f = assert(io.popen("echo $PPID", "r"))
  local s = f:read("a")
  f:close()
  return assert(tonumber(s:match("^(%d+)")))
end

-- a recording of spec/support/record_*_random.sh, file name in
-- spec/support/: its seed, its count and its text by number, from the
-- lines after each "== <word> n" line (the "# " lines left out)
function M.load_recording(name, word)
  local src = debug.getinfo(1, "S").source:sub(2)
  local path = (src:match("^(.*)/[^/]*$") or ".") .. "/" .. name
  local f = assert(io.open(path, "rb"))
  local seed, count, texts, cur = nil, nil, {}, nil
  for line in f:lines() do
    local s, c = line:match("^# seed (%d+), count (%d+)$")
    local n = line:match("^== " .. word .. " (%d+)$")
    if s then
      seed, count = tonumber(s), tonumber(c)
    elseif n then
      cur = {}
      texts[tonumber(n)] = cur
    elseif cur and not line:match("^# ") then
      cur[#cur + 1] = line
    end
  end
  f:close()
  for i, lines in pairs(texts) do texts[i] = table.concat(lines, "\n") end
  return seed, count, texts
end

-- the spec of a recording of random cases (spec/71, spec/72, spec/73):
-- opts.file (the recording, in spec/support/), opts.cases (the cases
-- module: SEED, COUNT, generate, run_all), opts.recorder (the script
-- that records it), opts.title, opts.name(i, c) (each case's test name),
-- optional opts.skip(c, i) (true: the case is pending; a string: pending
-- with that reason), opts.expected(recorded, i) (the text case i must
-- give; recorded[i] by default), opts.word (what the recording calls a
-- case: "case"), opts.no_peer (run_all(cases, show), without
-- script_peer.py) and opts.run_opts (net.run's options). Runs the cases
-- on corosched, in setup, and compares them case by case.
function M.replay_cases(opts)
  local net = require "spec.support.net"
  local script_peer = require "spec.support.script_peer"
  local show = require("spec.support.openresty_cases").show
  local busted = require "busted" -- (describe, it... in a support file)
  local describe, it, setup = busted.describe, busted.it, busted.setup
  local pending = busted.pending
  local assert = require "luassert"
  local m = opts.cases
  local save_globals, restore_globals = M.saver()
  describe(opts.title, function()
    local word = opts.word or "case"
    local seed, count, recorded = M.load_recording(opts.file, word)
    local cases = m.generate(m.SEED, m.COUNT)
    local got

    setup(function()
      save_globals()
      local peer = not opts.no_peer and script_peer.start()
      local ok, err = pcall(net.run, function()
        ngxc.install()
        if peer then
          got = m.run_all(cases, peer, show)
        else
          got = m.run_all(cases, show)
        end
      end, opts.run_opts)
      if peer then script_peer.stop() end
      restore_globals()
      assert(ok, err)
    end)

    it(("the recording is of these %ss"):format(word), function()
      assert.are.equal(m.SEED, seed)
      assert.are.equal(m.COUNT, count)
      for i = 1, m.COUNT do
        assert(recorded[i], word .. " " .. i .. " is not recorded (run "
               .. "spec/support/" .. opts.recorder .. ")")
      end
    end)

    for i, c in ipairs(cases) do
      local skip = opts.skip and opts.skip(c, i)
      local name = opts.name(i, c)
      if type(skip) == "string" then name = name .. ": " .. skip end
      local test = skip and pending or it
      test(name, function()
        local want = recorded[i]
        if opts.expected then want = opts.expected(recorded, i) end
        assert.are.equal(want, got[i])
      end)
    end
  end)
end

-- a second copy of corosched.ngx, loaded as when corosched.re was not
-- built (its require fails); corosched.ngx and corosched.re stay loaded
-- as they were
function M.ngx_without_re()
  local saved_re = package.loaded["corosched.re"]
  local saved_ngx = package.loaded["corosched.ngx"]
  package.loaded["corosched.ngx"] = nil
  package.loaded["corosched.re"] = nil
  package.preload["corosched.re"] = function() error("not built") end
  local ok, mod = pcall(require, "corosched.ngx")
  package.preload["corosched.re"] = nil
  package.loaded["corosched.re"] = saved_re
  package.loaded["corosched.ngx"] = saved_ngx
  assert(ok, mod)
  return mod
end

return M
