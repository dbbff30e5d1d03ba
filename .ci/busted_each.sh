#!/bin/sh
# Runs busted once per spec file, each in a fresh process, and ends with
# the sum of their closing lines: "busted: N passed, N failed, N skipped".
# Exits non-zero when a run fails or prints no closing line.
#   sh .ci/busted_each.sh 'BUSTED COMMAND' FILE_OR_DIR...
# (make check-gcstress: a collector that never pauses costs in proportion
# to the live heap, and one process running every spec keeps all of them
# loaded; a process per file costs a fifth of the CPU time.)
busted=$1
shift
passed=0 failed=0 skipped=0 status=0
out=$(mktemp)
for arg in "$@"; do
    if [ -d "$arg" ]; then
        files=$(ls "$arg"/*_spec.lua)
    else
        files=$arg
    fi
    for f in $files; do
        eval "$busted \"\$f\"" >"$out" 2>&1
        rc=$?
        cat "$out"
        line=$(grep -E '^busted: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' "$out" | tail -n 1)
        if [ -z "$line" ]; then
            echo "busted_each: $f: no closing line (exit status $rc)"
            failed=$((failed + 1))
            status=1
            continue
        fi
        set -- $line
        passed=$((passed + $2))
        failed=$((failed + $4))
        skipped=$((skipped + $6))
        [ "$rc" -ne 0 ] && status=1
    done
done
rm -f "$out"
echo "busted: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && exit "$status"
exit 1
