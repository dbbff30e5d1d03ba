-- The soak's echo server (run by soak/run.sh; settings from the
-- environment):
--   lua5.4 soak/server.lua <dir>
-- Listens on SOAK_PORTS ports of 127.0.0.1 (chosen by the kernel; written
-- to <dir>/ports, one per line), serves every connection in a detached
-- light thread (cs.timer.at(0, ...)), samples itself every second into
-- <dir>/server.csv and stops when <dir>/stop appears: it closes the
-- listeners, waits (at most SOAK_DRAIN s) for the handlers to end and
-- returns from cs.run; a last line of stats goes to <dir>/server.final.
--
-- Protocol, one request per line:
--   E <text>        -> "<text>\n"                        (echo)
--   S <ms> <text>   -> "<text>\n" after <ms> ms          (slow: the client
--                                                         times out on it)
--   B <n>           -> n bytes (a repeated pattern), no newline
--   U               -> then reads up to "--END--" and echoes what came
--                      before it, plus "\n"              (receiveuntil)
--   Q               -> closes the connection
local cs = require "corosched"
local C = require "soak.common"

local dir = assert(arg[1], "usage: server.lua <dir>")
local NPORTS = C.env_num("SOAK_PORTS", 8)
local IDLE = C.env_num("SOAK_SERVER_IDLE", 30000) -- ms without a request
local DRAIN = C.env_num("SOAK_DRAIN", 30)

local n = { accepted = 0, requests = 0, closed = 0, errors = 0,
            accept_errors = 0, handlers = 0 }
local errs = {}

local BIG = ("0123456789abcdef"):rep(4096) -- 64 KiB

local function handle(premature, sock)
  if premature then
    sock:close()
    return
  end
  n.handlers = n.handlers + 1
  sock:settimeout(IDLE)
  local until_end = sock:receiveuntil("--END--")
  while true do
    local line, err = sock:receive("*l")
    if not line then
      if err ~= "closed" and err ~= "connection reset by peer" then
        errs[err] = (errs[err] or 0) + 1
        n.errors = n.errors + 1
      end
      break
    end
    n.requests = n.requests + 1
    local op, rest = line:match("^(%u) ?(.*)$")
    local ok, serr
    if op == "E" then
      ok, serr = sock:send(rest .. "\n")
    elseif op == "S" then
      local ms, text = rest:match("^(%d+) (.*)$")
      cs.sleep(tonumber(ms) / 1000)
      ok, serr = sock:send(text .. "\n")
    elseif op == "B" then
      local size = tonumber(rest)
      local parts, left = {}, size
      while left > 0 do
        local k = math.min(left, #BIG)
        parts[#parts + 1] = k == #BIG and BIG or BIG:sub(1, k)
        left = left - k
      end
      ok, serr = sock:send(table.concat(parts))
    elseif op == "U" then
      local data, uerr = until_end()
      if not data then
        ok, serr = nil, uerr
      else
        ok, serr = sock:send(data .. "\n")
      end
    elseif op == "Q" then
      break
    else
      ok, serr = nil, "bad request"
    end
    if not ok then
      if serr ~= "closed" and serr ~= "connection reset by peer"
         and serr ~= "broken pipe" then
        errs[serr] = (errs[serr] or 0) + 1
        n.errors = n.errors + 1
      end
      break
    end
  end
  sock:close()
  n.closed = n.closed + 1
  n.handlers = n.handlers - 1
end

local function main()
  local listeners, ports = {}, {}
  for i = 1, NPORTS do
    local srv = assert(cs.socket.listen("127.0.0.1", 0, { backlog = 4096 }))
    local _, port = assert(srv:getsockname())
    listeners[i], ports[i] = srv, port
  end
  local pf = assert(io.open(dir .. "/ports.tmp", "w"))
  pf:write(table.concat(ports, "\n"), "\n")
  pf:close()
  assert(os.rename(dir .. "/ports.tmp", dir .. "/ports"))

  local stop_sampler = C.sampler(dir .. "/server.csv",
    { "accepted", "requests", "closed", "errors", "accept_errors",
      "handlers" },
    function() return n end)

  local stopping = false
  local acceptors = {}
  for i, srv in ipairs(listeners) do
    acceptors[i] = cs.thread.spawn(function()
      while not stopping do
        local sock, err = srv:accept()
        if sock then
          n.accepted = n.accepted + 1
          local t, terr = cs.timer.at(0, handle, sock)
          if not t then
            sock:close()
            errs[terr] = (errs[terr] or 0) + 1
          end
        elseif err == "closed" then
          break
        else
          n.accept_errors = n.accept_errors + 1
          errs["accept: " .. err] = (errs["accept: " .. err] or 0) + 1
          cs.sleep(0.01) -- EMFILE and the like: back off a little
        end
      end
    end)
  end

  -- stop when the stop file appears
  while not C.file_exists(dir .. "/stop") do
    cs.sleep(0.2)
  end
  stopping = true
  for _, srv in ipairs(listeners) do srv:close() end
  for _, a in ipairs(acceptors) do cs.thread.wait(a) end
  local deadline = C.clock() + DRAIN
  while n.handlers > 0 and C.clock() < deadline do
    cs.sleep(0.1)
  end
  cs.thread.wait(stop_sampler())
  local st = cs.stats()
  local f = assert(io.open(dir .. "/server.final", "w"))
  local e = {}
  for k, v in pairs(errs) do e[#e + 1] = ("%s=%d"):format(k, v) end
  table.sort(e)
  f:write(("accepted=%d requests=%d closed=%d errors=%d handlers_left=%d "
           .. "threads=%d timers=%d sockets=%d pending_io=%d\n")
    :format(n.accepted, n.requests, n.closed, n.errors, n.handlers,
            st.threads, st.timers, st.sockets, st.pending_io))
  f:write("errors: ", #e > 0 and table.concat(e, " ") or "none", "\n")
  f:close()
  if n.handlers > 0 then
    C.log("server", "%d handlers still open after %ds of drain",
          n.handlers, DRAIN)
    os.exit(3) -- do not wait for their 30 s idle timeouts
  end
end

cs.run(main)
