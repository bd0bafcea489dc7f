#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# scripts/fuzz.sh [SECONDS] [TARGET...]
#
# Build the libFuzzer targets (tests/fuzz/fuzz_<target>.c) with clang in
# build-fuzz/ (-DXPROF_FUZZ=ON: the engine is instrumented too, with ASan
# and UBSan) and run each for SECONDS (default 60, doc/design.md, Habits), one
# after the other; TARGETs (datafile, procmaps, opts, ...) limit the run.
#
# Each target starts from its seeds (tests/data/fuzz/<target>/, its crash
# regressions in tests/data/regress/<target>/, and the older seeds below)
# plus what earlier runs found, kept in build-fuzz/corpus/<target>/.  An
# input that crashes a target, breaks one of its invariants, leaks, runs
# longer than 10 s or needs more than 2 GiB is saved in
# build-fuzz/artifacts/<target>/; once the bug is fixed, copy it to
# tests/data/regress/<target>/ so ctest replays it (unit/replay_<target>).
#
# Ends with one line per target: executions, execs/s, corpus size and
# "ok" or the crashing input.  Exit status 1 if any target failed, 2 if
# clang or its libFuzzer runtime is missing (Debian: clang, libclang-rt-14-dev).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
if ! [[ $seconds =~ ^[1-9][0-9]*$ ]]; then
	echo "usage: scripts/fuzz.sh [SECONDS] [TARGET...]" >&2
	exit 2
fi
shift || true

# Older seed files, kept where the unit tests use them (the same list as
# XP_FUZZ_SEEDS_<target> in tests/CMakeLists.txt).
declare -A extra_seeds=(
	[datafile]="tests/data/canned.xprof tests/data/canned-aarch64.xprof tests/data/canned-riscv64.xprof"
	[procmaps]="tests/data/procmaps"
)

cc=${CLANG:-clang}
if ! command -v "$cc" >/dev/null 2>&1; then
	echo "fuzz.sh: '$cc' not found: install clang and libclang-rt-14-dev (scripts/deps.sh --fuzz)" >&2
	exit 2
fi
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
	'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);' \
	'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }' \
	>"$probe/p.c"
if ! "$cc" -fsanitize=fuzzer,address,undefined -o "$probe/p" "$probe/p.c" 2>"$probe/err"; then
	echo "fuzz.sh: '$cc' cannot build a libFuzzer target:" >&2
	sed 's/^/  /' "$probe/err" >&2
	echo "fuzz.sh: install libclang-rt-14-dev (scripts/deps.sh --fuzz)" >&2
	exit 2
fi

cmake -S . -B build-fuzz -DXPROF_FUZZ=ON -DCMAKE_C_COMPILER="$cc" >/dev/null
targets=("$@")
if ((${#targets[@]} == 0)); then
	for f in tests/fuzz/fuzz_*.c; do
		t=${f##*/fuzz_}
		targets+=("${t%.c}")
	done
fi
cmake --build build-fuzz -j "$(nproc)" --target "${targets[@]/#/fuzz_}"

summary=()
failed=0
for t in "${targets[@]}"; do
	bin=build-fuzz/tests/fuzz_$t
	corpus=build-fuzz/corpus/$t
	art=build-fuzz/artifacts/$t
	log=build-fuzz/fuzz-$t.log
	mkdir -p "$corpus" "$art"
	# Seeds are copied in (libFuzzer adds what it finds to its first
	# directory only, and must never write into the source tree).
	for s in "tests/data/fuzz/$t" "tests/data/regress/$t" ${extra_seeds[$t]:-}; do
		if [[ -d $s ]]; then
			find "$s" -maxdepth 1 -type f ! -name 'README*' -exec cp -t "$corpus" {} +
		elif [[ -f $s ]]; then
			cp -t "$corpus" "$s"
		fi
	done
	echo "fuzz.sh: $t for ${seconds}s (log: $log)"
	status=0
	# detect_leaks: a leak on a parser's error path is a bug like any other.
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
		"$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$art/" "$corpus" >"$log" 2>&1 || status=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
	units=$(find "$corpus" -type f | wc -l)
	if ((status == 0)); then
		result=ok
	else
		failed=1
		crash=$(sed -n 's/.*Test unit written to //p' "$log" | tail -n 1)
		result="FAILED (status $status): ${crash:-see $log}"
		grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error)' "$log" | head -n 5 | sed 's/^/  /' || true
	fi
	summary+=("$(printf '%-10s %4ss %10s execs %8s/s %6s corpus  %s' "$t" "$seconds" \
		"${execs:-?}" "${rate:-?}" "$units" "$result")")
done

echo
printf '%s\n' "${summary[@]}"
exit "$failed"
