# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# Helpers for the integration tests of report formats, dump, help and the
# status line (tests/integration/t*.sh), sourced first:
#     . "$(dirname "$0")/../lib/xptest.sh"
#
# Each test gets a private temporary directory, also its working directory
# (removed at exit unless XP_KEEP_TMP=1), and an artifact directory that is
# kept: $XP_BUILD/test-artifacts/<test> (screenshots, reports to look at
# after a failure).  Commands run with their exact exit status checked
# (expect_exit), stdout and stderr to files, never piped into grep.  Targets
# are started in the background and waited for through a readiness FIFO
# (start_target), never with sleep, and killed from the EXIT trap.  A test
# that cannot run here (no ptrace, a missing tool) exits 77 with a reason.
#
# Environment (set by ctest, see tests/CMakeLists.txt; derived from this
# file's place when a test is run by hand): XPROF, XP_TARGETS, XP_SRC,
# XP_BUILD, XP_DATA.

set -uo pipefail

XP_LIBDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
XP_SRC=${XP_SRC:-$(cd "$XP_LIBDIR/../.." && pwd)}
XP_BUILD=${XP_BUILD:-$XP_SRC/build}
XPROF=${XPROF:-$XP_BUILD/xprof}
XP_TARGETS=${XP_TARGETS:-$XP_BUILD/targets}
XP_DATA=${XP_DATA:-$XP_SRC/tests/data}
XP_TEST=$(basename "$0" .sh)
XP_ARTIFACTS=$XP_BUILD/test-artifacts/$XP_TEST
XP_FAILS=0
XP_RUNS=0
XP_TARGET_PIDS=()

say() {
	printf '%s\n' "$*"
}

# fail MSG: a failed assertion; the test goes on and exits 1 at the end.
fail() {
	XP_FAILS=$((XP_FAILS + 1))
	printf 'FAIL: %s\n' "$*"
}

fail_now() {
	fail "$@"
	exit 1
}

# skip REASON: this test cannot run here (ctest shows it as skipped).
skip() {
	((XP_FAILS)) && fail_now "cannot skip ($*) after $XP_FAILS failure(s)"
	printf 'SKIP: %s: %s\n' "$XP_TEST" "$*"
	exit 77
}

finish() {
	if ((XP_FAILS)); then
		printf 'FAIL: %s: %d assertion(s) failed\n' "$XP_TEST" "$XP_FAILS"
		exit 1
	fi
	printf 'PASS: %s\n' "$XP_TEST"
	exit 0
}

_xp_exit() {
	local rc=$? pid
	trap - EXIT
	for pid in "${XP_TARGET_PIDS[@]}"; do
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
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
cd "$XP_TMP" || exit 1
mkdir -p "$XP_ARTIFACTS"
[[ -x $XPROF ]] || fail_now "xprof binary '$XPROF' not found: build first"
say "# $XP_TEST: xprof=$XPROF tmp=$XP_TMP artifacts=$XP_ARTIFACTS"

# show FILE [LINES]: a file in the log, indented.
show() {
	[[ -e $1 ]] || { say "  -- $1: missing"; return 0; }
	say "  -- $1:"
	head -n "${2:-30}" "$1" | sed 's/^/  | /'
}

# expect_exit CODE COMMAND...: run COMMAND (at most 120 s) with stdout in $OUT
# and stderr in $ERR (files named after the run); fail unless it exits with
# CODE exactly.
expect_exit() {
	local want=$1 rc
	shift
	XP_RUNS=$((XP_RUNS + 1))
	OUT=$XP_TMP/run$XP_RUNS.out
	ERR=$XP_TMP/run$XP_RUNS.err
	say "# run $XP_RUNS: $*"
	if declare -F "$1" >/dev/null; then
		"$@" >"$OUT" 2>"$ERR" # a shell function bounds its own time
	else
		timeout -k 5 120 "$@" >"$OUT" 2>"$ERR"
	fi
	rc=$?
	if ((rc != want)); then
		fail "'$*' exited with $rc, expected $want"
		show "$OUT" 15
		show "$ERR" 15
		return 1
	fi
	return 0
}

# require_cmd NAME PACKAGE: skip unless NAME is on PATH.
require_cmd() {
	command -v "$1" >/dev/null 2>&1 || skip "$1 not found (Debian package: $2)"
}

# require_ptrace: skip when this environment forbids tracing a child.
require_ptrace() {
	if ! "$XPROF" -q record -o "$XP_TMP/probe.data" -- true >"$XP_TMP/probe.err" 2>&1; then
		grep -q 'Operation not permitted' "$XP_TMP/probe.err" &&
			skip "ptrace is not permitted here: $(head -n1 "$XP_TMP/probe.err")"
	fi
	rm -f "$XP_TMP/probe.data"
}

# start_target NAME ARGS...: run target NAME in the background with '-r 3'
# (its readiness fd) on a FIFO, wait until it says it is ready, and set
# TARGET_PID.  The target is killed when the test exits.
start_target() {
	local name=$1 fifo=$XP_TMP/ready.$XP_RUNS.$RANDOM line=
	shift
	mkfifo "$fifo" || fail_now "cannot create $fifo"
	"$XP_TARGETS/$name" "$@" -r 3 3>"$fifo" &
	TARGET_PID=$!
	XP_TARGET_PIDS+=("$TARGET_PID")
	read -r -t 20 line <"$fifo"
	rm -f "$fifo"
	[[ $line == R* ]] || fail_now "target $name did not get ready"
	say "# target $name $* running as pid $TARGET_PID"
}

# within VALUE LOW HIGH: whether LOW <= VALUE <= HIGH (decimals).
within() {
	awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v != "" && v + 0 >= lo && v + 0 <= hi) }'
}

# check_within WHAT VALUE LOW HIGH: an assertion that prints the figure.
check_within() {
	if within "$2" "$3" "$4"; then
		say "ok: $1 = $2 (expected $3..$4)"
	else
		fail "$1 = '${2}' (expected $3..$4)"
	fi
}

# flat_share FILE FUNCTION [COLUMN]: the Self% (1) or Total% (2) of FUNCTION
# in a 'report --flat' file.
flat_share() {
	awk -v f="$2" -v c="${3:-1}" '!/^#/ && $NF == f { sub("%", "", $c); print $c; exit }' "$1"
}

# wait_until SECONDS COMMAND...: poll COMMAND (every 50 ms) until it succeeds;
# 1 if it never did.  For conditions with no event to wait on (a thread's CPU
# time moving, a process stopping), never as a blind delay.
wait_until() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		((SECONDS > end)) && return 1
		sleep 0.05
	done
	return 0
}

# task_field PID TID N: field N of /proc/PID/task/TID/stat, counted from the
# state (3) as proc(5) does, read after the last ')' of the comm.
task_field() {
	local stat
	stat=$(cat "/proc/$1/task/$2/stat" 2>/dev/null) || return 1
	stat=${stat##*) }
	awk -v n="$3" '{ print $(n - 2) }' <<<"$stat"
}

# task_cpu PID TID: user + system clock ticks of a thread.
task_cpu() {
	echo $(($(task_field "$1" "$2" 14) + $(task_field "$1" "$2" 15)))
}
