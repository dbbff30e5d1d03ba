#!/usr/bin/env bash
# corosched benchmark suite: runs every measurement BENCH_RUNS times (5 by
# default), each in a fresh process, interleaved, takes medians, prints one
# table and writes it to bench/RESULTS.md.
#
#   bash bench/run.sh            (or: make bench)
#
# Environment:
#   BENCH_RUNS=N     runs per measurement (default 5; medians of N)
#   BENCH_SCALE=F    multiplies the iteration counts of the timing loops (default 1)
#   BENCH_ONLY=RE    only the measurements whose key matches the extended regex RE
#   BENCH_NO_INSTALL=1  never call apt-get
#   BENCH_OUT=FILE   where to write the report (default bench/RESULTS.md)
#   BENCH_CLOCK=cpu  time with process CPU time instead of wall time: steadier
#                    when other processes compete for the 2 cores (the report
#                    warns when they did), blind to time spent blocked
#
# Installs what it needs when missing (apt-get, as root or through sudo):
# lua5.4, liblua5.4-dev, gcc, make, pkg-config, libevent-dev, lua-cqueues,
# lua-luv. Builds bench/build/c_resume and bench/build/benchclock.so, and
# corosched itself (make) when build/corosched/core.so is missing.
set -u
cd "$(dirname "$0")/.." || exit 1
BENCH=bench
OUT_DIR=$BENCH/build       # binaries (c_resume, benchclock.so)
WORK=$OUT_DIR/sched        # this suite's snapshot, raw samples, log
RUNS=${BENCH_RUNS:-5}
SCALE=${BENCH_SCALE:-1}
ONLY=${BENCH_ONLY:-}
RESULTS=${BENCH_OUT:-$BENCH/RESULTS.md}
LUA=lua5.4
TIMEOUT=120

say() { printf '%s\n' "$*" >&2; }

# ---- dependencies -----------------------------------------------------------

need_pkgs() {
    local missing=() p
    for p in lua5.4 liblua5.4-dev gcc make pkg-config libevent-dev lua-cqueues lua-luv; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' \
            || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    if [ -n "${BENCH_NO_INSTALL:-}" ]; then
        say "bench: missing packages: ${missing[*]} (BENCH_NO_INSTALL set)"
        return 1
    fi
    local sudo=
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null; then sudo=sudo; else
            say "bench: missing packages: ${missing[*]}, and not root"; return 1
        fi
    fi
    say "bench: installing ${missing[*]}"
    $sudo apt-get update -qq >&2 &&
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

if command -v dpkg-query >/dev/null; then
    need_pkgs || say "bench: continuing; some columns may fail"
fi

for m in cqueues luv; do
    $LUA -e "require '$m'" 2>/dev/null || say "bench: lua5.4 cannot load $m; its column will fail"
done

# ---- builds -----------------------------------------------------------------

mkdir -p "$OUT_DIR" "$WORK"
LUA_CFLAGS=$(pkg-config --cflags lua5.4)
LUA_LIBS=$(pkg-config --libs lua5.4)
build() {   # build <output> <source> <gcc args...>
    local out=$1 src=$2
    shift 2
    if [ ! -f "$out" ] || [ "$src" -nt "$out" ]; then
        gcc -O2 -Wall -Wextra -o "$out" "$src" "$@" || { say "bench: cannot build $out"; exit 1; }
    fi
}
# shellcheck disable=SC2086
build "$OUT_DIR/c_resume" $BENCH/c_resume.c $LUA_CFLAGS $LUA_LIBS
# shellcheck disable=SC2086
build "$OUT_DIR/benchclock.so" $BENCH/benchclock.c -shared -fPIC $LUA_CFLAGS

if [ ! -f build/corosched/core.so ] && [ -f Makefile ]; then
    say "bench: building corosched (make)"
    make >&2 || say "bench: make failed"
fi

# Measure a snapshot of the build, so that a rebuild while the suite runs
# cannot mix two builds (or catch a half-written core.so).
SNAP=$WORK/snap
snapshot() {
    rm -rf "$SNAP"
    mkdir -p "$SNAP/cpath"
    [ -d build/corosched ] && cp -r build/corosched "$SNAP/cpath/"
    [ -d lua ] && cp -r lua "$SNAP/lua"
}
export LUA_CPATH="$SNAP/cpath/?.so;;"
export LUA_PATH="$SNAP/lua/?.lua;$SNAP/lua/?/init.lua;;"
export BENCH_BUSY=1          # scripts append busy=<cpu/wall> to their line
CLOCK=${BENCH_CLOCK:-wall}   # wall (default) or cpu: what the timings measure
export BENCH_CLOCK=$CLOCK

HAVE_CS=0
for _ in 1 2 3; do   # a concurrent rebuild may be half-way through
    snapshot
    if cs_err=$($LUA -e 'require "corosched"' 2>&1); then
        HAVE_CS=1
        break
    fi
    [ -f build/corosched/core.so ] || break
    sleep 5
done
if [ $HAVE_CS = 0 ]; then
    say "bench: corosched does not load; its column is left empty:"
    say "$cs_err"
fi

# ---- the measurements -------------------------------------------------------
# key|command (from the repo root). Keys: <benchmark>.<impl>

n() { awk -v n="$1" -v s="$SCALE" 'BEGIN { printf "%d", n * s }'; }

CONFIGS=(
"switch1.corosched|$LUA $BENCH/switch.lua corosched 1 $(n 3000000)"
"switch1.stock|$LUA $BENCH/switch.lua stock 1 $(n 4000000)"
"switch1.cqueues|$LUA $BENCH/switch.lua cqueues 1 $(n 600000)"
"switch1.luv|$LUA $BENCH/switch.lua luv 1 $(n 800000)"
"switch1.c|$OUT_DIR/c_resume 1 $(n 6000000)"
"switch1k.corosched|$LUA $BENCH/switch.lua corosched 1000 $(n 3000000)"
"switch1k.stock|$LUA $BENCH/switch.lua stock 1000 $(n 4000000)"
"switch1k.cqueues|$LUA $BENCH/switch.lua cqueues 1000 $(n 600000)"
"switch1k.luv|$LUA $BENCH/switch.lua luv 1000 $(n 600000)"
"switch1k.c|$OUT_DIR/c_resume 1000 $(n 6000000)"
"usercoro.corosched|$LUA $BENCH/switch.lua cs_user 1 $(n 2000000)"
"plaincoro.corosched|$LUA $BENCH/switch.lua cs_plain 1 $(n 3000000)"
"spawn.corosched|$LUA $BENCH/spawn.lua corosched $(n 1000000)"
"spawn.stock|$LUA $BENCH/spawn.lua stock $(n 2000000)"
"spawn.cqueues|$LUA $BENCH/spawn.lua cqueues $(n 1000000)"
"spawn200k.corosched|$LUA $BENCH/spawn_many.lua corosched 200000"
"spawn200k.stock|$LUA $BENCH/spawn_many.lua stock 200000"
"spawn200k.cqueues|$LUA $BENCH/spawn_many.lua cqueues 200000"
"parked.corosched|$LUA $BENCH/parked.lua corosched 10000"
"parked.stock|$LUA $BENCH/parked.lua stock 10000"
"parked.cqueues|$LUA $BENCH/parked.lua cqueues 10000"
"parked.luv|$LUA $BENCH/parked.lua luv 10000"
)

RAW=$WORK/raw.txt
LOG=$WORK/log.txt
CMDS=$WORK/commands.txt
: >"$RAW"
: >"$LOG"
: >"$CMDS"
selected=()
for c in "${CONFIGS[@]}"; do
    key=${c%%|*}
    if [ -n "$ONLY" ] && ! [[ $key =~ $ONLY ]]; then continue; fi
    if [ $HAVE_CS = 0 ] && [[ $key == *.corosched ]]; then
        echo "$key 0 SKIP" >>"$RAW"
        continue
    fi
    selected+=("$c")
    printf '%s\t%s\n' "$key" "${c#*|}" >>"$CMDS"
done

start=$(date +%s)
say "bench: ${#selected[@]} measurements x $RUNS runs"
for ((run = 1; run <= RUNS; run++)); do
    say "bench: run $run/$RUNS"
    for c in "${selected[@]}"; do
        key=${c%%|*}
        cmd=${c#*|}
        echo "## run $run $key: $cmd" >>"$LOG"
        # shellcheck disable=SC2086
        out=$(timeout $TIMEOUT $cmd 2>>"$LOG")
        rc=$?
        if [ $rc -eq 0 ] && [ -n "$out" ]; then
            echo "$key $run $out" >>"$RAW"
        else
            echo "$key $run FAIL rc=$rc" >>"$RAW"
            say "bench: $key failed (exit $rc); see $LOG"
        fi
    done
done
elapsed=$(( $(date +%s) - start ))

# ---- report -----------------------------------------------------------------

TABLE=$WORK/table.md
DETAIL=$WORK/detail.md
$LUA $BENCH/report.lua "$RAW" "$TABLE" "$DETAIL" || exit 1
echo
cat "$TABLE"
echo

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
mem=$(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
ver() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo '?'; }
rev=$(git rev-parse --short HEAD 2>/dev/null || echo 'no commit')
dirty=$(git status --porcelain -- csrc lua 2>/dev/null | head -1)
[ -n "$dirty" ] && rev="$rev + uncommitted changes in csrc/ lua/"
[ -f "$SNAP/cpath/corosched/core.so" ] &&
    rev="$rev (core.so sha256 $(sha256sum "$SNAP/cpath/corosched/core.so" | cut -c1-12))"

{
    echo "# corosched benchmarks"
    echo
    echo "Generated by \`bash bench/run.sh\` (or \`make bench\`) on $(date -u '+%Y-%m-%d %H:%M UTC')."
    echo "Medians of $RUNS runs, each measurement in a fresh process, runs interleaved"
    echo "(run 1 of every measurement, then run 2, ...). Suite wall time: ${elapsed}s."
    echo
    echo "Machine: $(uname -srm), $cpu, $(nproc) cores, $mem; shared and noisy"
    echo "(a VM with other tenants): compare ratios from the same run, not absolute"
    echo "numbers across runs. No core pinning (see bench/README.md). Timings use"
    echo "$([ "$CLOCK" = cpu ] && echo 'process CPU time (BENCH_CLOCK=cpu)' || echo 'wall time (monotonic clock)')."
    echo "Software: Lua $($LUA -v 2>&1 | awk '{print $2}') (Debian lua5.4 $(ver lua5.4)), gcc $(gcc -dumpfullversion),"
    echo "libevent $(pkg-config --modversion libevent 2>/dev/null || echo '?'), lua-cqueues $(ver lua-cqueues), lua-luv $(ver lua-luv);"
    echo "corosched at $rev."
    echo
    cat "$TABLE"
    echo
    cat "$BENCH/notes.md"
    echo
    echo "## Commands"
    echo
    echo "Run from the repository root with"
    echo "\`LUA_CPATH='build/?.so;;' LUA_PATH='lua/?.lua;lua/?/init.lua;;'\` (run.sh points"
    echo "them at a copy of build/corosched and lua/ taken when it starts, bench/build/sched/snap/);"
    echo "each line is one process, run $RUNS times:"
    echo
    echo '```'
    awk -F'\t' '{ printf "%-20s %s\n", $1, $2 }' "$CMDS"
    echo '```'
    echo
    echo "C baseline built with: \`gcc -O2 -Wall -Wextra -o bench/build/c_resume bench/c_resume.c $LUA_CFLAGS $LUA_LIBS\`"
    echo
    cat "$DETAIL"
} >"$RESULTS"
say "bench: wrote $RESULTS (log: $LOG)"
