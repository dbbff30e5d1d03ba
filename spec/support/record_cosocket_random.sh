#!/bin/sh
# Records what real OpenResty's TCP cosockets return for the random cases
# of spec/support/cosocket_random_cases.lua (seeded, so the same each run),
# into spec/support/cosocket_random_recorded.txt; spec/71 runs the same
# cases on corosched and compares case by case. Runs nginx with
# lua-nginx-module (Debian: nginx-light libnginx-mod-http-lua, installed
# with INSTALL=1) in a temporary prefix, against script_peer.py.
#   sh spec/support/record_cosocket_random.sh [OUT]
# SEED=n COUNT=n record other cases (to look for divergences; spec/71
# replays the module's own M.SEED and M.COUNT). record_udp_random.sh runs
# this with CASES (another module with the same generate/run_all) and
# RECORDER (its name, for the recording's first line).
set -e
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/cosocket_random_recorded.txt}
cases=${CASES:-$here/cosocket_random_cases.lua}
recorder=${RECORDER:-record_cosocket_random.sh}
. "$here/openresty_lib.sh"
openresty_setup

openresty_peer

openresty_conf_head info "$sock_conf" >"$dir/nginx.conf"
cat >>"$dir/nginx.conf" <<EOC
    location /record { content_by_lua_block {
      local show = dofile("$here/openresty_cases.lua").show
      local m = dofile("$cases")
      local peer = { port = $port, unix = "$unix", tls = $tls, udp = $udp,
                     udp_refused = $udp_refused }
      m.SEED = tonumber("${SEED:-}") or m.SEED
      m.COUNT = tonumber("${COUNT:-}") or m.COUNT
      local res = m.run_all(m.generate(m.SEED, m.COUNT), peer, show)
      ngx.say("# Recorded by spec/support/$recorder: what ",
              "OpenResty's cosockets")
      ngx.say("# returned for spec/support/$(basename "$cases") (nginx ",
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
