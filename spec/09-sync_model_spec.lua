-- Conservation under random kills: producers push numbered items into a
-- bounded queue and consumers pop them, with random timeouts (many
-- expire), while a supervisor kills producers and consumers at random
-- moments (parked, or woken with an item or room handed to them and not
-- yet run) and starts new ones; then the queue is drained. Every item a
-- push reported as pushed is popped exactly once; no item is popped
-- twice; an item whose push was not reported (it timed out, or its
-- producer was killed in it) is popped at most once. The same for a
-- semaphore: posted units = units taken by waits that returned true +
-- what count() says at the end, whatever was killed. A fixed seed
-- (CS_SYNC_SEED picks another).
local helper = require "spec.helper"
local cs = helper.cs
local spawn, wait, kill = cs.thread.spawn, cs.thread.wait, cs.thread.kill
local prng = helper.prng

local SEED = tonumber(os.getenv("CS_SYNC_SEED")) or 9

-- runs `roles` (name -> body(rand, id)) as `n` threads each, killing and
-- restarting random ones every few ms for `turns` turns, then calls
-- stop() (the bodies end their loops) and waits for the rest; returns
-- how many were killed
local function supervise(rand, roles, n, turns, stop)
  local ts, names, kills = {}, {}, 0
  local serial = 0
  local function start(name, slot)
    serial = serial + 1
    ts[slot] = spawn(roles[name], prng(SEED * 1000 + serial), serial)
    names[slot] = name
  end
  local slot = 0
  for name in pairs(roles) do
    for _ = 1, n do
      slot = slot + 1
      start(name, slot)
    end
  end
  for _ = 1, turns do
    cs.sleep(rand(0, 3) / 1000)
    local i = rand(slot)
    local st = cs.thread.status(ts[i])
    if rand(2) == 1 and (st == "running" or st == "normal") then
      assert.equal(1, kill(ts[i]))
      kills = kills + 1
      start(names[i], i)
    elseif st == "zombie" then
      assert(wait(ts[i]))
      start(names[i], i)
    end
  end
  stop()
  for _, t in ipairs(ts) do
    if cs.thread.status(t) ~= "dead" then assert(wait(t)) end
  end
  return kills
end

describe("sync model", function()
  after_each(helper.after_each)

  it("a queue: every pushed item popped once, whatever is killed",
     function()
    local rand = prng(SEED)
    local turns = math.floor(400 * helper.scale) + 20
    local counts
    helper.run(function()
      local q = cs.queue.new(3)
      local pushed, pending, popped = {}, {}, {}
      local stop = false
      local function pop_one(v)
        assert(popped[v] == nil, "item " .. tostring(v) .. " popped twice")
        assert(pushed[v] or pending[v],
               "item " .. tostring(v) .. " was never pushed")
        popped[v] = true
      end
      local roles = {
        producer = function(r, id)
          local seq = 0
          while not stop do
            seq = seq + 1
            local v = id * 100000 + seq
            pending[v] = true -- (until push says: a kill may come first)
            local ok, err = q:push(v, r(0, 3) / 1000)
            pending[v] = nil
            if ok then
              assert.equal(1, ok)
              pushed[v] = true
            else
              assert.equal("timeout", err)
              pending[v] = "failed" -- (and never popped)
            end
            if r(3) == 1 then cs.sleep(r(0, 2) / 1000) end
          end
        end,
        consumer = function(r)
          while not stop do
            local v, err = q:pop(r(0, 4) / 1000)
            if v then pop_one(v) else assert.equal("timeout", err) end
          end
        end,
      }
      -- (pending[v] == true after the producer is gone: killed in push)
      local kills = supervise(rand, roles, 3, turns,
                              function() stop = true end)
      while true do -- what is left in the queue
        local v = q:pop(0)
        if not v then break end
        pop_one(v)
      end
      local n, lost = 0, {}
      for v in pairs(pushed) do
        n = n + 1
        if not popped[v] then lost[#lost + 1] = v end
      end
      assert.same({}, lost)
      for v in pairs(popped) do
        assert(pushed[v] or pending[v] == true,
               "item " .. v .. ": its push had failed")
      end
      counts = { pushed = n, kills = kills }
    end, { timeout = 60 })
    assert.is_true(counts.pushed > 0 and counts.kills > 0)
  end)

  it("a semaphore: units posted = units taken + count()", function()
    local rand = prng(SEED + 1)
    local turns = math.floor(400 * helper.scale) + 20
    local counts
    helper.run(function()
      local sem = cs.semaphore.new(2)
      local posted, taken = 2, 0
      local stop = false
      local roles = {
        poster = function(r)
          while not stop do
            local k = r(1, 3)
            assert.is_true(sem:post(k))
            posted = posted + k
            cs.sleep(r(0, 3) / 1000)
          end
        end,
        waiter = function(r)
          while not stop do
            local ok, err = sem:wait(r(0, 4) / 1000)
            if ok then
              taken = taken + 1
            else
              assert.equal("timeout", err)
            end
            if r(4) == 1 then cs.sleep(0) end
          end
        end,
      }
      local kills = supervise(rand, roles, 3, turns,
                              function() stop = true end)
      assert.equal(posted, taken + sem:count())
      counts = { taken = taken, kills = kills }
    end, { timeout = 60 })
    assert.is_true(counts.taken > 0 and counts.kills > 0)
  end)
end)
