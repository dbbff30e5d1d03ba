-- Loaded by busted before the specs (.busted: helper).
-- CS_SHORT_IO=1 with a testing build (make check-shortio): every recv/send
-- moves one byte at most and every other call says EAGAIN, so every park
-- and continuation path of the socket code runs.
if os.getenv("CS_SHORT_IO") == "1" then
  local core = require "corosched.core"
  assert(core._testing, "CS_SHORT_IO needs a testing build (make check-shortio)")
  core._testing.short_io(true)
end
