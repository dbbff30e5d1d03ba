-- Conformance with real OpenResty's light threads, randomized:
-- spec/support/thread_random_cases.lua generates (seeded, deterministic)
-- a few hundred small programs of nested light threads (spawns with
-- arguments, waits, kills, sleeps, yields, semaphores, user coroutines,
-- pcall, ngx.timer.at(0) callbacks, returns and errors);
-- spec/support/record_thread_random.sh ran them in OpenResty and recorded
-- one line per event, in the order the events happened, in
-- spec/support/thread_random_recorded.txt. Here the same programs run on
-- corosched (through corosched.ngx's `ngx` global, one after the other)
-- and each must do what it did in OpenResty, line for line, except the
-- programs listed in DIVERGENT below (pending, with what differs, a
-- deliberate difference the README lists).
local ngx_env = require "spec.support.ngx_env"
local m = require "spec.support.thread_random_cases"

-- what corosched does differently in the programs listed below
local SLEEP0_TIMER = "ngx.sleep(0) and ngx.timer.at(0) callbacks interleave "
  .. "differently: Debian's lua-nginx-module 0.10.23 (built without "
  .. "OpenResty's posted-delayed-events nginx patch) makes ngx.sleep(0) a "
  .. "0 ms timer, in the same queue as timer.at(0)'s, so a timer created "
  .. "before a sleep(0) runs before the sleeper resumes; corosched runs "
  .. "every sleep(0)-posted thread before any timer callback"

-- [program number] = what corosched does differently
local DIVERGENT = {}
for _, i in ipairs({
    3, 5, 9, 14, 23, 31, 46, 61, 64, 95, 101, 105, 129, 138, 142, 154,
    159, 183, 186, 217, 230, 250, 266
}) do
  DIVERGENT[i] = SLEEP0_TIMER
end


ngx_env.replay_cases({
  title = "random light-thread programs recorded from OpenResty",
  file = "thread_random_recorded.txt",
  cases = m,
  recorder = "record_thread_random.sh",
  word = "program",
  no_peer = true,
  run_opts = { allow_errors = true, timeout = 60 },
  name = function(i) return ("program %d"):format(i) end,
  skip = function(_, i)
    return DIVERGENT[i] and "deliberate difference (README): "
      .. DIVERGENT[i]
  end,
})
