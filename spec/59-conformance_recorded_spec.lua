-- Conformance with real OpenResty, recorded: the cases of
-- spec/support/openresty_cases.lua were run by nginx with lua-nginx-module
-- (spec/support/record_openresty.sh; the header of
-- spec/support/openresty_recorded.lua says which versions), against
-- spec/support/script_peer.py, and what they returned was recorded. Here
-- the same cases run on corosched (through corosched.ngx's ngx global)
-- against the same peer, and must return the same, line for line, except
-- the lines listed in DIFFERENT below, each with what corosched returns
-- instead and why. In raised messages, "bad argument #N to 'name'" is
-- compared without its number and name: LuaJIT calls every method '?' and
-- counts the object, Lua 5.4 names a method and does not count it.
local helper = require "spec.helper"
local net = require "spec.support.net"
local ngxc = require "corosched.ngx"
local ngx_env = require "spec.support.ngx_env"
local script_peer = require "spec.support.script_peer"
local m = require "spec.support.openresty_cases"
local recorded = require "spec.support.openresty_recorded"

local save_globals, restore_globals = ngx_env.saver()

local READ_ERROR_CLOSES = "a read error closed the socket (API.md); "
  .. "OpenResty 0.10.x ends the read half only"

-- [case name] = { [line label] = { line = what corosched returns, why = } }
local TLS_REASON = 'failures say "handshake failed: <OpenSSL\'s reason>" '
  .. "(API.md)"

local READ_PREPARE = "the bytes of a partial match a receiveuntil iterator "
  .. "held over a timeout go to the next other reader first, as in "
  .. "lua-nginx-module 0.10.25 and later (read_prepare); 0.10.23, recorded "
  .. "here, leaves them with the iterator (README)"
local DIFFERENT = {
  ["receive after a receiveuntil timeout takes its held bytes"] = {
    ["*l"] = { line = '*l: "-x"', why = READ_PREPARE },
  },
  ["a receiveuntil iterator after another reader took over"] = {
    ["*l"] = { line = '*l: "-x"', why = READ_PREPARE },
    ["until again"] = { line = 'until again: "-zz"', why = READ_PREPARE },
    ["until at close"] = { line = 'until at close: nil "closed" "tail"',
                           why = READ_PREPARE },
  },
  ["a receiveuntil iterator after a timeout, then another iterator"] = {
    bar = { line = 'bar: "-+q"', why = READ_PREPARE },
    ["until again"] = { line = 'until again: "-zz"', why = READ_PREPARE },
    ["bar again"] = { line = 'bar again: "x"', why = READ_PREPARE },
  },
  ["ngx.re options and subjects"] = {
    J = { line = 'J: nil "pcre2_compile() failed: two named subpatterns have '
            .. 'the same name (PCRE2_DUPNAMES not set) in \\034(?<x>a)'
            .. '(?<x>b)?\\034 at \\034b)?\\034"',
          why = "PCRE2's message, as OpenResty's when built with PCRE2 "
             .. "(Debian's is built with PCRE1)" },
  },
  ["ngx.re.split"] = {
    ["bad regex"] = {
      line = 'bad regex: nil "pcre2_compile() failed: missing closing '
        .. 'parenthesis in \\034(\\034"',
      why = "PCRE2's message, as OpenResty's when built with PCRE2" },
  },
  ["ngx.re substitution edge cases"] = {
    ["gsub utf8 empty"] = {
      line = 'gsub utf8 empty: "-h-\\195\\169-" 3',
      why = "an empty match moves on by one character with \"u\"; "
         .. "OpenResty moves one byte, into the character, and fails" },
  },
  ["tls verification"] = {
    ["self-signed, verify"] = {
      line = 'self-signed, verify: nil "handshake failed: self-signed '
        .. 'certificate"',
      why = TLS_REASON },
    ["self-signed, verify nil"] = {
      line = 'self-signed, verify nil: nil "handshake failed: self-signed '
        .. 'certificate"',
      why = "ssl_verify nil verifies (API.md)" },
    ["wrong name, verify"] = {
      line = 'wrong name, verify: nil "handshake failed: hostname mismatch"',
      why = TLS_REASON },
    ["ip name, verify"] = {
      line = "ip name, verify: true",
      why = "an IP literal is checked against the certificate's IP "
         .. "addresses (API.md); nginx checks it as a DNS name" },
    ["trailing dot, verify"] = {
      line = 'trailing dot, verify: nil "handshake failed: hostname '
        .. 'mismatch"',
      why = TLS_REASON },
  },
  ["tls handshake errors"] = {
    ["plain peer that closed"] = {
      line = 'plain peer that closed: nil "handshake failed: closed"',
      why = TLS_REASON },
    ["plain peer that answers"] = {
      line = 'plain peer that answers: nil "handshake failed: wrong version '
        .. 'number"',
      why = TLS_REASON },
  },
  ["tls handshake arguments"] = {
    ["session string"] = { line = "session string: userdata",
                           why = "a session is a userdata here, cdata there" },
    ["session true"] = { line = "session true: userdata",
                         why = "a session is a userdata here, cdata there" },
    ["verify string"] = {
      line = 'verify string: error "bad argument (boolean expected, got '
        .. 'string)"',
      why = "ssl_verify other than nil, true, false raises (API.md)" },
    ["session returned"] = {
      line = 'session returned: "userdata"',
      why = "a session is a userdata here, cdata there" },
  },
  ["tls reads and timeouts"] = {
    send = { line = 'send: nil "closed"',
             why = "the read error (\"closed\") closed the socket (API.md)" },
  },
  ["receive sizes as strings and floats"] = {
    ['"l"'] = { line = '"l": nil "timeout" "2345678901234567890123456789012345'
                  .. '6789012345678901234567890123456789"',
                why = '"l" and "a" are aliases of "*l" and "*a" (API.md); '
                   .. "no newline came, the read timed out" },
    ['"a"'] = { line = '"a": nil "timeout" ""',
                why = 'as "l"; the peer never closes, the read timed out' },
  },
  ["ngx.socket.connect"] = {
    connect = { line = 'connect: "userdata" nil',
                why = "a cosocket is a userdata here, a table there" },
  },
  ["send values"] = {
    floats = { line = "floats: 67",
               why = "Lua 5.4 integers are sent as integers" },
    echo = { line = 'echo: "ab421.5|0.1|1e+20|0|123456789012345|'
               .. '9.007199254741e+15|0.33333333333333xy7z"',
             why = "123456789012345 is an integer (LuaJIT: a double, %.14g)" },
  },
  ["close from another thread while reading"] = {
    close = { line = "close: 1",
              why = "close() wakes the parked reader (OpenResty: busy)" },
    reader = { line = 'reader: true nil "closed" ""',
               why = "woken by close() with \"closed\"" },
  },
  ["udp setpeername again and unix"] = {
    ["send after"] = { line = 'send after: nil "closed"',
                       why = "a failed setpeername closes the socket here "
                          .. "(OpenResty keeps an unconnected one)" },
  },
  ["semaphore and timer argument errors"] = {
    ["wait none"] = {
      line = 'wait none: error "bad argument (number expected, got no value)"',
      why = "raises too; LuaJIT's arithmetic error names no variable" },
  },
  ["semaphore"] = {
    ["wait string"] = {
      line = 'wait string: error "bad argument (number expected, got string)"',
      why = "raises too; LuaJIT's arithmetic error names no variable" },
    ["post 0"] = { line = 'post 0: error "no negative number"',
                   why = "current lua-resty-core's message (0.1.25's reads "
                      .. "\"positive number required\")" },
    ["post -1"] = { line = 'post -1: error "no negative number"',
                    why = "as post 0" },
  },
  ["timers"] = {
    ["at negative"] = {
      line = 'at negative: error "bad argument (invalid delay)"',
      why = "0.10.23 casts a negative delay to an unsigned count of ms (a "
         .. "timer that never fires); raised here" },
  },
  ["udp two readers"] = {
    send = { line = "send: 1",
             why = "a send is allowed while another thread receives (README)" },
    ["first reader"] = { line = 'first reader: true "hi"',
                         why = "so the reader gets the echo" },
  },
  ["ngx.re.match"] = {
    ["bad regex"] = {
      line = 'bad regex: nil "pcre2_compile() failed: missing closing '
        .. 'parenthesis in \\034(\\034"',
      why = "PCRE2's message, as OpenResty built with PCRE2 (1.21.4 on) "
         .. "says it; Debian's nginx uses PCRE" },
  },
  ["string helpers"] = {
    null = { line = 'null: userdata "userdata" "userdata: (nil)"',
             why = "tostring of a NULL light userdata: Lua 5.4 prints %p" },
  },
  -- API.md ("OpenResty behaviour we do not copy"): a read error closes
  -- the socket, so a send after it says "closed"; 0.10.x ends the read
  -- half only and the send goes out (or meets the reset)
  ["peer reset mid-read"] = {
    send = { line = 'send: nil "closed"', why = READ_ERROR_CLOSES },
  },
  ["peer closes before anything"] = {
    ["send after"] = { line = 'send after: nil "closed"',
                       why = READ_ERROR_CLOSES },
  },
  ["send after a read timeout and after the peer's FIN"] = {
    ["send after FIN"] = { line = 'send after FIN: nil "closed"',
                           why = READ_ERROR_CLOSES },
  },
  ["close from another thread while sending"] = {
    close = { line = "close: 1",
              why = "close() wakes the parked sender (OpenResty: busy)" },
    sender = { line = 'sender: true nil "closed"',
               why = "woken by close() with \"closed\"" },
  },
}

---------------------------------------------------------------------------
-- the peer

local peer

local function start_peer() peer = script_peer.start() end
local stop_peer = script_peer.stop

---------------------------------------------------------------------------

-- what corosched must return for case c: the recording with the lines of
-- DIFFERENT[c.name] replaced
local function expected(c)
  local text = assert(recorded[c.name], "case not recorded: " .. c.name
                      .. " (run spec/support/record_openresty.sh)")
  local diff = DIFFERENT[c.name]
  if not diff then return text end
  local used, lines = {}, {}
  for line in (text .. "\n"):gmatch("(.-)\n") do
    local label = line:match("^(.-):")
    local d = label and diff[label]
    if d then
      used[label] = true
      line = d.line
    end
    lines[#lines + 1] = line
  end
  for label in pairs(diff) do
    assert(used[label], c.name .. ": DIFFERENT names no line " .. label)
  end
  return table.concat(lines, "\n")
end

-- cases that cannot hold when every recv/send moves one byte (make
-- check-shortio): what one read returns, a send timeout (each byte is
-- progress), bytes still in the kernel where OpenResty had read them
local SHORT_IO_PENDING = {
  ["receiveany"] = true,
  ["receiveany after a line left data buffered"] = true,
  ["send timeout"] = true,
  ["after a send timeout the read half goes on"] = true,
  ["two threads sending on one socket"] = true,
  ["setkeepalive with a partly read line"] = true,
  ["receiveany sizes as strings and floats"] = true,
  ["huge receive counts"] = true, -- its receiveany
}

local function normal(text)
  return (text:gsub("bad argument #%d+ to '[^']*'", "bad argument"))
end

describe("the cosocket cases recorded from OpenResty", function()
  setup(start_peer)
  teardown(stop_peer)
  before_each(save_globals)
  after_each(restore_globals)

  for _, c in ipairs(m.cases) do
    local it = net.short_io and SHORT_IO_PENDING[c.name] and pending or it
    it(c.name, function()
      local got
      net.run(function()
        ngxc.install()
        got = m.run(c, peer)
      end)
      assert.are.equal(normal(expected(c)), normal(got))
    end)
  end

  it("every recorded case is a case here", function()
    local names = {}
    for _, c in ipairs(m.cases) do names[c.name] = true end
    for name in pairs(recorded) do
      assert(names[name], "recorded but not a case: " .. name)
    end
  end)
end)
