#!/usr/bin/env bash
# corosched soak test: a corosched echo server and a corosched client in two
# processes; the client keeps SOAK_CONNS connections churning (connect,
# exchange, close / keepalive / killed mid-operation, deliberate read
# timeouts), runs SOAK_CYCLES spawn/kill/wait cycles and creates and
# cancels timers at random, for SOAK_TIME seconds. Both sample VmRSS, open
# fds and cs.stats() every second; soak/analyze.lua prints the curve,
# applies the criteria (see its header) and writes a gnuplot script.
#
#   make soak SOAK_TIME=600          (the Makefile calls: bash soak/run.sh)
#   SOAK_TIME=120 bash soak/run.sh
#
# Settings (environment): SOAK_TIME (s, default 600), SOAK_CONNS (9000),
# SOAK_CYCLES (1000000), SOAK_POOL (50 idle connections per port),
# SOAK_PORTS (8 server ports), SOAK_HOLD (6 s, mean life of a connection),
# SOAK_KILLS (0.1, share of connections killed), SOAK_TIMERS (2000),
# SOAK_TLS (0.1, share of connections made over TLS through
# soak/tls_front.py, which needs python3; 0: none), SOAK_SEED, SOAK_OUT
# (results, default $BUILD/soak), BUILD (the build dir holding
# corosched/core.so, default build), LUA (lua5.4),
# SOAK_PLOT=1 (apt-get install gnuplot-nox when gnuplot is missing),
# SOAK_MALLOC_TRIM=1 (malloc_trim(0) before every sample: a diagnosis
# run), SOAK_RSS=warn (RSS growth with both heaps flat, i.e. memory malloc
# keeps after fragmentation, is a warning instead of a failure).
#
# Results in $SOAK_OUT: client.csv, server.csv (the samples), *.final,
# *.log (stderr), soak.gp and soak.png (when gnuplot is there).
# Exit status 0 = pass. Child processes are always stopped (by their pid).
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD

export SOAK_TIME=${SOAK_TIME:-600}
export SOAK_CONNS=${SOAK_CONNS:-9000}
export SOAK_CYCLES=${SOAK_CYCLES:-1000000}
export SOAK_POOL=${SOAK_POOL:-50}
export SOAK_PORTS=${SOAK_PORTS:-8}
export SOAK_TIMERS=${SOAK_TIMERS:-2000}
export SOAK_TLS=${SOAK_TLS:-0.1}
export SOAK_CA="$ROOT/spec/support/certs/ca.crt"
export SOAK_DRAIN=${SOAK_DRAIN:-30}
BUILD=${BUILD:-build}
LUA=${LUA:-lua5.4}
OUT=${SOAK_OUT:-$BUILD/soak}

if [ ! -f "$BUILD/corosched/core.so" ]; then
    echo "soak: $BUILD/corosched/core.so is missing (run make first)" >&2
    exit 2
fi

# fds: each process needs about SOAK_CONNS + the pool + slack
ulimit -n "$(ulimit -Hn)" 2>/dev/null
nofile=$(ulimit -n)
need=$((SOAK_CONNS + SOAK_POOL * SOAK_PORTS + SOAK_CONNS / 10 + 512))
if [ "$nofile" != unlimited ] && [ "$nofile" -lt "$need" ]; then
    conns=$(( (nofile - SOAK_POOL * SOAK_PORTS - 512) * 10 / 11 ))
    echo "soak: open files limit $nofile: SOAK_CONNS $SOAK_CONNS -> $conns"
    export SOAK_CONNS=$conns
fi

mkdir -p "$OUT"
rm -f "$OUT"/ports "$OUT"/ports.tmp "$OUT"/stop "$OUT"/*.csv \
      "$OUT"/*.final "$OUT"/*.log "$OUT"/soak.gp "$OUT"/soak.png

# soak.mallinfo (optional): glibc's heap figures for the samples
mkdir -p "$OUT/soak"
${CC:-cc} -std=c99 -O2 -fPIC -shared $(pkg-config --cflags lua5.4 2>/dev/null) \
    -o "$OUT/soak/mallinfo.so" soak/mallinfo.c 2>/dev/null \
    || echo "soak: soak/mallinfo.c not built (no heap figures)"

# The allocator both processes run on: SOAK_MALLOC=jemalloc (the default:
# preloaded, installed with apt-get when missing and possible) or glibc.
# glibc's malloc fragments under this churn of coroutines, sockets and
# strings of every size: its RSS creeps up for many minutes while the
# memory in use stays flat (measured, README), which would hide a real leak
# in the noise or fail a clean run. jemalloc does not, so RSS is a leak
# detector again; the heap-in-use checks hold under both.
SOAK_MALLOC=${SOAK_MALLOC:-jemalloc}
find_jemalloc() {
    local f
    for f in /usr/lib/*/libjemalloc.so.2 /usr/lib/libjemalloc.so.2 \
             /usr/local/lib/libjemalloc.so.2; do
        [ -f "$f" ] && { echo "$f"; return 0; }
    done
    return 1
}
PRELOAD=
if [ "$SOAK_MALLOC" = jemalloc ]; then
    if ! PRELOAD=$(find_jemalloc) && [ "$(id -u)" -eq 0 ] \
       && command -v apt-get >/dev/null; then
        echo "soak: installing libjemalloc2"
        { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libjemalloc2 \
          || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
               apt-get install -y -qq libjemalloc2; }; } >/dev/null 2>&1
        PRELOAD=$(find_jemalloc)
    fi
    if [ -z "$PRELOAD" ]; then
        echo "soak: jemalloc not found: running on glibc's malloc"
        SOAK_MALLOC=glibc
    fi
elif [ "$SOAK_MALLOC" != glibc ]; then
    echo "soak: SOAK_MALLOC must be jemalloc or glibc" >&2
    exit 2
fi
export SOAK_MALLOC

export LUA_PATH="$ROOT/?.lua;$ROOT/lua/?.lua;$ROOT/lua/?/init.lua;;"
export LUA_CPATH="$ROOT/$BUILD/?.so;$OUT/?.so;;"

spid=
cpid=
tpid=
cleanup() {
    local p
    for p in $cpid $spid $tpid; do
        if kill -0 "$p" 2>/dev/null; then
            kill "$p" 2>/dev/null
            sleep 1
            kill -9 "$p" 2>/dev/null
        fi
        wait "$p" 2>/dev/null
    done
    cpid=
    spid=
    tpid=
}
trap cleanup EXIT
trap 'echo "soak: interrupted"; exit 130' INT TERM

echo "soak: ${SOAK_TIME}s, $SOAK_CONNS connections, $SOAK_CYCLES cycles," \
     "$SOAK_PORTS ports, pool $SOAK_POOL/port, TLS share $SOAK_TLS," \
     "fd limit $(ulimit -n)," \
     "malloc: $SOAK_MALLOC${PRELOAD:+ ($PRELOAD)}, results in $OUT"

# started <pid> <file> <what> <log>: waits (10 s at most, while pid lives)
# for the file a started process writes once it listens; exits if none
started() {
    for _ in $(seq 1 100); do
        [ -f "$2" ] && return 0
        kill -0 "$1" 2>/dev/null || break
        sleep 0.1
    done
    [ -f "$2" ] && return 0
    echo "soak: the $3 did not start" >&2
    cat "$4" >&2
    exit 1
}

LD_PRELOAD=$PRELOAD "$LUA" soak/server.lua "$OUT" 2> "$OUT/server.log" &
spid=$!
started "$spid" "$OUT/ports" server "$OUT/server.log"

# the TLS front: test.example's certificate (signed by SOAK_CA), relaying
# to the server's first port
rm -f "$OUT/tls_port"
if [ "$SOAK_TLS" != 0 ]; then
    if ! command -v python3 >/dev/null; then
        echo "soak: no python3 for the TLS front: SOAK_TLS=0"
        SOAK_TLS=0
    else
        python3 soak/tls_front.py "$ROOT/spec/support/certs/peer.crt" \
            "$ROOT/spec/support/certs/peer.key" "$(head -n 1 "$OUT/ports")" \
            "$OUT/tls_port" 2> "$OUT/tls_front.log" &
        tpid=$!
        started "$tpid" "$OUT/tls_port" "TLS front" "$OUT/tls_front.log"
    fi
fi

LD_PRELOAD=$PRELOAD "$LUA" soak/client.lua "$OUT" 2> "$OUT/client.log" &
cpid=$!

# progress every 15 s; a client that runs far too long is a failure
status=0
t0=$SECONDS
limit=$((SOAK_TIME + 180))
next=15
while kill -0 "$cpid" 2>/dev/null; do
    if [ $((SECONDS - t0)) -gt "$limit" ]; then
        echo "soak: the client is still running after ${limit}s: killed"
        status=1
        break
    fi
    if [ $((SECONDS - t0)) -ge "$next" ] && [ -s "$OUT/client.csv" ]; then
        awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
                 { split($0, v, ",") }
                 END { printf "soak: t=%ss client rss=%.1fMiB fds=%s " \
                       "threads=%s conns=%s cycles=%s\n", v[c["t"]],
                       v[c["rss_kb"]] / 1024, v[c["fds"]], v[c["threads"]],
                       v[c["conns"]], v[c["cycles"]] }' "$OUT/client.csv"
        next=$((next + 15))
    fi
    sleep 1
done
if [ "$status" -eq 0 ]; then
    wait "$cpid"
    crc=$?
    cpid=
    if [ "$crc" -ne 0 ]; then
        echo "soak: the client exited with status $crc"
        status=1
    fi
fi
touch "$OUT/stop"

# the server stops once it sees the stop file and its handlers end
for _ in $(seq 1 $(( (SOAK_DRAIN + 15) * 10 ))); do
    kill -0 "$spid" 2>/dev/null || break
    sleep 0.1
done
if kill -0 "$spid" 2>/dev/null; then
    echo "soak: the server did not stop: killed"
    status=1
else
    wait "$spid"
    src=$?
    spid=
    if [ "$src" -ne 0 ]; then
        echo "soak: the server exited with status $src"
        status=1
    fi
fi
cleanup

for f in client server; do
    if [ -s "$OUT/$f.log" ]; then
        echo "soak: $f stderr (last lines):"
        tail -n 20 "$OUT/$f.log" | sed 's/^/  /'
    fi
done

"$LUA" soak/analyze.lua "$OUT" || status=1

if [ "${SOAK_PLOT:-0}" = 1 ] && ! command -v gnuplot >/dev/null; then
    echo "soak: installing gnuplot-nox"
    (apt-get install -y gnuplot-nox >/dev/null 2>&1 \
        || (apt-get update >/dev/null 2>&1 \
            && apt-get install -y gnuplot-nox >/dev/null 2>&1)) \
        || echo "soak: could not install gnuplot-nox"
fi
if command -v gnuplot >/dev/null && [ -f "$OUT/soak.gp" ]; then
    if gnuplot "$OUT/soak.gp" 2>"$OUT/gnuplot.log"; then
        echo "soak: plot written to $OUT/soak.png"
    else
        echo "soak: gnuplot failed (see $OUT/gnuplot.log)"
    fi
fi

if [ "$status" -eq 0 ]; then
    echo "soak: OK"
else
    echo "soak: FAILED"
fi
exit "$status"
