#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# A process that execs itself 20 times: every image's samples go under the
# right name.  execer (tests/targets/execer.c) is run through links
# step-20 .. step-00 to itself, so each image has its own comm; the image
# started as step-K computes 50 ms in odd_work (K odd) or even_work (K
# even), step-00 computes 1 s in final_work.  For both builds:
#   - record exits 0 and the output is as without xprof (no crash, no
#     corruption along the chain);
#   - every one of the 21 images has samples under its own name
#     (step-K: at least 10 of the ~50 that 50 ms at 999 Hz gives);
#   - of each image's samples, >= 80% are in its own function (the rest:
#     its start-up, ld.so and libc's init), and none is in the function
#     of the image before or after it: a sample dated before its exec
#     record, or unwound with the previous image's mappings, would be
#     (or would show no function at all);
#   - in all, at most 0.5% of the samples have a frame that is in no
#     known mapping (a bare 0x...) or unnamed in execer (execer+0x...);
#   - at least 95% of the interrupts come from the thread's own CPU: each
#     image's CPU is found anew (when it was read from the thread's rseq
#     area, the exec's stop still reported the old image's area, which
#     then read no CPU: 33-85% came from another CPU, where a sample skids
#     to a system call exit; it is read from the thread's stat file now).
#     Interrupts sent from any CPU because the thread's samples showed it
#     cannot skid (record/due.c, irq_path_any) are not counted.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace

expect_exit 0 "$XP_TARGETS/execer" 20 0.1
cp "$XP_OUT" execer.expected

for t in execer execer-nofp; do
	say "## $t"
	mkdir "$t.links"
	for ((k = 0; k <= 20; k++)); do
		ln -s "$XP_TARGETS/$t" "$(printf '%s.links/step-%02d' "$t" "$k")"
	done
	expect_exit 0 "$XPROF" record -q -o "$t.data" -- "$t.links/step-20" -d "$t.links" 20 1
	assert_files_equal "$t: output as without xprof" execer.expected "$XP_OUT"
	irq=$(recorder_stat "$t.data" interrupts) same=$(recorder_stat "$t.data" irq_same_cpu)
	any=$(recorder_stat "$t.data" irq_path_any)
	irq=$((irq - any))
	if ((same * 100 >= irq * 95)); then
		say "  ok: $t: $same of $irq interrupts meant for the thread's own CPU came from there (want >= 95%; $any more from any CPU by the thread's path)"
	else
		fail "$t: $same of $irq interrupts meant for the thread's own CPU came from there (want >= 95%; $any more from any CPU by the thread's path)"
	fi
	expect_exit 0 "$XPROF" report -i "$t.data" --folded --value samples -o "$t.folded"
	assert_folded_format "$t.folded"

	assert_share_at_least "$t: every sample under a step-NN name" 100 "$t.folded" \
		"comm:step-[0-9][0-9]"
	assert_share_at_most "$t: frames in no mapping, or unnamed in execer" 0.5 "$t.folded" \
		'frame:0x[0-9a-f]+|execer(-nofp)?[+]0x[0-9a-f]+'
	for ((k = 20; k >= 0; k--)); do
		name=$(printf 'step-%02d' "$k")
		if ((k == 0)); then
			own=final_work other='odd_work|even_work'
		elif ((k % 2)); then
			own=odd_work other='even_work|final_work'
		else
			own=even_work other='odd_work|final_work'
		fi
		read -r _ n _ < <(folded_stats "$t.folded" all "comm:$name")
		if ((n >= 10)); then
			say "  ok: $t: $name has $n samples (want >= 10)"
		else
			fail "$t: $name has $n samples (want >= 10)"
		fi
		assert_share_at_least "$t: $name in $own" 80 "$t.folded" "frame:$own" "comm:$name"
		assert_share_at_most "$t: $name not in $other" 0 "$t.folded" "frame:$other" \
			"comm:$name"
	done
done

finish
