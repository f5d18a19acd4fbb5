#!/bin/sh
# expect_clean_error.sh PATTERN COMMAND...: passes when COMMAND exits non-zero, a line of its
# output matches PATTERN (grep basic regex) and nothing reached std::terminate or abort (no
# "terminate called", "what():", "Aborted", "core dumped", no MPI_ABORT banner): a bad argument or
# start-up value is one clear line per rank and an exit code, never a crash.
pattern=$1; shift
log=$(mktemp "${TMPDIR:-/tmp}/axe_clean_error.XXXXXX")
"$@" > "$log" 2>&1
rc=$?
cat "$log"
fail=""
if [ "$rc" -eq 0 ]; then fail="the command succeeded but was expected to fail"; fi
if ! grep -q -- "$pattern" "$log"; then fail="no line matches '$pattern'"; fi
if grep -q -e "terminate called" -e "what():" -e "Aborted" -e "core dumped" -e "MPI_ABORT" "$log"; then
  fail="the program aborted instead of reporting an error"
fi
rm -f "$log"
echo "exit status $rc"
if [ -n "$fail" ]; then echo "FAIL: $fail"; exit 1; fi
echo "PASS"
