#!/usr/bin/env bash
# Builds the fuzzers (clang++, libFuzzer + ASan + UBSan) in their own build directory and runs
# every one of them, one after the other, for a bounded time.
#
#   tests/fuzz/run_fuzzer.sh [SECONDS]     (default 60)
#
# SECONDS is the TOTAL fuzzing time, split evenly between the fuzzers run (at least 1 s each),
# so CI's `run_fuzzer.sh 60` fuzzes for about a minute in all (plus the build).
#
# Fuzzers (tests/fuzz/<name>_fuzzer.cpp, seeds in tests/fuzz/corpus/<name>/, dictionary
# tests/fuzz/<name>_fuzzer.dict): parse (layout text), mesh (meshes, placements, shards), scalar
# (byte sizes, dtypes, reduce ops), cost_model (cost-model files), tunables (AXE_* variables),
# cli (the calculator's argv), plan (planner + simulator on random requests), linear (linear
# layout text, Axe layouts through the F2 bridges).
#
# Exits non-zero when the build fails or any fuzzer finds a crash, a sanitizer report, an escaped
# non-axe exception, a timeout (-timeout, a hang), an allocation over -malloc_limit_mb or a broken
# law; every fuzzer still runs. Reproducers go to $AXE_FUZZ_BUILD_DIR/artifacts/<name>-...;
# replay one with: $AXE_FUZZ_BUILD_DIR/tests/fuzz/axe_<name>_fuzzer FILE
# Environment: AXE_FUZZ_BUILD_DIR (default build-fuzz), AXE_FUZZ_CXX (default clang++),
# AXE_FUZZ_TARGETS (default: all, e.g. "cli plan"), AXE_FUZZ_RUNS (a number of executions per
# fuzzer instead of the time split).
set -euo pipefail

seconds="${1:-60}"
case "$seconds" in
  '' | *[!0-9]*) echo "usage: $0 [SECONDS]" >&2; exit 2 ;;
esac
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${AXE_FUZZ_BUILD_DIR:-$root/build-fuzz}"
cxx="${AXE_FUZZ_CXX:-clang++}"
targets=(${AXE_FUZZ_TARGETS:-parse mesh scalar cost_model tunables cli plan linear})
runs="${AXE_FUZZ_RUNS:-}"
if ! command -v "$cxx" >/dev/null; then
  echo "run_fuzzer.sh: $cxx not found; the fuzzers need clang with libFuzzer" >&2
  exit 2
fi

# Host-only: the fuzzed surfaces need neither CUDA nor MPI (unused -D options are harmless).
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
CXX="$cxx" cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" \
  -DAXE_BUILD_FUZZERS=ON -DAXE_BUILD_TESTS=OFF -DAXE_BUILD_EXAMPLES=OFF -DAXE_WITH_CUDA=OFF \
  --no-warn-unused-cli >/dev/null
cmake --build "$build" -j"$(nproc)" --target $(printf 'axe_%s_fuzzer ' "${targets[@]}")

# halt_on_error: a recoverable report (see CMakeLists.txt) still stops the run unless suppressed.
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:suppressions=$root/tests/fuzz/ubsan_known.supp${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
per=$((seconds / ${#targets[@]}))
[ "$per" -ge 1 ] || per=1
mkdir -p "$build/artifacts" "$build/logs"
failed=()
summary=""
for t in "${targets[@]}"; do
  # The checked-in seeds stay read-only; new inputs go to a working corpus in the build directory.
  work="$build/corpus/$t"
  mkdir -p "$work"
  args=("$work" "$root/tests/fuzz/corpus/$t" -max_len=512 -timeout=10 -rss_limit_mb=2048
        -malloc_limit_mb=1024 -print_final_stats=1 -artifact_prefix="$build/artifacts/$t-")
  [ -f "$root/tests/fuzz/${t}_fuzzer.dict" ] && args+=(-dict="$root/tests/fuzz/${t}_fuzzer.dict")
  if [ -n "$runs" ]; then args+=(-runs="$runs"); else args+=(-max_total_time="$per"); fi
  echo "== axe_${t}_fuzzer ${runs:+-runs=$runs}${runs:--max_total_time=$per}"
  log="$build/logs/$t.log"
  rc=0
  "$build/tests/fuzz/axe_${t}_fuzzer" "${args[@]}" >"$log" 2>&1 || rc=$?
  grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|KNOWN)' "$log" | head -25 || true
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  summary+="$(printf '%-12s %12s executions  rc=%s' "$t" "${execs:-?}" "$rc")"$'\n'
  if [ "$rc" -ne 0 ]; then
    failed+=("$t")
    echo "axe_${t}_fuzzer FAILED (rc=$rc); the end of $log:" >&2
    tail -60 "$log" >&2
  fi
done
printf '\n%s' "$summary"
if [ ${#failed[@]} -gt 0 ]; then
  echo "run_fuzzer.sh: failed: ${failed[*]} (reproducers in $build/artifacts/)" >&2
  exit 1
fi
