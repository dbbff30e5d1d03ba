-- Helpers shared by the TCP specs (spec/1x-tcp*_spec.lua,
-- spec/regress/tcp_*). The servers are corosched listeners on 127.0.0.1
-- (or unix sockets) run by light threads of the test itself; call those
-- inside helper.run / net.run. net.python_server and net.which let a spec
-- use a real program as the peer when it is installed.
local helper = require "spec.helper"
local cs = helper.cs

local net = {}

-- make check-shortio: every recv/send moves one byte at most and every
-- other call says EAGAIN; tests scale their payloads down with net.big()
net.short_io = os.getenv("CS_SHORT_IO") == "1"

-- n, or 64 KiB at most in the short-I/O mode (one byte per system call)
function net.big(n)
  return net.short_io and math.min(n, 64 * 1024) or n
end

-- helper.run(fn, opts), except that an error of fn is also written to
-- stderr at once and the garbage it left is collected: helper.run checks
-- for leaked sockets before it re-raises fn's error, so a failing
-- assertion would otherwise only show as "leak: sockets=N"
function net.run(fn, opts, ...)
  return helper.run(function(...)
    local r = table.pack(xpcall(fn, debug.traceback, ...))
    if not r[1] then
      io.stderr:write("\n[test body failed] ", tostring(r[2]), "\n")
      collectgarbage()
      collectgarbage()
      error(r[2], 0)
    end
    return table.unpack(r, 2, r.n)
  end, opts, ...)
end

-- a listener on 127.0.0.1 with a port chosen by the kernel
function net.listen(opts)
  local srv = assert(cs.socket.listen("127.0.0.1", 0, opts))
  local _, port = assert(srv:getsockname())
  return srv, port
end

-- a connected pair: the client socket and the accepted one
function net.pair(copts)
  local srv, port = net.listen()
  local c = cs.socket.tcp()
  if copts then c:settimeout(copts.timeout) end
  assert(c:connect("127.0.0.1", port)) -- done by the kernel's backlog
  local s = assert(srv:accept())
  srv:close()
  return c, s
end

-- A server thread: accepts n connections (default 1), one after the other,
-- calls handler(conn, i) for each and closes conn afterwards (if the
-- handler did not). Returns the port, the listener and the thread; the
-- thread ends, closing the listener, after the n-th connection.
function net.serve(handler, n, opts)
  local srv, port = net.listen(opts)
  local th = cs.thread.spawn(function()
    for i = 1, n or 1 do
      local c = assert(srv:accept())
      handler(c, i)
      c:close()
    end
    srv:close()
  end)
  return port, srv, th
end

-- A listener whose accept queue is full (backlog 1, never accepted): a
-- connect to it stays in SYN_SENT until its timeout, on loopback too (Linux
-- drops the SYN when the queue is full). Returns the port and a function
-- that closes the listener and the connections that fill it.
function net.full_listener()
  local srv, port = net.listen({ backlog = 1 })
  local fillers = {}
  for _ = 1, 16 do
    local c = cs.socket.tcp()
    c:settimeout(100)
    if not c:connect("127.0.0.1", port) then break end
    fillers[#fillers + 1] = c
  end
  return port, function()
    for _, c in ipairs(fillers) do c:close() end
    srv:close()
  end
end

-- a port nobody listens on (bound, then closed at once)
function net.free_port()
  local srv, port = net.listen()
  srv:close()
  return port
end

-- a fresh unix socket path (the file does not exist)
function net.unix_path()
  local p = os.tmpname()
  os.remove(p)
  return p .. ".sock"
end

-- the path of program `name` (found with command -v), or nil
function net.which(name)
  local p = io.popen("command -v " .. name .. " 2>/dev/null")
  local path = p:read("l")
  p:close()
  return path ~= "" and path or nil
end

-- Starts `python3 -c code` (code prints its listening port first);
-- returns the port and the popen handle (read the rest, then close it).
function net.python_server(code)
  -- without the sanitizer runtimes that make check-asan preloads
  local f = io.popen("env -u LD_PRELOAD python3 -c '"
                     .. code:gsub("'", "'\\''") .. "'", "r")
  local port = tonumber(f:read("l"))
  return port, f
end

-- the pid of this process (io.popen's children see it as their parent or
-- grandparent: the peers given it with --parent exit when it is gone)
function net.own_pid()
  local f = assert(io.open("/proc/self/stat", "r"))
  local pid = f:read("a"):match("^(%d+)")
  f:close()
  return assert(tonumber(pid))
end

-- whether process pid runs (it is neither gone nor a zombie)
function net.alive(pid)
  local f = io.open("/proc/" .. pid .. "/stat", "r")
  if not f then return false end
  -- (the read fails when the process ended after the open)
  local st = (f:read("a") or ""):match("^%d+ %b() (%a)")
  f:close()
  return st ~= nil and st ~= "Z" and st ~= "X"
end

-- Stops process pid that io.popen started (its shell exec'ed it; proc is
-- the handle): SIGTERM, SIGKILL if it is still there after 5 s, then
-- reaps it (closing the handle waits for it). Blocks the loop meanwhile.
function net.stop_process(pid, proc)
  os.execute("kill -TERM " .. pid .. " 2>/dev/null")
  for _ = 1, 500 do
    if not net.alive(pid) then break end
    os.execute("env -u LD_PRELOAD sleep 0.01")
  end
  if net.alive(pid) then os.execute("kill -KILL " .. pid .. " 2>/dev/null") end
  proc:close()
end

-- takes every idle connection out of a pool and closes it: connect()
-- returns a client (with get_reused_times and close, as the resty
-- libraries have) connected through that pool; returns how many were idle
function net.drain_pool(connect)
  local n = 0
  while true do
    local c = connect()
    local reused = c:get_reused_times()
    assert(c:close() == 1, "close")
    if reused == 0 then return n end
    n = n + 1
  end
end

-- s quoted for sh
function net.sh_quote(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end

-- Server programs a spec runs (redis-server, memcached, dnsmasq): child
-- processes of this one, their files in a temporary directory.
--   srv = net.server_dir()        { dir = a new temporary directory }
--   net.spawn(srv, name, cmd)     runs the shell text cmd, without the
--                                 sanitizer runtimes check-asan preloads
--                                 (the shell execs it, so io.popen's
--                                 close reaps it); its output goes to
--                                 srv.log (dir/name.log); sets srv.pid
--   net.server_log(srv)           the log's text
--   net.stop(srv)                 SIGTERM, SIGKILL after 5 s; reaped
--   net.remove(srv)               removes the directory
function net.server_dir(srv)
  srv = srv or {}
  local p = assert(io.popen("env -u LD_PRELOAD mktemp -d"))
  srv.dir = assert(p:read("l"))
  p:close()
  return srv
end

function net.spawn(srv, name, cmd)
  srv.log = srv.dir .. "/" .. name .. ".log"
  local sh = ("echo $$; exec env -u LD_PRELOAD %s >%s 2>&1")
    :format(cmd, net.sh_quote(srv.log))
  srv.proc = assert(io.popen(sh, "r"))
  srv.pid = assert(tonumber(srv.proc:read("l")))
  return srv
end

function net.server_log(srv)
  local f = srv.log and io.open(srv.log, "r")
  if not f then return "(no log)" end
  local s = f:read("a")
  f:close()
  return s
end

function net.stop(srv)
  if srv and srv.proc then
    net.stop_process(srv.pid, srv.proc)
    srv.proc = nil
  end
end

function net.remove(srv)
  if srv and srv.dir then
    os.execute("env -u LD_PRELOAD rm -rf " .. net.sh_quote(srv.dir))
    srv.dir = nil
  end
end

-- whether a file (of any kind: a unix socket too) exists at path
function net.exists(path)
  local ok, lfs = pcall(require, "lfs")
  if ok then return lfs.attributes(path, "mode") ~= nil end
  return os.execute("test -e '" .. path .. "'") == true
end

-- the soft limit on open files (RLIMIT_NOFILE) of this process
function net.nofile_limit()
  local f = io.open("/proc/self/limits", "r")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return tonumber(s:match("Max open files%s+(%d+)"))
end

-- seconds elapsed while fn(...) runs, and fn's first results
function net.timed(fn, ...)
  local t0 = helper.clock()
  local r = table.pack(fn(...))
  return helper.clock() - t0, table.unpack(r, 1, r.n)
end

-- waits (polling) until pred() is true or sec seconds passed
function net.wait_until(pred, sec)
  local deadline = helper.clock() + (sec or 2) * helper.slack
  while not pred() do
    if helper.clock() > deadline then return false end
    cs.sleep(0.002)
  end
  return true
end

-- what cs.dump() says thread th is parked on ("socket read", "dns", ...)
function net.parked_on(th)
  local dump = cs.dump()
  local addr = tostring(th):match("0x%x+") or tostring(th):match(": (.*)$")
  for line in dump:gmatch("[^\n]+") do
    if addr and line:find(addr, 1, true) then
      return line:match(" on (.-) %(in coroutine") or line:match(" on (.-)$")
    end
  end
  return nil
end

-- n bytes of data whose every 1000-byte block is numbered, so lost,
-- duplicated or reordered blocks show (deterministic)
function net.payload(n)
  local t, x = {}, 7
  for i = 1, 992 do
    x = (x * 1103515245 + 12345) % 2147483648
    t[i] = string.char(33 + x % 90)
  end
  local base, blocks = table.concat(t), {}
  for i = 1, n // 1000 + 1 do
    blocks[i] = base .. ("%08d"):format(i)
  end
  return table.concat(blocks):sub(1, n)
end

return net
