#!/bin/sh
# Records what real OpenResty's UDP cosockets return for the random cases
# of spec/support/udp_random_cases.lua (seeded, so the same each run),
# into spec/support/udp_random_recorded.txt; spec/73 runs the same cases
# on corosched and compares case by case. record_cosocket_random.sh does
# the work (nginx with lua-nginx-module, INSTALL=1 installs it, against
# script_peer.py).
#   sh spec/support/record_udp_random.sh [OUT]
# SEED=n COUNT=n record other cases (to look for divergences; spec/73
# replays the module's own M.SEED and M.COUNT).
here=$(cd "$(dirname "$0")" && pwd)
CASES=$here/udp_random_cases.lua RECORDER=record_udp_random.sh \
    exec sh "$here/record_cosocket_random.sh" \
    "${1:-$here/udp_random_recorded.txt}"
