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
. "$here/openresty_lib.sh"
openresty_setup

openresty_conf_head >"$dir/nginx.conf"
cat >>"$dir/nginx.conf" <<EOC
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
openresty_fetch '# end'
echo "wrote $out ($(grep -c '^[0-9]' "$out") inputs)"
