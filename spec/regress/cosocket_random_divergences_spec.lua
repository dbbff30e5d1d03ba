-- Divergences from OpenResty's cosockets that spec/71 (random cases
-- recorded from OpenResty 0.10.23) found, each fixed:
-- 1. A sized receiveuntil call gave out the bytes of a failed partial
--    match a few at a time to stay within the size; lua-nginx-module adds
--    them whole, so its call returns more than the size asked for, and the
--    following calls start later (cs_buffer.c: cs_until_pending).
-- 2. Over TLS, a reset from the peer was "connection reset by peer"; nginx
--    takes an SSL_read that fails in the socket with nothing in OpenSSL's
--    error queue for the peer's clean shutdown: "closed", "*a" returns
--    what came, and setkeepalive says "closed" (cs_tls.c: cs_tls_result).
-- 3. Over TLS, a read took one record; nginx's ngx_ssl_recv reads record
--    after record until its buffer is full, so receiveany(n) returns every
--    record that is in (cs_tls.c: cs_tls_recv). An end or an error met
--    after some data is returned by the next read.
-- 5. Over TLS, setkeepalive's checks read the records in the kernel
--    (SSL_peek) before anything else: a close_notify there was "closed"
--    and data there made "unread data in buffer". OpenResty looks at the
--    kernel (the peer's FIN: "closed"), then its buffer ("unread data in
--    buffer"), then peeks the raw socket: any bytes there, a close_notify
--    too, are "connection in dubious state"; and a close_notify a read
--    already met after its data does not stop the pooling (cs_tls.c:
--    cs_tls_idle, cs_tcp.c: cs_tcp_setkeepalive).
-- 4. A read into an empty buffer took up to 16 KiB; OpenResty reads into
--    its 4 KiB buffer (lua_socket_buffer_size's default), so receiveany
--    returns 4096 bytes at most, and after receive(5) 4091 are buffered,
--    the rest in the kernel (cs_tcp.c: cs_tcp_fill).
local helper = require "spec.helper"
local net = require "spec.support.net"
local script_peer = require "spec.support.script_peer"
local cs = helper.cs

describe("regression: what spec/71 found", function()
  local peer
  setup(function() peer = script_peer.start() end)
  teardown(script_peer.stop)
  after_each(helper.after_each)

  -- how long the peer's writes are given to arrive (longer under valgrind
  -- with CI's other lanes beside it: one TLS record of two came late once)
  local SETTLE = 0.1 * math.min(helper.slack, 5)

  -- a socket that has sent its script to the peer, after `wait` seconds
  local function connect(script, tls)
    local s = cs.socket.tcp()
    assert(s:connect("127.0.0.1", tls and peer.tls or peer.port))
    if tls then assert(s:sslhandshake(false, "test.example", true)) end
    assert(s:send(script .. "\n"))
    s:settimeout(200)
    cs.sleep(SETTLE) -- let the peer's first writes arrive
    return s
  end

  it("a sized receiveuntil call gives a failed partial match out whole",
     function()
    net.run(function()
      local s = connect("w:%0A%0Aaaa%0A%0Abbba%0D")
      local it = s:receiveuntil("aab\n", { inclusive = true })
      -- "aa" then "a": one byte out; then "\n": "aa" out, past the size
      assert.same({ "\n\naaa" }, { it(4) })
      assert.same({ nil, "timeout", "\n\nbbba\r" }, { s:receive(6000) })
      s:close()

      s = connect("w:xaabaaab")
      it = s:receiveuntil("aaab")
      -- "aa" then "b": "aa" out whole, the "b" read again
      assert.same({ "xaa" }, { it(2) })
      assert.same({ "b" }, { it(2) })
      assert.same({ nil, nil, nil }, { it(2) })
      s:close()
    end)
  end)

  it("over TLS a reset is \"closed\", and *a returns what came", function()
    net.run(function()
      local s = connect("w:ab r:1 R", true)
      assert.same({ "ab" }, { s:receive(2) })
      assert.equal(1, s:send("t"))
      cs.sleep(SETTLE)
      assert.same({ nil, "closed", "" }, { s:receive() })
      s:close()

      s = connect("w:ab r:1 R", true)
      assert.equal(1, s:send("t"))
      cs.sleep(SETTLE)
      assert.same({ "ab", nil, nil }, { s:receive("*a") })
      s:close()

      s = connect("w:ab r:1 R", true)
      assert.same({ "ab" }, { s:receive(2) })
      assert.equal(1, s:send("t"))
      cs.sleep(SETTLE)
      assert.same({ nil, "closed" }, { s:setkeepalive() })
      s:close()
    end)
  end)

  -- what one read returns: not in short-I/O mode (one byte a read)
  local it_reads = net.short_io and pending or it

  -- (what a read takes: the close_notify behind "abc" too)
  it_reads("over TLS setkeepalive answers as OpenResty's checks", function()
    net.run(function()
      local function keepalive(script, read, more)
        local s = connect(script, true)
        local got = { s:receive(read) }
        if more then
          assert.equal(1, s:send("t"))
          cs.sleep(SETTLE)
        end
        local res = { s:setkeepalive() }
        s:close()
        return got[1], res
      end
      -- the peer's close_notify (and no FIN: it waits for ours) after
      -- "abc", read by receive(1) with "abc": pooled as in OpenResty, and
      -- the connection taken from the pool says "closed"
      assert.same({ "abc", { 1 } }, { keepalive("w:abc c", 3) })
      local s = cs.socket.tcp()
      assert(s:connect("127.0.0.1", peer.tls))
      assert.equal(1, s:getreusedtimes())
      assert.same({ nil, "closed", "" }, { s:receive(1) })
      s:close()
      -- bytes buffered come before the close_notify
      assert.same({ "a", { nil, "unread data in buffer" } },
                  { keepalive("w:abc c", 1) })
      -- a close_notify still in the kernel, or a record: dubious
      assert.same({ "abc", { nil, "connection in dubious state" } },
                  { keepalive("w:abc r:1 c", 3, true) })
      assert.same({ "abc", { nil, "connection in dubious state" } },
                  { keepalive("w:abc r:1 w:de", 3, true) })
      -- the peer's FIN without close_notify comes first
      assert.same({ "a", { nil, "closed" } }, { keepalive("w:abc C", 1) })
    end)
  end)

  it_reads("over TLS receiveany returns every record that is in", function()
    net.run(function()
      local s = connect("w:ab w:cd r:1 w:ef r:1 c", true)
      assert.same({ "abcd" }, { s:receiveany(100) })
      assert.equal(1, s:send("t"))
      cs.sleep(SETTLE)
      assert.same({ "ef" }, { s:receiveany(100) })
      assert.equal(1, s:send("t"))
      cs.sleep(SETTLE)
      assert.same({ nil, "closed", "" }, { s:receiveany(100) })
      s:close()
    end)
  end)

  it_reads("receiveany reads 4096 bytes at most, the rest stays", function()
    net.run(function()
      local s = connect("n:9000")
      assert.equal(4096, #assert(s:receiveany(100000)))
      assert.equal(5, #assert(s:receive(5)))
      assert.equal(4091, #assert(s:receiveany(100000)))
      assert.equal(808, #assert(s:receiveany(100000)))
      s:close()
    end)
  end)
end)
