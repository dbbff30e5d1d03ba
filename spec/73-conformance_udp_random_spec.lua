-- Conformance with real OpenResty's UDP cosockets, randomized:
-- spec/support/udp_random_cases.lua generates (seeded, deterministic) a
-- few hundred UDP sockets, each a random list of setpeername (to
-- spec/support/script_peer.py's UDP port in every form, to a port nothing
-- is bound to, to bad hosts and ports), settimeout with good and bad
-- values, sends of every type and size (datagrams up to 70,000 bytes,
-- requests of large answers, requests of none), receive() and
-- receive(size) with sizes of every kind, timeouts, close, steps after
-- close, and calls with the wrong argument counts and types.
-- spec/support/record_udp_random.sh ran them in OpenResty and recorded one
-- line per step in spec/support/udp_random_recorded.txt. Here the same
-- cases run on corosched (through corosched.ngx's `ngx` global, 12 at a
-- time as there) and each must return what OpenResty returned, line for
-- line, but for the difference below.
local ngx_env = require "spec.support.ngx_env"
local m = require "spec.support.udp_random_cases"

-- A deliberate difference (README): wrong argument types raise even on a
-- closed socket, where OpenResty answers nil, "closed" first. So where
-- OpenResty's line for a step is `nil "closed"` and the same step raised
-- "bad argument ..." on an open socket (in any case: the same arguments
-- raise the same error), corosched is expected to raise that.
local function expected(text, raised)
  return (text:gsub("([^\n]*)", function(l)
    local n, label = l:match('^(%d+ )(.-): nil "closed"$')
    if label and raised[label] then
      return n .. label .. ": " .. raised[label]
    end
  end))
end

-- each step's label (its number left out) that raised "bad argument"
local function raised_errors(recorded)
  local raised = {}
  for _, text in pairs(recorded) do
    for label, err in
        text:gmatch('%d+ ([^\n]-): (error "bad argument[^\n]*)') do
      raised[label] = err
    end
  end
  return raised
end

local raised -- (made once)

ngx_env.replay_cases({
  title = "random UDP cosocket cases recorded from OpenResty",
  file = "udp_random_recorded.txt",
  cases = m,
  recorder = "record_udp_random.sh",
  name = function(i, c) return ("case %d (%d steps)"):format(i, #c.ops) end,
  expected = function(recorded, i)
    raised = raised or raised_errors(recorded)
    return expected(recorded[i], raised)
  end,
})
