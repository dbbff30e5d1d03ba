#!/bin/sh
# Records what real OpenResty's pure helpers and ngx.re return for the
# random inputs of spec/support/ngx_random_cases.lua (seeded, so the same
# each run), into spec/support/ngx_random_recorded.txt; spec/70 generates
# the same inputs on corosched and compares line by line. Runs nginx with
# lua-nginx-module (Debian: nginx-light libnginx-mod-http-lua, installed
# with INSTALL=1) in a temporary prefix.
#   sh spec/support/record_ngx_random.sh [OUT]
set -e
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/ngx_random_recorded.txt}
mod=/usr/lib/nginx/modules/ngx_http_lua_module.so
if [ ! -f "$mod" ] || ! command -v nginx >/dev/null; then
    if [ "$INSTALL" = 1 ]; then
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
            --no-install-recommends nginx-light libnginx-mod-http-lua \
            >/dev/null
    else
        echo "needs nginx and $mod (INSTALL=1 installs them)" >&2
        exit 1
    fi
fi
dir=$(mktemp -d)
cleanup() {
    [ -f "$dir/logs/nginx.pid" ] && kill "$(cat "$dir/logs/nginx.pid")" \
        2>/dev/null
    sleep 0.3
    rm -rf "$dir"
}
trap cleanup EXIT
mkdir -p "$dir/logs"
http_port=$(python3 -c 'import socket; s = socket.socket()
s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
pkg=$(dpkg-query -W -f='${Version}' libnginx-mod-http-lua 2>/dev/null \
      || echo "?")

cat >"$dir/nginx.conf" <<EOC
load_module /usr/lib/nginx/modules/ndk_http_module.so;
load_module $mod;
daemon on; master_process off; worker_processes 1;
error_log $dir/logs/error.log info;
pid $dir/logs/nginx.pid;
events { worker_connections 1024; }
http {
  access_log off;
  server {
    listen 127.0.0.1:$http_port;
    location /record { content_by_lua_block {
      local m = dofile("$here/ngx_random_cases.lua")
      local out = {}
      local n = m.run(ngx, function(line) out[#out + 1] = line end)
      ngx.say("# Recorded by spec/support/record_ngx_random.sh: what ",
              "OpenResty returned for the")
      ngx.say("# inputs of spec/support/ngx_random_cases.lua (nginx ",
              ngx.var.nginx_version, ", lua-nginx-module ",
              ngx.config.ngx_lua_version, ",")
      ngx.say("# Debian package $pkg, ", jit.version, ", lua-resty-core ",
              require("resty.core.base").version, "). Do not edit: ",
              "record again.")
      ngx.say("# seed ", m.SEED, ", count ", n)
      ngx.say(table.concat(out, "\n"))
      ngx.say("# end")
    } }
  }
}
EOC
nginx -p "$dir" -c "$dir/nginx.conf" -e "$dir/logs/error.log"
for _ in $(seq 50); do [ -s "$dir/logs/nginx.pid" ] && break; sleep 0.1; done
python3 - "$http_port" "$out.tmp" <<'EOC'
import http.client, sys, urllib.request
try:
    body = urllib.request.urlopen("http://127.0.0.1:%s/record" % sys.argv[1],
                                  timeout=300).read()
except http.client.IncompleteRead as e:  # nginx aborted the request
    body = e.partial
except http.client.HTTPException:  # the worker crashed
    body = b""
open(sys.argv[2], "wb").write(body)
EOC
if ! tail -n 1 "$out.tmp" | grep -q '^# end$'; then
    echo "recording failed; nginx's error log:" >&2
    tail -n 30 "$dir/logs/error.log" >&2
    rm -f "$out.tmp"
    exit 1
fi
mv "$out.tmp" "$out"
echo "wrote $out ($(grep -c '^[0-9]' "$out") inputs)"
