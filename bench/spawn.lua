-- Spawn + wait of a trivial thread: threads per second.
--
--   lua5.4 bench/spawn.lua <impl> <n>
--
--   corosched  inside cs.run: t = cs.thread.spawn(f); cs.thread.wait(t), n times
--              (f returns at once, so spawn runs it to completion and wait
--              collects the zombie without parking)
--   stock      coroutine.create(f) + coroutine.resume, n times (no corosched)
--   cqueues    cq:wrap(f) in batches of 100, then cq:loop() per batch
--              (cqueues has no join; the loop is its way to run them out)
-- Garbage collection of the finished threads is part of the cost for all.
local B = dofile((arg[0]:match("^(.*)/") or ".") .. "/lib.lua")

local impl, n = B.args("spawn.lua <impl> <n>", { "corosched", "stock", "cqueues" })
local BATCH = 100
local function f() return 1 end

local impls = {}

function impls.corosched()
  local cs = B.corosched()
  local spawn, wait = cs.thread.spawn, cs.thread.wait
  local wall
  cs.run(function()
    wall = B.timed(impl, function()
      for _ = 1, n do
        local t = spawn(f)
        local ok = wait(t)
        if not ok then error("wait failed") end
      end
    end)
  end)
  return wall
end

function impls.stock()
  local create, resume = coroutine.create, coroutine.resume
  return B.timed(impl, function()
    for _ = 1, n do
      local co = create(f)
      resume(co)
    end
  end)
end

function impls.cqueues()
  local cqueues = require "cqueues"
  local cq = cqueues.new()
  n = n // BATCH * BATCH
  return B.timed(impl, function()
    for _ = 1, n // BATCH do
      for _ = 1, BATCH do cq:wrap(f) end
      assert(cq:loop())
    end
  end)
end

B.out(n / impls[impl]())
