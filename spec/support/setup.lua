-- Loaded by busted before the specs (.busted: helper).
-- CS_SHORT_IO=1 with a testing build (make check-shortio): every recv/send
-- moves one byte at most and every other call says EAGAIN, so every park
-- and continuation path of the socket code runs.
if os.getenv("CS_SHORT_IO") == "1" then
  local core = require "corosched.core"
  assert(core._testing, "CS_SHORT_IO needs a testing build (make check-shortio)")
  core._testing.short_io(true)
end

-- CS_GC_STRESS=1 with a testing build (make check-gcstress): the collector
-- runs without pause and takes a step after every resume, so a missing
-- anchor shows up as a crash or an ASan report.
if os.getenv("CS_GC_STRESS") == "1" then
  local core = require "corosched.core"
  assert(core._testing, "CS_GC_STRESS needs a testing build (make check-gcstress)")
  core._testing.gc_stress(true)
  collectgarbage("incremental", 0, 1000)
end

-- CS_NO_EPOLL=1 with a testing build (make check-gcstress sets it): the
-- sockets use a libevent event each, the path of systems without epoll,
-- instead of the scheduler's epoll set.
if os.getenv("CS_NO_EPOLL") == "1" then
  local core = require "corosched.core"
  assert(core._testing, "CS_NO_EPOLL needs a testing build")
  core._testing.no_epoll(true)
end
