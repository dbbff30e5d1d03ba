-- A small RESP (Redis protocol) client on corosched cosockets, with a
-- connection pool, and a demo against a local redis-server if one runs.
--   lua5.4 examples/redis_client.lua [host] [port]
local cs = require "corosched"

local Redis = {}
Redis.__index = Redis

function Redis.connect(host, port, timeout_ms)
  local sock = cs.socket.tcp()
  sock:settimeout(timeout_ms or 1000)
  local ok, err = sock:connect(host, port)
  if not ok then return nil, err end
  return setmetatable({ sock = sock }, Redis)
end

local function read_reply(sock)
  local line, err = sock:receive("*l")
  if not line then return nil, err end
  local kind, rest = line:sub(1, 1), line:sub(2)
  if kind == "+" then return rest
  elseif kind == "-" then return false, rest
  elseif kind == ":" then return tonumber(rest)
  elseif kind == "$" then
    local n = tonumber(rest)
    if n < 0 then return nil end
    local data, derr = sock:receive(n + 2)
    if not data then return nil, derr end
    return data:sub(1, n)
  elseif kind == "*" then
    local n, out = tonumber(rest), {}
    for i = 1, n do
      local v, verr = read_reply(sock)
      if v == nil and verr then return nil, verr end
      out[i] = v
    end
    return out
  end
  return nil, "bad reply: " .. line
end

function Redis:call(...)
  local args = { ... }
  local req = { "*", #args, "\r\n" }
  for _, a in ipairs(args) do
    a = tostring(a)
    req[#req + 1] = { "$", #a, "\r\n", a, "\r\n" }
  end
  local ok, err = self.sock:send(req)
  if not ok then return nil, err end
  return read_reply(self.sock)
end

function Redis:keepalive() return self.sock:setkeepalive(10000, 16) end

local host, port = arg[1] or "127.0.0.1", tonumber(arg[2]) or 6379
cs.run(function()
  local r, err = Redis.connect(host, port)
  if not r then
    print(("no redis-server at %s:%d (%s): nothing to demo"):format(host, port, err))
    return
  end
  print("PING ->", r:call("PING"))
  r:keepalive()
  -- 100 light threads share the pool
  local threads = {}
  for i = 1, 100 do
    threads[i] = cs.thread.spawn(function()
      local c = assert(Redis.connect(host, port))
      assert(c:call("SET", "corosched:" .. i, i))
      local v = c:call("GET", "corosched:" .. i)
      c:call("DEL", "corosched:" .. i)
      c:keepalive()
      return tonumber(v) == i
    end)
  end
  local good = 0
  for _, t in ipairs(threads) do
    local ok, same = cs.thread.wait(t)
    if ok and same then good = good + 1 end
  end
  print(("100 threads: %d round trips correct"):format(good))
end)
