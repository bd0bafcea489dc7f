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
#
# With PHASE_TARGET=threadsN (N busy threads, more than the CPUs: the
# controller moves to each due thread's CPU, and the threads wait for
# each other, so a thread's time off its CPU is no loss), it prints
# instead who held CPU 0 while xprof sampled, per stop on that CPU (the
# guest's first CPU, whose switches are all traced): the target's
# threads (% of the time), xprof's threads (controller and triggers),
# the idle task and other tasks (µs per stop), and the switches per stop
# of the target's threads off CPU 0 (preempted / into a stop) and of
# xprof's onto it.  The µs that are not the target's, per stop, are what
# the target lost there, beside bench/run.sh's "lost".
#
# Usage: bench/phases.sh [BUILD_DIR]     (default: build; as root)
# Environment: PHASE_FREQS ["999 3999"], PHASE_USER [nobody],
#   PHASE_ROUNDS [30000] (split's rounds: ~1 s here), PHASE_XPROF_OPTS [""],
#   PHASE_TARGET [split] (or threadsN), PHASE_SECONDS [1] (threadsN: CPU
#   seconds per thread).
set -euo pipefail
cd "$(dirname "$0")/.."

build=${1:-build}
read -ra freqs <<<"${PHASE_FREQS:-999 3999}"
read -ra xopts <<<"${PHASE_XPROF_OPTS:-}"
user=${PHASE_USER:-nobody}
rounds=${PHASE_ROUNDS:-30000}
target=${PHASE_TARGET:-split}
xprof=$PWD/$build/xprof
split=$PWD/$build/targets/split
threads=$PWD/$build/targets/threads

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
cp "$xprof" "$split" "$threads" "$dir/" # where $user can run them
case $target in
split) cmd=("$dir/split" -r "$rounds") ;;
threads[0-9]*) cmd=("$dir/threads" "${target#threads}" "${PHASE_SECONDS:-1}") ;;
*) die "unknown target '$target' in PHASE_TARGET (split, threadsN)" ;;
esac

# field(NAME): the value of NAME=... on a perf script line, for both awk programs below.
# shellcheck disable=SC2016 # awk's own $i
awk_field='
	function field(name,   i) {
		for (i = 4; i <= NF; i++)
			if (index($i, name "=") == 1)
				return substr($i, length(name) + 2)
		return ""
	}'

# phases TXT TID: the table row's figures from perf script's lines.
phases() {
	awk -v tid="$2" "$awk_field"'
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

# occupancy TXT: who held CPU 0 (threadsN), the table row's figures.
occupancy() {
	awk "$awk_field"'
	function kind(comm) {
		return comm == "threads" ? "target" : comm == "xprof" ? "xprof" : comm ~ /^swapper/ ? "idle" : "other"
	}
	$1 != "[000]" || $3 != "sched:sched_switch:" { next }
	{
		t = substr($2, 1, length($2) - 1) * 1e6
		prev = kind(field("prev_comm")); next_ = kind(field("next_comm"))
		if (last) held[prev] += t - last
		last = t
		if (prev == "target") {
			st = field("prev_state")
			if (st ~ /^R/) npre++
			else if (st == "t") nstop++
		}
		if (next_ == "xprof") nx++
	}
	END {
		if (!nstop) { print "- - - - - - - -"; exit }
		all = held["target"] + held["xprof"] + held["idle"] + held["other"]
		printf "%d %.1f%% %.1f %.1f %.1f %.2f %.2f\n", nstop, 100 * held["target"] / all,
			held["xprof"] / nstop, held["idle"] / nstop, held["other"] / nstop,
			npre / nstop, nx / nstop
	}' "$1"
}

if [[ $target == split ]]; then
	echo "| as | Hz | stops | preempted | entering | stopped | waking (stops seen) | off its CPU | moved |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
else
	echo "| as | Hz | stops on CPU 0 | target | xprof µs | idle µs | other µs | target preempted | xprof switched in |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
fi
for f in "${freqs[@]}"; do
	for as in root "$user"; do
		pre=()
		[[ $as == root ]] || pre=(setpriv --reuid="$as" --regid="$(id -g "$as")" --clear-groups
			env XPROF_CACHE_DIR=off)
		perf sched record -q -o "$dir/sched.data" -- "${pre[@]}" "$dir/xprof" record -q \
			"${xopts[@]}" -F "$f" -o "$dir/u/x.data" -- "${cmd[@]}" \
			>"$dir/out" 2>&1 || die "perf sched record failed: $(tail -n 3 "$dir/out")"
		perf script -i "$dir/sched.data" -F cpu,time,event,trace 2>/dev/null |
			grep -E 'sched_switch|sched_waking' >"$dir/sched.txt"
		if [[ $target != split ]]; then
			read -r n tp x i o np nx < <(occupancy "$dir/sched.txt")
			echo "| $as | $f | $n | $tp | $x | $i | $o | $np | $nx |"
			rm -f "$dir/u/x.data" "$dir/sched.data"
			continue
		fi
		tid=$(grep -m 1 -o 'prev_comm=split prev_pid=[0-9]*' "$dir/sched.txt" | sed 's/.*=//')
		[[ $tid ]] || die "no switch of split in the trace"
		read -r n p e s w nw all m < <(phases "$dir/sched.txt" "$tid")
		echo "| $as | $f | $n | $p | $e | $s | $w ($nw) | $all | $m |"
		rm -f "$dir/u/x.data" "$dir/sched.data"
	done
done
if [[ $target == split ]]; then
	echo "(mean microseconds per stop of split's thread; xprof ${PHASE_XPROF_OPTS:-with its defaults})"
else
	echo "(CPU 0, per stop there of $target's threads: xprof's, the idle task's and other tasks' time," \
		"switches; xprof ${PHASE_XPROF_OPTS:-with its defaults})"
fi
