#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Every CPU second of the tree is in the profile, short lives included
# (record/sampler.c, account_exit): threads and processes that end before
# a tick samples them are counted at their exit, under the stack of their
# creator where they were made, with a marker that names them.
#   - churn threads 1 8 (thousands of threads of ~50 us each): the
#     profile's CPU total is the process's own CPU time (its getrusage, as
#     churn prints it) within 5%; the workers' time is under run_threads,
#     named "[exited before a sample: churn]", and is most of what they
#     ran (a quarter of the total at least);
#   - 1,500 /bin/true from a shell loop: the profile's CPU total is the
#     shell's and its children's CPU time (bash's 'times') within 5%, and
#     the true processes are named under the shell's stack;
#   - the summary line says both figures, within 5% of each other.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace

T=$XP_TARGETS

# weight_ms FILE: the profile's total weight (CPU time) in ms, from --flat's header.
weight_ms() {
	awk '/^# Samples:/ { gsub(/,/, ""); print $5 / 1e6; exit }' "$1"
}

# summary_ratio FILE: the profile's CPU over the tree's, from the summary line.
summary_ratio() {
	sed -n 's/.*; \([0-9.]*\) s of CPU in the profile, the tree used \([0-9.]*\) s;.*/\1 \2/p' "$1" |
		awk '$2 > 0 { printf "%.3f", $1 / $2 }'
}

say "## threads that live between two ticks"
expect_exit 0 "$XPROF" record -o churn.data -- "$T/churn" threads 1 8
cp "$XP_ERR" churn.err
show_file "summary" churn.err
expect_exit 0 "$XPROF" report -i churn.data --flat -o churn.flat
cpu_ms=$(sed -n 's/^churn: main [0-9]* ms of \([0-9]*\) ms CPU.*/\1/p' churn.err)
assert_within "profile CPU / churn's own CPU (${cpu_ms:-?} ms)" \
	"$(awk -v w="$(weight_ms churn.flat)" -v c="${cpu_ms:-0}" 'BEGIN { if (c > 0) printf "%.3f", w / c }')" \
	0.95 1.05
assert_within "summary: profile CPU / the tree's" "$(summary_ratio churn.err)" 0.95 1.05
expect_exit 0 "$XPROF" report -i churn.data --folded -o churn.folded
# Most of the workers' time is theirs (about a third of the weight here,
# 0.24 to 0.37 with the load of the machine; 0.007 when their time was
# dropped): the bound asks for it to be there, not for its size.
read -r hits _ total < <(folded_stats churn.folded "chain:...;run_threads;...;\[exited before a sample: churn\]")
assert_within "workers that ended unsampled, under run_threads: share of the weight" \
	"$(awk -v h="$hits" -v t="$total" 'BEGIN { if (t > 0) printf "%.3f", h / t }')" 0.15 1

say "## processes that live between two ticks"
# shellcheck disable=SC2016 # expanded by the shell it runs
expect_exit 0 "$XPROF" record -o storm.data -- bash -c 'for i in $(seq 1500); do /bin/true; done; times'
cp "$XP_ERR" storm.err
cp "$XP_OUT" storm.times
show_file "summary" storm.err
expect_exit 0 "$XPROF" report -i storm.data --flat -o storm.flat
# bash's times: its own user and system time, then its children's.
tree_ms=$(awk '{ for (i = 1; i <= 2; i++) { split($i, m, /[ms]/); t += m[1] * 60 + m[2] } }
	END { printf "%.1f", t * 1000 }' storm.times)
assert_within "profile CPU / the shell's and its children's (${tree_ms} ms)" \
	"$(awk -v w="$(weight_ms storm.flat)" -v c="$tree_ms" 'BEGIN { if (c > 0) printf "%.3f", w / c }')" \
	0.95 1.05
assert_within "summary: profile CPU / the tree's" "$(summary_ratio storm.err)" 0.95 1.05
expect_exit 0 "$XPROF" report -i storm.data --folded -o storm.folded
assert_file_matches "the true processes, named, under the shell" storm.folded \
	'^bash;.*;\[exited before a sample: true\] [0-9]+$'

finish
