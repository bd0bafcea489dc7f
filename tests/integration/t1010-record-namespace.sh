#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# 'xprof record' of a command that launches a program into a container
# (tests/lib/ns.sh: own mount and pid namespaces, a private tmpfs root with
# the program, its libraries in /xplib and a private /tmp), followed
# through the forks and execs of the set-up, reported after the container
# and its files are gone:
#   - split-nofp (a, b, c: 50/30/20% through a frameless leaf, no frame
#     pointers): within 4 points, main in >= 99% of its stacks, every frame
#     named; the data file has its pid inside the container too;
#   - jit (tests/targets/jit.c) writing its perf map as /tmp/perf-N.map in
#     the container's private /tmp, N its pid there: the map is found under
#     the container's root with that pid when the program exits, and names
#     >= 95% of the samples in the JIT code (leaf jitted_hot_loop, or an
#     unnamed address); nothing of it is on the host;
#   - jitreuse (tests/targets/jitreuse.c) in the container, reusing one
#     page for two functions 70:30: the container's map is watched while
#     recording, so each sample is named after the entry valid then (each
#     function's share within 3 points of the target's own measure).
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
# shellcheck source=../lib/ns.sh
. "$XP_LIB/ns.sh"
skip_unless_ptrace
ns_skip_unless_root

say "## split-nofp in a container"
ns_cmd "$XP_TARGETS/split-nofp" 3
expect_exit 0 "$XPROF" record -o split.data -- "${NS_CMD[@]}"
show_file "summary" "$XP_ERR" 5
expect_exit 0 "$XPROF" report -i split.data --comm split-nofp --folded --value samples -o split.folded
show_file "folded" split.folded 6
assert_samples_at_least "split-nofp" 1500 split.folded
ns_assert_split "recorded" split.folded
expect_exit 0 "$XPROF" report -i split.data --header-only -o header.txt
assert_file_matches "pids inside the container recorded" header.txt \
	'^# pid [0-9]+ : pid [0-9]+ in its own pid namespace$'

if [[ $(uname -m) != x86_64 ]]; then
	say "# the jit target writes x86-64 code: its part is not run here"
	finish
fi
say "## a JIT in a container, its perf map in the container's /tmp"
ns_cmd "$XP_TARGETS/jit" perfmap 2
expect_exit 0 "$XPROF" record -o jit.data -- "${NS_CMD[@]}"
inner=$(awk '/^pid / { print $2 }' "$XP_OUT")
say "# the JIT wrote /tmp/perf-$inner.map inside the container"
expect_exit 0 "$XPROF" report -i jit.data --comm jit --folded --value samples -o jit.folded
show_file "folded" jit.folded 6
assert_share_at_least "JIT samples named by the container's map" 95 jit.folded \
	'leaf:jitted_hot_loop' 'leaf:jitted_hot_loop|0x[0-9a-f]+'
assert_share_at_least "the JIT code's caller" 80 jit.folded 'tail:run_jitted;jitted_hot_loop'

say "## a JIT in a container that reuses code addresses: its map dated while recording"
# tests/targets/jitreuse: reuse_a and reuse_b take turns on one page, 70:30.
ns_cmd "$XP_TARGETS/jitreuse" perfmap 6 2
expect_exit 0 "$XPROF" record -q -o reuse.data -- "${NS_CMD[@]}"
cp "$XP_OUT" reuse.out
expect_exit 0 "$XPROF" report -i reuse.data --folded -o reuse.folded
line=$(jit_reuse_split reuse.out reuse.folded)
case $line in
ok*) say "  ok: ${line#ok }" ;;
*)
	fail "${line#bad } (want within 3 points)"
	show_file "folded" reuse.folded
	;;
esac
finish
