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

-- the cases of the committed recording (by its seed) where an iterator's
-- call timed out while it held the bytes of a partial match, and another
-- reader (receive, receiveany or another iterator) came next: corosched
-- hands those bytes to that reader first, as lua-nginx-module 0.10.25 and
-- later do (read_prepare); the recording's 0.10.23 leaves them with the
-- iterator (README's deliberate differences). Found by running all the
-- cases: in each of these the first line that differs is that reader's,
-- and what it got more starts with those bytes, a prefix of the
-- iterator's pattern.
local READ_PREPARE = {
  [20261128] = { 23, 32, 80, 218, 258, 271, 284, 286, 289, 315, 320, 321,
                 322, 324, 326, 330, 348, 357 },
}
local read_prepare = {}
for _, i in ipairs(READ_PREPARE[m.SEED] or {}) do read_prepare[i] = true end

ngx_env.replay_cases({
  title = "random cosocket cases recorded from OpenResty",
  file = "cosocket_random_recorded.txt",
  cases = m,
  recorder = "record_cosocket_random.sh",
  name = function(i, c)
    return ("case %d (%s, %d steps)"):format(i, c.transport, #c.ops)
  end,
  skip = function(c, i)
    if read_prepare[i] then
      return "deliberate difference (README): the bytes an iterator held "
        .. "over a timeout go to the next other reader, as in "
        .. "lua-nginx-module 0.10.25 and later; the recording's 0.10.23 "
        .. "leaves them with the iterator"
    end
    return net.short_io and short_io_pending(c)
  end,
})
