#!/usr/bin/env bash
# tests/sanitize/run.sh [BUILD_DIR]: the sanitizer stage of CI. Builds axe with
# -DAXE_SANITIZE=address,undefined (host only: no CUDA backend, no examples) in BUILD_DIR
# (default build-san) and runs under AddressSanitizer, LeakSanitizer and UBSan (a report fails the
# test) every host suite (core, cute, layout, linear, dist, plan, codegen, cli), then the runtime
# suite on 2 ranks, the start-up calibration on 2 ranks and the fault tests under mpirun. Only
# their targets are built, so the stage fits CI's time. Left out: the install-tree consumer, the
# runtime suite on 4 and 8 ranks (the same code as on 2 ranks, slower under ASan when
# oversubscribed on 2 cores), the examples, and the emulator tests of generated kernels
# (tests/codegen/emulated_*: the kernels they compile and run carry no sanitizer, and they take
# 20-25 s each; the test stage runs them). Open MPI's own leaks are suppressed by
# tests/sanitize/lsan.supp.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${1:-build-san}
jobs=$(nproc)
cmake -S . -B "$dir" -DAXE_SANITIZE=address,undefined -DAXE_WITH_CUDA=OFF -DAXE_BUILD_EXAMPLES=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g"
suites="axe_core_tests axe_cute_tests axe_layout_tests axe_linear_tests axe_dist_tests axe_plan_tests axe_codegen_tests axe_cli_tests"
cmake --build "$dir" -j"$jobs" --target $suites axe_cli axe_runtime_tests axe_calibrate_tests axe_runtime_early_exit axe_runtime_fault
# Huge allocations (the out-of-memory tests) must throw std::bad_alloc as without ASan.
asan="allocator_may_return_null=1:detect_leaks=1:abort_on_error=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# The host suites: fast (frame-pointer) unwinding, as they allocate in hot loops (full unwinding
# on every malloc made the layout property tests 150x slower than without ASan).
ASAN_OPTIONS="$asan" LSAN_OPTIONS="print_suppressions=0" \
  ctest --test-dir "$dir" --output-on-failure -j"$jobs" -L "^($(echo $suites | tr ' ' '|'))$" -E '^Emulated'
# The MPI programs: full unwinding, since Open MPI is built without frame pointers and its leaks
# are matched by the library names deep in their stacks (lsan.supp); its components stay loaded,
# so those names show.
export ASAN_OPTIONS="$asan:fast_unwind_on_malloc=0"
export LSAN_OPTIONS="suppressions=$PWD/tests/sanitize/lsan.supp:print_suppressions=0:fast_unwind_on_malloc=0"
export OMPI_MCA_mca_base_component_disable_dlclose=1
ctest --test-dir "$dir" --output-on-failure -j"$jobs" -R '^runtime_(mpi_np2|calibrate_np2|mpi_early_exit_fails_fast|mpi_fault_[a-z_]*)$'
