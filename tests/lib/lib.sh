# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# The library every integration test sources first:
#     . "$(dirname "$0")/../lib/lib.sh"
#
# It gives each test a private temporary directory (also the working
# directory, so a default xprof.data lands there), removed by an EXIT trap
# that first kills every process the test started; commands run with their
# exact exit status checked (expect_exit); a skip (exit 77) when ptrace is
# not permitted; readiness lines from the targets (ready_init, wait_ready);
# and statistics over folded stacks whose assertions print the figures
# whether they pass or fail, so a log always shows the numbers.
#
# Rules it supports (doc/design.md, Tests): drive the real binary; write its output
# to files and inspect the files (never pipe xprof into grep); statistical
# assertions, never exact sample counts; wait for readiness, never sleep.
#
# Environment (set by ctest, see tests/CMakeLists.txt; derived from this
# file's location when a test is run by hand: bash tests/integration/t....sh):
#   XPROF        the xprof binary              XP_TARGETS  built targets
#   XP_SRC       the source tree               XP_DATA     tests/data
#   XP_BUILD     the build tree
# Knobs: XP_KEEP_TMP=1 keeps the temporary directory; XP_CMD_TIMEOUT
# (seconds, default 120) bounds every command run by expect_exit/start_bg.

set -Eeuo pipefail

XP_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
XP_SRC=${XP_SRC:-$(cd "$XP_LIB/../.." && pwd)}
XP_BUILD=${XP_BUILD:-$XP_SRC/build}
XPROF=${XPROF:-$XP_BUILD/xprof}
XP_TARGETS=${XP_TARGETS:-$XP_BUILD/targets}
XP_DATA=${XP_DATA:-$XP_SRC/tests/data}
XP_HELPERS=$XP_BUILD/helpers
XP_CMD_TIMEOUT=${XP_CMD_TIMEOUT:-120}
XP_TEST=$(basename "$0" .sh)
# Kept after the test (screenshots, reports to look at after a failure).
XP_ARTIFACTS=$XP_BUILD/test-artifacts/$XP_TEST
export XPROF XP_TARGETS XP_SRC XP_DATA XP_BUILD
# A test must not inherit readiness from an outer test or shell.
unset XP_READY_FIFO

XP_FAILS=0       # failed assertions so far
XP_GAPS=0        # checks that failed as a known gap said (known_gap)
XP_RUNS=0        # commands run by expect_exit/check_exit
XP_PGIDS=()      # process groups started by start_bg
XP_PIDS=()       # other processes to kill at exit (from ready lines)
XP_CHILDREN=()   # targets started by start_target (children of this shell)
declare -A XP_BG # start_bg name -> pid

# --- reporting ---------------------------------------------------------------

# say MSG...: a line of the test's log.
say() {
	printf '%s\n' "$*"
}

# fail MSG...: record a failed assertion and go on (the test exits 1 at
# the end); for a failure that makes the rest meaningless use fail_now.
fail() {
	XP_FAILS=$((XP_FAILS + 1))
	printf 'FAIL: %s\n' "$*"
}

# fail_now MSG...: record the failure and end the test now.
fail_now() {
	fail "$@"
	exit 1
}

# known_gap GAP CHECK [ARGS...]: a check that the known gap GAP keeps from
# passing, held to the bound where it belongs (git's test_expect_failure).
# CHECK is an assertion of this library (or a function that records its
# failures with fail); it runs in a subshell, and:
#   - it fails, as expected: its failure is printed as "  known gap: GAP:
#     <its message>", and the test goes on without a failure;
#   - it passes (its "ok:" line is printed): the gap has closed, or the
#     check no longer tests it: a failure, "FAIL: known gap closed: GAP:
#     ...", so that the mark is taken away and the check holds from then on;
#   - it cannot be made (it ended the subshell, as fail_now does, or
#     returned non-zero, as a misspelt command does): a failure.
# Say in GAP what the gap is, so that the log names it.  finish counts the
# gaps still open on its PASS line.
known_gap() {
	local gap=$1 out fails line before=$XP_FAILS
	shift
	out=$("$@" && printf '\n_xp_known_gap %d\n' "$((XP_FAILS - before))") || true
	fails=${out##*_xp_known_gap }
	out=${out%$'\n'_xp_known_gap *}
	if [[ ! $fails =~ ^[0-9]+$ ]]; then
		fail "known gap: $gap: the check did not complete: $(_xp_quote "$@")"
		[[ -z $out ]] || printf '%s\n' "$out" | sed 's/^/  | /'
		return 0
	fi
	while IFS= read -r line; do
		if [[ $line == "FAIL: "* ]]; then
			say "  known gap: $gap: ${line#FAIL: }"
		elif [[ $line ]]; then
			say "$line"
		fi
	done <<<"$out"
	if ((fails)); then
		XP_GAPS=$((XP_GAPS + 1))
	else
		fail "known gap closed: $gap: the check passes: remove known_gap from it"
	fi
}

# skip REASON...: the test cannot run here (ctest reports it as skipped).
skip() {
	if ((XP_FAILS)); then
		fail_now "cannot skip ($*): $XP_FAILS assertion(s) already failed"
	fi
	printf 'SKIP: %s: %s\n' "$XP_TEST" "$*"
	exit 77
}

# finish: end of a test; exit status 1 if any assertion failed.
finish() {
	if ((XP_FAILS)); then
		printf 'FAIL: %s: %d assertion(s) failed\n' "$XP_TEST" "$XP_FAILS"
		exit 1
	fi
	if ((XP_GAPS)); then
		printf 'PASS: %s (%d known gap(s) still open)\n' "$XP_TEST" "$XP_GAPS"
	else
		printf 'PASS: %s\n' "$XP_TEST"
	fi
	exit 0
}

# show_file LABEL FILE [MAX_LINES]: a file's contents, indented, in the log.
show_file() {
	local label=$1 file=$2 max=${3:-40} n
	if [[ ! -e $file ]]; then
		say "  -- $label: (no file $file)"
		return 0
	fi
	n=$(wc -l <"$file")
	if [[ ! -s $file ]]; then
		say "  -- $label: (empty)"
		return 0
	fi
	say "  -- $label ($n lines):"
	head -n "$max" "$file" | sed 's/^/  | /'
	if ((n > max)); then
		say "  | ... ($((n - max)) more lines)"
	fi
}

# --- temporary directory and clean-up ----------------------------------------

# _xp_is_ours PID: PID still runs with this test's XP_READY_FIFO in its
# environment, so it is the target that announced itself and not a later
# process that reused the number (pid_max may be as low as 32768).
_xp_is_ours() {
	[[ ${XP_READY_FIFO:-} ]] || return 1
	grep -qzxF "XP_READY_FIFO=$XP_READY_FIFO" "/proc/$1/environ" 2>/dev/null
}

_xp_kill_all() {
	local pgid pid alive=0 i kept=()
	for pid in "${XP_PIDS[@]}"; do
		if _xp_is_ours "$pid"; then
			kept+=("$pid")
		fi
	done
	XP_PIDS=("${kept[@]}")
	# Targets are not profilers: nothing to finish quietly.
	for pid in "${XP_CHILDREN[@]}"; do
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	for pgid in "${XP_PGIDS[@]}"; do
		kill -TERM -- "-$pgid" 2>/dev/null && alive=1
	done
	for pid in "${XP_PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null && alive=1
	done
	((alive)) || return 0
	# Up to 2 s to go quietly (a profiler detaches), then SIGKILL.
	for ((i = 0; i < 20; i++)); do
		alive=0
		for pgid in "${XP_PGIDS[@]}"; do
			kill -0 -- "-$pgid" 2>/dev/null && alive=1
		done
		for pid in "${XP_PIDS[@]}"; do
			kill -0 "$pid" 2>/dev/null && alive=1
		done
		((alive)) || return 0
		sleep 0.1
	done
	for pgid in "${XP_PGIDS[@]}"; do
		kill -KILL -- "-$pgid" 2>/dev/null || true
	done
	for pid in "${XP_PIDS[@]}"; do
		kill -KILL "$pid" 2>/dev/null || true
	done
}

_xp_exit() {
	local rc=$?
	trap - EXIT
	set +e
	_xp_kill_all
	if ((rc == 0 && XP_FAILS)); then
		printf 'FAIL: %s: %d assertion(s) failed\n' "$XP_TEST" "$XP_FAILS"
		rc=1
	elif ((rc != 0 && rc != 77 && XP_FAILS == 0)); then
		printf 'FAIL: %s: exited with status %d (line %s)\n' "$XP_TEST" "$rc" \
			"${XP_LAST_LINE:-?}"
	fi
	cd / || true
	if [[ ${XP_KEEP_TMP:-} ]]; then
		say "# kept $XP_TMP"
	else
		rm -rf "$XP_TMP"
	fi
	exit "$rc"
}

XP_TMP=$(mktemp -d "${TMPDIR:-/tmp}/$XP_TEST.XXXXXX")
trap _xp_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'XP_LAST_LINE=$LINENO' ERR
cd "$XP_TMP"
mkdir -p "$XP_ARTIFACTS"
# The files a recording keeps for its report (record/capture.h) go to the
# test's own directory, not to the home of whoever runs the tests.
export XPROF_CACHE_DIR=$XP_TMP/xprof-cache

if [[ ! -x $XPROF ]]; then
	fail_now "xprof binary '$XPROF' not found: build first (cmake --build build)"
fi
say "# $XP_TEST: xprof=$XPROF tmp=$XP_TMP"

# --- running commands ----------------------------------------------------------

_xp_quote() {
	local out
	printf -v out '%q ' "$@"
	printf '%s' "${out% }"
}

# _xp_check FATAL CODE COMMAND...: expect_exit and check_exit.
_xp_check() {
	local fatal=$1 want=$2 status alt alts
	shift 2
	XP_RUNS=$((XP_RUNS + 1))
	XP_OUT=$XP_TMP/run$XP_RUNS.out
	XP_ERR=$XP_TMP/run$XP_RUNS.err
	XP_STATUS=$XP_TMP/run$XP_RUNS.status
	say "# run $XP_RUNS: $(_xp_quote "$@")"
	if declare -F "$1" >/dev/null; then
		# A shell function of the test: it bounds its own time.
		status=0
		"$@" <"${XP_STDIN:-/dev/null}" >"$XP_OUT" 2>"$XP_ERR" || status=$?
		echo "exit $status" >"$XP_STATUS"
	else
		perl "$XP_LIB/run.pl" "$XP_STATUS" "$XP_CMD_TIMEOUT" "$@" \
			<"${XP_STDIN:-/dev/null}" >"$XP_OUT" 2>"$XP_ERR"
	fi
	status=$(cat "$XP_STATUS")
	IFS='|' read -ra alts <<<"$want"
	for alt in "${alts[@]}"; do
		[[ $alt == *" "* ]] || alt="exit $alt"
		if [[ $status == "$alt" ]]; then
			say "  ok: $alt"
			return 0
		fi
	done
	[[ $want == *[" |"]* ]] || want="exit $want"
	fail "expected $want, got '$status': $(_xp_quote "$@")"
	show_file stderr "$XP_ERR"
	show_file stdout "$XP_OUT" 10
	if ((fatal)); then
		exit 1
	fi
	return 0
}

# expect_exit CODE COMMAND [ARGS...]: run COMMAND (stdin from /dev/null or
# $XP_STDIN), its stdout and stderr to the files $XP_OUT and $XP_ERR (new
# ones for every run, kept until the end of the test); it must exit with
# exactly CODE: death by a signal, a timeout ($XP_CMD_TIMEOUT) or any other
# code is a failure that ends the test, after printing the command, its
# stderr and the start of its stdout.  COMMAND may be a shell function of
# the test, run in this shell (it must bound its own time).  ($XP_STATUS
# holds "exit N" or "signal N" as written by run.pl.)  CODE may also be a
# whole status line such as "signal 11", to check that a target itself
# dies of a signal, or alternatives such as "0|1" ($XP_STATUS tells which).
expect_exit() {
	_xp_check 1 "$@"
}

# check_exit CODE COMMAND [ARGS...]: as expect_exit, but a mismatch is
# recorded and the test goes on (for lists of independent checks).
check_exit() {
	_xp_check 0 "$@"
}

# start_bg NAME COMMAND [ARGS...]: start COMMAND in the background, in a
# process group of its own (killed by the EXIT trap), stdout and stderr to
# $XP_TMP/NAME.out and NAME.err.  $XP_BG_PID is the process group (the
# pid of run.pl, whose child is COMMAND: take a target's own pid from its
# readiness line).  Use wait_bg NAME CODE to reap it and check its status.
start_bg() {
	local name=$1
	shift
	setsid perl "$XP_LIB/run.pl" "$XP_TMP/$name.status" "$XP_CMD_TIMEOUT" "$@" \
		</dev/null >"$XP_TMP/$name.out" 2>"$XP_TMP/$name.err" &
	XP_BG_PID=$!
	XP_BG[$name]=$XP_BG_PID
	XP_PGIDS+=("$XP_BG_PID")
	say "# started $name (pid $XP_BG_PID): $(_xp_quote "$@")"
}

# wait_bg NAME CODE: wait for the command started as NAME; it must have
# exited with exactly CODE (failure ends the test, as expect_exit).
wait_bg() {
	local name=$1 want=$2 status
	wait "${XP_BG[$name]}" || true
	status=$(cat "$XP_TMP/$name.status" 2>/dev/null || echo "no status")
	[[ $want == *" "* ]] || want="exit $want"
	if [[ $status == "$want" ]]; then
		say "  ok: $name: $want"
		return 0
	fi
	show_file "$name stderr" "$XP_TMP/$name.err"
	show_file "$name stdout" "$XP_TMP/$name.out" 10
	fail_now "$name: expected $want, got '$status'"
}

# --- readiness -----------------------------------------------------------------

# ready_init: create the readiness FIFO and export XP_READY_FIFO, so every
# target started afterwards announces itself there (tests/targets/target.h).
# The test holds the FIFO open read-write: a target never blocks on it.
ready_init() {
	mkfifo "$XP_TMP/ready"
	exec {XP_READY_FD}<>"$XP_TMP/ready"
	export XP_READY_FIFO=$XP_TMP/ready
	XP_READY_LINES=()
}

# wait_ready [COUNT [TIMEOUT]]: wait for COUNT (1) more readiness lines,
# TIMEOUT (30) seconds at most for each.  Each line "ready PID PROG ROLE"
# is appended to XP_READY_LINES; XP_READY_PID is the last PID.  Those
# processes are killed at exit if they still run (and still have this
# test's XP_READY_FIFO in their environment).  A timeout fails the test, showing the
# stderr of everything started with start_bg.
wait_ready() {
	local count=${1:-1} timeout=${2:-30} line i name
	[[ ${XP_READY_FD:-} ]] || fail_now "wait_ready without ready_init"
	for ((i = 0; i < count; i++)); do
		if ! read -r -t "$timeout" -u "$XP_READY_FD" line; then
			for name in "${!XP_BG[@]}"; do
				show_file "$name stderr" "$XP_TMP/$name.err"
			done
			fail_now "no readiness line after ${timeout}s (got $i of $count)"
		fi
		say "  $line"
		XP_READY_LINES+=("$line")
		read -r _ XP_READY_PID _ <<<"$line"
		XP_PIDS+=("$XP_READY_PID")
	done
}

# start_target NAME ARGS...: start target NAME (shares, split, unwindme:
# the ones that take "-r FD") in the background with "-r 3", its readiness
# byte written to a FIFO on fd 3; wait (20 s at most) until it is ready and
# set TARGET_PID to its pid.  It is killed when the test exits.
start_target() {
	local name=$1 fifo=$XP_TMP/ready.$XP_RUNS.$RANDOM line=
	shift
	mkfifo "$fifo"
	"$XP_TARGETS/$name" "$@" -r 3 3>"$fifo" &
	TARGET_PID=$!
	XP_CHILDREN+=("$TARGET_PID")
	read -r -t 20 line <"$fifo" || true
	rm -f "$fifo"
	[[ $line == R* ]] || fail_now "target $name did not get ready"
	say "# target $name $* running as pid $TARGET_PID"
}

# --- ptrace --------------------------------------------------------------------

# skip_unless_ptrace [attach]: exit 77 with the reason when this process may
# not trace its children (or, with "attach", an existing process that is
# not its child, as 'xprof attach' does).  The probe (tests/helpers/
# ptprobe.c) does not use xprof, so an xprof bug can never become a skip.
# shellcheck disable=SC2120 # the argument is optional
skip_unless_ptrace() {
	local probe=$XP_HELPERS/ptprobe out pid scope=""
	[[ -x $probe ]] || fail_now "ptrace probe '$probe' not built: build the tests first"
	if [[ -r /proc/sys/kernel/yama/ptrace_scope ]]; then
		scope=" (kernel.yama.ptrace_scope=$(cat /proc/sys/kernel/yama/ptrace_scope))"
	fi
	if [[ ${1:-} == attach ]]; then
		# Not our child once the probe runs in its own session: the
		# probe's parent is not the sleeper's parent either way.
		setsid sleep 60 &
		pid=$!
		XP_PGIDS+=("$pid")
		if ! out=$(setsid "$probe" "$pid" 2>&1); then
			skip "cannot ptrace-attach to a non-child process$scope: $out;" \
				"run as root, lower ptrace_scope, or grant CAP_SYS_PTRACE"
		fi
		kill "$pid" 2>/dev/null || true
		return 0
	fi
	if ! out=$("$probe" 2>&1); then
		skip "ptrace is not permitted here$scope: $out;" \
			"in a container, grant CAP_SYS_PTRACE (docker run --cap-add=SYS_PTRACE)" \
			"and allow ptrace in the seccomp profile"
	fi
}

# users_self_and_nobody: sets users=(self) and, as root, adds "nobody" with
# as_user=(setpriv ...) to run a command as that ordinary user, whose files
# go into $XP_TMP/user (mode 1777).  Says why those runs are left out where
# setpriv is missing, nobody may not trace its children, or cannot run
# $XPROF.
users_self_and_nobody() {
	local out
	users=(self)
	as_user=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
	((EUID == 0)) || return 0
	chmod 755 "$XP_TMP"
	mkdir -p "$XP_TMP/user" && chmod 1777 "$XP_TMP/user"
	if ! command -v setpriv >/dev/null; then
		say "# no setpriv (util-linux): the runs as an ordinary user are skipped"
	elif ! out=$("${as_user[@]}" "$XP_HELPERS/ptprobe" 2>&1); then
		say "# user nobody may not ptrace its children here ($out): those runs are skipped"
	elif ! "${as_user[@]}" test -x "$XPROF"; then
		say "# user nobody cannot run $XPROF: those runs are skipped"
	else
		users+=(nobody)
	fi
}

# require_cmd NAME PACKAGE: skip unless NAME is on PATH.
require_cmd() {
	command -v "$1" >/dev/null 2>&1 || skip "$1 not found (Debian package: $2)"
}

# is_sanitized_build: whether $XPROF was built with the sanitizers
# (scripts/test.sh --sanitize): a controller two to three times slower, for
# the few accuracy bounds that depend on its speed.
is_sanitized_build() {
	grep -qx 'XPROF_SANITIZE:BOOL=ON' "$XP_BUILD/CMakeCache.txt" 2>/dev/null
}

# has_test_hooks: whether $XPROF was built with the failure-injection hooks
# (-DXPROF_TEST_HOOKS=ON, as scripts/test.sh builds it): XPROF_TEST_FAIL_ALLOC
# and the like are ignored without them, so the tests of those paths skip.
has_test_hooks() {
	grep -qx 'XPROF_TEST_HOOKS:BOOL=ON' "$XP_BUILD/CMakeCache.txt" 2>/dev/null
}

# --- waiting and /proc -----------------------------------------------------------

# wait_until SECONDS COMMAND...: poll COMMAND (every 50 ms) until it succeeds;
# 1 if it never did.  For conditions with no event to wait on (a thread's CPU
# time moving, a process stopping), never as a blind delay.
wait_until() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		((SECONDS <= end)) || return 1
		sleep 0.05
	done
}

# task_field PID TID N: field N of /proc/PID/task/TID/stat, counted from the
# state (3) as proc(5) does, read after the last ')' of the comm.
task_field() {
	local stat
	stat=$(cat "/proc/$1/task/$2/stat" 2>/dev/null) || return 1
	stat=${stat##*) }
	awk -v n="$3" '{ print $(n - 2) }' <<<"$stat"
}

# other_thread PID: a thread id of process PID other than PID itself
# (nothing when it has one thread).
other_thread() {
	local t
	for t in /proc/"$1"/task/*; do
		if [[ ${t##*/} != "$1" ]]; then
			printf '%s\n' "${t##*/}"
			return 0
		fi
	done
}

# task_cpu PID TID: user + system clock ticks of a thread.
task_cpu() {
	echo $(($(task_field "$1" "$2" 14) + $(task_field "$1" "$2" 15)))
}

# --- assertions on files -------------------------------------------------------

# assert_file_matches LABEL FILE ERE: some line of FILE matches ERE.
assert_file_matches() {
	local label=$1 file=$2 re=$3
	if grep -Eq -- "$re" "$file" 2>/dev/null; then
		say "  ok: $label"
	else
		fail "$label: no line of $(basename "$file") matches /$re/"
		show_file "$(basename "$file")" "$file"
	fi
}

# assert_file_lacks LABEL FILE ERE: FILE exists and no line of it matches
# ERE (a missing or unreadable file fails: it proves nothing).
assert_file_lacks() {
	local label=$1 file=$2 re=$3
	if [[ ! -f $file || ! -r $file ]]; then
		fail "$label: no file $file to look in"
	elif grep -Eq -- "$re" "$file"; then
		fail "$label: $(basename "$file") has a line matching /$re/"
		show_file "$(basename "$file")" "$file"
	else
		say "  ok: $label"
	fi
}

# assert_file_empty LABEL FILE / assert_file_nonempty LABEL FILE
assert_file_empty() {
	if [[ -e $2 && ! -s $2 ]]; then
		say "  ok: $1"
	else
		fail "$1: $2 is not empty (or missing)"
		show_file "$(basename "$2")" "$2"
	fi
}

assert_file_nonempty() {
	if [[ -s $2 ]]; then
		say "  ok: $1"
	else
		fail "$1: $2 is empty or missing"
	fi
}

# assert_files_equal LABEL EXPECTED GOT: identical contents (diff shown).
assert_files_equal() {
	local label=$1 want=$2 got=$3
	if cmp -s -- "$want" "$got"; then
		say "  ok: $label"
	else
		fail "$label: $(basename "$got") differs from $(basename "$want")"
		diff -u -- "$want" "$got" | head -n 40 | sed 's/^/  | /' || true
	fi
}

# assert_eq LABEL GOT WANT
assert_eq() {
	if [[ $2 == "$3" ]]; then
		say "  ok: $1: $2"
	else
		fail "$1: got '$2', expected '$3'"
	fi
}

# assert_within LABEL VALUE LO HI: LO <= VALUE <= HI (decimals); prints
# the figure either way.  An empty VALUE fails.
assert_within() {
	if awk -v v="$2" -v lo="$3" -v hi="$4" 'BEGIN { exit !(v != "" && v + 0 >= lo && v + 0 <= hi) }'; then
		say "  ok: $1: $2 (want $3..$4)"
	else
		fail "$1: '$2' (want $3..$4)"
	fi
}

# assert_error_line LABEL FILE: FILE (a stderr) has exactly one line that
# starts with "xprof: error: ", and it is the first line.
assert_error_line() {
	local label=$1 file=$2 n first=""
	n=$(grep -c '^xprof: error: ' "$file" || true)
	IFS= read -r first <"$file" || true
	if [[ $n == 1 && $first == "xprof: error: "* ]]; then
		say "  ok: $label: $first"
	else
		fail "$label: expected one 'xprof: error:' line first on stderr, found $n"
		show_file stderr "$file"
	fi
}

# recorder_stat DATAFILE NAME: the value of the recorder's statistic NAME
# (a STAT record, as 'report --header-only' prints it); empty if absent.
recorder_stat() {
	"$XPROF" report -i "$1" --header-only -o "$XP_TMP/stat.header" ||
		fail "report --header-only of $1 failed"
	awk -v n="$2" '$2 == "stat" && $3 == n { v = $5 } END { print v }' "$XP_TMP/stat.header"
}

# --- folded stacks -------------------------------------------------------------
#
# FILE is the output of 'xprof report --folded'.  A CONDITION selects
# samples: "frame:RE", "leaf:RE", "comm:RE", "chain:A;B;C", "tail:A;B",
# "root:A;B", "stack:ERE" (the whole printed stack), "all", or one of those
# prefixed by "!" (negation).  Chain elements are whole-frame EREs, "..."
# stands for any frames.  The grammar is documented in tests/lib/folded.awk.

# folded_stats FILE CONDITION [GIVEN]: prints "HITS CONSIDERED TOTAL".  The
# conditions go through the environment, not -v, whose escapes awk reads.
folded_stats() {
	XP_FOLDED_PRED=$2 XP_FOLDED_GIVEN=${3:-} awk -f "$XP_LIB/folded.awk" "$1"
}

# folded_total FILE: total number of samples.
folded_total() {
	local total
	read -r _ _ total < <(folded_stats "$1" all)
	printf '%s\n' "$total"
}

# assert_folded_format FILE: every line is "frame[;frame...] count" with
# no empty frame and a positive count.
assert_folded_format() {
	local file=$1 bad
	bad=$(awk '!/^[^; ][^;]*(;[^;]+)* [1-9][0-9]*$/ { n++; if (n <= 5) print FNR ": " $0 }
		END { if (!NR) print "(no lines)" }' "$file")
	if [[ -z $bad ]]; then
		say "  ok: $(basename "$file") is folded stacks ($(wc -l <"$file") lines)"
	else
		fail "$(basename "$file") is not in folded format:"
		printf '%s\n' "$bad" | sed 's/^/  | /'
	fi
}

# assert_samples_at_least LABEL MIN FILE: the total is at least MIN.
assert_samples_at_least() {
	local label=$1 min=$2 total
	total=$(folded_total "$3")
	if ((total >= min)); then
		say "  ok: $label: $total samples (want >= $min)"
	else
		fail "$label: $total samples (want >= $min)"
	fi
}

# assert_share_between LABEL LO HI FILE CONDITION [GIVEN]: the percentage of
# samples (of those matching GIVEN, if given) that match CONDITION is in
# [LO, HI].  Prints the figures either way, e.g.
#   ok: a: 49.6% (1490/3004 samples; want 46..54%)
assert_share_between() {
	local label=$1 lo=$2 hi=$3 file=$4 cond=$5 given=${6:-} stats verdict
	stats=$(folded_stats "$file" "$cond" "$given") || fail_now "$label: cannot read $file"
	verdict=$(awk -v s="$stats" -v lo="$lo" -v hi="$hi" -v given="$given" 'BEGIN {
		split(s, v, " ")
		of = given == "" ? "" : sprintf(" of %.0f matching %s", v[2], given)
		if (v[2] == 0) {
			printf "bad no samples to consider (%.0f in total%s)\n", v[3], of
			exit
		}
		p = 100 * v[1] / v[2]
		printf "%s %.1f%% (%.0f/%.0f samples%s; want %s..%s%%)\n",
			(p >= lo && p <= hi) ? "ok" : "bad", p, v[1], v[2], of, lo, hi
	}')
	if [[ $verdict == ok* ]]; then
		say "  ok: $label: ${verdict#ok }"
	else
		fail "$label: ${verdict#bad }"
	fi
}

# assert_share_at_least LABEL LO FILE CONDITION [GIVEN]
assert_share_at_least() {
	assert_share_between "$1" "$2" 100 "${@:3}"
}

# assert_share_at_most LABEL HI FILE CONDITION [GIVEN]
assert_share_at_most() {
	assert_share_between "$1" 0 "$2" "${@:3}"
}

# jit_reuse_split OUT FOLDED: how the folded stacks of tests/targets/jitreuse
# (whose output OUT ends with "truth reuse_a A reuse_b B") split its JIT
# samples: "ok ..." when reuse_a's share is within 3 points of the truth,
# "bad ...", or "none" without samples in either.
jit_reuse_split() {
	awk '/^truth / { ta = $3; tb = $5 }
		FILENAME != ARGV[1] {
			n = $NF; sub(/ [0-9]+$/, "")
			if ($0 ~ /;reuse_a$/) a += n
			if ($0 ~ /;reuse_b$/) b += n
		}
		END {
			if (a + b == 0) { print "none"; exit }
			sa = 100 * a / (a + b); d = sa - ta; if (d < 0) d = -d
			printf "%s reuse_a %.1f%% (truth %.1f%%), reuse_b %.1f%% (truth %.1f%%) of %d samples\n",
				d <= 3 ? "ok" : "bad", sa, ta, 100 - sa, tb, a + b
		}' "$1" "$2"
}

# --- flat reports --------------------------------------------------------------
#
# FILE is the output of 'xprof report --flat': a header, then one row per
# function, "Self% Total% Self Total  Function", where the percentages are
# shares of the total *weight* (CPU time in cpu mode, elapsed time in wall
# mode) and Self/Total are sample counts.  Use them where the weights, not
# the sample counts, are what a test is about.

# flat_share FILE self|total NAME: the Self% or Total% of the function
# called exactly NAME (0 when it is absent), without the % sign.
flat_share() {
	awk -v col="$2" -v name="$3" '
		/^#/ { next }
		{
			row = $0
			if (!sub(/^ *[0-9.]+% +[0-9.]+% +[0-9]+ +[0-9]+  /, "", row))
				next
			if (row != name)
				next
			v = col == "self" ? $1 : $2
			sub(/%$/, "", v)
			found = v
		}
		END { print found == "" ? 0 : found }' "$1"
}

# assert_flat_between LABEL LO HI FILE self|total NAME: NAME's share of the
# weight is in [LO, HI] percent.  Prints the figure either way, e.g.
#   ok: lane_0: 24.8% of the weight (total; want 20..30%)
assert_flat_between() {
	local label=$1 lo=$2 hi=$3 file=$4 col=$5 name=$6 v verdict
	v=$(flat_share "$file" "$col" "$name") || fail_now "$label: cannot read $file"
	verdict=$(awk -v v="$v" -v lo="$lo" -v hi="$hi" -v col="$col" 'BEGIN {
		printf "%s %.1f%% of the weight (%s; want %s..%s%%)\n",
			(v + 0 >= lo && v + 0 <= hi) ? "ok" : "bad", v, col, lo, hi
	}')
	if [[ $verdict == ok* ]]; then
		say "  ok: $label: ${verdict#ok }"
	else
		fail "$label: ${verdict#bad }"
	fi
}
