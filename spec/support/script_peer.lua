-- Starts and stops spec/support/script_peer.py for the specs that replay
-- recordings made against it (spec/59, spec/71).
--   local peer = script_peer.start()   -- { port, refused, udp,
--                                       --   udp_refused, unix, pid, tls,
--                                       --   tls_self }
--   script_peer.stop()
-- The peer's TLS ports serve spec/support/certs/peer.crt, signed by its
-- ca.crt, which the recordings' nginx trusts (lua_ssl_trusted_certificate)
-- and corosched too while the peer runs (cs.socket.setcafile).
local cs = require "corosched"
local net = require "spec.support.net"

local M = {}

local peer, proc

local function own_dir()
  local src = debug.getinfo(1, "S").source:sub(2)
  return (src:match("^(.*)/[^/]*$") or ".")
end

function M.start()
  local dir = own_dir()
  local cmd = ("exec env -u LD_PRELOAD python3 %s/script_peer.py "
               .. "--parent %s --certs %s/certs </dev/null"):format(
               dir, net.own_pid(), dir)
  proc = assert(io.popen(cmd, "r"))
  local line = proc:read("l") or ""
  local port, refused, udp, udp_refused, unix, pid, tls, tls_self =
    line:match("^tcp (%d+) refused (%d+) udp (%d+) udp_refused (%d+) "
               .. "unix (%S+) pid (%d+) tls (%d+) tls_self (%d+)$")
  assert(port, "script_peer.py did not start: " .. line)
  peer = { port = tonumber(port), refused = tonumber(refused),
           udp = tonumber(udp), udp_refused = tonumber(udp_refused),
           unix = unix, pid = tonumber(pid), tls = tonumber(tls),
           tls_self = tonumber(tls_self) }
  assert(cs.socket.setcafile(dir .. "/certs/ca.crt"))
  return peer
end

function M.stop()
  cs.socket.setcafile(nil)
  if proc then net.stop_process(peer.pid, proc) end
  proc, peer = nil, nil
end

return M
