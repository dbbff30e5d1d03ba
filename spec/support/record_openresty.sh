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
mod=/usr/lib/nginx/modules/ngx_http_lua_module.so
if [ ! -f "$mod" ] || ! command -v nginx >/dev/null; then
    if [ "$INSTALL" = 1 ]; then
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
            --no-install-recommends nginx-light libnginx-mod-http-lua curl \
            >/dev/null
    else
        echo "needs nginx and $mod (INSTALL=1 installs them)" >&2
        exit 1
    fi
fi
dir=$(mktemp -d)
peer_pid=""
cleanup() {
    [ -f "$dir/logs/nginx.pid" ] && kill "$(cat "$dir/logs/nginx.pid")" 2>/dev/null
    [ -n "$peer_pid" ] && kill "$peer_pid" 2>/dev/null
    sleep 0.3
    rm -rf "$dir"
}
trap cleanup EXIT
mkdir -p "$dir/logs"

python3 "$here/script_peer.py" --parent $$ --certs "$here/certs" \
    >"$dir/peer.out" 2>"$dir/peer.err" &
peer_pid=$!
for _ in $(seq 50); do [ -s "$dir/peer.out" ] && break; sleep 0.1; done
set -- $(cat "$dir/peer.out")
[ "$1" = tcp ] || { echo "script_peer.py did not start" >&2; exit 1; }
port=$2 refused=$4 udp=$6 udp_refused=$8 unix=${10} tls=${14} tls_self=${16}
http_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
pkg=$(dpkg-query -W -f='${Version}' libnginx-mod-http-lua 2>/dev/null || echo "?")

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
nginx -p "$dir" -c "$dir/nginx.conf" -e "$dir/logs/error.log"
for _ in $(seq 50); do [ -s "$dir/logs/nginx.pid" ] && break; sleep 0.1; done
python3 - "$http_port" "$out.tmp" <<'EOF'
import http.client, sys, urllib.request
try:
    body = urllib.request.urlopen("http://127.0.0.1:%s/record" % sys.argv[1],
                                  timeout=300).read()
except http.client.IncompleteRead as e:  # nginx aborted the request
    body = e.partial
open(sys.argv[2], "wb").write(body)
EOF
if ! tail -n 1 "$out.tmp" | grep -q '^}$'; then
    echo "recording failed; nginx's error log:" >&2
    tail -n 30 "$dir/logs/error.log" >&2
    rm -f "$out.tmp"
    exit 1
fi
mv "$out.tmp" "$out"
echo "wrote $out ($(grep -c '^  \[' "$out") cases)"
