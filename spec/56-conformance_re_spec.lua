-- Conformance: OpenResty's ngx.re tests replayed on corosched.re (the
-- module, called directly: re.match/find/gmatch/sub/gsub). Each `it` is one
-- block of lua-nginx-module's test files, named after it; its Lua code runs
-- with an `ngx` whose say/print record the response body, which is compared
-- with the block's --- response_body byte for byte (print(), nginx's error
-- log, is recorded apart for the blocks that check it). Globals of the
-- chunks are locals here; nginx's escaping of content_by_lua '...' strings
-- is undone ("\\\\d" in the .t file is "\\d" in the Lua code that runs).
-- Versions: the newest stored ones: 034-match.t at 1ada6d0 (50 blocks),
-- 035-gmatch.t at c608917 (31), 036-sub.t at 91a6d7d (33), 037-gsub.t at
-- 0544a9c (29), 120-re-find.t at 06c2808 (31), 038-match-o.t at 0d5440f
-- (33), 047-match-jit.t at 26b48c5 (7), 048-match-dfa.t at 0ac676f (7).
--
-- PCRE2: those files predate PCRE2 and print PCRE's messages. Where
-- OpenResty built with PCRE2 prints something else, the PCRE2 text is
-- expected, as OpenResty's own PcreVersion == 2 branches do (047 TEST 5,
-- lua-resty-core's re tests): "pcre2_compile() failed: missing closing
-- parenthesis in ..." for "missing ) in ...", and "pcre_exec() failed: -4"
-- (PCRE2_ERROR_UTF8_ERR2) for a truncated UTF-8 subject, where PCRE said
-- -10 (PCRE_ERROR_BADUTF8).
--
-- 034, covered: 1, 2, 5-24, 26, 28-32, 34-44, 46, 47, 49, 50.
-- 034, skipped: 3, 4, 27 (Lua syntax errors: they test the Lua parser);
--   25 (set_by_lua: TEST 1's code); 33 (ngx.exec); 45 (hits
--   lua_regex_match_limit 5000: no such setting, PCRE2's default limit
--   applies, as in 46); 48 (--- SKIP in the file).
-- 035, covered: 1-9, 11-18, 20-29, 31 (14, 15: the output does not
--   depend on lua_regex_cache_max_entries).
-- 035, skipped: 10 (set_by_lua: TEST 9's code); 19 (subrequests);
--   30 (lua_regex_match_limit).
-- 036, covered: 1-15, 17, 20, 21, 23-27, 29-33 (4, 5, 7-10: the returned
--   error; the detail nginx logs is not reported).
-- 036, skipped: 16, 18, 22 (--- SKIP in the file); 19 (set_by_lua:
--   TEST 1's code); 28 (lua_regex_match_limit).
-- 037, covered: 1-7, 9-22, 24-26, 29.
-- 037, skipped: 8 (set_by_lua: TEST 5's code); 23
--   (lua_regex_match_limit); 27, 28 (ngx.req.get_headers and ngx.var in
--   the callback: request APIs).
-- 120, covered: 1-21, 23-31 (14: the raise; nginx answers 500).
-- 120, skipped: 22 (lua_regex_match_limit).
-- 038, covered: 1, 2, 5-23, 25-33. Skipped: 3, 4 (Lua syntax errors),
--   24 (set_by_lua).
-- 047, covered: 1-5 (not the "pcre JIT compiling result" debug log).
--   Skipped: 6 (lua_regex_match_limit); 7 is 034 TEST 46's case.
-- 048, covered: 1-7.
--
-- The last describe checks what the test files do not: arguments, the
-- replacement template, yields in a gsub callback, the regex cache, and
-- the error paths that must not leak (run under ASan and valgrind).
local ok_re, re = pcall(require, "corosched.re")

if not ok_re then
  describe("corosched.re", function()
    pending("not built: pkg-config finds no libpcre2-8 (" .. tostring(re)
      .. ")")
  end)
  return
end

-- runs fn(ngx, print) and returns what it printed with ngx.say/ngx.print
-- (the response body) and with print (the error log)
local function run(fn)
  local body, log = {}, {}
  local function cat(buf, ...)
    local t = table.pack(...)
    for i = 1, t.n do buf[#buf + 1] = tostring(t[i]) end
  end
  local ngx = { re = re }
  function ngx.say(...) cat(body, ...); body[#body + 1] = "\n" end
  function ngx.print(...) cat(body, ...) end
  local function print(...) cat(log, ...); log[#log + 1] = "\n" end
  fn(ngx, print)
  return table.concat(body), table.concat(log)
end

-- the block: fn's body is expected
local function block(name, expected, fn)
  it(name, function()
    assert.are.equal(expected, (run(fn)))
  end)
end

-- OpenResty's bad-pattern message with PCRE2 (see the header)
local function missing_paren(rx)
  return 'error: pcre2_compile() failed: missing closing parenthesis in "'
    .. rx .. '"\n'
end

local BAD_UTF8 = "error: pcre_exec() failed: -4\n"

-- the regex of the match-limit blocks, and its subject
local LIMIT_RE = [==[(?i:([\s'\"`´’‘\(\)]*)?([\d\w]+)([\s'\"`´’‘\(\)]*)?(?:=|<=>|r?like|sounds\s+like|regexp)([\s'\"`´’‘\(\)]*)?\2|([\s'\"`´’‘\(\)]*)?([\d\w]+)([\s'\"`´’‘\(\)]*)?(?:!=|<=|>=|<>|<|>|\^|is\s+not|not\s+like|not\s+regexp)([\s'\"`´’‘\(\)]*)?(?!\6)([\d\w]+))]==]


-- {====== 034-match.t ======

describe("034-match.t", function()
  -- the blocks that print m[0] or "not matched!"
  local function m0(ngx, subj, rx, opts)
    local m = ngx.re.match(subj, rx, opts)
    if m then ngx.say(m[0]) else ngx.say("not matched!") end
  end
  -- the blocks that print m[0] or "not matched: nil"
  local function m0nil(ngx, subj, rx, opts)
    local m = ngx.re.match(subj, rx, opts)
    if m then ngx.say(m[0]) else ngx.say("not matched: ", m) end
  end
  -- the bad-pattern blocks
  local function bad(ngx, subj, rx, opts)
    local m, err = ngx.re.match(subj, rx, opts)
    if m then
      ngx.say(m[0])
    else
      if err then
        ngx.say("error: ", err)
      else
        ngx.say("not matched: ", m)
      end
    end
  end

  block("TEST 1: sanity", "1234\n", function(ngx)
    m0(ngx, "hello, 1234", "([0-9]+)")
  end)

  block("TEST 2: escaping sequences", "1234\n", function(ngx)
    m0(ngx, "hello, 1234", "(\\d+)")
  end)

  block("TEST 5: single capture", "1234\n12\n", function(ngx)
    local m = ngx.re.match("hello, 1234", "([0-9]{2})[0-9]+")
    if m then
      ngx.say(m[0])
      ngx.say(m[1])
    else
      ngx.say("not matched!")
    end
  end)

  for _, t in ipairs({ { 6, "" }, { 7, "o" } }) do
    local name = t[1] == 6 and "TEST 6: multiple captures"
      or "TEST 7: multiple captures (with o)"
    block(name, "hello, 1234\nhello\n12\n", function(ngx)
      local m = ngx.re.match("hello, 1234", "([a-z]+).*?([0-9]{2})[0-9]+",
        t[2])
      if m then
        ngx.say(m[0])
        ngx.say(m[1])
        ngx.say(m[2])
      else
        ngx.say("not matched!")
      end
    end)
  end

  block("TEST 8: not matched", "not matched: nil\n", function(ngx)
    m0nil(ngx, "hello, 1234", "foo")
  end)

  block("TEST 9: case sensitive by default", "not matched: nil\n",
    function(ngx) m0nil(ngx, "hello, 1234", "HELLO") end)

  block("TEST 10: case insensitive", "hello\n", function(ngx)
    m0nil(ngx, "hello, 1234", "HELLO", "i")
  end)

  block("TEST 11: UTF-8 mode", "hello章亦\n", function(ngx)
    local rc, err = pcall(ngx.re.match, "hello章亦春", "HELLO.{2}", "iu")
    if not rc then
      ngx.say("FAIL: ", err)
      return
    end
    local m = err
    if m then ngx.say(m[0]) else ngx.say("not matched: ", m) end
  end)

  block("TEST 12: multi-line mode (^ at line head)", "world\n",
    function(ngx) m0nil(ngx, "hello\nworld", "^world", "m") end)

  block("TEST 13: multi-line mode (. does not match \\n)", "hello\n",
    function(ngx) m0nil(ngx, "hello\nworld", ".*", "m") end)

  block("TEST 14: single-line mode (^ as normal)", "not matched: nil\n",
    function(ngx) m0nil(ngx, "hello\nworld", "^world", "s") end)

  block("TEST 15: single-line mode (dot all)", "hello\nworld\n",
    function(ngx) m0nil(ngx, "hello\nworld", ".*", "s") end)

  block("TEST 16: extended mode (ignore whitespaces)", "he\n",
    function(ngx) m0nil(ngx, "hello\nworld", "\\w     \\w", "x") end)

  block("TEST 17: bad pattern", missing_paren("(abc"), function(ngx)
    bad(ngx, "hello\nworld", "(abc")
  end)

  it("TEST 18: bad option", function()
    local body = run(function(ngx)
      local rc, m = pcall(ngx.re.match, "hello\nworld", ".*", "Hm")
      if rc then
        if m then ngx.say(m[0]) else ngx.say("not matched: ", m) end
      else
        ngx.say("error: ", m)
      end
    end)
    assert.matches('^error: .-unknown flag "H" %(flags "Hm"%)\n$', body)
  end)

  block("TEST 19: extended mode (ignore whitespaces)",
    "hello\nfalse\nhello\n", function(ngx)
      local m = ngx.re.match("hello, world", "(world)|(hello)", "x")
      if m then
        ngx.say(m[0])
        ngx.say(m[1])
        ngx.say(m[2])
      else
        ngx.say("not matched: ", m)
      end
    end)

  block("TEST 20: optional trailing captures", "1234\n1234\n\n",
    function(ngx)
      local m = ngx.re.match("hello, 1234", "([0-9]+)(h?)")
      if m then
        ngx.say(m[0])
        ngx.say(m[1])
        ngx.say(m[2])
      else
        ngx.say("not matched!")
      end
    end)

  block("TEST 21: anchored match (failed)", "not matched!\n", function(ngx)
    m0(ngx, "hello, 1234", "([0-9]+)", "a")
  end)

  block("TEST 22: anchored match (succeeded)", "1234\n", function(ngx)
    m0(ngx, "1234, hello", "([0-9]+)", "a")
  end)

  local function with_ctx(ngx, ctx, opts)
    local m = ngx.re.match("1234, hello", "([0-9]+)", opts or "", ctx)
    if m then
      ngx.say(m[0])
      ngx.say(ctx.pos)
    else
      ngx.say("not matched!")
      ngx.say(ctx.pos)
    end
  end

  block("TEST 23: match with ctx but no pos", "1234\n5\n", function(ngx)
    with_ctx(ngx, {})
  end)

  block("TEST 24: match with ctx and a pos", "34\n5\n", function(ngx)
    with_ctx(ngx, { pos = 3 })
  end)

  block("TEST 26: match (look-behind assertion)", "bar\nbaz\n",
    function(ngx)
      local ctx = {}
      local m = ngx.re.match("{foobarbaz}", "(?<=foo)bar|(?<=bar)baz", "",
        ctx)
      ngx.say(m and m[0])
      m = ngx.re.match("{foobarbaz}", "(?<=foo)bar|(?<=bar)baz", "", ctx)
      ngx.say(m and m[0])
    end)

  block("TEST 28: escaping sequences",
    "regex: (?:>[\\w\\s]*</?\\w{2,}>)\n[>2</impact>]\n", function(ngx)
      local uri = "<impact>2</impact>"
      local regex = '(?:>[\\w\\s]*</?\\w{2,}>)';
      ngx.say("regex: ", regex)
      local m = ngx.re.match(uri, regex, "oi")
      if m then
        ngx.say("[", m[0], "]")
      else
        ngx.say("not matched!")
      end
    end)

  block("TEST 29: long brackets", "1234\n", function(ngx)
    m0(ngx, "hello, 1234", [[\d+]])
  end)

  block("TEST 30: bad pattern", missing_paren("([0-9]+"), function(ngx)
    local m, err = ngx.re.match("hello, 1234", "([0-9]+")
    if m then
      ngx.say(m[0])
    else
      if err then
        ngx.say("error: ", err)
      else
        ngx.say("not matched!")
      end
    end
  end)

  block("TEST 31: long brackets containing [...]", "1234\n", function(ngx)
    m0(ngx, "hello, 1234", [[([0-9]+)]])
  end)

  block("TEST 32: bug report (github issue #72)", "done\n", function(ngx)
    ngx.re.match("hello", "hello", "j")
    ngx.say("done")
    ngx.re.match("hello", "world", "j")  -- (its header_filter_by_lua)
  end)

  block("TEST 34: non-empty subject, empty pattern", "pos: 1\nm: \n",
    function(ngx)
      local ctx = {}
      local m = ngx.re.match("hello, 1234", "", "", ctx)
      if m then
        ngx.say("pos: ", ctx.pos)
        ngx.say("m: ", m[0])
      else
        ngx.say("not matched!")
      end
    end)

  block("TEST 35: named subpatterns w/ extraction",
    "hello, 1234\nhello\nhello\nnil\n", function(ngx)
      local m = ngx.re.match("hello, 1234", "(?<first>[a-z]+), [0-9]+")
      if m then
        ngx.say(m[0])
        ngx.say(m[1])
        ngx.say(m.first)
        ngx.say(m.second)
      else
        ngx.say("not matched!")
      end
    end)

  block("TEST 36: duplicate named subpatterns w/ extraction",
    "hello, 1234\nhello\n1234\nhello-1234\n", function(ngx)
      local m = ngx.re.match("hello, 1234",
        "(?<first>[a-z]+), (?<first>[0-9]+)", "D")
      if m then
        ngx.say(m[0])
        ngx.say(m[1])
        ngx.say(m[2])
        ngx.say(table.concat(m.first, "-"))
      else
        ngx.say("not matched!")
      end
    end)

  block("TEST 37: named captures are empty strings", "1234\n\n\n1234\n",
    function(ngx)
      local m = ngx.re.match("1234", "(?<first>[a-z]*)([0-9]+)")
      if m then
        ngx.say(m[0])
        ngx.say(m.first)
        ngx.say(m[1])
        ngx.say(m[2])
      else
        ngx.say("not matched!")
      end
    end)

  block("TEST 38: named captures are false",
    "hello\nfalse\nhello\nfalse\nfalse\n", function(ngx)
      local m = ngx.re.match("hello, world",
        "(world)|(hello)|(?<named>howdy)")
      if m then
        ngx.say(m[0])
        ngx.say(m[1])
        ngx.say(m[2])
        ngx.say(m[3])
        ngx.say(m["named"])
      else
        ngx.say("not matched!")
      end
    end)

  block("TEST 39: duplicate named subpatterns",
    "hello, world\nhello\nworld\nhello-world\n", function(ngx)
      local m = ngx.re.match("hello, world",
        "(?<named>\\w+), (?<named>\\w+)", "D")
      if m then
        ngx.say(m[0])
        ngx.say(m[1])
        ngx.say(m[2])
        ngx.say(table.concat(m.named, "-"))
      else
        ngx.say("not matched!")
      end
    end)

  block("TEST 40: Javascript compatible mode", "matched: 章\n",
    function(ngx)
      local m = ngx.re.match("章", [[\u7AE0]], "uJ")
      if m then
        ngx.say("matched: ", m[0])
      else
        ngx.say("not matched!")
      end
    end)

  block("TEST 41: empty duplicate captures", "nil\nnil\n", function(ngx)
    local target = 'test'
    local regex =
      '^(?:(?<group1>(?:foo))|(?<group2>(?:bar))|(?<group3>(?:test)))$'
    -- Note the D here
    local m = ngx.re.match(target, regex, 'D')
    ngx.say(type(m.group1))
    ngx.say(type(m.group2))
  end)

  block("TEST 42: bad UTF-8", BAD_UTF8, function(ngx)
    local target = "你好"
    local regex = "你好"
    local m, err = ngx.re.match(string.sub(target, 1, 4), regex, "u")
    if err then
      ngx.say("error: ", err)
      return
    end
    if m then
      ngx.say("matched: ", m[0])
    else
      ngx.say("not matched")
    end
  end)

  block("TEST 43: UTF-8 mode without UTF-8 sequence checks", "你\n",
    function(ngx) m0(ngx, "你好", ".", "U") end)

  block("TEST 44: UTF-8 mode with UTF-8 sequence checks", "你\n",
    function(ngx) m0(ngx, "你好", ".", "u") end)

  block("TEST 46: just not hit match limit", "failed to match\n",
    function(ngx)
      local s = string.rep([[ABCDEFG]], 10)
      local res, err = ngx.re.match(s, LIMIT_RE, "o")
      if not res then
        if err then
          ngx.say("error: ", err)
          return
        end
        ngx.say("failed to match")
        return
      end
    end)

  block("TEST 47: extra table argument",
    "1: m size: 2\n1: res size: 2\n2: m size: 2\n2: res size: 2\n",
    function(ngx)
      local res = {}
      local s = "hello, 1234"
      local m = ngx.re.match(s, [[(\d)(\d)]], "o", nil, res)
      if m then
        ngx.say("1: m size: ", #m)
        ngx.say("1: res size: ", #res)
      else
        ngx.say("1: not matched!")
      end
      m = ngx.re.match(s, [[(\d)]], "o", nil, res)
      if m then
        ngx.say("2: m size: ", #m)
        ngx.say("2: res size: ", #res)
      else
        ngx.say("2: not matched!")
      end
    end)

  block("TEST 49: trailing captures are false", "hello\nhello\nfalse\n",
    function(ngx)
      local m = ngx.re.match("hello", "(hello)(.+)?")
      if m then
        ngx.say(m[0])
        ngx.say(m[1])
        ngx.say(m[2])
      end
    end)

  block("TEST 50: the 5th argument hides the 4th (GitHub #719)",
    "2016 2016 9\n", function(ngx)
      local ctx, m = { pos = 5 }, {};
      local _, err = ngx.re.match("20172016-11-3 03:07:09", [=[(\d\d\d\d)]=],
        "", ctx, m);
      assert(not err)
      if m then
        ngx.say(m[0], " ", _[0], " ", ctx.pos)
      else
        ngx.say("not matched!")
      end
    end)
end)

-- }======


-- {====== 035-gmatch.t ======

describe("035-gmatch.t", function()
  -- prints m[0] (or m) for three or four calls of it
  local function calls(ngx, it, n)
    for _ = 1, n do
      local m = it()
      if m then ngx.say(m[0]) else ngx.say(m) end
    end
  end
  -- prints m and m[0] for n calls
  local function ands(ngx, it, n)
    for _ = 1, n do
      local m = it()
      ngx.say(m and m[0])
    end
  end

  block("TEST 1: gmatch", "hello\nworld\n", function(ngx)
    for m in ngx.re.gmatch("hello, world", "[a-z]+") do
      if m then
        ngx.say(m[0])
      else
        ngx.say("not matched: ", m)
      end
    end
  end)

  block("TEST 2: fail to match", "nil\nnil\nnil\n", function(ngx)
    calls(ngx, ngx.re.gmatch("hello, world", "[0-9]"), 3)
  end)

  block("TEST 3: match but iterate more times (not just match at the end)",
    "hello\nworld\nnil\nnil\n", function(ngx)
      calls(ngx, ngx.re.gmatch("hello, world!", "[a-z]+"), 4)
    end)

  block("TEST 4: match but iterate more times (just matched at the end)",
    "hello\nworld\nnil\nnil\n", function(ngx)
      calls(ngx, ngx.re.gmatch("hello, world", "[a-z]+"), 4)
    end)

  block("TEST 5: anchored match (failed)", "nil\n", function(ngx)
    local it = ngx.re.gmatch("hello, 1234", "([0-9]+)", "a")
    ngx.say(it())
  end)

  for _, n in ipairs({ 6, 9 }) do
    block("TEST " .. n .. ": anchored match (succeeded)", "1\n2\nnil\n",
      function(ngx)
        local it = ngx.re.gmatch("12 hello 34", "[0-9]", "a")
        local m = it()
        ngx.say(m[0])
        m = it()
        ngx.say(m[0])
        ngx.say(it())
      end)
  end

  block("TEST 7: non-anchored gmatch (without regex cache)",
    "1\n2\n3\n4\nnil\n", function(ngx)
      ands(ngx, ngx.re.gmatch("12 hello 34", "[0-9]"), 5)
    end)

  block("TEST 8: non-anchored gmatch (with regex cache)",
    "1\n2\n3\n4\nnil\n", function(ngx)
      ands(ngx, ngx.re.gmatch("12 hello 34", "[0-9]", "o"), 5)
    end)

  block("TEST 11: gmatch (look-behind assertion)", "bar\nbaz\n",
    function(ngx)
      for m in ngx.re.gmatch("{foobar}, {foobaz}", "(?<=foo)ba[rz]") do
        if m then ngx.say(m[0]) else ngx.say("not matched: ", m) end
      end
    end)

  block("TEST 12: gmatch (look-behind assertion 2)", "bar\nbaz\n",
    function(ngx)
      for m in ngx.re.gmatch("{foobarbaz}", "(?<=foo)bar|(?<=bar)baz") do
        if m then ngx.say(m[0]) else ngx.say("not matched: ", m) end
      end
    end)

  block("TEST 13: with regex cache", "hello\nokay\nnil\n", function(ngx)
    local it = ngx.re.gmatch("hello, 1234", "([A-Z]+)", "io")
    local m = it()
    ngx.say(m and m[0])
    it = ngx.re.gmatch("1234, okay", "([A-Z]+)", "io")
    m = it()
    ngx.say(m and m[0])
    it = ngx.re.gmatch("hi, 1234", "([A-Z]+)", "o")
    m = it()
    ngx.say(m and m[0])
  end)

  for _, t in ipairs({ { 14, "exceeding regex cache max entries" },
                       { 15, "disable regex cache completely" } }) do
    block("TEST " .. t[1] .. ": " .. t[2], "1234\n567\n98\n", function(ngx)
      local it = ngx.re.gmatch("hello, 1234", "([0-9]+)", "o")
      local m = it()
      ngx.say(m and m[0])
      it = ngx.re.gmatch("howdy, 567", "([0-9]+)", "oi")
      m = it()
      ngx.say(m and m[0])
      it = ngx.re.gmatch("hiya, 98", "([0-9]+)", "ox")
      m = it()
      ngx.say(m and m[0])
    end)
  end

  block("TEST 16: gmatch matched but no iterate", "done\n", function(ngx)
    local it = ngx.re.gmatch("hello, world", "[a-z]+")
    assert(it)
    ngx.say("done")
  end)

  block("TEST 17: gmatch matched but only iterate once and still matches "
    .. "remain", "hello\n", function(ngx)
      local it = ngx.re.gmatch("hello, world", "[a-z]+")
      local m = it()
      if m then ngx.say(m[0]) else ngx.say("not matched") end
    end)

  block("TEST 18: gmatch matched but no iterate and early forced GC",
    "done\n", function(ngx)
      local a = {}
      for _ = 1, 3 do
        local it = ngx.re.gmatch("hello, world", "[a-z]+")
        it()
        collectgarbage()
        table.insert(a, { "hello", "world" })
      end
      ngx.say("done")
    end)

  block("TEST 20: gmatch (empty matched string)",
    string.rep("matched: []\n", 6), function(ngx)
      for m in ngx.re.gmatch("hello", "a|") do
        if m then
          ngx.say("matched: [", m[0], "]")
        else
          ngx.say("not matched: ", m)
        end
      end
    end)

  block("TEST 21: gmatch with named pattern",
    "1234\n1234\n1234\n1234\n1234\n1234\n", function(ngx)
      local it = ngx.re.gmatch("1234, 1234", "(?<first>[0-9]+)")
      for _ = 1, 2 do
        local m = it()
        if m then
          ngx.say(m[0])
          ngx.say(m[1])
          ngx.say(m["first"])
        else
          ngx.say("not matched!")
        end
      end
    end)

  block("TEST 22: gmatch with multiple named pattern",
    "1234\n1234\nfalse\n1234\nfalse\nabcd\nfalse\nabcd\nfalse\nabcd\n",
    function(ngx)
      local it = ngx.re.gmatch("1234, abcd, 1234",
        "(?<first>[0-9]+)|(?<second>[a-z]+)")
      for _ = 1, 2 do
        local m = it()
        if m then
          ngx.say(m[0])
          ngx.say(m[1])
          ngx.say(m[2])
          ngx.say(m["first"])
          ngx.say(m["second"])
        else
          ngx.say("not matched!")
        end
      end
    end)

  block("TEST 23: gmatch with duplicate named pattern w/ extraction",
    "hello, 1234\nhello\n1234\nhello-1234\nnot matched!\n", function(ngx)
      local it = ngx.re.gmatch("hello, 1234",
        "(?<first>[a-z]+), (?<first>[0-9]+)", "D")
      for _ = 1, 2 do
        local m = it()
        if m then
          ngx.say(m[0])
          ngx.say(m[1])
          ngx.say(m[2])
          ngx.say(table.concat(m.first, "-"))
        else
          ngx.say("not matched!")
        end
      end
    end)

  for _, t in ipairs({ { 24, "named captures are empty", "" },
                       { 25, "named captures are empty (with regex cache)",
                         "o" } }) do
    block("TEST " .. t[1] .. ": " .. t[2], "1234\n\n\n1234\n", function(ngx)
      local it = ngx.re.gmatch("1234", "(?<first>[a-z]*)([0-9]+)", t[3])
      local m = it()
      if m then
        ngx.say(m[0])
        ngx.say(m.first)
        ngx.say(m[1])
        ngx.say(m[2])
      else
        ngx.say("not matched!")
      end
    end)
  end

  block("TEST 26: bad pattern", missing_paren("(abc"), function(ngx)
    local it, err = ngx.re.gmatch("hello\nworld", "(abc")
    assert(not it)
    if not err then
      ngx.say("good")
    else
      ngx.say("error: ", err)
    end
  end)

  block("TEST 27: bad UTF-8", BAD_UTF8, function(ngx)
    local target = "你好"
    local regex = "你好"
    local it, err = ngx.re.gmatch(string.sub(target, 1, 4), regex, "u")
    if err then
      ngx.say("error: ", err)
      return
    end
    local m, err2 = it()
    if err2 then
      ngx.say("error: ", err2)
      return
    end
    if m then ngx.say("matched: ", m[0]) else ngx.say("not matched") end
  end)

  for _, t in ipairs({ { 28, "without", "U" }, { 29, "with", "u" } }) do
    block("TEST " .. t[1] .. ": UTF-8 mode " .. t[2]
      .. " UTF-8 sequence checks", "你\n", function(ngx)
        local it = ngx.re.gmatch("你好", ".", t[3])
        local m = it()
        if m then ngx.say(m[0]) else ngx.say("not matched!") end
      end)
  end

  block("TEST 31: just not hit match limit", "failed to match\n",
    function(ngx)
      local s = string.rep([[ABCDEFG]], 10)
      local it, err = ngx.re.gmatch(s, LIMIT_RE, "o")
      if not it then
        ngx.say("failed to gen iterator: ", err)
        return
      end
      local res
      res, err = it()
      if not res then
        if err then
          ngx.say("error: ", err)
          return
        end
        ngx.say("failed to match")
        return
      end
    end)
end)

-- }======


-- {====== 036-sub.t ======

describe("036-sub.t", function()
  -- the blocks that print s and n
  local function sn(ngx, ...)
    local s, n = ngx.re.sub(...)
    ngx.say(s)
    ngx.say(n)
  end
  -- the blocks that print "s: n" or the error
  local function sn_err(ngx, ...)
    local s, n, err = ngx.re.sub(...)
    if s then
      ngx.say(s, ": ", n)
    else
      ngx.say("error: ", err)
    end
  end
  local TPL = "error: failed to compile the replacement template\n"

  block("TEST 1: matched but w/o variables", "howdy, world\n1\n",
    function(ngx) sn(ngx, "hello, world", "[a-z]+", "howdy") end)

  block("TEST 2: not matched", "hello, world\n0\n", function(ngx)
    sn(ngx, "hello, world", "[A-Z]+", "howdy")
  end)

  block("TEST 3: matched and with variables", "a [b c] [b] [c] [] [] d\n1\n",
    function(ngx)
      sn(ngx, "a b c d", "(b) (c)", "[$0] [$1] [$2] [$3] [$134]")
    end)

  block("TEST 4: matched and with named variables", TPL, function(ngx)
    sn_err(ngx, "a b c d", "(b) (c)", "[$0] [$1] [$2] [$3] [$hello]")
  end)

  block("TEST 5: matched and with named variables (bracketed)", TPL,
    function(ngx)
      sn_err(ngx, "a b c d", "(b) (c)", "[$0] [$1] [$2] [$3] [${hello}]")
    end)

  block("TEST 6: matched and with bracketed variables",
    "[b c] [b] [c] [] [] d\n1\n", function(ngx)
      sn(ngx, "b c d", "(b) (c)", "[$0] [$1] [${2}] [$3] [${134}]")
    end)

  for n, tpl in pairs({ [7] = "[$0] [$1] [${2}] [$3] [${134]",
                        [8] = "[$0] [$1] [${2}] [$3] [${134",
                        [9] = "[$0] [$1] [${2}] [$3] [${" }) do
    block("TEST " .. n .. ": matched and with bracketed variables "
      .. "(unmatched brackets)", TPL, function(ngx)
        sn_err(ngx, "b c d", "(b) (c)", tpl)
      end)
  end

  block("TEST 10: trailing $", TPL, function(ngx)
    sn_err(ngx, "b c d", "(b) (c)", "[$0] [$1] [${2}] [$3] [$")
  end)

  block("TEST 11: matched but w/o variables and with literal $",
    "ho$wdy, world\n1\n", function(ngx)
      sn(ngx, "hello, world", "[a-z]+", "ho$$wdy")
    end)

  block("TEST 12: non-anchored match", "hello, x234\n1\n", function(ngx)
    sn(ngx, "hello, 1234", "[0-9]", "x")
  end)

  block("TEST 13: anchored match", "hello, 1234\n0\n", function(ngx)
    sn(ngx, "hello, 1234", "[0-9]", "x", "a")
  end)

  local function repl(m)
    return "[" .. m[0] .. "] [" .. m[1] .. "]"
  end

  block("TEST 14: function replace", "hello, [3] [3]4\n1\n", function(ngx)
    sn(ngx, "hello, 34", "([0-9])", repl)
  end)

  block("TEST 15: function replace (failed)", "hello, 34\n0\n",
    function(ngx) sn(ngx, "hello, 34", "([A-Z])", repl) end)

  block("TEST 17: use number to replace", "true\nhello, 724\n1\n",
    function(ngx)
      local rc, s, n = pcall(ngx.re.sub, "hello, 34", "([0-9])", 72)
      ngx.say(rc)
      ngx.say(s)
      ngx.say(n)
    end)

  block("TEST 20: matched and with variables w/o using named patterns in "
    .. "sub", "a [b c] [b] [c] [] [] d\n1\n", function(ngx)
      sn(ngx, "a b c d", "(?<first>b) (?<second>c)",
        "[$0] [$1] [$2] [$3] [$134]")
    end)

  block("TEST 21: matched and with variables using named patterns in func",
    "a [b c] [b] [c] d\n1\n", function(ngx)
      sn(ngx, "a b c d", "(?<first>b) (?<second>c)", function(m)
        return "[" .. m[0] .. "] [" .. m["first"] .. "] [" .. m[2] .. "]"
      end)
    end)

  block("TEST 23: $0 without parens", "[a] b c d\n1\n", function(ngx)
    sn(ngx, "a b c d", [[\w]], "[$0]")
  end)

  block("TEST 24: bad pattern", missing_paren("(abc"), function(ngx)
    local s, n, err = ngx.re.sub("hello\nworld", "(abc", "")
    if s then
      ngx.say("subs: ", n)
    else
      ngx.say("error: ", err)
    end
  end)

  block("TEST 25: bad UTF-8", BAD_UTF8, function(ngx)
    local target = "你好"
    local regex = "你好"
    sn_err(ngx, string.sub(target, 1, 4), regex, "", "u")
  end)

  for _, t in ipairs({ { 26, "without", "U" }, { 27, "with", "u" } }) do
    block("TEST " .. t[1] .. ": UTF-8 mode " .. t[2]
      .. " UTF-8 sequence checks", "s: a好\n", function(ngx)
        local s = ngx.re.sub("你好", ".", "a", t[3])
        if s then ngx.say("s: ", s) end
      end)
  end

  block("TEST 29: just not hit match limit", "sub: 0\n", function(ngx)
    local s = string.rep([[ABCDEFG]], 10)
    local _, cnt, err = ngx.re.sub(s, LIMIT_RE, "", "o")
    if err then
      ngx.say("error: ", err)
      return
    end
    ngx.say("sub: ", cnt)
  end)

  block("TEST 30: bug: sub incorrectly swallowed a character is the first "
    .. "character", "TestCase\n", function(ngx)
      local s = ngx.re.sub("TestCase", "^ *", "", "o")
      if s then ngx.say(s) end
    end)

  block("TEST 31: bug: sub incorrectly swallowed a character is not the "
    .. "first character", "ab.cd\n", function(ngx)
      local s = ngx.re.sub("abcd", "(?=c)", ".")
      if s then ngx.say(s) end
    end)

  block("TEST 32: ngx.re.gsub: recursive calling (github #445)",
    "                OUTER {FIRST}\n                OUTER REPLACED\n",
    function(ngx)
      local data = [[
                OUTER {FIRST}
]]
      local p1 = "(OUTER)(.+)"
      local p2 = "{([A-Z]+)}"
      ngx.print(data)
      local res = ngx.re.gsub(data, p1, function(m)
        local res = ngx.re.gsub(m[2], p2, function(_)
          return "REPLACED"
        end, "")
        return m[1] .. res
      end, "")
      ngx.print(res)
    end)

  it("TEST 33: function replace (false for groups)", function()
    local body, log = run(function(ngx, print)
      local s, n = ngx.re.sub("hello, 34", "([0-9])|(world)", function(m)
        print("group 1: ", m[2])
        return "[" .. m[0] .. "] [" .. m[1] .. "]"
      end)
      ngx.say(s)
      ngx.say(n)
    end)
    assert.are.equal("hello, [3] [3]4\n1\n", body)
    assert.are.equal("group 1: false\n", log)
  end)
end)

-- }======


-- {====== 037-gsub.t ======

describe("037-gsub.t", function()
  local function sn(ngx, ...)
    local s, n = ngx.re.gsub(...)
    ngx.say(s)
    ngx.say(n)
  end
  local function f(m)
    return "[" .. m[0] .. "," .. m[1] .. "]"
  end

  block("TEST 1: sanity", "[howdy, howdy]\n2\n", function(ngx)
    sn(ngx, "[hello, world]", "[a-z]+", "howdy")
  end)

  block("TEST 2: trimmed", "howdy, howdy\n2\n", function(ngx)
    sn(ngx, "hello, world", "[a-z]+", "howdy")
  end)

  block("TEST 3: not matched", "hello, world\n0\n", function(ngx)
    sn(ngx, "hello, world", "[A-Z]+", "howdy")
  end)

  block("TEST 4: replace by function (trimmed)",
    "[hello,h], [world,w]\n2\n", function(ngx)
      sn(ngx, "hello, world", "([a-z])[a-z]+", f)
    end)

  block("TEST 5: replace by function (not trimmed)",
    "{[hello,h], [world,w]}\n2\n", function(ngx)
      sn(ngx, "{hello, world}", "([a-z])[a-z]+", f)
    end)

  block("TEST 6: replace by script (trimmed)", "[hello,h], [world,w]\n2\n",
    function(ngx) sn(ngx, "hello, world", "([a-z])[a-z]+", "[$0,$1]") end)

  block("TEST 7: replace by script (not trimmed)",
    "{[hello,h], [world,w]}\n2\n", function(ngx)
      sn(ngx, "{hello, world}", "([a-z])[a-z]+", "[$0,$1]")
    end)

  block("TEST 9: look-behind assertion", "{foohbarhbaz}\n2\n", function(ngx)
    sn(ngx, "{foobarbaz}", "(?<=foo)bar|(?<=bar)baz", "h$0")
  end)

  local function s_n(ngx, ...)
    local s, n = ngx.re.gsub(...)
    ngx.say("s: ", s)
    ngx.say("n: ", n)
  end

  block("TEST 10: gsub with a patch matching an empty substring (string "
    .. "template)", "s: bhbeblblbob\nn: 6\n", function(ngx)
      s_n(ngx, "hello", "a|", "b")
    end)

  block("TEST 11: gsub with a patch matching an empty substring (string "
    .. "template, empty subj)", "s: b\nn: 1\n", function(ngx)
      s_n(ngx, "", "a|", "b")
    end)

  block("TEST 12: gsub with a patch matching an empty substring (func)",
    "s: bhbeblblbob\nn: 6\n", function(ngx)
      s_n(ngx, "hello", "a|", function() return "b" end)
    end)

  block("TEST 13: gsub with a patch matching an empty substring (func, "
    .. "empty subj)", "s: b\nn: 1\n", function(ngx)
      s_n(ngx, "", "a|", function() return "b" end)
    end)

  local A, B = string.rep("a", 8000), string.rep("b", 1000)
  local C = string.rep("c", 1000)
  local function rep_c(m) return string.rep("c", string.len(m[0])) end

  block("TEST 14: big subject string exceeding the luabuf chunk size "
    .. "(with trailing unmatched data, func repl)",
    A .. C .. A .. C .. "aaa\n2\n", function(ngx)
      sn(ngx, A .. B .. A .. B .. "aaa", "b+", rep_c)
    end)

  block("TEST 15: big subject string exceeding the luabuf chunk size "
    .. "(without trailing unmatched data, func repl)",
    A .. C .. A .. C .. "\n2\n", function(ngx)
      sn(ngx, A .. B .. A .. B, "b+", rep_c)
    end)

  local B998 = string.rep("b", 998)

  block("TEST 16: big subject string exceeding the luabuf chunk size "
    .. "(with trailing unmatched data, str repl)",
    A .. B998 .. " b" .. A .. B998 .. " baaa\n2\n", function(ngx)
      sn(ngx, A .. B .. A .. B .. "aaa", "b(b+)(b)", "$1 $2")
    end)

  block("TEST 17: big subject string exceeding the luabuf chunk size "
    .. "(without trailing unmatched data, str repl)",
    A .. B998 .. " b" .. A .. B998 .. " b\n2\n", function(ngx)
      sn(ngx, A .. B .. A .. B, "b(b+)(b)", "$1 $2")
    end)

  block("TEST 18: named pattern repl w/ callback",
    "[hello,h], [world,w]\n2\n", function(ngx)
      sn(ngx, "hello, world", "(?<first>[a-z])[a-z]+", function(m)
        return "[" .. m[0] .. "," .. m["first"] .. "]"
      end)
    end)

  block("TEST 19: $0 without parens", "[a] [b] [c] [d]\n4\n", function(ngx)
    sn(ngx, "a b c d", [[\w]], "[$0]")
  end)

  block("TEST 20: bad UTF-8", BAD_UTF8, function(ngx)
    local target = "你好"
    local regex = "你好"
    local s, n, err = ngx.re.gsub(string.sub(target, 1, 4), regex, "", "u")
    if s then
      ngx.say(s, ": ", n)
    else
      ngx.say("error: ", err)
    end
  end)

  for _, t in ipairs({ { 21, "without", "U" }, { 22, "with", "u" } }) do
    block("TEST " .. t[1] .. ": UTF-8 mode " .. t[2]
      .. " UTF-8 sequence checks", "s: aa\n", function(ngx)
        local s = ngx.re.gsub("你好", ".", "a", t[3])
        if s then ngx.say("s: ", s) end
      end)
  end

  block("TEST 24: just not hit match limit", "gsub: 0\n", function(ngx)
    local s = string.rep([[ABCDEFG]], 10)
    local _, cnt, err = ngx.re.gsub(s, LIMIT_RE, "", "o")
    if err then
      ngx.say("error: ", err)
      return
    end
    ngx.say("gsub: ", cnt)
  end)

  block("TEST 25: bug: gsub incorrectly swallowed a character is the "
    .. "first character", "TestCase\n", function(ngx)
      local s = ngx.re.gsub("TestCase", "^ *", "", "o")
      if s then ngx.say(s) end
    end)

  block("TEST 26: bug: gsub incorrectly swallowed a character is not the "
    .. "first character", ".b.cd\n", function(ngx)
      local s = ngx.re.gsub("abcd", "a|(?=c)", ".")
      if s then ngx.say(s) end
    end)

  it("TEST 29: function replace (false for groups)", function()
    local body, log = run(function(ngx, print)
      local s, n = ngx.re.gsub("hello, 34", "([0-9])|(world)", function(m)
        print("group 1: ", m[2])
        return "[" .. m[0] .. "] [" .. m[1] .. "]"
      end)
      ngx.say(s)
      ngx.say(n)
    end)
    assert.are.equal("hello, [3] [3][4] [4]\n2\n", body)
    assert.are.equal("group 1: false\ngroup 1: false\n", log)
  end)
end)

-- }======


-- {====== 120-re-find.t ======

describe("120-re-find.t", function()
  -- the blocks that print from/to/matched, "not matched." otherwise (and
  -- the error when there is one)
  local function found(ngx, s, ...)
    local from, to, err = ngx.re.find(s, ...)
    if from then
      ngx.say("from: ", from)
      ngx.say("to: ", to)
      ngx.say("matched: ", string.sub(s, from, to))
    else
      if err then
        ngx.say("error: ", err)
        return
      end
      ngx.say("not matched.")
    end
  end
  -- the ones ending with "not matched!" after the error
  local function found2(ngx, s, ...)
    local from, to, err = ngx.re.find(s, ...)
    if from or to then
      ngx.say("from: ", from)
      ngx.say("to: ", to)
      ngx.say("matched: ", string.sub(s, from, to))
    else
      if err then
        ngx.say("error: ", err)
        return
      end
      ngx.say("not matched!")
    end
  end

  block("TEST 1: sanity", "from: 8\nto: 11\nmatched: 1234\n", function(ngx)
    found2(ngx, "hello, 1234", "([0-9]+)", "jo")
  end)

  block("TEST 2: empty matched string", "from: 1\nto: 0\nmatched: \n",
    function(ngx) found2(ngx, "hello, world", "[0-9]*") end)

  block("TEST 3: multiple captures (with o)",
    "from: 1\nto: 11\nmatched: hello, 1234\n", function(ngx)
      found2(ngx, "hello, 1234", "([a-z]+).*?([0-9]{2})[0-9]+", "o")
    end)

  block("TEST 4: not matched", "not matched.\n", function(ngx)
    found(ngx, "hello, 1234", "foo")
  end)

  block("TEST 5: case sensitive by default", "not matched.\n",
    function(ngx)
      local from = ngx.re.find("hello, 1234", "HELLO")
      if from then ngx.say(from) else ngx.say("not matched.") end
    end)

  block("TEST 6: case insensitive", "from: 1\nto: 5\nmatched: hello\n",
    function(ngx) found(ngx, "hello, 1234", "HELLO", "i") end)

  block("TEST 7: UTF-8 mode", "hello章亦\n", function(ngx)
    local s = "hello章亦春"
    local from, to, err = ngx.re.find(s, "HELLO.{2}", "iu")
    if not from then
      ngx.say("FAIL: ", err)
      return
    end
    ngx.say(string.sub(s, from, to))
  end)

  block("TEST 8: multi-line mode (^ at line head)",
    "from: 7\nto: 11\nmatched: world\n", function(ngx)
      found(ngx, "hello\nworld", "^world", "m")
    end)

  block("TEST 9: multi-line mode (. does not match \\n)",
    "from: 1\nto: 5\nmatched: hello\n", function(ngx)
      found(ngx, "hello\nworld", ".*", "m")
    end)

  block("TEST 10: single-line mode (^ as normal)", "not matched.\n",
    function(ngx) found(ngx, "hello\nworld", "^world", "s") end)

  block("TEST 11: single-line mode (dot all)",
    "from: 1\nto: 11\nmatched: hello\nworld\n", function(ngx)
      found(ngx, "hello\nworld", ".*", "s")
    end)

  block("TEST 12: extended mode (ignore whitespaces)",
    "from: 1\nto: 2\nmatched: he\n", function(ngx)
      found(ngx, "hello\nworld", "\\w     \\w", "x")
    end)

  block("TEST 13: bad pattern", missing_paren("(abc"), function(ngx)
    found(ngx, "hello\nworld", "(abc")
  end)

  it("TEST 14: bad option", function()
    local ok, err = pcall(run, function(ngx)
      found(ngx, "hello\nworld", ".*", "H")
    end)
    assert.is_false(ok)
    assert.matches('unknown flag "H"', err, 1, true)
  end)

  block("TEST 15: anchored match (failed)", "not matched.\n", function(ngx)
    found(ngx, "hello, 1234", "([0-9]+)", "a")
  end)

  block("TEST 16: anchored match (succeeded)",
    "from: 1\nto: 4\nmatched: 1234\n", function(ngx)
      found(ngx, "1234, hello", "([0-9]+)", "a")
    end)

  local function with_ctx(ngx, ctx, rx)
    local from, to = ngx.re.find("1234, hello", rx or "([0-9]+)", "", ctx)
    if from then
      ngx.say("from: ", from)
      ngx.say("to: ", to)
      ngx.say("pos: ", ctx.pos)
    else
      ngx.say("not matched!")
      ngx.say("pos: ", ctx.pos)
    end
  end

  block("TEST 17: match with ctx but no pos", "from: 1\nto: 4\npos: 5\n",
    function(ngx) with_ctx(ngx, {}) end)

  block("TEST 18: match with ctx and a pos", "from: 3\nto: 4\npos: 5\n",
    function(ngx) with_ctx(ngx, { pos = 3 }) end)

  block("TEST 19: named subpatterns w/ extraction",
    "from: 1\nto: 11\nmatched: hello, 1234\n", function(ngx)
      found(ngx, "hello, 1234", "(?<first>[a-z]+), [0-9]+")
    end)

  block("TEST 20: bad UTF-8", BAD_UTF8, function(ngx)
    local target = "你好"
    local regex = "你好"
    local from, _, err = ngx.re.find(string.sub(target, 1, 4), regex, "u")
    if err then
      ngx.say("error: ", err)
      return
    end
    if from then ngx.say("matched: ", from) else ngx.say("not matched") end
  end)

  block("TEST 21: UTF-8 mode without UTF-8 sequence checks",
    "from: 1\nto: 3\nmatched: 你\n", function(ngx)
      found(ngx, "你好", ".", "U")
    end)

  block("TEST 23: just not hit match limit", "failed to match\n",
    function(ngx)
      local s = string.rep([[ABCDEFG]], 10)
      local from, _, err = ngx.re.find(s, LIMIT_RE, "o")
      if not from then
        if err then
          ngx.say("error: ", err)
          return
        end
        ngx.say("failed to match")
        return
      end
    end)

  block("TEST 24: specify the group (1)", "from: 8\nto: 8\nmatched: 1\n",
    function(ngx)
      found2(ngx, "hello, 1234", "([0-9])([0-9]+)", "jo", nil, 1)
    end)

  block("TEST 25: specify the group (0)",
    "from: 8\nto: 11\nmatched: 1234\n", function(ngx)
      found2(ngx, "hello, 1234", "([0-9])([0-9]+)", "jo", nil, 0)
    end)

  block("TEST 26: specify the group (2)", "from: 9\nto: 11\nmatched: 234\n",
    function(ngx)
      found2(ngx, "hello, 1234", "([0-9])([0-9]+)", "jo", nil, 2)
    end)

  for _, n in ipairs({ 3, 4 }) do
    block("TEST " .. (n + 24) .. ": specify the group (" .. n .. ")",
      "error: nth out of bound\n", function(ngx)
        found2(ngx, "hello, 1234", "([0-9])([0-9]+)", "jo", nil, n)
      end)
  end

  block("TEST 29: nil submatch (2nd)", "not matched!\n", function(ngx)
    found2(ngx, "hello, 1234", "([0-9])|(hello world)", "jo", nil, 2)
  end)

  block("TEST 30: nil submatch (1st)", "not matched!\n", function(ngx)
    found2(ngx, "hello, 1234", "(hello world)|([0-9])", "jo", nil, 1)
  end)

  block("TEST 31: match with ctx and a pos (anchored by \\G)",
    "from: 3\nto: 4\npos: 5\n", function(ngx)
      with_ctx(ngx, { pos = 3 }, [[(\G[0-9]+)]])
    end)
end)

-- }======


-- {====== 038-match-o.t, 047-match-jit.t, 048-match-dfa.t ======

describe("038-match-o.t", function()
  local function m0(ngx, subj, rx, opts, miss)
    local m = ngx.re.match(subj, rx, opts)
    if m then
      ngx.say(m[0])
    elseif miss then
      ngx.say("not matched: ", m)
    else
      ngx.say("not matched!")
    end
  end

  block("TEST 1: sanity", "1234\n", function(ngx)
    m0(ngx, "hello, 1234", "([0-9]+)", "o")
  end)
  block("TEST 2: escaping sequences", "1234\n", function(ngx)
    m0(ngx, "hello, 1234", "(\\d+)", "o")
  end)
  block("TEST 5: single capture", "1234\n12\n", function(ngx)
    local m = ngx.re.match("hello, 1234", "([0-9]{2})[0-9]+", "o")
    ngx.say(m[0])
    ngx.say(m[1])
  end)
  block("TEST 6: multiple captures", "hello, 1234\nhello\n12\n",
    function(ngx)
      local m = ngx.re.match("hello, 1234", "([a-z]+).*?([0-9]{2})[0-9]+",
        "o")
      ngx.say(m[0])
      ngx.say(m[1])
      ngx.say(m[2])
    end)
  block("TEST 7: not matched", "not matched: nil\n", function(ngx)
    m0(ngx, "hello, 1234", "foo", "o", true)
  end)
  block("TEST 8: case sensitive by default", "not matched: nil\n",
    function(ngx) m0(ngx, "hello, 1234", "HELLO", "o", true) end)
  block("TEST 9: case sensitive by default", "hello\n", function(ngx)
    m0(ngx, "hello, 1234", "HELLO", "oi", true)
  end)
  block("TEST 10: UTF-8 mode", "hello章亦\n", function(ngx)
    local rc, m = pcall(ngx.re.match, "hello章亦春", "HELLO.{2}", "iou")
    if not rc then
      ngx.say("error: ", m)
      return
    end
    if m then ngx.say(m[0]) else ngx.say("not matched: ", m) end
  end)
  block("TEST 11: multi-line mode (^ at line head)", "world\n",
    function(ngx) m0(ngx, "hello\nworld", "^world", "mo", true) end)
  block("TEST 12: multi-line mode (. does not match \\n)", "hello\n",
    function(ngx) m0(ngx, "hello\nworld", ".*", "om", true) end)
  block("TEST 13: single-line mode (^ as normal)", "not matched: nil\n",
    function(ngx) m0(ngx, "hello\nworld", "^world", "so", true) end)
  block("TEST 14: single-line mode (dot all)", "hello\nworld\n",
    function(ngx) m0(ngx, "hello\nworld", ".*", "os", true) end)
  block("TEST 15: extended mode (ignore whitespaces)", "he\n",
    function(ngx) m0(ngx, "hello\nworld", "\\w     \\w", "xo", true) end)
  block("TEST 16: bad pattern", missing_paren("(abc"), function(ngx)
    local m, err = ngx.re.match("hello\nworld", "(abc", "o")
    if m then
      ngx.say(m[0])
    elseif err then
      ngx.say("error: ", err)
    else
      ngx.say("not matched: ", m)
    end
  end)
  it("TEST 17: bad option", function()
    local body = run(function(ngx)
      local rc, m = pcall(ngx.re.match, "hello\nworld", ".*", "Ho")
      if rc then
        ngx.say(m and m[0] or "not matched: nil")
      else
        ngx.say("error: ", m)
      end
    end)
    assert.matches('^error: .-unknown flag "H"', body)
  end)
  block("TEST 18: extended mode (ignore whitespaces)",
    "hello\nfalse\nhello\n", function(ngx)
      local m = ngx.re.match("hello, world", "(world)|(hello)", "xo")
      ngx.say(m[0])
      ngx.say(m[1])
      ngx.say(m[2])
    end)
  block("TEST 19: optional trailing captures", "1234\n1234\n\n",
    function(ngx)
      local m = ngx.re.match("hello, 1234", "([0-9]+)(h?)", "o")
      ngx.say(m[0])
      ngx.say(m[1])
      ngx.say(m[2])
    end)
  block("TEST 20: anchored match (failed)", "not matched!\n", function(ngx)
    m0(ngx, "hello, 1234", "([0-9]+)", "oa")
  end)
  block("TEST 21: anchored match (succeeded)", "1234\n", function(ngx)
    m0(ngx, "1234, hello", "([0-9]+)", "ao")
  end)
  for _, t in ipairs({ { 22, "match with ctx but no pos", {}, "1234\n5\n" },
                       { 23, "match with ctx and a pos", { pos = 3 },
                         "34\n5\n" } }) do
    block("TEST " .. t[1] .. ": " .. t[2], t[4], function(ngx)
      local ctx = t[3]
      local m = ngx.re.match("1234, hello", "([0-9]+)", "o", ctx)
      if m then ngx.say(m[0]) else ngx.say("not matched!") end
      ngx.say(ctx.pos)
    end)
  end
  block("TEST 25: match (look-behind assertion)", "bar\nbaz\n",
    function(ngx)
      local ctx = {}
      local m = ngx.re.match("{foobarbaz}", "(?<=foo)bar|(?<=bar)baz", "o",
        ctx)
      ngx.say(m and m[0])
      m = ngx.re.match("{foobarbaz}", "(?<=foo)bar|(?<=bar)baz", "o", ctx)
      ngx.say(m and m[0])
    end)
  block("TEST 26: match (with regex cache)", "hello\nokay\nnil\n",
    function(ngx)
      local m = ngx.re.match("hello, 1234", "([A-Z]+)", "io")
      ngx.say(m and m[0])
      m = ngx.re.match("1234, okay", "([A-Z]+)", "io")
      ngx.say(m and m[0])
      m = ngx.re.match("hello, 1234", "([A-Z]+)", "o")
      ngx.say(m and m[0])
    end)
  block("TEST 27: match (with regex cache and ctx)",
    "hello\n6\nokay\n11\nnil\n1\n", function(ngx)
      local ctx = {}
      local m = ngx.re.match("hello, 1234", "([A-Z]+)", "io", ctx)
      ngx.say(m and m[0])
      ngx.say(ctx.pos)
      m = ngx.re.match("1234, okay", "([A-Z]+)", "io", ctx)
      ngx.say(m and m[0])
      ngx.say(ctx.pos)
      ctx.pos = 1
      m = ngx.re.match("hi, 1234", "([A-Z]+)", "o", ctx)
      ngx.say(m and m[0])
      ngx.say(ctx.pos)
    end)
  for _, n in ipairs({ 28, 29 }) do
    block("TEST " .. n .. ": regex cache max entries 2 / 0 (the output "
      .. "does not depend on it)", "1234\n567\n98\n", function(ngx)
        local m = ngx.re.match("hello, 1234", "([0-9]+)", "o")
        ngx.say(m and m[0])
        m = ngx.re.match("howdy, 567", "([0-9]+)", "oi")
        ngx.say(m and m[0])
        m = ngx.re.match("hiya, 98", "([0-9]+)", "ox")
        ngx.say(m and m[0])
      end)
  end
  block("TEST 30: named subpatterns w/ extraction",
    "hello, 1234\nhello\nhello\nnil\n", function(ngx)
      local m = ngx.re.match("hello, 1234", "(?<first>[a-z]+), [0-9]+", "o")
      ngx.say(m[0])
      ngx.say(m[1])
      ngx.say(m.first)
      ngx.say(m.second)
    end)
  block("TEST 31: duplicate named subpatterns w/ extraction",
    "hello, 1234\nhello\n1234\nhello-1234\n", function(ngx)
      local m = ngx.re.match("hello, 1234",
        "(?<first>[a-z]+), (?<first>[0-9]+)", "Do")
      ngx.say(m[0])
      ngx.say(m[1])
      ngx.say(m[2])
      ngx.say(table.concat(m.first, "-"))
    end)
  block("TEST 32: named captures are empty strings", "1234\n\n\n1234\n",
    function(ngx)
      local m = ngx.re.match("1234", "(?<first>[a-z]*)([0-9]+)", "o")
      ngx.say(m[0])
      ngx.say(m.first)
      ngx.say(m[1])
      ngx.say(m[2])
    end)
  block("TEST 33: named captures are false",
    "hello\nfalse\nhello\nfalse\nfalse\n", function(ngx)
      local m = ngx.re.match("hello, world",
        "(world)|(hello)|(?<named>howdy)", "o")
      ngx.say(m[0])
      ngx.say(m[1])
      ngx.say(m[2])
      ngx.say(m[3])
      ngx.say(m["named"])
    end)
end)

describe("047-match-jit.t", function()
  local function m0(ngx, subj, opts)
    local m = ngx.re.match(subj, "([0-9]+)", opts)
    if m then ngx.say(m[0]) else ngx.say("not matched!") end
  end
  block("TEST 1: matched with j", "1234\n", function(ngx)
    m0(ngx, "hello, 1234", "j")
  end)
  block("TEST 2: not matched with j", "not matched!\n", function(ngx)
    m0(ngx, "hello, world", "j")
  end)
  block("TEST 3: matched with jo", "1234\n", function(ngx)
    m0(ngx, "hello, 1234", "jo")
  end)
  block("TEST 4: not matched with jo", "not matched!\n", function(ngx)
    m0(ngx, "hello, world", "jo")
  end)
  block("TEST 5: bad pattern", missing_paren("(abc"), function(ngx)
    local m, err = ngx.re.match("hello\nworld", "(abc", "j")
    if m then
      ngx.say(m[0])
    elseif err then
      ngx.say("error: ", err)
    else
      ngx.say("not matched: ", m)
    end
  end)
end)

describe("048-match-dfa.t", function()
  local function m0(ngx, subj, rx, opts)
    local m = ngx.re.match(subj, rx, opts)
    if m then ngx.say(m[0]) else ngx.say("not matched!") end
  end
  block("TEST 1: matched with d", "hell\n", function(ngx)
    m0(ngx, "hello", "(he|hell)", "d")
  end)
  block("TEST 2: matched with d + j", "hell\n", function(ngx)
    m0(ngx, "hello", "(he|hell)", "jd")
  end)
  block("TEST 3: not matched with j", "not matched!\n", function(ngx)
    m0(ngx, "world", "(he|hell)", "d")
  end)
  block("TEST 4: matched with do", "hell\nnil\nnil\n", function(ngx)
    local m = ngx.re.match("hello", "he|hell", "do")
    if m then
      ngx.say(m[0])
      ngx.say(m[1])
      ngx.say(m[2])
    else
      ngx.say("not matched!")
    end
  end)
  block("TEST 5: not matched with do", "not matched!\n", function(ngx)
    m0(ngx, "world", "([0-9]+)", "do")
  end)
  block("TEST 6: UTF-8 mode without UTF-8 sequence checks", "你\n",
    function(ngx) m0(ngx, "你好", ".", "Ud") end)
  block("TEST 7: UTF-8 mode with UTF-8 sequence checks", "你\n",
    function(ngx) m0(ngx, "你好", ".", "ud") end)
end)

-- }======


-- {====== beyond the test files ======

describe("corosched.re", function()
  it("returns OpenResty's value counts", function()
    assert.are.equal(1, select("#", re.match("a", "b")))
    assert.are.equal(2, select("#", re.match("a", "(")))
    assert.are.equal(1, select("#", re.find("a", "b")))
    assert.are.equal(3, select("#", re.find("a", "(")))
    assert.are.equal(2, select("#", re.find("a", "a|(b)", nil, nil, 1)))
    assert.are.equal(2, select("#", re.gmatch("a", "(")))
    assert.are.equal(3, select("#", re.sub("a", "(", "")))
    assert.are.equal(3, select("#", re.gsub("a", "a", "$")))
    local it = re.gmatch("a", "a")
    assert.are.equal(1, select("#", it()))
    assert.are.equal(1, select("#", it()))
  end)

  it("reports where a pattern stops compiling", function()
    local m, err = re.match("x", "a)b")
    assert.is_nil(m)
    assert.are.equal('pcre2_compile() failed: unmatched closing '
      .. 'parenthesis in "a)b" at ")b"', err)
    m, err = re.match("x", "(?<n>a)(?<n>b)")
    assert.is_nil(m)
    assert.matches("^pcre2_compile%(%) failed: two named subpatterns have "
      .. "the same name", err)
    assert.truthy(re.match("ab", "(?<n>a)(?<n>b)", "D"))
  end)

  it("raises for programmer errors", function()
    assert.has_error(function() re.match("a", "a", "z") end,
      'unknown flag "z" (flags "z")')
    assert.has_error(function() re.gsub("a", "a", "b", "iq") end,
      'unknown flag "q" (flags "iq")')
    assert.has_error(function() re.gmatch("a", "a", "!") end,
      'unknown flag "!" (flags "!")')
    assert.has_error(function() re.match("a", nil) end)
    assert.has_error(function() re.match("a", "a", nil, 1) end)
    assert.has_error(function() re.match("a", "a", nil, nil, "x") end)
    assert.has_error(function() re.find("a", "a", nil, nil, "x") end)
    assert.has_error(function() re.match("a", "a", nil, { pos = {} }) end)
  end)

  it("takes any subject through tostring, false options as none", function()
    assert.are.equal("12", re.match(12345, "12")[0])
    assert.are.equal("nil", re.match(nil, "n.l")[0])
    assert.are.equal("true", (re.gsub(true, "x", "y")))
    assert.are.equal("a", re.match("a", "a", false, false, false)[0])
    assert.are.equal("a-", (re.sub("ab", "b", false and "" or "-")))
    assert.are.equal("anil", (re.sub("ab", "b", function() end)))
  end)

  it("parses replacement templates as ngx_lua does", function()
    local T = "failed to compile the replacement template"
    local function sub(tpl) return select(3, re.sub("ab", "(a)(b)", tpl))
      or (re.sub("ab", "(a)(b)", tpl)) end
    assert.are.equal("b", sub("$11b"))
    assert.are.equal("a$1b", sub("$1$$1b"))
    assert.are.equal("[b][a]", sub("[${2}][$1]"))
    assert.are.equal("ab", sub("$0"))
    assert.are.equal("bc", sub("$2c"))
    assert.are.equal("$", sub("$$"))
    assert.are.equal("", sub("$9$99999999999999999999"))
    for _, bad in ipairs({ "$", "${", "${}", "$x", "${x}", "${1x}", "${1",
                           "$-", "a$ b" }) do
      assert.are.equal(T, sub(bad), bad)
    end
  end)

  it("steps over a UTF-8 character after an empty match", function()
    -- OpenResty steps one byte and says "pcre_exec() failed: -22"
    assert.are.same({ "-你-好-", 3 }, { re.gsub("你好", "", "-", "u") })
    local n = 0
    for m in re.gmatch("你好", "", "u") do
      assert.are.equal("", m[0])
      n = n + 1
    end
    assert.are.equal(3, n)
    assert.are.same({ "-a-b", 2 }, { re.gsub("ab", "(?<!b)", "-") })
    assert.are.same({ "-a", 1 }, { re.sub("a", "^", "-") })
  end)

  it("gives ctx.pos beyond the subject to PCRE2 (bad offset)", function()
    assert.are.same({ nil, "pcre_exec() failed: -33" },
      { re.match("abc", "x", "", { pos = 5 }) })
    local ctx = { pos = 4 }
    assert.are.equal("", re.match("abc", "$", "", ctx)[0])
    assert.are.equal(4, ctx.pos)
    ctx.pos = -3
    assert.are.equal("a", re.match("abc", "a", "", ctx)[0])
    assert.are.equal(2, ctx.pos)
  end)

  it("lets a gsub callback yield in a light thread", function()
    local helper = require "spec.helper"
    local cs = helper.cs
    local s, n = helper.run(function()
      local t0 = cs.now()
      local r, k = re.gsub("a1b2c3", "[0-9]", function(m)
        cs.sleep(0.01)
        return "<" .. m[0] .. ">"
      end, "o")
      assert(cs.now() - t0 >= 0.02)
      return r, k
    end)
    assert.are.equal("a<1>b<2>c<3>", s)
    assert.are.equal(3, n)
  end)

  it("frees what an error leaves (run under ASan and valgrind)", function()
    for i = 1, 300 do
      -- compile errors, cached and not
      assert.is_nil(re.match("x", "(" .. i, i % 2 == 0 and "o" or ""))
      -- an error raised by the replacement function
      assert.is_false(pcall(re.gsub, "a1b2", "[0-9]", function()
        error("boom")
      end, i % 3 == 0 and "o" or ""))
      -- a callback that raises after a nested call
      assert.is_false(pcall(re.sub, "ab", "(a)", function(m)
        re.gsub(m[1], "a", "$1")
        error({})
      end))
      -- an iterator dropped halfway, one never called
      local it = re.gmatch("a1b2c3", "[0-9]", i % 2 == 0 and "jo" or "j")
      it()
      re.gmatch("x", "x")
      -- bad templates and bad UTF-8
      assert.is_nil(re.gsub("ab", "b" .. i, "${" .. i))
      assert.is_nil(re.find("\xff", ".", "u"))
      -- DFA, a dropped match
      assert.truthy(re.match("hello", "he|hell" .. i .. "?", "d"))
    end
    collectgarbage()
    collectgarbage()
  end)

  it("keeps compiling with o once the cache is full", function()
    for i = 1, 1100 do
      local m = re.match("x" .. i .. "y", "x(" .. i .. ")y", "o")
      assert.are.equal(tostring(i), m[1])
    end
    for i = 1, 1100, 37 do
      assert.are.same({ "[" .. i .. "]", 1 },
        { re.gsub("<" .. i .. ">", "<(" .. i .. ")>", "[$1]", "o") })
    end
  end)

  it("handles many groups (offsets off the C stack)", function()
    local rx = string.rep("(.)", 40)
    local s = string.rep("x", 40) .. "tail"
    local m = re.match(s, rx)
    assert.are.equal(40, #m)
    assert.are.same({ 1, 40 }, { re.find(s, rx) })
    assert.are.same({ 40, 40 }, { re.find(s, rx, nil, nil, 40) })
    local r = re.gsub(s, rx, "$40$1")
    assert.are.equal("xxtail", r)
    local it = re.gmatch(s, rx)
    assert.are.equal("x", it()[40])
  end)

  -- the subject, a template and a function's result go through tostring
  -- as on LuaJIT: a float with "%.14g" (2.0 as "2"), integers exactly
  it("writes numbers as LuaJIT's tostring", function()
    assert.are.equal("2", re.match(2.0, "\\d+")[0])
    assert.are.equal("1e+15", re.match(1e15, ".*")[0])
    assert.are.equal("9007199254740993",
                     re.match(9007199254740993, ".*")[0])
    assert.are.same({ 1, 1 }, { re.find(7.0, "7") })
    assert.are.same({ "x7", 1 }, { re.sub("xy", "y", 7.0) })
    assert.are.same({ "a2b4", 2 }, { re.gsub("a1b2", "\\d",
                                     function(m) return m[0] * 2.0 end) })
    local it = re.gmatch(0.5, "\\d")
    assert.are.equal("0", it()[0])
    assert.are.equal("5", it()[0])
  end)
end)

-- }======
