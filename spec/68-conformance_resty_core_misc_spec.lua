-- Conformance: lua-resty-core's tests of the ngx APIs corosched.ngx
-- provides (the time functions, escape_uri/unescape_uri, ngx.worker,
-- ngx.get_phase, ngx.ctx, ngx.req in a timer), replayed on corosched
-- through the ngx global of require("corosched.ngx").install(). Each `it`
-- is one "=== TEST N" block, named after its file and number; what the
-- block prints with ngx.say is compared with its --- response_body (a
-- --- response_body_like with the same pattern, written as a Lua pattern,
-- plus concrete values where the block's regex leaves a choice). The
-- blocks' "--- error_log ... TRACE" checks are LuaJIT's trace log and are
-- not replayed; their loops (30 calls of the API, to get a trace) are
-- kept. Times are never compared with a fixed wall-clock value: only
-- their format and their relation to os.time()/os.date().
--
-- Versions (openresty/lua-resty-core), the newest stored copy of each
-- file by content: the t::TestCore ones (`use t::TestCore`, loops of 30).
-- time.t: 14 blocks (aa217ad has 12 and prints "true" where the newest
-- prints "<= 1: true" in TEST 2; 03aa1c0 has 1). uri.t: 10 blocks, the
-- same in every copy (08192ef, f23cce4, the t::TestCore one). worker.t:
-- 5 blocks (7d85cb4 has 4, 5bd1caf 2). misc.t: 8 blocks (9171d4d has 5;
-- another copy has the same 8 with fewer no_error_log lines). phase.t:
-- 1 block (bf86437 and the t::TestCore copy); an older stored copy of the
-- file (Test::Nginx::Socket::Lua, $HttpConfig, 10 blocks, as the one in
-- kwanhur/lua-resty-core at 10f9c5a) has one get_phase block per phase:
-- its TEST 9 (ngx.timer) is replayed. ctx.t: 14 blocks (f23cce4 and
-- 08192ef have 2). utils.t: only resty.core.utils.str_replace_char (4
-- blocks), which corosched.ngx does not provide: nothing replayed.
--
-- time.t, covered: 2, 4, 5, 6, 7, 8, 9, 10, 11, 12 (10, 12: the block's
--   `t = ngx.http_time(...)` before the pcall is a local here, not a
--   global); 3 (ngx.update_time; ngx.now() after 1e5 updates is later);
--   1 adapted: the upper bound of the 0.1 s sleep, "< 0.11", is
--   0.1 + 0.5 * helper.slack s here (a shared, busy machine); the line
--   keeps the block's text, and the lower bound (>= 0.099) is as it is.
-- time.t, skipped: 13, 14 (require "resty.core.time".monotonic_msec and
--   .monotonic_time: resty.core.time is not among the modules install()
--   preloads; not provided).
-- uri.t, covered: 1-10.
-- worker.t, covered: 1, 3 (worker id 0: one worker), 4, 5; 2 adapted
--   (ngx.var.pid is nginx's: the pid is compared with the $PPID a shell
--   started by io.popen sees, i.e. this process's pid, as spec/67 does).
-- misc.t, covered: 8 (ngx.req.is_internal called in an ngx.timer
--   handler: DIVERGENCE, pending; adapted: the block's ngx.sleep(0.02)
--   that lets the timer run is a wait until it has, and its `i > 1`,
--   which raises when i is nil, is written `i ~= nil and i > 1` so that
--   the difference shows as a value).
-- misc.t, skipped: 1 (ngx.is_subrequest in header_filter_by_lua: an
--   nginx phase; the field is nil here); 2, 3 (ngx.headers_sent,
--   ngx.send_headers: response headers, which corosched.ngx does not
--   provide: the fields are nil, README); 4, 5 (resty.core.base's
--   allows_subsystem: not provided); 6, 7 (ngx.req.is_internal of a
--   request, rewritten or not: needs a request).
-- phase.t, skipped: 1 (get_phase in content_by_lua, "content": an nginx
--   phase directive; get_phase() is "timer" everywhere here, README).
-- phase.t (the older 10-block copy), covered: 9 (get_phase in an
--   ngx.timer callback: "timer"; the block's timer is made from
--   log_by_lua, here from a thread; its ngx.log(ngx.WARN) line is read
--   from io.stderr with the log level at warn). Skipped: 1 (init_by_lua),
--   2 (set_by_lua), 3 (rewrite_by_lua), 4 (access_by_lua), 5
--   (content_by_lua), 6 (header_filter_by_lua), 7 (body_filter_by_lua), 8
--   (log_by_lua), 10 (init_worker_by_lua): phase directives, as above.
-- ctx.t, covered: 1, 2 (ngx.ctx is one table per process here, README;
--   each test starts with an empty one, and the process's table is put
--   back afterwards); 12 (ngx.ctx = nil raises; it was a difference until
--   corosched.ngx checked it).
-- ctx.t, skipped: 3-10, 14 (ngx.ctx in ssl_certificate_by_lua,
--   ssl_session_store_by_lua, ssl_session_fetch_by_lua,
--   ssl_client_hello_by_lua and a second server's content_by_lua: other
--   phases' directives, and a ctx per request shared with the request's
--   SSL phases, which one table per process cannot be); 11 (the value
--   each of two requests sees: one ngx.ctx per request, inconsistent with
--   one per process); 13 (require "resty.core.ctx".get_ctx_table: not
--   provided).
--
-- Differences from OpenResty that are not in the README's list of
-- deliberate differences end the test pending, marked DIVERGENCE, while
-- corosched still behaves as the reason says; OpenResty's expectation
-- follows in the test and must hold otherwise.
local helper = require "spec.helper"
local net = require "spec.support.net"
local ngxc = require "corosched.ngx"
local ngx_env = require "spec.support.ngx_env"
local stderr_of, log_lines = ngx_env.stderr_of, ngx_env.log_lines
local one_line, date_between = ngx_env.one_line, ngx_env.date_between
local DATETIME, process_pid = ngx_env.DATETIME, ngx_env.process_pid
local run, lines, holds = ngx_env.run, ngx_env.lines, ngx_env.holds

-- the ngx global and what install() adds are put back after each test,
-- with package.loaded.bad_context (misc.t TEST 8's)
local save_globals, restore_globals = ngx_env.saver({ "bad_context" })

-- ngx.ctx (one table per process) is an empty table during each test and
-- the process's own afterwards: a block that replaces it (ctx.t TEST 2,
-- 12) leaves nothing behind
local saved_ctx

local function before()
  save_globals()
  saved_ctx = ngxc.ngx.ctx
  ngxc.ngx.ctx = {}
end

local function after()
  ngxc.ngx.ctx = saved_ctx
  restore_globals()
  helper.after_each()
end

-- A known difference: while `differs` holds (corosched still behaves as
-- `reason` says), the test ends pending; otherwise it goes on to
-- OpenResty's expectation, which must then hold.
local function divergence(differs, reason)
  if differs then pending("DIVERGENCE: " .. reason) end
end


describe("lua-resty-core t/time.t", function()
  before_each(before)
  after_each(after)

  it("time TEST 1: ngx.now() (adapted: a generous upper bound)", function()
    local bound = 0.1 + 0.5 * helper.slack
    local t, elapsed
    local body = run(function(ngx)
      for _ = 1, 30 do
        t = ngx.now()
      end
      ngx.sleep(0.10)
      elapsed = ngx.now() - t
      ngx.say(t > 1399867351)
      ngx.say(">= 0.099: ", elapsed >= 0.099)
      ngx.say("< 0.11: ", elapsed < bound) -- (0.11 in the block)
    end)
    assert.equal(lines("true", ">= 0.099: true", "< 0.11: true"), body)
    assert.is_number(t)
    assert.is_true(elapsed >= 0.099, tostring(elapsed))
  end)

  it("time TEST 2: ngx.time()", function()
    local t
    local body = run(function(ngx)
      for _ = 1, 30 do
        t = ngx.time()
      end
      ngx.say(t > 1400960598)
      local diff = os.time() - t
      ngx.say("<= 1: ", diff <= 1)
    end)
    assert.equal(lines("true", "<= 1: true"), body)
    assert.equal("integer", math.type(t))
  end)

  it("time TEST 3: ngx.update_time()", function()
    local start, stop
    local body = run(function(ngx)
      start = ngx.now()
      for _ = 1, 1e5 do
        ngx.update_time()
      end
      stop = ngx.now()
      ngx.say(ngx.now() - start > 0)
    end)
    assert.equal("true\n", body)
    assert.is_true(stop > start)
  end)

  it("time TEST 4: ngx.today()", function()
    local t0, t1
    local body = run(function(ngx)
      t0 = os.time()
      local t
      for _ = 1, 30 do
        t = ngx.today()
      end
      ngx.say(t)
      t1 = os.time()
    end)
    -- ^\d{4}-\d{2}-\d{2}
    local line = one_line(body, "^%d%d%d%d%-%d%d%-%d%d")
    assert.is_true(date_between(line, "%Y-%m-%d", t0, t1), line)
  end)

  it("time TEST 5: ngx.localtime()", function()
    local t0, t1
    local body = run(function(ngx)
      t0 = os.time()
      local t
      for _ = 1, 30 do
        t = ngx.localtime()
      end
      ngx.say(t)
      t1 = os.time()
    end)
    local line = one_line(body, DATETIME)
    assert.is_true(date_between(line, "%Y-%m-%d %H:%M:%S", t0, t1), line)
  end)

  it("time TEST 6: ngx.utctime()", function()
    local t0, t1
    local body = run(function(ngx)
      t0 = os.time()
      local t
      for _ = 1, 30 do
        t = ngx.utctime()
      end
      ngx.say(t)
      t1 = os.time()
    end)
    local line = one_line(body, DATETIME)
    assert.is_true(date_between(line, "!%Y-%m-%d %H:%M:%S", t0, t1), line)
  end)

  it("time TEST 7: ngx.cookie_time()", function()
    local body = run(function(ngx)
      local t
      for _ = 1, 30 do
        t = ngx.cookie_time(1290079655)
      end
      ngx.say(t)
      ngx.say(ngx.cookie_time(2200000000))
    end)
    assert.equal(lines("Thu, 18-Nov-10 11:27:35 GMT",
                       "Sun, 18-Sep-2039 23:06:40 GMT"), body)
  end)

  it("time TEST 8: ngx.cookie_time() bad argument", function()
    local body = run(function(ngx)
      local pok, err = pcall(ngx.cookie_time, "foo")
      if not pok then
        ngx.say("not ok: ", err)
        return
      end

      ngx.say("ok")
    end)
    assert.equal("not ok: number argument only\n", body)
  end)

  it("time TEST 9: ngx.http_time()", function()
    local body = run(function(ngx)
      local t
      for _ = 1, 30 do
        t = ngx.http_time(1290079655)
      end
      ngx.say(t)
    end)
    assert.equal("Thu, 18 Nov 2010 11:27:35 GMT\n", body)
  end)

  it("time TEST 10: ngx.http_time() bad argument", function()
    local t
    local body = run(function(ngx)
      t = ngx.http_time(1290079655)
      local pok, err = pcall(ngx.http_time, "foo")
      if not pok then
        ngx.say("not ok: ", err)
        return
      end

      ngx.say("ok")
    end)
    assert.equal("not ok: number argument only\n", body)
    assert.equal("Thu, 18 Nov 2010 11:27:35 GMT", t)
  end)

  it("time TEST 11: ngx.parse_http_time()", function()
    local body = run(function(ngx)
      local t
      for _ = 1, 30 do
        t = ngx.parse_http_time("Thu, 18 Nov 2010 11:27:35 GMT")
      end
      ngx.say(t)
      ngx.say(ngx.parse_http_time("Thu, Nov 2010"))
    end)
    assert.equal(lines("1290079655", "nil"), body)
  end)

  it("time TEST 12: ngx.parse_http_time() bad argument", function()
    local t
    local body = run(function(ngx)
      t = ngx.http_time(1290079655)
      local pok, err = pcall(ngx.parse_http_time, 123)
      if not pok then
        ngx.say("not ok: ", err)
        return
      end

      ngx.say("ok")
    end)
    assert.equal("not ok: string argument only\n", body)
    assert.equal("Thu, 18 Nov 2010 11:27:35 GMT", t)
  end)
end)


describe("lua-resty-core t/uri.t", function()
  before_each(before)
  after_each(after)

  it("uri TEST 1: unescape_uri (string)", function()
    local body = run(function(ngx)
      local s
      for _ = 1, 30 do
        s = ngx.unescape_uri("hello%20world")
      end
      ngx.say(s)
    end)
    assert.equal("hello world\n", body)
  end)

  it("uri TEST 2: unescape_uri (nil)", function()
    local s
    local body = run(function(ngx)
      for _ = 1, 30 do
        s = ngx.unescape_uri(nil)
      end
      ngx.say(s)
    end)
    assert.equal("\n", body)
    assert.equal("", s)
  end)

  it("uri TEST 3: unescape_uri (number)", function()
    local s
    local body = run(function(ngx)
      for _ = 1, 30 do
        s = ngx.unescape_uri(3.14)
      end
      ngx.say(s)
    end)
    assert.equal("3.14\n", body)
    assert.equal("3.14", s)
  end)

  it("uri TEST 4: escape_uri (string, escaped)", function()
    local body = run(function(ngx)
      local s
      for _ = 1, 30 do
        s = ngx.escape_uri("hello world")
      end
      ngx.say(s)
    end)
    assert.equal("hello%20world\n", body)
  end)

  it("uri TEST 5: escape_uri (string, no escaped)", function()
    local body = run(function(ngx)
      local s
      for _ = 1, 30 do
        s = ngx.escape_uri("helloworld")
      end
      ngx.say(s)
    end)
    assert.equal("helloworld\n", body)
  end)

  it("uri TEST 6: escape_uri (nil)", function()
    local s
    local body = run(function(ngx)
      for _ = 1, 30 do
        s = ngx.escape_uri(nil)
      end
      ngx.say(s)
    end)
    assert.equal("\n", body)
    assert.equal("", s)
  end)

  it("uri TEST 7: escape_uri (number)", function()
    local s
    local body = run(function(ngx)
      for _ = 1, 30 do
        s = ngx.escape_uri(3.14)
      end
      ngx.say(s)
    end)
    assert.equal("3.14\n", body)
    assert.equal("3.14", s)
  end)

  it("uri TEST 8: escape_uri (larger than 4k, nothing to be escaped)",
     function()
    local body = run(function(ngx)
      local s
      for _ = 1, 30 do
        s = ngx.escape_uri(string.rep("a", 4097))
      end
      ngx.say(s)
    end)
    assert.equal(string.rep("a", 4097) .. "\n", body)
  end)

  it("uri TEST 9: escape_uri (a little smaller than 4k, need to be "
     .. "escaped)", function()
    local body = run(function(ngx)
      local s
      for _ = 1, 30 do
        s = ngx.escape_uri(string.rep(" ", 1365))
      end
      ngx.say(s)
    end)
    assert.equal(string.rep("%20", 1365) .. "\n", body)
  end)

  it("uri TEST 10: escape_uri (a little bigger than 4k, need to be "
     .. "escaped)", function()
    local body = run(function(ngx)
      local s
      for _ = 1, 30 do
        s = ngx.escape_uri(string.rep(" ", 1366))
      end
      ngx.say(s)
    end)
    assert.equal(string.rep("%20", 1366) .. "\n", body)
  end)
end)


describe("lua-resty-core t/worker.t", function()
  before_each(before)
  after_each(after)

  it("worker TEST 1: ngx.worker.exiting", function()
    local body = run(function(ngx)
      local v
      local exiting = ngx.worker.exiting
      for _ = 1, 30 do
        v = exiting()
      end
      ngx.say(v)
    end)
    assert.equal("false\n", body)
  end)

  it("worker TEST 2: ngx.worker.pid (adapted: $pid is the pid a child "
     .. "shell sees as $PPID)", function()
    local var_pid = tostring(process_pid()) -- ngx.var.pid
    local body = run(function(ngx)
      local v
      local pid = ngx.worker.pid
      for _ = 1, 30 do
        v = pid()
      end
      ngx.say(v == tonumber(var_pid))
      ngx.say(v)
    end)
    -- response_body_like chop: ^true\n\d+$
    assert.is_truthy(body:match("^true\n%d+\n$"), body)
    assert.equal(lines("true", var_pid), body)
  end)

  it("worker TEST 3: ngx.worker.id", function()
    local body = run(function(ngx)
      local v
      local id = ngx.worker.id
      for _ = 1, 30 do
        v = id()
      end
      ngx.say("worker id: ", v)
    end)
    -- response_body_like chop: ^worker id: [0-1]$ (one worker: 0)
    one_line(body, "^worker id: [0-1]$")
    assert.equal("worker id: 0\n", body)
  end)

  it("worker TEST 4: ngx.worker.count", function()
    local body = run(function(ngx)
      local v
      local count = ngx.worker.count
      for _ = 1, 30 do
        v = count()
      end
      ngx.say("workers: ", v)
    end)
    assert.equal("workers: 1\n", body)
  end)

  it("worker TEST 5: ngx.worker.pids", function()
    local var_pid = process_pid()
    local body = run(function(ngx)
      local pids = ngx.worker.pids()
      local pid = ngx.worker.pid()
      ngx.say("worker pid: ", pid)
      local count = ngx.worker.count()
      if count ~= #pids then
        ngx.say("worker pids is wrong.")
      end
      for i = 1, count do
        if pids[i] == pid then
          ngx.say("worker pid is correct.")
          return
        end
      end
      ngx.say("worker pid is wrong.")
    end)
    -- response_body_like: worker pid: \d+\nworker pid is correct\.
    assert.is_truthy(body:match("^worker pid: %d+\nworker pid is correct%.\n$"),
                     body)
    assert.equal(lines("worker pid: " .. var_pid, "worker pid is correct."),
                 body)
  end)
end)


describe("lua-resty-core t/misc.t", function()
  before_each(before)
  after_each(after)

  it("misc TEST 8: bad context (ngx.req.is_internal in a timer)",
     function()
    local seen
    local body = run(function(ngx)
      local function test()
        local ok, err = pcall(ngx.req.is_internal)
        package.loaded.bad_context = {ok, err}
      end

      ngx.timer.at(0, test)
      -- (ngx.sleep(0.02) in the block: the time the timer takes to run)
      assert.is_true(net.wait_until(function()
        return package.loaded.bad_context ~= nil
      end))

      local ctx = package.loaded.bad_context
      seen = ctx
      ngx.say(ctx[1])
      local i = string.find(ctx[2], "API disabled in the current context")
      ngx.say(i ~= nil and i > 1) -- (`i > 1`: raises when i is nil)
    end)
    -- what both give: the call raised, with a message
    assert.is_table(seen)
    assert.is_false(seen[1])
    assert.is_string(seen[2])
    divergence(body == lines("false", "false")
               and holds(seen[2], "ngx.req.is_internal is not available"),
               "ngx.req.is_internal() in an ngx.timer handler raises "
               .. "\"corosched.ngx: ngx.req.is_internal is not available "
               .. "(no nginx request)\"; OpenResty's raises \"API disabled "
               .. "in the current context\" (with a position before it)")
    assert.equal(lines("false", "true"), body)
  end)
end)


describe("lua-resty-core t/phase.t", function()
  before_each(before)
  after_each(after)

  it("phase TEST 9 (older copy): get_phase in ngx.timer callback",
     function()
    local body
    local err = stderr_of(function()
      ngxc.set_log_level("warn")
      body = run(function(ngx)
        ngx.say("OK") -- echo "OK"
        local function f()
          local phase
          for _ = 1, 30 do
            phase = ngx.get_phase()
          end
          ngx.log(ngx.WARN, "current phase: ", phase)
        end
        local ok, terr = ngx.timer.at(0, f)
        if not ok then
          ngx.log(ngx.ERR, "failed to add timer: ", terr)
        end
      end)
    end)
    assert.equal("OK\n", body)
    assert.same({ { "warn", "current phase: timer" } }, log_lines(err))
    -- --- no_error_log [error]
    assert.is_nil(err:find("[error]", 1, true))
  end)
end)


describe("lua-resty-core t/ctx.t", function()
  before_each(before)
  after_each(after)

  it("ctx TEST 1: get ngx.ctx", function()
    local body = run(function(ngx)
      for i = 1, 100 do
        ngx.ctx.foo = i
      end
      ngx.say("ctx.foo = ", ngx.ctx.foo)
    end)
    assert.equal("ctx.foo = 100\n", body)
    -- one table per process: the one the module's ngx holds
    assert.equal(100, ngxc.ngx.ctx.foo)
  end)

  it("ctx TEST 2: set ngx.ctx", function()
    local body = run(function(ngx)
      for i = 1, 100 do
        ngx.ctx = {foo = i}
      end
      ngx.say("ctx.foo = ", ngx.ctx.foo)
    end)
    assert.equal("ctx.foo = 100\n", body)
    assert.same({ foo = 100 }, ngxc.ngx.ctx)
  end)

  it("ctx TEST 12: prohibit setting ngx.ctx to non-table value",
     function()
    local ok_seen, ctx_after
    local body = run(function(ngx)
      local ok, err = pcall(function()
        ngx.ctx = nil
      end)
      if not ok then
        ngx.say(err)
      end
      ok_seen, ctx_after = ok, ngx.ctx
    end)
    -- response_body_like: ctx should be a table while getting a nil
    assert.is_true(holds(body, "ctx should be a table while getting a nil"),
                   body)
    assert.equal("table", type(ctx_after)) -- ngx.ctx is still a table
    assert.is_false(ok_seen)
  end)
end)
