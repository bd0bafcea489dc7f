#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Job control of 'xprof record' run from a terminal, as a shell's
# foreground job (tests/helpers/ptyjob types the keys).  Without real-time
# priority (an ordinary user; nobody when run as root) the recorder samples
# from a session of its own (cmd/session.c) and the process the shell
# started stays in the job; as root it is that process itself.  Either way:
#   - Ctrl-C reaches the command, which dies of it: record exits 130 and
#     the data file has the half second that ran (>= 150 samples at 999 Hz);
#   - Ctrl-Z stops the job and the command with it (state T or t) for as
#     long as the shell keeps it stopped; 'bg' lets the command run (its
#     CPU time moves) and 'fg' brings it back; it runs to completion and
#     record exits 0 with its whole 2 s of CPU sampled (>= 1500 samples);
#     while the job is stopped or in the background the status line stays
#     off the terminal (the shell's prompt is there), and shows before;
#   - a hang-up of the terminal: 129, and the data file is written; under
#     nohup the hang-up is ignored by xprof as by the command, which runs
#     to its end with every sample (>= 1200 of 1.5 s of CPU), exit 0;
#     Ctrl-\: 131 (the recorder dies of SIGQUIT as the command does, as
#     perf record does);
#   - from a script (xprof not leading the job's process group), Ctrl-C:
#     the script goes on after xprof with status 130;
#   - SIGKILL of the process the shell started (from its own session, the
#     recorder is another process): the recorder ends the recording as if
#     it got SIGTERM, ends the command, and writes the data file; nothing
#     of it is left running.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace

PTYJOB=$XP_HELPERS/ptyjob
T=$XP_TARGETS
if ! out=$("$PTYJOB" wait -- true 2>&1); then
	skip "no pseudo-terminal here (is /dev/pts mounted?): $out"
fi
users_self_and_nobody

# The command writes its pid, so that the checks find it, its recorder
# (its parent) and the process the shell started (the recorder's parent
# when it has a session of its own).
# shellcheck disable=SC2016 # expanded by that shell
cmd=(sh -c 'echo $$ >cmd.pid; exec "$0" "$@"')
samples() { sed -n 's/.*xprof: \([0-9]*\) samples in .*/\1/p' "$1" | tail -n 1; }

for user in "${users[@]}"; do
	pre=()
	dir=$XP_TMP/self
	if [[ $user == nobody ]]; then
		dir=$XP_TMP/user/job
		pre=("${as_user[@]}" env "TMPDIR=$dir")
	fi
	mkdir -m 1777 "$dir"
	cd "$dir"
	say "## as $user"

	# Sessions of their own without real-time priority: nobody, or any
	# user but root (autogroups on).
	own=0
	if [[ $user == nobody || $EUID -ne 0 ]] &&
		[[ $(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null) == 1 ]]; then
		own=1
	fi

	say "# Ctrl-C"
	rm -f cmd.pid
	expect_exit 130 "${pre[@]}" "$PTYJOB" sleep=500 intr wait -- \
		"$XPROF" record -o c.data -- "${cmd[@]}" "$T/split" 5
	assert_file_matches "the job ended with 130" "$XP_ERR" '^ptyjob: exit 130$'
	assert_file_matches "the command died of SIGINT" "$XP_ERR" 'killed by signal 2'
	n=$(samples "$XP_ERR")
	assert_within "samples of the half second before Ctrl-C" "${n:-0}" 150 700
	expect_exit 0 "$XPROF" report -i c.data --folded --value samples -o c.folded
	assert_samples_at_least "samples in the report" 150 c.folded

	say "# Ctrl-Z, bg, fg"
	# At each stage, into the file $1: the command's state, its CPU time
	# (utime + stime) and session, and its recorder's session.
	cat >probe.sh <<-'EOF'
		p=$(cat cmd.pid)
		set -- "$1" $(cut -d" " -f3,4,6,14,15 "/proc/$p/stat")
		echo "$2 $(($5 + $6)) $4 $(cut -d" " -f6 "/proc/$3/stat")" >"$1"
	EOF
	rm -f cmd.pid
	expect_exit 0 "${pre[@]}" env PTYJOB_TTYLOG=tty.log "$PTYJOB" sleep=700 susp \
		"run=sh probe.sh stop1" sleep=700 "run=sh probe.sh stop2" bg sleep=200 \
		"run=sh probe.sh bg1" sleep=700 "run=sh probe.sh bg2" fg wait -- \
		"$XPROF" record -o z.data -- "${cmd[@]}" "$T/split" 2
	assert_file_matches "the job stopped" "$XP_ERR" '^ptyjob: stopped \(signal 20\)$'
	assert_file_matches "the job ended with 0" "$XP_ERR" '^ptyjob: exit 0$'
	read -r st1 cpu1 cmd_sid rec_sid <stop1 || true
	read -r st2 cpu2 _ <stop2 || true
	read -r _ cpu3 _ <bg1 || true
	read -r _ cpu4 _ <bg2 || true
	say "  command: stopped $st1 $cpu1 .. $st2 $cpu2 ticks, in the background $cpu3 .. $cpu4;" \
		"sessions: command $cmd_sid, recorder $rec_sid"
	[[ $st1 == [tT] && $st2 == [tT] ]] || fail "the command was not stopped with the job ($st1 $st2)"
	[[ $cpu1 && $cpu1 == "$cpu2" ]] || fail "the command ran while the job was stopped"
	((${cpu4:-0} - ${cpu3:-0} >= 20)) ||
		fail "the command hardly ran in the background (${cpu3:-?} .. ${cpu4:-?} ticks)"
	if ((own)); then
		[[ $rec_sid && $rec_sid != "$cmd_sid" ]] || fail "the recorder shares the command's session"
	fi
	# The terminal's text from the stop to 'fg' has no status line, and
	# some before Ctrl-Z (so that the check can see one).
	show_file "the terminal" tty.log 40
	awk '/^<ptyjob: susp>$/ { before = 1 } /^<ptyjob: stopped>$/ { off = 1 }
		/^<ptyjob: fg>$/ { off = 0 }
		/xprof: [0-9.]+s / { if (off) bad++; else if (!before) shown++ }
		END { exit !(shown && !bad) }' tty.log ||
		fail "a status line while the job was stopped or in the background, or none before Ctrl-Z"
	n=$(samples tty.log)
	assert_within "samples of split's 2 s of CPU" "${n:-0}" 1500 2400

	say "# hang-up, Ctrl-\\"
	expect_exit 129 "${pre[@]}" "$PTYJOB" sleep=500 hup wait -- \
		"$XPROF" record -o h.data -- "$T/split" 5
	expect_exit 0 "$XPROF" report -i h.data --folded --value samples -o h.folded
	assert_samples_at_least "samples in the report" 150 h.folded
	expect_exit 0 "${pre[@]}" "$PTYJOB" sleep=500 hup wait -- \
		nohup "$XPROF" record -o n.data -- "$T/split" 1.5
	assert_file_matches "the command ran to its end" "$XP_OUT" '^split: .*mismatches=0'
	n=$(samples "$XP_ERR")
	assert_within "samples of split's 1.5 s of CPU under nohup" "${n:-0}" 1200 1800
	expect_exit 131 "${pre[@]}" "$PTYJOB" sleep=500 quit wait -- \
		"$XPROF" record -o q.data -- "$T/split" 5

	say "# from a script"
	expect_exit 0 "${pre[@]}" "$PTYJOB" sleep=500 intr wait -- sh -c \
		'trap : INT; "$@"; echo "record: $?"' sh "$XPROF" record -o s.data -- "$T/split" 5
	assert_file_matches "the script went on with 130" "$XP_OUT" '^record: 130$'
	expect_exit 0 "$XPROF" report -i s.data --folded --value samples -o s.folded
	assert_samples_at_least "samples in the report" 150 s.folded

	((own)) || continue
	say "# SIGKILL of the process the shell started"
	rm -f cmd.pid
	# The recorder is the command's parent, the process the shell started its.
	cat >kill.sh <<-'EOF'
		while [ ! -s cmd.pid ]; do sleep 0.05; done
		r=$(cut -d" " -f4 "/proc/$(cat cmd.pid)/stat")
		echo "$r" >rec.pid
		kill -KILL "$(cut -d" " -f4 "/proc/$r/stat")"
	EOF
	expect_exit 137 "${pre[@]}" "$PTYJOB" sleep=700 "run=sh kill.sh" wait -- \
		"$XPROF" record -o k.data -- "${cmd[@]}" "$T/split" 10
	rec=$(cat rec.pid)
	cmd_pid=$(cat cmd.pid)
	# shellcheck disable=SC2016 # expanded by eval, at each try
	if ! wait_until 10 eval '[[ ! -e /proc/$rec && ! -e /proc/$cmd_pid ]]'; then
		fail "the recorder ($rec) or the command ($cmd_pid) outlived the job by 10 s"
		kill -KILL "$rec" "$cmd_pid" 2>/dev/null || true
	fi
	expect_exit 0 "$XPROF" report -i k.data --folded --value samples -o k.folded
	assert_samples_at_least "samples in the report" 300 k.folded
done
finish
