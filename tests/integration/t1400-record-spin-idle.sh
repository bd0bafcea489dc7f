#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# --spin-idle keeps idle CPUs busy with spinners that need no privilege:
#   - record --spin-idle (as user nobody when run as root, so that it is
#     shown to work unprivileged) profiles split as well as without: exit
#     0, a/b/c 50/30/20 within 8 points, and the data file's spin_idle
#     statistic is the number of CPUs xprof may run on;
#   - while an attach --spin-idle runs, xprof has one more thread per CPU,
#     each at SCHED_IDLE (policy 5 in /proc/PID/task/TID/stat) and allowed
#     on one CPU only, every CPU once; they are gone when attach returns;
#   - without the option there are none (spin_idle 0).
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace

T=$XP_TARGETS
ncpu=$(nproc)
pre=()
dir=$XP_TMP
if ((EUID == 0)) && command -v setpriv >/dev/null &&
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$XP_HELPERS/ptprobe" >/dev/null 2>&1 &&
	setpriv --reuid=nobody --regid=nogroup --clear-groups test -x "$XPROF"; then
	chmod 755 "$XP_TMP"
	mkdir -m 1777 "$XP_TMP/user"
	dir=$XP_TMP/user
	pre=(setpriv --reuid=nobody --regid=nogroup --clear-groups env "TMPDIR=$dir")
	say "# the record runs as user nobody"
fi

# spin_stat FILE: the spin_idle statistic of a data file.
spin_stat() {
	"$XPROF" report -i "$1" --header-only | sed -n 's/^# stat spin_idle : //p'
}

say "## record --spin-idle"
expect_exit 0 "${pre[@]}" "$XPROF" record -q --spin-idle -o "$dir/spin.data" -- "$T/split" 1
expect_exit 0 "$XPROF" report -i "$dir/spin.data" --folded --value samples
cp "$XP_OUT" spin.folded
assert_share_between a 42 58 spin.folded 'frame:a'
assert_share_between b 22 38 spin.folded 'frame:b'
assert_share_between c 12 28 spin.folded 'frame:c'
assert_eq "spinners (spin_idle)" "$(spin_stat "$dir/spin.data")" "$ncpu"
expect_exit 0 "${pre[@]}" "$XPROF" record -q -o "$dir/plain.data" -- "$T/split" 0.2
assert_eq "spinners without --spin-idle" "$(spin_stat "$dir/plain.data")" 0

say "## the spinners of a running attach"
ready_init
start_bg split "$T/split" 30
wait_ready 1
target=$XP_READY_PID
start_bg attach "$XPROF" attach -q --spin-idle -p "$target" -d 3s -o attach.data
find_xprof() { xprof_pid=$(pgrep -P "${XP_BG[attach]}" -x xprof) && [[ $xprof_pid ]]; }
wait_until 10 find_xprof || fail_now "no xprof process under the attach"

# idle_tasks: "TID CPUS" of xprof's tasks at SCHED_IDLE.
idle_tasks() {
	local task policy
	for task in /proc/"$xprof_pid"/task/*; do
		policy=$(sed 's/^.*) //' "$task/stat" 2>/dev/null | awk '{ print $39 }') || continue
		[[ $policy == 5 ]] || continue
		echo "${task##*/} $(awk '/^Cpus_allowed_list:/ { print $2 }' "$task/status")"
	done
}
have_spinners() { (($(idle_tasks | wc -l) == ncpu)); }
wait_until 10 have_spinners || fail "xprof never had $ncpu SCHED_IDLE threads: $(idle_tasks | tr '\n' ' ')"
idle_tasks >spinners.txt
show_file "spinners (tid, allowed CPUs)" spinners.txt
cpus=$(awk '{ print $2 }' spinners.txt | sort -n | tr '\n' ' ')
assert_eq "their CPUs, one each" "$cpus" "$(seq 0 $((ncpu - 1)) | tr '\n' ' ')"
wait_bg attach 0
finish
