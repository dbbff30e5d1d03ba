-- corosched.http: an HTTP/1.1 client on corosched's cosockets (API.md
-- "HTTP client"). Pure Lua over cs.socket.tcp(); runs inside cs.run.
--
--   local http = require "corosched.http"
--   local res, err = http.request{ url = "http://127.0.0.1:8080/x" }
--   -- res.status, res.reason, res.headers["content-type"], res.body
--
-- request(opts) or request(url) -> res | nil, err
--   opts.url        "http://[user:pass@]host[:port][/path][?query][#frag]"
--                   or "https://..." (required; the fragment is not sent;
--                   user:pass makes an Authorization: Basic header unless
--                   headers set one)
--   opts.ssl_verify https: false skips the certificate checks (chain and
--                   host name), which are on by default (sslhandshake)
--   opts.method     "GET" by default; sent as it is (case matters in HTTP)
--   opts.headers    { name = value | {value, value...} | false }: a table
--                   of values is sent as repeated lines; false drops a
--                   default header (User-Agent, Authorization,
--                   Content-Length, Transfer-Encoding)
--   opts.body       a string (sent with Content-Length) or a source
--                   function (called until it returns nil; sent chunked,
--                   or as it is when headers set Content-Length; nil, err
--                   from it aborts the request with err); POST, PUT and
--                   PATCH without a body send Content-Length: 0
--   opts.query      a string, or a table {k = v | {v, v}} url-encoded with
--                   sorted keys, appended to the URL's query
--   opts.timeout    milliseconds, as every socket timeout of corosched: the
--                   time each step (connect, each send, each read) may go
--                   without progress; connect_timeout, send_timeout and
--                   read_timeout override one step; absent or 0: 60 s.
--                   For a bound on the whole request, run it in a light
--                   thread and kill that at the deadline (its socket is
--                   closed)
--   opts.stream     true: return after the headers; read the body with
--                   res.body_reader / res:read_body(), or res:close()
--   opts.keepalive  false: send Connection: close and never pool
--   opts.keepalive_timeout  idle ms in the pool (setkeepalive: 60 s by
--                   default, 0 for no limit)
--   opts.pool, opts.pool_size, opts.backlog   connect's pool options (https
--                   connections have a pool of their own by default: host,
--                   port and whether they were verified)
--   opts.max_header_size    bytes of status line and headers (64 KiB)
--   opts.max_body_size      bytes a buffered body may have (no limit)
--
-- res: status (integer), reason, version (1.0 or 1.1), headers (names in
-- lower case, looked up case-insensitively; a repeated header is an array
-- of its values in arrival order), body (a string; nil with stream),
-- trailers (a chunked body's trailer headers, when there were any),
-- reused (how many times the connection had been used before), complete
-- (true once the whole body has been read), error (what ended the body
-- early). Methods: res:read_body() -> the rest of the body | nil, err;
-- res:close() abandons what is left of the body (closing the connection);
-- it is also res's __close, so `local res <close> = ...` works. With
-- stream, res.body_reader([max]) -> the next piece (at most max bytes,
-- default 64 KiB, as soon as some arrive) | nil at the end | nil, err
-- (any error, "timeout" too, ends the body and closes the connection;
-- later calls repeat it). `for piece in res.body_reader do` works; after
-- the loop, res.complete or res.error tell how the body ended.
--
-- The connection goes back to the pool (setkeepalive) as soon as the
-- whole body has been read, when both sides allow it: HTTP/1.1 without
-- Connection: close, or HTTP/1.0 with Connection: keep-alive, a body
-- framed by Content-Length or chunked (or none), and nothing unread
-- after it. Otherwise, on any error, and when a streamed body is
-- abandoned (res:close(), or res collected), it is closed. A request on
-- a pooled connection that the server closed before sending a byte is
-- sent again once on a new one when it is replayable (no source function
-- body) and its method idempotent. Redirects are not followed; 1xx
-- interim responses are skipped. Content-Encoding is not decoded.
--
-- Errors: a bad argument raises; I/O failures return the socket's
-- strings ("timeout", "closed": the server closed before the response
-- was complete, "connection refused", ...); bad responses return
-- "malformed status line: ...", "malformed header line: ...",
-- "malformed chunk: ...", "bad content-length: ...", "response header too
-- large", "trailers too large", "body too large"; a failed TLS handshake
-- returns sslhandshake's "handshake failed: <reason>".
--
-- Also: parse_url(url) -> parts | nil, err (below); USER_AGENT, the
-- default User-Agent (false: none).
local cs = require "corosched"

local tcp = cs.socket.tcp
local byte, char, fmt = string.byte, string.char, string.format
local concat, sort = table.concat, table.sort
local tointeger = math.tointeger

local _M = {
  _VERSION = cs._VERSION,
  -- the User-Agent sent unless headers set one (false: none)
  USER_AGENT = "corosched-http/" .. cs._VERSION,
}

local HEADER_TOO_LARGE = "response header too large"
local BODY_TOO_LARGE = "body too large"
local DEFAULT_PORTS = { http = 80, https = 443 }
local MAX_HEADER = 64 * 1024
local READ_PIECE = 64 * 1024 -- body_reader's default max
local ANY_PIECE = 1024 * 1024 -- read_body's receiveany size (close mode)
local IDEMPOTENT = {
  GET = true, HEAD = true, OPTIONS = true, TRACE = true, PUT = true,
  DELETE = true,
}
local BODY_METHODS = { POST = true, PUT = true, PATCH = true }
-- RFC 9110 token characters (method and header names)
local TOKEN = "^[%w!#$%%&'*+%-.^_`|~]+$"

local OPTIONS = {
  url = "string", method = "string", headers = "table", body = true,
  query = true, timeout = "ms", connect_timeout = "ms", send_timeout = "ms",
  read_timeout = "ms", stream = "boolean", keepalive = "boolean",
  keepalive_timeout = "ms", pool = "string", pool_size = "count",
  backlog = "count", max_header_size = "count", max_body_size = "count",
  ssl_verify = "boolean",
}

local THIS = debug.getinfo(1, "S").source

-- raises msg at the first caller outside this file (request's caller)
local function argerror(msg)
  local level = 2
  while true do
    local info = debug.getinfo(level, "S")
    if info == nil or info.source ~= THIS then break end
    level = level + 1
  end
  error("corosched.http.request: " .. msg, level)
end


---------------------------------------------------------------------------
-- small helpers
---------------------------------------------------------------------------

-- a line of a bad response, printable and short, for error messages
local function show(line)
  local s = line:sub(1, 64):gsub("[^\32-\126]", function(c)
    return fmt("\\x%02x", byte(c))
  end)
  return '"' .. s .. (#line > 64 and '..."' or '"')
end

-- s without the spaces and tabs around it (no pattern backtracking: a
-- server may send 64 KiB of blanks)
local function trim(s)
  local i = s:find("[^ \t]")
  if not i then return "" end
  local j = #s
  while true do
    local b = byte(s, j)
    if b ~= 32 and b ~= 9 then break end
    j = j - 1
  end
  return s:sub(i, j)
end

local function malformed(what, line)
  return "malformed " .. what .. ": " .. show(line)
end

local B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

local function base64(s)
  local out = {}
  for i = 1, #s, 3 do
    local a, b, c = byte(s, i, i + 2)
    local n = a << 16 | (b or 0) << 8 | (c or 0)
    local q = {}
    for k = 1, 4 do
      local v = (n >> (6 * (4 - k))) & 63
      q[k] = B64:sub(v + 1, v + 1)
    end
    if not b then q[3] = "=" end
    if not c then q[4] = "=" end
    out[#out + 1] = concat(q)
  end
  return concat(out)
end

local function unescape(s)
  return (s:gsub("%%(%x%x)", function(h) return char(tonumber(h, 16)) end))
end

local function escape(s)
  return (s:gsub("[^%w%-._~]", function(c) return fmt("%%%02X", byte(c)) end))
end

-- a table of headers whose lookups ignore case (names stored lower-case)
local header_mt = {
  __index = function(t, k)
    if type(k) == "string" then
      local l = k:lower()
      if l ~= k then return rawget(t, l) end
    end
    return nil
  end,
  __newindex = function(t, k, v)
    if type(k) == "string" then k = k:lower() end
    rawset(t, k, v)
  end,
}

local function new_headers()
  return setmetatable({}, header_mt)
end

-- every value of a header (nil, a string or an array of strings)
local function values(v)
  if v == nil then return {} end
  if type(v) == "table" then return v end
  return { v }
end

-- the comma-separated tokens of a header, lower-case, parameters dropped
local function tokens(v)
  local set, list = {}, {}
  for _, s in ipairs(values(v)) do
    for t in s:gmatch("[^,]+") do
      t = t:match("^[ \t]*([^; \t]*)"):lower()
      if t ~= "" then
        set[t] = true
        list[#list + 1] = t
      end
    end
  end
  return set, list
end

-- Content-Length: every value (repeated, or a list) must be the same
-- decimal number
local function content_length(v)
  local n
  for _, s in ipairs(values(v)) do
    for part in s:gmatch("[^,]*") do
      local d = trim(part)
      if not d:find("^%d+$") then return nil end
      d = d:gsub("^0+(%d)", "%1")
      if #d > 15 then return nil end
      d = tonumber(d)
      if n and n ~= d then return nil end
      n = d
    end
  end
  return n
end


---------------------------------------------------------------------------
-- URLs
---------------------------------------------------------------------------

-- parse_url(url) -> { scheme, user, password, host, port, path, query,
-- fragment, authority } | nil, err. host is an IPv6 literal without its
-- brackets; authority is host[:port] as the Host header says it (the
-- port only when it is not the scheme's default); query and fragment are
-- nil when absent, user and password when there is no userinfo.
function _M.parse_url(url)
  if type(url) ~= "string" then
    return nil, "bad url (string expected, got " .. type(url) .. ")"
  end
  if url:find("[%c ]") then
    return nil, "bad url (space or control character): " .. show(url)
  end
  local scheme, rest = url:match("^(%a[%w+.%-]*)://(.*)$")
  if not scheme then
    return nil, "bad url (no scheme://): " .. show(url)
  end
  scheme = scheme:lower()
  local u = { scheme = scheme }
  local auth, tail = rest:match("^([^/?#]*)(.*)$")
  local frag_at = tail:find("#", 1, true)
  if frag_at then
    u.fragment = tail:sub(frag_at + 1)
    tail = tail:sub(1, frag_at - 1)
  end
  local q_at = tail:find("?", 1, true)
  if q_at then
    u.query = tail:sub(q_at + 1)
    tail = tail:sub(1, q_at - 1)
  end
  u.path = tail ~= "" and tail or "/"

  local userinfo, hostport = auth:match("^(.*)@([^@]*)$")
  if userinfo then
    local user, pass = userinfo:match("^([^:]*):(.*)$")
    u.user = unescape(user or userinfo)
    u.password = pass and unescape(pass) or ""
  else
    hostport = auth
  end
  local host, port
  if hostport:sub(1, 1) == "[" then
    host, port = hostport:match("^%[([%x:.]+)%](.*)$")
    if not host or not host:find(":", 1, true) then
      return nil, "bad url (bad IPv6 literal): " .. show(url)
    end
  else
    host, port = hostport:match("^([^:]*)(.*)$")
    if host == "" then return nil, "bad url (no host): " .. show(url) end
    if not host:find("^[%w%-._~!$&'()*+,;=%%]+$") then
      return nil, "bad url (bad host): " .. show(url)
    end
  end
  local default = DEFAULT_PORTS[scheme]
  if port == "" or port == ":" then
    port = default
  else
    port = port:match("^:(%d+)$")
    port = port and #port <= 5 and tonumber(port)
    if not port or port < 1 or port > 65535 then
      return nil, "bad url (bad port): " .. show(url)
    end
  end
  u.host, u.port = host, port
  local h = host:find(":", 1, true) and "[" .. host .. "]" or host
  u.authority = (port == default or not port) and h or h .. ":" .. port
  return u
end

-- the query string of a table: sorted keys, arrays as repeated keys
local function encode_query(t)
  local keys, out = {}, {}
  for k in pairs(t) do
    if type(k) ~= "string" and type(k) ~= "number" then
      argerror("bad query key type (" .. type(k) .. ")")
    end
    keys[#keys + 1] = tostring(k)
  end
  sort(keys)
  for _, k in ipairs(keys) do
    local v = t[k]
    if v == nil then v = t[tonumber(k)] end
    for _, x in ipairs(type(v) == "table" and v or { v }) do
      local tx = type(x)
      if tx ~= "string" and tx ~= "number" and tx ~= "boolean" then
        argerror("bad query value type for '" .. k .. "' (" .. tx .. ")")
      end
      out[#out + 1] = escape(k) .. "=" .. escape(tostring(x))
    end
  end
  return concat(out, "&")
end


---------------------------------------------------------------------------
-- the request
---------------------------------------------------------------------------

-- checks and normalises request()'s argument; raises on misuse
local function check_opts(opts)
  if type(opts) == "string" then opts = { url = opts } end
  if type(opts) ~= "table" then
    argerror("options table or url expected, got " .. type(opts))
  end
  for k, v in pairs(opts) do
    local want = OPTIONS[k]
    if want == nil then
      argerror("unknown option " .. (type(k) == "string" and "'" .. k .. "'"
               or "[" .. tostring(k) .. "]"))
    end
    local t = type(v)
    if want == "ms" then
      if t ~= "number" or v < 0 or v ~= v then
        argerror(k .. " must be a number of ms >= 0, got " .. tostring(v))
      end
    elseif want == "count" then
      if not tointeger(v) or v < 1 then
        argerror(k .. " must be a positive integer, got " .. tostring(v))
      end
    elseif want ~= true and t ~= want then
      argerror(k .. " must be a " .. want .. ", got " .. t)
    end
  end
  if opts.url == nil then argerror("url missing") end
  local body = opts.body
  if body ~= nil and type(body) ~= "string" and type(body) ~= "function" then
    argerror("body must be a string or a function, got " .. type(body))
  end
  local q = opts.query
  if q ~= nil and type(q) ~= "string" and type(q) ~= "table" then
    argerror("query must be a string or a table, got " .. type(q))
  end
  local method = opts.method or "GET"
  if not method:find(TOKEN) then
    argerror("bad method " .. show(method))
  end
  local u, err = _M.parse_url(opts.url)
  if not u then argerror(err) end
  if not DEFAULT_PORTS[u.scheme] then
    argerror("unsupported scheme '" .. u.scheme .. "' (http or https)")
  end
  return opts, u, method
end

local function check_value(name, v)
  local t = type(v)
  if t == "number" then -- as sock:send writes numbers
    return math.type(v) == "integer" and tostring(v) or fmt("%.14g", v)
  end
  if t ~= "string" then
    argerror("bad value type for header '" .. name .. "' (" .. t .. ")")
  end
  if v:find("[\0\r\n]") then
    argerror("bad value for header '" .. name .. "' (CR, LF or NUL)")
  end
  return v
end

-- the request head (request line, headers, empty line); whether the body
-- goes chunked; whether the request asks to close the connection
local function build_head(opts, u, method)
  local target = u.path
  if u.query then target = target .. "?" .. u.query end
  local q = opts.query
  if type(q) == "table" then q = encode_query(q) end
  if q and q ~= "" then
    if q:find("[%c ]") then argerror("bad query (space or control)") end
    target = target .. (u.query == nil and "?" or u.query == "" and ""
                        or "&") .. q
  end

  local out = { method, " ", target, " HTTP/1.1\r\n" }
  local function add(name, value)
    out[#out + 1] = name
    out[#out + 1] = ": "
    out[#out + 1] = value
    out[#out + 1] = "\r\n"
  end
  local has, close = {}, false
  local headers = opts.headers or {}
  local names = {}
  for name in pairs(headers) do
    if type(name) ~= "string" or not name:find(TOKEN) then
      argerror("bad header name " .. (type(name) == "string" and show(name)
               or "(" .. type(name) .. ")"))
    end
    names[#names + 1] = name
  end
  -- Host first, as RFC 9112 asks of clients; then the names sorted
  sort(names, function(a, b)
    local ha, hb = a:lower() == "host", b:lower() == "host"
    if ha ~= hb then return ha end
    return a < b
  end)
  local host = names[1] and names[1]:lower() == "host"
  if not host then add("Host", u.authority) end
  for _, name in ipairs(names) do
    local lname, v = name:lower(), headers[name]
    has[lname] = true
    if v == false and lname == "host" then
      argerror("the Host header cannot be dropped (HTTP/1.1 needs it)")
    end
    if v ~= false then
      if type(v) == "table" then
        for _, x in ipairs(v) do add(name, check_value(name, x)) end
      else
        add(name, check_value(name, v))
      end
      if lname == "connection" and tokens(v).close then close = true end
    end
  end
  if not has["user-agent"] and _M.USER_AGENT then
    add("User-Agent", _M.USER_AGENT)
  end
  if u.user and not has.authorization then
    add("Authorization", "Basic " .. base64(u.user .. ":" .. u.password))
  end
  local chunked = false
  local body = opts.body
  if not has["content-length"] and not has["transfer-encoding"] then
    if type(body) == "string" then
      add("Content-Length", tostring(#body))
    elseif type(body) == "function" then
      add("Transfer-Encoding", "chunked")
      chunked = true
    elseif BODY_METHODS[method] then
      add("Content-Length", "0")
    end
  end
  if opts.keepalive == false and not close then
    if not has.connection then add("Connection", "close") end
    close = true
  end
  out[#out + 1] = "\r\n"
  return concat(out), chunked, close
end

-- for the specs: the request head request(opts) would send
function _M._head(opts)
  local o, u, method = check_opts(opts)
  return (build_head(o, u, method))
end

-- sends the head and the body: 1 | nil, err
local function send_request(sock, head, body, chunked)
  if body == nil then return sock:send(head) end
  if type(body) == "string" then return sock:send({ head, body }) end
  local ok, err = sock:send(head)
  if not ok then return nil, err end
  while true do
    local pok, chunk, serr = pcall(body)
    if not pok then
      sock:close()
      error(chunk, 0)
    end
    if chunk == nil then
      if serr ~= nil then return nil, tostring(serr) end
      break
    end
    if type(chunk) == "number" then chunk = tostring(chunk) end
    if type(chunk) ~= "string" then
      sock:close()
      error("corosched.http.request: the body function returned a "
            .. type(chunk), 0)
    end
    if chunk ~= "" then
      if chunked then
        ok, err = sock:send({ fmt("%x\r\n", #chunk), chunk, "\r\n" })
      else
        ok, err = sock:send(chunk)
      end
      if not ok then return nil, err end
    end
  end
  if chunked then return sock:send("0\r\n\r\n") end
  return 1
end


---------------------------------------------------------------------------
-- the response
---------------------------------------------------------------------------

-- reads header lines into h up to the empty line, within budget bytes:
-- the budget left | nil, err
local function read_header_block(sock, h, budget)
  local last
  while true do
    if budget <= 0 then return nil, HEADER_TOO_LARGE end
    sock:setoption("maxline", budget)
    local line, err = sock:receive("*l")
    if not line then
      return nil, err == "line too long" and HEADER_TOO_LARGE or err
    end
    budget = budget - #line - 2
    if line == "" then return budget end
    local c = byte(line)
    if c == 32 or c == 9 then -- obs-fold: continues the previous value
      if not last then return nil, malformed("header line", line) end
      local more = trim(line)
      local cur = rawget(h, last)
      if type(cur) == "table" then
        cur[#cur] = cur[#cur] .. " " .. more
      else
        rawset(h, last, cur .. " " .. more)
      end
    else
      local colon = line:find(":", 1, true)
      local name = colon and line:sub(1, colon - 1)
      if not name or not name:find(TOKEN) then
        return nil, malformed("header line", line)
      end
      local value = trim(line:sub(colon + 1))
      last = name:lower()
      local old = rawget(h, last)
      if old == nil then
        rawset(h, last, value)
      elseif type(old) == "table" then
        old[#old + 1] = value
      else
        rawset(h, last, { old, value })
      end
    end
  end
end

-- status code, reason, version, budget left | nil, err, nothing_received
local function read_status(sock, budget)
  sock:setoption("maxline", budget)
  local line, err, partial = sock:receive("*l")
  if not line then
    if err == "line too long" then return nil, HEADER_TOO_LARGE end
    return nil, err, partial == ""
  end
  local major, minor, code, rest = line:match("^HTTP/(%d)%.(%d) (%d%d%d)(.*)$")
  if not major or major ~= "1" or code < "100"
     or (rest ~= "" and byte(rest) ~= 32) then
    return nil, malformed("status line", line)
  end
  return tonumber(code), rest:sub(2), minor == "0" and 1.0 or 1.1,
         budget - #line - 2
end

-- the state of a response's body:
--   sock, mode ("none" | "length" | "chunked" | "close"), remaining
--   (length), chunk_left and need_crlf (chunked), keepalive, ka_timeout,
--   max_header, max_body, res, done, err
local ST = setmetatable({}, { __mode = "k" }) -- res -> state

-- the connection goes back to the pool, or is closed
local function release(st)
  local sock = st.sock
  if not sock then return end
  st.sock = nil
  if st.keepalive and sock:setkeepalive(st.ka_timeout) then return end
  sock:close()
end

local function finish(st)
  st.done = true
  st.res.complete = true
  release(st)
  return nil
end

local function fail(st, err)
  st.err = err
  st.res.error = err
  local sock = st.sock
  st.sock = nil
  if sock then sock:close() end
  return nil, err
end

-- the size of a chunk-size line (extensions ignored), or nil
local function chunk_size(line)
  local hex, rest = line:match("^0*(%x+)(.*)$")
  if not hex or #hex > 15 then return nil end
  if rest ~= "" and not rest:find("^[ \t]*;") and not rest:find("^[ \t]*$")
  then
    return nil
  end
  return tonumber(hex, 16)
end

-- The next piece of the body: a non-empty string | nil at the end (the
-- connection released) | nil, err (the connection closed). At most max
-- bytes; whole: wait for all of them (read_body), else return what has
-- arrived (body_reader).
local function next_piece(st, max, whole)
  local sock, mode, data, err = st.sock, st.mode, nil, nil
  if mode == "length" then
    local n = st.remaining
    if n == 0 then return finish(st) end
    if n > max then n = max end
    if whole then data, err = sock:receive(n)
    else data, err = sock:receiveany(n) end
    if not data then return fail(st, err) end
    st.remaining = st.remaining - #data
    if st.remaining == 0 then finish(st) end -- released at once
    return data
  elseif mode == "chunked" then
    while st.chunk_left == 0 do
      local line
      if st.need_crlf then
        line, err = sock:receive("*l")
        if not line then return fail(st, err) end
        if line ~= "" then
          return fail(st, malformed("chunk", line))
        end
        st.need_crlf = false
      end
      line, err = sock:receive("*l")
      if not line then
        if err == "line too long" then
          return fail(st, "malformed chunk: size line too long")
        end
        return fail(st, err)
      end
      local size = chunk_size(line)
      if not size then return fail(st, malformed("chunk", line)) end
      if size == 0 then
        local t = new_headers()
        local ok
        ok, err = read_header_block(sock, t, st.max_header)
        if not ok then
          return fail(st, err == HEADER_TOO_LARGE and "trailers too large"
                      or err)
        end
        if next(t) ~= nil then st.res.trailers = t end
        return finish(st)
      end
      st.chunk_left = size
      st.need_crlf = true
    end
    local n = st.chunk_left
    if n > max then n = max end
    if whole then data, err = sock:receive(n)
    else data, err = sock:receiveany(n) end
    if not data then return fail(st, err) end
    st.chunk_left = st.chunk_left - #data
    return data
  elseif mode == "close" then
    data, err = sock:receiveany(max)
    if not data then
      if err == "closed" then return finish(st) end
      return fail(st, err)
    end
    return data
  end
  return finish(st) -- "none"
end

-- the rest of the body in one string | nil, err
local function read_rest(st)
  if st.done then return "" end
  if st.err then return nil, st.err end
  local limit = st.max_body
  if limit and st.mode == "length" and st.remaining > limit then
    return fail(st, BODY_TOO_LARGE)
  end
  local parts, n = {}, 0
  while true do
    local max = st.mode == "close" and ANY_PIECE or math.maxinteger
    if limit and max > limit - n + 1 then max = limit - n + 1 end
    local data, err = next_piece(st, max, true)
    if not data then
      if err then return nil, err end
      break
    end
    n = n + #data
    if limit and n > limit then return fail(st, BODY_TOO_LARGE) end
    parts[#parts + 1] = data
  end
  return concat(parts)
end

local Response = {}
Response.__index = Response

-- the rest of the body (all of it when nothing was read) | nil, err
function Response:read_body()
  local st = ST[self]
  if not st then return self.body end
  return read_rest(st)
end

-- abandons what is left of the body: its connection is closed (it goes
-- to the pool when the body had been read to its end). Returns 1.
function Response:close()
  local st = ST[self]
  if st and not st.done and not st.err then
    fail(st, "closed")
    self.error = nil
  end
  return 1
end

Response.__close = Response.close

-- the framing of the body (RFC 9112 6.3) and whether the connection may
-- be kept: mode, length | nil, err
local function body_mode(method, status, version, h, close)
  local keep = not close
  local conn = tokens(h.connection)
  if conn.close or (version < 1.1 and not conn["keep-alive"]) then
    keep = false
  end
  if method == "HEAD" or status == 204 or status == 304
     or (status >= 100 and status < 200) then
    if status == 101 then keep = false end
    return "none", nil, keep
  end
  local te = h["transfer-encoding"]
  if te ~= nil then
    local _, list = tokens(te)
    if h["content-length"] ~= nil then keep = false end -- smuggling-shaped
    if list[#list] == "chunked" then return "chunked", nil, keep end
    return "close", nil, false
  end
  local cl = h["content-length"]
  if cl ~= nil then
    local n = content_length(cl)
    if not n then
      return nil, "bad content-length: " .. show(concat(values(cl), ", "))
    end
    return "length", n, keep
  end
  return "close", nil, false
end

-- one exchange on a connected socket: res | nil, err, retryable
local function exchange(sock, opts, u, method, head, chunked, close)
  local ok, err = send_request(sock, head, opts.body, chunked)
  if not ok then
    sock:close()
    return nil, err, true
  end
  local max_header = opts.max_header_size or MAX_HEADER
  local budget = max_header
  local status, reason, version, h
  repeat -- skip 1xx interim responses (100 Continue, 103 Early Hints)
    local left
    status, reason, version, left = read_status(sock, budget)
    if not status then -- version: whether nothing at all was received
      sock:close()
      return nil, reason, version == true and budget == max_header
    end
    budget = left
    h = new_headers()
    budget, err = read_header_block(sock, h, budget)
    if not budget then
      sock:close()
      return nil, err
    end
  until status >= 200 or status == 101

  local mode, length, keep = body_mode(method, status, version, h, close)
  if not mode then
    sock:close()
    return nil, length
  end
  local res = setmetatable({
    status = status, reason = reason, version = version, headers = h,
    reused = sock:getreusedtimes(), complete = false,
  }, Response)
  local st = {
    sock = sock, mode = mode, remaining = length, chunk_left = 0,
    need_crlf = false, keepalive = keep, ka_timeout = opts.keepalive_timeout,
    max_header = max_header, max_body = opts.max_body_size, res = res,
  }
  if mode == "chunked" then sock:setoption("maxline", max_header) end
  if mode == "none" or (mode == "length" and length == 0) then
    finish(st)
  end
  if opts.stream then
    ST[res] = st
    res.body_reader = function(max)
      if max == nil then
        max = READ_PIECE
      else
        max = tointeger(max)
        if not max or max < 1 then
          error("bad argument #1 to 'body_reader' (positive integer "
                .. "expected)", 2)
        end
      end
      if st.done then return nil end
      if st.err then return nil, st.err end
      return next_piece(st, max, false)
    end
    return res
  end
  local body
  body, err = read_rest(st)
  if not body then return nil, err end
  res.body = body
  return res
end

-- request(opts) or request(url): see the top of this file
function _M.request(opts)
  local u, method
  opts, u, method = check_opts(opts)
  local head, chunked, close = build_head(opts, u, method)
  local replayable = type(opts.body) ~= "function" and IDEMPOTENT[method]
  local copts, pool = nil, opts.pool
  if not pool and u.scheme == "https" then
    -- a TLS connection is pooled apart from plain ones to the same port,
    -- and from those verified otherwise
    pool = fmt("%s:%d:https:%s", u.host, u.port,
               opts.ssl_verify == false and "noverify" or "verify")
  end
  if pool or opts.pool_size or opts.backlog then
    copts = { pool = pool, pool_size = opts.pool_size,
              backlog = opts.backlog }
  end
  local t = opts.timeout or 0
  local ct = opts.connect_timeout or t
  local wt = opts.send_timeout or t
  local rt = opts.read_timeout or t

  for attempt = 1, 2 do
    local sock = tcp()
    sock:settimeouts(ct, wt, rt)
    -- an IPv6 literal goes in brackets, as nginx's URL parser wants it
    local chost = u.host:find(":", 1, true) and "[" .. u.host .. "]"
                  or u.host
    local ok, err = sock:connect(chost, u.port, copts)
    if not ok then return nil, err end
    if u.scheme == "https" then -- at once on a pooled TLS connection
      ok, err = sock:sslhandshake(false, nil, opts.ssl_verify)
      if not ok then return nil, err end -- the socket is closed
    end
    local reused = sock:getreusedtimes()
    local res, retry
    res, err, retry = exchange(sock, opts, u, method, head, chunked, close)
    if res then return res end
    -- a pooled connection the server had closed: once more, on a new one
    if not (retry and reused > 0 and replayable and attempt == 1
            and (err == "closed" or err == "connection reset by peer"
                 or err == "broken pipe")) then
      return nil, err
    end
  end
end

return _M
