-- Conformance with real OpenResty, randomized: spec/support/
-- ngx_random_cases.lua generates (seeded, deterministic) a few thousand
-- inputs for the pure helpers of `ngx` (escape_uri, unescape_uri,
-- encode_args, decode_args, quote_sql_str, base64, md5, sha1_bin, crc32,
-- hmac_sha1, http_time, cookie_time, parse_http_time) and for ngx.re
-- (match, find, gmatch, sub, gsub, split); spec/support/
-- record_ngx_random.sh ran them in OpenResty and recorded one line per
-- input in spec/support/ngx_random_recorded.txt. Here the same inputs run
-- on corosched.ngx and every line must be OpenResty's, except where README
-- documents a deliberate difference (DELIBERATE below: shown as pending,
-- with how many inputs meet it). Any other difference fails the test of
-- its function, listed with its input ("DIVERGENCE: ...").
local ngxc = require "corosched.ngx"
local ngx_env = require "spec.support.ngx_env"
local m = require "spec.support.ngx_random_cases"

local save_globals, restore_globals = ngx_env.saver()

local function own_dir()
  local src = debug.getinfo(1, "S").source:sub(2)
  return src:match("^(.*)/[^/]*$") or "."
end

-- the recording: its seed and count, and its lines by input number
local function load_recording()
  local path = own_dir() .. "/support/ngx_random_recorded.txt"
  local f = assert(io.open(path, "rb"))
  local seed, count, lines = nil, nil, {}
  for line in f:lines() do
    local s, c = line:match("^# seed (%d+), count (%d+)$")
    if s then
      seed, count = tonumber(s), tonumber(c)
    else
      local n = line:match("^(%d+) ")
      if n then lines[tonumber(n)] = line end
    end
  end
  f:close()
  return seed, count, lines
end

local function output(line)
  return line:match(" => (.*)$") or line
end

-- an input whose regex has a capturing group
local function has_group(regex)
  local i = 1
  while i <= #regex do
    local c = regex:sub(i, i)
    if c == "\\" then
      i = i + 1
    elseif c == "(" then
      local nxt = regex:sub(i + 1, i + 3)
      if nxt:sub(1, 1) ~= "?" or nxt:match("^%?<[%a_]")
         or nxt:match("^%?P<") then
        return true
      end
    end
    i = i + 1
  end
  return false
end

-- whether regex matches an empty string somewhere in subject (corosched)
local function matches_empty(subject, regex, opts)
  local ok, it = pcall(ngx.re.gmatch, subject, regex, opts)
  if not ok or not it then return false end
  for _ = 1, 50 do
    local ok2, mt = pcall(it)
    if not ok2 or not mt then return false end
    if mt[0] == "" then return true end
  end
  return false
end

local RE_DOC = "(README, ngx.re)"

-- Deliberate differences: each a function of (name, args, OpenResty's
-- output, corosched's output) that gives the reason when it applies
local DELIBERATE = {
  function(name, _, want)
    if name == "encode_args"
       and want:match("^error: \"buffer error: %d+ != %d+\"$") then
      return "a false or {} value under a key escaping makes longer: "
        .. "lua-nginx-module 0.10.23 raises \"buffer error\" (its bug), "
        .. "corosched leaves the value out as OpenResty does for other "
        .. "keys (README, deliberate differences)"
    end
  end,
  function(name, _, want, got)
    if not name:match("^re%.") then return end
    local pat = '"pcre2?_compile%(%) failed: .*"'
    if want:match('"pcre_compile%(%) failed: ')
       and got:match('"pcre2_compile%(%) failed: ')
       and want:gsub(pat, "C") == got:gsub(pat, "C") then
      return "PCRE2's compile error messages, as OpenResty's built with "
        .. "PCRE2 (Debian's uses PCRE1) " .. RE_DOC
    end
  end,
  function(name, _, want, got)
    if not name:match("^re%.") then return end
    local pat = "pcre_exec%(%) failed: %-?%d+"
    if want:match(pat) and got:match(pat)
       and want:gsub(pat, "E") == got:gsub(pat, "E") then
      return "PCRE2's error codes in \"pcre_exec() failed: N\", as "
        .. "OpenResty's built with PCRE2 " .. RE_DOC
    end
  end,
  function(name, args)
    if not name:match("^re%.") then return end
    local opts = name:match("sub$") and args[4] or args[3]
    if type(opts) == "string" and opts:match("[uU]")
       and args[1]:match("[\128-\255]") then
      return "with u/U an empty match moves on by one UTF-8 character; "
        .. "OpenResty moves one byte " .. RE_DOC
    end
  end,
  function(name, _, want, got)
    if name ~= "re.split" then return end
    local pat = " ctx%.pos=%-?%d+$"
    if want:gsub(pat, "") == got:gsub(pat, "") then
      return "split leaves ctx.pos where the next search would start "
        .. RE_DOC
    end
  end,
  function(name, args)
    if name ~= "re.split" then return end
    if has_group(args[2]) or matches_empty(args[1], args[2], args[3]) then
      return "split splits as Perl does where the regex matches empty "
        .. "strings or group 1 did not take part " .. RE_DOC
    end
  end,
}

local function deliberate(name, args, want, got)
  for _, rule in ipairs(DELIBERATE) do
    local why = rule(name, args, want, got)
    if why then return why end
  end
end

local MAX_SHOWN = 12

describe("ngx helpers and ngx.re on random inputs, as OpenResty", function()
  local seed, count, recorded = load_recording()
  local got, names, argsof = {}, {}, {}

  setup(function()
    save_globals()
    ngxc.install()
    m.run(ngx, function(line, name, args)
      got[#got + 1] = line
      names[#got] = name
      argsof[#got] = args
    end, seed)
  end)

  teardown(restore_globals)

  it("regenerates the recorded inputs", function()
    assert.are.equal(m.SEED, seed)
    assert.are.equal(count, #got)
    local bad = {}
    for i = 1, count do
      local want = recorded[i] and recorded[i]:match("^(.-) => ")
      if want ~= got[i]:match("^(.-) => ") then
        bad[#bad + 1] = "input " .. i .. ": recorded "
          .. tostring(want) .. ", generated " .. got[i]
        if #bad >= MAX_SHOWN then break end
      end
    end
    assert(#bad == 0, table.concat(bad, "\n"))
  end)

  for _, p in ipairs(m.PLAN) do
    local fname = p[1]
    it(fname .. ": " .. p[2] .. " random inputs as OpenResty", function()
      local found, notes = {}, {}
      for i = 1, count do
        if names[i] == fname then
          local want, have = output(recorded[i]), output(got[i])
          if want ~= have then
            local why = deliberate(fname, argsof[i], want, have)
            if why then
              notes[why] = (notes[why] or 0) + 1
            else
              found[#found + 1] = ("DIVERGENCE: %s\n  OpenResty: %s\n"
                .. "  corosched: %s"):format(recorded[i]:match(
                  "^(.-) => "), want, have)
            end
          end
        end
      end
      local why_list = {}
      for why, n in pairs(notes) do
        why_list[#why_list + 1] = ("%d input(s): %s"):format(n, why)
      end
      table.sort(why_list)
      -- (one line: busted shows the first two of a pending message)
      local why_text = #why_list > 0 and " (deliberate differences: "
        .. table.concat(why_list, "; ") .. ")" or ""
      if #found > 0 then
        local shown = {}
        for i = 1, math.min(#found, MAX_SHOWN) do shown[i] = found[i] end
        error(("%d of %d inputs differ from OpenResty%s:\n%s%s"):format(
          #found, p[2], why_text, table.concat(shown, "\n"),
          #found > MAX_SHOWN and "\n..." or ""), 0)
      end
      -- (pending ends the test: the last thing it does)
      if #why_list > 0 then
        pending(fname .. ":" .. why_text)
      end
    end)
  end
end)
