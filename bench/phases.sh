#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Where a sampled thread's lost time goes, per sample, by phase (not a
# ctest test).  Records the scheduler's switches and wakes (perf sched
# record, all CPUs) while xprof samples split, at each rate of PHASE_FREQS,
# as root and as PHASE_USER, and prints, per stop of split's thread (one
# per sample), the mean microseconds it spent in each phase:
#   preempted  runnable off its CPU, from a preemption (the trigger's or the
#              controller's, that samples it; a scheduler's) to running again
#   entering   running from there into its stop (the interrupt's trap)
#   stopped    in the stop, until the controller's PTRACE_CONT wakes it
#   waking     from that wake to running again (a wake on another CPU
#              needs an interrupt there, and a halted virtual CPU a wake-up
#              through its host)
# and how many of those wakes were on another CPU than the stop's (moved).
# "waking" is the mean over the stops whose switch back in was traced: a
# guest here never traced its second CPU's switches from idle (perf and
# ftrace alike), so it counts the resumes on the first CPU only.
# bench/run.sh gives the slowdowns; this says which part of a sample costs
# what.  The tracing itself adds a little to every switch.  Made for the
# default way, from the threads' own CPUs: with --interrupt-from-any-cpu a
# thread is interrupted while it runs, which no switch shows.
#
# Usage: bench/phases.sh [BUILD_DIR]     (default: build; as root)
# Environment: PHASE_FREQS ["999 3999"], PHASE_USER [nobody],
#   PHASE_ROUNDS [30000] (split's rounds: ~1 s here), PHASE_XPROF_OPTS [""].
set -euo pipefail
cd "$(dirname "$0")/.."

build=${1:-build}
read -ra freqs <<<"${PHASE_FREQS:-999 3999}"
read -ra xopts <<<"${PHASE_XPROF_OPTS:-}"
user=${PHASE_USER:-nobody}
rounds=${PHASE_ROUNDS:-30000}
xprof=$PWD/$build/xprof
split=$PWD/$build/targets/split

die() {
	echo "phases.sh: $*" >&2
	exit 1
}
((EUID == 0)) || die "needs root (perf sched record of every CPU)"
command -v perf >/dev/null || die "needs perf (scripts/deps.sh --test installs it)"
command -v setpriv >/dev/null || die "needs setpriv (util-linux)"
[[ -x $xprof && -x $split ]] || die "build first: cmake --build $build"
id "$user" >/dev/null 2>&1 || die "no user '$user' (PHASE_USER)"

dir=$(mktemp -d /tmp/xprof-phases.XXXXXX)
trap 'rm -rf "$dir"' EXIT
chmod 755 "$dir"
mkdir -m 1777 "$dir/u"
cp "$xprof" "$split" "$dir/" # where $user can run them

# phases TXT TID: the table row's figures from perf script's lines.
phases() {
	awk -v tid="$2" '
	function field(name,   i) {
		for (i = 4; i <= NF; i++)
			if (index($i, name "=") == 1)
				return substr($i, length(name) + 2)
		return ""
	}
	{
		t = substr($2, 1, length($2) - 1) * 1e6
		cpu = substr($1, 2, length($1) - 2) + 0
	}
	$3 == "sched:sched_switch:" {
		if (field("prev_pid") == tid) {
			st = field("prev_state")
			out = t
			if (st ~ /^R/) { why = "R"; npre++ }
			else if (st == "t") { why = "t"; nstop++; stopcpu = cpu; if (after_pre) ent += t - in_at; after_pre = 0 }
			else why = "o"
		}
		if (field("next_pid") == tid && out) {
			if (why == "R") { pre += t - out; after_pre = 1; in_at = t }
			else if (why == "t" && woke) { wak += t - woke; nwak++; moved += cpu != stopcpu }
			out = 0; woke = 0
		}
		next
	}
	$3 == "sched:sched_waking:" && field("pid") == tid && out && why == "t" && !woke {
		woke = t; stp += t - out; nstp++
	}
	END {
		if (!nstop || !nstp || !nwak) { print "- - - - - - - -"; exit }
		printf "%d %.1f %.1f %.1f %.1f %d %.1f %.0f%%\n", nstop, pre / nstop, ent / nstop,
			stp / nstp, wak / nwak, nwak, pre / nstop + ent / nstop + stp / nstp + wak / nwak,
			100 * moved / nwak
	}' "$1"
}

echo "| as | Hz | stops | preempted | entering | stopped | waking (stops seen) | off its CPU | moved |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
for f in "${freqs[@]}"; do
	for as in root "$user"; do
		pre=()
		[[ $as == root ]] || pre=(setpriv --reuid="$as" --regid="$(id -g "$as")" --clear-groups
			env XPROF_CACHE_DIR=off)
		perf sched record -q -o "$dir/sched.data" -- "${pre[@]}" "$dir/xprof" record -q \
			"${xopts[@]}" -F "$f" -o "$dir/u/x.data" -- "$dir/split" -r "$rounds" \
			>"$dir/out" 2>&1 || die "perf sched record failed: $(tail -n 3 "$dir/out")"
		perf script -i "$dir/sched.data" -F cpu,time,event,trace 2>/dev/null |
			grep -E 'sched_switch|sched_waking' >"$dir/sched.txt"
		tid=$(grep -m 1 -o 'prev_comm=split prev_pid=[0-9]*' "$dir/sched.txt" | sed 's/.*=//')
		[[ $tid ]] || die "no switch of split in the trace"
		read -r n p e s w nw all m < <(phases "$dir/sched.txt" "$tid")
		echo "| $as | $f | $n | $p | $e | $s | $w ($nw) | $all | $m |"
		rm -f "$dir/u/x.data" "$dir/sched.data"
	done
done
echo "(mean microseconds per stop of split's thread; xprof ${PHASE_XPROF_OPTS:-with its defaults})"
