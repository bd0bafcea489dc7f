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
# interrupted running threads from their own CPU, and 4.5-25% for a truth
# of 13-15% while the pause after moving there was fixed (src/interrupt.c).
#   - 999 Hz: within 3 points of the truth as root; as an ordinary user,
#     within 5 (see below).
#   - 3999 Hz: within 5 points.  As root, stopping the program 4000
#     times a second raises its own io() share by 2-4 points (13-14% ->
#     15-18%) in time no sample can see (just after each resume), while
#     the samples agree with perf's (compute() 82-84% beside perf's
#     83-84%): -2.1 to -3.7 here.  As an ordinary user the samples come
#     out +1.1 to +3.8 over the truth at either rate, a residual skid not
#     explained yet (TODO(#16); the controller then runs at normal
#     priority), so those runs are held to 5 points.
#   - 335 us bursts (truth under 1%): within 1 point.
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

# run USER HZ BURST BELOW ABOVE: the share must be within BELOW points
# under the truth and ABOVE points over it
run() {
	local user=$1 hz=$2 burst=$3 below=$4 above=$5 dir=$XP_TMP truth share label stats want
	local -a pre=()
	if [[ $user == nobody ]]; then
		dir=$XP_TMP/user
		pre=("${as_user[@]}" env "TMPDIR=$dir")
	fi
	label="$user, $hz Hz, ${burst} us bursts"
	expect_exit 0 "${pre[@]}" "$XPROF" record -q -F "$hz" -o "$dir/$user-$hz-$burst.data" \
		-- "$XP_TARGETS/sysmix" -u "$burst" 2
	truth=$(sed -n 's/^sysmix: syscall_share=\([0-9.]*\) .* mismatches=0$/\1/p' "$XP_OUT")
	[[ $truth ]] || fail_now "$label: no truth line in the output: $(cat "$XP_OUT")"
	expect_exit 0 "$XPROF" report -i "$dir/$user-$hz-$burst.data" --folded --value samples -o "$user.folded"
	stats=$(folded_stats "$user.folded" "chain:run;io")
	share=$(awk -v s="$stats" 'BEGIN { split(s, v, " "); printf "%.1f", 100 * v[1] / v[2] }')
	want="-$below..+$above"
	if awk -v a="$share" -v b="$truth" -v lo="$below" -v hi="$above" \
		'BEGIN { d = a - b; exit !(d <= hi && d >= -lo) }'; then
		say "  ok: $label: in io() ${share}% of the samples, truth ${truth}% (want $want)"
	else
		fail "$label: in io() ${share}% of the samples, truth ${truth}% (want $want)"
		show_file "profile" "$user.folded" 8
	fi
}

for user in "${users[@]}"; do
	say "## $user"
	if [[ $user == self ]]; then
		run "$user" 999 3 3 3
	else
		run "$user" 999 3 5 5
	fi
	run "$user" 3999 3 5 5
	run "$user" 3999 335 1 1
done

finish
