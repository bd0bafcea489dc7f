#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Build xprof as CI does and run the whole test suite: install missing
# build dependencies, configure build/ with -DXPROF_WERROR=ON, build, and
# run every ctest test (unit and integration) with --output-on-failure.
# The output ends with ctest's summary line ("N% tests passed, ..."), and
# the exit status is ctest's: non-zero if any test failed.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/deps.sh --test
cmake -S . -B build -DXPROF_WERROR=ON
cmake --build build -j "$(nproc)"

log=build/ctest.log
status=0
(cd build && ctest --output-on-failure --no-tests=error) 2>&1 | tee "$log" || status=$?

# ctest prints its summary before the timing and the list of failures;
# repeat it so that it is the last line, where people and CI look.
summary=$(grep -E '^[0-9]+% tests passed' "$log" | tail -n 1 || true)
echo
echo "${summary:-ctest did not get to its summary (exit status $status)}"
exit "$status"
