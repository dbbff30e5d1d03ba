-- cs.crypto (OpenSSL's digests, HMAC, PBKDF2, random bytes) and the
-- modules corosched.ngx's install() builds on it in place of FFI ones:
-- lua-resty-string's resty.md5/sha1/sha224/sha256/sha384/sha512,
-- resty.string and resty.random (lua-resty-mysql requires resty.sha256 at
-- load time), lua-resty-openssl's resty.openssl.digest/hmac/kdf/rand
-- (pgmoon's SCRAM-SHA-256 without luaossl). Checked against published
-- vectors: FIPS 180-2 appendices, RFC 1321, RFC 2202, RFC 4231, RFC 6070,
-- and the PBKDF2-HMAC-SHA256 vectors of RFC 7914 section 11.
local helper = require "spec.helper"
local cs = helper.cs
local ngxc = require "corosched.ngx"
local ngx_env = require "spec.support.ngx_env"

local save_globals, restore_globals = ngx_env.saver()

local function hex(s)
  return (s:gsub(".", function(c) return ("%02x"):format(c:byte()) end))
end

-- FIPS 180-2 (SHA-*) and RFC 1321 (MD5): "abc", and the empty string
local ABC = {
  md5 = "900150983cd24fb0d6963f7d28e17f72",
  sha1 = "a9993e364706816aba3e25717850c26c9cd0d89d",
  sha224 = "23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7",
  sha256 = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
  sha384 = "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed"
    .. "8086072ba1e7cc2358baeca134c825a7",
  sha512 = "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
    .. "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
}
local EMPTY = {
  md5 = "d41d8cd98f00b204e9800998ecf8427e",
  sha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
}
-- FIPS 180-2 B.2: the 448-bit message
local MSG448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
local SHA256_448 =
  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"

describe("cs.crypto", function()
  local c = cs.crypto

  it("digests: FIPS 180-2 and RFC 1321 vectors, in one part and in many",
     function()
    for alg, want in pairs(ABC) do
      local d = assert(c.digest(alg))
      assert.is_true(d:update("abc"))
      assert.equal(want, hex(d:final()), alg)
      -- byte by byte, and the name in capitals
      local d2 = assert(c.digest(alg:upper()))
      for ch in ("abc"):gmatch(".") do d2:update(ch) end
      assert.equal(want, hex(d2:final()), alg)
      assert.equal(#want / 2, d:size())
    end
    local d = c.digest("sha256")
    d:update(MSG448)
    assert.equal(SHA256_448, hex(d:final()))
  end)

  it("final() starts the object afresh, reset() drops what came", function()
    local d = c.digest("sha256")
    d:update("abc")
    assert.equal(ABC.sha256, hex(d:final()))
    assert.equal(EMPTY.sha256, hex(d:final()))
    d:update("xyz")
    assert.is_true(d:reset())
    d:update("abc")
    assert.equal(ABC.sha256, hex(d:final()))
  end)

  it("a million 'a' (FIPS 180-2 B.3) in 1,000 updates", function()
    local d = c.digest("sha256")
    local chunk = ("a"):rep(1000)
    for _ = 1, 1000 do d:update(chunk) end
    assert.equal("cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc"
                 .. "7112cd0", hex(d:final()))
  end)

  it("HMAC: RFC 4231 test cases 1, 2, 6 and RFC 2202's first", function()
    local key1 = ("\11"):rep(20)
    assert.equal("b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2"
                 .. "e32cff7", hex(c.hmac("sha256", key1, "Hi There")))
    assert.equal("87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b3054"
                 .. "5e17cdedaa833b7d6b8a702038b274eaea3f4e4be9d914eeb61f170"
                 .. "2e696c203a126854",
                 hex(c.hmac("sha512", key1, "Hi There")))
    assert.equal("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b96"
                 .. "4ec3843",
                 hex(c.hmac("sha256", "Jefe",
                            "what do ya want for nothing?")))
    -- a key longer than the block is hashed first (test case 6)
    assert.equal("60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0"
                 .. "ee37f54",
                 hex(c.hmac("sha256", ("\170"):rep(131),
                            "Test Using Larger Than Block-Size Key - Hash "
                            .. "Key First")))
    assert.equal("b617318655057264e28bc0b6fb378c8ef146be00",
                 hex(c.hmac("sha1", key1, "Hi There")))
    assert.equal("fbdb1d1b18aa6c08324b7d64b71fb76370690e1d",
                 hex(c.hmac("sha1", "", "")))
  end)

  it("PBKDF2: RFC 6070 (HMAC-SHA1) and RFC 7914 (HMAC-SHA256)", function()
    assert.equal("0c60c80f961f0e71f3a9b524af6012062fe037a6",
                 hex(c.pbkdf2("sha1", "password", "salt", 1, 20)))
    assert.equal("ea6c014dc72d6f8ccd1ed92ace1d41f0d8de8957",
                 hex(c.pbkdf2("sha1", "password", "salt", 2, 20)))
    assert.equal("4b007901b765489abead49d926f721d065a429c1",
                 hex(c.pbkdf2("sha1", "password", "salt", 4096, 20)))
    assert.equal("56fa6aa75548099dcc37d7f03425e0c3",
                 hex(c.pbkdf2("sha1", "pass\0word", "sa\0lt", 4096, 16)))
    assert.equal("55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c"
                 .. "20dacbc49ca9cccf179b645991664b39d77ef317c71b845b1e30bd5"
                 .. "09112041d3a19783",
                 hex(c.pbkdf2("sha256", "passwd", "salt", 1, 64)))
  end)

  it("random: n bytes, different each time", function()
    assert.equal("", c.random(0))
    local a, b = c.random(32), c.random(32)
    assert.equal(32, #a)
    assert.are_not.equal(a, b)
    assert.equal(100000, #c.random(100000))
  end)

  it("an unknown digest: nil, err; wrong arguments raise", function()
    assert.same({ nil, "unknown digest: sha999" }, { c.digest("sha999") })
    assert.same({ nil, "unknown digest: x" }, { c.hmac("x", "k", "m") })
    assert.same({ nil, "unknown digest: x" },
                { c.pbkdf2("x", "p", "s", 1, 8) })
    assert.has_error(function() c.digest() end)
    assert.has_error(function() c.digest("sha1"):update({}) end)
    assert.has_error(function() c.digest("sha1").update(nil, "x") end)
    assert.has_error(function() c.hmac("sha1", nil, "m") end)
    assert.has_error(function() c.pbkdf2("sha1", "p", "s", 0, 8) end)
    assert.has_error(function() c.pbkdf2("sha1", "p", "s", 1, 0) end)
    assert.has_error(function() c.random(-1) end)
    assert.has_error(function() c.random("x") end)
  end)

  it("digest objects are collected (ASan and valgrind check the frees)",
     function()
    for _ = 1, 1000 do c.digest("sha512"):update("x") end
    collectgarbage()
    collectgarbage()
  end)
end)

describe("corosched.ngx: resty.* modules on cs.crypto", function()
  before_each(function()
    save_globals()
    ngxc.install()
  end)
  after_each(restore_globals)

  it("resty.md5 ... resty.sha512: new(), update, final, reset as "
     .. "lua-resty-string's", function()
    for alg, want in pairs(ABC) do
      local mod = require("resty." .. alg)
      local d = assert(mod:new()) -- as lua-resty-string's callers write it
      assert.is_true(d:update("a"))
      assert.is_true(d:update("bc"))
      assert.equal(want, hex(d:final()), alg)
      d:update("junk")
      assert.is_true(d:reset())
      d:update("abc")
      assert.equal(want, hex(d:final()), alg)
      local e = assert(mod.new()) -- and as a plain function
      e:update("abc")
      assert.equal(want, hex(e:final()), alg)
    end
    local d = require("resty.md5"):new()
    assert.equal(EMPTY.md5, hex(d:final()))
    -- the same as ngx's own helpers
    local s = ("x"):rep(1000)
    d:update(s)
    assert.equal(ngx.md5(s), hex(d:final()))
    local h = require("resty.sha1"):new()
    h:update(s)
    assert.equal(ngx.sha1_bin(s), h:final())
  end)

  it("resty.string.to_hex/atoi, resty.random.bytes", function()
    local str = require "resty.string"
    assert.equal("00ff41", str.to_hex("\0\255A"))
    assert.equal("", str.to_hex(""))
    assert.equal(42, str.atoi("  42abc"))
    assert.equal(-7, str.atoi("-7"))
    assert.equal(0, str.atoi("x"))
    local random = require "resty.random"
    assert.equal(16, #random.bytes(16))
    assert.equal(16, #random.bytes(16, true))
    assert.are_not.equal(random.bytes(16), random.bytes(16))
  end)

  it("lua-resty-mysql's caching_sha2_password token, computed with "
     .. "resty.sha256 as it does it", function()
    -- XOR(SHA256(pw), SHA256(SHA256(SHA256(pw)) .. scramble)), checked
    -- against cs.crypto directly
    local sha = require("resty.sha256"):new()
    sha:update("secret")
    local m1 = sha:final()
    sha:reset()
    sha:update(m1)
    local m1h = sha:final()
    sha:reset()
    sha:update(m1h)
    sha:update("scramble-of-20-bytes")
    local m2 = sha:final()
    local d = cs.crypto.digest("sha256")
    d:update("secret")
    local want1 = d:final()
    d:update(want1)
    local h1 = d:final()
    d:update(h1 .. "scramble-of-20-bytes")
    assert.equal(want1, m1)
    assert.equal(d:final(), m2)
  end)

  it("resty.openssl.digest and hmac: update(...) of several strings, "
     .. "final([s]), errors as lua-resty-openssl's", function()
    local digest = require "resty.openssl.digest"
    local d = assert(digest.new("sha256"))
    assert.is_true(d:update("a", "b"))
    assert.equal(ABC.sha256, hex(d:final("c")))
    assert.equal(ABC.sha1, hex(assert(digest.new()):final("abc")))
    assert.same({ nil, 'digest.new: invalid digest type "nope"' },
                { digest.new("nope") })
    local ok, err = d:update("x", 1)
    assert.is_nil(ok)
    assert.equal("digest:update: expect a string at #2", err)

    local hmac = require "resty.openssl.hmac"
    local h = assert(hmac.new("Jefe", "sha256"))
    assert.is_true(h:update("what do ya want ", "for nothing?"))
    assert.equal("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b96"
                 .. "4ec3843", hex(h:final()))
    -- after final the object starts afresh
    assert.equal("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b96"
                 .. "4ec3843", hex(h:final("what do ya want for nothing?")))
    h:update("junk")
    assert.is_true(h:reset())
    assert.equal(hex(cs.crypto.hmac("sha256", "Jefe", "")), hex(h:final()))
    assert.same({ nil, "hmac.new: expect a string at #1" },
                { hmac.new(nil, "sha256") })
    assert.same({ nil, 'hmac.new: invalid digest type "x"' },
                { hmac.new("k", "x") })
  end)

  it("resty.openssl.kdf: PBKDF2 as pgmoon's SCRAM calls it; other types "
     .. "say they are not there", function()
    local kdf = require "resty.openssl.kdf"
    assert.equal(69, kdf.PBKDF2)
    local key = kdf.derive({ type = kdf.PBKDF2, md = "sha256",
                             salt = "salt", pbkdf2_iter = 1,
                             pass = "passwd", outlen = 64 })
    assert.equal("55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c"
                 .. "20dacbc49ca9cccf179b645991664b39d77ef317c71b845b1e30bd5"
                 .. "09112041d3a19783", hex(key))
    -- the defaults: sha1, one iteration
    assert.equal("0c60c80f961f0e71f3a9b524af6012062fe037a6",
                 hex(kdf.derive({ type = kdf.PBKDF2, pass = "password",
                                  salt = "salt", outlen = 20 })))
    assert.same({ nil, 'kdf.derive: "type" must be set' },
                { kdf.derive({}) })
    assert.same({ nil, 'kdf.derive: expect a number as "type"' },
                { kdf.derive({ type = "no" }) })
    assert.same({ nil, 'kdf.derive: "outlen" must be set' },
                { kdf.derive({ type = kdf.PBKDF2 }) })
    assert.same({ nil, 'kdf.derive: except a string as "pass"' },
                { kdf.derive({ type = kdf.PBKDF2, outlen = 16, pass = 1 }) })
    local none, err = kdf.derive({ type = kdf.HKDF, outlen = 16,
                                   pass = "x" })
    assert.is_nil(none)
    assert.matches("only PBKDF2", err)
  end)

  it("resty.openssl.rand.bytes", function()
    local rand = require "resty.openssl.rand"
    assert.equal(24, #rand.bytes(24))
    assert.are_not.equal(rand.bytes(24), rand.bytes(24))
    assert.same({ nil, "bad length" }, { rand.bytes(-1) })
  end)

  it("a SCRAM-SHA-256 client proof (RFC 7677's example) from these "
     .. "modules, as pgmoon computes it", function()
    -- RFC 7677 section 3: user "user", password "pencil"
    local kdf = require "resty.openssl.kdf"
    local hmac = require "resty.openssl.hmac"
    local digest = require "resty.openssl.digest"
    local salted = kdf.derive({ type = kdf.PBKDF2, md = "sha256",
                                salt = ngx.decode_base64(
                                  "W22ZaJ0SNY7soEsUEjb6gQ=="),
                                pbkdf2_iter = 4096, pass = "pencil",
                                outlen = 32 })
    local client_key = hmac.new(salted, "sha256"):final("Client Key")
    local stored_key = digest.new("sha256"):final(client_key)
    local auth = "n=user,r=rOprNGfwEbeRWgbNEkqO,"
      .. "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
      .. "s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096,"
      .. "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
    local sig = hmac.new(stored_key, "sha256"):final(auth)
    local proof = {}
    for i = 1, #client_key do
      proof[i] = string.char(client_key:byte(i) ~ sig:byte(i))
    end
    assert.equal("dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",
                 ngx.encode_base64(table.concat(proof)))
    -- and the server's signature
    local server_key = hmac.new(salted, "sha256"):final("Server Key")
    assert.equal("6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=",
                 ngx.encode_base64(hmac.new(server_key, "sha256")
                                   :final(auth)))
  end)
end)
