#!/usr/bin/env bash
# Builds the parser fuzzer (clang++, libFuzzer + ASan + UBSan) in its own build directory and runs
# it for a bounded time.
#
#   tests/fuzz/run_fuzzer.sh [SECONDS]     (default 60)
#
# Exits non-zero when the build fails or the fuzzer finds a crash, a sanitizer report, an escaped
# exception or a round-trip mismatch; the reproducer is written to $AXE_FUZZ_BUILD_DIR/artifacts/.
# Replay one with: $AXE_FUZZ_BUILD_DIR/tests/fuzz/axe_parse_fuzzer FILE
# Environment: AXE_FUZZ_BUILD_DIR (default build-fuzz), AXE_FUZZ_CXX (default clang++).
set -euo pipefail

seconds="${1:-60}"
case "$seconds" in
  '' | *[!0-9]*) echo "usage: $0 [SECONDS]" >&2; exit 2 ;;
esac
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${AXE_FUZZ_BUILD_DIR:-$root/build-fuzz}"
cxx="${AXE_FUZZ_CXX:-clang++}"
if ! command -v "$cxx" >/dev/null; then
  echo "run_fuzzer.sh: $cxx not found; the fuzzer needs clang with libFuzzer" >&2
  exit 2
fi

# Host-only: the parsers need neither CUDA nor MPI (unused -D options are harmless).
CXX="$cxx" cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DAXE_BUILD_FUZZERS=ON -DAXE_BUILD_TESTS=OFF -DAXE_BUILD_EXAMPLES=OFF -DAXE_WITH_CUDA=OFF \
  --no-warn-unused-cli >/dev/null
cmake --build "$build" -j"$(nproc)" --target axe_parse_fuzzer

# The checked-in seeds stay read-only; new inputs go to a working corpus in the build directory.
work="$build/corpus"
mkdir -p "$work" "$build/artifacts"
exec "$build/tests/fuzz/axe_parse_fuzzer" "$work" "$root/tests/fuzz/corpus" \
  -dict="$root/tests/fuzz/parse_fuzzer.dict" -max_total_time="$seconds" -max_len=512 \
  -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$build/artifacts/"
