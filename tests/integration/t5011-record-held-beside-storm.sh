#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Nothing is held while the books are kept (record/sampler.h): what an
# exec, an exit or a new process needs (reading /proc, writing records,
# JIT files) is done once no interrupt is outstanding, not while the
# threads interrupted at the same tick wait.  So a busy process (threads
# 4: four threads on the two CPUs) sampled beside a fork/exec storm in the
# same tree (a shell starting /bin/true as fast as it can) keeps what a
# sample holds its threads (held_p99_ns, stop seen to resume) within twice
# its own without the storm: medians of three runs each.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace

T=$XP_TARGETS

# held_us DATA: the recording's held p99 in us.
held_us() {
	recorder_stat "$1" held_p99_ns | awk '{ printf "%.1f", $1 / 1000 }'
}

median3() {
	printf '%s\n' "$@" | sort -n | sed -n 2p
}

alone=() storm=()
for i in 1 2 3; do
	expect_exit 0 "$XPROF" -q record -o "alone$i.data" -- "$T/threads" 4 2
	alone+=("$(held_us "alone$i.data")")
	expect_exit 0 "$XPROF" -q record -o "storm$i.data" -- bash -c \
		"'$T/threads' 4 2 & end=\$((SECONDS + 2)); while ((SECONDS < end)); do /bin/true; done; wait"
	storm+=("$(held_us "storm$i.data")")
	procs=$(recorder_stat "storm$i.data" processes)
	((${procs:-0} >= 100)) || fail "run $i: the storm made ${procs:-no} processes, want 100 or more"
done
say "  held p99 alone: ${alone[*]} us; beside the storm: ${storm[*]} us"
a=$(median3 "${alone[@]}") b=$(median3 "${storm[@]}")
assert_within "held p99 beside the storm / alone ($b / $a us)" \
	"$(awk -v a="$a" -v b="$b" 'BEGIN { if (a > 0) printf "%.2f", b / a }')" 0 2

finish
