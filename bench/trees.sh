# SPDX-License-Identifier: MIT
# shellcheck shell=bash disable=SC2154 # run.sh's settings
#
# Process trees, a part of bench/run.sh (sourced by it, never run alone; it
# uses run.sh's settings, its perf set-up and its functions fail, now,
# elapsed, die).  The workloads (BENCH_TARGETS names; "trees" is all five):
#
#   build       a clean 'make -j2' of tmux 3.3a (Debian's source package
#               tmux 3.3a-3, fetched once with apt-get source from a
#               deb-src line of its own, and configured once with
#               CFLAGS='-g -O2', under XP_CACHE/bench): 143 translation
#               units, ~1,150 processes (make, sh, gcc, cc1, as, ld, mv),
#               a fresh copy of the configured tree for every run
#   forkserver  PostgreSQL, which forks a backend per connection: a
#               cluster made with initdb in a temporary directory, started
#               as the user postgres (or BENCH_USER) on a unix socket there,
#               driven by 'pgbench -S -C' (select-only, a new connection per
#               transaction) for BENCH_PG_SECONDS; the tools attach to the
#               postmaster (following every fork): the figure is the
#               transaction rate
#   stormN      N execs of /bin/true from a shell loop (storm4000, storm1500)
#   churn       build/targets/churn threads 2 8: 2 s of threads that live
#               ~10 us each (a fixed time, so no slowdown; CPU accounting)
#
# Tools: bare, and of BENCH_TOOLS: xprof, xprof-base, xprof-any (xprof
# record -F BENCH_TREE_FREQ; for forkserver xprof attach -p), perf-fp and
# perf-dwarf (perf record -F BENCH_TREE_FREQ -g / --call-graph dwarf;
# for forkserver perf record -p), floor (build/tests/follow_floor -x -F
# BENCH_TREE_FREQ, launched or -p: a tracer that follows the tree, stops
# each exit as xprof does and samples it, one sample per period of each
# process's CPU clock, registers and 2 KiB of stack: the floor of any
# ptrace sampler of a tree), and for forkserver only follow and
# follow-exit (follow_floor -p, -x -p: the same follower without samples).
# A repetition runs every tool once, in an
# order that rotates from repetition to repetition; BENCH_TREE_REPS of them.
#
# The launched workloads run in a pid namespace of their own (unshare), the
# command line wrapped in a shell that times the work and prints its
# getrusage (bash's 'times') when it ends.  Measured, per run:
#   work        the wrapped command's wall time, without the profiler's
#               start-up and wind-down; slowdown = work / the same
#               repetition's bare work;
#   tree CPU    the wrapper shell's own CPU time and its children's
#               (RUSAGE_SELF + RUSAGE_CHILDREN): the whole tree;
#   profile CPU xprof only: the profile's total weight (xprof report
#               --flat's "weight", CPU nanoseconds); its ratio to the tree
#               CPU says how much of the tree's time the profile accounts for;
#   stops       xprof's stop p50 / p99 / max and held p99 (the STAT records
#               of its data file, as its summary line prints them);
#   controller CPU per task: while xprof runs, the namespace's init reads
#               every 20 ms the namespace's last pid (/proc/loadavg: every
#               task created in the tree), the CPU time of xprof's threads
#               (their schedstat) and the tree's CPU time so far (stat of
#               every process in the namespace); xprof's CPU per task over
#               the first W and the last W tasks (W = 1000, a third of them
#               below 3,000; the first and last 50 tasks left out: xprof's
#               own threads and start-up, its wind-down), and last / first,
#               which is 1 when the cost of a process does not grow with the
#               recording and the tasks are alike (storms).  A build's are
#               not: a window of long compiles has more samples per task, so
#               the same windows also give xprof's CPU per second of the
#               tree's CPU (which a sample's cost follows) and its last / first.
# forkserver: the transaction rate beside the same repetition's bare rate
# (median of the ratios), and after every run the server checked unharmed:
# no process of it stopped or still traced, and it answers a query.
#
# Environment: BENCH_TREE_REPS [3; quick 1], BENCH_TREE_FREQ [999],
#   BENCH_MAKE_JOBS [2], BENCH_PG_SECONDS [10; quick 3], BENCH_PG_CLIENTS [2],
#   BENCH_PG_BIN [the newest /usr/lib/postgresql/*/bin], BENCH_MIRROR
#   [http://deb.debian.org/debian] (the deb-src line's), XP_CACHE
#   [~/.cache/xprof].
# Needs root (a pid namespace; postgres started as another user); the
# Debian packages come from scripts/deps.sh --bench.

tree_pkg=tmux tree_pkg_version=3.3a-3 tree_pkg_dir=tmux-3.3a tree_suite=bookworm
tree_cache=${XP_CACHE:-${HOME:-/root}/.cache/xprof}/bench
tree_freq=${BENCH_TREE_FREQ:-999}
tree_jobs=${BENCH_MAKE_JOBS:-2}
if [[ $quick == 1 ]]; then
	tree_reps=${BENCH_TREE_REPS:-1}
	pg_seconds=${BENCH_PG_SECONDS:-3}
else
	tree_reps=${BENCH_TREE_REPS:-3}
	pg_seconds=${BENCH_PG_SECONDS:-10}
fi
pg_clients=${BENCH_PG_CLIENTS:-2}
tree_abs() {
	if [[ $1 == /* ]]; then
		echo "$1"
	else
		echo "$PWD/$1"
	fi
}
tree_work=$(tree_abs "$out/trees")
tree_configured=$tree_cache/$tree_pkg-$tree_pkg_version/configured
pg_dir="" pg_bin="" pg_user="" pg_pid=""

# trees_expand NAME...: the workload names in ${tree_list[@]}, "trees" expanded.
trees_expand() {
	local t
	tree_list=()
	for t in "$@"; do
		case $t in
		trees) tree_list+=(build forkserver storm4000 storm1500 churn) ;;
		build | forkserver | churn) tree_list+=("$t") ;;
		storm[1-9]*)
			if ! [[ ${t#storm} =~ ^[0-9]+$ ]] || ((${t#storm} > 100000)); then
				die "bad target '$t' (stormN: N execs, 1 to 100000)"
			fi
			tree_list+=("$t")
			;;
		*) die "unknown process-tree target '$t'" ;;
		esac
	done
}

# is_tree_target NAME: whether NAME is one of this part's workloads.
is_tree_target() {
	[[ $1 == trees || $1 == build || $1 == forkserver || $1 == churn || $1 == storm[1-9]* ]]
}

# --- build: tmux from Debian's source package -------------------------------------
# The source, fetched with a deb-src line of its own (apt's state under
# the cache, the system's left alone), pinned at one version, and
# configured once; every run builds a fresh copy of that tree.
tree_build_prepare() {
	local d=$tree_cache/$tree_pkg-$tree_pkg_version apt=$tree_cache/apt
	local -a opts
	[[ ! -e $tree_configured/.configured ]] || return 0
	if [[ ! -d $d/$tree_pkg_dir ]]; then
		command -v dpkg-source >/dev/null || die "build: apt-get source needs dpkg-source (scripts/deps.sh --bench)"
		mkdir -p "$apt/sources.list.d" "$apt/lists/partial" "$apt/cache/archives/partial" "$d"
		cat >"$apt/sources.list.d/src.sources" <<EOF
Types: deb-src
URIs: ${BENCH_MIRROR:-http://deb.debian.org/debian}
Suites: $tree_suite
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
		opts=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$apt/sources.list.d"
			-o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o APT::Sandbox::User=root)
		echo "# build: fetching $tree_pkg $tree_pkg_version ($tree_suite deb-src) into $d"
		apt-get "${opts[@]}" -q update >"$out/logs/build-fetch.log" 2>&1 ||
			die "build: apt-get update of the deb-src line failed (see $out/logs/build-fetch.log)"
		(cd "$d" && apt-get "${opts[@]}" -q source "$tree_pkg=$tree_pkg_version") \
			>>"$out/logs/build-fetch.log" 2>&1 ||
			die "build: apt-get source $tree_pkg=$tree_pkg_version failed (see $out/logs/build-fetch.log)"
		[[ -x $d/$tree_pkg_dir/configure ]] || die "build: no $d/$tree_pkg_dir/configure after apt-get source"
	fi
	echo "# build: configuring $tree_pkg in $tree_configured"
	rm -rf "$tree_configured"
	cp -a "$d/$tree_pkg_dir" "$tree_configured"
	(cd "$tree_configured" && ./configure CFLAGS='-g -O2') >"$out/logs/build-configure.log" 2>&1 ||
		die "build: configure failed (see $out/logs/build-configure.log; scripts/deps.sh --bench installs what tmux needs)"
	touch "$tree_configured/.configured"
}

# --- forkserver: PostgreSQL ------------------------------------------------------------
pg_as() {
	setpriv --reuid="$pg_user" --regid="$(id -g "$pg_user")" --clear-groups "$@"
}

# Make a cluster in a temporary directory, start it on a unix socket
# there (no TCP), and fill pgbench's tables.
pg_start() {
	local b
	pg_bin=${BENCH_PG_BIN:-}
	if [[ -z $pg_bin ]]; then
		for b in /usr/lib/postgresql/*/bin; do
			[[ -x $b/postgres ]] || continue
			if [[ -z $pg_bin ]] || [[ $(printf '%s\n' "$pg_bin" "$b" | sort -V | tail -n 1) == "$b" ]]; then
				pg_bin=$b
			fi
		done
	fi
	[[ -n $pg_bin && -x $pg_bin/postgres && -x $pg_bin/pgbench && -x $pg_bin/psql ]] || {
		fail forkserver "no PostgreSQL server with pgbench and psql (scripts/deps.sh --bench; BENCH_PG_BIN)"
		return 1
	}
	pg_user=postgres
	id "$pg_user" >/dev/null 2>&1 || pg_user=$bench_user
	pg_dir=$(mktemp -d /tmp/xprof-bench-pg.XXXXXX)
	chown "$pg_user" "$pg_dir"
	if ! pg_as "$pg_bin/initdb" -D "$pg_dir/data" -A trust -U postgres --no-sync \
		>"$out/logs/forkserver-initdb.log" 2>&1; then
		fail forkserver "initdb failed: $(tail -n 1 "$out/logs/forkserver-initdb.log")"
		return 1
	fi
	if ! pg_as "$pg_bin/pg_ctl" -D "$pg_dir/data" -w -l "$pg_dir/server.log" \
		-o "-k $pg_dir -c listen_addresses= -c fsync=off -c max_connections=50" start \
		>"$out/logs/forkserver-start.log" 2>&1; then
		fail forkserver "the server did not start: $(tail -n 1 "$pg_dir/server.log" 2>/dev/null)"
		return 1
	fi
	read -r pg_pid <"$pg_dir/data/postmaster.pid"
	if ! pg_as "$pg_bin/pgbench" -h "$pg_dir" -U postgres -i -s 1 postgres \
		>"$out/logs/forkserver-init.log" 2>&1; then
		fail forkserver "pgbench -i failed: $(tail -n 1 "$out/logs/forkserver-init.log")"
		return 1
	fi
	echo "# forkserver: $("$pg_bin/postgres" --version), postmaster $pg_pid, socket in $pg_dir, as $pg_user"
}

pg_stop() {
	[[ -n $pg_dir ]] || return 0
	if [[ -n $pg_pid ]]; then
		pg_as "$pg_bin/pg_ctl" -D "$pg_dir/data" -m fast -w stop >>"$out/logs/forkserver-start.log" 2>&1 ||
			kill -TERM "$pg_pid" 2>/dev/null || true
	fi
	rm -rf "$pg_dir"
	pg_dir="" pg_pid=""
}

# pg_bench LOG: pgbench for pg_seconds, one connection per transaction;
# prints the transaction rate.
pg_bench() {
	pg_as "$pg_bin/pgbench" -h "$pg_dir" -U postgres -n -S -C -T "$pg_seconds" -c "$pg_clients" -j 1 \
		postgres >"$1" 2>&1 || return 1
	sed -nE 's/^tps = ([0-9.]+).*/\1/p' "$1" | head -n 1
}

# pg_check: "ok" when no process of the server is stopped or traced and
# it answers a query, else what is wrong.
pg_check() {
	local p pids=("$pg_pid") st line tracer bad=""
	[[ -r /proc/$pg_pid/task/$pg_pid/children ]] || {
		echo "postmaster $pg_pid gone"
		return
	}
	read -ra p </proc/"$pg_pid"/task/"$pg_pid"/children || true
	pids+=("${p[@]}")
	for p in "${pids[@]}"; do
		read -r line 2>/dev/null <"/proc/$p/stat" || continue
		st=${line##*) }
		st=${st%% *}
		tracer=$(awk '/^TracerPid:/ { print $2 }' "/proc/$p/status" 2>/dev/null)
		[[ $st != [tT] ]] || bad+=" $p stopped ($st)"
		[[ ${tracer:-0} == 0 ]] || bad+=" $p traced by $tracer"
	done
	if [[ $(pg_as "$pg_bin/psql" -h "$pg_dir" -U postgres -XAtc 'select 1' postgres 2>/dev/null) != 1 ]]; then
		bad+=" no answer to 'select 1'"
	fi
	bad=${bad# }
	echo "${bad:-ok}"
}

# --- running one workload ---------------------------------------------------------------
# The init of the pid namespace a launched workload runs in: runs the
# command and, with a monitor file, writes "time last-pid cpu-ns
# tree-ticks" lines every 20 ms until the command (xprof) exits: the
# namespace's last pid counts the tasks created in the tree, cpu-ns is
# the CPU time of the command's threads, tree-ticks the CPU time of the
# tree so far in clock ticks: every process of the namespace but this
# one, its own and its reaped children's times (stat fields 14-17), of
# the command only its children's.  Builtins only, so that the monitor
# creates no task.
tree_ns_init() {
	local mon=$1 fifo=$2 pid line st cpu n ns f last p tree
	shift 2
	"$@" &
	pid=$!
	if [[ $mon != - ]]; then
		exec 8>"$mon" 9<>"$fifo"
		while read -r line 2>/dev/null <"/proc/$pid/stat"; do
			st=${line##*) }
			[[ ${st:0:1} != Z ]] || break
			read -r _ _ _ _ last </proc/loadavg
			cpu=0 n=0
			for f in /proc/"$pid"/task/*/schedstat; do
				read -r ns _ 2>/dev/null <"$f" || continue
				cpu=$((cpu + ns)) n=$((n + 1))
			done
			((n)) || break
			tree=0
			for f in /proc/[0-9]*/stat; do
				p=${f#/proc/}
				p=${p%/stat}
				((p != 1)) || continue
				read -r line 2>/dev/null <"$f" || continue
				# shellcheck disable=SC2086 # the fields after the name
				set -- ${line##*) }
				if ((p == pid)); then
					tree=$((tree + ${14} + ${15}))
				else
					tree=$((tree + ${12} + ${13} + ${14} + ${15}))
				fi
			done
			printf '%s %s %s %s\n' "${EPOCHREALTIME/,/.}" "$last" "$cpu" "$tree" >&8
			read -r -t 0.02 -u 9 _ || true
		done
	fi
	wait "$pid"
}

# The workload's shell line for the wrapper: $1 the workload.
tree_work_line() {
	case $1 in
	build) printf 'make -C %q -j%d' "$tree_work/tree" "$tree_jobs" ;;
	churn) printf '%q threads 2 8' "$(tree_abs "$tdir/churn")" ;;
	storm*) printf 'for ((i = 0; i < %d; i++)); do /bin/true; done' "${1#storm}" ;;
	esac
}

# growth MONFILE: "all first last window first_tree last_tree" from the
# monitor's lines: the controller's CPU per task (µs) over all of them,
# over the first window of tasks and over the last (see the top of this
# file), and in those windows its CPU per second of the tree's CPU (ms):
# a window of long compiles has more samples per task than one of short
# ones, which the second figure does not count against it.
tree_growth() {
	awk -v hz="$(getconf CLK_TCK)" '{ P[NR] = $2; V[3, NR] = $3; V[4, NR] = $4 / hz * 1e9; n = NR }
	# column c (3: xprof ns, 4: tree ns) when the last pid was p, interpolated
	function at(c, p,    i) {
		for (i = 1; i <= n && P[i] < p; i++)
			;
		if (i > n)
			return V[c, n]
		if (i == 1 || P[i] == P[i - 1])
			return V[c, i]
		return V[c, i - 1] + (V[c, i] - V[c, i - 1]) * (p - P[i - 1]) / (P[i] - P[i - 1])
	}
	function per_tree(a, b,    t) {
		t = at(4, b) - at(4, a)
		return t > 0 ? sprintf("%.1f", (at(3, b) - at(3, a)) / t * 1e3) : "-"
	}
	END {
		if (n < 2) { print "- - - - - -"; exit }
		N = P[n] - P[1]
		w = N >= 3000 + 100 ? 1000 : int((N - 100) / 3)
		if (w < 20) { printf "%.1f - - - - -\n", N > 0 ? (V[3, n] - V[3, 1]) / N / 1e3 : 0; exit }
		s = P[1] + 50; e = P[n] - 50
		first = (at(3, s + w) - at(3, s)) / w / 1e3
		last = (at(3, e) - at(3, e - w)) / w / 1e3
		printf "%.1f %.1f %.1f %d %s %s\n", (V[3, n] - V[3, 1]) / N / 1e3, first, last, w,
			per_tree(s, s + w), per_tree(e - w, e)
	}' "$1"
}

# tree_xprof_stats DATA: "samples processes stop_p50 stop_p99 stop_max
# held_p50 held_p99 (µs) xprof_cpu_s profile_cpu_s" of an xprof data file.
tree_xprof_stats() {
	local x=$1 data=$2 w
	w=$("$x" report -i "$data" --flat --limit 1 2>/dev/null | sed -nE 's/^# Samples: [0-9]+, weight: ([0-9]+)$/\1/p')
	"$x" report -i "$data" --header-only 2>/dev/null | awk -v w="${w:-}" '
		/^# stat [a-z_0-9]+ : / { v[$3] = $NF }
		END {
			printf "%s %s %.1f %.1f %.1f %.1f %.1f %.3f %s\n", v["samples"], v["processes"],
				v["stop_p50_ns"] / 1e3, v["stop_p99_ns"] / 1e3, v["stop_max_ns"] / 1e3,
				v["held_p50_ns"] / 1e3, v["held_p99_ns"] / 1e3, v["xprof_cpu_ns"] / 1e9,
				w == "" ? "-" : sprintf("%.3f", w / 1e9)
		}'
}

# tree_follower TOOL: whether TOOL is build/tests/follow_floor (attached,
# it says on stdout when it has seized the tree; it writes no data file).
tree_follower() {
	[[ $1 == follow || $1 == follow-exit || $1 == floor ]]
}

# tree_floor_stats ERRLOG: "samples cpu_per_task_us" from follow_floor's last line.
tree_floor_stats() {
	sed -nE 's/^follow_floor: [0-9]+ stops, [0-9]+ tasks, ([0-9]+) samples, cpu ([0-9.]+) us per task$/\1 \2/p' "$1" |
		tail -n 1 | grep . || echo "- -"
}

# tree_seconds "XmY.Zs": seconds.
tree_times_sum() {
	awk 'NR > 1 { for (i = 1; i <= NF; i++) { split($i, a, "m"); sub(/s$/, "", a[2]); s += a[1] * 60 + a[2] } }
		END { printf "%.3f", s }' "$1"
}

# tree_row FIELD...: one line of trees-runs.tsv.
tree_row() {
	local IFS=$'\t'
	echo "$*" >>"$out/trees-runs.tsv"
}

# tree_launch REP WORKLOAD TOOL: one run of a launched workload.
tree_launch() {
	local rep=$1 w=$2 tool=$3 x=$xprof data=$tree_work/run.data log=$out/logs/tree-$2-$3 status=0
	local -a cmd=() extra=()
	local mon=- t0 t1 total line work tree_cpu st samples="-" procs="-" p50="-" p99="-" pmax="-"
	local h50="-" h99="-" xcpu="-" pcpu="-" all="-" first="-" last="-" win="-" bytes="-" tfirst="-"
	local tlast="-"
	[[ $tool != *-base ]] || x=$base_build/xprof
	rm -f "$data" "$tree_work/times" "$tree_work/mon"
	if [[ $w == build ]]; then
		rm -rf "$tree_work/tree"
		cp -a "$tree_configured" "$tree_work/tree"
	fi
	case $tool in
	bare) ;;
	xprof*)
		[[ $tool != *-any ]] || extra=(--interrupt-from-any-cpu)
		cmd=("$x" record "${xprof_opts[@]}" "${extra[@]}" -F "$tree_freq" -o "$data" --)
		mon=$tree_work/mon
		;;
	perf-fp) cmd=(perf record -q -e "$event" -F "$tree_freq" -g -o "$data" --) ;;
	perf-dwarf) cmd=(perf record -q -e "$event" -F "$tree_freq" --call-graph dwarf -o "$data" --) ;;
	floor) cmd=("$follow" -x -F "$tree_freq" --) ;;
	esac
	[[ $tool != perf-* ]] || raise_rate
	# shellcheck disable=SC2016 # the wrapper's own variables
	cmd+=(bash -c 't0=${EPOCHREALTIME/,/.}; eval "$3" >"$1" 2>&1; s=$?
		t1=${EPOCHREALTIME/,/.}; { echo "$t0 $t1 $s"; times; } >"$2"; exit $s' wrap
		"$log.work" "$tree_work/times" "$(tree_work_line "$w")")
	t0=$(now)
	unshare --pid --fork --mount-proc -- bash -c "$(declare -f tree_ns_init); tree_ns_init \"\$@\"" \
		tree_ns_init "$mon" "$tree_work/fifo" "${cmd[@]}" >"$log.out" 2>"$log.err" || status=$?
	t1=$(now)
	total=$(elapsed "$t0" "$t1")
	read -r line 2>/dev/null <"$tree_work/times" || line=""
	read -r t0 t1 st <<<"$line"
	if ((status)) || [[ ${st:-x} != 0 ]]; then
		fail "$w $tool" "exit $status (work: ${st:-none}): $(tail -n 1 "$log.err") $(tail -n 1 "$log.work" 2>/dev/null)"
		return 0
	fi
	if [[ $w == build && ! -x $tree_work/tree/tmux ]]; then
		fail "$w $tool" "make succeeded but left no tmux binary"
		return 0
	fi
	work=$(elapsed "$t0" "$t1")
	tree_cpu=$(tree_times_sum "$tree_work/times")
	if [[ $tool == xprof* ]]; then
		read -r samples procs p50 p99 pmax h50 h99 xcpu pcpu < <(tree_xprof_stats "$x" "$data")
		read -r all first last win tfirst tlast < <(tree_growth "$mon")
	elif [[ $tool == floor ]]; then
		read -r samples all < <(tree_floor_stats "$log.err")
	fi
	[[ $tool == bare || $tool == floor ]] || bytes=$(stat -c %s "$data" 2>/dev/null || echo -)
	rm -f "$data"
	tree_row "$rep" "$w" "$tool" "$work" "$total" - "$samples" "$procs" "$p50" "$p99" "$pmax" "$h50" \
		"$h99" "$xcpu" "$all" "$first" "$last" "$win" "$pcpu" "$tree_cpu" "$bytes" - "$tfirst" "$tlast"
	printf '  rep %d %-10s %-10s work %7.2fs total %7.2fs tree CPU %7.2fs%s\n' "$rep" "$w" "$tool" \
		"$work" "$total" "$tree_cpu" "$([[ $tool != xprof* ]] || echo ", profile CPU ${pcpu}s, stop p99 ${p99} us, held p99 ${h99} us, xprof CPU/process ${all} us (first $first, last $last)")$([[ $tool != floor ]] || echo ", $samples samples, its CPU/task ${all} us")"
}

# tree_wait PID SECONDS: wait for PID to exit, at most SECONDS; its status,
# or 124 after killing it when it does not end in time.
tree_wait() {
	local pid=$1 i status=0
	for ((i = 0; i < $2 * 10; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" || true
		return 124
	fi
	wait "$pid" || status=$?
	return "$status"
}

# tree_attach REP TOOL: one run of forkserver.
tree_attach() {
	local rep=$1 tool=$2 x=$xprof data=$tree_work/run.data log=$out/logs/tree-forkserver-$2 status=0
	local -a cmd=() extra=()
	local pid="" reply="" tps harm samples="-" procs="-" p50="-" p99="-" pmax="-" h50="-" h99="-" k
	local xcpu="-" pcpu="-" all="-" bytes="-"
	[[ $tool != *-base ]] || x=$base_build/xprof
	rm -f "$data" "$tree_work/ctl" "$tree_work/ack"
	mkfifo "$tree_work/ctl" "$tree_work/ack"
	case $tool in
	bare) ;;
	xprof*)
		[[ $tool != *-any ]] || extra=(--interrupt-from-any-cpu)
		cmd=("$x" attach "${xprof_opts[@]}" "${extra[@]}" -F "$tree_freq" -o "$data" -p "$pg_pid")
		;;
	perf-fp) cmd=(perf record -q -e "$event" -F "$tree_freq" -g -o "$data" -p "$pg_pid") ;;
	perf-dwarf) cmd=(perf record -q -e "$event" -F "$tree_freq" --call-graph dwarf -o "$data" -p "$pg_pid") ;;
	follow) cmd=("$follow" -p "$pg_pid") ;;
	follow-exit) cmd=("$follow" -x -p "$pg_pid") ;;
	floor) cmd=("$follow" -x -F "$tree_freq" -p "$pg_pid") ;;
	esac
	if tree_follower "$tool"; then
		# It says on stdout when it has seized the postmaster.
		"${cmd[@]}" >"$log.out" 2>"$log.err" &
		pid=$!
		for ((k = 0; k < 600; k++)); do
			grep -q '^follow_floor: attached' "$log.out" 2>/dev/null || ! kill -0 "$pid" 2>/dev/null && break
			sleep 0.1
		done
		if ! grep -q '^follow_floor: attached' "$log.out"; then
			kill -TERM "$pid" 2>/dev/null || true
			wait "$pid" || true
			fail "forkserver $tool" "not attached within 60 s: $(tail -n 1 "$log.err")"
			return 0
		fi
	elif [[ $tool != bare ]]; then
		[[ $tool != perf-* ]] || raise_rate
		# Sampling starts at 'enable'; its ack says the tool is attached
		# and sampling.  Both FIFOs are held open read-write here, so no
		# open blocks on a tool that died.
		"${cmd[@]}" -D -1 --control "fifo:$tree_work/ctl,$tree_work/ack" >"$log.out" 2>"$log.err" &
		pid=$!
		exec 6<>"$tree_work/ctl" 7<>"$tree_work/ack"
		echo enable >&6
		if ! read -r -t 60 -u 7 reply || [[ $reply != ack ]]; then
			kill -TERM "$pid" 2>/dev/null || true
			wait "$pid" || true
			exec 6>&- 7>&-
			fail "forkserver $tool" "no ack of 'enable' within 60 s: $(tail -n 1 "$log.err")"
			return 0
		fi
	fi
	tps=$(pg_bench "$log.work" 6>&- 7>&-) || tps=""
	if [[ $tool != bare ]]; then
		if [[ $tool == xprof* ]]; then
			echo stop >&6
		else
			kill -INT "$pid" 2>/dev/null || true
		fi
		tree_wait "$pid" 120 || status=$?
		tree_follower "$tool" || exec 6>&- 7>&-
		# perf record ends with 130 when its SIGINT was not caught in time
		if [[ $tool == perf-* && $status == 130 ]]; then
			status=0
		fi
	fi
	harm=$(pg_check 6>&- 7>&-)
	[[ $harm == ok ]] || fail "forkserver $tool" "the server is harmed: $harm"
	if ((status)) || [[ -z $tps ]]; then
		fail "forkserver $tool" "exit $status: $(tail -n 1 "$log.err" 2>/dev/null) $(tail -n 1 "$log.work")"
		return 0
	fi
	if [[ $tool == xprof* ]]; then
		read -r samples procs p50 p99 pmax h50 h99 xcpu pcpu < <(tree_xprof_stats "$x" "$data")
		all=$(awk -v c="$xcpu" -v n="$procs" 'BEGIN { if (n > 0) printf "%.1f", c * 1e6 / n; else print "-" }')
	fi
	if tree_follower "$tool"; then
		read -r samples all < <(tree_floor_stats "$log.err")
		[[ $tool == floor ]] || samples=-
	fi
	[[ $tool == bare ]] || tree_follower "$tool" || bytes=$(stat -c %s "$data" 2>/dev/null || echo -)
	rm -f "$data"
	tree_row "$rep" forkserver "$tool" "$pg_seconds" - "$tps" "$samples" "$procs" "$p50" "$p99" "$pmax" \
		"$h50" "$h99" "$xcpu" "$all" - - - "$pcpu" - "$bytes" "$harm" - -
	printf '  rep %d %-10s %-10s %8.1f tps, server %s%s\n' "$rep" forkserver "$tool" "$tps" "$harm" \
		"$([[ $tool != xprof* ]] || echo ", stop p99 ${p99} us, held p99 ${h99} us, xprof CPU/process ${all} us")$([[ $tool != floor ]] || echo ", $samples samples")$(! tree_follower "$tool" || echo ", its CPU/task ${all} us")"
}

trees_cleanup() {
	pg_stop
	rm -rf "$tree_work/tree"
}

# trees_run WORKLOAD...: part 4.
trees_run() {
	local w tool k rep pg_ok=1
	local -a ttools=(bare)
	((EUID == 0)) || die "process trees need root (a pid namespace of their own; postgres as another user)"
	command -v unshare >/dev/null || die "process trees need unshare (util-linux)"
	for tool in "${tools[@]}"; do
		case $tool in
		xprof | xprof-base | xprof-any | perf-fp | perf-dwarf | floor | follow | follow-exit)
			if [[ $tool == perf-* && -n ${failed[$tool]:-} ]]; then
				continue
			fi
			ttools+=("$tool")
			;;
		*)
			[[ -z ${BENCH_TOOLS:-} ]] ||
				printf '%s\t%s\n' "trees $tool" "not measured on process trees (xprof, xprof-base, xprof-any, perf-fp, perf-dwarf, floor are; follow and follow-exit on forkserver)" >>"$out/failures.txt"
			;;
		esac
	done
	mkdir -p "$tree_work"
	rm -f "$tree_work/fifo"
	mkfifo "$tree_work/fifo"
	printf 'rep\tworkload\ttool\twork_s\ttotal_s\ttps\tsamples\tprocesses\tstop_p50_us\tstop_p99_us\tstop_max_us\theld_p50_us\theld_p99_us\txprof_cpu_s\tcpu_per_process_us\tcpu_first_us\tcpu_last_us\twindow\tprofile_cpu_s\ttree_cpu_s\tbytes\tserver\tcpu_per_tree_first_ms\tcpu_per_tree_last_ms\n' \
		>"$out/trees-runs.tsv"
	for w in "${tree_list[@]}"; do
		case $w in
		build) tree_build_prepare ;;
		forkserver)
			pg_start || pg_ok=0
			# one untimed run: the server's caches and the first backends' start
			((pg_ok == 0)) || pg_bench "$out/logs/forkserver-warmup.log" >/dev/null || true
			;;
		esac
		echo "# $w: $(if [[ $w == forkserver ]]; then echo "pgbench -S -C -T $pg_seconds -c $pg_clients"; else tree_work_line "$w"; fi)"
		for ((rep = 1; rep <= tree_reps; rep++)); do
			for ((k = 0; k < ${#ttools[@]}; k++)); do
				tool=${ttools[(rep - 1 + k) % ${#ttools[@]}]}
				if [[ $w == forkserver ]]; then
					((pg_ok)) || break
					tree_attach "$rep" "$tool"
				elif [[ $tool != follow* ]]; then
					tree_launch "$rep" "$w" "$tool"
				fi
			done
		done
		[[ $w != forkserver ]] || pg_stop
	done
	rm -rf "$tree_work/tree" "$tree_work/fifo" "$tree_work/ctl" "$tree_work/ack" "$tree_work/mon"
	trees_summary
}

# The medians (trees.tsv) and the Markdown tables (trees.md).
trees_summary() {
	awk -F'\t' -v OFS='\t' "$bench_awk_lib"'
	function med(list,    m) {
		m = median(list)
		return m == "" ? "-" : m
	}
	# "least-most" of a list, the spread of the repetitions
	function range(list,    a, n, i, lo, hi) {
		n = split(list, a, " ")
		if (!n)
			return "-"
		lo = hi = a[1] + 0
		for (i = 2; i <= n; i++) {
			if (a[i] + 0 < lo)
				lo = a[i] + 0
			if (a[i] + 0 > hi)
				hi = a[i] + 0
		}
		return sprintf("%.2f-%.2f", lo, hi)
	}
	FNR == 1 { next }
	FNR == NR { if ($3 == "bare") { bw[$2, $1] = $4; bt[$2, $1] = $6 } next }
	{
		key = $2 SUBSEP $3
		if (!(key in n))
			order[++nk] = key
		n[key]++
		add(key, "work", $4); add(key, "tps", $6)
		if ($2 == "forkserver") {
			if (bt[$2, $1] > 0)
				add(key, "ratio", $6 / bt[$2, $1])
		} else if ($2 != "churn" && bw[$2, $1] > 0) {
			add(key, "ratio", $4 / bw[$2, $1])
		}
		add(key, "bare", $2 == "forkserver" ? bt[$2, $1] : bw[$2, $1])
		for (i = 7; i <= 21; i++)
			add(key, i, $i)
		if ($20 > 0 && $19 != "-")
			add(key, "acct", $19 / $20)
		if ($22 != "-" && $22 != "")
			srv[key] = srv[key] ($22 == "ok" ? "" : " " $22)
		if ($17 != "-" && $16 > 0)
			add(key, "growth", $17 / $16)
		add(key, "tfirst", $23); add(key, "tlast", $24)
		if ($24 != "-" && $23 > 0)
			add(key, "tgrowth", $24 / $23)
	}
	END {
		print "workload", "tool", "runs", "ratio", "work_s", "tps", "bare", "samples", "processes",
			"stop_p50_us", "stop_p99_us", "stop_max_us", "held_p50_us", "held_p99_us",
			"xprof_cpu_s", "cpu_per_process_us", "cpu_first_us", "cpu_last_us", "window",
			"profile_cpu_s", "tree_cpu_s", "bytes", "profile_over_tree", "last_over_first", "server",
			"ratio_range", "bare_range", "cpu_per_tree_first_ms", "cpu_per_tree_last_ms",
			"tree_last_over_first"
		for (k = 1; k <= nk; k++) {
			key = order[k]
			split(key, p, SUBSEP)
			line = p[1] OFS p[2] OFS n[key] OFS med(vals[key, "ratio"]) OFS med(vals[key, "work"]) \
				OFS med(vals[key, "tps"]) OFS med(vals[key, "bare"])
			for (i = 7; i <= 21; i++)
				line = line OFS med(vals[key, i])
			print line, med(vals[key, "acct"]), med(vals[key, "growth"]),
				p[2] == "bare" || p[1] != "forkserver" ? "-" : (srv[key] == "" ? "ok" : srv[key]),
				range(vals[key, "ratio"]), range(vals[key, "bare"]), med(vals[key, "tfirst"]),
				med(vals[key, "tlast"]), med(vals[key, "tgrowth"])
		}
	}' "$out/trees-runs.tsv" "$out/trees-runs.tsv" >"$out/trees.tsv"
	echo "Process trees at $tree_freq Hz: medians of $tree_reps interleaved repetitions (the order of the tools rotates)." \
		>"$out/trees.md"
	if awk -F'\t' 'NR > 1 && $1 != "forkserver" { f = 1 } END { exit !f }' "$out/trees.tsv"; then
		trees_launched_table >>"$out/trees.md"
	fi
	if awk -F'\t' 'NR > 1 && $1 == "forkserver" { f = 1 } END { exit !f }' "$out/trees.tsv"; then
		trees_forkserver_table >>"$out/trees.md"
	fi
}

trees_launched_table() {
	echo "slowdown = work time / the same repetition's bare work time (least-most of the repetitions;"
	echo "the work timed by a wrapper shell, without the profiler's start and end);"
	echo "stops: xprof's stop p50 / p99 / max (held p99), µs;"
	echo "xprof CPU / task: xprof's CPU per task (process or thread) created in the tree, over the whole"
	echo "run, its first W and its last W tasks, and last / first (1: no growth along the recording);"
	echo "per tree CPU-s: its CPU per second of the tree's CPU in those windows, ms (a window of"
	echo "longer lives has more samples per task);"
	echo "profile / tree CPU: the profile's total weight against the tree's CPU time (getrusage of the"
	echo "wrapper shell and its children)."
	echo
	echo "| workload | tool | slowdown | work s (bare) | processes | stops µs (held p99) | xprof CPU / task µs: all, first W, last W (last/first) | per tree CPU-s ms: first, last (last/first) | profile / tree CPU s |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
	awk -F'\t' 'NR > 1 && $1 != "forkserver" && $2 != "bare" {
		stops = $10 == "-" ? "-" : sprintf("%s / %s / %s (%s)", $10, $11, $12, $14)
		cpu = $16 == "-" ? "-" : ($17 == "-" ? $16 : sprintf("%s, %s, %s (%.2f; W %s)", $16, $17, $18, $24, $19))
		acct = $20 == "-" ? "-" : sprintf("%s / %s (%.2f)", $20, $21, $23)
		per_tree = $28 == "-" ? "-" : sprintf("%s, %s (%.2f)", $28, $29, $30)
		printf "| %s | %s | %s | %.2f (%.2f) | %s | %s | %s | %s | %s |\n", $1, $2,
			$4 == "-" ? "-" : sprintf("%.2f (%s)", $4, $26), $5, $7, $9, stops, cpu, per_tree, acct
	}' "$out/trees.tsv"
}

trees_forkserver_table() {
	echo
	echo "forkserver: pgbench -S -C -T $pg_seconds -c $pg_clients (a new connection per transaction) against the"
	echo "postmaster each tool attached to; rate = transactions/s over the same repetition's bare rate"
	echo "(least-most of the repetitions; bare: $(awk -F'\t' '$1 == "forkserver" && $2 == "bare" { print $27 }' "$out/trees.tsv") tps);"
	echo "server: after every run, no process of it stopped or traced, and it answers 'select 1'."
	echo
	echo "| tool | tps (bare) | rate | stops µs (held p99) | processes | xprof CPU / process µs | server |"
	echo "|---|---:|---:|---:|---:|---:|---|"
	awk -F'\t' 'NR > 1 && $1 == "forkserver" && $2 != "bare" {
		stops = $10 == "-" ? "-" : sprintf("%s / %s / %s (%s)", $10, $11, $12, $14)
		printf "| %s | %.1f (%.1f) | %s | %s | %s | %s | %s |\n", $2, $6, $7,
			$4 == "-" ? "-" : sprintf("%.2f (%s)", $4, $26), stops, $9, $16, $25
	}' "$out/trees.tsv"
}
