#!/bin/sh
# expect_fail_within.sh SECONDS PATTERN COMMAND...: passes when COMMAND exits non-zero within
# SECONDS and its output contains PATTERN (e.g. the timeout error), fails otherwise.
limit=$1; pattern=$2; shift 2
start=$(date +%s)
out=$("$@" 2>&1); rc=$?
elapsed=$(( $(date +%s) - start ))
printf '%s\n' "$out"
echo "exit status $rc after ${elapsed}s (limit ${limit}s)"
if [ "$rc" -eq 0 ]; then echo "FAIL: the job succeeded but was expected to fail"; exit 1; fi
if [ "$elapsed" -gt "$limit" ]; then echo "FAIL: took ${elapsed}s > ${limit}s"; exit 1; fi
if ! printf '%s' "$out" | grep -q -- "$pattern"; then echo "FAIL: output lacks '$pattern'"; exit 1; fi
echo "PASS"
