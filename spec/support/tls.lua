-- Helpers for the TLS specs: test certificates made with the openssl
-- command line tool and TLS servers run by a Python peer
-- (spec/support/tls_peer.py, next to this file).
--
--   local tls = require "spec.support.tls"
--   local ok, why = tls.available()  -- python3 with ssl, and openssl
--   local c = tls.certs()            -- c.ca_crt, c.server_key, ... (paths)
--   local srv = tls.server({ mode = "whoami" })
--   -- connect to srv.host, srv.port ...
--   srv:stop()
--   tls.cleanup()                    -- stops servers, removes the files
--
-- tls.certs() makes, once per loaded module, EC P-256 keys and PEM
-- certificates in a fresh temporary directory (c.cadir): a root CA
-- "corosched test CA" (ca_crt, ca_key); leaves that it signs: server
-- (CN=localhost, DNS:localhost, DNS:test.corosched, IP:127.0.0.1, IP:::1,
-- serverAuth), other (DNS:other.example only), wild (DNS:*.wild.corosched
-- only), expired (DNS:localhost, IP:127.0.0.1, valid from 2020-01-01 to
-- 2020-01-02), client
-- (CN=corosched-client, clientAuth); self (self-signed, DNS:localhost,
-- IP:127.0.0.1); chain (DNS:localhost, IP:127.0.0.1, issued by
-- intermediate 3 <- 2 <- 1 <- the root; chain_crt holds the leaf then
-- intermediates 3, 2, 1; chain_leaf_crt the leaf alone, int1_crt ...
-- int3_crt the intermediates).
--
-- tls.server(opts) starts a peer and returns once it listens: an object
-- with host, port, pid, mode, logfile, :stop() (idempotent; also done when
-- the object is collected) and :log() (what the peer logged). opts: cert,
-- key (default the server pair), mode (default "echo"), client_ca (a
-- client certificate verified against it is then required), min_version,
-- max_version ("1.2" or "1.3"), payload (the bytes of send_notify,
-- send_close and plain), host (default "127.0.0.1"). The modes:
--   echo         echoes until the client closes, then close_notify
--   starttls     reads a line in clear, answers "OK\n" and payload in
--                clear, then does TLS and echoes
--   whoami       sends "sni=<name|-> cn=<client CN|-> reused=<0|1>
--                version=<TLSv1.2|TLSv1.3>\n", then echoes
--   send_notify  sends payload, then close_notify, then closes
--   send_close   sends payload, then closes TCP without close_notify
--   corrupt      sends payload, then a forged record written on the TCP
--                socket (its authentication fails), then waits for the
--                client to close
--   hang         accepts and neither reads nor writes (30 s at most)
--   plain        no TLS: reads 0.2 s, answers payload (default an HTTP
--                400 response) in clear text, closes
--   http         HTTP/1.1 keep-alive over TLS: each request is answered
--                "method=<M> path=<P> sni=<name|->" (a newline and the
--                request body after it when there is one); honours
--                "Connection: close"
-- Every child process is started without LD_PRELOAD (make check-asan
-- preloads the sanitizer runtimes); a peer exits by itself within 0.5 s
-- when this process is gone.
local net = require "spec.support.net"

local tls = {}

local MODES = {
  echo = true, whoami = true, send_notify = true, send_close = true,
  corrupt = true, starttls = true,
  hang = true, plain = true, http = true,
}
local VERSIONS = { ["1.2"] = true, ["1.3"] = true }
local SERVER_OPTS = {
  cert = true, key = true, mode = true, client_ca = true,
  min_version = true, max_version = true, payload = true, host = true,
}

-- servers: the running ones (weak: one that is forgotten is collected,
-- and stopped then)
local state = { servers = setmetatable({}, { __mode = "k" }), count = 0 }

local sh_quote = net.sh_quote

-- the first line that cmd prints (stderr dropped), or nil
local function first_line(cmd)
  local p = io.popen(cmd .. " 2>/dev/null", "r")
  if not p then return nil end
  local line = p:read("l")
  p:close()
  if line == "" then return nil end
  return line
end

function tls.read(path)
  local f, err = io.open(path, "rb")
  if not f then error("tls.read: " .. err, 2) end
  local s = f:read("a")
  f:close()
  return s
end

local function write_file(path, s)
  local f = assert(io.open(path, "wb"))
  assert(f:write(s))
  f:close()
end

-- the directory of this file, absolute (the peer script is there)
local function own_dir()
  local src = debug.getinfo(1, "S").source
  local dir = src:sub(2):match("^(.*)/[^/]*$") or "."
  if dir:sub(1, 1) ~= "/" then
    local cwd = assert(first_line("env -u LD_PRELOAD pwd"), "pwd failed")
    dir = cwd .. "/" .. dir:gsub("^%./", "")
  end
  return dir
end

---------------------------------------------------------------------------
-- availability

local avail

-- true, or false and the reason (memoised)
function tls.available()
  if not avail then
    -- the interpreter itself, not a version manager's shim (a few
    -- hundred ms saved on each start of a peer)
    local py = first_line("env -u LD_PRELOAD python3 -c "
      .. sh_quote("import ssl, sys; print(sys.executable)"))
    local ossl = first_line("env -u LD_PRELOAD openssl version")
    if not py then
      avail = { false, "python3 with its ssl module is not usable" }
    elseif not ossl then
      avail = { false, "the openssl command line tool is not usable" }
    else
      tls.python, tls.openssl_version = py, ossl
      avail = { true }
    end
  end
  if avail[1] then return true end
  return false, avail[2]
end

---------------------------------------------------------------------------
-- certificates

local OPENSSL_CNF = [[
[req]
distinguished_name = req_dn
prompt = no
[req_dn]
CN = unused

[ca]
default_ca = ca_any
[ca_any]
database = castore/index.txt
new_certs_dir = castore
serial = castore/serial
default_md = sha256
policy = policy_any
unique_subject = no
copy_extensions = none
[policy_any]
commonName = supplied

[root_ext]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[int_ext]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[server_ext]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost, DNS:test.corosched, IP:127.0.0.1, IP:::1
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[other_ext]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:other.example
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[wild_ext]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:*.wild.corosched
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[local_ext]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost, IP:127.0.0.1
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[self_ext]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost, IP:127.0.0.1
subjectKeyIdentifier = hash
[client_ext]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = clientAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
]]

-- run by sh -ex in the directory: every file is name.key / name.crt
local GEN_SH = [[
cert() { # name subject extensions serial days [issuer]
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -noenc \
    -keyout "$1.key" -out "$1.crt" -subj "$2" -config openssl.cnf \
    -extensions "$3" -set_serial "$4" -days "$5" \
    ${6:+-CA "$6.crt" -CAkey "$6.key"}
}
cert ca "/CN=corosched test CA" root_ext 1 3650
cert server /CN=localhost server_ext 2 365 ca
cert other /CN=other.example other_ext 3 365 ca
cert client /CN=corosched-client client_ext 4 365 ca
cert wild "/CN=*.wild.corosched" wild_ext 11 365 ca
cert self /CN=localhost self_ext 5 365
cert int1 "/CN=corosched test intermediate 1" int_ext 6 3650 ca
cert int2 "/CN=corosched test intermediate 2" int_ext 7 3650 int1
cert int3 "/CN=corosched test intermediate 3" int_ext 8 3650 int2
cert chain_leaf /CN=localhost local_ext 9 365 int3
mv chain_leaf.key chain.key
cat chain_leaf.crt int3.crt int2.crt int1.crt >chain.crt
# openssl x509 of OpenSSL 3.0 cannot set notBefore: openssl ca can
mkdir castore
: >castore/index.txt
echo 10 >castore/serial
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -noenc \
  -keyout expired.key -out expired.csr -subj /CN=localhost \
  -config openssl.cnf
openssl ca -batch -config openssl.cnf -cert ca.crt -keyfile ca.key \
  -in expired.csr -out expired.crt -notext -extensions local_ext \
  -startdate 20200101000000Z -enddate 20200102000000Z
# sanity checks
openssl verify -CAfile ca.crt server.crt other.crt client.crt
cat int1.crt int2.crt int3.crt >ints.pem
openssl verify -CAfile ca.crt -untrusted ints.pem chain_leaf.crt
if openssl verify -CAfile ca.crt expired.crt; then exit 1; fi
if openssl verify -CAfile ca.crt self.crt; then exit 1; fi
]]

local CERT_NAMES = {
  "ca", "server", "other", "expired", "self", "chain", "client", "wild",
}

local function remove_dir(dir)
  os.execute("env -u LD_PRELOAD rm -rf " .. sh_quote(dir))
end

-- the table of paths (see the top of the file), made on the first call
function tls.certs()
  if state.certs then return state.certs end
  local dir = first_line("env -u LD_PRELOAD mktemp -d -t corosched-tls.XXXXXX")
  if not dir then error("tls.certs: mktemp -d failed", 2) end
  state.dir = dir
  -- removes the directory when the module is collected (at lua_close at
  -- the latest) unless tls.cleanup() did
  state.sentinel = setmetatable({}, {
    __gc = function()
      if state.dir == dir then remove_dir(dir) end
    end,
  })
  write_file(dir .. "/openssl.cnf", OPENSSL_CNF)
  write_file(dir .. "/gen.sh", GEN_SH)
  local ok = os.execute(("cd %s && env -u LD_PRELOAD sh -ex gen.sh "
    .. ">gen.log 2>&1"):format(sh_quote(dir)))
  if not ok then
    local log = io.open(dir .. "/gen.log", "r")
    local text = log and log:read("a") or "(no log)"
    if log then log:close() end
    remove_dir(dir)
    state.dir = nil
    error("tls.certs: making the certificates with openssl failed:\n"
          .. text, 2)
  end
  local c = { cadir = dir }
  for _, name in ipairs(CERT_NAMES) do
    c[name .. "_crt"] = dir .. "/" .. name .. ".crt"
    c[name .. "_key"] = dir .. "/" .. name .. ".key"
  end
  c.chain_leaf_crt = dir .. "/chain_leaf.crt"
  for i = 1, 3 do c["int" .. i .. "_crt"] = dir .. "/int" .. i .. ".crt" end
  state.certs = c
  return c
end

---------------------------------------------------------------------------
-- the peer

local Server = {}
Server.__index = Server

-- stops the peer and reaps it (net.stop_process)
function Server:stop()
  local proc = self.proc
  if not proc then return end
  self.proc = nil
  state.servers[self] = nil
  net.stop_process(self.pid, proc)
end

-- what the peer wrote on its stderr (one line per event)
function Server:log()
  local f = io.open(self.logfile, "r")
  if not f then return "(no log)" end
  local s = f:read("a")
  f:close()
  return s
end

-- a server forgotten without :stop() is stopped when collected (closing
-- the io.popen handle of a running peer would wait for it forever)
Server.__gc = Server.stop

function tls.server(opts)
  opts = opts or {}
  for k in pairs(opts) do
    if not SERVER_OPTS[k] then
      error("tls.server: unknown option " .. tostring(k), 2)
    end
  end
  local mode = opts.mode or "echo"
  if not MODES[mode] then error("tls.server: unknown mode " .. mode, 2) end
  for _, k in ipairs({ "min_version", "max_version" }) do
    if opts[k] ~= nil and not VERSIONS[opts[k]] then
      error("tls.server: " .. k .. " must be \"1.2\" or \"1.3\"", 2)
    end
  end
  local ok, why = tls.available()
  if not ok then error("tls.server: " .. why, 2) end
  local c = tls.certs()
  state.count = state.count + 1
  local base = ("%s/peer-%d"):format(c.cadir, state.count)
  local host = opts.host or "127.0.0.1"
  local args = {
    sh_quote(tls.python), sh_quote(own_dir() .. "/tls_peer.py"),
    "--parent", net.own_pid(), "--mode", mode, "--host", sh_quote(host),
    "--cert", sh_quote(opts.cert or c.server_crt),
    "--key", sh_quote(opts.key or c.server_key),
  }
  local function add(flag, v)
    if v ~= nil then
      args[#args + 1] = flag
      args[#args + 1] = sh_quote(v)
    end
  end
  add("--client-ca", opts.client_ca)
  add("--min-version", opts.min_version)
  add("--max-version", opts.max_version)
  if opts.payload ~= nil then
    write_file(base .. ".payload", opts.payload)
    add("--payload-file", base .. ".payload")
  end
  local logfile = base .. ".log"
  local cmd = ("exec env -u LD_PRELOAD %s </dev/null 2>%s")
    :format(table.concat(args, " "), sh_quote(logfile))
  local proc = assert(io.popen(cmd, "r"))
  local line = proc:read("l")
  local port, pid = (line or ""):match("^port (%d+) pid (%d+)$")
  if not port then
    proc:close() -- the peer has exited (it prints nothing else)
    local f = io.open(logfile, "r")
    local text = f and f:read("a") or "(no log)"
    if f then f:close() end
    error("tls.server: tls_peer.py did not start (" .. tostring(line)
          .. "):\n" .. text, 2)
  end
  local srv = setmetatable({
    host = host, port = tonumber(port), pid = tonumber(pid), mode = mode,
    logfile = logfile, proc = proc,
  }, Server)
  state.servers[srv] = true
  return srv
end

-- stops every server still running and removes the temporary directory;
-- tls.certs() makes new certificates afterwards
function tls.cleanup()
  local list = {}
  for srv in pairs(state.servers) do list[#list + 1] = srv end
  for _, srv in ipairs(list) do srv:stop() end
  if state.dir then
    remove_dir(state.dir)
    state.dir = nil
  end
  state.certs = nil
end

-- busted's describe when tls.available(), else one that makes a describe
-- with a single pending test saying what is missing (a spec passes its
-- own describe and pending: busted gives them to spec files only)
function tls.describer(describe, pending)
  local have, why = tls.available()
  if have then return describe end
  return function(name)
    describe(name, function()
      pending("needs python3 and openssl: " .. tostring(why))
    end)
  end
end

return tls
