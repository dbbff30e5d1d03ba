#!/usr/bin/env bash
# corosched socket benchmarks: echo round trips over loopback, memory per
# idle connection, and scale; corosched vs a plain C libevent client, luv
# and cqueues. Prints one table and writes it to bench/ECHO_RESULTS.md.
#
#   bash bench/echo.sh           (from anywhere; about 3.5 minutes)
#
# Every measurement runs ECHO_RUNS times (5 by default) in fresh processes,
# interleaved (run 1 of everything, then run 2, ...); the table has medians.
# Each measurement gets a fresh bench/echo_server (C, epoll); clients are
# pinned to core 0, the server to core 1 (or core 0 for the shared-core
# rows) with taskset.
#
# Environment:
#   ECHO_RUNS=N          runs per measurement (default 5)
#   ECHO_WARMUP=S        seconds of warm-up once all are connected (0.3)
#   ECHO_DURATION=S      seconds counted after the warm-up (1.2)
#   ECHO_IDLE_CONNS=N    connections of the memory benchmark (10000)
#   ECHO_SCALE_CONNS=N   connections of the scale benchmark (default 50000,
#                        lowered to what the fd limit and the ephemeral
#                        port range allow)
#   ECHO_ONLY=RE         only measurements whose key matches the extended
#                        regex RE (keys: rt_split_100.corosched, idle.luv, ...)
#   ECHO_NO_INSTALL=1    never call apt-get
#   ECHO_OUT=FILE        report file (default bench/ECHO_RESULTS.md)
#
# Installs what it needs when missing (apt-get, as root or through sudo;
# `apt-get update` only then): lua5.4 liblua5.4-dev gcc make pkg-config
# libevent-dev lua-cqueues lua-luv util-linux. Builds bench/build/echo/ and,
# when build/corosched/core.so is missing, corosched itself (make).
set -u
cd "$(dirname "$0")/.." || exit 1
BENCH=bench
OUT_DIR=$BENCH/build/echo
RUNS=${ECHO_RUNS:-5}
WARMUP=${ECHO_WARMUP:-0.3}
DURATION=${ECHO_DURATION:-1.2}
IDLE_N=${ECHO_IDLE_CONNS:-10000}
SCALE_WANT=${ECHO_SCALE_CONNS:-50000}
ONLY=${ECHO_ONLY:-}
RESULTS=${ECHO_OUT:-$BENCH/ECHO_RESULTS.md}
LUA=lua5.4
HOST=127.0.0.1
NPORTS=8     # ports the server listens on (see bench/echo_server.c)
TIMEOUT=90

say() { printf '%s\n' "$*" >&2; }

# ---- dependencies -----------------------------------------------------------

need_pkgs() {
    local missing=() p
    for p in lua5.4 liblua5.4-dev gcc make pkg-config libevent-dev lua-cqueues \
             lua-luv util-linux; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' \
            || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    if [ -n "${ECHO_NO_INSTALL:-}" ]; then
        say "echo: missing packages: ${missing[*]} (ECHO_NO_INSTALL set)"
        return 1
    fi
    local sudo=
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null; then sudo=sudo; else
            say "echo: missing packages: ${missing[*]}, and not root"; return 1
        fi
    fi
    say "echo: installing ${missing[*]}"
    $sudo apt-get update -qq >&2 &&
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >&2
}

if command -v dpkg-query >/dev/null; then
    need_pkgs || say "echo: continuing; some columns may fail"
fi

# ---- builds -----------------------------------------------------------------

mkdir -p "$OUT_DIR"
EV_CFLAGS=$(pkg-config --cflags libevent_core 2>/dev/null)
EV_LIBS=$(pkg-config --libs libevent_core 2>/dev/null || echo -levent_core)
build() {   # build <output> <source> <gcc args...>
    local out=$1 src=$2
    shift 2
    if [ ! -f "$out" ] || [ "$src" -nt "$out" ]; then
        gcc -O2 -Wall -Wextra -o "$out" "$src" "$@" \
            || { say "echo: cannot build $out"; exit 1; }
    fi
}
build "$OUT_DIR/echo_server" $BENCH/echo_server.c
# shellcheck disable=SC2086
build "$OUT_DIR/echo_client" $BENCH/echo_client.c $EV_CFLAGS $EV_LIBS

if [ ! -f build/corosched/core.so ] && [ -f Makefile ]; then
    say "echo: building corosched (make)"
    make >&2 || say "echo: make failed"
fi
export LUA_CPATH='build/?.so;;'
export LUA_PATH='lua/?.lua;lua/?/init.lua;;'

declare -A HAVE=([c]=1 [corosched]=1 [luv]=1 [cqueues]=1)
for m in corosched luv cqueues; do
    if ! err=$($LUA -e "require '$m'" 2>&1); then
        HAVE[$m]=0
        say "echo: lua5.4 cannot load $m; its column is left empty: $err"
    fi
done

# ---- limits and cores ---------------------------------------------------------

hard=$(ulimit -Hn)
if [ "$hard" = unlimited ] || [ "$hard" -gt 65536 ]; then
    ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null
else
    ulimit -n "$hard" 2>/dev/null
fi
NOFILE=$(ulimit -n)
read -r port_lo port_hi < /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null \
    || { port_lo=32768; port_hi=60999; }
NEPHEMERAL=$((port_hi - port_lo + 1))
# every connection is one fd in the client and one in the server (~100 spare)
SCALE_N=$SCALE_WANT
SCALE_WHY=""
if [ $((NOFILE - 100)) -lt "$SCALE_N" ]; then
    SCALE_N=$(( (NOFILE - 100) / 100 * 100 ))
    SCALE_WHY="open-file limit: hard limit $hard"
fi
if [ $((NEPHEMERAL - 1000)) -lt "$SCALE_N" ]; then
    SCALE_N=$(( (NEPHEMERAL - 1000) / 100 * 100 ))
    SCALE_WHY="ephemeral ports: $port_lo-$port_hi"
fi
if [ "$IDLE_N" -gt $((NOFILE - 100)) ]; then
    IDLE_N=$(( (NOFILE - 100) / 100 * 100 ))
    say "echo: idle connections lowered to $IDLE_N (fd limit $NOFILE)"
fi
[ -n "$SCALE_WHY" ] && say "echo: scale: $SCALE_N connections, not $SCALE_WANT ($SCALE_WHY)"

NCPU=$(nproc)
CLIENT_CORE=0
SERVER_CORE=1
if [ "$NCPU" -lt 2 ]; then
    SERVER_CORE=0
    say "echo: one core only: the split-core rows share core 0"
fi

# ---- servers ------------------------------------------------------------------

SERVER_PID=
SERVER_PORT=
stop_server() {
    if [ -n "$SERVER_PID" ]; then
        kill "$SERVER_PID" 2>/dev/null
        wait "$SERVER_PID" 2>/dev/null
        SERVER_PID=
    fi
}
trap stop_server EXIT
trap 'stop_server; exit 130' INT TERM

start_server() {   # start_server <echo|sink> <core>
    local out=$OUT_DIR/server.out i
    : >"$out"
    taskset -c "$2" "$OUT_DIR/echo_server" "$1" "$NPORTS" >"$out" 2>>"$LOG" &
    SERVER_PID=$!
    for ((i = 0; i < 200; i++)); do
        SERVER_PORT=$(awk '/^port / { print $2 }' "$out")
        [ -n "$SERVER_PORT" ] && return 0
        sleep 0.01
    done
    say "echo: the echo server did not start"
    stop_server
    return 1
}

# ---- the measurements -----------------------------------------------------------
# key|server mode|server core|client command (PORTS is replaced by the
# server's port list)

client_cmd() {   # client_cmd <impl> <args...>
    local impl=$1
    shift
    case $impl in
    c) echo "$OUT_DIR/echo_client $*" ;;
    *) echo "$LUA $BENCH/echo_$impl.lua $*" ;;
    esac
}

IMPLS=(corosched c luv cqueues)
CONFIGS=()
add() {   # add <bench> <mode> <core> <client args>
    local impl
    for impl in "${IMPLS[@]}"; do
        CONFIGS+=("$1.$impl|$2|$3|$(client_cmd "$impl" "$4")")
    done
}
add rt_split_100 echo $SERVER_CORE "rt $HOST PORTS 100 $WARMUP $DURATION"
add rt_split_1000 echo $SERVER_CORE "rt $HOST PORTS 1000 $WARMUP $DURATION"
add rt_shared_100 echo $CLIENT_CORE "rt $HOST PORTS 100 $WARMUP $DURATION"
add rt_shared_1000 echo $CLIENT_CORE "rt $HOST PORTS 1000 $WARMUP $DURATION"
add idle sink $SERVER_CORE "idle $HOST PORTS $IDLE_N"
add scale echo $SERVER_CORE "rt $HOST PORTS $SCALE_N $WARMUP $DURATION"

RAW=$OUT_DIR/raw.txt
LOG=$OUT_DIR/log.txt
CMDS=$OUT_DIR/commands.txt
: >"$RAW"
: >"$LOG"
: >"$CMDS"
selected=()
for c in "${CONFIGS[@]}"; do
    key=${c%%|*}
    impl=${key#*.}
    if [ -n "$ONLY" ] && ! [[ $key =~ $ONLY ]]; then continue; fi
    if [ "${HAVE[$impl]}" = 0 ]; then
        echo "$key 0 SKIP" >>"$RAW"
        continue
    fi
    selected+=("$c")
    IFS='|' read -r _ mode core cmd <<<"$c"
    printf '%s\t%s\t%s\n' "$key" "taskset -c $CLIENT_CORE $cmd" \
        "server: taskset -c $core echo_server $mode $NPORTS" >>"$CMDS"
done

start=$(date +%s)
say "echo: ${#selected[@]} measurements x $RUNS runs (fd limit $NOFILE)"
for ((run = 1; run <= RUNS; run++)); do
    say "echo: run $run/$RUNS"
    # the four clients of a benchmark run in a rotated order each run
    n=${#selected[@]}
    for ((i = 0; i < n; i += 4)); do
        for ((j = 0; j < 4 && i + j < n; j++)); do
            c=${selected[i + (j + run - 1) % (n - i < 4 ? n - i : 4)]}
            IFS='|' read -r key mode core cmd <<<"$c"
            start_server "$mode" "$core" || { echo "$key $run FAIL server" >>"$RAW"; continue; }
            cmd=${cmd/PORTS/$SERVER_PORT}
            echo "## run $run $key: $cmd (server port $SERVER_PORT, core $core)" >>"$LOG"
            # shellcheck disable=SC2086
            out=$(timeout $TIMEOUT taskset -c $CLIENT_CORE $cmd 2>>"$LOG")
            rc=$?
            stop_server
            if [ $rc -eq 0 ] && [ -n "$out" ]; then
                echo "$key $run $out" >>"$RAW"
            else
                echo "$key $run FAIL rc=$rc" >>"$RAW"
                say "echo: $key failed (exit $rc); see $LOG"
            fi
        done
    done
done
elapsed=$(( $(date +%s) - start ))

# ---- report -------------------------------------------------------------------

TABLE=$OUT_DIR/table.md
DETAIL=$OUT_DIR/detail.md
note=""
[ -n "$SCALE_WHY" ] && note=" (not 50,000: $SCALE_WHY)"
$LUA $BENCH/echo_report.lua "$RAW" "$TABLE" "$DETAIL" "$IDLE_N" "$SCALE_N" "$note" \
    || exit 1
echo
cat "$TABLE"
echo

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
mem=$(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
ver() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo '?'; }
rev=$(git rev-parse --short HEAD 2>/dev/null || echo 'no commit')
dirty=$(git status --porcelain -- csrc lua 2>/dev/null | head -1)
[ -n "$dirty" ] && rev="$rev + uncommitted changes in csrc/ lua/"
{
    echo "# corosched socket benchmarks"
    echo
    echo "Generated by \`bash bench/echo.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC')."
    echo "Medians of $RUNS runs, each measurement in fresh processes (a new echo"
    echo "server too), runs interleaved. Suite wall time: ${elapsed}s."
    echo
    echo "Machine: $(uname -srm), $cpu, nproc $NCPU, $mem; shared and noisy"
    echo "(a VM with other tenants): compare ratios from the same run, not absolute"
    echo "numbers across runs. Open-file limit: soft $NOFILE, hard $hard."
    echo "Software: Lua $($LUA -v 2>&1 | awk '{print $2}') (Debian lua5.4 $(ver lua5.4)), gcc $(gcc -dumpfullversion),"
    echo "libevent $(pkg-config --modversion libevent 2>/dev/null || echo '?'), lua-cqueues $(ver lua-cqueues), lua-luv $(ver lua-luv);"
    echo "corosched at $rev."
    echo
    cat "$TABLE"
    echo
    echo "## What each row measures"
    echo
    echo "- **1. echo round trips/s**: C (100 or 1,000) connections over loopback to"
    echo "  \`bench/echo_server.c\` (one thread, level-triggered epoll, writes back"
    echo "  what it reads), each looping request (64 bytes) -> response (64 bytes)."
    echo "  Once all are connected: ${WARMUP}s warm-up, then round trips are counted"
    echo "  for ${DURATION}s. Clients: **C**, \`bench/echo_client.c\`, libevent with plain"
    echo "  event callbacks (one persistent read event per connection, the next"
    echo "  request sent from the read callback); **corosched**, \`bench/echo_corosched.lua\`,"
    echo "  C light threads each with a cosocket looping \`send\` + \`receive(64)\`"
    echo "  (tcp-nodelay on, default timeouts); **luv**, \`bench/echo_luv.lua\`,"
    echo "  \`read_start\` callbacks that \`write\` the next request; **cqueues**,"
    echo "  \`bench/echo_cqueues.lua\`, \`cq:wrap\` coroutines with sockets in binary"
    echo "  unbuffered mode looping \`write\` + \`read(64)\`. Client on core $CLIENT_CORE, server"
    echo "  on core $SERVER_CORE (\`taskset\`); the shared-core rows put both on core $CLIENT_CORE, so"
    echo "  1/rate is the whole CPU cost of a round trip, client and server."
    echo "  Cells show rt/s, and for luv and cqueues their ratio to C. Goals:"
    echo "  corosched >= 0.95x C at C=100 and >= 0.9x at C=1000. When the C client"
    echo "  was less than 85% busy (its CPU time / wall time), the server core was the"
    echo "  bottleneck (other tenants on core $SERVER_CORE) and the verdict says \"unsure\": then"
    echo "  the client CPU rows are the better comparison."
    echo "- **1. (info) client CPU us per round trip**: the client process's CPU time"
    echo "  (user + system, including the kernel's loopback TCP work done on its"
    echo "  behalf) during the counted seconds, divided by the round trips; does not"
    echo "  depend on how fast the server answers."
    echo "- **1. (info) of which user space**: the part of that CPU time spent in"
    echo "  user space (getrusage's ru_utime in C, /proc/self/stat's utime, in"
    echo "  1/100 s ticks, in the Lua clients); the rest is the kernel's. The"
    echo "  kernel's part, the same system calls for every client, is most of a"
    echo "  round trip, so the ratio of round-trip rates moves with the difference"
    echo "  in user space (the last column, in us)."
    echo "- **2. RSS per idle connection**: $IDLE_N connections to the server in sink mode"
    echo "  (accepts, never reads); VmRSS after all are parked minus VmRSS before"
    echo "  the first connect (each after two full GCs), divided by $IDLE_N."
    echo "  corosched: a light thread per connection parked in \`receive(64)\`; luv:"
    echo "  \`read_start\` on each handle; cqueues: a coroutine per connection blocked in"
    echo "  \`read(64)\`; C: a persistent read event per connection. No client keeps"
    echo "  its own table of handles. Goal: corosched <= 1.6 KB (1,600 bytes)."
    echo "- **3. scale**: row 1 with $SCALE_N connections$note."
    echo "  Cells: rt/s and, in parentheses, the client's CPU time per round trip"
    echo "  relative to its own C=100 figure of row 1 in the same run. Goal:"
    echo "  corosched within 1.3x."
    echo "- Every client opens its connections with at most 1,000 connects in"
    echo "  flight, so the listen queue (somaxconn $(cat /proc/sys/net/core/somaxconn 2>/dev/null || echo '?')) never overflows."
    echo
    echo "## Commands"
    echo
    echo "Run from the repository root with"
    echo "\`LUA_CPATH='build/?.so;;' LUA_PATH='lua/?.lua;lua/?/init.lua;;'\` and"
    echo "\`ulimit -n $NOFILE\`; each line is one client process, run $RUNS times against a"
    echo "fresh server (\`PORTS\`: the comma-separated list of ports it prints on its"
    echo "first line; connection i goes to the (i mod $NPORTS)-th):"
    echo
    echo '```'
    awk -F'\t' '{ printf "%-26s %s\n%-26s   (%s)\n", $1, $2, "", $3 }' "$CMDS"
    echo '```'
    echo
    echo "Built with: \`gcc -O2 -Wall -Wextra -o $OUT_DIR/echo_server $BENCH/echo_server.c\`,"
    echo "\`gcc -O2 -Wall -Wextra -o $OUT_DIR/echo_client $BENCH/echo_client.c $EV_CFLAGS $EV_LIBS\`."
    echo
    echo "## Every measurement"
    echo
    cat "$DETAIL"
} >"$RESULTS"
say "echo: wrote $RESULTS (log: $LOG)"
