-- TLS on the TCP cosocket: sslhandshake (API.md "Sockets", "TLS details"),
-- setclientcert, setcafile, cs.socket.setcafile, the patterns over TLS,
-- pooled TLS connections, and the failure paths (bad chain, expired,
-- names, a plain server, handshake timeout, kill, close, GC). The peer is
-- a real TLS server (Python's ssl module, spec/support/tls_peer.py) with
-- certificates made by the openssl command for the run.
local helper = require "spec.helper"
local net = require "spec.support.net"
local tls = require "spec.support.tls"
local cs = helper.cs
local spawn, wait, kill = cs.thread.spawn, cs.thread.wait, cs.thread.kill

-- describe, or a pending test when python3 or openssl is missing
local describe_tls = tls.describer(describe, pending)

local function is_session(v)
  return type(v) == "userdata"
    and tostring(v):match("^corosched%.ssl_session: ") ~= nil
end

describe_tls("TLS", function()
  local C -- the certificates
  local servers = {}

  -- a peer, stopped after the test
  local function server(opts)
    local s = tls.server(opts)
    servers[#servers + 1] = s
    return s
  end

  -- a socket connected to srv (host: "127.0.0.1" unless given) that
  -- trusts the test CA
  local function connect(srv, host, cafile)
    local sock = cs.socket.tcp()
    sock:settimeouts(5000, 5000, 5000)
    assert(sock:connect(host or "127.0.0.1", srv.port))
    if cafile ~= false then assert(sock:setcafile(cafile or C.ca_crt)) end
    return sock
  end

  -- handshake that must fail with err: the socket is closed after it
  local function refused(srv, host, err, ...)
    local fds = helper.fds()
    local sock = connect(srv, host)
    sock:settimeouts(5000, 5000, 5000)
    local ok, e = sock:sslhandshake(...)
    assert.is_nil(ok)
    assert.equal("handshake failed: " .. err, e)
    assert.same({ nil, "closed" }, { sock:send("x") })
    assert.same({ nil, "closed" }, { sock:close() })
    assert.equal(fds, helper.fds())
  end

  setup(function()
    C = tls.certs()
  end)

  after_each(function()
    for _, s in ipairs(servers) do s:stop() end
    servers = {}
    helper.after_each()
  end)

  teardown(function()
    tls.cleanup()
  end)

  describe("sslhandshake", function()
    it("checks the name part of connect's host", function()
      local srv = server()
      net.run(function()
        -- "127.0.0.1:PORT" (the port in the host string wins): the name
        -- checked is 127.0.0.1, an IP address of the certificate
        local sock = cs.socket.tcp()
        sock:settimeouts(5000, 5000, 5000)
        assert(sock:connect("127.0.0.1:" .. srv.port, 1))
        assert(sock:setcafile(C.ca_crt))
        local ok, err = sock:sslhandshake(false)
        assert.same({ true, nil }, { ok, err })
        assert.equal(1, sock:close())
      end)
    end)

    it("verifies the chain and the IP address, returns a session", function()
      local srv = server()
      net.run(function()
        local fds = helper.fds()
        local sock = connect(srv)
        local sess, err = sock:sslhandshake()
        assert(sess, err)
        assert.is_true(is_session(sess))
        assert.equal(6, sock:send("hello\n"))
        assert.equal("hello", sock:receive())
        assert.equal(5, sock:send({ "a", { 1, 2.5 } }))
        assert.equal("a12.5", sock:receive(5))
        assert.equal(1, sock:close())
        assert.equal(fds, helper.fds())
      end)
    end)

    it("checks the host name given to connect, and sends it as SNI",
       function()
      local srv = server({ mode = "whoami" })
      net.run(function()
        local sock = connect(srv, "localhost")
        assert(sock:sslhandshake(false))
        local line = assert(sock:receive())
        assert.matches("^sni=localhost cn=%- ", line)
        sock:close()
        -- an IP literal is checked but not sent (RFC 6066)
        sock = connect(srv)
        assert(sock:sslhandshake(false))
        assert.matches("^sni=%- ", assert(sock:receive()))
        sock:close()
        -- the same with a pool name of one's own (the host is then kept
        -- apart from the pool key), and after a connect that replaced it
        sock = cs.socket.tcp()
        sock:settimeouts(5000, 5000, 5000)
        assert(sock:connect("localhost", srv.port, { pool = "mine" }))
        assert(sock:setcafile(C.ca_crt))
        assert(sock:sslhandshake(false))
        assert.matches("^sni=localhost cn=%- ", assert(sock:receive()))
        assert(sock:connect("127.0.0.1", srv.port, { pool = "mine2" }))
        assert(sock:sslhandshake(false))
        assert.matches("^sni=%- ", assert(sock:receive()))
        assert(sock:connect("localhost", srv.port))
        assert(sock:sslhandshake(false))
        assert.matches("^sni=localhost ", assert(sock:receive()))
        sock:close()
      end)
    end)

    it("server_name replaces the host: sent and checked", function()
      local srv = server({ mode = "whoami" })
      net.run(function()
        local sock = connect(srv)
        assert.is_true(sock:sslhandshake(false, "test.corosched"))
        assert.matches("^sni=test%.corosched ", assert(sock:receive()))
        sock:close()
        refused(srv, nil, "hostname mismatch", nil, "nope.corosched")
      end)
    end)

    it("fails on a certificate from an unknown CA (system store only)",
       function()
      local srv = server()
      net.run(function()
        local fds = helper.fds()
        local sock = connect(srv, nil, false)
        assert.same({ nil, "handshake failed: unable to get local issuer "
                           .. "certificate" }, { sock:sslhandshake() })
        assert.same({ nil, "closed" }, { sock:receive() })
        assert.equal(fds, helper.fds())
      end)
    end)

    it("fails on self-signed, expired, wrong name, wrong IP", function()
      local self = server({ cert = C.self_crt, key = C.self_key })
      local expired = server({ cert = C.expired_crt, key = C.expired_key })
      local other = server({ cert = C.other_crt, key = C.other_key })
      net.run(function()
        refused(self, "localhost", "self-signed certificate")
        refused(expired, "localhost", "certificate has expired")
        refused(other, "localhost", "hostname mismatch")
        refused(other, nil, "IP address mismatch")
      end)
    end)

    it("a wildcard matches one whole label", function()
      local wild = server({ cert = C.wild_crt, key = C.wild_key })
      net.run(function()
        local sock = connect(wild)
        assert(sock:sslhandshake(false, "a.wild.corosched"))
        sock:close()
        refused(wild, nil, "hostname mismatch", nil, "a.b.wild.corosched")
        refused(wild, nil, "hostname mismatch", nil, "wild.corosched")
      end)
    end)

    it("after a clear exchange (STARTTLS); bytes sent in clear before the"
       .. " handshake are refused", function()
      local srv = server({ mode = "starttls" })
      local evil = server({ mode = "starttls",
                            payload = "Xinjected\r\n" })
      net.run(function()
        local fds = helper.fds()
        local sock = connect(srv)
        assert(sock:send("STARTTLS\n"))
        assert.equal("OK", sock:receive())
        assert(sock:sslhandshake(false))
        assert(sock:send("over tls\n"))
        assert.equal("over tls", sock:receive())
        sock:close()
        -- a man in the middle adds bytes after "OK": they must not be
        -- read as if they came over TLS (pgmoon, lua-resty-mysql)
        sock = connect(evil)
        assert(sock:send("STARTTLS\n"))
        local it = sock:receiveuntil("\n")
        assert.equal("OK", it())
        local ok, err = sock:sslhandshake(false)
        assert.is_nil(ok)
        assert.matches("^handshake failed: ", err)
        assert.same({ nil, "closed" }, { sock:receive() })
        assert.equal(fds, helper.fds())
      end)
    end)

    it("ssl_verify false skips the chain and name checks only", function()
      local self = server({ cert = C.self_crt, key = C.self_key,
                            mode = "whoami" })
      net.run(function()
        local sock = connect(self, nil, false)
        assert(sock:sslhandshake(nil, "other.example", false))
        -- SNI is still sent
        assert.matches("^sni=other%.example ", assert(sock:receive()))
        sock:close()
      end)
    end)

    it("accepts a chain of 3 intermediates sent by the server", function()
      local srv = server({ cert = C.chain_crt, key = C.chain_key })
      net.run(function()
        local sock = connect(srv, "localhost")
        assert(sock:sslhandshake())
        assert(sock:send("x\n"))
        assert.equal("x", sock:receive())
        sock:close()
      end)
    end)

    it("resumes a session passed back (TLS 1.2)", function()
      local srv = server({ mode = "whoami", max_version = "1.2" })
      net.run(function()
        local sock = connect(srv, "localhost")
        local sess = assert(sock:sslhandshake())
        assert.matches(" reused=0 version=TLSv1%.2$", sock:receive())
        sock:close()
        sock = connect(srv, "localhost")
        local again = assert(sock:sslhandshake(sess))
        assert.is_true(is_session(again))
        assert.matches(" reused=1 ", sock:receive())
        sock:close()
      end)
    end)

    it("sends a client certificate", function()
      local srv = server({ mode = "whoami", client_ca = C.ca_crt,
                           max_version = "1.2" })
      net.run(function()
        local sock = connect(srv)
        assert.is_true(sock:setclientcert(tls.read(C.client_crt),
                                          tls.read(C.client_key)))
        assert(sock:sslhandshake())
        assert.matches(" cn=corosched%-client ", sock:receive())
        sock:close()
        -- (nil, nil) takes it back
        sock = connect(srv)
        assert(sock:setclientcert(tls.read(C.client_crt),
                                  tls.read(C.client_key)))
        assert.is_true(sock:setclientcert(nil, nil))
        assert.is_nil(sock:sslhandshake())
        -- without one the server refuses the handshake
        local fds = helper.fds()
        sock = connect(srv)
        local ok, err = sock:sslhandshake()
        assert.is_nil(ok)
        assert.matches("^handshake failed: ", err)
        assert.equal(fds, helper.fds())
      end)
    end)

    it("setclientcert and setcafile: bad input is nil, err", function()
      net.run(function()
        local sock = cs.socket.tcp()
        local cert, key = tls.read(C.client_crt), tls.read(C.client_key)
        assert.same({ nil, "bad client certificate" },
                    { sock:setclientcert("junk", key) })
        assert.same({ nil, "bad private key" },
                    { sock:setclientcert(cert, "junk") })
        assert.same({ nil, "the private key does not match the "
                           .. "certificate" },
                    { sock:setclientcert(cert, tls.read(C.server_key)) })
        local alone = { nil, "client certificate must be supplied with "
                             .. "corresponding private key" }
        assert.same(alone, { sock:setclientcert(cert) })
        assert.same(alone, { sock:setclientcert(nil, key) })
        local ok, err = sock:setcafile("/nonexistent/ca.pem")
        assert.is_nil(ok)
        assert.matches("^cannot load CA file /nonexistent/ca%.pem: ", err)
        assert.has_error(function() sock:setclientcert({}, "k") end)
        assert.has_error(function() sock:setcafile() end)
      end)
    end)

    it("cs.socket.setcafile trusts a CA for every socket", function()
      local srv = server()
      net.run(function()
        assert.is_true(cs.socket.setcafile(C.ca_crt))
        local sock = connect(srv, nil, false)
        local ok, err = sock:sslhandshake(false)
        assert.is_true(cs.socket.setcafile(nil)) -- back to the system's
        assert.is_true(ok, err)
        sock:close()
        sock = connect(srv, nil, false)
        assert.same({ nil, "handshake failed: unable to get local issuer "
                           .. "certificate" }, { sock:sslhandshake() })
        ok, err = cs.socket.setcafile("/nonexistent")
        assert.is_nil(ok)
        assert.matches("^cannot load CA file", err)
      end)
    end)

    it("setcafile: a file that changed is read again", function()
      local srv = server()
      local self = server({ cert = C.self_crt, key = C.self_key })
      local path = os.tmpname()
      local function write(src)
        local f = assert(io.open(path, "w"))
        f:write(tls.read(src))
        f:close()
      end
      net.run(function()
        write(C.ca_crt)
        assert(connect(srv, nil, path):sslhandshake(false))
        write(C.self_crt) -- another size: another file
        local sock = connect(srv, nil, path)
        assert.same({ nil, "handshake failed: unable to get local issuer "
                           .. "certificate" }, { sock:sslhandshake() })
        sock = connect(self, "localhost", path)
        assert.is_true(sock:sslhandshake(false))
        sock:close()
        collectgarbage()
      end)
      os.remove(path)
    end)

    it("setcafile: more CA files than the cache keeps (16), the first "
       .. "one again", function()
      local srv = server()
      local paths = {}
      for i = 1, 18 do
        paths[i] = os.tmpname()
        local f = assert(io.open(paths[i], "w"))
        f:write(tls.read(C.ca_crt))
        f:close()
      end
      net.run(function()
        for i = 1, 18 do -- 17 and 18 push 1 and 2 out
          local sock = connect(srv, nil, paths[i])
          assert.is_true(sock:sslhandshake(false))
          sock:close()
        end
        for _, i in ipairs({ 1, 18, 2 }) do -- read again; from the cache
          local sock = connect(srv, nil, paths[i])
          assert.is_true(sock:sslhandshake(false))
          sock:close()
        end
      end)
      for _, path in ipairs(paths) do os.remove(path) end
    end)

    it("asks for an OCSP staple when told to (none is fine)", function()
      local srv = server()
      net.run(function()
        local sock = connect(srv)
        assert.is_true(sock:sslhandshake(false, nil, nil, true))
        sock:close()
      end)
    end)

    it("a plain server: the handshake fails and closes", function()
      local srv = server({ mode = "plain" })
      net.run(function()
        local fds = helper.fds()
        local sock = connect(srv)
        local ok, err = sock:sslhandshake()
        assert.is_nil(ok)
        assert.matches("^handshake failed: ", err)
        assert.equal(fds, helper.fds())
      end)
    end)

    it("times out with the connect timeout, and closes", function()
      local srv = server({ mode = "hang" })
      net.run(function()
        local fds = helper.fds()
        local sock = connect(srv)
        sock:settimeouts(100, 5000, 5000)
        local dt, ok, err = net.timed(sock.sslhandshake, sock)
        assert.same({ nil, "timeout" }, { ok, err })
        assert.is_true(dt >= 0.09 and dt < helper.slack * 2, dt)
        assert.same({ nil, "closed" }, { sock:send("x") })
        assert.equal(fds, helper.fds())
      end)
    end)

    it("kill during the handshake closes the socket", function()
      local srv = server({ mode = "hang" })
      net.run(function()
        local fds = helper.fds()
        local sock = connect(srv)
        local th = spawn(function() return sock:sslhandshake() end)
        assert.is_true(net.wait_until(function()
          return net.parked_on(th) == "socket sslhandshake"
        end))
        assert.truthy(kill(th))
        assert.same({ nil, "closed" }, { sock:send("x") })
        assert.equal(fds, helper.fds())
      end)
    end)

    it("close() from another thread wakes it with closed", function()
      local srv = server({ mode = "hang" })
      net.run(function()
        local sock = connect(srv)
        local th = spawn(function() return sock:sslhandshake() end)
        assert.is_true(net.wait_until(function()
          return net.parked_on(th) == "socket sslhandshake"
        end))
        assert.equal(1, sock:close())
        assert.same({ true, nil, "closed" }, { wait(th) })
      end)
    end)

    it("closed, busy, already TLS, and programmer errors", function()
      local srv = server()
      net.run(function()
        -- as lua-resty-core (recorded in spec/59): a socket connect was
        -- never called on raises, a closed one says "closed"
        local sock = cs.socket.tcp()
        assert.has_error(function() sock:sslhandshake() end,
                         "socket is never created nor connected")
        sock = connect(srv)
        assert.has_error(function() sock:sslhandshake(nil, 42) end,
                         "cannot convert 'number' to 'const unsigned char *'")
        assert.has_error(function() sock:sslhandshake(nil, nil, "yes") end)
        assert.has_error(function() sock:sslhandshake(1, 2, 3, 4, 5) end,
          "ngx.socket sslhandshake: expecting 1 ~ 5 arguments (including "
          .. "the object), but seen 6")
        -- as lua-resty-core: what is not a session is not resumed, and a
        -- session comes back unless reused_session is false
        local sess = assert(sock:sslhandshake(true))
        assert.is_true(is_session(sess))
        -- a second handshake on the connection returns at once
        assert.is_true(is_session(assert(sock:sslhandshake(sess))))
        assert.is_true(is_session(assert(sock:sslhandshake("x"))))
        assert.is_true(sock:sslhandshake(false))
        local reader = spawn(function() return sock:receive() end)
        net.wait_until(function() return net.parked_on(reader) end)
        assert.same({ nil, "socket busy reading" }, { sock:sslhandshake() })
        sock:close()
        wait(reader)
      end)
      -- outside a light thread
      assert.has_error(function() cs.socket.tcp():sslhandshake() end)
    end)

    it("a socket collected unclosed leaves no fd", function()
      local srv = server()
      net.run(function()
        local fds = helper.fds()
        do
          local sock = connect(srv)
          assert(sock:sslhandshake())
          assert(sock:send("x"))
        end
        collectgarbage()
        collectgarbage()
        assert.equal(fds, helper.fds())
      end)
    end)
  end)

  describe("the peer's certificate", function()
    -- what openssl says: the DER form's digest
    local function openssl_digest(crt, alg)
      local p = assert(io.popen(("env -u LD_PRELOAD openssl x509 -in '%s' "
        .. "-outform DER | env -u LD_PRELOAD openssl dgst -%s -binary")
        :format(crt, alg)))
      local d = p:read("a")
      p:close()
      return d
    end

    it("getpeercert: PEM and signature algorithm; x509_digest", function()
      local srv = server()
      net.run(function()
        local sock = connect(srv)
        assert.same({ nil, "no TLS" }, { sock:getpeercert() })
        assert(sock:sslhandshake(false))
        local pem, sig = sock:getpeercert()
        assert.equal(tls.read(C.server_crt), pem)
        assert.equal("ecdsa-with-SHA256", sig)
        local d = openssl_digest(C.server_crt, "sha256")
        assert.equal(32, #d)
        assert.equal(d, cs.socket.x509_digest(pem, "sha256"))
        -- a signature algorithm's name: its digest (RFC 5929)
        assert.equal(d, cs.socket.x509_digest(pem, sig))
        assert.equal(openssl_digest(C.server_crt, "sha384"),
                     cs.socket.x509_digest(pem, "SHA384"))
        assert.same({ nil, "unknown digest: nope" },
                    { cs.socket.x509_digest(pem, "nope") })
        assert.same({ nil, "bad certificate" },
                    { cs.socket.x509_digest("junk", "sha256") })
        sock:close()
        assert.same({ nil, "closed" }, { sock:getpeercert() })
      end)
    end)

    it("corosched.ngx's resty.openssl.ssl / x509 (pgmoon's channel "
       .. "binding)", function()
      local mods = require("corosched.ngx").modules
      local ssl, x509 = mods["resty.openssl.ssl"], mods["resty.openssl.x509"]
      local srv = server()
      net.run(function()
        local sock = connect(srv)
        assert(sock:sslhandshake(false))
        local cert = assert(assert(ssl.from_socket(sock))
                              :get_peer_certificate())
        local pem = cert:to_PEM()
        assert.equal(tls.read(C.server_crt), pem)
        local sig = cert:get_signature_name():lower()
        assert.equal("ecdsa-with-sha256", sig)
        local d = openssl_digest(C.server_crt, "sha256")
        assert.equal(d, assert(x509.new(pem, "PEM")):digest(sig))
        assert.equal(d, cert:digest("sha256"))
        assert.same({ nil, "x509.new: bad certificate" },
                    { x509.new("junk") })
        sock:close()
        assert.is_nil(ssl.from_socket(sock):get_peer_certificate())
      end)
    end)
  end)

  describe("over TLS", function()
    it("lines, counts, receiveany, receiveuntil", function()
      local srv = server()
      net.run(function()
        local sock = connect(srv)
        assert(sock:sslhandshake(false))
        assert(sock:send("one\r\ntwo\nthree--end--rest"))
        assert.equal("one", sock:receive())
        assert.equal("two", sock:receive("*l"))
        local it = sock:receiveuntil("--end--")
        assert.equal("three", it())
        assert.equal("rest", sock:receive(4))
        assert(sock:send("xyz"))
        assert.equal("xyz", sock:receiveany(10))
        assert.same({ nil, "timeout", "" },
                    { (function() sock:settimeout(50)
                        return sock:receive() end)() })
        sock:close()
      end)
    end)

    it("1 MiB each way, sent and received by two threads", function()
      local srv = server()
      local n = net.big(1024 * 1024)
      net.run(function()
        local sock = connect(srv)
        assert(sock:sslhandshake(false))
        local data = net.payload(n)
        local w = spawn(function() return sock:send(data) end)
        local got = assert(sock:receive(n))
        assert.same({ true, n }, { wait(w) })
        assert.equal(data, got)
        sock:close()
      end, { timeout = 60 })
    end)

    it("*a ends at close_notify, and at a close without it", function()
      local notify = server({ mode = "send_notify", payload = "bye\nall" })
      local bare = server({ mode = "send_close", payload = "bye\nall" })
      net.run(function()
        for _, srv in ipairs({ notify, bare }) do
          local sock = connect(srv)
          assert(sock:sslhandshake(false))
          assert.equal("bye\nall", sock:receive("*a"))
          assert.equal("", sock:receive("*a"))
          sock:close()
          -- other patterns: closed, with what came
          sock = connect(srv)
          assert(sock:sslhandshake(false))
          assert.equal("bye", sock:receive())
          assert.same({ nil, "closed", "all" }, { sock:receive() })
          assert.equal(1, sock:close()) -- closed by the error, as plain
        end
      end)
    end)

    it("a forged record after good data: the data, then nil, \"protocol "
       .. "error\" with what came, and the socket is closed", function()
      local srv = server({ mode = "corrupt", payload = "good\nrest" })
      net.run(function()
        local fds = helper.fds()
        local sock = connect(srv)
        assert(sock:sslhandshake(false))
        assert.equal("good", sock:receive())
        assert.same({ nil, "protocol error", "rest" }, { sock:receive() })
        assert.same({ nil, "closed" }, { sock:receive() })
        -- the read error closed the socket (API.md); close() says 1 once
        assert.same({ nil, "closed" }, { sock:send("x") })
        assert.equal(1, sock:close())
        assert.same({ nil, "closed" }, { sock:close() })
        assert.equal(fds, helper.fds())
      end)
    end)
  end)

  describe("the pool", function()
    it("keeps a TLS connection TLS: reused, no new handshake", function()
      local srv = server({ mode = "whoami" })
      net.run(function()
        local sock = connect(srv)
        assert(sock:sslhandshake(false))
        assert.matches("^sni=", sock:receive())
        -- TLS 1.3 tickets may arrive while it is idle: consumed
        cs.sleep(0.05)
        assert.equal(1, sock:setkeepalive())
        cs.sleep(0.05)
        assert.equal(1, cs.stats().sockets)
        sock = cs.socket.tcp()
        assert(sock:connect("127.0.0.1", srv.port))
        assert.equal(1, sock:getreusedtimes())
        assert.is_true(sock:sslhandshake(false))
        assert(sock:send("again\n"))
        assert.equal("again", sock:receive())
        -- unread decrypted bytes stay: refused
        assert(sock:send("0123456789"))
        assert.equal("01234", sock:receive(5))
        assert.same({ nil, "unread data in buffer" },
                    { sock:setkeepalive() })
        assert.equal("56789", sock:receive(5))
        -- pooled again, and the idle timeout closes it
        assert.equal(1, sock:setkeepalive(10))
        cs.sleep(0.1)
        assert.equal(0, cs.stats().sockets)
        -- a record that waits in the kernel, not read yet: as OpenResty
        -- (a peek of the socket finds bytes), "connection in dubious
        -- state", and the connection is closed
        sock = connect(srv)
        assert(sock:sslhandshake(false))
        assert.matches("^sni=", sock:receive())
        assert(sock:send("abc\n"))
        cs.sleep(0.05 * helper.slack)
        assert.same({ nil, "connection in dubious state" },
                    { sock:setkeepalive() })
        assert.same({ nil, "closed" }, { sock:receive() })
        assert.equal(0, cs.stats().sockets)
      end)
    end)
  end)
end)
