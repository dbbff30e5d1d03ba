# What the recording scripts share (record_openresty.sh,
# record_ngx_random.sh): sourced after setting `here` and `out`.
#   openresty_setup     checks for nginx and lua-nginx-module (INSTALL=1
#                       installs them); sets mod, dir (a temporary prefix,
#                       removed at exit with nginx and $peer_pid stopped),
#                       http_port and pkg (the module's Debian version)
#   openresty_conf_head [LEVEL [HTTP]]  prints the start of an nginx.conf
#                       up to and with the server's listen line (its http
#                       and server blocks left open; HTTP: more directives
#                       for the http block)
#   openresty_peer      starts script_peer.py (see below)
#   openresty_fetch END starts nginx on $dir/nginx.conf, saves what GET
#                       /record answers to $out once its last line is END
#                       (else shows nginx's error log and fails)
openresty_setup() {
    mod=/usr/lib/nginx/modules/ngx_http_lua_module.so
    if [ ! -f "$mod" ] || ! command -v nginx >/dev/null; then
        if [ "$INSTALL" = 1 ]; then
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
                --no-install-recommends nginx-light libnginx-mod-http-lua \
                curl >/dev/null
        else
            echo "needs nginx and $mod (INSTALL=1 installs them)" >&2
            exit 1
        fi
    fi
    dir=$(mktemp -d)
    peer_pid=""
    trap openresty_cleanup EXIT
    mkdir -p "$dir/logs"
    http_port=$(python3 -c 'import socket; s = socket.socket()
s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    pkg=$(dpkg-query -W -f='${Version}' libnginx-mod-http-lua 2>/dev/null \
          || echo "?")
}

openresty_conf_head() {
    cat <<EOC
load_module /usr/lib/nginx/modules/ndk_http_module.so;
load_module $mod;
daemon on; master_process off; worker_processes 1;
error_log $dir/logs/error.log ${1:-info};
pid $dir/logs/nginx.pid;
events { worker_connections 1024; }
http {
  access_log off;
${2:-}  server {
    listen 127.0.0.1:$http_port;
EOC
}

# for the cosocket recordings: starts script_peer.py and sets port,
# refused, udp, udp_refused, unix, tls and tls_self; sock_conf is what
# their http block adds (socket errors not logged, the test CA trusted)
openresty_peer() {
    python3 "$here/script_peer.py" --parent $$ --certs "$here/certs" \
        >"$dir/peer.out" 2>"$dir/peer.err" &
    peer_pid=$!
    for _ in $(seq 50); do [ -s "$dir/peer.out" ] && break; sleep 0.1; done
    set -- $(cat "$dir/peer.out")
    [ "$1" = tcp ] || { echo "script_peer.py did not start" >&2; exit 1; }
    port=$2 refused=$4 udp=$6 udp_refused=$8 unix=${10} tls=${14}
    tls_self=${16}
    sock_conf="  lua_socket_log_errors off;
  lua_ssl_trusted_certificate $here/certs/ca.crt;
  lua_ssl_verify_depth 2;
"
}

openresty_cleanup() {
    [ -f "$dir/logs/nginx.pid" ] && kill "$(cat "$dir/logs/nginx.pid")" \
        2>/dev/null
    [ -n "$peer_pid" ] && kill "$peer_pid" 2>/dev/null
    sleep 0.3
    rm -rf "$dir"
}

openresty_fetch() {
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
    if [ "$(tail -n 1 "$out.tmp")" != "$1" ]; then
        echo "recording failed; nginx's error log:" >&2
        tail -n 30 "$dir/logs/error.log" >&2
        rm -f "$out.tmp"
        exit 1
    fi
    mv "$out.tmp" "$out"
}
