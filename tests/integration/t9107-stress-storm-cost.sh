#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# What a process costs the recorder does not grow with the length of the
# recording (record/sampler.h): 3,000 /bin/true from a shell loop, the
# shell reading the recorder's CPU time (its threads' schedstat, through
# the TracerPid of its own status, with builtins only) at processes 200,
# 1,200, 1,800 and 2,800.  The recorder's CPU per process over the last
# thousand is at most 1.5 times that over the first: a step that costs
# in proportion to everything sampled so far (every pc sorted at each
# exec, as once) made it 2.2 times.  Its failed samples are few, and the
# files read for a fork's child or a short life few too (below).
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace

cat >storm.sh <<'EOF'
tracer=0
while read -r key value; do
	[[ $key == TracerPid: ]] && tracer=$value
done </proc/$$/status
recorder_cpu() {
	local f s sum=0
	for f in /proc/"$tracer"/task/*/schedstat; do
		read -r s _ <"$f" && sum=$((sum + s))
	done
	cpu=$sum
}
for ((i = 1; i <= 3000; i++)); do
	/bin/true
	case $i in
	200 | 1200 | 1800 | 2800)
		recorder_cpu
		echo "$i $cpu"
		;;
	esac
done
EOF
expect_exit 0 "$XPROF" -q record -o storm.data -- bash storm.sh
cp "$XP_OUT" storm.cpu
show_file "process, recorder CPU (ns)" storm.cpu
read -r first last < <(awk '{ c[$1] = $2 }
	END { if (c[200] && c[2800]) printf "%.0f %.0f\n", (c[1200] - c[200]) / 1000, (c[2800] - c[1800]) / 1000 }' storm.cpu)
[[ -n $first && $first -gt 0 ]] || fail_now "no recorder CPU figures from the storm"
say "  recorder CPU per process: ${first} ns over processes 200-1,200, ${last} ns over 1,800-2,800"
assert_within "recorder CPU per process, last thousand / first" \
	"$(awk -v a="$first" -v b="$last" 'BEGIN { printf "%.2f", b / a }')" 0 1.5

# A process past its exit stop runs only the kernel's end of it: a tick
# does not interrupt it there, where it would never stop (record/due.c,
# not_for_tick): at most 1% of the processes fail a sample (a thread
# killed between tick and stop).
expect_exit 0 "$XPROF" report -i storm.data --header-only -o storm.header
failed=$(awk '$2 == "stat" && $3 == "failed" { print $5 }' storm.header)
say "# 3,000 execs: ${failed:-?} failed samples"
assert_within "failed samples in 3,000 short processes" "${failed:--1}" 0 30

# A fork's child starts with its parent's maps (record/sampler.c,
# image_from_parent): 1,000 subshells that exec nothing cost no read of
# /proc/PID/maps each (one each, 1,000 or more, before).
expect_exit 0 "$XPROF" -q record -o forks.data -- bash -c 'for ((i = 0; i < 1000; i++)); do (:); done'
expect_exit 0 "$XPROF" report -i forks.data --header-only -o forks.header
reads=$(awk '$2 == "stat" && $3 == "maps_reads" { print $5 }' forks.header)
say "# 1,000 forks: ${reads:-?} reads of maps"
assert_within "maps read for 1,000 forked subshells" "${reads:--1}" 0 100

# A process born while traced starts with no page faults at no CPU time
# (the kernel zeroes its counters at fork), so the interrupt's path takes
# that as its first measure (record/samples.c, smp_take_origin): 300
# children of 5 ms each, sampled from any CPU, read no stat file for it
# (one each, 300 or more, before; the parent's are a few).
expect_exit 0 "$XPROF" -q record -o born.data -- "$XP_TARGETS/forker" --storm 300 5
expect_exit 0 "$XPROF" report -i born.data --header-only -o born.header
reads=$(awk '$2 == "stat" && $3 == "stat_reads" { print $5 }' born.header)
samples=$(awk '$2 == "stat" && $3 == "samples" { print $5 }' born.header)
say "# 300 children of 5 ms: ${samples:-?} samples, ${reads:-?} reads of a thread's stat file"
assert_within "samples of 300 children of 5 ms" "${samples:--1}" 600 100000
assert_within "stat files read for 300 children of 5 ms" "${reads:--1}" 0 100

finish
