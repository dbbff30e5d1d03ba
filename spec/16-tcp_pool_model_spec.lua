-- A random workload on one connection pool with a backlog (pool_size 3,
-- backlog 4): workers connect under random timeouts (many wait in the
-- backlog, some time out there, some find it full), ask the peer a
-- question, and then put the connection back (with random idle timeouts
-- and sizes), close it, leave an answer unread and get setkeepalive's
-- refusal, or drop it for the collector; a supervisor kills workers at
-- random moments (parked in the backlog, in connect, in a receive, in a
-- sleep, or woken and not yet run) and starts new ones. The peer tags
-- every answer with its connection's number, so that the invariants can
-- be checked at each step:
--   * every answer is the one to the question just asked, on the
--     connection the socket had: no answer of another user, no stale one;
--   * a connection is never in two users' hands at once, and no more
--     than pool_size are in hands at once;
--   * getreusedtimes is 0 exactly for a connection new to the peer;
--   * each call returns what the contract lists, nothing else;
--   * at the end, once the pool is drained, no socket, thread or
--     descriptor is left.
-- A fixed seed (CS_POOL_SEED picks another).
local helper = require "spec.helper"
local net = require "spec.support.net"
local cs = helper.cs
local spawn, wait, kill = cs.thread.spawn, cs.thread.wait, cs.thread.kill

local SEED = tonumber(os.getenv("CS_POOL_SEED")) or 16
local POOL_SIZE, BACKLOG = 3, 4

local prng = helper.prng

-- the peer: answers each line "q" with "<conn>:q", and "two:q" with
-- "<conn>:q" and "<conn>:q-2" in one send; records the connections it saw
local function peer(seen)
  local srv, port = net.listen()
  local n = 0
  local th = spawn(function()
    local conns = {}
    while true do
      local c = srv:accept()
      if not c then break end
      n = n + 1
      local id = n
      seen[id] = true
      conns[#conns + 1] = spawn(function()
        c:settimeout(60000)
        while true do
          local line = c:receive()
          if not line then break end
          local q = line:match("^two:(.*)$")
          if q then
            c:send(("%d:%s\n%d:%s-2\n"):format(id, q, id, q))
          else
            c:send(("%d:%s\n"):format(id, line))
          end
        end
        c:close()
      end)
    end
    for _, t in ipairs(conns) do wait(t) end
  end)
  return port, function()
    srv:close()
    assert(wait(th))
  end
end

describe("tcp pool model", function()
  after_each(helper.after_each)

  it("random connects, reuses, refusals and kills keep every invariant",
     function()
    local rand = prng(SEED)
    local workers = 10
    local rounds = math.floor(100 * helper.scale) + 5
    local opts = { pool = "model", pool_size = POOL_SIZE, backlog = BACKLOG }
    helper.run(function() cs.sleep(0) end) -- (the loop's own descriptors)
    local fds = helper.fds()
    local counts = { connects = 0, reused = 0, timeouts = 0, full = 0,
                     kept = 0, refused = 0, kills = 0 }

    net.run(function()
      local seen = {}
      local port, stop_peer = peer(seen)
      local held, nheld = {}, 0 -- peer connection number -> worker
      local used = {}           -- connection numbers handed out before
      local holding = {}         -- worker -> connection number

      local function take(w, id, reused)
        assert(held[id] == nil, ("connection %d handed to worker %s while "
               .. "worker %s has it"):format(id, w, tostring(held[id])))
        held[id], holding[w] = w, id
        nheld = nheld + 1
        assert(nheld <= POOL_SIZE, nheld .. " connections in hands")
        assert(reused == 0 and not used[id] or reused > 0 and used[id],
               ("connection %d: getreusedtimes %d"):format(id, reused))
        used[id] = true
        if reused == 0 then counts.connects = counts.connects + 1 else
          counts.reused = counts.reused + 1
        end
      end
      local function give(w)
        local id = holding[w]
        if id then
          held[id], holding[w] = nil, nil
          nheld = nheld - 1
        end
      end

      local function ask(s, q)
        assert(s:send(q .. "\n"))
        return s:receive()
      end

      local function worker(w, wrand)
        for _ = 1, rounds do
          local s = cs.socket.tcp()
          s:settimeout(({ 1, 5, 20, 100, 2000 })[wrand(5)])
          local ok, err = s:connect("127.0.0.1", port, opts)
          if not ok then
            assert(err == "timeout" or err == "too many waiting connect "
                   .. "operations", "connect: " .. tostring(err))
            if err == "timeout" then counts.timeouts = counts.timeouts + 1
            else counts.full = counts.full + 1 end
            s:close()
          else
            s:settimeout(2000)
            local reused = s:getreusedtimes()
            local q = ("w%d-%d"):format(w, wrand(1e6))
            local line = assert(ask(s, q))
            local id = tonumber(line:match("^(%d+):"))
            assert.equal(id .. ":" .. q, line)
            assert(seen[id])
            take(w, id, reused)
            if wrand(4) == 1 then
              -- held a while: others wait in the backlog, some time out;
              -- a kill now leaves the socket to the collector, its pool
              -- slot taken until then
              cs.sleep(wrand(0, 10) / 1000)
            end
            local r = wrand(10)
            if r <= 5 then
              give(w) -- (before: the pool may hand it out at once)
              local k, kerr = s:setkeepalive(
                wrand(2) == 1 and wrand(10, 300) or nil,
                wrand(2) == 1 and wrand(1, 5) or nil)
              assert(k == 1, "setkeepalive: " .. tostring(kerr))
              counts.kept = counts.kept + 1
            elseif r <= 7 then
              assert.equal(id .. ":" .. q, ask(s, "two:" .. q))
              -- the second answer came with the first (one send): read
              -- already, or still in the kernel (short reads), which
              -- closes the connection
              local k, kerr = s:setkeepalive()
              assert(k == nil and (kerr == "unread data in buffer"
                                   or kerr == "connection in dubious state"),
                     "setkeepalive: " .. tostring(k) .. " " .. tostring(kerr))
              counts.refused = counts.refused + 1
              if kerr == "unread data in buffer" then
                assert.equal(id .. ":" .. q .. "-2", s:receive())
                assert(s:close())
              end
              give(w)
            elseif r <= 9 then
              give(w)
              assert(s:close())
            else
              give(w)
              s = nil -- luacheck: ignore (for the collector)
              collectgarbage()
            end
          end
          if wrand(3) == 1 then cs.sleep(wrand(0, 5) / 1000) end
        end
      end

      -- the supervisor: workers as its children, some killed and replaced
      local ts, alive = {}, 0
      local function start(w)
        ts[w] = spawn(worker, w, prng(SEED * 100 + w + 1000 * counts.kills))
        alive = alive + 1
      end
      local function supervise()
        for w = 1, workers do start(w) end
        local kills_left = math.floor(60 * helper.scale) + 3
        while alive > 0 do
          cs.sleep(rand(0, 6) / 1000)
          local w = rand(workers)
          local t = ts[w]
          if t and cs.thread.status(t) == "running" and kills_left > 0 then
            assert.equal(1, kill(t))
            kills_left = kills_left - 1
            counts.kills = counts.kills + 1
            give(w) -- (the kill closed its socket)
            alive = alive - 1
            start(w)
            -- (what a worker killed in a sleep left open holds a pool slot
            -- until it is collected)
            collectgarbage()
          end
          for v = 1, workers do
            if ts[v] and cs.thread.status(ts[v]) == "zombie" then
              assert(wait(ts[v]))
              ts[v] = nil
              alive = alive - 1
            end
          end
        end
        assert.equal(0, nheld)
      end
      local ok, err = pcall(supervise)
      if not ok then -- the workers left go, and what they held
        for _, t in pairs(ts) do kill(t) end
      end

      collectgarbage()
      collectgarbage()
      net.drain_pool(function()
        local s = cs.socket.tcp()
        assert(s:connect("127.0.0.1", port, opts))
        return { get_reused_times = function() return s:getreusedtimes() end,
                 close = function() return s:close() end }
      end)
      stop_peer()
      assert(ok, err)
    end, { timeout = 60 })

    assert.is_true(counts.reused > 0 and counts.kept > 0
                   and counts.refused > 0 and counts.kills > 0)
    assert.equal(fds, helper.fds())
  end)
end)
