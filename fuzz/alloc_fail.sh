#!/usr/bin/env bash
# Allocation-failure run of corosched (see fuzz/alloc_fail.c):
#   bash fuzz/alloc_fail.sh            every N, both modes, then the same
#                                      under valgrind (about 2 min a mode)
# Environment: BUILD (build dir holding corosched/core.so, default build),
# STRIDE (default 1), VG_STRIDE (N step of the valgrind pass, default 1;
# 0 skips it). Exit status 0 when no crash, hang or leak was seen.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
STRIDE=${STRIDE:-1}
VG_STRIDE=${VG_STRIDE:-1}
CC=${CC:-cc}
[ -f "$BUILD/corosched/core.so" ] || make BUILD="$BUILD" all || exit 1
$CC -std=c99 -D_GNU_SOURCE -O1 -g -Wall -Wextra -Werror \
    -o "$BUILD/alloc_fail" fuzz/alloc_fail.c \
    $(pkg-config --cflags --libs lua5.4) || exit 1
status=0
for mode in persist once; do
    echo "== alloc_fail, mode $mode, stride $STRIDE"
    "$BUILD/alloc_fail" -m "$mode" -s "$STRIDE" fuzz/alloc_fail.lua \
        "$BUILD" || status=1
done
if [ "$VG_STRIDE" -gt 0 ] && command -v valgrind >/dev/null; then
    # The same runs under memcheck (each forked child is checked, and its
    # leaks reported when it exits): invalid accesses and C-heap leaks
    # (libevent, socket buffers) that the driver's own checks cannot see.
    for mode in persist once; do
        echo "== valgrind, mode $mode, stride $VG_STRIDE"
        log="$BUILD/alloc_fail.valgrind.$mode.log"
        valgrind -q --error-exitcode=3 --leak-check=full \
            --errors-for-leak-kinds=definite --show-leak-kinds=definite \
            "$BUILD/alloc_fail" -t 60 -m "$mode" -s "$VG_STRIDE" \
            fuzz/alloc_fail.lua "$BUILD" > "$log" 2>&1
        rc=$?
        grep -E '^(CRASH|LEAK|HANG|FAIL)|^alloc_fail: [0-9]' "$log"
        n=$(grep -cE '==[0-9]+== (Invalid|Conditional|Use of|Syscall)' "$log")
        l=$(grep -cE '==[0-9]+== .*definitely lost in' "$log")
        echo "valgrind: $n invalid accesses, $l definite leaks (see $log)"
        [ "$rc" -eq 0 ] || status=1
    done
fi
exit $status
