-- Failures of corosched's own C allocations (malloc, calloc, realloc in
-- csrc/), one at a time, on real loopback sockets. Testing builds only
-- (core._testing.alloc_fail, csrc/cs_alloc.h); with a normal build the
-- file is pending. Run by `make check-asan` (ASan+UBSan), `make
-- check-shortio` and `make check-gcstress`, which use testing builds.
--
-- Each scenario runs once cleanly, which must succeed, and counts the C
-- allocations it makes (N). Then, for k = 0 .. N-1, it runs again with the
-- allocation after the first k made to fail. Each time:
--   * the process goes on (and ASan, in check-asan, sees nothing wrong);
--   * every error, returned (nil, err) or raised, is a memory error ("no
--     memory" returned by an I/O operation, "not enough memory" raised),
--     or one that a memory error at the other end of the connection
--     explains ("closed", a reset, a broken pipe);
--   * when the failure was reached, somebody reported a memory error, or
--     a fallback absorbed it and everything went as in the clean run (no
--     epoll set: libevent events; a free list that cannot grow): no
--     failure is swallowed into a wrong result or a hang;
--   * nothing is left behind: no thread, timer or socket in cs.stats(),
--     no file descriptor, and the next run works.
-- What a process allocates once (the scheduler, its maps and heaps, the
-- epoll set, the resolver, the UDP receive buffer) is swept the same way
-- in fresh lua5.4 processes, armed by CS_ALLOC_FAIL=k before corosched's
-- first allocation.
local helper = require "spec.helper"
local net = require "spec.support.net"
local tls = require "spec.support.tls"
local cs = helper.cs
local core = require "corosched.core"
local T = core._testing

if not (T and T.alloc_fail) then
  describe("C allocation failures", function()
    pending("needs a testing build (make check-shortio, or "
            .. "make BUILD=build-testing DEFS=-DCS_TESTING all and "
            .. "LUA_CPATH=build-testing/?.so): core._testing is absent")
  end)
  return
end

-- ms, every socket: a safety net only. A side that ends closes its
-- sockets, and the listener is closed once the clients are done, so a
-- peer waiting for a side that failed is woken with "closed" at once.
local TIMEOUT = 5000

-- errors that follow from a memory error at the other end (not
-- "timeout": nothing waits for a side that failed, see finish())
local KNOCK_ON = {
  closed = true,
  ["connection refused"] = true, -- a server that failed closed its socket
  ["connection reset by peer"] = true,
  ["broken pipe"] = true,
}

-- "no memory", "handshake failed: no memory", "not enough memory"
local function is_memory_error(err)
  return err:find("no memory", 1, true) ~= nil
    or err:find("not enough memory", 1, true) ~= nil
end

-- what one run saw
local function new_log()
  return { memory = 0, knock_on = 0, bad = {}, ok = 0 }
end

local function note(log, err)
  err = tostring(err)
  if is_memory_error(err) then
    log.memory = log.memory + 1
  elseif KNOCK_ON[err] then
    log.knock_on = log.knock_on + 1
  else
    log.bad[#log.bad + 1] = err
  end
end

local ABORT = setmetatable({}, { __tostring = function() return "abort" end })

-- a `nil, err` ends the side that got it (after noting err)
local function try(log, v, err, ...)
  if v == nil then
    note(log, err)
    error(ABORT, 0)
  end
  return v, err, ...
end

-- runs fn(own) as one side of a scenario; a raised error ends it too.
-- Sockets it registered with own() are closed when it ends.
local function side(log, fn)
  local owned = {}
  local function own(s)
    owned[#owned + 1] = s
    return s
  end
  local ok, err = pcall(fn, own)
  if not ok and err ~= ABORT then
    note(log, err)
  end
  if ok then
    log.ok = log.ok + 1
  end
  for i = #owned, 1, -1 do
    owned[i]:close()
  end
end

-- spawns fn as a side in its own thread; nil when the spawn itself fails
-- (noted)
local function spawn_side(log, fn)
  local ok, th = pcall(cs.thread.spawn, side, log, fn)
  if not ok then
    note(log, th)
    return nil
  end
  return th
end

-- spawns fn as the server side of srv: srv is closed when it ends (or
-- cannot start), so that a client whose server failed is not left waiting
local function server_side(log, srv, fn)
  local th = spawn_side(log, function(own)
    own(srv)
    fn(own)
  end)
  if not th then srv:close() end
  return th
end

-- a TCP socket of a side (closed when the side ends), with the timeout
local function tcp(own)
  local c = own(cs.socket.tcp())
  c:settimeout(TIMEOUT)
  return c
end

-- a listener, made before the failure is armed
local function listener()
  local srv = assert(cs.socket.listen("127.0.0.1", 0))
  srv:settimeout(TIMEOUT)
  return srv
end

-- runs scenario(log, k) once in helper.run with the k-th next allocation
-- armed to fail (k nil: none) and checks that as many fds as `fds` are
-- open afterwards (connections the peer closed may stay in a pool for a
-- moment: it waits up to 1 s for them). Returns the log, the allocations
-- made and whether the armed failure was reached.
local function run_once(scenario, k, fds)
  local log = new_log()
  local made, reached
  helper.run(function()
    local setup = scenario.setup and scenario.setup() or nil
    local n0 = T.alloc_count()
    if k then T.alloc_fail(k, 1) end
    scenario.run(log, setup)
    local n1, left = T.alloc_fail() -- clears
    made, reached = n1 - n0, k ~= nil and left == 0
    if scenario.teardown then scenario.teardown(setup) end
    local deadline = helper.clock() + 1
    repeat
      collectgarbage()
      collectgarbage()
      if helper.fds() == fds then break end
      cs.sleep(0.005)
    until helper.clock() > deadline
  end, { timeout = 20 })
  collectgarbage()
  collectgarbage()
  if fds then
    assert.equal(fds, helper.fds(), "open fds before and after")
  end
  return log, made, reached
end

local function sweep(scenario)
  -- the first run makes what stays for the process (the event base, the
  -- resolver): the fds after it are the baseline
  run_once(scenario)
  collectgarbage()
  collectgarbage()
  local fds = helper.fds()
  local log, n = run_once(scenario, nil, fds)
  assert.same({}, log.bad, "a clean run had errors")
  assert.equal(0, log.memory + log.knock_on, "a clean run had errors")
  assert.is_true(n > 0, "the scenario made no C allocation")
  local reached = 0
  for k = 0, n - 1 do
    local lk, _, hit = run_once(scenario, k, fds)
    assert.same({}, lk.bad, ("allocation %d of %d: unexpected errors")
      :format(k + 1, n))
    if hit then
      reached = reached + 1
      -- a fallback may absorb the failure (no epoll set: libevent events),
      -- but then everything works
      assert.is_true(lk.memory > 0 or (lk.ok == log.ok and lk.knock_on == 0),
        ("allocation %d of %d failed, nobody reported it and not all went "
         .. "well (%d of %d sides ended well, %d with a knock-on error)")
        :format(k + 1, n, lk.ok, log.ok, lk.knock_on))
    end
  end
  -- a clean run again: nothing of the failures stayed
  log = run_once(scenario, nil, fds)
  assert.same({}, log.bad)
  assert.equal(0, log.memory + log.knock_on)
  assert.is_true(reached > 0)
end

-- sweep() of run(log, srv, port) with a listener made for each run
local function sweep_tcp(run)
  return sweep({
    setup = listener,
    run = function(log, srv)
      return run(log, srv, select(2, assert(srv:getsockname())))
    end,
  })
end

-- the server side most scenarios use: accepts connections until finish()
-- closes srv, and answers each line with reply(line)
local accepted = {} -- this run's server connections: finish() closes them

local function line_server(log, srv, reply)
  while true do
    local c, err = srv:accept()
    if not c then
      if err ~= "closed" then note(log, err) end
      return
    end
    accepted[#accepted + 1] = c
    spawn_side(log, function(own)
      own(c)
      c:settimeout(TIMEOUT)
      while true do
        local line, err = c:receive("*l")
        if not line then
          if err ~= "closed" then note(log, err) end
          return
        end
        try(log, c:send(reply(line)))
      end
    end)
  end
end

-- waits for the client threads, then shuts the server down: closes its
-- socket (a server still waiting for a client that failed is woken) and
-- the connections line_server accepted (their handlers wait for more
-- lines while the client's end sits in a pool), and waits for it
local function finish(srv, server, ...)
  for _, th in pairs({ ... }) do
    cs.thread.wait(th)
  end
  srv:close()
  for i = #accepted, 1, -1 do
    accepted[i]:close()
    accepted[i] = nil
  end
  if server then cs.thread.wait(server) end
end

describe("C allocation failures", function()
  after_each(function()
    T.alloc_fail()
    helper.after_each()
  end)

  it("a receive gathering several reads, a large receive, receiveany",
     function()
    -- (one byte per system call in the short-I/O mode: less there)
    local big = net.short_io and 4096 or 256 * 1024
    sweep_tcp(function(log, srv, port)
      local server = server_side(log, srv, function(own)
        local c = own(try(log, srv:accept()))
        c:settimeout(TIMEOUT)
        local line = try(log, c:receive("*l"))
        -- the reply in three pieces: the client's "*l" gathers them
        for _, piece in ipairs({ "ab", "cd", "ef\n" }) do
          try(log, c:send(piece))
          cs.sleep(0.002)
        end
        try(log, c:receive(big))
        try(log, c:send(line .. "\n"))
      end)
      local client = spawn_side(log, function(own)
        local c = tcp(own)
        try(log, c:connect("127.0.0.1", port))
        try(log, c:send({ "he", "llo", { "\n" } }))
        assert.equal("abcdef", try(log, c:receive("*l")))
        -- more than the kernel takes at once: the send waits, and the
        -- peer's receive(big) reads into a result made at its size
        try(log, c:send(("x"):rep(big)))
        local got = {}
        repeat
          got[#got + 1] = try(log, c:receiveany(3))
        until table.concat(got):find("\n")
        assert.equal("hello\n", table.concat(got))
      end)
      finish(srv, server, client)
    end)
  end)

  it("receiveuntil with and without a size, inclusive", function()
    sweep_tcp(function(log, srv, port)
      local server = server_side(log, srv, function(own)
        local c = own(try(log, srv:accept()))
        c:settimeout(TIMEOUT)
        try(log, c:send("one--two--"))
        cs.sleep(0.002)
        try(log, c:send("three-"))
        cs.sleep(0.002)
        try(log, c:send("-four-X"))
      end)
      local client = spawn_side(log, function(own)
        local c = tcp(own)
        try(log, c:connect("127.0.0.1", port))
        local it = c:receiveuntil("--")
        assert.equal("one", try(log, it()))
        local inc = c:receiveuntil("--", { inclusive = true })
        assert.equal("two--", try(log, inc()))
        -- with a size: pieces, then nil at the boundary
        local parts = {}
        while true do
          local p, err = it(2)
          if p == nil then
            if err == nil then break end -- the boundary
            try(log, p, err)
          end
          parts[#parts + 1] = p
        end
        assert.equal("three", table.concat(parts))
        assert.equal("four-X", try(log, c:receive(6)))
      end)
      finish(srv, server, client)
    end)
  end)

  it("connect by name, bind, maxline, a custom pool, keepalive and reuse",
     function()
    sweep_tcp(function(log, srv, port)
      local server = server_side(log, srv, function()
        line_server(log, srv, function(line) return line .. "!\n" end)
      end)
      local client = spawn_side(log, function(own)
        local c = tcp(own)
        try(log, c:bind("127.0.0.1"))
        try(log, c:connect("localhost", port))
        c:setoption("maxline", 64)
        try(log, c:send("a\n"))
        assert.equal("a!", try(log, c:receive("*l")))
        try(log, c:setkeepalive())
        -- a custom pool name keeps the host apart from the key
        local d = tcp(own)
        try(log, d:connect("127.0.0.1", port, { pool = "p" .. port }))
        try(log, d:send("b\n"))
        assert.equal("b!", try(log, d:receive("*l")))
        try(log, d:setkeepalive())
        -- both come back from their pools
        local e = tcp(own)
        try(log, e:connect("localhost", port))
        assert.equal(1, e:getreusedtimes())
        try(log, e:send("c\n"))
        assert.equal("c!", try(log, e:receive("*l")))
        local f = tcp(own)
        try(log, f:connect("127.0.0.1", port, { pool = "p" .. port }))
        assert.equal(1, f:getreusedtimes())
      end)
      finish(srv, server, client)
    end)
  end)

  it("a connect waiting in a pool's backlog", function()
    sweep_tcp(function(log, srv, port)
      local opts = { pool = "b" .. port, pool_size = 1, backlog = 2 }
      local server = server_side(log, srv, function()
        line_server(log, srv, function(line) return line .. "\n" end)
      end)
      local first = spawn_side(log, function(own)
        local c = tcp(own)
        try(log, c:connect("127.0.0.1", port, opts))
        cs.sleep(0.005) -- the second one waits meanwhile
        try(log, c:send("1\n"))
        assert.equal("1", try(log, c:receive("*l")))
        try(log, c:setkeepalive())
      end)
      local second = spawn_side(log, function(own)
        local c = tcp(own)
        try(log, c:connect("127.0.0.1", port, opts))
        try(log, c:send("2\n"))
        assert.equal("2", try(log, c:receive("*l")))
      end)
      finish(srv, server, first, second)
    end)
  end)

  it("TLS: handshake, a resumed session, a pooled TLS connection",
     function()
    local have, why = tls.available()
    if not have then
      pending("needs python3 and openssl: " .. tostring(why))
      return
    end
    local C = tls.certs()
    local peer = tls.server({ mode = "echo" })
    finally(function() peer:stop() end)
    local function open(log, own, session)
      local c = own(cs.socket.tcp())
      c:settimeout(2000) -- the peer is another process: no knock-on
      try(log, c:connect("127.0.0.1", peer.port, { pool = "tls" }))
      if c:getreusedtimes() == 0 then
        try(log, c:setcafile(C.ca_crt))
      end
      return c, try(log, c:sslhandshake(session, "localhost"))
    end
    sweep({
      run = function(log)
        local client = spawn_side(log, function(own)
          local c, session = open(log, own)
          try(log, c:send("one\n"))
          assert.equal("one", try(log, c:receive("*l")))
          try(log, c:setkeepalive())
          local d = open(log, own) -- from the pool
          assert.equal(1, d:getreusedtimes())
          try(log, d:send("two\n"))
          assert.equal("two", try(log, d:receive("*l")))
          local e = open(log, own, session) -- a new one, resumed
          try(log, e:send("three\n"))
          assert.equal("three", try(log, e:receive("*l")))
        end)
        if client then cs.thread.wait(client) end
      end,
      -- a connect that raised before taking an idle connection left it in
      -- the pool (the peer keeps it open): take them all and close them
      teardown = function()
        repeat
          local c = cs.socket.tcp()
          assert(c:connect("127.0.0.1", peer.port, { pool = "tls" }))
          local reused = c:getreusedtimes() > 0
          c:close()
        until not reused
      end,
    })
  end)

  -- what a process allocates once (the scheduler, its maps and heaps,
  -- the epoll set, the resolver) fails too: a fresh lua5.4 per k, armed
  -- by CS_ALLOC_FAIL=k before corosched's first allocation
  it("a fresh process: loading, the first run, threads, timers, a name "
     .. "lookup, sockets", function()
    local child = [[
      local ok, cs = pcall(require, "corosched")
      local log = { memory = 0, knock = 0, bad = {} }
      local function note(err)
        err = tostring(err)
        if err == "no memory" or err:find("not enough memory", 1, true) then
          log.memory = log.memory + 1
        elseif err == "closed" or err == "connection refused"
               or err == "connection reset by peer" then
          log.knock = log.knock + 1
        else
          log.bad[#log.bad + 1] = err
        end
      end
      local function try(v, err, ...)
        if v == nil then note(err); error("abort", 0) end
        return v, err, ...
      end
      local function side(fn)
        local ok, err = pcall(fn)
        if not ok and err ~= "abort" then note(err) end
      end
      local function spawn(fn)
        local ok, th = pcall(cs.thread.spawn, side, fn)
        if not ok then note(th) end
        return ok and th or nil
      end
      if not ok then
        note(cs)
      else
        side(function()
          cs.run(function()
            local sem = cs.semaphore.new(0)
            for i = 1, 24 do
              if not spawn(function()
                cs.sleep(0.001 * (i % 5))
                if i % 2 == 0 then try(sem:wait(5)) else sem:post(1) end
              end) and i % 2 == 1 then
                sem:post(1) -- a poster that failed to start: no wait hangs
              end
            end
            local srv = try(cs.socket.listen("127.0.0.1", 0))
            srv:settimeout(5000)
            local _, port = srv:getsockname()
            local s = spawn(function()
              local ok2, c, err = pcall(srv.accept, srv)
              if not (ok2 and c) then
                srv:close() -- the client is not left waiting
                if not ok2 then error(c, 0) end
              end
              try(c, err)
              c:settimeout(5000)
              local line, err = c:receive("*l")
              if line then line, err = c:send(line .. "\n") end
              c:close()
              try(line, err)
            end)
            if s then side(function() -- (no server: nobody would answer)
              local c = cs.socket.tcp()
              c:settimeout(5000)
              local r, err = c:connect("localhost", port)
              if r then r, err = c:send("ping\n") end
              if r then r, err = c:receive("*l") end
              c:close()
              try(r, err)
            end) end
            srv:close() -- wakes the server if the client failed
            if s then cs.thread.wait(s) end
            side(function()
              local u = cs.socket.udp()
              local r, err = u:setpeername("127.0.0.1", port)
              if r then r, err = u:send("x") end
              u:close()
              try(r, err)
            end)
            -- a datagram over 8 KiB: the scheduler's 64 KiB buffer
            side(function()
              local a, b = cs.socket.udp(), cs.socket.udp()
              local r, err = a:bind("127.0.0.1", 0)
              if r then
                local _, p = a:getsockname()
                r, err = b:setpeername("127.0.0.1", p)
              end
              if r then r, err = b:send(("u"):rep(9000)) end
              if r then
                a:settimeout(5000)
                local ok2
                ok2, r, err = pcall(a.receive, a)
                if not ok2 then a:close(); b:close(); error(r, 0) end
                if r and #r ~= 9000 then r, err = nil, "short datagram" end
              end
              a:close()
              b:close()
              try(r, err)
            end)
            cs.sleep(0.01) -- the threads above end
          end)
        end)
      end
      local n, left = package.loaded["corosched.core"]._testing.alloc_count()
      io.write(("RESULT %d %d %d %d %s\n"):format(n, left, log.memory,
                                                 log.knock,
                                                 table.concat(log.bad, "|")))
    ]]
    local function run_child(k)
      local out, err, ok = helper.subprocess(child,
                                             { CS_ALLOC_FAIL = k or "" })
      local n, left, mem, knock, bad =
        out:match("RESULT (%d+) (%d+) (%d+) (%d+) ?([^\n]*)")
      assert(ok and n, ("k=%s: the child failed: %s%s"):format(
        tostring(k), out, err))
      return tonumber(n), tonumber(left), tonumber(mem), tonumber(knock), bad
    end
    local n, _, mem, knock, bad = run_child(nil)
    assert.equal("", bad)
    assert.equal(0, mem + knock)
    assert.is_true(n > 0)
    for k = 0, n - 1 do
      local _, left, memk, knockk, badk = run_child(k)
      assert.equal("", badk, "k=" .. k)
      if left == 0 and memk == 0 then -- absorbed by a fallback: all went well
        assert.equal(0, knockk, ("allocation %d of %d failed, nobody "
                                 .. "reported it, and something else failed")
                                :format(k + 1, n))
      end
    end
  end)
end)
