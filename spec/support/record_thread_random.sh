#!/bin/sh
# Records what real OpenResty's light threads do in the random programs of
# spec/support/thread_random_cases.lua (seeded, so the same each run),
# into spec/support/thread_random_recorded.txt; spec/72 runs the same
# programs on corosched and compares program by program. Runs nginx with
# lua-nginx-module (Debian: nginx-light libnginx-mod-http-lua, installed
# with INSTALL=1) in a temporary prefix; the programs run one after the
# other in one request.
#   sh spec/support/record_thread_random.sh [OUT]
# SEED=n COUNT=n record other programs (to look for divergences; spec/72
# replays the module's own M.SEED and M.COUNT). CASES=file.lua runs another
# module with the same generate/run_all (a probe of a few hand-written
# programs).
set -e
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/thread_random_recorded.txt}
cases=${CASES:-$here/thread_random_cases.lua}
. "$here/openresty_lib.sh"
openresty_setup

openresty_conf_head error >"$dir/nginx.conf"
cat >>"$dir/nginx.conf" <<EOC
    location /program { content_by_lua_block {
      local show = dofile("$here/openresty_cases.lua").show
      local m = dofile("$cases")
      local ps = m.generate(tonumber("${SEED:-}") or m.SEED,
                            tonumber(ngx.var.arg_count))
      ngx.print(m.run_all({ ps[tonumber(ngx.var.arg_i)] }, show)[1])
    } }
    location /record { content_by_lua_block {
      local m = dofile("$cases")
      m.SEED = tonumber("${SEED:-}") or m.SEED
      m.COUNT = tonumber("${COUNT:-}") or m.COUNT
      ngx.say("# Recorded by spec/support/record_thread_random.sh: what ",
              "OpenResty's light threads")
      ngx.say("# did in spec/support/thread_random_cases.lua's programs ",
              "(nginx ", ngx.var.nginx_version, ", lua-nginx-module ",
              ngx.config.ngx_lua_version, ",")
      ngx.say("# Debian package $pkg, ", jit.version, "). Do not edit: ",
              "record again.")
      ngx.say("# seed ", m.SEED, ", count ", m.COUNT)
    } }
  }
}
EOC
# each program in a request of its own (one request running them all
# hangs after a few hundred: lua-nginx-module 0.10.23 keeps state of
# the threads of earlier programs)
nginx -p "$dir" -c "$dir/nginx.conf" -e "$dir/logs/error.log"
for _ in $(seq 50); do [ -s "$dir/logs/nginx.pid" ] && break; sleep 0.1; done
python3 - "$http_port" "$out.tmp" <<'EOP'
import sys, urllib.request
base = "http://127.0.0.1:%s" % sys.argv[1]
head = urllib.request.urlopen(base + "/record", timeout=30).read().decode()
count = int(head.split("# seed ")[1].split(", count ")[1])
parts = [head]
for i in range(1, count + 1):
    try:
        body = urllib.request.urlopen("%s/program?i=%d&count=%d"
                                      % (base, i, count), timeout=30).read()
        text = body.decode()
    except Exception as e:
        text = "request failed: %s" % type(e).__name__
    parts.append("== program %d\n%s\n" % (i, text))
parts.append("# end\n")
open(sys.argv[2], "w").write("".join(parts))
EOP
mv "$out.tmp" "$out"
echo "wrote $out ($(grep -c '^== program' "$out") programs, $(grep -c \
'^request failed' "$out") failed)"
