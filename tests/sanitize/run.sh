#!/usr/bin/env bash
# tests/sanitize/run.sh [BUILD_DIR]: the sanitizer stage of CI. Builds axe with
# -DAXE_SANITIZE=address,undefined (host only: no CUDA backend, no examples) in BUILD_DIR
# (default build-san) and runs under AddressSanitizer, LeakSanitizer and UBSan (a report fails the
# test): every host suite (core, cute, layout, dist, plan, cli), the install-tree consumer built
# with the same flags, the runtime suite on 2 ranks, the start-up calibration on 2 ranks and the
# fault tests under mpirun. Left out for CI's time limit: the runtime suite on 4 and 8 ranks (the
# same code as on 2 ranks, slower under ASan when oversubscribed on 2 cores) and the examples.
# Open MPI's own leaks are suppressed by tests/sanitize/lsan.supp.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${1:-build-san}
jobs=$(nproc)
cmake -S . -B "$dir" -DAXE_SANITIZE=address,undefined -DAXE_WITH_CUDA=OFF -DAXE_BUILD_EXAMPLES=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g"
cmake --build "$dir" -j"$jobs"
# Huge allocations (the out-of-memory tests) must throw std::bad_alloc as without ASan.
export ASAN_OPTIONS="allocator_may_return_null=1:detect_leaks=1:abort_on_error=0:fast_unwind_on_malloc=0"
# Full unwinding: Open MPI is built without frame pointers, and its leaks are matched by the
# library names deep in their stacks.
export LSAN_OPTIONS="suppressions=$PWD/tests/sanitize/lsan.supp:print_suppressions=0:fast_unwind_on_malloc=0"
# Open MPI's components stay loaded, so their leaks show their library names (lsan.supp).
export OMPI_MCA_mca_base_component_disable_dlclose=1
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
ctest --test-dir "$dir" --output-on-failure -j"$jobs" -E '^runtime_mpi_np[48]$'
