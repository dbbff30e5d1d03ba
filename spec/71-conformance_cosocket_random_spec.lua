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
local ngx_env = require "spec.support.ngx_env"
local m = require "spec.support.cosocket_random_cases"

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

ngx_env.replay_cases({
  title = "random cosocket cases recorded from OpenResty",
  file = "cosocket_random_recorded.txt",
  cases = m,
  recorder = "record_cosocket_random.sh",
  name = function(i, c)
    return ("case %d (%s, %d steps)"):format(i, c.transport, #c.ops)
  end,
  skip = function(c) return net.short_io and short_io_pending(c) end,
})
