#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# 'xprof attach' from the host to a program in a container: its own mount
# and pid namespaces, a private tmpfs root holding the program, its
# libraries under a directory the host does not have (/xplib) and the
# loader (tests/lib/ns.sh).  The target is split-nofp (tests/targets/split.c:
# a, b, c get 50/30/20% of the CPU, each through a frameless leaf, no frame
# pointers anywhere), so the unwinder needs the CFI of files that exist only
# inside the container.  After the profile the program ends and the
# namespaces with it; the report runs when none of its files exists.
#   - attach -p HOSTPID -d 5s: exit 0; the summary says what was kept for
#     the report (the program and libc copied into the build-id cache,
#     $XPROF_CACHE_DIR) and what it cost;
#   - the report, with the container gone: at least 1500 samples (or 3/4
#     of the ms of CPU split-nofp got, when less), shares within 4 points of
#     50/30/20, main in >= 99% of the stacks, the frameless leaf's caller
#     in >= 95% of the leaf's samples, and every frame named (no
#     module+0xOFF, no bare address);
#   - report -v says the program's and libc's symbols came from the
#     recorder's copies; the data file records both pids, and report
#     --header-only says which pid the process knew itself by.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
# shellcheck source=../lib/ns.sh
. "$XP_LIB/ns.sh"
skip_unless_ptrace attach
ns_skip_unless_root


T=$XP_TARGETS/split-nofp

ready_init
ns_cmd "$T" 9
start_bg split "${NS_CMD[@]}"
wait_ready 1
ns_host_pid split-nofp
cpu_ms_of() {
	awk -v hz="$(getconf CLK_TCK)" '{
		sub(/^.*\) /, "")	# the comm field may hold spaces
		print int(($12 + $13) * 1000 / hz) }' "/proc/$1/stat"
}
cpu_before=$(cpu_ms_of "$NS_PID")
expect_exit 0 "$XPROF" attach -p "$NS_PID" -d 5s -o ns.data
cpu_ms=$(($(cpu_ms_of "$NS_PID") - cpu_before))
show_file "summary" "$XP_ERR"
assert_file_matches "the summary says what the capture kept and cost" "$XP_ERR" \
	'kept [0-9]+ new of [0-9]+ sampled files \([^)]*\) in [0-9.]+ ms'
wait_bg split 0
if [[ -e /proc/$NS_PID ]] || [[ -n $(ls -A "$XP_TMP/nsroot") ]]; then
	fail "the container is not gone"
fi

say "## report with the container and its files gone"
expect_exit 0 "$XPROF" -v report -i ns.data --folded --value samples -o ns.folded
cp "$XP_ERR" report-v.err
assert_folded_format ns.folded
show_file "folded" ns.folded 8
# A sample per ms of the CPU the target got (less than 5 s on a busy machine).
want=$((cpu_ms * 3 / 4 < 1500 ? cpu_ms * 3 / 4 : 1500))
say "# split-nofp used $cpu_ms ms of CPU while attached: want >= $want samples"
assert_samples_at_least "attach -d 5s" "$want" ns.folded
ns_assert_split "attached" ns.folded
assert_share_at_least "frameless leaf's caller recovered" 95 ns.folded \
	"tail:a|b|c;leaf" leaf:leaf
# The paths are the target's, as the kernel prints them to the recorder:
# '/bin/split-nofp' on a machine; a recorder inside a chroot (CI's fresh
# root) gets them from outside its own root, with the chroot's directory
# in front.
assert_file_matches "report -v: the program's symbols from the recorder's copy" \
	report-v.err "symbols of '(/[^']*)?/bin/split-nofp': the recorder's copy '$XPROF_CACHE_DIR/buildid/"
assert_file_matches "report -v: libc's symbols from the recorder's copy" \
	report-v.err "symbols of '(/[^']*)?/xplib/libc[.]so[.]6': the recorder's copy"
expect_exit 0 "$XPROF" report -i ns.data --header-only -o header.txt
assert_file_matches "both pids recorded" header.txt \
	"^# pid $NS_PID : pid $NS_INNER in its own pid namespace\$"
finish
