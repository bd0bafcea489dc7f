#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The benchmark suite (not a ctest test): xprof's overhead next to perf's,
# how fast it reports, and how fast it unwinds.  One command:
#
#   bench/run.sh [BUILD_DIR]            (default: build; BENCH_QUICK=1 for a smoke run)
#
# 1. Overhead.  Each CPU-bound target does a fixed amount of work (not a
#    CPU-time budget, so time the target loses to a profiler shows up as a
#    longer run), sized so that a bare run takes about BENCH_SECONDS on an
#    idle machine with 2 CPUs (sized from the target's CPU time, which the
#    machine's load does not change much):
#      split        split -r ROUNDS             one thread, frame pointers
#      split-nofp   split-nofp -r ROUNDS        one thread, -fomit-frame-pointer
#      threadsN     threads -r UNITS N          N threads (threads4, threads64;
#                                               threadsN-nofp works too)
#      threadsNiM   threads -i M -r UNITS N     the same beside M threads that
#                                               stay blocked (threads2i200)
#      python       BENCH_PYTHON bench/python.py -r ROUNDS  CPython (not in
#                                               the default set): recursion, a
#                                               dict loop, string formatting;
#                                               with xprof-nointerp, what
#                                               reading its frames costs
#    and runs, at each rate F in BENCH_FREQS:
#      bare         the target alone
#      xprof        xprof record -F F -- target
#      xprof-user   the same as BENCH_USER (when run as root; setpriv)
#      xprof-user-spin  the same with --spin-idle (not in the default set; it
#                   keeps the command's session, as xprof-user-shared)
#      xprof-user-shared  the same with --no-own-session (not in the default set)
#      xprof-any, xprof-user-any  xprof and xprof-user with
#                   --interrupt-from-any-cpu (not in the default set): beside
#                   xprof, what interrupting a thread off its own CPU (no
#                   skid into system calls) costs
#      xprof-base, xprof-user-base  xprof and xprof-user with the xprof of
#                   the build BENCH_BASE (not in the default set): two builds
#                   side by side in one interleaved run, the only fair way to
#                   compare them on a machine that drifts from run to run
#      xprof-nointerp  xprof with --no-interp (not in the default set):
#                   beside xprof on the python target, the stop without
#                   reading the interpreter's frames
#      floor, floor-user  build/tests/ptrace_floor -F F -- target, as root and
#                   as BENCH_USER (not in the default set): a sampler that
#                   does only what every ptrace sample must (interrupt, wait,
#                   registers, 2 KiB of stack, resume) from any CPU, no /proc
#                   reads, its threads' CPUs told by the target for free: what
#                   a ptrace sampler costs at the least (bench/ptrace_floor.c);
#                   on the process trees (floor only) build/tests/follow_floor
#                   -x -F: the same per process of the tree it follows,
#                   which process ran told by its CPU clock (bench/trees.sh)
#      floor-pin, floor-user-pin  the same with -p: it and the target pinned
#                   to one CPU, so that each interrupt finds the thread
#                   preempted (no skid), as xprof's do (split only)
#      floor-move, floor-user-move  the same with -m: it moves to each
#                   running thread's CPU to interrupt it there, preempted
#                   (no skid), as xprof does when every CPU is busy
#                   (threads targets only)
#      floor-read, floor-user-read  the same with -s: the threads that ran
#                   found by reading each thread's schedstat at every tick,
#                   as a profiler must when the target does not say
#      follow, follow-exit  forkserver only (not in the default set):
#                   build/tests/follow_floor -p (with -x: exit stops too,
#                   as xprof's CPU mode) attached to the postmaster, which
#                   only resumes each stop of the tree it follows: what any
#                   ptrace follower of the tree costs it, sampling aside
#                   (bench/follow_floor.c)
#      perf-fp      perf record -e EVENT -F F -g -- target
#      perf-dwarf   perf record -e EVENT -F F --call-graph dwarf -- target
#    A group is one (repetition, target, rate): bare plus every tool, in an
#    order that rotates from group to group so no configuration always runs
#    first.  Repetitions are the outer loop, so slow drifts of the machine's
#    load spread over all configurations alike.  The time that counts is
#    the wall time of the target's work as the target measures it itself
#    (XP_TARGET_VERBOSE), so a profiler's start-up and wind-down (perf reads
#    every DSO for build-ids after the run; xprof creates 64 traced threads)
#    do not count as slowing the target; the whole command's wall time is
#    kept too ("total").  Slowdown = a run's work time / the same group's
#    bare work time.  All figures in the table are medians over repetitions:
#      slowdown, work time (and the paired bare work time);
#      samples per CPU-second: samples / CPU seconds of the target's work
#        (CLOCK_PROCESS_CPUTIME_ID over the work, measured by the target), to
#        compare with the rate asked for: both xprof (CPU mode) and perf
#        (cpu-clock, per thread) ask for F samples per second *of CPU time*
#        of each thread, so on a busy machine the rate per wall second is
#        meaningless while this one still should reach F;
#        samples: xprof's summary line, perf report --stats (SAMPLE events);
#      xprof's stop time p50/p99 (ptrace stop to resume, per sample), from
#        its summary line on stderr;
#      report time: 'xprof report --folded' on the recorded file, and
#        'perf script' (the first step of perf's flame-graph pipeline, which
#        is where perf unwinds --call-graph dwarf) when BENCH_PERF_REPORT=1;
#      bytes per sample: the whole data file's size / samples.
# 1b. Process trees (BENCH_TARGETS build, forkserver, stormN, churn, or
#    "trees" for build forkserver storm4000 storm1500 churn; not in the
#    default set; bench/trees.sh says how each is measured):
#      build       a clean make -j2 of tmux 3.3a from Debian's source package
#                  (tmux 3.3a-3, fetched with apt-get source from a deb-src
#                  line and cached under ~/.cache/xprof/bench), beside perf
#                  record -g and --call-graph dwarf: slowdown, xprof's stops,
#                  the controller's CPU per process (first against last
#                  processes), the profile's CPU against the tree's
#      forkserver  PostgreSQL started in a temporary directory, pgbench -S -C
#                  (a new connection, so a new backend, per transaction);
#                  xprof attach / perf record -p on the postmaster: the
#                  transaction rate against bare, the server checked unharmed
#      storm4000   4,000 execs of /bin/true from a shell loop: the
#                  controller's CPU per process, first against last thousand
#      storm1500, churn  the profile's CPU against the tree's (1,500 execs;
#                  churn threads 2 8, short-lived threads)
#    at BENCH_TREE_FREQ Hz, BENCH_TREE_REPS interleaved repetitions.  They
#    need root and the packages of scripts/deps.sh --bench (linux-perf,
#    postgresql, dpkg-dev, tmux's build dependencies), which this script
#    installs first when they are missing (BENCH_DEPS=0: not).  Commands
#    (the tools beside bare; ~4, ~3 and ~3 minutes on an idle 2-CPU machine):
#      BENCH_TARGETS=build BENCH_TOOLS="xprof perf-fp perf-dwarf" BENCH_MICRO=0 bench/run.sh
#      BENCH_TARGETS=forkserver BENCH_TOOLS="xprof perf-fp perf-dwarf" BENCH_MICRO=0 bench/run.sh
#      BENCH_TARGETS="storm4000 storm1500 churn" BENCH_TOOLS="xprof perf-fp perf-dwarf" \
#        BENCH_MICRO=0 bench/run.sh
#    (BENCH_TARGETS=trees for all five in one run; BENCH_TREE_REPS=5 where
#    the machine is busy: a process tree's rate moves a lot with the load.)
# 2. Unwinding alone (build/tests/unwind_bench): unwinds/s of one snapshot
#    of a 64-deep recursive chain, in fp, auto and dwarf modes, warm (one
#    unwinder, caches hot) and cold (a new unwinder each time).
# 3. Report speed: build/tests/gen_profile writes a synthetic data file of
#    BENCH_REPORT_SAMPLES samples (20000 distinct stacks, 5000 distinct pcs
#    in ~9 real ELF files); 'xprof report --folded' is timed warm (page
#    cache hot, after one run) and cold (the data file and the ELF files
#    evicted from the page cache first with fadvise DONTNEED: files that a
#    running process maps, such as libc, stay resident, and the table says
#    how much was).  samples/s = samples / report wall time.
#
# Environment (defaults in brackets):
#   BENCH_REPS [5]        repetitions
#   BENCH_REPS_9999 [3]   repetitions at rates >= 9999 Hz (slowest runs, largest
#                         perf files); 0 skips them, BENCH_REPS keeps them all
#   BENCH_FREQS ["100 999 3999 9999"]
#   BENCH_TARGETS ["split split-nofp threads4 threads64"]; process trees:
#                         build forkserver stormN churn, "trees" for all
#   BENCH_TREE_REPS [3]   repetitions of the process trees (quick: 1)
#   BENCH_TREE_FREQ [999] their rate
#   BENCH_PG_SECONDS [10] forkserver: pgbench's duration (quick: 3)
#   BENCH_PG_CLIENTS [2]  forkserver: pgbench's clients
#   BENCH_DEPS [1]        run scripts/deps.sh --bench first, as root, when
#                         perf or a process tree is asked for
#   BENCH_TOOLS ["xprof xprof-user perf-fp perf-dwarf" as root, else without
#                         xprof-user]   (bare always runs)
#   BENCH_USER [nobody]   the ordinary user of the xprof-user rows (perf stays root)
#   BENCH_PYTHON [/usr/bin/python3, else python3]  the python target's interpreter
#   BENCH_XPROF_OPTS [""] more options for xprof record (e.g. --interrupt-from-any-cpu)
#   BENCH_BASE [""]       another build directory, for the tools xprof-base and
#                         xprof-user-base (its xprof; the targets are BUILD_DIR's)
#   BENCH_SECONDS [1]     bare run length on an idle 2-CPU machine
#   BENCH_OUT [bench-out] output directory (emptied of earlier results)
#   BENCH_PERF_REPORT [1] time 'perf script' on perf's files
#   BENCH_MICRO [1]       run parts 2 and 3 (0: overhead only)
#   BENCH_REPORT_SAMPLES [1000000]  samples in the synthetic file
#   BENCH_UNWIND_ITERS [200000]     unwinds per mode in part 2
#   PERF_EVENT [cpu-clock]  a timer, like xprof's; cycles needs a PMU
#   BENCH_QUICK=1         smoke run, < 1 minute: 1 repetition, 999 Hz only,
#                         0.5 s runs, fewer unwinds, reports timed once
# Output in BENCH_OUT: table.md (the Markdown tables, also printed),
# summary.tsv (medians), runs.tsv (every run), unwind.tsv, report.tsv,
# trees.tsv and trees-runs.tsv (process trees), trees.md,
# meta.txt (machine, load, settings), failures.txt, logs/ (stderr of the
# last run of each configuration).
# As root, kernel.perf_event_paranoid is set to -1 and
# kernel.perf_event_max_sample_rate raised to the highest rate for the run,
# and both restored.  A configuration that fails (perf not installed or not
# allowed) is shown as n/a with the reason in failures.txt; the rest run.
# Run it on an otherwise idle machine: when the target gets less than a
# whole CPU, slowdowns grow for every profiler alike.
set -euo pipefail
cd "$(dirname "$0")/.."

build=${1:-build}
quick=${BENCH_QUICK:-0}
if [[ $quick == 1 ]]; then
	reps=${BENCH_REPS:-1}
	freqs=${BENCH_FREQS:-999}
	seconds=${BENCH_SECONDS:-0.5}
	unwind_iters=${BENCH_UNWIND_ITERS:-20000}
	report_reps=1
else
	reps=${BENCH_REPS:-5}
	freqs=${BENCH_FREQS:-100 999 3999 9999}
	seconds=${BENCH_SECONDS:-1}
	unwind_iters=${BENCH_UNWIND_ITERS:-200000}
	report_reps=3
fi
reps_high=${BENCH_REPS_9999:-3}
((reps_high <= reps)) || reps_high=$reps
targets=${BENCH_TARGETS:-split split-nofp threads4 threads64}
if ((EUID == 0)); then
	tools=${BENCH_TOOLS:-xprof xprof-user perf-fp perf-dwarf}
else
	tools=${BENCH_TOOLS:-xprof perf-fp perf-dwarf}
fi
bench_user=${BENCH_USER:-nobody}
# /usr/bin/python3 first: a python3 found in PATH may be a shell script
# (pyenv's shims) that starts several processes before the interpreter.
python=${BENCH_PYTHON:-$([[ -x /usr/bin/python3 ]] && echo /usr/bin/python3 || echo python3)}
read -ra xprof_opts <<<"${BENCH_XPROF_OPTS:-}"
out=${BENCH_OUT:-bench-out}
perf_report=${BENCH_PERF_REPORT:-1}
micro=${BENCH_MICRO:-1}
report_samples=${BENCH_REPORT_SAMPLES:-1000000}
event=${PERF_EVENT:-cpu-clock}
xprof=$build/xprof
floor=$build/tests/ptrace_floor
follow=$build/tests/follow_floor
base_build=${BENCH_BASE:-}
tdir=$build/targets
ncpu=$(nproc)
read -ra freqs <<<"$freqs"
read -ra targets <<<"$targets"
read -ra tools <<<"$tools"
configs=(bare "${tools[@]}")
# The summaries' awk functions: median(LIST), the median of a list of
# numbers separated by spaces ("" for an empty one); add(KEY, NAME, V)
# appends V, unless it is "-" or empty, to vals[KEY, NAME].
bench_awk_lib='
	function median(list,    a, n, i, j, t) {
		n = split(list, a, " ")
		if (!n)
			return ""
		for (i = 2; i <= n; i++)
			for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
				t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
			}
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	function add(key, name, v) {
		if (v != "-" && v != "")
			vals[key, name] = vals[key, name] " " v
	}
'

# Process trees are part 1b (bench/trees.sh); the rest are CPU-bound targets.
# shellcheck source=bench/trees.sh
source bench/trees.sh
all_targets=("${targets[@]}")
targets=() tree_targets=()
for t in "${all_targets[@]}"; do
	if is_tree_target "$t"; then
		tree_targets+=("$t")
	else
		targets+=("$t")
	fi
done

die() {
	echo "run.sh: $*" >&2
	exit 1
}

for tool in "${tools[@]}"; do
	case $tool in
	*-base) [[ -n $base_build && -x $base_build/xprof ]] || die "$tool needs BENCH_BASE, a build directory with an xprof" ;;&
	floor*) [[ -x $floor ]] || die "$floor not found: build first (cmake --build $build)" ;;&
	floor | follow*) [[ -x $follow ]] || die "$follow not found: build first (cmake --build $build)" ;;&
	xprof | xprof-base | xprof-any | xprof-nointerp | perf-fp | perf-dwarf | floor | floor-pin | floor-move | floor-read | follow | follow-exit) ;;
	xprof-user | xprof-user-spin | xprof-user-shared | xprof-user-base | xprof-user-any | floor-user | floor-user-pin | floor-user-move | floor-user-read)
		((EUID == 0)) || die "xprof-user needs root (to run xprof as $bench_user)"
		id "$bench_user" >/dev/null 2>&1 || die "no user '$bench_user' (BENCH_USER)"
		command -v setpriv >/dev/null || die "xprof-user needs setpriv (util-linux)"
		;;
	*) die "unknown tool '$tool' in BENCH_TOOLS (xprof xprof-user xprof-user-spin xprof-user-shared xprof-base xprof-user-base xprof-any xprof-user-any xprof-nointerp perf-fp perf-dwarf floor floor-user floor-pin floor-user-pin floor-move floor-user-move floor-read floor-user-read follow follow-exit)" ;;
	esac
done
for f in "${freqs[@]}"; do
	[[ $f =~ ^[1-9][0-9]*$ ]] || die "bad rate '$f' in BENCH_FREQS"
done
[[ -x $xprof ]] || die "$xprof not found: build first (cmake --build $build)"
trees_expand "${tree_targets[@]}"
if [[ ${BENCH_DEPS:-1} == 1 && $EUID == 0 ]] &&
	{ ((${#tree_list[@]})) || [[ " ${tools[*]} " == *" perf-"* ]]; }; then
	scripts/deps.sh --bench >&2 || echo "run.sh: scripts/deps.sh --bench failed; what is missing is shown as n/a" >&2
fi
# The prefix of the -user tools' commands (validated above).
as_user=(setpriv --reuid="$bench_user" --regid="$(id -g "$bench_user" 2>/dev/null)" --clear-groups)

# The base program (split, threads), its variant suffix and thread count.
target_parts() {
	local t=$1
	variant="" base=$t nthreads=1 nidle=0
	if [[ $t == *-nofp ]]; then
		variant=-nofp base=${t%-nofp}
	fi
	case $base in
	split) ;;
	python)
		command -v "$python" >/dev/null || die "no '$python' (BENCH_PYTHON) for the python target"
		return 0
		;;
	threads[1-9]*)
		nthreads=${base#threads} base=threads
		if [[ $nthreads =~ ^([0-9]+)i([0-9]+)$ ]]; then
			nthreads=${BASH_REMATCH[1]} nidle=${BASH_REMATCH[2]}
			((nidle <= 1000)) || die "bad target '$t' (threadsNiM: M up to 1000)"
		fi
		if ! [[ $nthreads =~ ^[0-9]+$ ]] || ((nthreads > 64)); then
			die "bad target '$t' (threadsN: N from 1 to 64)"
		fi
		;;
	*) die "unknown target '$t' in BENCH_TARGETS (split, split-nofp, threadsN, threadsNiM, threadsN-nofp, python)" ;;
	esac
	[[ -x $tdir/$base$variant ]] || die "$tdir/$base$variant not found: build first"
}

# target_cmd TARGET AMOUNT: the command line in ${cmd[@]}.
target_cmd() {
	target_parts "$1"
	if [[ $base == split ]]; then
		cmd=("$tdir/split$variant" -r "$2")
	elif [[ $base == python ]]; then
		cmd=("$python" "$PWD/bench/python.py" -r "$2")
	else
		cmd=("$tdir/threads$variant" -i "$nidle" -r "$2" "$nthreads")
	fi
}

now() {
	printf '%s\n' "${EPOCHREALTIME/,/.}"
}

elapsed() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f", b - a }'
}

# The "... in W s wall, C s CPU" line a target prints with XP_TARGET_VERBOSE: "W C".
work_times() {
	sed -nE 's/^(split|threads|python): .* in ([0-9.]+) s wall, ([0-9.]+) s CPU$/\2 \3/p' "$1" | tail -n 1
}

mkdir -p "$out" "$out/logs"
rm -f "$out"/*.tsv "$out"/table.md "$out"/trees.md "$out"/failures.txt "$out"/meta.txt "$out"/logs/* \
	"$out"/*.data "$out"/*.folded

# --- system settings for perf, restored on exit ------------------------------
paranoid_file=/proc/sys/kernel/perf_event_paranoid
rate_file=/proc/sys/kernel/perf_event_max_sample_rate
saved_paranoid="" saved_rate=""
restore() {
	[[ -z $saved_paranoid ]] || echo "$saved_paranoid" >"$paranoid_file" || true
	[[ -z $saved_rate ]] || echo "$saved_rate" >"$rate_file" || true
	trees_cleanup
}
trap restore EXIT
max_freq=0
((${#tree_list[@]} == 0)) || max_freq=$tree_freq
for f in "${freqs[@]}"; do
	if ((f > max_freq)); then
		max_freq=$f
	fi
done
if [[ -w $paranoid_file ]] && (($(cat "$paranoid_file") > -1)); then
	saved_paranoid=$(cat "$paranoid_file")
	echo -1 >"$paranoid_file"
	echo "# kernel.perf_event_paranoid: $saved_paranoid -> -1 for this run"
fi
# The kernel lowers this by itself when perf's interrupts run long; perf
# record -F refuses a rate above it.
raise_rate() {
	local cur
	[[ -w $rate_file ]] || return 0
	cur=$(cat "$rate_file")
	((cur >= max_freq)) && return 0
	[[ -n $saved_rate ]] || saved_rate=$cur
	echo "$max_freq" >"$rate_file" || true
}
raise_rate

# --- meta ---------------------------------------------------------------------
{
	echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	echo "host: $(uname -srm), $ncpu CPUs, $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)"
	echo "xprof: $("$xprof" --version 2>&1 | head -n 1), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD 2>/dev/null || echo ' (dirty)')"
	[[ -z $base_build ]] || echo "base (xprof-base, xprof-user-base): $base_build/xprof, $("$base_build/xprof" --version 2>&1 | head -n 1), commit $(git -C "$base_build" rev-parse --short HEAD 2>/dev/null || echo '?')"
	echo "perf: $(perf --version 2>/dev/null || echo 'not installed'), event $event"
	echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "settings: reps $reps (rates >= 9999 Hz: $reps_high), rates ${freqs[*]}, targets ${targets[*]}, tools ${tools[*]}, bare run ${seconds}s, quick $quick"
	((${#tree_list[@]} == 0)) ||
		echo "process trees: ${tree_list[*]}, $tree_reps repetitions at $tree_freq Hz, make -j$tree_jobs, pgbench $pg_seconds s with $pg_clients clients"
} >"$out/meta.txt"
sed 's/^/# /' "$out/meta.txt"

# --- calibration --------------------------------------------------------------
# Seconds of CPU per round of split / per unit of threads: the least of 3
# probes (the machine's load can only make a probe slower).
declare -A amount expected
probe_cpu() {
	local best="" c i
	for ((i = 0; i < 3; i++)); do
		XP_TARGET_VERBOSE=1 "$@" >/dev/null 2>"$out/logs/probe.err" ||
			die "probe failed: $* ($(head -n 1 "$out/logs/probe.err"))"
		c=$(work_times "$out/logs/probe.err" | cut -d' ' -f2)
		[[ -n $c ]] || die "no timing line from $1 with XP_TARGET_VERBOSE set"
		if [[ -z $best ]] || awk -v a="$c" -v b="$best" 'BEGIN { exit !(a < b) }'; then
			best=$c
		fi
	done
	echo "$best"
}
for t in "${targets[@]}"; do
	target_parts "$t"
	if [[ $base == split || $base == python ]]; then
		target_cmd "$t" 2000
		c=$(probe_cpu "${cmd[@]}")
		amount[$t]=$(awk -v c="$c" -v s="$seconds" 'BEGIN { r = int(s / (c / 2000)); print r < 10 ? 10 : r }')
	else
		c=$(probe_cpu "$tdir/threads$variant" -r 20000 1)
		# Workers share min(N, CPUs) CPUs: N * units * unit = seconds * min(N, CPUs).
		amount[$t]=$(awk -v c="$c" -v s="$seconds" -v n="$nthreads" -v ncpu="$ncpu" \
			'BEGIN { p = n < ncpu ? n : ncpu; u = int(s * p / (n * c / 20000)); print u < 10 ? 10 : u }')
	fi
	target_cmd "$t" 10
	expected[$t]=$("${cmd[@]}")
	target_cmd "$t" "${amount[$t]}"
	echo "# $t: ${cmd[*]#"$tdir/"}"
done

# --- overhead runs ------------------------------------------------------------
declare -A failed
if ! command -v perf >/dev/null; then
	for tool in perf-fp perf-dwarf; do
		failed[$tool]="perf not installed"
	done
fi
printf 'rep\ttarget\tfreq\ttool\twork_s\tcpu_s\ttotal_s\tsamples\tlost\tbytes\tlate\tfailed\tstop_p50_us\tstop_p99_us\treport_s\theld_p50_us\theld_p99_us\tstop_us_per_sample\twait_us_per_sample\txprof_cpu_us_per_sample\n' \
	>"$out/runs.tsv"

fail() {
	local key=$1 why=$2
	failed[$key]=$why
	printf '%s\t%s\n' "$key" "$why" >>"$out/failures.txt"
	echo "  $key: failed: $why" >&2
}

# perf_stat "NAME events:" STATS: the count in the event's section of
# 'perf report --stats' output, else in the "Aggregated stats" section.
perf_stat() {
	awk -v name="$1" '
		/^Aggregated stats:/ { sec = 0; next }
		/ stats:$/ { sec = 1; next }
		index($0, " " name) { if (sec) { print $3; found = 1; exit } else if (agg == "") agg = $3 }
		END { if (!found && agg != "") print agg }' "$2"
}

# run_one REP TARGET FREQ TOOL: one run, one line in runs.tsv.
run_one() {
	local rep=$1 t=$2 f=$3 tool=$4 key="$2 $3 $4" data="$out/run.data" log t0 t1 total times
	local extra status=0 samples=0 lost=0 bytes=0 late="" nfail="" p50="" p99="" rtime="" summary
	local h50="" h99="" stop_us="" wait_us="" cpu_us="" x=$xprof
	[[ -z ${failed[$tool]:-} && -z ${failed[$key]:-} ]] || return 0
	[[ $tool != *-base ]] || x=$base_build/xprof
	if [[ $tool == follow* ]]; then
		fail "$key" "follows an attached process tree: forkserver only"
		return 0
	fi
	log="$out/logs/$t-$f-$tool"
	target_cmd "$t" "${amount[$t]}"
	case $tool in
	bare) ;;
	xprof*)
		extra=()
		[[ $tool != *-spin ]] || extra=(--spin-idle)
		[[ $tool != *-shared ]] || extra=(--no-own-session)
		[[ $tool != *-any ]] || extra=(--interrupt-from-any-cpu)
		[[ $tool != *-nointerp ]] || extra=(--no-interp)
		if [[ $tool == xprof-user* ]]; then
			# The user writes the data file; $out is root's.
			mkdir -p "$out/user" && chmod 1777 "$out/user"
			data=$out/user/run.data
		fi
		cmd=("$x" record "${xprof_opts[@]}" "${extra[@]}" -F "$f" -o "$data" -- "${cmd[@]}")
		[[ $tool != xprof-user* ]] || cmd=("${as_user[@]}" "${cmd[@]}")
		;;
	floor*)
		extra=()
		if [[ $tool == *-pin && $base != split ]]; then
			fail "$key" "pins the target to one CPU: one-thread targets only"
			return 0
		fi
		if [[ $tool == *-move && $base != threads ]]; then
			fail "$key" "needs the target to say where its threads run: threads targets only"
			return 0
		fi
		[[ $tool != *-pin ]] || extra=(-p)
		[[ $tool != *-move ]] || extra=(-m)
		[[ $tool != *-read ]] || extra=(-s)
		cmd=("$floor" "${extra[@]}" -F "$f" -- "${cmd[@]}")
		[[ $tool != floor-user* ]] || cmd=("${as_user[@]}" "${cmd[@]}")
		;;
	perf-fp) cmd=(perf record -q -e "$event" -F "$f" -g -o "$data" -- "${cmd[@]}") ;;
	perf-dwarf) cmd=(perf record -q -e "$event" -F "$f" --call-graph dwarf -o "$data" -- "${cmd[@]}") ;;
	esac
	rm -f "$data"
	[[ $tool != perf-* ]] || raise_rate
	t0=$(now)
	XP_TARGET_VERBOSE=1 "${cmd[@]}" >"$log.out" 2>"$log.err" || status=$?
	t1=$(now)
	if ((status)) || [[ $(cat "$log.out") != "${expected[$t]}" ]]; then
		fail "$key" "exit $status: $(grep -v '^\(split\|threads\|python\): \|^ptrace_floor: [0-9]* samples in ' "$log.err" | head -n 1)"
		return 0
	fi
	total=$(elapsed "$t0" "$t1")
	times=$(work_times "$log.err")
	[[ -n $times ]] || {
		fail "$key" "no timing line from the target on stderr"
		return 0
	}
	case $tool in
	xprof*)
		summary=$(grep '^xprof: [0-9]* samples in ' "$log.err" | tail -n 1)
		[[ -n $summary ]] || {
			fail "$key" "no summary line from xprof record"
			return 0
		}
		read -r samples late nfail p50 p99 < <(sed -nE 's/^xprof: ([0-9]+) samples in .*, ([0-9]+) late ticks\), ([0-9]+) failed, .*stop p50 ([0-9.]+) us, p99 ([0-9.]+) us.*/\1 \2 \3 \4 \5/p' <<<"$summary") || true
		[[ -n ${p99:-} ]] || {
			fail "$key" "cannot parse xprof's summary line: $summary"
			return 0
		}
		read -r h50 h99 < <(sed -nE 's/.*\(held ([0-9.]+) \/ ([0-9.]+) us\).*/\1 \2/p' <<<"$summary") ||
			true
		# Per sample: the target's threads' time in stops and waiting for a
		# CPU, and xprof's own CPU time.
		read -r stop_us wait_us cpu_us < <("$x" report -i "$data" --header-only 2>/dev/null |
			awk -v n="$samples" '/^# stat stop_ns_total :/ { s = $NF } /^# stat target_wait_ns :/ { w = $NF }
				/^# stat xprof_cpu_ns :/ { c = $NF }
				END { if (n > 0 && s != "") printf "%.1f %.1f %.1f\n", s / n / 1e3, w / n / 1e3, c / n / 1e3 }') ||
			true
		t0=$(now)
		if ! "$x" report -i "$data" --folded -o "$out/run.folded" 2>"$log.report.err"; then
			fail "$key" "report failed: $(head -n 1 "$log.report.err")"
			return 0
		fi
		t1=$(now)
		rtime=$(elapsed "$t0" "$t1")
		;;
	floor*)
		summary=$(grep '^ptrace_floor: [0-9]* samples in ' "$log.err" | tail -n 1)
		read -r samples late stop_us cpu_us < <(sed -nE 's/^ptrace_floor: ([0-9]+) samples in .* \(([0-9]+) late ticks\), stop mean ([0-9.]+) us, cpu ([0-9.]+) us per sample$/\1 \2 \3 \4/p' <<<"$summary") || true
		[[ -n ${stop_us:-} ]] || {
			fail "$key" "no summary line from ptrace_floor"
			return 0
		}
		nfail=0
		;;
	perf-*)
		perf report -i "$data" --stats >"$log.stats" 2>/dev/null || true
		# The event's own section counts lost samples; "Aggregated" counts
		# LOST_SAMPLES records.
		samples=$(perf_stat "SAMPLE events:" "$log.stats")
		lost=$(perf_stat "LOST_SAMPLES events:" "$log.stats")
		if [[ $perf_report == 1 ]]; then
			t0=$(now)
			perf script -i "$data" >/dev/null 2>"$log.report.err" || true
			t1=$(now)
			rtime=$(elapsed "$t0" "$t1")
		fi
		;;
	esac
	[[ $tool == bare || $tool == floor* ]] || bytes=$(stat -c %s "$data")
	rm -f "$data" "$out/run.folded"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
		"$rep" "$t" "$f" "$tool" "${times% *}" "${times#* }" "$total" "${samples:-0}" "${lost:-0}" \
		"$bytes" "${late:--}" "${nfail:--}" "${p50:--}" "${p99:--}" "${rtime:--}" "${h50:--}" \
		"${h99:--}" "${stop_us:--}" "${wait_us:--}" "${cpu_us:--}" >>"$out/runs.tsv"
	printf '  rep %d %-11s %5s Hz %-10s work %7.3fs total %7.3fs %7s samples\n' "$rep" "$t" "$f" \
		"$tool" "${times% *}" "$total" "$([[ $tool == bare ]] && echo - || echo "$samples")"
}

start=$(now)
group=0
for ((rep = 1; rep <= reps; rep++)); do
	for t in "${targets[@]}"; do
		for f in "${freqs[@]}"; do
			((f < 9999 || rep <= reps_high)) || continue
			for ((k = 0; k < ${#configs[@]}; k++)); do
				run_one "$rep" "$t" "$f" "${configs[(group + k) % ${#configs[@]}]}"
			done
			group=$((group + 1))
		done
	done
done
echo "# overhead runs took $(elapsed "$start" "$(now)") s"

# --- part 1b: process trees ------------------------------------------------------
if ((${#tree_list[@]})); then
	t0=$(now)
	trees_run
	echo "# process trees took $(elapsed "$t0" "$(now)") s"
fi

# --- part 2: unwinding alone ----------------------------------------------------
printf 'mode\tcache\tunwinds_per_s\tframes\tns_per_frame\n' >"$out/unwind.tsv"
if [[ $micro == 1 ]]; then
	if [[ -x $build/tests/unwind_bench ]] &&
		"$build/tests/unwind_bench" "$tdir/unwindme" "$unwind_iters" >"$out/logs/unwind.out" \
			2>"$out/logs/unwind.err"; then
		awk 'NF >= 5 && ($1 == "fp" || $1 == "auto" || $1 == "dwarf") {
			printf "%s\t%s\t%s\t%s\t%s\n", $1, $2, $3, $4, $5 }' "$out/logs/unwind.out" \
			>>"$out/unwind.tsv"
	else
		printf 'unwind\t%s\n' "unwind_bench failed or not built: $(head -n 1 "$out/logs/unwind.err" 2>/dev/null)" \
			>>"$out/failures.txt"
	fi
fi

# --- part 3: report speed ------------------------------------------------------
printf 'cache\tsamples\tbytes\tseconds\tsamples_per_s\tresident_kib\n' >"$out/report.tsv"
median() {
	sort -g | awk '{ a[NR] = $1 } END { print NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
# Time one 'xprof report --folded' of the synthetic file, in seconds.
time_report() {
	local t0 t1
	t0=$(now)
	"$xprof" report -i "$out/synthetic.data" --folded -o "$out/synthetic.folded" \
		2>"$out/logs/report.err" || return 1
	t1=$(now)
	elapsed "$t0" "$t1"
}
# Evict the synthetic file and the ELF files it names from the page cache
# (only pages no process maps can go), and say how many KiB stay resident.
evict() {
	local files=("$out/synthetic.data" "$gen") f
	mapfile -t -O 2 files < <(ldd "$gen" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }')
	sync "${files[@]}" 2>/dev/null || sync
	for f in "${files[@]}"; do
		dd if="$f" iflag=nocache count=0 status=none 2>/dev/null || true
	done
	fincore -bno RES "${files[@]}" 2>/dev/null | awk '{ s += $1 } END { printf "%d", s / 1024 }'
}
gen=$build/tests/gen_profile
if [[ $micro == 1 ]]; then
	if [[ -x $gen ]] && "$gen" -n "$report_samples" "$out/synthetic.data" >"$out/logs/gen.out" \
		2>"$out/logs/gen.err"; then
		bytes=$(stat -c %s "$out/synthetic.data")
		ok=1
		time_report >/dev/null || ok=0 # warm-up
		for cache in warm cold; do
			((ok)) || break
			: >"$out/logs/report.times"
			resident=""
			for ((i = 0; i < report_reps; i++)); do
				[[ $cache == warm ]] || resident=$(evict)
				time_report >>"$out/logs/report.times" || {
					ok=0
					break
				}
				echo >>"$out/logs/report.times"
			done
			((ok)) || break
			s=$(median <"$out/logs/report.times")
			printf '%s\t%s\t%s\t%s\t%.0f\t%s\n' "$cache" "$report_samples" "$bytes" "$s" \
				"$(awk -v n="$report_samples" -v s="$s" 'BEGIN { print n / s }')" "${resident:--}" \
				>>"$out/report.tsv"
		done
		((ok)) || printf 'report\t%s\n' "report of the synthetic file failed: $(head -n 1 "$out/logs/report.err")" \
			>>"$out/failures.txt"
		rm -f "$out/synthetic.data" "$out/synthetic.folded"
	else
		printf 'report\t%s\n' "gen_profile failed or not built: $(head -n 1 "$out/logs/gen.err" 2>/dev/null)" \
			>>"$out/failures.txt"
	fi
fi
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/meta.txt"
echo "total time: $(elapsed "$start" "$(now)") s after calibration" >>"$out/meta.txt"

# --- summary --------------------------------------------------------------------
awk -F'\t' -v OFS='\t' -v targets="${targets[*]}" -v freqs="${freqs[*]}" -v tools="${tools[*]}" \
	-v ncpu="$ncpu" "$bench_awk_lib"'
	FNR == 1 { next }
	FNR == NR { if ($4 == "bare") bare[$2, $3, $1] = $5; next }
	$4 != "bare" {
		key = $2 SUBSEP $3 SUBSEP $4
		n[key]++
		add(key, "work", $5)
		add(key, "total", $7)
		if (bare[$2, $3, $1] > 0) {
			add(key, "slowdown", $5 / bare[$2, $3, $1])
			add(key, "bare", bare[$2, $3, $1])
			# CPU time lost per sample: the work time lost on the CPUs the target fills.
			nth = $2 ~ /^threads/ ? substr($2, 8) + 0 : 1
			if ($8 > 0)
				add(key, "lost_us", ($5 - bare[$2, $3, $1]) * (nth < ncpu ? nth : ncpu) / $8 * 1e6)
		}
		add(key, "stop_us", $18); add(key, "wait_us", $19); add(key, "cpu_us", $20)
		if ($6 > 0)
			add(key, "rate", $8 / $6)
		add(key, "lost", $9)
		if ($8 > 0 && $10 > 0)
			add(key, "bps", $10 / $8)
		add(key, "late", $11); add(key, "failed", $12)
		add(key, "p50", $13); add(key, "p99", $14); add(key, "report", $15)
		add(key, "h50", $16); add(key, "h99", $17)
	}
	END {
		print "target", "freq", "tool", "runs", "slowdown", "work_s", "bare_work_s", "total_s",
			"samples_per_cpu_s", "rate_pct", "lost", "stop_p50_us", "stop_p99_us",
			"late_ticks", "failed", "report_s", "bytes_per_sample", "held_p50_us",
			"held_p99_us", "lost_us_per_sample", "stop_us_per_sample", "wait_us_per_sample",
			"xprof_cpu_us_per_sample"
		nt = split(targets, T, " "); nf = split(freqs, F, " "); nk = split(tools, K, " ")
		for (i = 1; i <= nt; i++)
			for (j = 1; j <= nf; j++)
				for (k = 1; k <= nk; k++) {
					key = T[i] SUBSEP F[j] SUBSEP K[k]
					if (!n[key])
						continue
					rate = median(vals[key, "rate"])
					print T[i], F[j], K[k], n[key], median(vals[key, "slowdown"]),
						median(vals[key, "work"]), median(vals[key, "bare"]),
						median(vals[key, "total"]), rate,
						rate == "" ? "" : 100 * rate / F[j],
						median(vals[key, "lost"]), median(vals[key, "p50"]),
						median(vals[key, "p99"]), median(vals[key, "late"]),
						median(vals[key, "failed"]), median(vals[key, "report"]),
						median(vals[key, "bps"]), median(vals[key, "h50"]),
						median(vals[key, "h99"]), median(vals[key, "lost_us"]),
						median(vals[key, "stop_us"]), median(vals[key, "wait_us"]),
						median(vals[key, "cpu_us"])
				}
	}' "$out/runs.tsv" "$out/runs.tsv" >"$out/summary.tsv"

# --- the Markdown tables ----------------------------------------------------------
{
	high=""
	if ((reps_high < reps && max_freq >= 9999)); then
		high=" ($reps_high at 9999 Hz and above)"
	fi
	echo "Machine load (1, 5, 15 min): $(awk '/^load average at / { sub(/^load average at /, ""); printf "%s%s", n++ ? "; " : "", $0 }' "$out/meta.txt")."
	if ((${#targets[@]})); then
		echo
		echo "Overhead: medians of $reps repetitions$high, bare run ~${seconds}s on an idle machine, perf event $event."
		echo "Slowdown = work time / the same repetition's bare work time (both timed by the target)."
		echo "Samples/CPU-s = samples / CPU seconds of the target's work, against the rate asked for;"
		echo "missed = perf's lost samples, xprof's late ticks and failed samples;"
		echo "stop = xprof's ptrace stop per sample, interrupt to resume (held: from the stop being seen,"
		echo "what xprof itself holds the thread; the rest is the thread's way into the stop, for a thread"
		echo "that waits for a CPU that wait); report = \`xprof report --folded\` / \`perf script\`;"
		echo "B/sample = data file bytes / samples."
		echo
		echo "| target | Hz | tool | slowdown | work s (bare) | samples/CPU-s (% of Hz) | missed | stop p50 / p99 (held) µs | report s | B/sample |"
		echo "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|"
		awk -F'\t' 'NR > 1 {
			stop = $12 == "" ? "-" : sprintf("%.0f / %.0f", $12, $13)
			if ($18 != "")
				stop = stop sprintf(" (%.0f / %.0f)", $18, $19)
			rep = $16 == "" ? "-" : sprintf("%.3f", $16)
			rate = $9 == "" ? "-" : sprintf("%.0f (%.0f%%)", $9, $10)
			missed = $3 ~ /^(xprof|floor)/ ? sprintf("%d late, %d failed", $14, $15) : sprintf("%d lost", $11)
			bps = $17 == "" ? "-" : sprintf("%.0f", $17)
			printf "| %s | %s | %s | %.3f | %.2f (%.2f) | %s | %s | %s | %s | %s |\n", $1, $2, $3,
				$5, $6, $7, rate, missed, stop, rep, bps
		}' "$out/summary.tsv"
		if awk -F'\t' 'NR > 1 && $3 ~ /^(xprof|floor)/ && $20 != "" { f = 1 } END { exit !f }' "$out/summary.tsv"; then
			echo
			echo "Where a sample's cost goes (xprof; medians, CPU-µs per sample): lost = (work - bare work)"
			echo "x the CPUs the target fills / samples; stops = its threads' time from interrupt to resume;"
			echo "waiting = their time runnable but off-CPU (schedstat), which with more threads than CPUs"
			echo "is mostly waiting for each other, and a stopped thread frees its CPU for another, so only"
			echo "stops are given there; rest = lost - stops - waiting: entering and leaving the stop,"
			echo "migrations, cold caches; xprof = the CPU time of xprof's own threads (controller,"
			echo "triggers), which comes out of the target's when its threads fill every CPU;"
			echo "floor: ptrace_floor's mean stop and its own CPU time."
			echo
			echo "| target | Hz | tool | lost | stops | waiting | rest | xprof |"
			echo "|---|---:|---|---:|---:|---:|---:|---:|"
			awk -F'\t' -v ncpu="$ncpu" 'NR > 1 && $3 ~ /^(xprof|floor)/ && $20 != "" {
				nth = $1 ~ /^threads/ ? substr($1, 8) + 0 : 1
				wait = nth > ncpu || $22 == "" ? "-" : sprintf("%.1f", $22)
				rest = nth > ncpu || $22 == "" ? "-" : sprintf("%.1f", $20 - $21 - $22)
				cpu = $23 == "" ? "-" : sprintf("%.1f", $23)
				printf "| %s | %s | %s | %.1f | %.1f | %s | %s | %s |\n", $1, $2, $3, $20, $21, wait, rest, cpu
			}' "$out/summary.tsv"
		fi
	fi
	if [[ -s $out/trees.md ]]; then
		echo
		cat "$out/trees.md"
	fi
	if [[ -s $out/failures.txt ]]; then
		echo
		echo "Not measured:"
		echo
		awk -F'\t' '!seen[$1]++ { printf "- %s: %s\n", $1, $2 }' "$out/failures.txt"
	fi
	if (($(wc -l <"$out/unwind.tsv") > 1)); then
		echo
		echo "Unwinding alone (\`unwind_bench\`, one snapshot of a 64-deep chain, $unwind_iters unwinds per mode):"
		echo
		echo "| mode | warm unwinds/s | cold unwinds/s | frames | warm ns/frame |"
		echo "|---|---:|---:|---:|---:|"
		awk -F'\t' 'NR > 1 { r[$1, $2] = $3; fr[$1] = $4; if ($2 == "warm") ns[$1] = $5 }
			END { split("fp auto dwarf", m, " ")
			      for (i = 1; i <= 3; i++)
				      if ((m[i], "warm") in r)
					      printf "| %s | %d | %d | %d | %.1f |\n", m[i], r[m[i], "warm"],
						      r[m[i], "cold"], fr[m[i]], ns[m[i]] }' "$out/unwind.tsv"
	fi
	if (($(wc -l <"$out/report.tsv") > 1)); then
		echo
		echo "Report speed (\`xprof report --folded\`, synthetic file from \`gen_profile\`, median of $report_reps):"
		echo
		echo "| page cache | samples | file MiB | seconds | samples/s | KiB still resident |"
		echo "|---|---:|---:|---:|---:|---:|"
		awk -F'\t' 'NR > 1 { printf "| %s | %d | %.1f | %.3f | %d | %s |\n", $1, $2, $3 / 1048576, $4, $5, $6 }' \
			"$out/report.tsv"
	fi
} >"$out/table.md"
echo
cat "$out/table.md"
echo
echo "# results in $out/: table.md summary.tsv runs.tsv unwind.tsv report.tsv meta.txt"
