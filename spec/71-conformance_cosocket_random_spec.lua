-- Conformance with real OpenResty's TCP cosockets, randomized:
-- spec/support/cosocket_random_cases.lua generates (seeded, deterministic)
-- a few hundred connections to spec/support/script_peer.py, over TCP, unix
-- sockets and TLS, each a random mix of receive(n), "*l", "*a",
-- receiveany, receiveuntil iterators (inclusive or not, called with and
-- without a size, several per socket, old ones called again), the peer's
-- chunks arriving between them, and its FIN, close or reset; and
-- setkeepalive() or close() at the end. spec/support/
-- record_cosocket_random.sh ran them in OpenResty and recorded one line
-- per step in spec/support/cosocket_random_recorded.txt. Here the same
-- cases run on corosched (through corosched.ngx's `ngx` global, 40 at a
-- time as there) and each must return what OpenResty returned, line for
-- line.
local net = require "spec.support.net"
local ngxc = require "corosched.ngx"
local ngx_env = require "spec.support.ngx_env"
local script_peer = require "spec.support.script_peer"
local m = require "spec.support.cosocket_random_cases"
local show = require("spec.support.openresty_cases").show

local save_globals, restore_globals = ngx_env.saver()


-- whether case c cannot hold in short-I/O mode (make check-shortio),
-- where each recv moves one byte: what one receiveany read returns, and
-- setkeepalive's answer where OpenResty had read bytes that are still in
-- the kernel here ("unread data in buffer" or "connection in dubious
-- state")
local function short_io_pending(c)
  for _, op in ipairs(c.ops) do
    if op[1] == "receiveany" or op[1] == "setkeepalive" then return true end
  end
  return false
end

describe("random cosocket cases recorded from OpenResty", function()
  local seed, count, recorded = ngx_env.load_recording(
    "cosocket_random_recorded.txt", "case")
  local cases = m.generate(m.SEED, m.COUNT)
  local got

  setup(function()
    save_globals()
    local peer = script_peer.start()
    local ok, err = pcall(net.run, function()
      ngxc.install()
      got = m.run_all(cases, peer, show)
    end)
    script_peer.stop()
    restore_globals()
    assert(ok, err)
  end)

  it("the recording is of these cases", function()
    assert.are.equal(m.SEED, seed)
    assert.are.equal(m.COUNT, count)
    for i = 1, m.COUNT do
      assert(recorded[i], "case " .. i .. " is not recorded (run "
             .. "spec/support/record_cosocket_random.sh)")
    end
  end)

  for i, c in ipairs(cases) do
    local it = net.short_io and short_io_pending(c) and pending or it
    it(("case %d (%s, %d steps)"):format(i, c.transport, #c.ops), function()
      assert.are.equal(recorded[i], got[i])
    end)
  end
end)
