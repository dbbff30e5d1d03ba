-- Conformance: lua-nginx-module's TLS cosocket tests replayed on
-- corosched: t/129-ssl-socket.t (TEST 1-35, the version at 007f7b60, the
-- newest: "ssl handshake: cdata", the HTTP/3 skip; 4061965c is older)
-- and t/162-socket-tls-handshake.t (TEST 1-7 of its setclientcert
-- versions, c1d37882 and a later one whose TEST 1 is www.bing.com, the
-- same otherwise; the first one, 3ee72707, used tlshandshake(options),
-- which corosched does not have, and is not replayed). Each `it` is one
-- OpenResty block, named after it; its content_by_lua code runs through
-- the ngx global of corosched.ngx and what it prints with ngx.say is
-- compared with the block's --- response_body, byte for byte.
--
-- The nginx side is a TLS peer (spec/support/tls_peer.py through
-- spec/support/tls.lua): `server { listen ... ssl; }` is its "http" mode
-- (answers 200 with "method=.. path=.. sni=..", no Server line, so the
-- received lines are the peer's, not nginx's 201/302/404), a unix socket
-- listener is a corosched relay in front of it (the peer listens on TCP
-- only), and nginx's test.crt (self-signed) is the test "self"
-- certificate. Blocks that talk to public hosts (google, openresty.org,
-- agentzh.org) are replayed against a local peer when their subject is
-- the cosocket (SNI, verification results, session reuse, keepalive,
-- repeated handshakes, the handshake timeout): the host is "localhost"
-- (or 127.0.0.1 for the IP of TEST 17/18), its certificate the test
-- "server" one, the DST root of lua_ssl_trusted_certificate the test CA,
-- and a server_name that must verify ("openresty.org") becomes
-- "test.corosched" (a name in that certificate). What the blocks check in
-- the error log about the handshake (the SNI sent, "SSL reused session",
-- the version and cipher, a pooled connection being used) is checked in
-- what the peer logged.
--
-- Mappings: lua_ssl_trusted_certificate X is cs.socket.setcafile(X) for
-- the run (nil again after it); lua_ssl_verify_depth has no equivalent
-- (ours is fixed at 32: the 2 and 5 of TEST 5, 6, 8, 12, 17, 18 do not
-- matter with chains of one or two certificates); an ssl_verify the
-- block leaves out (OpenResty: no verification) is passed as false
-- (README: ours verifies unless ssl_verify is false); type(session) is
-- "userdata" (LuaJIT's cdata, lua-resty-core's FFI; the blocks said
-- userdata before, e.g. at 4061965c); settimeout(2000-7000) is T (1 s,
-- longer in the slow modes); ngx.var.openresty_org_ip is "127.0.0.1".
--
-- 129, covered: 1-8, 11, 12, 15, 17, 18, 20-22, 24-32 (15, 32: only the
--   server side's ssl_protocols; lua_ssl_protocols has no equivalent,
--   ours always offers TLS 1.2 and 1.3). 27 found a bug, since fixed
--   (sslhandshake(true) raised). 1, 5, 6, 11, 22, 30: DIVERGENCE,
--   pending. 31 was one until the count of arguments was checked before
--   the type of self, as lua-resty-core does.
-- 129, skipped:
--   9, 10: lua_ssl_verify_depth 0 (ours is fixed at 32)
--   13, 16: lua_ssl_protocols (TLSv1, SSLv2) against openresty.org, and
--     the cipher nginx logs
--   14, 33, 34: lua_ssl_ciphers / lua_ssl_conf_command Ciphersuites
--   19: ngx.req.socket() (no downstream cosocket here)
--   23: lua_ssl_crl (no CRL support)
--   35: lua_ssl_key_log (no key log)
-- 162, covered: 4 (DIVERGENCE, pending), 6, 7 (found a difference, since
--   fixed: a missing certificate or key raised).
-- 162, skipped:
--   1: www.bing.com (the Internet; the same code is 129 TEST 1)
--   2: nginx's ssl_verify_client accepts the handshake and answers 400;
--     the peer (tls.server client_ca) refuses it: no such peer here
--   3, 5: ngx.ssl.parse_pem_cert/priv_key cdata (ours takes PEM strings;
--     spec/14 covers client certificates)
-- Not replayed: files whose subject is nginx's own TLS server side or
-- directives (ssl_certificate_by_lua, ssl_client_hello_by_lua, ngx.ssl,
-- lua_ssl_certificate), e.g. 139-ssl-cert-by.t, 166-ssl-client-hello.t,
-- 187-ssl-two-verification.t.
local helper = require "spec.helper"
local net = require "spec.support.net"
local tls = require "spec.support.tls"
local cs = helper.cs
local ngxc = require "corosched.ngx"
local ngx_env = require "spec.support.ngx_env"
local lines = ngx_env.lines

-- describe, or a pending test when python3 or openssl is missing
local describe_tls = tls.describer(describe, pending)

-- the ngx and unpack globals and the package.preload/loaded entries that
-- install() adds are put back after each test (see spec/40-ngx_spec.lua)
local save_globals, restore_globals = ngx_env.saver()

-- the blocks' settimeout(2000) and the like: 1 s (a local peer), more
-- under valgrind, ASan and the short-I/O mode
local T = math.floor(1000 * helper.slack)

-- Runs fn(ngx) with net.run (a deadline, the leak checks) and the ngx
-- global installed; returns what it wrote with ngx.say/ngx.print (the
-- response body). opts.trusted: the block's lua_ssl_trusted_certificate
-- (cs.socket.setcafile for the run).
local function run(fn, opts)
  opts = opts or {}
  local buf, real = {}, io.stdout
  if opts.trusted then assert(cs.socket.setcafile(opts.trusted)) end
  io.stdout = ngx_env.sink(buf)
  local ok, err = pcall(net.run, function() return fn(ngxc.install()) end,
                        opts)
  io.stdout = real
  if opts.trusted then assert(cs.socket.setcafile(nil)) end
  if not ok then error(err, 0) end
  return table.concat(buf)
end

-- The lines a block that reads the whole response prints for the peer's
-- answer to a request for path (nginx's 201 Created, Server: nginx, foo):
-- the body ("method=GET path=<path> sni=<sni>") has no newline, so the
-- receive() that returns it fails with "closed" and it is not printed.
local function peer_lines(path, sni)
  local body = "method=GET path=" .. path .. " sni=" .. sni
  return "received: HTTP/1.1 200 OK", "received: Content-Type: text/plain",
    "received: Content-Length: " .. #body, "received: Connection: close",
    "received: "
end

-- the test ends pending: what it printed matched OpenResty's body except
-- where `reason` says (a difference the README documents)
local function divergence(reason)
  pending("DIVERGENCE: " .. reason)
end

describe_tls("conformance: lua-nginx-module TLS cosockets", function()
  local C -- the certificates (tls.certs())
  local servers, files = {}, {}

  -- a peer, stopped after the test
  local function server(opts)
    local s = tls.server(opts)
    servers[#servers + 1] = s
    return s
  end

  -- a file holding the PEM files given, one after the other (a
  -- trusted.crt with several certificates); removed after the test
  local function bundle(...)
    local path = os.tmpname()
    local f = assert(io.open(path, "wb"))
    for _, p in ipairs({ ... }) do assert(f:write(tls.read(p))) end
    f:close()
    files[#files + 1] = path
    return path
  end

  -- What the peer logged of the handshakes it completed, in order:
  -- { version, cipher, sni ("-": none), cn, reused }. Waits (inside a
  -- run) until there are at least n of them (the peer logs after its side
  -- of the handshake, which may end after the client's), then a little
  -- more so that one too many would show.
  local function handshakes(srv, n)
    local function parse()
      local t = {}
      for v, c, sni, cn, r in srv:log():gmatch("handshake done: (%S+) "
          .. "(%S+) sni=(%S+) cn=(%S+) reused=(%d)") do
        t[#t + 1] = { version = v, cipher = c, sni = sni, cn = cn,
                      reused = r == "1" }
      end
      return t
    end
    net.wait_until(function() return #parse() >= n end)
    cs.sleep(0.05)
    return parse()
  end

  -- A unix socket in front of srv (inside a run): accepts n connections
  -- (default 1) on a fresh path and pipes each, both ways, to the peer's
  -- TCP port, until either side closes. Returns "unix:<path>". The
  -- listener goes after the n-th connection, or when none came for a
  -- while.
  local function unix_relay(srv, n)
    local path = net.unix_path()
    local lsn = assert(cs.socket.listen("unix:" .. path))
    lsn:settimeout(5 * T)
    local function pipe(from, to)
      while true do
        local data = from:receiveany(65536)
        if not data or not to:send(data) then break end
      end
      from:close()
      to:close()
    end
    cs.thread.spawn(function()
      for _ = 1, n or 1 do
        local c = lsn:accept()
        if not c then break end
        local up = cs.socket.tcp()
        if up:connect("127.0.0.1", srv.port) then
          cs.thread.spawn(pipe, c, up)
          cs.thread.spawn(pipe, up, c)
        else
          c:close()
        end
      end
      lsn:close()
      os.remove(path)
    end)
    return "unix:" .. path
  end

  -- takes the idle connection of the pool of (host [, port]) and closes
  -- it (pools outlive cs.run; helper.run fails on a socket left open);
  -- returns its getreusedtimes()
  local function unpool(host, port)
    local s = cs.socket.tcp()
    if port then
      assert(s:connect(host, port))
    else
      assert(s:connect(host))
    end
    local n = s:getreusedtimes()
    s:close()
    return n
  end

  setup(function()
    C = tls.certs()
  end)

  before_each(save_globals)

  after_each(function()
    restore_globals()
    for _, s in ipairs(servers) do s:stop() end
    servers = {}
    for _, p in ipairs(files) do os.remove(p) end
    files = {}
    helper.after_each()
  end)

  teardown(function()
    tls.cleanup()
  end)

  -------------------------------------------------------------------------
  -- t/129-ssl-socket.t

  describe("129-ssl-socket.t", function()
    -- OpenResty sends no SNI when server_name is nil; ours sends the
    -- host given to connect (README, TLS: "SNI carries the same name")
    it("129 TEST 1: www.google.com", function()
      local srv = server({ mode = "http" })
      local sni
      local body = run(function(ngx)
        -- (the block's counter against "check leak" mode: not needed)
        do
          local sock = ngx.socket.tcp()
          sock:settimeout(T)
          local ok, err = sock:connect("localhost", srv.port)
          if not ok then
            ngx.say("failed to connect: ", err)
            return
          end

          ngx.say("connected: ", ok)

          local sess, err = sock:sslhandshake(nil, nil, false)
          if not sess then
            ngx.say("failed to do SSL handshake: ", err)
            return
          end

          ngx.say("ssl handshake: ", type(sess))

          local req = "GET / HTTP/1.1\r\nHost: www.google.com\r\n"
            .. "Connection: close\r\n\r\n"
          local bytes, err = sock:send(req)
          if not bytes then
            ngx.say("failed to send http request: ", err)
            return
          end

          ngx.say("sent http request: ", bytes, " bytes.")

          local line, err = sock:receive()
          if not line then
            ngx.say("failed to receive response status line: ", err)
            return
          end

          ngx.say("received: ", line)

          local ok, err = sock:close()
          ngx.say("close: ", ok, " ", err)
        end  -- do
        collectgarbage()
        local hs = handshakes(srv, 1)
        assert.equal(1, #hs)
        assert.is_false(hs[1].reused) -- no "SSL reused session"
        sni = hs[1].sni
      end)
      assert.equal(lines("connected: 1", "ssl handshake: userdata",
                         "sent http request: 59 bytes.",
                         "received: HTTP/1.1 200 OK", "close: 1 nil"), body)
      -- OpenResty: no_error_log "lua ssl server name:" (no SNI: "-")
      assert.equal("localhost", sni)
      divergence("SNI: with no server_name OpenResty sends none; ours "
                 .. "sends the host given to connect, \"localhost\" "
                 .. "(README, TLS)")
    end)

    it("129 TEST 2: no SNI, no verify", function()
      local srv = server({ mode = "http", cert = C.self_crt,
                           key = C.self_key })
      local body = run(function(ngx)
        do
          local sock = ngx.socket.tcp()
          sock:settimeout(T)
          local ok, err = sock:connect("127.0.0.1", srv.port)
          if not ok then
            ngx.say("failed to connect: ", err)
            return
          end

          ngx.say("connected: ", ok)

          local session, err = sock:sslhandshake(nil, nil, false)
          if not session then
            ngx.say("failed to do SSL handshake: ", err)
            return
          end

          ngx.say("ssl handshake: ", type(session))

          local req = "GET / HTTP/1.1\r\nHost: test.com\r\n"
            .. "Connection: close\r\n\r\n"
          local bytes, err = sock:send(req)
          if not bytes then
            ngx.say("failed to send http request: ", err)
            return
          end

          ngx.say("sent http request: ", bytes, " bytes.")

          local line, err = sock:receive()
          if not line then
            ngx.say("failed to receive response status line: ", err)
            return
          end

          ngx.say("received: ", line)

          local ok, err = sock:close()
          ngx.say("close: ", ok, " ", err)
        end  -- do
        collectgarbage()
        local hs = handshakes(srv, 1)
        assert.equal(1, #hs)
        assert.equal("-", hs[1].sni) -- no "lua ssl server name:"
        assert.is_false(hs[1].reused)
      end)
      assert.equal(lines("connected: 1", "ssl handshake: userdata",
                         "sent http request: 53 bytes.",
                         "received: HTTP/1.1 200 OK", "close: 1 nil"), body)
    end)

    it("129 TEST 3: SNI, no verify", function()
      local srv = server({ mode = "http" })
      local body = run(function(ngx)
        local sock = ngx.socket.tcp()
        sock:settimeout(T)

        do
          local ok, err = sock:connect("localhost", srv.port)
          if not ok then
            ngx.say("failed to connect: ", err)
            return
          end

          ngx.say("connected: ", ok)

          local session, err = sock:sslhandshake(nil, "openresty.org",
                                                 false)
          if not session then
            ngx.say("failed to do SSL handshake: ", err)
            return
          end

          ngx.say("ssl handshake: ", type(session))

          local req = "GET / HTTP/1.1\r\nHost: openresty.org\r\n"
            .. "Connection: close\r\n\r\n"
          local bytes, err = sock:send(req)
          if not bytes then
            ngx.say("failed to send http request: ", err)
            return
          end

          ngx.say("sent http request: ", bytes, " bytes.")

          local line, err = sock:receive()
          if not line then
            ngx.say("failed to receive response status line: ", err)
            return
          end

          ngx.say("received: ", line)

          local ok, err = sock:close()
          ngx.say("close: ", ok, " ", err)
        end  -- do
        collectgarbage()
        local hs = handshakes(srv, 1)
        assert.equal(1, #hs)
        assert.equal("openresty.org", hs[1].sni)
        assert.is_false(hs[1].reused)
      end)
      -- (openresty.org answers 302 Moved Temporarily)
      assert.equal(lines("connected: 1", "ssl handshake: userdata",
                         "sent http request: 58 bytes.",
                         "received: HTTP/1.1 200 OK", "close: 1 nil"), body)
    end)

    -- lua_ssl_protocols TLSv1.2: the peer's side (TLS 1.3 resumption is
    -- a best effort, README)
    it("129 TEST 4: ssl session reuse", function()
      local srv = server({ mode = "http", max_version = "1.2" })
      local body = run(function(ngx)
        local sock = ngx.socket.tcp()
        sock:settimeout(T)

        do

        local session
        for i = 1, 2 do -- luacheck: ignore i
          local ok, err = sock:connect("localhost", srv.port)
          if not ok then
            ngx.say("failed to connect: ", err)
            return
          end

          ngx.say("connected: ", ok)

          session, err = sock:sslhandshake(session, "agentzh.org", false)
          if not session then
            ngx.say("failed to do SSL handshake: ", err)
            return
          end

          ngx.say("ssl handshake: ", type(session))

          local req = "GET / HTTP/1.1\r\nHost: agentzh.org\r\n"
            .. "Connection: close\r\n\r\n"
          local bytes, err = sock:send(req)
          if not bytes then
            ngx.say("failed to send http request: ", err)
            return
          end

          ngx.say("sent http request: ", bytes, " bytes.")

          local line, err = sock:receive()
          if not line then
            ngx.say("failed to receive response status line: ", err)
            return
          end

          ngx.say("received: ", line)

          local ok, err = sock:close()
          ngx.say("close: ", ok, " ", err)
        end

        end -- do
        collectgarbage()
        -- error_log: "SSL reused session" (the second handshake)
        local hs = handshakes(srv, 2)
        assert.equal(2, #hs)
        assert.is_false(hs[1].reused)
        assert.is_true(hs[2].reused)
        assert.equal("agentzh.org", hs[2].sni)
        assert.equal("TLSv1.2", hs[2].version)
      end)
      local one = { "connected: 1", "ssl handshake: userdata",
                    "sent http request: 56 bytes.",
                    "received: HTTP/1.1 200 OK", "close: 1 nil" }
      assert.equal(lines(table.unpack(one)) .. lines(table.unpack(one)),
                   body)
    end)

    -- OpenResty: "certificate host mismatch" (or "handshake failed")
    local function host_mismatch_block(srv, host_header)
      return function(ngx)
        local sock = ngx.socket.tcp()
        sock:settimeout(T)

        do
          local ok, err = sock:connect("localhost", srv.port)
          if not ok then
            ngx.say("failed to connect: ", err)
            return
          end

          ngx.say("connected: ", ok)

          local session, err = sock:sslhandshake(nil, "blah.openresty.org",
                                                 true)
          if not session then
            ngx.say("failed to do SSL handshake: ", err)
          else
            ngx.say("ssl handshake: ", type(session))
          end

          local req = "GET / HTTP/1.1\r\nHost: " .. host_header .. "\r\n"
            .. "Connection: close\r\n\r\n"
          local bytes, err = sock:send(req)
          if not bytes then
            ngx.say("failed to send http request: ", err)
            return
          end

          ngx.say("sent http request: ", bytes, " bytes.")

          local line, err = sock:receive()
          if not line then
            ngx.say("failed to receive response status line: ", err)
            return
          end

          ngx.say("received: ", line)

          local ok, err = sock:close()
          ngx.say("close: ", ok, " ", err)
        end  -- do
        collectgarbage()
      end
    end

    it("129 TEST 5: certificate does not match host name (verify)",
       function()
      local srv = server({ mode = "http" })
      local body = run(host_mismatch_block(srv, "openresty.org"),
                       { trusted = C.ca_crt })
      -- OpenResty: "failed to do SSL handshake: (?:handshake failed|
      -- certificate host mismatch)"
      assert.equal(lines("connected: 1", "failed to do SSL handshake: "
                           .. "handshake failed: hostname mismatch",
                         "failed to send http request: closed"), body)
      divergence("the error is \"handshake failed: hostname mismatch\"; "
                 .. "OpenResty says \"certificate host mismatch\" "
                 .. "(README, TLS: errors)")
    end)

    -- lua_socket_log_errors off: the same body
    it("129 TEST 6: certificate does not match host name (verify, no log "
       .. "socket errors)", function()
      local srv = server({ mode = "http" })
      local body = run(host_mismatch_block(srv, "blah.openresty.org"),
                       { trusted = C.ca_crt })
      assert.equal(lines("connected: 1", "failed to do SSL handshake: "
                           .. "handshake failed: hostname mismatch",
                         "failed to send http request: closed"), body)
      divergence("the error is \"handshake failed: hostname mismatch\"; "
                 .. "OpenResty says \"certificate host mismatch\" "
                 .. "(README, TLS: errors)")
    end)

    it("129 TEST 7: certificate does not match host name (no verify)",
       function()
      -- a certificate for other.example only
      local srv = server({ mode = "http", cert = C.other_crt,
                           key = C.other_key })
      local body = run(function(ngx)
        local sock = ngx.socket.tcp()
        sock:settimeout(T)

        do
          local ok, err = sock:connect("localhost", srv.port)
          if not ok then
            ngx.say("failed to connect: ", err)
            return
          end

          ngx.say("connected: ", ok)

          local session, err = sock:sslhandshake(nil, "openresty.org",
                                                 false)
          if not session then
            ngx.say("failed to do SSL handshake: ", err)
            return
          end

          ngx.say("ssl handshake: ", type(session))

          local req = "GET /en/linux-packages.html HTTP/1.1\r\n"
            .. "Host: openresty.com\r\nConnection: close\r\n\r\n"
          local bytes, err = sock:send(req)
          if not bytes then
            ngx.say("failed to send http request: ", err)
            return
          end

          ngx.say("sent http request: ", bytes, " bytes.")

          local line, err = sock:receive()
          if not line then
            ngx.say("failed to receive response status line: ", err)
            return
          end

          ngx.say("received: ", line)

          local ok, err = sock:close()
          ngx.say("close: ", ok, " ", err)
        end  -- do
        collectgarbage()
        local hs = handshakes(srv, 1)
        assert.equal("openresty.org", hs[1].sni)
      end)
      -- (openresty.org answers 404 Not Found)
      assert.equal(lines("connected: 1", "ssl handshake: userdata",
                         "sent http request: 80 bytes.",
                         "received: HTTP/1.1 200 OK", "close: 1 nil"), body)
    end)

    -- a block that verifies "test.corosched" (openresty.org in the
    -- block) against the CA in `trusted`, then asks for / (TEST 8, 12)
    local function verify_block(srv)
      return function(ngx)
        local sock = ngx.socket.tcp()
        sock:settimeout(T)

        do
          local ok, err = sock:connect("localhost", srv.port)
          if not ok then
            ngx.say("failed to connect: ", err)
            return
          end

          ngx.say("connected: ", ok)

          local session, err = sock:sslhandshake(nil, "test.corosched",
                                                 true)
          if not session then
            ngx.say("failed to do SSL handshake: ", err)
            return
          end

          ngx.say("ssl handshake: ", type(session))

          local req = "GET / HTTP/1.1\r\nHost: openresty.org\r\n"
            .. "Connection: close\r\n\r\n"
          local bytes, err = sock:send(req)
          if not bytes then
            ngx.say("failed to send http request: ", err)
            return
          end

          ngx.say("sent http request: ", bytes, " bytes.")

          local line, err = sock:receive()
          if not line then
            ngx.say("failed to receive response status line: ", err)
            return
          end

          ngx.say("received: ", line)

          local ok, err = sock:close()
          ngx.say("close: ", ok, " ", err)
        end  -- do
        collectgarbage()
      end
    end

    local VERIFIED = lines("connected: 1", "ssl handshake: userdata",
                           "sent http request: 58 bytes.",
                           "received: HTTP/1.1 200 OK", "close: 1 nil")

    it("129 TEST 8: openresty.org: passing SSL verify", function()
      local srv = server({ mode = "http" })
      local sni
      local body = run(function(ngx)
        verify_block(srv)(ngx)
        sni = handshakes(srv, 1)[1].sni
      end, { trusted = C.ca_crt })
      assert.equal(VERIFIED, body)
      assert.equal("test.corosched", sni)
    end)

    -- trusted.crt: a root that did not sign the server's certificate
    -- (Equifax in the block; the self-signed test certificate here)
    it("129 TEST 11: openresty.org: SSL verify enabled and no "
       .. "corresponding trusted certificates", function()
      local srv = server({ mode = "http" })
      local body = run(verify_block(srv), { trusted = C.self_crt })
      -- OpenResty: "failed to do SSL handshake: 20: unable to get local
      -- issuer certificate"
      assert.equal(lines("connected: 1", "failed to do SSL handshake: "
                           .. "handshake failed: unable to get local "
                           .. "issuer certificate"), body)
      divergence("the error is \"handshake failed: <reason>\"; OpenResty "
                 .. "says \"<X509 code>: <reason>\", \"20: unable to get "
                 .. "local issuer certificate\" (README, TLS: errors)")
    end)

    it("129 TEST 12: openresty.org: passing SSL verify with multiple "
       .. "certificates", function()
      local srv = server({ mode = "http" })
      local body = run(verify_block(srv),
                       { trusted = bundle(C.self_crt, C.ca_crt) })
      assert.equal(VERIFIED, body)
    end)

    -- a unix socket block asking for /foo with HTTP/1.0 and reading the
    -- whole answer; handshake(sock) does the handshake (TEST 15, 20, 21,
    -- 29, 32)
    local function foo_block(path, handshake)
      return function(ngx)
        do
          local sock = ngx.socket.tcp()
          sock:settimeout(T)
          local ok, err = sock:connect(path)
          if not ok then
            ngx.say("failed to connect: ", err)
            return
          end

          ngx.say("connected: ", ok)

          local sess, err = handshake(sock)
          if not sess then
            ngx.say("failed to do SSL handshake: ", err)
            return
          end

          ngx.say("ssl handshake: ", type(sess))

          local req = "GET /foo HTTP/1.0\r\nHost: test.com\r\n"
            .. "Connection: close\r\n\r\n"
          local bytes, err = sock:send(req)
          if not bytes then
            ngx.say("failed to send http request: ", err)
            return
          end

          ngx.say("sent http request: ", bytes, " bytes.")

          while true do
            local line, err = sock:receive() -- luacheck: ignore err
            if not line then
              -- ngx.say("failed to receive response status line: ", err)
              break
            end

            ngx.say("received: ", line)
          end

          local ok, err = sock:close()
          ngx.say("close: ", ok, " ", err)
        end  -- do
        collectgarbage()
      end
    end

    -- lua_ssl_protocols TLSv1.2 has no equivalent: the server's
    -- ssl_protocols TLSv1.2 alone makes it TLS 1.2. The block asks for /
    -- and reads the status line only.
    it("129 TEST 15: explicit ssl protocol configuration", function()
      local srv = server({ mode = "http", cert = C.self_crt,
                           key = C.self_key, max_version = "1.2" })
      local hs
      local body = run(function(ngx)
        local path = unix_relay(srv)
        local sock = ngx.socket.tcp()
        sock:settimeout(T)

        do
          local ok, err = sock:connect(path)
          if not ok then
            ngx.say("failed to connect: ", err)
            return
          end

          ngx.say("connected: ", ok)

          local session, err = sock:sslhandshake(nil, "test.com", false)
          if not session then
            ngx.say("failed to do SSL handshake: ", err)
            return
          end

          ngx.say("ssl handshake: ", type(session))

          local req = "GET / HTTP/1.1\r\nHost: test.com\r\n"
            .. "Connection: close\r\n\r\n"
          local bytes, err = sock:send(req)
          if not bytes then
            ngx.say("failed to send http request: ", err)
            return
          end

          ngx.say("sent http request: ", bytes, " bytes.")

          local line, err = sock:receive()
          if not line then
            ngx.say("failed to receive response status line: ", err)
            return
          end

          ngx.say("received: ", line)

          local ok, err = sock:close()
          ngx.say("close: ", ok, " ", err)
        end  -- do
        collectgarbage()
        hs = handshakes(srv, 1)
      end)
      assert.equal(lines("connected: 1", "ssl handshake: userdata",
                         "sent http request: 53 bytes.",
                         "received: HTTP/1.1 200 OK", "close: 1 nil"), body)
      -- error_log: 'lua ssl server name: "test.com"', "SSL: TLSv1.2"
      assert.equal("test.com", hs[1].sni)
      assert.equal("TLSv1.2", hs[1].version)
    end)

    -- the block of TEST 17 and 18: three connects to the same address,
    -- each followed by a handshake and setkeepalive; `reuse`: pass the
    -- session of the previous handshake back
    local function keepalive_block(srv, reuse)
      return function(ngx)
        local sock = ngx.socket.tcp()
        sock:settimeout(T)

        do

        local session
        for i = 1, 3 do -- luacheck: ignore i
          -- Use the same IP to ensure that the connection can be reused
          local ok, err = sock:connect("127.0.0.1", srv.port)
          if not ok then
            ngx.say("failed to connect: ", err)
            return
          end

          ngx.say("connected: ", ok)

          if reuse then
            session, err = sock:sslhandshake(session, "test.corosched",
                                             true)
          else
            session, err = sock:sslhandshake(nil, "test.corosched", true)
          end
          if not session then
            ngx.say("failed to do SSL handshake: ", err)
            return
          end

          ngx.say("ssl handshake: ", type(session))

          local ok, err = sock:setkeepalive()
          ngx.say("set keepalive: ", ok, " ", err)
        end  -- do

        end
        collectgarbage()
      end
    end

    local KEPT = { "connected: 1", "ssl handshake: userdata",
                   "set keepalive: 1 nil" }

    -- error_log "lua tcp socket get keepalive peer: using connection", no
    -- "SSL reused session": one connection, one handshake
    local function check_keepalive(srv, reuse)
      local hs
      local body = run(function(ngx)
        keepalive_block(srv, reuse)(ngx)
        hs = handshakes(srv, 1)
        -- the pooled connection, taken the 2nd and the 3rd time
        assert.equal(3, unpool("127.0.0.1", srv.port))
      end, { trusted = C.ca_crt })
      assert.equal(lines(table.unpack(KEPT)) .. lines(table.unpack(KEPT))
                   .. lines(table.unpack(KEPT)), body)
      assert.equal(1, #hs)
      assert.is_false(hs[1].reused)
      assert.equal(1, select(2, srv:log():gsub("accepted from", "")))
    end

    it("129 TEST 17: openresty.org: passing SSL verify: keepalive (reuse "
       .. "the ssl session)", function()
      check_keepalive(server({ mode = "http" }), true)
    end)

    it("129 TEST 18: openresty.org: passing SSL verify: keepalive (no "
       .. "reusing the ssl session)", function()
      check_keepalive(server({ mode = "http" }), false)
    end)

    it("129 TEST 20: unix domain ssl cosocket (no verify)", function()
      local srv = server({ mode = "http", cert = C.self_crt,
                           key = C.self_key })
      local sni
      local body = run(function(ngx)
        foo_block(unix_relay(srv), function(sock)
          return sock:sslhandshake(nil, nil, false)
        end)(ngx)
        sni = handshakes(srv, 1)[1].sni
      end)
      assert.equal(lines("connected: 1", "ssl handshake: userdata",
                         "sent http request: 56 bytes.",
                         peer_lines("/foo", "-")) .. "close: 1 nil\n", body)
      assert.equal("-", sni) -- no "lua ssl server name:"
    end)

    -- lua_ssl_trusted_certificate test.crt, the server's own
    -- self-signed certificate; "test.com" is "localhost" (in it)
    it("129 TEST 21: unix domain ssl cosocket (verify)", function()
      local srv = server({ mode = "http", cert = C.self_crt,
                           key = C.self_key })
      local sni
      local body = run(function(ngx)
        foo_block(unix_relay(srv), function(sock)
          return sock:sslhandshake(nil, "localhost", true)
        end)(ngx)
        sni = handshakes(srv, 1)[1].sni
      end, { trusted = C.self_crt })
      assert.equal(lines("connected: 1", "ssl handshake: userdata",
                         "sent http request: 56 bytes.",
                         peer_lines("/foo", "localhost"))
                   .. "close: 1 nil\n", body)
      assert.equal("localhost", sni)
    end)

    it("129 TEST 22: unix domain ssl cosocket (no ssl on server)",
       function()
      -- a plain HTTP server: reads, answers 400 in clear text, closes
      local srv = server({ mode = "plain" })
      local body = run(function(ngx)
        local path = unix_relay(srv)
        do
          local sock = ngx.socket.tcp()

          sock:settimeout(T)

          local ok, err = sock:connect(path)
          if not ok then
            ngx.say("failed to connect: ", err)
            return
          end

          ngx.say("connected: ", ok)

          local sess, err = sock:sslhandshake(nil, nil, false)
          if not sess then
            ngx.say("failed to do SSL handshake: ", err)
            return
          end

          ngx.say("ssl handshake: ", type(sess))
          -- (the request and the reading of the answer: not reached)
        end  -- do
        collectgarbage()
      end)
      -- OpenResty: "failed to do SSL handshake: handshake failed"
      assert.matches("^connected: 1\nfailed to do SSL handshake: "
                     .. "handshake failed: [^\n]+\n$", body)
      divergence("the error is \"handshake failed: <OpenSSL's reason>\" "
                 .. "(" .. body:match("handshake failed: ([^\n]+)")
                 .. "); OpenResty says \"handshake failed\" "
                 .. "(README, TLS: errors)")
    end)

    it("129 TEST 24: multiple handshake calls", function()
      local srv = server({ mode = "http" })
      local hs
      local body = run(function(ngx)
        local sock = ngx.socket.tcp()

        sock:settimeout(T)

        do
          local ok, err = sock:connect("localhost", srv.port)
          if not ok then
            ngx.say("failed to connect: ", err)
            return
          end

          ngx.say("connected: ", ok)

          for i = 1, 2 do -- luacheck: ignore i
            local session, err = sock:sslhandshake(nil, "openresty.org",
                                                   false)
            if not session then
              ngx.say("failed to do SSL handshake: ", err)
              return
            end

            ngx.say("ssl handshake: ", type(session))
          end

          local req = "GET / HTTP/1.1\r\nHost: openresty.org\r\n"
            .. "Connection: close\r\n\r\n"
          local bytes, err = sock:send(req)
          if not bytes then
            ngx.say("failed to send http request: ", err)
            return
          end

          ngx.say("sent http request: ", bytes, " bytes.")

          local line, err = sock:receive()
          if not line then
            ngx.say("failed to receive response status line: ", err)
            return
          end

          ngx.say("received: ", line)

          local ok, err = sock:close()
          ngx.say("close: ", ok, " ", err)
        end  -- do
        collectgarbage()
        hs = handshakes(srv, 1)
      end)
      assert.equal(lines("connected: 1", "ssl handshake: userdata",
                         "ssl handshake: userdata",
                         "sent http request: 58 bytes.",
                         "received: HTTP/1.1 200 OK", "close: 1 nil"), body)
      -- the second call returns at once: one handshake
      assert.equal(1, #hs)
      assert.equal("openresty.org", hs[1].sni)
    end)

    -- a peer that accepts and never answers (settimeout(1) against
    -- openresty.org in the block)
    it("129 TEST 25: handshake timed out", function()
      local srv = server({ mode = "hang" })
      local body = run(function(ngx)
        local sock = ngx.socket.tcp()

        sock:settimeout(T)

        do
          local ok, err = sock:connect("localhost", srv.port)
          if not ok then
            ngx.say("failed to connect: ", err)
            return
          end

          ngx.say("connected: ", ok)

          sock:settimeout(1);  -- should timeout immediately
          local session, err = sock:sslhandshake(nil, "openresty.org",
                                                 false)
          if not session then
            ngx.say("failed to do SSL handshake: ", err)
            return
          end

          ngx.say("ssl handshake: ", type(session))
        end  -- do
        collectgarbage()
      end)
      assert.equal(lines("connected: 1",
                         "failed to do SSL handshake: timeout"), body)
    end)

    it("129 TEST 26: unix domain ssl cosocket (no gen session)",
       function()
      local srv = server({ mode = "http", cert = C.self_crt,
                           key = C.self_key })
      local body = run(function(ngx)
        local path = unix_relay(srv)
        do
          local sock = ngx.socket.tcp()
          sock:settimeout(T)
          local ok, err = sock:connect(path)
          if not ok then
            ngx.say("failed to connect: ", err)
            return
          end

          ngx.say("connected: ", ok)

          local sess, err = sock:sslhandshake(false, nil, false)
          if not sess then
            ngx.say("failed to do SSL handshake: ", err)
            return
          end

          ngx.say("ssl handshake: ", sess)

          sock:close()
        end  -- do
        collectgarbage()
      end)
      assert.equal(lines("connected: 1", "ssl handshake: true"), body)
    end)

    -- BUG: sslhandshake(true) raises "session or false expected, got
    -- boolean"; OpenResty takes any value but false as "return the
    -- session" (lua-resty-core's sslhandshake: reused_session ~= false)
    it("129 TEST 27: unix domain ssl cosocket (gen session, true)",
       function()
      local srv = server({ mode = "http", cert = C.self_crt,
                           key = C.self_key })
      local body = run(function(ngx)
        local path = unix_relay(srv)
        do
          local sock = ngx.socket.tcp()
          sock:settimeout(T)
          local ok, err = sock:connect(path)
          if not ok then
            ngx.say("failed to connect: ", err)
            return
          end

          ngx.say("connected: ", ok)

          local sess, err = sock:sslhandshake(true, nil, false)
          if not sess then
            ngx.say("failed to do SSL handshake: ", err)
            return
          end

          ngx.say("ssl handshake: ", type(sess))

          sock:close()
        end  -- do
        collectgarbage()
      end)
      assert.equal(lines("connected: 1", "ssl handshake: userdata"), body)
    end)

    it("129 TEST 28: unix domain ssl cosocket (keepalive)", function()
      local srv = server({ mode = "http", cert = C.self_crt,
                           key = C.self_key })
      local hs
      local body = run(function(ngx)
        local path = unix_relay(srv)
        local sock = ngx.socket.tcp()
        sock:settimeout(T)
        for i = 1, 2 do -- luacheck: ignore i
          local ok, err = sock:connect(path)
          if not ok then
            ngx.say("failed to connect: ", err)
            return
          end

          ngx.say("connected: ", ok)

          local sess, err = sock:sslhandshake(false, nil, false)
          if not sess then
            ngx.say("failed to do SSL handshake: ", err)
            return
          end

          ngx.say("ssl handshake: ", sess)

          local ok, err = sock:setkeepalive()
          if not ok then
            ngx.say("failed to set keepalive: ", err)
            return
          end
        end  -- do
        collectgarbage()
        hs = handshakes(srv, 1)
        assert.equal(2, unpool(path)) -- one connection, pooled twice
      end)
      assert.equal(lines("connected: 1", "ssl handshake: true",
                         "connected: 1", "ssl handshake: true"), body)
      assert.equal(1, #hs)
      assert.equal("-", hs[1].sni)
    end)

    it("129 TEST 29: unix domain ssl cosocket (verify cert but no host "
       .. "name check, passed)", function()
      local srv = server({ mode = "http", cert = C.self_crt,
                           key = C.self_key })
      local body = run(function(ngx)
        foo_block(unix_relay(srv), function(sock)
          return sock:sslhandshake(nil, nil, true)
        end)(ngx)
      end, { trusted = C.self_crt })
      assert.equal(lines("connected: 1", "ssl handshake: userdata",
                         "sent http request: 56 bytes.",
                         peer_lines("/foo", "-")) .. "close: 1 nil\n", body)
    end)

    it("129 TEST 30: unix domain ssl cosocket (verify cert but no host "
       .. "name check, NOT passed)", function()
      local srv = server({ mode = "http", cert = C.self_crt,
                           key = C.self_key })
      local body = run(function(ngx)
        foo_block(unix_relay(srv), function(sock)
          return sock:sslhandshake(nil, nil, true)
        end)(ngx)
      end)
      -- OpenResty: "failed to do SSL handshake: 18: self[- ]signed
      -- certificate"
      assert.matches("^connected: 1\nfailed to do SSL handshake: "
                     .. "handshake failed: self[- ]signed certificate\n$",
                     body)
      divergence("the error is \"handshake failed: <reason>\"; OpenResty "
                 .. "says \"<X509 code>: <reason>\", \"18: self-signed "
                 .. "certificate\" (README, TLS: errors)")
    end)

    -- the handler fails ("500"): what it raised is checked
    it("129 TEST 31: handshake, too few arguments", function()
      local srv = server({ mode = "http" })
      local raised
      local body = run(function(ngx)
        local sock = ngx.socket.tcp()
        sock:settimeout(T)

        local ok, err = sock:connect("localhost", srv.port)
        if not ok then
          ngx.say("failed to connect: ", err)
          return
        end

        ngx.say("connected: ", ok)

        local ok2, e = pcall(function()
          local session, err = sock.sslhandshake() -- luacheck: ignore
        end)
        assert.is_false(ok2)
        raised = e
        sock:close() -- (nginx closes it when the request ends)
      end)
      assert.equal(lines("connected: 1"), body)
      -- OpenResty's error log: "ngx.socket sslhandshake: expecting 1 ~ 5
      -- arguments (including the object), but seen 0"
      assert.matches("_spec%.lua:%d+: ngx%.socket sslhandshake: expecting "
                     .. "1 ~ 5 arguments %(including the object%), but seen "
                     .. "0$", raised)
    end)

    -- lua_ssl_protocols TLSv1.3: the server's ssl_protocols TLSv1.3 alone
    -- (error_log: "SSL: TLSv1.3, cipher: "TLS_AES_256_GCM_SHA384")
    it("129 TEST 32: default cipher -TLSv1.3", function()
      local srv = server({ mode = "http", cert = C.self_crt,
                           key = C.self_key, min_version = "1.3" })
      local hs
      local body = run(function(ngx)
        local path = unix_relay(srv)
        local sock = ngx.socket.tcp()
        sock:settimeout(T)

        do
          local ok, err = sock:connect(path)
          if not ok then
            ngx.say("failed to connect: ", err)
            return
          end

          ngx.say("connected: ", ok)

          local session, err = sock:sslhandshake(nil, "test.com", false)
          if not session then
            ngx.say("failed to do SSL handshake: ", err)
            return
          end

          ngx.say("ssl handshake: ", type(session))

          local req = "GET / HTTP/1.1\r\nHost: test.com\r\n"
            .. "Connection: close\r\n\r\n"
          local bytes, err = sock:send(req)
          if not bytes then
            ngx.say("failed to send http request: ", err)
            return
          end

          ngx.say("sent http request: ", bytes, " bytes.")

          local line, err = sock:receive()
          if not line then
            ngx.say("failed to receive response status line: ", err)
            return
          end

          ngx.say("received: ", line)

          local ok, err = sock:close()
          ngx.say("close: ", ok, " ", err)
        end  -- do
        collectgarbage()
        hs = handshakes(srv, 1)
      end)
      assert.equal(lines("connected: 1", "ssl handshake: userdata",
                         "sent http request: 53 bytes.",
                         "received: HTTP/1.1 200 OK", "close: 1 nil"), body)
      assert.equal("test.com", hs[1].sni)
      assert.equal("TLSv1.3", hs[1].version)
      assert.equal("TLS_AES_256_GCM_SHA384", hs[1].cipher)
    end)
  end)

  -------------------------------------------------------------------------
  -- t/162-socket-tls-handshake.t

  describe("162-socket-tls-handshake.t", function()
    -- ours takes PEM strings (README, TLS): "doesnt" is no certificate
    it("162 TEST 4: incorrect type of client cert", function()
      local body = run(function(ngx)
        local sock = ngx.socket.tcp()

        local ok, err = sock:setclientcert("doesnt", "work")
        if not ok then
          ngx.say('failed to setclientcert: ', err)
          return
        end

        assert(sock:close())
      end)
      -- OpenResty: "bad cert arg: cdata expected, got string"
      assert.equal(lines("failed to setclientcert: bad client certificate"),
                   body)
      divergence("setclientcert takes PEM strings: \"bad client "
                 .. "certificate\"; OpenResty takes ngx.ssl cdata: \"bad "
                 .. "cert arg: cdata expected, got string\" (README, TLS)")
    end)

    -- the code of blocks 6 and 7
    local function missing(cert, key)
      return run(function(ngx)
        local sock = ngx.socket.tcp()

        local ok, err = sock:setclientcert(cert, key)
        if not ok then
          ngx.say('failed to setclientcert: ', err)
          return
        end

        assert(sock:close())
      end)
    end

    local MISSING = lines("failed to setclientcert: client certificate "
                          .. "must be supplied with corresponding private "
                          .. "key")

    it("162 TEST 6: missing client cert", function()
      assert.equal(MISSING, missing(nil, "work"))
    end)

    it("162 TEST 7: missing private key", function()
      assert.equal(MISSING, missing("doesnt", nil))
    end)
  end)
end)
