#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# scripts/test.sh [--sanitize] [CTEST_ARGS...]
#
# Build xprof as CI does and run the whole test suite: install missing
# build dependencies, configure build/ with -DXPROF_WERROR=ON and the
# failure-injection hooks of the tests (-DXPROF_TEST_HOOKS=ON, off in any
# other build), build, and run every ctest test (unit and integration)
# with --output-on-failure.
# The output ends with ctest's summary line ("N% tests passed, ..."), and
# the exit status is ctest's: non-zero if any test failed.  Arguments
# after the options go to ctest (e.g. -L unit, -R t9).
#
# --sanitize: the same in build-san/ with -DXPROF_SANITIZE=ON: xprof, the
# unit tests and the fuzz replays are built with ASan and UBSan
# (-fno-sanitize-recover=all), the target programs are not (they are the
# ones being traced, doc/design.md, Habits).  Every sanitizer finding, a leak
# included, aborts the process (abort_on_error), so a test sees xprof die
# of SIGABRT, which expect_exit never accepts, whatever exit code it
# wanted.  disable_coredump=0: ASan otherwise sets RLIMIT_CORE to 0, which
# the launched command would inherit (t9106 checks that a crashing command
# still dumps core under xprof).
set -euo pipefail
cd "$(dirname "$0")/.."

build=build
cmake_args=(-DXPROF_WERROR=ON -DXPROF_TEST_HOOKS=ON)
if [[ ${1:-} == --sanitize ]]; then
	shift
	build="build-san"
	cmake_args+=(-DXPROF_SANITIZE=ON)
	export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:disable_coredump=0:strict_string_checks=1:detect_stack_use_after_return=1}
	export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:abort_on_error=1}
	export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/lsan.supp:print_suppressions=0}
fi

scripts/deps.sh --test
cmake -S . -B "$build" "${cmake_args[@]}"
cmake --build "$build" -j "$(nproc)"

log=$build/ctest.log
status=0
(cd "$build" && ctest --output-on-failure --no-tests=error "$@") 2>&1 | tee "$log" || status=$?

# ctest prints its summary before the timing and the list of failures;
# repeat it so that it is the last line, where people and CI look.
summary=$(grep -E '^[0-9]+% tests passed' "$log" | tail -n 1 || true)
echo
echo "${summary:-ctest did not get to its summary (exit status $status)}"
exit "$status"
