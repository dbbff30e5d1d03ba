-- corosched.http against a server whose every answer is drawn at random:
-- status, headers (a repeated one among them), a body of 0 to 200,000
-- bytes framed by Content-Length, chunked (random sizes, hex in either
-- case, extensions, trailers) or read until close, written in random
-- pieces with random pauses, and now and then the connection closed
-- silently after a kept-alive answer. Clients in light threads send GET
-- and POST requests (string bodies, and source functions sent chunked)
-- through the pool, buffered or streamed with random piece sizes, and
-- compare everything with what the server was told to send; the server
-- checks each request body it gets the same way (its length and sum come
-- back in headers). A GET on a pooled connection the server had closed
-- must be sent again and succeed; a POST may fail then, with "closed" (or
-- a reset), never otherwise. At the end nothing is left open. A fixed
-- seed (CS_HTTP_SEED picks another).
local helper = require "spec.helper"
local net = require "spec.support.net"
local http = require "corosched.http"
local cs = helper.cs
local spawn, wait = cs.thread.spawn, cs.thread.wait

local SEED = tonumber(os.getenv("CS_HTTP_SEED")) or 47

local prng = helper.prng

local function bytes_of(rand, n)
  local block = {}
  for i = 1, 64 do block[i] = string.char(rand(0, 255)) end
  local base = table.concat(block)
  local k = rand(1, 64)
  return base:rep(n // 64 + 2):sub(k, k + n - 1)
end

local function sum(s)
  local total = 0
  for i = 1, #s, 4096 do
    local t = { s:byte(i, math.min(#s, i + 4095)) }
    for j = 1, #t do total = (total + t[j] * (i + j)) % 4294967291 end
  end
  return total
end

-- what the server answers to /r/<seed>
local function answer(seed)
  local rand = prng(seed)
  -- (the short-I/O mode moves a byte per system call: smaller bodies)
  local big = net.short_io and 3000 or 200000
  local sizes = { 0, rand(1, 100), rand(1, 5000), rand(1, big // 3),
                  rand(big // 2, big) }
  local a = {
    status = ({ 200, 200, 201, 404, 500 })[rand(5)],
    body = "",
    framing = ({ "cl", "cl", "chunked", "chunked", "close" })[rand(5)],
    trailer = rand(3) == 1,
    silent_close = rand(6) == 1,
  }
  a.body = bytes_of(rand, sizes[rand(#sizes)])
  return a, rand
end

-- the raw response for answer a (a request body of len bytes, sum s)
local function response(a, rand, len, s)
  local head = {
    ("HTTP/1.1 %d Whatever\r\n"):format(a.status),
    ("X-A: v%d\r\n"):format(a.status),
    "X-Rep: 1\r\n", "x-rep: 2\r\n",
    ("X-Req-Len: %d\r\nX-Req-Sum: %d\r\n"):format(len, s),
  }
  local body
  if a.framing == "cl" then
    head[#head + 1] = ("Content-Length: %d\r\n"):format(#a.body)
    body = a.body
  elseif a.framing == "chunked" then
    head[#head + 1] = "Transfer-Encoding: chunked\r\n"
    local parts, pos = {}, 1
    while pos <= #a.body do
      local n = math.min(rand(1, 5000), #a.body - pos + 1)
      local hex = ("%x"):format(n)
      if rand(2) == 1 then hex = hex:upper() end
      parts[#parts + 1] = hex .. (rand(5) == 1 and ";ext=1" or "") .. "\r\n"
        .. a.body:sub(pos, pos + n - 1) .. "\r\n"
      pos = pos + n
    end
    parts[#parts + 1] = "0\r\n"
    if a.trailer then parts[#parts + 1] = "X-Trailer: t\r\n" end
    parts[#parts + 1] = "\r\n"
    body = table.concat(parts)
  else
    head[#head + 1] = "Connection: close\r\n"
    body = a.body
  end
  head[#head + 1] = "\r\n"
  return table.concat(head) .. body
end

-- reads one request from c: its target and body, or nil at the end
local function read_request(c)
  local first = c:receive("*l")
  if not first then return nil end
  local target = assert(first:match("^%u+ (%S+) HTTP/1%.1$"), first)
  local len, chunked = 0, false
  while true do
    local l = assert(c:receive("*l"))
    if l == "" then break end
    local name, value = l:match("^([^:]+):%s*(.*)$")
    name = name:lower()
    if name == "content-length" then len = tonumber(value) end
    if name == "transfer-encoding" then chunked = value == "chunked" end
  end
  local body = ""
  if chunked then
    local parts = {}
    while true do
      local n = tonumber(assert(c:receive("*l")):match("^%x+"), 16)
      if n == 0 then
        assert.equal("", c:receive("*l"))
        break
      end
      parts[#parts + 1] = assert(c:receive(n))
      assert.equal("", c:receive("*l"))
    end
    body = table.concat(parts)
  elseif len > 0 then
    body = assert(c:receive(len))
  end
  return target, body
end

local function serve(c)
  c:settimeout(10000 * helper.slack)
  while true do
    local target, body = read_request(c)
    if not target then break end
    local a, rand = answer(tonumber(target:match("^/r/(%d+)$")))
    local raw = response(a, rand, #body, sum(body))
    local pos = 1
    while pos <= #raw do
      local n = rand(1, ({ 1, 100, 5000, 100000 })[rand(4)])
      if not c:send(raw:sub(pos, pos + n - 1)) then return c:close() end
      pos = pos + n
      if rand(4) == 1 then cs.sleep(rand(0, 2) / 1000) end
    end
    if a.framing == "close" or a.silent_close then break end
  end
  c:close()
end

-- one client: n requests on the pool of base; returns counts
local function client(base, seed, n)
  local rand = prng(seed)
  local counts = { ok = 0, post_failed = 0, streamed = 0 }
  for _ = 1, n do
    local aseed = rand(1, 1 << 30)
    local a = answer(aseed)
    local post = rand(3) == 1
    local reqbody, source = nil, nil
    if post then
      reqbody = bytes_of(rand, ({ 0, 10, 3000,
                                  net.short_io and 2000 or 80000 })[rand(4)])
      if rand(2) == 1 then -- a source function: sent chunked
        local pos = 1
        source = function()
          if pos > #reqbody then return nil end
          local k = rand(1, 20000)
          local piece = reqbody:sub(pos, pos + k - 1)
          pos = pos + k
          return piece
        end
      end
    end
    local stream = rand(3) == 1
    local res, err = http.request{
      url = base .. "/r/" .. aseed,
      method = post and "POST" or "GET",
      body = source or reqbody,
      stream = stream,
      timeout = 10000 * helper.slack,
    }
    if not res then
      -- a POST on a pooled connection the server had closed
      assert(post and (err == "closed" or err == "connection reset by peer"
                       or err == "broken pipe"),
             ("%s %d: %s"):format(post and "POST" or "GET", aseed,
                                  tostring(err)))
      counts.post_failed = counts.post_failed + 1
    else
      assert.equal(a.status, res.status)
      assert.equal("v" .. a.status, res.headers["X-A"])
      assert.same({ "1", "2" }, res.headers["x-rep"])
      assert.equal(tostring(reqbody and #reqbody or 0),
                   res.headers["x-req-len"])
      assert.equal(tostring(reqbody and sum(reqbody) or 0),
                   res.headers["x-req-sum"])
      local body = res.body
      if stream then
        local parts = {}
        while true do
          local max = rand(1, ({ 1, 100, 70000 })[rand(3)])
          local piece, rerr = res.body_reader(max)
          assert(rerr == nil, rerr)
          if not piece then break end
          assert(#piece >= 1 and #piece <= max, #piece .. " > " .. max)
          parts[#parts + 1] = piece
        end
        assert.is_true(res.complete)
        body = table.concat(parts)
        counts.streamed = counts.streamed + 1
      elseif a.framing == "chunked" and a.trailer then
        assert.equal("t", res.trailers and res.trailers["x-trailer"])
      end
      if body ~= a.body then
        error(("answer %d (%s, %d bytes): got %d bytes"):format(aseed,
          a.framing, #a.body, #body), 0)
      end
      counts.ok = counts.ok + 1
    end
    if rand(5) == 1 then cs.sleep(rand(0, 3) / 1000) end
  end
  return counts
end

describe("http model", function()
  after_each(helper.after_each)

  it("random answers and requests: every status, header, trailer and "
     .. "body as sent", function()
    helper.run(function() cs.sleep(0) end) -- (the loop's own descriptors)
    local fds = helper.fds()
    local clients = 6
    local requests = math.floor(25 * helper.scale) + 4
    local total = { ok = 0, post_failed = 0, streamed = 0 }

    net.run(function()
      local srv, port = net.listen()
      local acceptor = spawn(function()
        local conns = {}
        while true do
          local c = srv:accept()
          if not c then break end
          conns[#conns + 1] = spawn(serve, c)
        end
        for _, t in ipairs(conns) do assert(wait(t)) end
      end)
      local base = "http://127.0.0.1:" .. port
      local ts = {}
      for i = 1, clients do
        ts[i] = spawn(client, base, SEED * 100 + i, requests)
      end
      local failure
      for i = 1, clients do
        local ok, counts = wait(ts[i])
        if not ok then
          failure = failure or counts
        else
          for k, v in pairs(counts) do total[k] = total[k] + v end
        end
      end
      -- the pool's idle connections, then the server
      net.drain_pool(function()
        local s = cs.socket.tcp()
        assert(s:connect("127.0.0.1", port))
        return { get_reused_times = function() return s:getreusedtimes() end,
                 close = function() return s:close() end }
      end)
      srv:close()
      assert(wait(acceptor))
      assert(not failure, failure)
    end, { timeout = 60 })

    assert.is_true(total.ok > clients * requests / 2 and total.streamed > 0)
    assert.equal(fds, helper.fds())
  end)
end)
