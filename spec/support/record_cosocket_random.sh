#!/bin/sh
# Records what real OpenResty's TCP cosockets return for the random cases
# of spec/support/cosocket_random_cases.lua (seeded, so the same each run),
# into spec/support/cosocket_random_recorded.txt; spec/71 runs the same
# cases on corosched and compares case by case. Runs nginx with
# lua-nginx-module (Debian: nginx-light libnginx-mod-http-lua, installed
# with INSTALL=1) in a temporary prefix, against script_peer.py.
#   sh spec/support/record_cosocket_random.sh [OUT]
# SEED=n COUNT=n record other cases (to look for divergences; spec/71
# replays the module's own M.SEED and M.COUNT).
set -e
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/cosocket_random_recorded.txt}
. "$here/openresty_lib.sh"
openresty_setup

python3 "$here/script_peer.py" --parent $$ --certs "$here/certs" \
    >"$dir/peer.out" 2>"$dir/peer.err" &
peer_pid=$!
for _ in $(seq 50); do [ -s "$dir/peer.out" ] && break; sleep 0.1; done
set -- $(cat "$dir/peer.out")
[ "$1" = tcp ] || { echo "script_peer.py did not start" >&2; exit 1; }
port=$2 unix=${10} tls=${14}

cat >"$dir/nginx.conf" <<EOC
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
      local show = dofile("$here/openresty_cases.lua").show
      local m = dofile("$here/cosocket_random_cases.lua")
      local peer = { port = $port, unix = "$unix", tls = $tls }
      m.SEED = tonumber("${SEED:-}") or m.SEED
      m.COUNT = tonumber("${COUNT:-}") or m.COUNT
      local res = m.run_all(m.generate(m.SEED, m.COUNT), peer, show)
      ngx.say("# Recorded by spec/support/record_cosocket_random.sh: what ",
              "OpenResty's cosockets")
      ngx.say("# returned for spec/support/cosocket_random_cases.lua (nginx ",
              ngx.var.nginx_version, ", lua-nginx-module ",
              ngx.config.ngx_lua_version, ",")
      ngx.say("# Debian package $pkg, ", jit.version, "). Do not edit: ",
              "record again.")
      ngx.say("# seed ", m.SEED, ", count ", m.COUNT)
      for i, text in ipairs(res) do
        ngx.say("== case ", i)
        ngx.say(text)
      end
      ngx.say("# end")
    } }
  }
}
EOC
openresty_fetch '# end'
echo "wrote $out ($(grep -c '^== case' "$out") cases)"
