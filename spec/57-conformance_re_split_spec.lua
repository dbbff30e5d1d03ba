-- Conformance: lua-resty-core's ngx.re module (require "ngx.re": split
-- and opt), as corosched.ngx preloads it on corosched.re, against
-- lua-resty-core's t/re-split.t and t/re-opt.t. Each `it` is one block,
-- named after it; its Lua code runs with an `ngx` whose say records the
-- response body (ngx.log records the error log), compared with the
-- block's --- response_body byte for byte, and with no [error] logged.
-- Every block runs twice, as the files' repeat_each(2) makes nginx do.
-- Versions: the newest stored ones: re-split.t with 40 blocks (TEST 40:
-- "cannot load ngx.re module when lacking PCRE support"), re-opt.t with
-- 4 blocks (t::TestCore, "changing jit stack size ..." in lower case).
-- Their "[TRACE" error-log checks are LuaJIT's JIT compiler: not checked.
--
-- re-split.t, covered: 1-39.
-- re-split.t, skipped: 40 (sets resty.core.regex's no_pcre, an internal
--   of lua-resty-core; here "ngx.re" is not preloaded at all when
--   corosched.re is not built: see the last describe).
-- re-opt.t, covered: 1 (PCRE2's code, as spec/56 does: -46,
--   PCRE2_ERROR_JIT_STACKLIMIT, where PCRE says -27; under valgrind "j"
--   does not JIT-compile and the match succeeds), 3 (in a fresh lua5.4:
--   the "o" cache lives as long as the process, and the file's two
--   requests need it empty at first), 4.
-- re-opt.t, skipped: 2 (needs a JIT stack bigger than PCRE2's default
--   32 KiB: corosched.re cannot size it and opt("jit_stack_size", n) does
--   nothing (README); the last describe checks that the -46 stays).
--
-- The last describe checks what the test files do not: lua-resty-core's
-- documented examples (lib/ngx/re.md), the arguments, ctx.pos, UTF-8, the
-- differences from lua-resty-core (README) and opt's checks.
local helper = require "spec.helper"
local ngxc = require "corosched.ngx"
local ngx_env = require "spec.support.ngx_env"

if not ngxc.modules["ngx.re"] then
  describe("ngx.re (lua-resty-core's module)", function()
    pending("corosched.re is not built: pkg-config finds no libpcre2-8")
  end)
  return
end

-- the ngx and unpack globals and the package.preload/loaded entries that
-- install() adds are put back after each test
local save_globals, restore_globals = ngx_env.saver()

-- under valgrind corosched.re does not JIT-compile (as csrc/cs_re.c
-- decides it)
local NOJIT = (os.getenv("LD_PRELOAD") or ""):find("vgpreload", 1, true)

-- runs fn(ngx) and returns what it printed with ngx.say/ngx.print (the
-- response body) and with ngx.log (the error log)
local function run(fn)
  local body, log = {}, {}
  local function cat(buf, ...)
    local t = table.pack(...)
    for i = 1, t.n do buf[#buf + 1] = tostring(t[i]) end
  end
  local ngx = { ERR = 3, INFO = 7, re = ngxc.ngx.re }
  function ngx.say(...) cat(body, ...); body[#body + 1] = "\n" end
  function ngx.print(...) cat(body, ...) end
  function ngx.log(_, ...) cat(log, ...); log[#log + 1] = "\n" end
  fn(ngx)
  return table.concat(body), table.concat(log)
end

-- the block: fn's body is expected, twice, and nothing logged
local function block(name, expected, fn)
  it(name, function()
    for _ = 1, 2 do
      local body, log = run(fn)
      assert.are.equal(expected, body)
      assert.are.equal("", log)
    end
  end)
end

-- the regex and subject of re-opt.t (from julia's issue 8278)
local LONG_SUBJECT = table.concat({
  [[71.163.72.113 - - [30/Jul/2014:16:40:55 -0700] "GET emptymind.or]],
  [[g/thevacantwall/wp-content/uploads/2013/02/DSC_006421.jpg HTTP/1]],
  [[.1" 200 492513 "http://images.search.yahoo.com/images/view;_ylt=]],
  [[AwrB8py9gdlTGEwADcSjzbkF;_ylu=X3oDMTI2cGZrZTA5BHNlYwNmcC1leHAEc2]],
  [[xrA2V4cARvaWQDNTA3NTRiMzYzY2E5OTEwNjBiMjc2YWJhMjkxMTEzY2MEZ3Bvcw]],
  [[M0BGl0A2Jpbmc-?back=http%3A%2F%2Fus.yhs4.search.yahoo.com%2Fyhs%]],
  [[2Fsearch%3Fei%3DUTF-8%26p%3Dapartheid%2Bwall%2Bin%2Bpalestine%26]],
  [[type%3Dgrvydef%26param1%3D1%26param2%3Dsid%253Db01676f9c26355f01]],
  [[4f8a9db87545d61%2526b%253DChrome%2526ip%253D71.163.72.113%2526p%]],
  [[253Dgroovorio%2526x%253DAC811262A746D3CD%2526dt%253DS940%2526f%2]],
  [[53D7%2526a%253Dgrv_tuto1_14_30%26hsimp%3Dyhs-fullyhosted_003%26h]],
  [[spart%3Dironsource&w=588&h=387&imgurl=occupiedpalestine.files.wo]],
  [[rdpress.com%2F2012%2F08%2F5-peeking-through-the-wall.jpg%3Fw%3D5]],
  [[88%26h%3D387&rurl=http%3A%2F%2Fwww.stopdebezetting.com%2Fwereldp]],
  [[ers%2Fcompare-the-berlin-wall-vs-israel-s-apartheid-wall-in-pale]],
  [[stine.html&size=49.0KB&name=...+%3Cb%3EApartheid+wall+in+Palesti]],
  [[ne%3C%2Fb%3E...+%7C+Or+you+go+peeking+through+the+%3Cb%3Ewall%3C]],
  [[%2Fb%3E&p=apartheid+wall+in+palestine&oid=50754b363ca991060b276a]],
  [[ba291113cc&fr2=&fr=&tt=...+%3Cb%3EApartheid+wall+in+Palestine%3C]],
  [[%2Fb%3E...+%7C+Or+you+go+peeking+through+the+%3Cb%3Ewall%3C%2Fb%]],
  [[3E&b=0&ni=21&no=4&ts=&tab=organic&sigr=13evdtqdq&sigb=19k7nsjvb&]],
  [[sigi=12o2la1db&sigt=12lia2m0j&sign=12lia2m0j&.crumb=.yUtKgFI6DE&]],
  [[hsimp=yhs-fullyhosted_003&hspart=ironsource" "Mozilla/5.0 (Windo]],
  [[ws NT 6.1; WOW64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/]],
  [[36.0.1985.125 Safari/537.36]],
})
local COMPLICATED_RE = table.concat({
  [==[([\d\.]+) ([\w.-]+) ([\w.-]+) (\[.+\]) "([^"\r\n]==],
  [==[]*|[^"\r\n\[]*\[.+\][^"]+|[^"\r\n]+.[^"]+)" (\d{]==],
  [==[3}) (\d+|-) ("(?:[^"]|\")+)"? ("(?:[^"]|\")+)"?]==],
})


-- what re-opt.t's TEST 1 and 2 print for the find of LONG_SUBJECT
local function find_long(ngx)
  local from, to, err = ngx.re.find(LONG_SUBJECT, COMPLICATED_RE, "jo")
  if from or to then
    ngx.say("from: ", from)
    ngx.say("to: ", to)
  else
    if err then
      ngx.say("error: ", err)
      return
    end
    ngx.say("not matched!")
  end
end

-- what it prints with PCRE2's default JIT stack
local FIND_LONG = NOJIT and "from: 1\nto: 1563\n"
  or "error: pcre_exec() failed: -46\n"

-- the code run by helper.subprocess: ngx installed, then code; what it
-- prints is compared
local function fresh(code)
  local out, err, ok = helper.subprocess(
    "require('corosched.ngx').install()\n" .. code)
  assert.are.equal("", err)
  assert.is_true(ok)
  return out
end

describe("ngx.re (lua-resty-core's module)", function()
  before_each(function()
    save_globals()
    ngxc.install()
  end)
  after_each(function()
    restore_globals()
    helper.after_each()
  end)

  -- {====== re-split.t ======

  describe("re-split.t", function()
    -- the blocks that split, log the error or say each field
    local function each(ngx, ...)
      local ngx_re = require "ngx.re"
      local res, err = ngx_re.split(...)
      if err then
        ngx.log(ngx.ERR, "failed: ", err)
        return
      end
      for i = 1, #res do
        ngx.say(res[i])
      end
    end

    -- the blocks that say the fields joined with sep, then the count
    local function joined(ngx, sep, ...)
      local ngx_re = require "ngx.re"
      local res, err = ngx_re.split(...)
      if err then
        ngx.log(ngx.ERR, "failed: ", err)
        return
      end
      ngx.say(table.concat(res, sep))
      ngx.say("len: ", #res)
    end

    -- the blocks that say each field then the count
    local function each_len(ngx, ...)
      local ngx_re = require "ngx.re"
      local res, err = ngx_re.split(...)
      if err then
        ngx.log(ngx.ERR, "failed: ", err)
        return
      end
      for i = 1, #res do
        ngx.say(res[i])
      end
      ngx.say("len: ", #res)
    end

    block("TEST 1: split matches, no submatch, no jit compile, no regex "
          .. "cache", "a\nb\nc\nd\n", function(ngx)
      each(ngx, "a,b,c,d", ",")
    end)

    block("TEST 2: split matches, no submatch, no jit compile, no regex "
          .. "cache", "a\nb\nc\nd;e\n", function(ngx)
      each(ngx, "a;,b;,c;,d;e", ";,")
    end)

    block("TEST 3: split matches, no submatch, jit compile, regex cache",
          "a\nb\nc\nd\n", function(ngx)
      each(ngx, "a,b,c,d", ",", "jo")
    end)

    block("TEST 4: split matches + submatch (matching)",
          "a\n;\nb\n;\nc\n;\nd,e\n", function(ngx)
      each(ngx, "a;,b;,c;,d,e", "(;),")
    end)

    block("TEST 5: split matches + submatch (not matching)",
          "a\nb\nc\nd\ne\n", function(ngx)
      each(ngx, "a,b,c,d,e", "(;)|,")
    end)

    block("TEST 6: split matches + max limiter", "a\nb\nc,d,e\n",
          function(ngx)
      each(ngx, "a,b,c,d,e", ",", nil, nil, 3)
    end)

    block("TEST 7: split matches + submatch + max limiter",
          "a\n,\nb\n,\nc,d,e\n", function(ngx)
      each(ngx, "a,b,c,d,e", "(,)", nil, nil, 3)
    end)

    block("TEST 8: split matches + max limiter set to 0",
          "a\nb\nc\nd\ne\n", function(ngx)
      each(ngx, "a,b,c,d,e", ",", nil, nil, 0)
    end)

    block("TEST 9: split matches + max limiter set to a negative value",
          "a\nb\nc\nd\ne\n", function(ngx)
      each(ngx, "a,b,c,d,e", ",", nil, nil, -1)
    end)

    block("TEST 10: split matches + max limiter set to 1", "a,b,c,d,e\n",
          function(ngx)
      each(ngx, "a,b,c,d,e", ",", nil, nil, 1)
    end)

    block("TEST 11: split matches, provided res table", "a\nb\nc\nd\ne\n",
          function(ngx)
      local my_table = {}
      each(ngx, "a,b,c,d,e", ",", nil, nil, nil, my_table)
    end)

    -- the blocks that fill my_table first and say res[i] for its entries
    local function reused(ngx, my_table, max)
      local ngx_re = require "ngx.re"
      local res, err = ngx_re.split("a,b,c,d,e", ",", nil, nil, max,
                                    my_table)
      if err then
        ngx.log(ngx.ERR, "failed: ", err)
        return
      end
      for i in ipairs(my_table) do
        ngx.say(res[i])
      end
    end

    local function ten()
      local my_table = {}
      for i = 1, 10 do
        my_table[i] = i .. " hello world"
      end
      return my_table
    end

    block("TEST 12: split matches, provided res table (non-cleared)",
          "a\nb\nc\nd\ne\n", function(ngx)
      reused(ngx, ten(), nil)
    end)

    block("TEST 13: split matches, provided res table + max limiter",
          "a\nb\nc,d,e\n", function(ngx)
      local ngx_re = require "ngx.re"
      local my_table = { "hello, world" }
      local res, err = ngx_re.split("a,b,c,d,e", ",", nil, nil, 3,
                                    my_table)
      if err then
        ngx.log(ngx.ERR, "failed: ", err)
        return
      end
      for i = 1, #my_table do
        ngx.say(res[i])
      end
    end)

    block("TEST 14: split matches, provided res table (non-cleared) + "
          .. "max limiter", "a\nb\nc,d,e\n", function(ngx)
      reused(ngx, ten(), 3)
    end)

    block("TEST 15: split matches, provided res table + max limiter + "
          .. "sub-match capturing group", "a\n,\nb\n,\nc,d,e\n",
          function(ngx)
      local ngx_re = require "ngx.re"
      local my_table = { "hello, world" }
      local res, err = ngx_re.split("a,b,c,d,e", "(,)", nil, nil, 3,
                                    my_table)
      if err then
        ngx.log(ngx.ERR, "failed: ", err)
        return
      end
      for i = 1, #my_table do
        ngx.say(res[i])
      end
    end)

    block("TEST 16: split matches, ctx arg", "c\nd\ne\n", function(ngx)
      each(ngx, "a,b,c,d,e", ",", nil, { pos = 5 })
    end)

    block("TEST 17: split matches, trailing subjects",
          "_blank_\na\nb\nc\nd\n", function(ngx)
      local ngx_re = require "ngx.re"
      local res, err = ngx_re.split(",a,b,c,d,", ",")
      if err then
        ngx.log(ngx.ERR, "failed: ", err)
        return
      end
      for i = 1, #res do
        if res[i] == "" then
          ngx.say("_blank_")
        else
          ngx.say(res[i])
        end
      end
    end)

    block("TEST 18: split matches, real use-case",
          "abcd\nerfg\nghij\nhello world\naaa\n", function(ngx)
      each(ngx, "abcd,erfg,ghij;hello world;aaa", ",|;")
    end)

    block("TEST 19: split no matches", "abcd\n", function(ngx)
      each(ngx, "abcd", ",")
    end)

    block("TEST 20: subject is not a string type", "1\n451\n45\n",
          function(ngx)
      each(ngx, 1234512345, "23", "jo")
    end)

    block("TEST 21: split matches, pos is larger than subject length",
          "len: 0\n", function(ngx)
      each_len(ngx, "a,b,c,d,e", ",", nil, { pos = 10 })
    end)

    block('TEST 22: regex is ""', "1\n2\n3\n4\n5\nlen: 5\n", function(ngx)
      each_len(ngx, "12345", "", "jo")
    end)

    block('TEST 23: regex is "" with max', "1\n2\n345\nlen: 3\n",
          function(ngx)
      each_len(ngx, "12345", "", "jo", nil, 3)
    end)

    block('TEST 24: regex is "" with pos', "2\n3\n4\n5\nlen: 4\n",
          function(ngx)
      each_len(ngx, "12345", "", "jo", { pos = 2 })
    end)

    block('TEST 25: regex is "" with pos larger than subject length',
          "len: 0\n", function(ngx)
      each_len(ngx, "12345", "", "jo", { pos = 10 })
    end)

    block('TEST 26: regex is "" with pos & max', "2\n345\nlen: 2\n",
          function(ngx)
      each_len(ngx, "12345", "", "jo", { pos = 2 }, 2)
    end)

    block("TEST 27: no match separator (github issue #104)",
          "a:b:c:d\nlen: 4\n", function(ngx)
      joined(ngx, ":", "abcd", "|")
    end)

    block("TEST 28: no match separator (github issue #104) & max",
          "a:bcd\nlen: 2\n", function(ngx)
      joined(ngx, ":", "abcd", "|", nil, nil, 2)
    end)

    block("TEST 29: no match separator bis (github issue #104)",
          "a::b::c::d\nlen: 7\n", function(ngx)
      joined(ngx, ":", "abcd", "()")
    end)

    block("TEST 30: behavior with /^/ differs from Perl's split",
          "ab\ncd\nef\nlen: 1\n", function(ngx)
      joined(ngx, ":", "ab\ncd\nef", "^")
    end)

    block("TEST 31: behavior with /^/m", "ab\n:cd\n:ef\nlen: 3\n",
          function(ngx)
      joined(ngx, ":", "ab\ncd\nef", "^", "m")
    end)

    block("TEST 32: behavior with /^()/m (capture)",
          "ab\n::cd\n::ef\nlen: 5\n", function(ngx)
      joined(ngx, ":", "ab\ncd\nef", "^()", "m")
    end)

    block("TEST 33: behavior with /^/m & max", "ab\n:cd\nef\nlen: 2\n",
          function(ngx)
      joined(ngx, ":", "ab\ncd\nef", "^", "m", nil, 2)
    end)

    block("TEST 34: behavior with /^\\d/m", "ab\n:cdefg\n:hij\nlen: 3\n",
          function(ngx)
      joined(ngx, ":", "ab\n1cdefg\n2hij", "^\\d", "m")
    end)

    block("TEST 35: behavior with /^(\\d)/m (capture)",
          "ab\n:1:cdefg\n:2:hij\nlen: 5\n", function(ngx)
      joined(ngx, ":", "ab\n1cdefg\n2hij", "^(\\d)", "m")
    end)

    local SUBJS = {
      "1\x1fT\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f15",
      "1\x1fT\x1fT\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f15",
      "1\x1fT\x1fT\x1fT\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f15",
    }

    block("TEST 36: split by unit separator 1/2 (GH issue "
          .. "lua-nginx-module #1217)",
          "15 1|T|||||||||||||15\n15 1|T|T||||||||||||15\n"
          .. "15 1|T|T|T|||||||||||15\n", function(ngx)
      local ngx_re = require "ngx.re"
      for _, subj in ipairs(SUBJS) do
        local col_list = ngx_re.split(subj, "\\x1f")
        ngx.say(#col_list, " ", table.concat(col_list, "|"))
      end
    end)

    block("TEST 37: split by unit separator 2/2 (with ctx.pos)",
          "12 |||||||||||15\n13 ||||||||||||15\n13 |T|||||||||||15\n",
          function(ngx)
      local ngx_re = require "ngx.re"
      for _, subj in ipairs(SUBJS) do
        local col_list = ngx_re.split(subj, "\\x1f", nil, { pos = 6 })
        ngx.say(#col_list, " ", table.concat(col_list, "|"))
      end
    end)

    block("TEST 38: remaining characters are matched by regex (without "
          .. "max)", "3 a|b|cd\n", function(ngx)
      local ngx_re = require "ngx.re"
      local subj = "a,b,cd,,,"
      local res, err = ngx_re.split(subj, ",")
      if err then
        ngx.log(ngx.ERR, "failed: ", err)
        return
      end
      ngx.say(#res, " ", table.concat(res, "|"))
    end)

    block("TEST 39: remaining characters are matched by regex (with max)",
          "1 a,b,cd,,,\n2 a|b,cd,,,\n3 a|b|cd,,,\n4 a|b|cd|,,\n"
          .. "5 a|b|cd||,\n6 a|b|cd|||\n6 a|b|cd|||\n", function(ngx)
      local ngx_re = require "ngx.re"
      local subj = "a,b,cd,,,"
      for max = 1, 7 do
        local res, err = ngx_re.split(subj, ",", nil, nil, max)
        if err then
          ngx.log(ngx.ERR, "failed: ", err)
          return
        end
        ngx.say(#res, " ", table.concat(res, "|"))
      end
    end)
  end)

  -- }======

  -- {====== re-opt.t ======

  describe("re-opt.t", function()
    block("TEST 1: default jit_stack_size too small", FIND_LONG, find_long)

    it("TEST 3: jit_stack_size change disallowed once regex cache is "
       .. "populated", function()
      -- the two requests, each followed by what it logged
      local out = fresh([[
        local function request()
          local ngx_re = require "ngx.re"
          local status, err = pcall(ngx_re.opt, "jit_stack_size",
                                    128 * 1024)
          if err then io.write("[log] ", err, "\n") end
          local s = "hello, 1234"
          local from, to = ngx.re.find(s, "(hello world)|([0-9])", "jo")
          io.write("from: ", from, "\n")
          io.write("to: ", to, "\n")
        end
        request()
        request()
      ]])
      assert.are.equal("from: 8\nto: 8\n"
        .. "[log] changing jit stack size is not allowed when some regexs "
        .. "have already been compiled and cached\nfrom: 8\nto: 8\n", out)
    end)

    block("TEST 4: passing unknown options to ngx_re.opt throws an error",
          "unrecognized option name\n", function(ngx)
      local ngx_re = require "ngx.re"
      local status, err = pcall(ngx_re.opt, "foo", 123)
      ngx.say(err)
    end)
  end)

  -- }======

  -- {====== beyond the test files ======

  describe("beyond the test files", function()
    local ngx_re

    before_each(function() ngx_re = require "ngx.re" end)

    it("is preloaded with split and opt; ngx.re stays lua-nginx-module's",
       function()
      assert.equal(ngxc.modules["ngx.re"], ngx_re)
      assert.equal("function", type(ngx_re.split))
      assert.equal("function", type(ngx_re.opt))
      assert.is_nil(ngxc.ngx.re.split)
      assert.is_nil(ngxc.ngx.re.opt)
    end)

    it("gives lib/ngx/re.md's examples", function()
      assert.same({ "a", "b", "c", "d" }, ngx_re.split("a,b,c,d", ","))
      assert.same({ "a", ",", "b", ",", "c", ",", "d" },
                  ngx_re.split("a,b,c,d", "(,)"))
      assert.same({ "a", "b", "c", "d" }, ngx_re.split("abcd", ""))
      assert.same({ "c", "d" }, ngx_re.split("a,b,c,d", ",", nil,
                                             { pos = 5 }))
      assert.same({ "a", "b", "c,d" }, ngx_re.split("a,b,c,d", ",", nil,
                                                    nil, 3))
      local my_table = { "hello world" }
      local res = ngx_re.split("a,b,c,d", ",", nil, nil, nil, my_table)
      assert.equal(my_table, res)
      assert.same({ "a", "b", "c", "d" }, res)
      -- not cleared: a trailing nil after the last field
      my_table = { "W", "X", "Y", "Z" }
      res = ngx_re.split("a,b", ",", nil, nil, nil, my_table)
      assert.equal(my_table, res)
      assert.same({ "a", "b", nil, "Z" }, res)
    end)

    it("drops the empty fields at the end, and the trailing nil follows "
       .. "the last one written when all are dropped", function()
      assert.same({}, ngx_re.split(",,,", ","))
      assert.same({ "", "a" }, ngx_re.split(",a,,", ","))
      -- with max the rest of the subject is the last field, even ""
      assert.same({ "a", "" }, ngx_re.split("a,", ",", nil, nil, 5))
      local t = { "W", "X", "Y", "Z", "V" }
      ngx_re.split(",,,", ",", nil, nil, nil, t)
      assert.same({ [5] = "V" }, t)
    end)

    it("takes subjects and regexes as OpenResty writes them", function()
      assert.same({ "2" }, ngx_re.split(2.0, ","))
      assert.same({ "1", "5" }, ngx_re.split(1.25, "\\.2"))
      assert.same({ "a", "b" }, ngx_re.split("a1b", 1))
      assert.same({ "n", "l" }, ngx_re.split(nil, "i"))
      assert.same({}, ngx_re.split("", ","))
    end)

    it("passes the options on", function()
      assert.same({ "a", "b", "c" }, ngx_re.split("aXbxc", "x", "i"))
      assert.same({ "a", "c" }, ngx_re.split("abbc", "b+", "d"))
      assert.same({ "a", "b" }, ngx_re.split("a12b", "\\d+", "jo"))
      assert.same({ "a", "b" }, ngx_re.split("a12b", "\\d+", "jo"))
      -- anchored at each search: only a separator where one starts
      assert.same({ "", "a,b" }, ngx_re.split(",a,b", ",", "a"))
    end)

    it("returns nil and the error of a regex that does not compile or a "
       .. "subject that is not UTF-8", function()
      assert.same({ nil, 'pcre2_compile() failed: missing closing '
                         .. 'parenthesis in "("' },
                  { ngx_re.split("a,b", "(") })
      assert.same({ nil, "pcre_exec() failed: -23" },
                  { ngx_re.split("a\xff,b", ",", "u") })
      -- (the first search checks the whole subject, the next ones do not)
      assert.same({ nil, "pcre_exec() failed: -23" },
                  { ngx_re.split("a,b,\xff", ",", "u") })
      -- (as lua-resty-core: past the end, the regex is not compiled)
      assert.same({}, ngx_re.split("a", "(", nil, { pos = 2 }))
    end)

    it("raises for bad arguments", function()
      local function split(...) return ngx_re.split(...) end
      assert.has_error(function() split("a", {}) end,
        "bad argument #2 to 'split' (string expected, got table)")
      assert.has_error(function() split("a", ",", {}) end,
        "bad argument #3 to 'split' (string expected, got table)")
      assert.has_error(function() split("a", ",", nil, 5) end,
        "bad argument #4 to 'split' (table expected, got number)")
      assert.has_error(function() split("a", ",", nil, nil, "3") end,
        "bad argument #5 to 'split' (number expected, got string)")
      local ok, err = pcall(split, "a", ",", nil, nil, nil, 3)
      assert.is_false(ok)
      assert.matches("res is not a table$", err)
      ok, err = pcall(split, "a", ",", nil, { pos = "x" })
      assert.is_false(ok)
      assert.matches("bad ctx%.pos %(number expected, got string%)$", err)
      ok, err = pcall(split, "a", ",", "Hm")
      assert.is_false(ok)
      assert.matches('unknown flag "H" %(flags "Hm"%)$', err)
    end)

    it("starts at ctx.pos and leaves there where the next search would "
       .. "start", function()
      local ctx = {}
      assert.same({ "a", "b", "c" }, ngx_re.split("a,b,c", ",", nil, ctx))
      assert.equal(5, ctx.pos) -- after the last ","
      ctx = { pos = 3 }
      assert.same({ "b", "c,d" }, ngx_re.split("a,b,c,d", ",", nil, ctx,
                                               2))
      assert.equal(5, ctx.pos)
      ctx = { pos = 2 }
      assert.same({ "2", "3" }, ngx_re.split("123", "", nil, ctx))
      assert.equal(5, ctx.pos) -- one on from the empty match at the end
      -- past the end: untouched
      ctx = { pos = 9 }
      assert.same({}, ngx_re.split("a,b", ",", nil, ctx))
      assert.equal(9, ctx.pos)
      -- below 1: the start; a fraction is dropped; a numeric string will do
      assert.same({ "a", "b" }, ngx_re.split("ab", "", nil, { pos = 0 }))
      assert.same({ "a", "b" }, ngx_re.split("ab", "", nil, { pos = -3 }))
      assert.same({ "b" }, ngx_re.split("a,b", ",", nil, { pos = 3.5 }))
      assert.same({ "b" }, ngx_re.split("a,b", ",", nil, { pos = "3" }))
    end)

    it("steps over whole characters after an empty match in UTF-8 mode",
       function()
      assert.same({ "章", "亦", "春" }, ngx_re.split("章亦春", "", "u"))
      assert.same({ "章", "亦", "春" }, ngx_re.split("章亦春", "", "U"))
      assert.same({ "章", "亦", "春" }, ngx_re.split("章亦春", "(*UTF)"))
      assert.same({ "亦", "春" }, ngx_re.split("章亦春", "", "u",
                                             { pos = 4 }))
      -- bytes otherwise, as OpenResty
      assert.equal(9, #ngx_re.split("章亦春", ""))
    end)

    -- README "ngx.re: corosched.re": the differences
    it("splits Perl's way with a regex that matches empty and non-empty "
       .. "strings", function()
      -- (lua-resty-core: {"a", "axx", "b"}, the "xx" field starting
      -- again at the empty match before it)
      assert.same({ "a", "b" }, ngx_re.split("axxb", "x*"))
      assert.same({ "a", "b", "c" }, ngx_re.split("a,b,,c", ",*"))
      -- (lua-resty-core drops "" here, once an empty match was seen)
      assert.same({ "bx", "", "x" }, ngx_re.split("bx,,x", ",|(?=b)"))
    end)

    it("puts nothing between the fields when group 1 did not take part",
       function()
      -- (lua-resty-core: the whole subject when a later group did)
      assert.same({ "a", ";", "b", "c" }, ngx_re.split("a;b,c", "(;)|(,)"))
    end)

    it("opt: checks as lua-resty-core does, then changes nothing",
       function()
      local out = fresh(([[
        local ngx_re = require "ngx.re"
        print(select("#", ngx_re.opt("jit_stack_size", 128 * 1024)))
        print(select("#", ngx_re.opt("jit_stack_size", 1)))
        print(pcall(ngx_re.opt, "jit_stack_size", "big"))
        print(pcall(ngx_re.opt, "foo", 1))
        -- re-opt.t TEST 2's find: the JIT stack is still PCRE2's default
        print(ngx.re.find(%q, %q, "jo"))
        print(pcall(ngx_re.opt, "jit_stack_size", 128 * 1024))
        print(pcall(ngx_re.opt, "foo", 1))
      ]]):format(LONG_SUBJECT, COMPLICATED_RE))
      -- (the child runs JIT-compiled code unless it is under valgrind
      -- itself, whatever this process is: valgrind does not follow it)
      local find_line = out:match("\n([^\n]*1563[^\n]*)\n")
        or "nil\tnil\tpcre_exec() failed: -46"
      assert.is_true(find_line == "1\t1563"
                     or find_line == "nil\tnil\tpcre_exec() failed: -46")
      assert.are.equal("0\n0\n"
        .. "false\tbad argument #2 to '?' (number expected, got string)\n"
        .. "false\tunrecognized option name\n"
        .. find_line .. "\n"
        .. "false\tchanging jit stack size is not allowed when some "
        .. "regexs have already been compiled and cached\n"
        .. "false\tunrecognized option name\n", out)
    end)
  end)

  -- }======
end)

describe("ngx.re (lua-resty-core's module) without corosched.re",
         function()
  it("is not preloaded", function()
    local mod = ngx_env.ngx_without_re()
    assert.is_nil(mod.modules["ngx.re"])
    assert.is_table(mod.modules["ngx.base64"])
  end)
end)
