#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Overhead of xprof next to perf, on one CPU-bound target (not a ctest test):
#
#   bare         split -r ROUNDS                       (fixed work)
#   xprof        xprof record -F 999 -- split ...
#   perf-fp      perf record -F 999 -g -- split ...    (frame pointers)
#   perf-dwarf   perf record -F 999 --call-graph dwarf -- split ...
#
# Each repetition runs the four in turn (the starting one rotates, so no
# configuration always runs first).  The time that counts is the wall time
# of split's work as split itself measures it (XP_TARGET_VERBOSE), so a
# profiler's own start-up and wind-down (perf reads every DSO for build-ids
# after the run) do not count as slowing the target; the whole command's
# wall time is shown too ("total").  A profiled run's slowdown is its work
# time over the same repetition's bare run.  The table gives medians over
# the repetitions of: work time, slowdown, total time, achieved sample rate
# (samples / work time, against the rate asked for) and bytes of data file
# per sample.  The work is a fixed number of split rounds, not a CPU-time
# budget: time the target loses to the profiler must show up as wall time.  Run it on an otherwise idle machine: when the target gets
# less than a whole CPU, slowdowns grow and the rate per wall second drops
# for every profiler alike.  PTRACE-NOTES.md says what to expect here.
#
# Usage: bench/compare.sh [BUILD_DIR]     (default: build)
# Environment: BENCH_REPS (5), BENCH_SECONDS (bare run length, 3),
#   BENCH_FREQ (999), PERF_EVENT (cpu-clock: a timer, like xprof's),
#   BENCH_OUT (bench-out).
# As root, kernel.perf_event_paranoid is set to -1 for the run and restored.
# A configuration that fails (xprof record not implemented yet, perf not
# allowed) is shown as n/a with the reason; the others still run.
set -euo pipefail
cd "$(dirname "$0")/.."

build=${1:-build}
reps=${BENCH_REPS:-5}
seconds=${BENCH_SECONDS:-3}
freq=${BENCH_FREQ:-999}
event=${PERF_EVENT:-cpu-clock}
out=${BENCH_OUT:-bench-out}
xprof=$build/xprof
split=$build/targets/split
configs=(bare xprof perf-fp perf-dwarf)

[[ -x $split ]] || {
	echo "compare.sh: $split not found: build first (cmake --build $build)" >&2
	exit 1
}
mkdir -p "$out"

paranoid_file=/proc/sys/kernel/perf_event_paranoid
saved_paranoid=""
restore() {
	if [[ -n $saved_paranoid ]]; then
		echo "$saved_paranoid" >"$paranoid_file" || true
	fi
}
trap restore EXIT
if [[ -w $paranoid_file ]] && (($(cat "$paranoid_file") > -1)); then
	saved_paranoid=$(cat "$paranoid_file")
	echo -1 >"$paranoid_file"
	echo "# kernel.perf_event_paranoid: $saved_paranoid -> -1 for this run"
fi

now() {
	printf '%s\n' "${EPOCHREALTIME/,/.}"
}

# Calibrate the number of rounds so that a bare run takes about $seconds.
t0=$(now)
"$split" -r 20000 >/dev/null
t1=$(now)
rounds=$(awk -v t="$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" -v s="$seconds" \
	'BEGIN { r = int(20000 * s / t); print (r < 1000 ? 1000 : r) }')
echo "# split -r $rounds (about ${seconds}s bare), $reps repetitions, $freq Hz, perf event $event"
"$split" -r 10 >"$out/expected.out"

# run_config CONFIG REP: run it, append "rep work total samples bytes" to $out/CONFIG.runs,
# or record why it failed in $out/CONFIG.failed.
run_config() {
	local config=$1 rep=$2 data="$out/$1.data" cmd t0 t1 wall total samples=0 bytes=0 status=0
	case $config in
	bare) cmd=("$split" -r "$rounds") ;;
	xprof) cmd=("$xprof" record -q -F "$freq" -o "$data" -- "$split" -r "$rounds") ;;
	perf-fp) cmd=(perf record -q -e "$event" -F "$freq" -g -o "$data" -- "$split" -r "$rounds") ;;
	perf-dwarf)
		cmd=(perf record -q -e "$event" -F "$freq" --call-graph dwarf -o "$data" --
			"$split" -r "$rounds")
		;;
	esac
	[[ -e $out/$config.failed ]] && return 0
	rm -f "$data"
	t0=$(now)
	XP_TARGET_VERBOSE=1 "${cmd[@]}" >"$out/$config.out" 2>"$out/$config.err" || status=$?
	t1=$(now)
	if ((status)) || ! cmp -s "$out/expected.out" "$out/$config.out"; then
		echo "exit $status: $(head -n 1 "$out/$config.err")" >"$out/$config.failed"
		return 0
	fi
	total=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')
	wall=$(awk '/^split: [0-9]+ rounds in [0-9.]+ s wall/ { print $5 }' "$out/$config.err")
	if [[ -z $wall ]]; then
		echo "no timing line from split on stderr" >"$out/$config.failed"
		return 0
	fi
	case $config in
	xprof)
		if ! "$xprof" report -i "$data" --folded -o "$out/xprof.folded" 2>"$out/xprof.report.err"; then
			echo "report failed: $(head -n 1 "$out/xprof.report.err")" >"$out/$config.failed"
			return 0
		fi
		samples=$(awk '{ n += $NF } END { print n + 0 }' "$out/xprof.folded")
		;;
	perf-*)
		perf report -i "$data" --stats >"$out/$config.stats" 2>/dev/null || true
		samples=$(awk '/SAMPLE events:/ { print $3; exit }' "$out/$config.stats")
		;;
	esac
	[[ $config == bare ]] || bytes=$(stat -c %s "$data")
	echo "$rep $wall $total ${samples:-0} $bytes" >>"$out/$config.runs"
	printf '  rep %d %-10s work %7.3fs total %7.3fs %6d samples\n' "$rep" "$config" "$wall" \
		"$total" "${samples:-0}"
}

for c in "${configs[@]}"; do
	rm -f "$out/$c.runs" "$out/$c.failed"
done
[[ -x $xprof ]] || echo "$xprof not built" >"$out/xprof.failed"
command -v perf >/dev/null || {
	echo "perf not installed" >"$out/perf-fp.failed"
	cp "$out/perf-fp.failed" "$out/perf-dwarf.failed"
}

for ((rep = 1; rep <= reps; rep++)); do
	for ((k = 0; k < ${#configs[@]}; k++)); do
		run_config "${configs[(rep + k) % ${#configs[@]}]}" "$rep"
	done
done

# The table: medians over repetitions, slowdown against the same rep's bare.
echo
printf '%-11s %9s %9s %10s %16s %13s\n' config "work (s)" slowdown "total (s)" "samples/s" \
	"bytes/sample"
for c in "${configs[@]}"; do
	if [[ -e $out/$c.failed ]]; then
		printf '%-11s n/a: %s\n' "$c" "$(cat "$out/$c.failed")"
		continue
	fi
	runs=()
	[[ $c == bare ]] || runs=("$out/$c.runs")
	awk -v c="$c" -v freq="$freq" '
		function median(a, n,    i, j, t) {
			for (i = 2; i <= n; i++)
				for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
					t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
				}
			return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
		}
		FNR == NR { bare[$1] = $2; if (c != "bare") next }
		{ n++; wall[n] = $2; total[n] = $3
		  if (bare[$1] > 0) { m++; ratio[m] = $2 / bare[$1] }
		  rate[n] = $4 / $2; per[n] = $4 > 0 ? $5 / $4 : 0 }
		END {
			if (c == "bare") {
				printf "%-11s %9.3f %9s %10.3f %16s %13s\n", c, median(wall, n), "1",
					median(total, n), "-", "-"
				exit
			}
			printf "%-11s %9.3f %9.3f %10.3f %9.1f of %-4d %13.0f\n", c, median(wall, n),
				m ? median(ratio, m) : 0, median(total, n), median(rate, n), freq,
				median(per, n)
		}' "$out/bare.runs" "${runs[@]}"
done
