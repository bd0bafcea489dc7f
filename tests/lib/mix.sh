# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# Where samples of a known-answer program land (tests/targets/mix.h:
# sysmix, faultmix), for the skid tests; sourced after lib.sh:
#     . "$XP_LIB/mix.sh"
#
# mix_check PROG KEY STEP USER HZ BURST OVER UNDER: runs PROG (in
#   $XP_TARGETS) with -u BURST unprofiled, then under xprof record -F HZ
#   as USER (self or nobody: users_self_and_nobody), then unprofiled again;
#   the share of the samples under run;STEP must lie at most OVER points
#   above and UNDER points below the span of the three truths (the
#   KEY=<percent> of PROG's line).  The profiled run takes 2 s, 6 s below
#   3999 Hz for enough samples, the unprofiled ones 2 s; in a sanitized
#   build both bounds of bursts under 100 us are 3 points wider.  PROG
#   runs with TMPDIR in a directory the user may write.

# _mix_truth PROG KEY: the truth PROG printed into $XP_OUT.
_mix_truth() {
	sed -n "s/^$1: $2=\\([0-9.]*\\) .* mismatches=0\$/\\1/p" "$XP_OUT"
}

# _mix_bare PROG KEY BURST: PROG's own split, unprofiled, for 2 s, into $_mix_one.
_mix_bare() {
	expect_exit 0 env "TMPDIR=$XP_TMP" "$XP_TARGETS/$1" -u "$3" 2
	_mix_one=$(_mix_truth "$1" "$2")
	[[ $_mix_one ]] || fail_now "bare $1 ${3} us: no truth line in the output: $(cat "$XP_OUT")"
}

mix_check() {
	local prog=$1 key=$2 step=$3 user=$4 hz=$5 burst=$6 over=$7 under=$8
	local dir=$XP_TMP own label secs=2 before lo hi fails _mix_one
	local -a pre=()
	((hz >= 3999)) || secs=6
	if is_sanitized_build && ((burst < 100)); then
		over=$(awk -v p="$over" 'BEGIN { print p + 3 }')
		under=$(awk -v p="$under" 'BEGIN { print p + 3 }')
	fi
	if [[ $user == nobody ]]; then
		dir=$XP_TMP/user
		pre=("${as_user[@]}" env "TMPDIR=$dir")
	else
		pre=(env "TMPDIR=$dir")
	fi
	label="$user, $hz Hz, ${burst} us bursts"
	_mix_bare "$prog" "$key" "$burst"
	before=$_mix_one
	expect_exit 0 "${pre[@]}" "$XPROF" record -q -F "$hz" -o "$dir/$user-$hz-$burst.data" \
		-- "$XP_TARGETS/$prog" -u "$burst" "$secs"
	own=$(_mix_truth "$prog" "$key")
	[[ $own ]] || fail_now "$label: no truth line in the output: $(cat "$XP_OUT")"
	_mix_bare "$prog" "$key" "$burst"
	expect_exit 0 "$XPROF" report -i "$dir/$user-$hz-$burst.data" --folded --value samples \
		-o "$user.folded"
	read -r lo hi < <(awk -v a="$before" -v b="$_mix_one" -v o="$own" -v over="$over" \
		-v under="$under" 'BEGIN { lo = a < b ? a : b; hi = a > b ? a : b
			if (o > hi) hi = o; if (o < lo) lo = o
			printf "%.1f %.1f\n", lo - under, hi + over }')
	fails=$XP_FAILS
	assert_share_between "$label, in $step() (truths: unprofiled $before, $_mix_one; run $own)" \
		"$lo" "$hi" "$user.folded" "chain:run;$step"
	((XP_FAILS == fails)) || show_file "profile" "$user.folded" 8
}
