-- A line echo server and 1,000 concurrent clients in one process.
--   lua5.4 examples/echo_server.lua [connections] [lines-per-connection]
local cs = require "corosched"

local nconn = tonumber(arg[1]) or 1000
local nlines = tonumber(arg[2]) or 10

local function serve(client)
  client:settimeout(5000)
  while true do
    local line, err = client:receive("*l")
    if not line then
      if err ~= "closed" then io.stderr:write("server: ", err, "\n") end
      break
    end
    local ok, serr = client:send({ line, "\n" })
    if not ok then io.stderr:write("server: ", serr, "\n") break end
  end
  client:close()
end

cs.run(function()
  local server = assert(cs.socket.listen("127.0.0.1", 0, { backlog = 1024 }))
  local _, port = server:getsockname()
  local acceptor = cs.thread.spawn(function()
    while true do
      local client, err = server:accept()
      if not client then return err end
      cs.thread.spawn(serve, client)
    end
  end)

  local t0 = cs.now()
  local clients = {}
  for i = 1, nconn do
    clients[i] = cs.thread.spawn(function()
      local sock = cs.socket.tcp()
      sock:settimeout(5000)
      assert(sock:connect("127.0.0.1", port))
      for j = 1, nlines do
        local msg = ("client %d line %d"):format(i, j)
        assert(sock:send(msg .. "\n"))
        local echo = assert(sock:receive())
        assert(echo == msg, echo)
      end
      sock:close()
      return nlines
    end)
  end
  local total = 0
  for i = 1, nconn do
    local ok, n = cs.thread.wait(clients[i])
    assert(ok, n)
    total = total + n
  end
  cs.update_time()
  local dt = cs.now() - t0
  print(("%d connections, %d round trips in %.2f s (%.0f round trips/s)")
    :format(nconn, total, dt, total / math.max(dt, 0.001)))
  server:close()
  print("acceptor:", cs.thread.wait(acceptor))
end)
