-- corosched.http, the HTTP/1.1 client (API.md "HTTP client:
-- corosched.http"; the contract is at the top of lua/corosched/http.lua):
-- URL parsing, the request head, content-length / chunked / read-until-
-- close bodies, keep-alive through the cosocket pool, the streaming body
-- reader, bad servers (malformed, oversized, closing early, silent),
-- 100 concurrent requests, argument errors, and no fd, socket or thread
-- left behind. The servers are corosched listeners on 127.0.0.1 run by
-- light threads of the test; https goes to a real TLS server
-- (spec/support/tls_peer.py).
local helper = require "spec.helper"
local net = require "spec.support.net"
local http = require "corosched.http"
local cs = helper.cs
local spawn, wait, kill = cs.thread.spawn, cs.thread.wait, cs.thread.kill

-- upper bounds are generous (2-core noisy machines, sanitizers)
local function slow(sec) return sec * 5 * helper.slack end

---------------------------------------------------------------------------
-- a small HTTP/1.1 server for the tests
---------------------------------------------------------------------------

-- Reads one request from c: { method, target, version, headers (names
-- lower-case, repeated ones joined with ", "), list ({name, value} in
-- order), body, chunks (how many, for a chunked body) }, or nil, err
-- when the client closed (also in the middle of a request).
local function read_request(c)
  local function line()
    local l, err = c:receive("*l")
    if not l then error({ closed = err }) end
    return l
  end
  local function bytes(n)
    local d, err = c:receive(n)
    if not d then error({ closed = err }) end
    return d
  end
  local ok, req = pcall(function()
    local first = line()
    local method, target, version =
      first:match("^(%S+) (%S+) HTTP/(%d%.%d)$")
    assert(method, "bad request line: " .. first)
    local r = { method = method, target = target, version = version,
                headers = {}, list = {} }
    while true do
      local l = line()
      if l == "" then break end
      local name, value = l:match("^([^:]+): (.*)$")
      assert(name, "bad header line: " .. l)
      r.list[#r.list + 1] = { name, value }
      local k = name:lower()
      r.headers[k] = r.headers[k] and r.headers[k] .. ", " .. value
                     or value
    end
    if r.headers["transfer-encoding"] == "chunked" then
      local parts = {}
      r.chunks = 0
      while true do
        local size = tonumber(line(), 16)
        if size == 0 then
          assert.equal("", line())
          break
        end
        parts[#parts + 1] = bytes(size)
        assert.equal("", line())
        r.chunks = r.chunks + 1
      end
      r.body = table.concat(parts)
    elseif r.headers["content-length"] then
      r.body = bytes(tonumber(r.headers["content-length"]))
    end
    return r
  end)
  if ok then return req end
  if type(req) == "table" and req.closed then return nil, req.closed end
  error(req, 0)
end

-- A server on 127.0.0.1: every connection gets its own light thread that
-- reads request after request and calls handler(req, c, srv), which
-- answers with c:send; the connection is closed when the client closes
-- it or the handler returns false. srv.conns counts the connections,
-- srv.requests lists every request (req.conn: its connection's number,
-- req.n: its rank on it). srv.url(path); srv.stop() closes the listener
-- and every connection, then waits until the client's pooled
-- connections have seen the FIN and are gone (no socket left at all).
local function server(handler)
  local lsn, port = net.listen()
  local S = { port = port, conns = 0, requests = {}, open = {} }
  S.thread = spawn(function()
    while true do
      local c = lsn:accept()
      if not c then return end
      S.conns = S.conns + 1
      local id, n = S.conns, 0
      S.open[c] = true
      spawn(function()
        while true do
          local req = read_request(c)
          if not req then break end
          n = n + 1
          req.conn, req.n = id, n
          S.requests[#S.requests + 1] = req
          if handler(req, c, S) == false then break end
        end
        S.open[c] = nil
        c:close()
      end)
    end
  end)
  function S.url(path)
    return "http://127.0.0.1:" .. port .. (path or "/")
  end
  function S.stop()
    lsn:close()
    wait(S.thread)
    for c in pairs(S.open) do c:close() end
    assert.is_true(net.wait_until(function()
      return cs.stats().sockets == 0
    end), "sockets left: " .. cs.stats().sockets)
  end
  return S
end

-- a response with a Content-Length
local function reply(body, headers, status)
  return ("HTTP/1.1 %s\r\n%sContent-Length: %d\r\n\r\n%s"):format(
    status or "200 OK",
    headers and table.concat(headers, "\r\n") .. "\r\n" or "",
    #body, body)
end

-- a server that answers every request with the same raw bytes
local function raw_server(bytes, keep)
  return server(function(_, c)
    c:send(bytes)
    if keep then return true end
    return false
  end)
end

-- a server that answers with `bytes`, then waits until the client
-- closes (the body, if any, never ends)
local function stalling_server(bytes)
  return server(function(_, c)
    if bytes then c:send(bytes) end
    c:receive("*a")
    return false
  end)
end

-- the body as chunks of sizes `sizes` (cycled), with optional trailers
local function chunked(body, sizes, trailers)
  local t, i, k = {}, 1, 1
  while i <= #body do
    local n = sizes[(k - 1) % #sizes + 1]
    local piece = body:sub(i, i + n - 1)
    t[#t + 1] = ("%x\r\n%s\r\n"):format(#piece, piece)
    i, k = i + n, k + 1
  end
  t[#t + 1] = "0\r\n" .. (trailers or "") .. "\r\n"
  return table.concat(t)
end

---------------------------------------------------------------------------

describe("http.parse_url", function()
  it("splits scheme, userinfo, host, port, path, query and fragment",
     function()
    local cases = {
      { "http://example.com", { scheme = "http", host = "example.com",
        port = 80, path = "/", authority = "example.com" } },
      { "HTTP://Example.com:8080/a/b?x=1&y=2#top", { scheme = "http",
        host = "Example.com", port = 8080, path = "/a/b",
        query = "x=1&y=2", fragment = "top",
        authority = "Example.com:8080" } },
      { "http://u%40s:p%3Ass@h:81/", { scheme = "http", user = "u@s",
        password = "p:ss", host = "h", port = 81, path = "/",
        authority = "h:81" } },
      { "http://user@h/", { scheme = "http", user = "user", password = "",
        host = "h", port = 80, path = "/", authority = "h" } },
      { "http://[::1]:8080/x", { scheme = "http", host = "::1",
        port = 8080, path = "/x", authority = "[::1]:8080" } },
      { "http://[::1]", { scheme = "http", host = "::1", port = 80,
        path = "/", authority = "[::1]" } },
      { "https://h/p", { scheme = "https", host = "h", port = 443,
        path = "/p", authority = "h" } },
      { "https://h:80/p", { scheme = "https", host = "h", port = 80,
        path = "/p", authority = "h:80" } },
      { "http://h?q", { scheme = "http", host = "h", port = 80, path = "/",
        query = "q", authority = "h" } },
      { "http://h/p?", { scheme = "http", host = "h", port = 80,
        path = "/p", query = "", authority = "h" } },
      { "http://h:/", { scheme = "http", host = "h", port = 80, path = "/",
        authority = "h" } },
      { "http://10.0.0.1:65535/%7e", { scheme = "http", host = "10.0.0.1",
        port = 65535, path = "/%7e", authority = "10.0.0.1:65535" } },
    }
    for _, case in ipairs(cases) do
      assert.same(case[2], http.parse_url(case[1]), case[1])
    end
  end)

  it("refuses what is not a URL: nil, err", function()
    local bad = {
      [""] = "no scheme", ["example.com/x"] = "no scheme",
      ["/path"] = "no scheme", ["http:/x"] = "no scheme",
      ["http:///x"] = "no host", ["http://:80/"] = "no host",
      ["http://h:0/"] = "bad port", ["http://h:65536/"] = "bad port",
      ["http://h:8a/"] = "bad port", ["http://h:1:2/"] = "bad port",
      ["http://[::1/"] = "bad IPv6", ["http://[zz]/"] = "bad IPv6",
      ["http://[1.2.3.4]/"] = "bad IPv6", ["http://h/a b"] = "space",
      ["http://h/a\r\nX: y"] = "control", ["http://h<>/"] = "bad host",
    }
    for url, what in pairs(bad) do
      local u, err = http.parse_url(url)
      assert.is_nil(u, url)
      assert.matches("^bad url %(", err)
      assert.truthy(err:find(what, 1, true), url .. ": " .. err)
    end
    assert.same({ nil, "bad url (string expected, got nil)" },
                { http.parse_url(nil) })
  end)
end)

describe("http request head", function()
  local function head(opts)
    local h = http._head(opts)
    local lines = {}
    for l in h:gmatch("(.-)\r\n") do lines[#lines + 1] = l end
    assert.equal("", table.remove(lines)) -- the empty line ends it
    return lines, h
  end

  it("sends Host first, with the port unless it is the default",
     function()
    assert.same({ "GET / HTTP/1.1", "Host: example.com",
                  "User-Agent: " .. http.USER_AGENT },
                head{ url = "http://example.com:80" })
    assert.same({ "GET /a?b=1 HTTP/1.1", "Host: example.com:8080",
                  "User-Agent: " .. http.USER_AGENT },
                head{ url = "http://example.com:8080/a?b=1#frag" })
    assert.equal("Host: [::1]:8080", head{ url = "http://[::1]:8080/" }[2])
    assert.equal("Host: [::1]", head{ url = "http://[::1]/" }[2])
    -- the caller's Host (any case) replaces ours, still first
    assert.same({ "GET / HTTP/1.1", "host: other", "A: 1",
                  "User-Agent: " .. http.USER_AGENT },
                head{ url = "http://h/", headers = { A = 1, host = "other" } })
    assert.matches("^corosched%-http/", http.USER_AGENT)
  end)

  it("turns userinfo into Basic authorization, unless headers set one",
     function()
    local l = head{ url = "http://al%20ice:s%3Ac@h/" }
    assert.equal("Authorization: Basic YWwgaWNlOnM6Yw==", l[4]) -- al ice:s:c
    l = head{ url = "http://bob@h/" }
    assert.equal("Authorization: Basic Ym9iOg==", l[4])
    l = head{ url = "http://bob@h/", headers = { authorization = "X" } }
    assert.same({ "GET / HTTP/1.1", "Host: h", "authorization: X",
                  "User-Agent: " .. http.USER_AGENT }, l)
  end)

  it("sends repeated values, drops defaults set to false, keeps the "
     .. "caller's User-Agent", function()
    assert.same({ "GET / HTTP/1.1", "Host: h", "Accept: a", "Accept: b",
                  "X-N: 42" },
                head{ url = "http://h/", headers = {
                  Accept = { "a", "b" }, ["User-Agent"] = false,
                  ["X-N"] = 42 } })
    assert.same({ "GET / HTTP/1.1", "Host: h", "user-agent: me/1" },
                head{ url = "http://h/",
                      headers = { ["user-agent"] = "me/1" } })
  end)

  it("frames the body: Content-Length for a string, chunked for a "
     .. "function, Content-Length: 0 for POST/PUT/PATCH without one",
     function()
    local l, raw = head{ url = "http://h/", method = "POST", body = "abc" }
    assert.equal("Content-Length: 3", l[4])
    assert.is_nil(raw:find("abc", 1, true)) -- the body is not in the head
    l = head{ url = "http://h/", method = "PUT", body = function() end }
    assert.equal("Transfer-Encoding: chunked", l[4])
    for _, m in ipairs{ "POST", "PUT", "PATCH" } do
      assert.equal("Content-Length: 0", head{ url = "http://h/",
                                              method = m }[4])
    end
    for _, m in ipairs{ "GET", "HEAD", "DELETE", "OPTIONS" } do
      assert.equal(3, #head{ url = "http://h/", method = m })
    end
    -- the caller's framing is left as it is
    l = head{ url = "http://h/", method = "POST", body = function() end,
              headers = { ["Content-Length"] = 10 } }
    assert.same({ "POST / HTTP/1.1", "Host: h", "Content-Length: 10",
                  "User-Agent: " .. http.USER_AGENT }, l)
  end)

  it("appends opts.query (string or table, url-encoded, sorted)",
     function()
    assert.equal("GET /p?a=1&b=x%20y&b=2&c=%26%3D HTTP/1.1",
                 head{ url = "http://h/p", query = {
                   c = "&=", b = { "x y", 2 }, a = 1 } }[1])
    assert.equal("GET /p?z=0&a=1 HTTP/1.1",
                 head{ url = "http://h/p?z=0", query = { a = 1 } }[1])
    assert.equal("GET /p?a=1 HTTP/1.1",
                 head{ url = "http://h/p?", query = "a=1" }[1])
    assert.equal("GET /p HTTP/1.1", head{ url = "http://h/p", query = {} }[1])
  end)

  it("keepalive = false sends Connection: close", function()
    local l = head{ url = "http://h/", keepalive = false }
    assert.equal("Connection: close", l[#l])
    l = head{ url = "http://h/", keepalive = false,
              headers = { Connection = "close" } }
    assert.equal("Connection: close", l[3])
    assert.equal(4, #l)
  end)
end)

describe("http.request", function()
  after_each(helper.after_each)

  it("GET: status, reason, version, headers, body; what the server saw",
     function()
    net.run(function()
      local srv = server(function(_, c)
        c:send(reply("hello", { "Content-Type: text/plain",
                                "X-Multi: a", "x-multi: b" }))
      end)
      local res, err = http.request{ url = srv.url("/path?q=1") }
      assert.is_nil(err)
      assert.equal(200, res.status)
      assert.equal("OK", res.reason)
      assert.equal(1.1, res.version)
      assert.equal("hello", res.body)
      assert.is_true(res.complete)
      assert.equal(0, res.reused)
      assert.equal("text/plain", res.headers["Content-Type"])
      assert.equal("text/plain", res.headers["content-type"])
      assert.equal("text/plain", res.headers["CONTENT-TYPE"])
      assert.same({ "a", "b" }, res.headers["X-MULTI"])
      assert.equal("5", res.headers["content-length"])
      local req = srv.requests[1]
      assert.equal("GET", req.method)
      assert.equal("/path?q=1", req.target)
      assert.equal("1.1", req.version)
      assert.equal("127.0.0.1:" .. srv.port, req.headers.host)
      assert.equal(http.USER_AGENT, req.headers["user-agent"])
      assert.is_nil(req.headers["content-length"])
      assert.is_nil(req.body)
      -- request(url) is a GET too
      res = assert(http.request(srv.url("/again")))
      assert.equal("hello", res.body)
      srv.stop()
    end)
  end)

  it("sends userinfo as Basic authorization and opts.query; HTTP/1.0 "
     .. "bodies until close", function()
    net.run(function()
      local srv = server(function(req, c)
        c:send("HTTP/1.0 200 OK\r\n\r\n" .. req.target .. " "
               .. (req.headers.authorization or "-"))
        return false
      end)
      local url = "http://al%3Ai:pw@127.0.0.1:" .. srv.port .. "/p?a=1#f"
      local res = assert(http.request{ url = url, query = { b = "x y" } })
      assert.equal(1.0, res.version)
      assert.equal("/p?a=1&b=x%20y Basic YWw6aTpwdw==", res.body) -- al:i:pw
      assert.equal("127.0.0.1:" .. srv.port, srv.requests[1].headers.host)
      srv.stop()
    end)
  end)

  it("POST: a string body goes with Content-Length", function()
    net.run(function()
      local srv = server(function(req, c)
        c:send(reply("got " .. #req.body, nil, "201 Created"))
      end)
      local body = ("x"):rep(100000)
      local res = assert(http.request{ url = srv.url("/up"), method = "POST",
                                       body = body,
                                       headers = { ["X-Token"] = "t" } })
      assert.equal(201, res.status)
      assert.equal("Created", res.reason)
      assert.equal("got 100000", res.body)
      local req = srv.requests[1]
      assert.equal("POST", req.method)
      assert.equal("100000", req.headers["content-length"])
      assert.equal(body, req.body)
      assert.equal("t", req.headers["x-token"])
      -- without a body: Content-Length: 0
      res = assert(http.request{ url = srv.url(), method = "POST" })
      assert.equal("got 0", res.body)
      assert.equal("0", srv.requests[2].headers["content-length"])
      srv.stop()
    end)
  end)

  it("POST: a function body goes chunked, or as it is with the caller's "
     .. "Content-Length", function()
    net.run(function()
      local srv = server(function(req, c)
        c:send(reply(req.body))
      end)
      local pieces = { "one,", "", "two,", 3, "four" }
      local i = 0
      local function source()
        i = i + 1
        if i == 3 then cs.sleep(0.01) end -- a source may park
        return pieces[i]
      end
      local res = assert(http.request{ url = srv.url(), method = "POST",
                                       body = source })
      assert.equal("one,two,3four", res.body)
      local req = srv.requests[1]
      assert.equal("chunked", req.headers["transfer-encoding"])
      assert.equal(4, req.chunks) -- the empty piece is not sent
      i = 0
      res = assert(http.request{ url = srv.url(), method = "PUT",
                                 body = source,
                                 headers = { ["Content-Length"] = 13 } })
      assert.equal("one,two,3four", res.body)
      assert.is_nil(srv.requests[2].headers["transfer-encoding"])
      assert.equal(1, srv.requests[2].conn) -- kept alive
      srv.stop()
    end)
  end)

  it("a body source that fails: nil, its error, and the connection is "
     .. "closed; one that raises: the error propagates", function()
    net.run(function()
      local srv = server(function(req, c) c:send(reply(req.body or "")) end)
      local n = 0
      local res, err = http.request{ url = srv.url(), method = "POST",
        body = function()
          n = n + 1
          if n == 1 then return "part" end
          return nil, "disk on fire"
        end }
      assert.same({ nil, "disk on fire" }, { res, err })
      assert.error_matches(function()
        http.request{ url = srv.url(), method = "POST",
                      body = function() error("boom") end }
      end, "boom")
      assert.error_matches(function()
        http.request{ url = srv.url(), method = "POST",
                      body = function() return {} end }
      end, "the body function returned a table", nil, true)
      collectgarbage()
      assert.is_true(net.wait_until(function()
        return cs.stats().sockets == 1 -- the listener
      end))
      srv.stop()
    end)
  end)

  it("HEAD, 204 and 304 have no body, whatever their headers say; the "
     .. "connection is kept", function()
    net.run(function()
      local srv = server(function(req, c)
        if req.method == "HEAD" then
          c:send("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
        elseif req.target == "/204" then
          c:send("HTTP/1.1 204 No Content\r\nContent-Length: 7\r\n\r\n")
        elseif req.target == "/304" then
          c:send("HTTP/1.1 304 Not Modified\r\n"
                 .. "Transfer-Encoding: chunked\r\n\r\n")
        else
          c:send(reply("body"))
        end
      end)
      local res = assert(http.request{ url = srv.url(), method = "HEAD" })
      assert.equal(200, res.status)
      assert.equal("", res.body)
      assert.equal("1000", res.headers["content-length"])
      res = assert(http.request{ url = srv.url("/204") })
      assert.same({ 204, "" }, { res.status, res.body })
      res = assert(http.request{ url = srv.url("/304") })
      assert.same({ 304, "" }, { res.status, res.body })
      res = assert(http.request{ url = srv.url() })
      assert.equal("body", res.body)
      assert.equal(3, res.reused)
      assert.equal(1, srv.conns)
      srv.stop()
    end)
  end)

  it("parses headers robustly: lower-case keys, repeated values in "
     .. "order, folded lines, spaces trimmed, no reason, 1xx skipped",
     function()
    net.run(function()
      local srv = raw_server("HTTP/1.1 100 Continue\r\n\r\n"
        .. "HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n"
        .. "HTTP/1.1 200\r\n"
        .. "Set-Cookie: a=1\r\n"
        .. "SET-COOKIE: b=2\r\n"
        .. "set-cookie:c=3\r\n"
        .. "X-Folded: one\r\n"
        .. "  two\r\n"
        .. "\tthree\r\n"
        .. "X-Space:   padded value \t\r\n"
        .. "X-Empty:\r\n"
        .. "X-Lf: bare LF\n"
        .. "Content-Length: 2\r\n\r\nok", true)
      local res = assert(http.request{ url = srv.url() })
      assert.equal(200, res.status)
      assert.equal("", res.reason)
      assert.equal("ok", res.body)
      assert.same({ "a=1", "b=2", "c=3" }, res.headers["Set-Cookie"])
      assert.equal("one two three", res.headers["x-folded"])
      assert.equal("padded value", res.headers["X-Space"])
      assert.equal("", res.headers["x-empty"])
      assert.equal("bare LF", res.headers["x-lf"])
      assert.is_nil(res.headers.link) -- the 103's
      local names = {}
      for k in pairs(res.headers) do names[#names + 1] = k end
      table.sort(names)
      assert.same({ "content-length", "set-cookie", "x-empty", "x-folded",
                    "x-lf", "x-space" }, names)
      res.headers["X-New"] = "v" -- stored lower-case too
      assert.equal("v", rawget(res.headers, "x-new"))
      srv.stop()
    end)
  end)
end)

describe("http bodies", function()
  after_each(helper.after_each)

  it("content-length 0 and a large content-length body", function()
    net.run(function()
      local big = net.payload(net.big(3 * 1024 * 1024))
      local srv = server(function(req, c)
        c:send(reply(req.target == "/big" and big or ""))
      end)
      local res = assert(http.request{ url = srv.url() })
      assert.equal("", res.body)
      res = assert(http.request{ url = srv.url("/big") })
      assert.equal(#big, #res.body)
      assert.is_true(res.body == big)
      assert.equal(1, srv.conns)
      srv.stop()
    end)
  end)

  it("chunked: hex sizes in any case, leading zeros, extensions, "
     .. "trailers; the connection is kept", function()
    net.run(function()
      local body = ("0123456789abcdef"):rep(100)
      local srv = server(function(req, c)
        if req.target == "/ext" then
          c:send("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                 .. "0000A;name=value;x=\"q\"\r\n0123456789\r\n"
                 .. "a ; ext\r\nabcdefghij\r\n"
                 .. "000\r\nX-Checksum: 42\r\nX-Trail: a\r\n"
                 .. "x-trail: b\r\n\r\n")
        else
          c:send("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                 .. chunked(body, { 1, 0x1ff, 7, 300 }))
        end
      end)
      local res = assert(http.request{ url = srv.url("/ext") })
      assert.equal("0123456789abcdefghij", res.body)
      assert.equal("42", res.trailers["X-Checksum"])
      assert.same({ "a", "b" }, res.trailers["x-trail"])
      assert.is_nil(res.headers["x-checksum"])
      res = assert(http.request{ url = srv.url() })
      assert.equal(body, res.body)
      assert.is_nil(res.trailers)
      assert.equal(1, res.reused)
      assert.equal(1, srv.conns)
      srv.stop()
    end)
  end)

  it("read until close: no Content-Length, no chunked; the connection "
     .. "is not kept", function()
    net.run(function()
      local srv = server(function(req, c)
        if req.target == "/gzip" then -- not chunked last: until close
          c:send("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nzz")
        else
          c:send("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n")
          cs.sleep(0.01)
          c:send("until close")
        end
        return false
      end)
      local res = assert(http.request{ url = srv.url() })
      assert.equal("until close", res.body)
      res = assert(http.request{ url = srv.url("/gzip") })
      assert.equal("zz", res.body)
      assert.equal(0, res.reused)
      assert.equal(2, srv.conns)
      srv.stop()
    end)
  end)

  it("Transfer-Encoding and Content-Length both: chunked wins, and the "
     .. "connection is not kept", function()
    net.run(function()
      local srv = raw_server("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n"
        .. "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", true)
      local res = assert(http.request{ url = srv.url() })
      assert.equal("hello", res.body)
      res = assert(http.request{ url = srv.url() })
      assert.equal(0, res.reused)
      assert.equal(2, srv.conns)
      srv.stop()
    end)
  end)

  it("max_body_size: nil, \"body too large\" for every framing", function()
    net.run(function()
      local srv = server(function(req, c)
        local body = ("b"):rep(1000)
        if req.target == "/len" then c:send(reply(body))
        elseif req.target == "/chunked" then
          c:send("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                 .. chunked(body, { 100 }))
        else
          c:send("HTTP/1.1 200 OK\r\n\r\n" .. body)
          return false
        end
      end)
      for _, p in ipairs{ "/len", "/chunked", "/close" } do
        assert.same({ nil, "body too large" },
                    { http.request{ url = srv.url(p), max_body_size = 999 } },
                    p)
        local res = assert(http.request{ url = srv.url(p),
                                         max_body_size = 1000 })
        assert.equal(1000, #res.body, p)
      end
      srv.stop()
    end)
  end)
end)

describe("http keep-alive", function()
  after_each(helper.after_each)

  it("one connection for several requests: the server sees one, "
     .. "res.reused counts 0, 1, 2...", function()
    net.run(function()
      local srv = server(function(req, c)
        c:send(reply(req.target .. "@" .. req.conn))
      end)
      for i = 0, 4 do
        local res = assert(http.request{ url = srv.url("/" .. i) })
        assert.equal("/" .. i .. "@1", res.body)
        assert.equal(i, res.reused)
      end
      assert.equal(1, srv.conns)
      assert.equal(5, #srv.requests)
      srv.stop()
    end)
  end)

  it("Connection: close from the server, HTTP/1.0 and keepalive = false "
     .. "close the connection; HTTP/1.0 with keep-alive keeps it",
     function()
    net.run(function()
      local srv = server(function(req, c)
        if req.target == "/close" then
          c:send(reply("x", { "Connection: close" }))
          return false
        elseif req.target == "/10" then
          c:send("HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx")
          return false
        elseif req.target == "/10ka" then
          c:send("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\n"
                 .. "Content-Length: 1\r\n\r\nx")
        else
          c:send(reply("x", req.headers.connection
                            and { "Connection: close" }))
          if req.headers.connection then return false end
        end
      end)
      local function conn_of(path, opts)
        opts = opts or {}
        opts.url = srv.url(path)
        local res = assert(http.request(opts))
        assert.equal("x", res.body)
        return srv.requests[#srv.requests].conn, res
      end
      assert.equal(1, conn_of("/close"))
      assert.equal(2, conn_of("/"))   -- a new one
      assert.equal(2, conn_of("/10")) -- kept after /, closed after /10
      local c, res = conn_of("/10ka")
      assert.equal(3, c)
      assert.equal(1.0, res.version)
      assert.equal(3, conn_of("/"))   -- kept after 1.0 keep-alive
      assert.equal(3, conn_of("/", { keepalive = false }))
      assert.equal("close", srv.requests[#srv.requests].headers.connection)
      assert.equal(4, conn_of("/"))
      srv.stop()
    end)
  end)

  it("data after the body: the connection is not kept", function()
    net.run(function()
      local srv = server(function(_, c)
        c:send(reply("x") .. "garbage")
      end)
      assert.equal("x", assert(http.request{ url = srv.url() }).body)
      cs.sleep(0.02) -- (short-I/O: the garbage arrives a byte at a time)
      local res = assert(http.request{ url = srv.url() })
      assert.equal(0, res.reused)
      assert.equal(2, srv.conns)
      srv.stop()
    end)
  end)

  it("a pooled connection the server closed before answering: an "
     .. "idempotent request is sent again on a new one, others fail",
     function()
    net.run(function()
      local srv = server(function(req, c)
        if req.n == 2 then return false end -- reads it, closes at once
        c:send(reply(req.method .. req.conn))
      end)
      assert.equal("GET1", assert(http.request{ url = srv.url() }).body)
      local res = assert(http.request{ url = srv.url() })
      assert.equal("GET2", res.body) -- sent on 1, again on 2
      assert.equal(0, res.reused)
      assert.equal(3, #srv.requests)
      assert.same({ nil, "closed" },
                  { http.request{ url = srv.url(), method = "POST",
                                  body = "x" } })
      assert.equal(4, #srv.requests) -- not sent again
      assert.equal("GET3", assert(http.request{ url = srv.url() }).body)
      srv.stop()
    end)
  end)

  it("keepalive_timeout: the idle connection is closed after it",
     function()
    net.run(function()
      local srv = server(function(_, c) c:send(reply("x")) end)
      assert(http.request{ url = srv.url(), keepalive_timeout = 50 })
      assert.equal(2, cs.stats().sockets - 1) -- pooled + the server's
      assert.is_true(net.wait_until(function()
        return cs.stats().sockets == 1
      end))
      srv.stop()
    end)
  end)

  it("opts.pool names the pool", function()
    net.run(function()
      local srv = server(function(req, c) c:send(reply("" .. req.conn)) end)
      assert.equal("1", assert(http.request{ url = srv.url() }).body)
      local res = assert(http.request{ url = srv.url(), pool = "other" })
      assert.same({ "2", 0 }, { res.body, res.reused })
      res = assert(http.request{ url = srv.url(), pool = "other" })
      assert.same({ "2", 1 }, { res.body, res.reused })
      res = assert(http.request{ url = srv.url() })
      assert.same({ "1", 1 }, { res.body, res.reused })
      srv.stop()
    end)
  end)
end)

describe("http streaming", function()
  after_each(helper.after_each)

  it("reads a multi-MB body piece by piece; the connection goes back to "
     .. "the pool at its end", function()
    net.run(function()
      local big = net.payload(net.big(6 * 1024 * 1024))
      local srv = server(function(req, c)
        if req.target == "/big" then c:send(reply(big))
        else c:send(reply("next")) end
      end)
      local res = assert(http.request{ url = srv.url("/big"), stream = true })
      assert.equal(200, res.status)
      assert.is_nil(res.body)
      assert.is_false(res.complete)
      local parts, n, largest = {}, 0, 0
      while true do
        local piece, err = res.body_reader(100000)
        assert.is_nil(err)
        if not piece then break end
        n = n + 1
        largest = math.max(largest, #piece)
        parts[#parts + 1] = piece
      end
      assert.is_true(table.concat(parts) == big)
      assert.is_true(largest <= 100000, largest)
      assert.is_true(n >= #big // 100000, n)
      assert.is_true(res.complete)
      assert.is_nil(res.body_reader()) -- stays at the end
      local sockets = cs.stats().sockets
      assert.equal(3, sockets) -- listener, server's conn, the pooled one
      res = assert(http.request{ url = srv.url() })
      assert.same({ "next", 1 }, { res.body, res.reused })
      srv.stop()
    end, { timeout = net.short_io and 60 or 10 })
  end)

  it("chunked and read-until-close bodies, with for ... in "
     .. "res.body_reader", function()
    net.run(function()
      local body = net.payload(net.big(500000))
      local srv = server(function(req, c)
        if req.target == "/chunked" then
          c:send("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                 .. chunked(body, { 200000, 3, 70000 }, "T: 1\r\n"))
        else
          c:send("HTTP/1.1 200 OK\r\n\r\n")
          c:send(body)
          return false
        end
      end)
      for _, p in ipairs{ "/chunked", "/close" } do
        local res = assert(http.request{ url = srv.url(p), stream = true })
        local parts = {}
        for piece in res.body_reader do
          assert.is_true(#piece <= 64 * 1024) -- the default max
          parts[#parts + 1] = piece
        end
        assert.is_true(table.concat(parts) == body, p)
        assert.is_true(res.complete)
        assert.is_nil(res.error)
        if p == "/chunked" then assert.equal("1", res.trailers.t) end
      end
      srv.stop()
    end, { timeout = net.short_io and 60 or 10 })
  end)

  it("res:read_body() reads the rest; no body: the reader ends at once",
     function()
    net.run(function()
      local srv = server(function(req, c)
        if req.method == "HEAD" then
          c:send("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n")
        else
          c:send(reply("0123456789"))
        end
      end)
      local res = assert(http.request{ url = srv.url(), stream = true })
      local first = res.body_reader(4)
      assert.is_true(#first >= 1 and #first <= 4)
      assert.equal(("0123456789"):sub(#first + 1), res:read_body())
      assert.is_true(res.complete)
      assert.equal("", res:read_body())
      res = assert(http.request{ url = srv.url(), stream = true,
                                 method = "HEAD" })
      assert.is_true(res.complete)
      assert.is_nil(res.body_reader())
      -- a buffered response's read_body is its body
      res = assert(http.request{ url = srv.url() })
      assert.equal("0123456789", res:read_body())
      assert.equal(1, res:close())
      assert.equal(1, srv.conns)
      srv.stop()
    end)
  end)

  it("an abandoned body: res:close(), <close> or the collector closes "
     .. "the connection; no fd left", function()
    net.run(function()
      local fds = helper.fds()
      local big = ("z"):rep(net.big(2 * 1024 * 1024))
      local srv = server(function(_, c)
        -- the client closing is seen by the send or the receive
        c:send(reply(big))
        assert.is_nil(c:receive("*l"))
        return false
      end)
      -- res:close()
      local res = assert(http.request{ url = srv.url(), stream = true })
      assert.truthy(res.body_reader(1000))
      assert.equal(1, res:close())
      assert.is_false(res.complete)
      assert.is_nil(res.error)
      assert.same({ nil, "closed" }, { res.body_reader() })
      assert.same({ nil, "closed" }, { res:read_body() })
      assert.equal(1, res:close()) -- again
      -- <close>
      do
        local r <close> = assert(http.request{ url = srv.url(),
                                               stream = true })
        assert.truthy(r.body_reader(1000))
      end
      -- the collector
      local function abandon()
        local r = assert(http.request{ url = srv.url(), stream = true })
        assert.truthy(r.body_reader(1000))
      end
      abandon()
      collectgarbage()
      collectgarbage()
      assert.is_true(net.wait_until(function() return srv.conns == 3
        and #srv.requests == 3 and next(srv.open) == nil end))
      assert.equal(3, srv.conns)
      srv.stop()
      assert.equal(fds, helper.fds())
    end)
  end)

  it("body_reader raises on a bad max", function()
    net.run(function()
      local srv = server(function(_, c) c:send(reply("abc")) end)
      local res = assert(http.request{ url = srv.url(), stream = true })
      assert.has_error(function() res.body_reader(0) end)
      assert.has_error(function() res.body_reader(1.5) end)
      assert.has_error(function() res.body_reader("x") end)
      assert.equal("abc", res:read_body())
      srv.stop()
    end)
  end)
end)

describe("http failures", function()
  after_each(helper.after_each)

  it("a server that never answers: nil, \"timeout\" within the timeout "
     .. "(ms)", function()
    net.run(function()
      local srv = stalling_server()
      local dt, res, err = net.timed(http.request,
                                     { url = srv.url(), timeout = 100 })
      assert.same({ nil, "timeout" }, { res, err })
      assert.is_true(dt >= 0.095, dt)
      assert.is_true(dt < slow(0.1), dt)
      -- read_timeout alone
      dt, res, err = net.timed(http.request,
                               { url = srv.url(), read_timeout = 50 })
      assert.same({ nil, "timeout" }, { res, err })
      assert.is_true(dt >= 0.045 and dt < slow(0.05), dt)
      srv.stop()
    end)
  end)

  it("timeouts in the middle of headers and bodies", function()
    net.run(function()
      local cases = {
        "HTTP/1.1 200 OK\r\nContent-Le",
        "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n12345",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab",
      }
      for _, bytes in ipairs(cases) do
        local srv = stalling_server(bytes)
        assert.same({ nil, "timeout" },
                    { http.request{ url = srv.url(), timeout = 50 } })
        srv.stop()
      end
      -- streaming: the reader says timeout, and the body is over
      local srv = stalling_server(cases[2])
      local res = assert(http.request{ url = srv.url(), timeout = 50,
                                       stream = true })
      local got, err = {}, nil
      while true do
        local piece
        piece, err = res.body_reader()
        if not piece then break end
        got[#got + 1] = piece
      end
      assert.equal("timeout", err)
      assert.equal("12345", table.concat(got))
      assert.same({ nil, "timeout" }, { res.body_reader() })
      assert.equal("timeout", res.error)
      assert.same({ nil, "timeout" }, { res:read_body() })
      srv.stop()
    end)
  end)

  it("connect: nil, \"timeout\" and nil, \"connection refused\"",
     function()
    net.run(function()
      local port, done = net.full_listener()
      local dt, res, err = net.timed(http.request, {
        url = "http://127.0.0.1:" .. port .. "/", connect_timeout = 100 })
      assert.same({ nil, "timeout" }, { res, err })
      assert.is_true(dt >= 0.095 and dt < slow(0.1), dt)
      done()
      assert.same({ nil, "connection refused" },
                  { http.request("http://127.0.0.1:" .. net.free_port()) })
    end)
  end)

  it("a server closing mid-headers or mid-body: nil, \"closed\"",
     function()
    net.run(function()
      local cases = {
        "",
        "HTTP/1.1 200 OK\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n12345",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nabcde",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nT: 1",
      }
      for _, bytes in ipairs(cases) do
        local srv = raw_server(bytes)
        assert.same({ nil, "closed" }, { http.request{ url = srv.url() } },
                    bytes)
        srv.stop()
      end
      -- streaming: the pieces that arrived, then nil, "closed"
      local srv = raw_server(cases[4])
      local res = assert(http.request{ url = srv.url(), stream = true })
      local got = {}
      while true do
        local piece, err = res.body_reader()
        if not piece then
          assert.equal("closed", err)
          break
        end
        got[#got + 1] = piece
      end
      assert.equal("12345", table.concat(got))
      assert.is_false(res.complete)
      assert.equal("closed", res.error)
      srv.stop()
    end)
  end)

  it("a malformed status line: nil, \"malformed status line: ...\"",
     function()
    net.run(function()
      local lines = {
        "HTTP/1.1 abc OK", "HTTP/1.1 20 OK", "HTTP/1.1 2000 OK",
        "HTTP/2 200 OK", "HTTP/2.0 200 OK", "HTTP/1.1  200 OK",
        "HTTP/1.1 200OK", "HTTP/1.1 099 Low", "http/1.1 200 OK",
        "SSH-2.0-OpenSSH_9.2", "\0\1\2garbage", "ICY 200 OK",
      }
      for _, line in ipairs(lines) do
        local srv = raw_server(line .. "\r\nContent-Length: 0\r\n\r\n")
        local res, err = http.request{ url = srv.url() }
        assert.is_nil(res, line)
        assert.matches("^malformed status line: \"", err)
        srv.stop()
      end
      local srv = raw_server("HTTP/1.1 x\1\r\n\r\n")
      assert.same({ nil, 'malformed status line: "HTTP/1.1 x\\x01"' },
                  { http.request{ url = srv.url() } })
      srv.stop()
    end)
  end)

  it("malformed headers, content-lengths and chunks: nil, err", function()
    net.run(function()
      local S = "HTTP/1.1 200 OK\r\n"
      local TE = S .. "Transfer-Encoding: chunked\r\n\r\n"
      local cases = {
        { S .. "NoColon\r\n\r\n", "^malformed header line: \"NoColon\"$" },
        { S .. "Bad Name: x\r\n\r\n", "^malformed header line: " },
        { S .. ": x\r\n\r\n", "^malformed header line: " },
        { S .. " folded-first\r\n\r\n", "^malformed header line: " },
        { S .. "Content-Length: abc\r\n\r\n", "^bad content%-length: \"abc\"" },
        { S .. "Content-Length: -1\r\n\r\n", "^bad content%-length: " },
        { S .. "Content-Length: 5, 6\r\n\r\n", "^bad content%-length: " },
        { S .. "Content-Length: 5\r\nContent-Length: 6\r\n\r\n",
          "^bad content%-length: \"5, 6\"" },
        { S .. "Content-Length: 99999999999999999999\r\n\r\n",
          "^bad content%-length: " },
        { TE .. "zz\r\n", "^malformed chunk: \"zz\"$" },
        { TE .. "\r\n", "^malformed chunk: \"\"$" },
        { TE .. "5 x\r\nhello\r\n0\r\n\r\n", "^malformed chunk: " },
        { TE .. "5\r\nhelloXX\r\n0\r\n\r\n", "^malformed chunk: \"XX\"$" },
        { TE .. "1000000000000000\r\n", "^malformed chunk: " },
        { TE .. "0\r\nbad trailer\r\n\r\n", "^malformed header line: " },
      }
      for _, case in ipairs(cases) do
        local srv = raw_server(case[1])
        local res, err = http.request{ url = srv.url() }
        assert.is_nil(res, case[1])
        assert.matches(case[2], err)
        srv.stop()
      end
      -- equal repeated lengths are one length
      local srv = raw_server(S .. "Content-Length: 2, 2\r\n"
                             .. "Content-Length: 2\r\n\r\nok", true)
      assert.equal("ok", assert(http.request{ url = srv.url() }).body)
      srv.stop()
    end)
  end)

  it("oversized headers: nil, \"response header too large\"", function()
    net.run(function()
      local S = "HTTP/1.1 200 OK\r\n"
      local many = {}
      for i = 1, 2000 do
        many[i] = ("X-H%d: %s\r\n"):format(i, ("v"):rep(30))
      end
      local cases = {
        { S .. "X-Big: " .. ("a"):rep(70000) .. "\r\n\r\n" },
        { S .. table.concat(many) .. "\r\n" },
        { "HTTP/1.1 200 " .. ("r"):rep(70000) .. "\r\n\r\n" },
        { S .. "X-A: 12345678901234567890\r\n\r\n", 40 },
        { S .. "Transfer-Encoding: chunked\r\n\r\n0\r\nT: "
               .. ("t"):rep(200) .. "\r\n\r\n", 100, "trailers too large" },
      }
      for _, case in ipairs(cases) do
        local srv = stalling_server(case[1])
        assert.same({ nil, case[3] or "response header too large" },
                    { http.request{ url = srv.url(),
                                    max_header_size = case[2] } })
        srv.stop()
      end
      -- just within the limit
      local resp = S .. "X-A: 1\r\nContent-Length: 0\r\n\r\n"
      local srv = raw_server(resp)
      assert(http.request{ url = srv.url(), max_header_size = #resp })
      srv.stop()
    end)
  end)

  it("blanks in header values cost linear time (no pattern "
     .. "backtracking)", function()
    net.run(function()
      -- (short-I/O: a system call a byte; the size is not the point)
      local blanks = (" \t"):rep(net.short_io and 500 or 30000)
      local srv = raw_server("HTTP/1.1 200 OK\r\nX-A: a" .. blanks .. "b"
        .. blanks .. "\r\nX-B: 1\r\n" .. blanks .. "2\r\n"
        .. "Content-Length: 000000000000000000000000000002" .. blanks
        .. "\r\n\r\nok", true)
      local dt, res, err = net.timed(http.request, {
        url = srv.url(), max_header_size = 300000 })
      assert(res, err)
      assert.equal("ok", res.body)
      assert.equal("a" .. blanks .. "b", res.headers["x-a"])
      assert.equal("1 2", res.headers["x-b"])
      assert.is_true(dt < slow(0.1), dt)
      srv.stop()
    end)
  end)

  describe("https", function()
    local tls = require "spec.support.tls"
    local have, why = tls.available()
    if not have then
      pending("needs python3 and openssl: " .. tostring(why))
      return
    end
    local C, srv, self
    setup(function()
      C = tls.certs()
      srv = tls.server({ mode = "http" })
      self = tls.server({ mode = "http", cert = C.self_crt,
                          key = C.self_key })
    end)
    teardown(function()
      tls.cleanup()
    end)

    -- idle timeouts outlast a TLS request in the slow modes (short I/O:
    -- every handshake byte is a system call of its own)
    local IDLE = math.floor(300 * helper.slack)

    -- runs fn with the test CA trusted by every socket
    local function trusting(fn)
      net.run(function()
        assert(cs.socket.setcafile(C.ca_crt))
        local ok, err = pcall(fn)
        assert(cs.socket.setcafile(nil))
        assert(ok, err)
      end)
    end

    it("verified, SNI sent, kept alive in a pool of its own", function()
      trusting(function()
        assert(cs.resolve("localhost")) -- the resolver's own fds first
        local fds = helper.fds()
        local url = ("https://localhost:%d"):format(srv.port)
        local res = assert(http.request{ url = url .. "/a",
                                         keepalive_timeout = IDLE })
        assert.same({ 200, "method=GET path=/a sni=localhost", 0 },
                    { res.status, res.body, res.reused })
        res = assert(http.request{ url = url .. "/b", method = "POST",
                                   body = "hello", keepalive_timeout = IDLE })
        assert.same({ "method=POST path=/b sni=localhost\nhello", 1 },
                    { res.body, res.reused })
        -- unverified connections are pooled apart from verified ones
        res = assert(http.request{ url = url .. "/c", ssl_verify = false,
                                   keepalive_timeout = IDLE })
        assert.equal(0, res.reused)
        assert.equal(2, cs.stats().sockets)
        cs.sleep(IDLE / 1000 + 0.1) -- the idle timeouts close both
        assert.equal(0, cs.stats().sockets)
        assert.equal(fds, helper.fds())
      end)
    end)

    it("a bad certificate: the handshake error; ssl_verify = false",
       function()
      trusting(function()
        local url = ("https://127.0.0.1:%d/"):format(self.port)
        assert.same({ nil, "handshake failed: self-signed certificate" },
                    { http.request(url) })
        local res = assert(http.request{ url = url, ssl_verify = false,
                                         keepalive = false })
        assert.same({ 200, "method=GET path=/ sni=-" },
                    { res.status, res.body })
        -- the unverified connection is never handed to a verifying request
        assert(http.request{ url = url, ssl_verify = false,
                             keepalive_timeout = IDLE })
        assert.same({ nil, "handshake failed: self-signed certificate" },
                    { http.request(url) })
        cs.sleep(IDLE / 1000 + 0.1)
        assert.equal(0, cs.stats().sockets)
      end)
    end)

    it("a plain HTTP server on an https URL: the handshake error",
       function()
      local plain = tls.server({ mode = "plain" })
      net.run(function()
        local fds = helper.fds()
        local res, err = http.request(("https://127.0.0.1:%d/")
                                        :format(plain.port))
        assert.is_nil(res)
        assert.matches("^handshake failed: ", err)
        assert.equal(fds, helper.fds())
      end)
      plain:stop()
    end)
  end)

  it("bad arguments raise", function()
    net.run(function()
      local u = "http://127.0.0.1:1/"
      local cases = {
        { nil, "options table or url expected, got nil" },
        { 42, "options table or url expected, got number" },
        { {}, "url missing" },
        { { url = 1 }, "url must be a string, got number" },
        { { url = "example.com" }, "bad url (no scheme://)" },
        { { url = "ftp://h/" }, "unsupported scheme 'ftp'" },
        { { url = "http://h:99999/" }, "bad url (bad port)" },
        { { url = u, method = 1 }, "method must be a string, got number" },
        { { url = u, method = "G T" }, "bad method" },
        { { url = u, method = "" }, "bad method" },
        { { url = u, headers = "x" }, "headers must be a table" },
        { { url = u, headers = { ["a b"] = "1" } }, "bad header name" },
        { { url = u, headers = { [1] = "x" } }, "bad header name" },
        { { url = u, headers = { X = "a\r\nInjected: 1" } },
          "bad value for header 'X'" },
        { { url = u, headers = { X = true } }, "bad value type for header" },
        { { url = u, headers = { Host = false } }, "cannot be dropped" },
        { { url = u, body = 1 }, "body must be a string or a function" },
        { { url = u, body = {} }, "body must be a string or a function" },
        { { url = u, timeout = -1 }, "timeout must be a number of ms" },
        { { url = u, timeout = "1" }, "timeout must be a number of ms" },
        { { url = u, stream = 1 }, "stream must be a boolean" },
        { { url = u, max_header_size = 0 }, "must be a positive integer" },
        { { url = u, query = 1 }, "query must be a string or a table" },
        { { url = u, query = { a = print } }, "bad query value type" },
        { { url = u, timout = 5 }, "unknown option 'timout'" },
        { { "GET", u }, "unknown option [1]" },
      }
      for _, case in ipairs(cases) do
        local ok, err = pcall(http.request, case[1])
        assert.is_false(ok)
        assert.truthy(err:find(case[2], 1, true),
                      ("%s: %s"):format(case[2], err))
        assert.matches("^corosched%.http%.request: ", err)
      end
      -- at the caller's line
      local ok, err = pcall(function() http.request{} end)
      assert.is_false(ok)
      assert.matches("42%-http_spec%.lua:%d+: corosched%.http%.request: "
                     .. "url missing", err)
      assert.equal(0, cs.stats().sockets)
    end)
  end)
end)

describe("http with light threads", function()
  after_each(helper.after_each)

  it("100 concurrent requests from light threads; no fd, socket or "
     .. "thread left", function()
    net.run(function()
      local fds = helper.fds()
      local srv = server(function(req, c)
        cs.sleep(0.01) -- the requests overlap
        c:send(reply("re:" .. req.target))
      end)
      local threads = {}
      for i = 1, 100 do
        threads[i] = spawn(function()
          local res, err = http.request{ url = srv.url("/" .. i),
                                         timeout = 5000 }
          if not res then return nil, err end
          return res.body
        end)
      end
      for i = 1, 100 do
        assert.same({ true, "re:/" .. i }, { wait(threads[i]) })
      end
      assert.equal(100, #srv.requests)
      assert.equal(100, srv.conns) -- all at once: none was free
      -- the pool keeps 30: the next ones reuse
      local res = assert(http.request{ url = srv.url("/again") })
      assert.is_true(res.reused >= 1)
      srv.stop()
      assert.equal(fds, helper.fds())
    end, { timeout = net.short_io and 60 or 10 })
  end)

  it("kill of a thread parked in a request closes its connection; a "
     .. "deadline for a whole request", function()
    net.run(function()
      local srv = stalling_server()
      local t = spawn(http.request, { url = srv.url() })
      assert.is_true(net.wait_until(function() return #srv.requests == 1 end))
      assert.equal("socket read", net.parked_on(t))
      assert.equal(1, kill(t))
      assert.is_true(net.wait_until(function()
        return next(srv.open) == nil
      end))
      -- the documented pattern: run it in a thread, kill it at the
      -- deadline
      local function with_deadline(sec, opts)
        local worker = spawn(http.request, opts)
        local dog = spawn(cs.sleep, sec)
        local ok, res, err = wait(worker, dog)
        if coroutine.status(worker) ~= "dead" then
          kill(worker)
          return nil, "deadline"
        end
        kill(dog)
        if not ok then error(res) end
        return res, err
      end
      local dt, res, err = net.timed(with_deadline, 0.1,
                                     { url = srv.url(), timeout = 5000 })
      assert.same({ nil, "deadline" }, { res, err })
      assert.is_true(dt >= 0.095 and dt < slow(0.1), dt)
      srv.stop()
    end)
  end)

  it("works from inside coroutine.wrap and pcall", function()
    net.run(function()
      local srv = server(function(req, c) c:send(reply(req.target)) end)
      local gen = coroutine.wrap(function()
        for i = 1, 3 do
          local ok, res = pcall(http.request, srv.url("/" .. i))
          coroutine.yield(ok and res.body)
        end
      end)
      assert.same({ "/1", "/2", "/3" }, { gen(), gen(), gen() })
      assert.equal(1, srv.conns)
      srv.stop()
    end)
  end)
end)
