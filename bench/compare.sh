#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Overhead of xprof next to perf on one CPU-bound target at one rate (not a
# ctest test): split, bare and under xprof record, perf record -g and perf
# record --call-graph dwarf, rotated, medians over repetitions.  This was
# the first overhead comparison; it is now one configuration of the
# benchmark suite, bench/run.sh, which says how everything is measured.
#
# Usage: bench/compare.sh [BUILD_DIR]     (default: build)
# Environment: BENCH_REPS (5), BENCH_SECONDS (bare run length, 3),
#   BENCH_FREQ (999), PERF_EVENT (cpu-clock), BENCH_OUT (bench-out).
set -euo pipefail
cd "$(dirname "$0")/.."

reps=${BENCH_REPS:-5}
BENCH_REPS=$reps BENCH_REPS_9999=$reps BENCH_FREQS=${BENCH_FREQ:-999} BENCH_TARGETS=split \
	BENCH_TOOLS="xprof perf-fp perf-dwarf" BENCH_SECONDS=${BENCH_SECONDS:-3} BENCH_MICRO=0 \
	BENCH_QUICK=0 exec bench/run.sh "$@"
