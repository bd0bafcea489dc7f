#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Samples land where the time goes, not at the next system call.  sysmix
# (tests/targets/sysmix.c) alternates ~3 us of computation with a pwrite
# and a pread and measures its own split with the thread CPU clock; the
# share of its samples inside io() (the two calls and their libc wrappers)
# must match that truth, as root and as an ordinary user.  A
# PTRACE_INTERRUPT that reaches a running thread from another CPU comes
# microseconds late, and the thread then stops at the exit of whichever
# call it entered meanwhile: 43-55% instead of 16-23% here before xprof
# interrupted running threads from their own CPU (src/interrupt.c).
#
# The truth is the program's split when nobody profiles it (a run of its
# own before the profiled ones).  A profiled run's own measure rises with
# the rate, by the stops' cost in time no sample can see: here 12.5% bare,
# 15-16% under 4000 stops a second at real-time priority, 21-24% as an
# ordinary user (whose controller preempts with a short time slice), while
# the samples stay at 11-14% at every rate, as perf's do (compute() 84-85%
# of perf's samples).  The profiled run's figure is printed beside.
#   - 999 and 3999 Hz, 3 us bursts: within 3 points of the truth, as root
#     and as an ordinary user;
#   - 335 us bursts (truth under 1%): within 1.2 points (0.5-1.1% of the
#     samples as an ordinary user, where a skid gave 2.3%).
# The unprivileged runs skip, with the reason, where that user may not
# trace its own children.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace

users=(self)
if ((EUID == 0)); then
	chmod 755 "$XP_TMP"
	mkdir -m 1777 "$XP_TMP/user"
	as_user=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
	if ! command -v setpriv >/dev/null; then
		say "# no setpriv (util-linux): the runs as an ordinary user are skipped"
	elif ! out=$("${as_user[@]}" "$XP_HELPERS/ptprobe" 2>&1); then
		say "# user nobody may not ptrace its children here ($out): those runs are skipped"
	elif ! "${as_user[@]}" test -x "$XPROF"; then
		say "# user nobody cannot run $XPROF: those runs are skipped"
	else
		users+=(nobody)
	fi
fi

# bare BURST: the program's own split, unprofiled, into truth[BURST] (the
# mean of two runs: one run's figure moves by a point or two)
declare -A truth
bare() {
	local burst=$1 one sum=0 i
	for i in 1 2; do
		expect_exit 0 env "TMPDIR=$XP_TMP" "$XP_TARGETS/sysmix" -u "$burst" 2
		one=$(sed -n 's/^sysmix: syscall_share=\([0-9.]*\) .* mismatches=0$/\1/p' "$XP_OUT")
		[[ $one ]] || fail_now "bare ${burst} us: no truth line in the output: $(cat "$XP_OUT")"
		sum=$(awk -v a="$sum" -v b="$one" 'BEGIN { print a + b }')
	done
	truth[$burst]=$(awk -v s="$sum" 'BEGIN { printf "%.1f", s / 2 }')
	say "  ${burst} us bursts, unprofiled: ${truth[$burst]}% in io()"
}

# run USER HZ BURST POINTS: the share must be within POINTS of the truth
run() {
	local user=$1 hz=$2 burst=$3 points=$4 dir=$XP_TMP own share label stats want
	local -a pre=()
	if [[ $user == nobody ]]; then
		dir=$XP_TMP/user
		pre=("${as_user[@]}" env "TMPDIR=$dir")
	fi
	label="$user, $hz Hz, ${burst} us bursts"
	expect_exit 0 "${pre[@]}" "$XPROF" record -q -F "$hz" -o "$dir/$user-$hz-$burst.data" \
		-- "$XP_TARGETS/sysmix" -u "$burst" 2
	own=$(sed -n 's/^sysmix: syscall_share=\([0-9.]*\) .* mismatches=0$/\1/p' "$XP_OUT")
	[[ $own ]] || fail_now "$label: no truth line in the output: $(cat "$XP_OUT")"
	expect_exit 0 "$XPROF" report -i "$dir/$user-$hz-$burst.data" --folded --value samples -o "$user.folded"
	stats=$(folded_stats "$user.folded" "chain:run;io")
	share=$(awk -v s="$stats" 'BEGIN { split(s, v, " "); printf "%.1f", 100 * v[1] / v[2] }')
	want="+-$points"
	if awk -v a="$share" -v b="${truth[$burst]}" -v p="$points" \
		'BEGIN { d = a - b; exit !(d <= p && d >= -p) }'; then
		say "  ok: $label: in io() ${share}% of the samples, truth ${truth[$burst]}% (want $want; the run's own ${own}%)"
	else
		fail "$label: in io() ${share}% of the samples, truth ${truth[$burst]}% (want $want; the run's own ${own}%)"
		show_file "profile" "$user.folded" 8
	fi
}

bare 3
bare 335
for user in "${users[@]}"; do
	say "## $user"
	run "$user" 999 3 3
	run "$user" 3999 3 3
	run "$user" 3999 335 1.2
done

finish
