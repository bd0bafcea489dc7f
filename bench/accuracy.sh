#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# bench/accuracy.sh [BUILD_DIR] [PROGRAM...] - xprof next to perf's DWARF
# unwinding on real Debian programs (a benchmark, not a test).
#
# Each program runs the same workload four times: once under
#   xprof record -F 999 -g check        (the native stacks; libunwind checks each)
#   perf record -F 999 --call-graph dwarf   (twice: the second run is a yardstick)
#   perf record -F 999 -g -- xprof record -F 999   (both tools in one run)
# and the table shows, per program:
#   - the 6 heaviest leaf functions of either tool, with both shares;
#   - TVD: the total-variation distance of the two leaf distributions
#     (half the sum of the absolute share differences, in points), and
#     beside it two yardsticks: the TVD that sampling alone gives for as
#     many samples (two draws of these sizes from one distribution, both
#     tools' samples pooled: its mean and 95th percentile over 100 draws),
#     and the TVD between perf and a second run of perf on the same
#     workload, which adds what changes from run to run in the program
#     itself (a JIT compiling and collecting at other moments, a machine
#     that is busy in one run).  A program with a long tail of leaves has
#     a TVD of several points between two runs of the same tool;
#   - xprof's shares are of CPU time (its reports' default weight), perf's
#     of samples, which its cpu-clock event takes per CPU time: a system
#     call that cannot be interrupted (close of a large file) stops the
#     thread once, at its end, and is one sample of xprof's but as many
#     of perf's as it lasted milliseconds;
#   - complete: the share of samples whose stack reaches the C runtime's
#     entry (__libc_start_call_main / __libc_start_main, or start_thread
#     for other threads): main itself has no name in a stripped program;
#   - unknown: the share of samples whose leaf has no name (perf's
#     [unknown], xprof's module+offset or bare address), and the
#     difference between the two that sampling alone stays within 95% of
#     the time;
#   - check: xprof -g check's rate of stacks on which libunwind disagreed
#     with the native walk;
#   - same run: the leaf TVD and the unnamed leaves of xprof and of perf
#     watching the same execution (see same() below): a distance there
#     is the tools', not the program's;
#   - for a JIT runtime, the share of JIT-compiled leaves and the TVD with
#     all of them as one leaf: a JIT that reuses code addresses names one
#     range twice in its perf map, and perf names the whole run after the
#     first entry while xprof names each sample after the entry of its time
#     (node's sort comparator compiled where the top-level loop's code was:
#     perf calls it the loop), which moves shares between JIT names
#     without any unwinding difference.
# perf's kernel frames are dropped (xprof samples user stacks; a sample in
# the kernel has the system call's user frame as its leaf in both).  Names
# are compared after folding glibc's internal prefixes (__GI_, __libc_,
# _IO_, leading underscores), its large-file aliases (pread64), its
# memcpy variants (the same code as memmove's), symbol versions (@@GLIBC_*),
# GCC's clone suffixes (.constprop.0, .isra.0, .part.0, .cold) and C++
# parameter lists, since the two tools pick different aliases for the same
# code (doc/names.md); inlined functions are folded into the function
# they were inlined into in both (perf names them where it finds debug
# information, xprof too, each its own way); unnamed leaves are compared
# by module.
#
# PROGRAM: python sqlite xz openssl node xz-mt dd (default: all).  The
# Debian packages they need are installed with apt-get when missing.
# ACC_SCALE (default 1) multiplies every workload; ACC_KEEP=1 keeps the
# work directory (folded stacks of both tools, perf's data).
set -uo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-build}
[[ $BUILD = /* ]] || BUILD=$SRC/$BUILD
shift || true
XPROF=$BUILD/xprof
SCALE=${ACC_SCALE:-1}
PROGRAMS=("$@")
((${#PROGRAMS[@]})) || PROGRAMS=(python sqlite xz openssl node xz-mt dd)

[ -x "$XPROF" ] || { echo "accuracy: no $XPROF: build first" >&2; exit 2; }

# --- the Debian packages the workloads need -----------------------------------
need=()
for p in python3 sqlite3 xz-utils openssl nodejs coreutils linux-perf; do
	dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if ((${#need[@]})); then
	echo "accuracy: installing ${need[*]}" >&2
	apt-get update -qq >/dev/null && apt-get install -y -qq "${need[@]}" >/dev/null ||
		{ echo "accuracy: cannot install ${need[*]}" >&2; exit 1; }
fi
PERF=$(command -v perf) || { echo "accuracy: no perf" >&2; exit 1; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/xprof-accuracy.XXXXXX")
if [ "${ACC_KEEP:-0}" = 1 ]; then
	echo "accuracy: work directory: $WORK" >&2
else
	trap 'rm -rf "$WORK"' EXIT
fi
cd "$WORK" || exit 1

# Input: compressible text (base64 of random bytes, 4 MiB per scale unit).
head -c $((3000000 * SCALE)) /dev/urandom | base64 >text.txt
N=$((1000000 * SCALE))

# The workload of PROGRAM, run as "$@" followed by the program and its
# arguments ("$@": the tool and its options, ending in --).  python's
# string hashes are randomized per process, and its dict's probe lengths
# with them (the static function that looks up string keys took 19-31% of
# the time from run to run): the seed is fixed, so each run does the same
# work.
PY="import json
d = {}
for i in range($((8 * N))): d[str(i % 5000)] = d.get(str(i % 5000), 0) + i * i
print(len(json.dumps(d)))"
SQL="CREATE TABLE t(a INTEGER, b TEXT);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT $N)
INSERT INTO t SELECT x, hex(randomblob(16)) FROM c; CREATE INDEX i ON t(b);
SELECT count(*), sum(length(b)) FROM t WHERE b > '8';"
JS="let s = 0;
function f(i) { return (i * 2654435761) % 1000003; }
for (let r = 0; r < $((12 * SCALE)); r++) { const a = [];
  for (let i = 0; i < 200000; i++) a.push(f(i + r));
  a.sort((x, y) => x - y); s += a[7]; }
console.log(s);"
workload() {
	local p=$1
	shift
	case $p in
	python) PYTHONHASHSEED=0 "$@" /usr/bin/python3 -c "$PY" ;;
	sqlite) "$@" sqlite3 :memory: "$SQL" ;;
	xz) "$@" xz -T1 -6 -c text.txt ;;
	xz-mt) "$@" xz -T2 --block-size=1MiB -6 -c text.txt ;;
	openssl) "$@" openssl speed -seconds $((2 * SCALE)) -bytes 16384 sha256 aes-128-cbc ;;
	node) "$@" node --perf-basic-prof -e "$JS" ;;
	dd) "$@" dd if=/dev/zero of=/dev/null bs=64 count=$((1000000 * SCALE)) ;;
	*) echo "accuracy: no program '$p'" >&2; return 2 ;;
	esac
}

# perf script's samples as folded stacks (root first, comm first), user
# frames only: "name+0xOFF (dso)" becomes name, "[unknown] (dso)" stays.
collapse_perf() {
	awk '
	/^[^ \t]/ { comm = $1; n = 0; addr = ""; next }
	/^[ \t]+[0-9a-f]+ / {
		if ($1 ~ /^ffffffff/ || $0 ~ /\[kernel\.kallsyms\]/) next
		# An address inside inlined code is printed once per function of
		# its inline chain, the innermost first: keep the outermost,
		# the one it has a symbol for (xprof report --no-inline does).
		if ($1 == addr && n) n--
		addr = $1
		name = $2
		for (i = 3; i <= NF && $i !~ /^\(/; i++) name = name " " $i
		sub(/\+0x[0-9a-f]+$/, "", name)
		if (name == "[unknown]") {
			# keep the module: "[unknown] (/usr/lib/.../libsqlite3.so.0.8.6)"
			dso = $NF; gsub(/[()]/, "", dso); sub(/.*\//, "", dso)
			name = "[unknown] " dso
		}
		f[++n] = name
		next
	}
	/^$/ {
		if (n) {
			s = comm
			for (i = n; i >= 1; i--) s = s ";" f[i]
			c[s]++
		}
		n = 0
	}
	END { for (s in c) print s, c[s] }'
}

# metrics XPROF.folded PERF.folded PERF2.folded NAME CHECK XPROF_SAMPLES: the
# comparison table of one program (xprof's folded stacks weighted by CPU
# time; XPROF_SAMPLES, its sample count, sizes the sampling yardsticks).
# CHECK "same": the one line of same() (PERF2 is not read).
metrics() {
	awk -v name="$4" -v check="$5" -v nx="$6" '
	function norm(x) {
		if (x ~ /::/) sub(/\(.*$/, "", x)   # C++: one tool prints the parameters
		gsub(/\.(constprop|isra|part|cold|lto_priv)(\.[0-9]+)?/, "", x)
		sub(/@.*$/, "", x)   # a symbol version: perf prints pthread_mutex_lock@@GLIBC_2.2.5
		sub(/^__GI_/, "", x); sub(/^__libc_/, "", x); sub(/^_IO_/, "", x)
		sub(/^_+/, "", x)
		# the memcpy variants of glibc are its memmove ones, at the same addresses
		sub(/^memcpy_/, "memmove_", x)
		# the large-file aliases of glibc: pread64 is pread
		if (x ~ /^(pread|pwrite|mmap|lseek|open|openat|fopen|stat|fstat|lstat|fstatat|ftruncate|preadv|pwritev|sendfile|fallocate|readdir|getdents)64$/)
			sub(/64$/, "", x)
		return x
	}
	# A function named by a JIT map (node: "JS:*name", "Builtin: name").
	function jit(x) { return x ~ /^[A-Z][A-Za-z]*:[~*^]? ?[^:]/ && x !~ /::/ }
	# Sort v[1..n] in place (insertion sort: n is 100).
	function sort_n(v, n,    i, j, x) {
		for (i = 2; i <= n; i++) { x = v[i]; for (j = i - 1; j >= 1 && v[j] > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
	}
	function unknown(x) { return x ~ /^\[unknown\]|^0x[0-9a-f]+$|\+0x[0-9a-f]+$/ }
	# An unnamed leaf, by module: "[unknown] libsqlite3.so.0.8.6" or "libsqlite3.so.0.8.6+0x12".
	function unknown_key(x) {
		if (x ~ /^\[unknown\] /) { sub(/^\[unknown\] /, "", x) }
		else if (x ~ /\+0x[0-9a-f]+$/) { sub(/\+0x[0-9a-f]+$/, "", x) }
		else x = "?"
		return "[unknown in " x "]"
	}
	# tvd(A, B, V, L): the TVD between files A and B of the shares V over the leaves L.
	function tvd(a, b, v, l,    x, d, r) {
		r = 0
		for (x in l) {
			d = 100 * (v[a, x] / tot[a] - v[b, x] / tot[b])
			r += (d < 0 ? -d : d) / 2
		}
		return r
	}
	{
		t = FILENAME == ARGV[1] ? 1 : FILENAME == ARGV[2] ? 2 : 3
		n = $NF; line = $0; sub(/ [0-9]+$/, "", line)
		k = split(line, fr, ";")
		leaf = norm(fr[k])
		if (unknown(fr[k])) { unk[t] += n; leaf = unknown_key(fr[k]) }
		share[t, leaf] += n; leaves[leaf] = 1; tot[t] += n
		# the same with every JIT-compiled function as one leaf
		jl = jit(fr[k]) ? "[JIT code]" : leaf
		jshare[t, jl] += n; jleaves[jl] = 1; njit[t] += jit(fr[k]) ? n : 0
		for (i = 2; i <= k; i++)
			if (fr[i] ~ /^(__libc_start_call_main|__libc_start_main(_impl)?|start_thread)$/) {
				full[t] += n
				break
			}
	}
	END {
		if (!tot[1] || !tot[2] || (!tot[3] && check != "same")) {
			printf "%-8s  no samples (xprof %d, perf %d and %d)\n", name, nx, tot[2], tot[3]
			exit
		}
		for (l in leaves) {
			a = 100 * share[1, l] / tot[1]; b = 100 * share[2, l] / tot[2]
			top[l] = a > b ? a : b
		}
		tvd12 = tvd(1, 2, share, leaves); tvd23 = tvd(2, 3, share, leaves)
		jtvd12 = tvd(1, 2, jshare, jleaves); jtvd23 = tvd(2, 3, jshare, jleaves)
		# the sample counts of the two draws
		ns[1] = nx; ns[2] = tot[2]
		# The TVD that sampling alone gives: two tools that drew as many
		# samples as these from one distribution (every sample of the two
		# tools pooled), 100 times: the mean and the 95th percentile.
		srand(1)
		nl = 0; cum = 0
		for (l in leaves) { nl++; cum += share[1, l] / tot[1] + share[2, l] / tot[2]; cdf[nl] = cum }
		for (r = 1; r <= 100; r++) {
			delete cnt
			for (t = 1; t <= 2; t++)
				for (i = 0; i < ns[t]; i++) {
					u = rand() * cum; lo = 1; hi = nl
					while (lo < hi) { mid = int((lo + hi) / 2); if (cdf[mid] > u) hi = mid; else lo = mid + 1 }
					cnt[t, lo]++
				}
			d = 0
			for (i = 1; i <= nl; i++) {
				x = 100 * (cnt[1, i] / ns[1] - cnt[2, i] / ns[2])
				d += (x < 0 ? -x : x) / 2
			}
			noise[r] = d
		}
		sort_n(noise, 100)
		noise_mean = 0
		for (r = 1; r <= 100; r++) noise_mean += noise[r] / 100
		# Unnamed leaves: the difference that sampling alone gives, 95% of
		# the time (two binomial draws of these sizes, the share pooled).
		pu = (nx * unk[1] / tot[1] + unk[2]) / (nx + tot[2])
		unoise = 196 * sqrt(pu * (1 - pu) * (1 / nx + 1 / tot[2]))
		if (check == "same") {
			printf "          same run (perf -g watching xprof record): samples %d / %d; TVD %.1f points (sampling alone: %.1f, 95%% under %.1f); unknown leaves %.1f%% / %.1f%% (95%% within %.1f)",
				nx, tot[2], tvd12, noise_mean, noise[95], 100 * unk[1] / tot[1], 100 * unk[2] / tot[2], unoise
			if (njit[1] || njit[2])
				printf "; JIT code %.1f%% / %.1f%%, TVD with it as one leaf %.1f", 100 * njit[1] / tot[1], 100 * njit[2] / tot[2], jtvd12
			printf "\n"
			exit
		}
		printf "%-8s  samples xprof %d perf %d; TVD %.1f points (sampling alone: %.1f, 95%% under %.1f; perf against a second run of perf: %.1f); complete %.1f%% / %.1f%%; unknown leaves %.1f%% / %.1f%% (sampling alone: 95%% within %.1f); check: %s\n",
			name, nx, tot[2], tvd12, noise_mean, noise[95], tvd23, 100 * full[1] / tot[1], 100 * full[2] / tot[2],
			100 * unk[1] / tot[1], 100 * unk[2] / tot[2], unoise, check
		if (njit[1] || njit[2])
			printf "          JIT code %.1f%% / %.1f%%; TVD with all JIT code as one leaf: %.1f points (perf against perf: %.1f)\n",
				100 * njit[1] / tot[1], 100 * njit[2] / tot[2], jtvd12, jtvd23
		for (r = 0; r < 6; r++) {
			best = ""; bv = -1
			for (l in top) if (top[l] > bv) { bv = top[l]; best = l }
			if (best == "" || bv < 1) break
			printf "          %-44s xprof %5.1f%%  perf %5.1f%%\n", substr(best, 1, 44),
				100 * share[1, best] / tot[1], 100 * share[2, best] / tot[2]
			delete top[best]
		}
	}' "$1" "$2" "$3"
}

# same PROGRAM: xprof against perf in one execution.  perf (frame
# pointers: only the leaves are compared) watches the whole `xprof record`
# run, so the two sample the same instructions of the same run, and what
# changes from run to run in the program drops out of their distance.
# The xprof process's own samples and its stops' kernel time do not count
# (perf drops kernel frames: a stop's kernel time counts at the stopped
# thread's leaf, the one xprof samples, ~1% of the time at 999 Hz).
same() {
	local p=$1 nx
	workload "$p" "$PERF" record -q -F 999 -g -o "$p.perfw" -- \
		"$XPROF" record -F 999 -o "$p.xprofw" -- >/dev/null 2>"$p.perfw.err"
	"$XPROF" report -i "$p.xprofw" --folded --no-inline -o "$p.xprofw.folded" 2>>"$p.perfw.err"
	nx=$("$XPROF" report -i "$p.xprofw" --header-only 2>>"$p.perfw.err" |
		awk '$1 == "#" && $2 == "samples" { print $4 + 0 }')
	"$PERF" script -i "$p.perfw" 2>>"$p.perfw.err" | collapse_perf |
		grep -v '^xprof;' >"$p.perfw.folded"
	metrics "$p.xprofw.folded" "$p.perfw.folded" /dev/null "$p" same "$nx"
}

for p in "${PROGRAMS[@]}"; do
	workload "$p" "$XPROF" record -F 999 -g check -o "$p.xprof" -- >/dev/null 2>"$p.xprof.err"
	"$XPROF" report -i "$p.xprof" --folded --no-inline -o "$p.xprof.folded" 2>>"$p.xprof.err"
	nx=$("$XPROF" report -i "$p.xprof" --header-only 2>>"$p.xprof.err" |
		awk '$1 == "#" && $2 == "samples" { print $4 + 0 }')
	for run in perf perf2; do
		workload "$p" "$PERF" record -q -F 999 --call-graph dwarf -o "$p.$run" -- \
			>/dev/null 2>"$p.$run.err"
		"$PERF" script -i "$p.$run" 2>>"$p.$run.err" | collapse_perf >"$p.$run.folded"
	done
	check=$(sed -n 's/.*unwind check: libunwind disagreed on \([0-9]* of [0-9]*\) stacks (\(.*\)).*/\1 (\2)/p' \
		"$p.xprof.err")
	metrics "$p.xprof.folded" "$p.perf.folded" "$p.perf2.folded" "$p" "${check:-none}" "$nx"
	same "$p"
done
