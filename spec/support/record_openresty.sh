#!/bin/sh
# Records what real OpenResty's cosockets return for the cases of
# spec/support/openresty_cases.lua, into spec/support/openresty_recorded.lua
# (spec/59 replays them on corosched and compares). Runs nginx with
# lua-nginx-module (Debian: nginx-light libnginx-mod-http-lua, installed
# with INSTALL=1) in a temporary prefix, against script_peer.py.
#   sh spec/support/record_openresty.sh [OUT]
set -e
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/openresty_recorded.lua}
. "$here/openresty_lib.sh"
openresty_setup

python3 "$here/script_peer.py" --parent $$ --certs "$here/certs" \
    >"$dir/peer.out" 2>"$dir/peer.err" &
peer_pid=$!
for _ in $(seq 50); do [ -s "$dir/peer.out" ] && break; sleep 0.1; done
set -- $(cat "$dir/peer.out")
[ "$1" = tcp ] || { echo "script_peer.py did not start" >&2; exit 1; }
port=$2 refused=$4 udp=$6 udp_refused=$8 unix=${10} tls=${14} tls_self=${16}

cat >"$dir/nginx.conf" <<EOF
load_module /usr/lib/nginx/modules/ndk_http_module.so;
load_module $mod;
daemon on; master_process off; worker_processes 1;
error_log $dir/logs/error.log info;
pid $dir/logs/nginx.pid;
events { worker_connections 1024; }
http {
  access_log off;
  lua_socket_log_errors off;
  lua_ssl_trusted_certificate $here/certs/ca.crt;
  lua_ssl_verify_depth 2;
  server {
    listen 127.0.0.1:$http_port;
    location /record { content_by_lua_block {
      local m = dofile("$here/openresty_cases.lua")
      local peer = { port = $port, refused = $refused, udp = $udp,
                     udp_refused = $udp_refused, unix = "$unix",
                     tls = $tls, tls_self = $tls_self }
      ngx.say("-- Recorded by spec/support/record_openresty.sh: what ",
              "OpenResty's cosockets returned for")
      ngx.say("-- spec/support/openresty_cases.lua (nginx ",
              ngx.var.nginx_version, ", lua-nginx-module ",
              ngx.config.ngx_lua_version, ", Debian package $pkg,")
      ngx.say("-- ", jit.version, ", lua-resty-core ",
              require("resty.core.base").version, "). Do not edit: ",
              "record again.")
      ngx.say("return {")
      for _, c in ipairs(m.cases) do
        ngx.say(("  [%q] = [==[\n%s]==],"):format(c.name, m.run(c, peer)))
      end
      ngx.say("}")
    } }
  }
}
EOF
openresty_fetch '}'
echo "wrote $out ($(grep -c '^  \[' "$out") cases)"
