#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# 'xprof top' shows where running processes spend their time, live:
#   - a command (split, tests/targets/split.c: a/b/c take 50/30/20% of its
#     CPU time, all of it in the shared frameless leaf): with -n 3 -s 0.5s
#     and stdout not a terminal, three plain-text blocks; in the last, the
#     TOTAL since the start of a, b and c is 50/30/20 within 10 points and
#     leaf's SELF >= 90%; top then waits for the command, whose output is
#     intact and whose exit status is top's (also 3 from 'sh -c "exit 3"');
#   - -p PID: two blocks, exit 0, and the process runs on untraced;
#   - on a terminal (script(1) gives it a pty): the view draws on the
#     alternate screen, 't' sorts by total, 'q' quits within 5 s; the
#     process runs on, untraced and not stopped;
#   - errors: a command that cannot run exits 127, a pid that does not
#     exist 1, each with one "xprof: error:" line first; bad command lines 2.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace attach

T=$XP_TARGETS

# block_count FILE: how many refreshes FILE shows.
block_count() { grep -c '^xprof top: ' "$1" || true; }

# since_total FILE FUNC: FUNC's TOTAL share since the start, in the last block of FILE.
since_total() {
	awk -v f="$2" '/^xprof top: / { delete t } $NF == f { t[f] = $4 }
		END { v = t[f]; sub(/%/, "", v); print v }' "$1"
}

# since_self FILE FUNC: the same for FUNC's SELF share.
since_self() {
	awk -v f="$2" '/^xprof top: / { delete t } $NF == f { t[f] = $3 }
		END { v = t[f]; sub(/%/, "", v); print v }' "$1"
}

# untraced_running PID: PID exists, has no tracer and is not stopped.
untraced_running() {
	local state tracer
	state=$(awk '/^State:/ { print $2 }' "/proc/$1/status" 2>/dev/null) || return 1
	tracer=$(awk '/^TracerPid:/ { print $2 }' "/proc/$1/status")
	[[ $tracer == 0 && $state != [tT] && -n $state ]]
}

say "## a command: top -n 3 -s 0.5s -- split 2"
expect_exit 0 "$XPROF" top -n 3 -s 0.5s -- "$T/split" 2
cp "$XP_OUT" cmd.out
show_file "top's output" cmd.out 60
assert_eq "refreshes" "$(block_count cmd.out)" 3
assert_within "a, total since start" "$(since_total cmd.out a)" 40 60
assert_within "b, total since start" "$(since_total cmd.out b)" 20 40
assert_within "c, total since start" "$(since_total cmd.out c)" 10 30
assert_within "leaf, self since start" "$(since_self cmd.out leaf)" 90 100
assert_file_matches "the command ran to its end" cmd.out 'mismatches=0'
assert_file_matches "top said it waits for the command" "$XP_ERR" 'runs on to its end'

say "## the command's exit status is top's"
check_exit 3 "$XPROF" top -n 1 -s 0.5s -- sh -c 'exit 3'

say "## -p PID: two refreshes, then the process runs on"
ready_init
start_bg split "$T/split" 30
wait_ready 1
TARGET_PID=$XP_READY_PID
expect_exit 0 "$XPROF" top -p "$TARGET_PID" -n 2 -s 0.5s
cp "$XP_OUT" attach.out
assert_eq "refreshes" "$(block_count attach.out)" 2
assert_within "a, total since start" "$(since_total attach.out a)" 35 65
if wait_until 5 untraced_running "$TARGET_PID"; then
	say "  ok: pid $TARGET_PID runs on, untraced"
else
	fail "pid $TARGET_PID is traced, stopped or gone after top"
fi

say "## on a terminal: keys t and q"
require_cmd script bsdutils
mkfifo keys
script -qfec "stty rows 30 cols 120; exec '$XPROF' top -s 0.5s -p $TARGET_PID" screen.raw \
	<keys >/dev/null 2>script.err &
script_pid=$!
exec {keys_fd}>keys
# screen.raw holds escape sequences: look at it as text.
screen_has() { sed 's/\x1b\[[0-9;?]*[a-zA-Z]/\n/g' screen.raw | grep -q -- "$1"; }
wait_until 20 screen_has ' leaf$' || fail_now "the view never showed leaf"
say "  ok: the view shows leaf"
printf t >&"$keys_fd"
wait_until 10 screen_has 'sorted by total' || fail "'t' did not sort by total"
started=$SECONDS
printf q >&"$keys_fd"
rc=0
wait "$script_pid" || rc=$?
exec {keys_fd}>&-
assert_eq "top's exit status after q" "$rc" 0
assert_within "seconds from q to exit" "$((SECONDS - started))" 0 5
grep -q $'\e\[?1049h' screen.raw && grep -q $'\e\[?1049l' screen.raw ||
	fail "the view did not use the alternate screen and leave it"
if wait_until 5 untraced_running "$TARGET_PID"; then
	say "  ok: pid $TARGET_PID runs on, untraced, after q"
else
	fail "pid $TARGET_PID is traced, stopped or gone after q"
fi

say "## errors"
check_exit 127 "$XPROF" top -n 1 -- ./no-such-command
assert_error_line "a command that cannot run" "$XP_ERR"
check_exit 1 "$XPROF" top -n 1 -p 999999999
assert_error_line "a pid that does not exist" "$XP_ERR"
check_exit 2 "$XPROF" top
check_exit 2 "$XPROF" top -p "$TARGET_PID" -- sleep 1
check_exit 2 "$XPROF" top -s 10ms -p "$TARGET_PID"
finish
