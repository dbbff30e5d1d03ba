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

openresty_peer

openresty_conf_head info "$sock_conf" >"$dir/nginx.conf"
cat >>"$dir/nginx.conf" <<EOF
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
