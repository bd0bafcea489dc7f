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
# The truth is the program's split when nobody profiles it (runs of its
# own beside the profiled ones).  A profiled run's own measure rises with
# the rate, by the stops' cost in time no sample can see: here 12.5% bare,
# 15-16% under 4000 stops a second at real-time priority, 21-24% as an
# ordinary user (whose controller preempts with a short time slice), while
# the samples stay at 11-14% at every rate, as perf's do (compute() 84-85%
# of perf's samples).  The profiled run's figure is printed beside.
#   - 999 and 3999 Hz, 3 us bursts: at most 3 points above and 5 below the
#     truths of the run, as root and as an ordinary user (what the truths
#     are, and why below is wider: see run);
#   - 335 us bursts (truth under 1%): within 1.2 points (0.5-1.1% of the
#     samples as an ordinary user, where a skid gave 2.3%).
# One run's share moves with the machine's state, as the truth's does
# (unprofiled runs: 29.4-33.8% where the truth was 31%): 2 s at 999 Hz
# gave 26.7-35.9% over six runs (mean 29.9), 6 s gave 28.9-32.2%, so the
# 999 Hz runs take 6 s, and each profiled run is held to the unprofiled
# runs just before and just after it, not to runs made a minute earlier.
# Even those two can differ by 4-6 points here (31.0 and 35.5; 36.5 and
# 30.0), and a profiled run's own split can leave both (38.4% beside 29.8
# and 29.9, the samples reading 34.1%), so the bound spans all of them
# (see run).  (perf record --call-graph dwarf, 6 s at 999 Hz, read
# 27.6-31.0% where the runs' own split was 30.0-33.1%.)  A
# sanitized xprof (scripts/test.sh --sanitize) is two to three times
# slower, and its ordinary user's samples read 25-29% at 3999 Hz beside
# unprofiled runs of 29.7-32.6%: there the 3 us bounds are 3 points wider;
# the shipped build is held to the stated ones.
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

# bare BURST: the program's own split, unprofiled, for 2 s, into $one
bare() {
	expect_exit 0 env "TMPDIR=$XP_TMP" "$XP_TARGETS/sysmix" -u "$1" 2
	one=$(sed -n 's/^sysmix: syscall_share=\([0-9.]*\) .* mismatches=0$/\1/p' "$XP_OUT")
	[[ $one ]] || fail_now "bare ${1} us: no truth line in the output: $(cat "$XP_OUT")"
}

# run USER HZ BURST POINTS: the share of the samples in io() must lie
# between the truths of this run, give or take POINTS: the unprofiled runs
# just before and just after it and, with 3 us bursts, the profiled run's
# own measure, which holds the stops' cost in time no sample sees (most
# often the highest of the three).  With 3 us bursts the bound below is 2
# points wider: sampled, the program reads 1.5-3 points under its own
# estimate, under perf --call-graph dwarf as under xprof (the estimate
# times one io() in 8, between two reads of the thread's clock); a skid
# moves samples the other way, into the calls, and meets the bound above.
# (The 335 us case keeps to the unprofiled runs: under 4000 stops a second
# its own measure reads 2-7% for a truth under 1%, more than the skid it
# is there to catch.)
run() {
	local user=$1 hz=$2 burst=$3 points=$4 dir=$XP_TMP own share label stats secs=2
	local before lo hi one
	local -a pre=()
	((hz >= 3999)) || secs=6
	if is_sanitized_build && ((burst < 100)); then
		points=$(awk -v p="$points" 'BEGIN { print p + 3 }')
	fi
	if [[ $user == nobody ]]; then
		dir=$XP_TMP/user
		pre=("${as_user[@]}" env "TMPDIR=$dir")
	fi
	label="$user, $hz Hz, ${burst} us bursts"
	bare "$burst"
	before=$one
	expect_exit 0 "${pre[@]}" "$XPROF" record -q -F "$hz" -o "$dir/$user-$hz-$burst.data" \
		-- "$XP_TARGETS/sysmix" -u "$burst" "$secs"
	own=$(sed -n 's/^sysmix: syscall_share=\([0-9.]*\) .* mismatches=0$/\1/p' "$XP_OUT")
	[[ $own ]] || fail_now "$label: no truth line in the output: $(cat "$XP_OUT")"
	bare "$burst"
	expect_exit 0 "$XPROF" report -i "$dir/$user-$hz-$burst.data" --folded --value samples -o "$user.folded"
	stats=$(folded_stats "$user.folded" "chain:run;io")
	share=$(awk -v s="$stats" 'BEGIN { split(s, v, " "); printf "%.1f", 100 * v[1] / v[2] }')
	read -r lo hi < <(awk -v a="$before" -v b="$one" -v o="$own" -v p="$points" -v u="$burst" \
		'BEGIN { lo = a < b ? a : b; hi = a > b ? a : b
			if (u < 100) { if (o > hi) hi = o; if (o < lo) lo = o }
			printf "%.1f %.1f\n", lo - p - (u < 100 ? 2 : 0), hi + p }')
	label="$label: in io() ${share}% of the samples, want $lo..$hi"
	label+=" (unprofiled beside: $before, $one; the run's own: $own)"
	if awk -v s="$share" -v lo="$lo" -v hi="$hi" 'BEGIN { exit !(s >= lo && s <= hi) }'; then
		say "  ok: $label"
	else
		fail "$label"
		show_file "profile" "$user.folded" 8
	fi
}

for user in "${users[@]}"; do
	say "## $user"
	run "$user" 999 3 3
	run "$user" 3999 3 3
	run "$user" 3999 335 1.2
done

finish
