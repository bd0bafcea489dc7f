#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The scripts in single quotes are expanded by the shell in the namespaces;
# in_ns and noproc are called through expect_exit.
# shellcheck disable=SC2016,SC2317
#
# Where the system hides what xprof needs, one error line and a hint
# saying what to do, at the start, never a silently nameless profile:
#   - no proc file system at /proc (a tmpfs over it, in a mount namespace
#     of the test's own): record, attach, dump and top refuse with status
#     1 before running or stopping anything, naming /proc and 'mount -t
#     proc proc /proc'; report, which needs no /proc, still works (not in
#     the sanitizer build, whose runtime reads /proc itself);
#   - /proc mounted with hidepid=2 (in pid and mount namespaces of the
#     test's own, its /proc remounted):
#     - xprof as nobody attaching to a process of root: /proc does not
#       show it (hidepid=2), run as that user or root, or remount with gid=;
#     - xprof as root without CAP_SYS_PTRACE, hidepid=2 with gid=4 (so
#       that root's group does not see every process), dumping a process of
#       nobody: the hint names the capability and --cap-add SYS_PTRACE;
#     - the same root recording a command that becomes nobody (setpriv):
#       one warning at the start naming the pid and hidepid, the command's
#       status, and a data file whose PROCESS record says its mappings were
#       not readable: report's first line says so, and --header-only.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace
((EUID == 0)) || skip "needs root (mount and pid namespaces, other users)"
require_cmd unshare util-linux
require_cmd setpriv util-linux
unshare -m -p -f --mount-proc true 2>/dev/null ||
	skip "cannot make mount and pid namespaces here (unshare -m -p -f --mount-proc)"
chmod 755 "$XP_TMP"

T=$XP_TARGETS
as_nobody=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
no_cap=(setpriv --bounding-set=-sys_ptrace --inh-caps=-sys_ptrace --clear-groups)
# A build below a directory closed to others (/root in CI's fresh root):
# copies of the two programs nobody runs, where nobody may run them.
if ! "${as_nobody[@]}" test -x "$XPROF" -a -x "$T/split-nofp"; then
	mkdir -m 755 "$XP_TMP/bin"
	cp "$XPROF" "$T/split-nofp" "$XP_TMP/bin/"
	XPROF=$XP_TMP/bin/xprof T=$XP_TMP/bin
	say "# nobody cannot run the build's programs: copies in $T"
fi
"${as_nobody[@]}" test -x "$XPROF" || skip "user nobody cannot run $XPROF"

# in_ns SCRIPT [ARGS...]: run SCRIPT (bash) in pid and mount namespaces of
# its own, /proc mounted for them; $XPROF, $T and the argument arrays as
# variables.
in_ns() {
	local script=$1
	shift
	unshare -m -p -f --mount-proc --propagation private env XPROF="$XPROF" T="$T" \
		bash -c "as_nobody=(${as_nobody[*]}); no_cap=(${no_cap[*]}); $script" in_ns "$@"
}

# uid_is PID UID: PID runs as UID (a process started as root that setpriv
# turns into nobody), for readiness.
uid_is='uid_is() { [[ $(stat -c %u /proc/$1 2>/dev/null) == "$2" ]]; }
wait_uid() { local i; for ((i = 0; i < 400; i++)); do uid_is "$1" "$2" && return 0; sleep 0.025; done; return 1; }'

say "## no proc file system at /proc"
noproc() {
	unshare -m --propagation private bash -c 'mount -t tmpfs none /proc && exec "$@"' noproc "$@"
}
# The sanitizers' runtime reads /proc itself (LeakSanitizer cannot run without it).
if is_sanitized_build; then
	say "# sanitizer build: no /proc is checked by the plain suite"
else
	for cmd in "record -o np.data -- sh -c 'echo ran >ran.txt'" "attach -p $$ -d 1 -o np.data" \
		"dump -p $$" "top -p $$ -n 1"; do
		eval "expect_exit 1 noproc \"\$XPROF\" $cmd"
		assert_error_line "${cmd%% *}: one error" "$XP_ERR"
		assert_file_matches "${cmd%% *}: it names /proc" "$XP_ERR" \
			"^xprof: error: .*'/proc': no proc file system is mounted there$"
		assert_file_matches "${cmd%% *}: and how to mount it" "$XP_ERR" \
			"^hint: .*'mount -t proc proc /proc'"
	done
	[[ -e ran.txt ]] && fail "record ran its command without /proc"
	[[ -e np.data ]] && fail "a data file was written without /proc"
	expect_exit 0 noproc "$XPROF" report -i "$XP_DATA/canned.xprof" --folded -o canned.folded
	assert_file_nonempty "report needs no /proc" canned.folded
fi

say "## hidepid=2: xprof as nobody, a process of root"
expect_exit 1 in_ns 'mount -o remount,hidepid=2 /proc || exit 9
	sleep 60 & p=$!
	"${as_nobody[@]}" "$XPROF" attach -p "$p" -d 1 -o /dev/null; rc=$?; kill $p; exit $rc'
assert_error_line "attach: one error" "$XP_ERR"
assert_file_matches "attach: /proc does not show the process" "$XP_ERR" \
	'^xprof: error: cannot attach to pid [0-9]+: /proc does not show it to xprof'
assert_file_matches "attach: hidepid named, and what to do" "$XP_ERR" \
	"^hint: /proc is mounted with hidepid=2, .*run xprof as the process's user or as root.*gid="

say "## hidepid=2,gid=4: xprof as root without CAP_SYS_PTRACE, a process of nobody"
expect_exit 1 in_ns "$uid_is"'
	mount -o remount,hidepid=2,gid=4 /proc || exit 9
	"${as_nobody[@]}" sleep 60 & p=$!
	wait_uid "$p" 65534 || exit 9
	"${no_cap[@]}" "$XPROF" dump -p "$p"; rc=$?; kill $p; exit $rc'
assert_error_line "dump: one error" "$XP_ERR"
assert_file_matches "dump: /proc does not show the process" "$XP_ERR" \
	'^xprof: error: cannot dump pid [0-9]+: /proc does not show it to xprof'
assert_file_matches "dump: the capability named, and how to add it" "$XP_ERR" \
	'^hint: /proc is mounted with hidepid=2 and xprof lacks CAP_SYS_PTRACE.*--cap-add SYS_PTRACE'

say "## hidepid=2,gid=4: root without CAP_SYS_PTRACE records a command that becomes nobody"
expect_exit 0 in_ns 'mount -o remount,hidepid=2,gid=4 /proc || exit 9
	cd "$1" && exec "${no_cap[@]}" "$XPROF" record -o hidden.data -- \
		"${as_nobody[@]}" "$T/split-nofp" 0.5' "$XP_TMP"
show_file stderr "$XP_ERR"
n=$(grep -c '^xprof: warning: ' "$XP_ERR" || true)
assert_eq "one warning" "$n" 1
assert_file_matches "the warning names the process and says its frames will be addresses" \
	"$XP_ERR" '^xprof: warning: cannot read the mappings of pid [0-9]+.*; its frames will be addresses$'
assert_file_matches "its hint names hidepid and the capability" "$XP_ERR" \
	'^hint: /proc is mounted with hidepid=2 and xprof lacks CAP_SYS_PTRACE.*--cap-add SYS_PTRACE'
first=$(grep -n '^xprof: warning: ' "$XP_ERR" | cut -d: -f1)
summary=$(grep -n '^xprof: [0-9]* samples' "$XP_ERR" | cut -d: -f1)
if [[ $first && $summary ]] && ((first < summary)); then
	say "  ok: the warning comes at the start, before the summary"
else
	fail "the warning (line ${first:-none}) does not come before the summary (line ${summary:-none})"
fi
expect_exit 0 "$XPROF" report -i hidden.data --folded -o hidden.folded
IFS= read -r line <"$XP_ERR" || true
case $line in
"xprof: warning: 'hidden.data' was recorded without the mappings of 1 process (pid "*"): /proc hid them, and their frames are addresses")
	say "  ok: report's first line: $line" ;;
*) fail "report's first line: '$line'" ;;
esac
expect_exit 0 "$XPROF" report -i hidden.data --header-only -o hidden.header
assert_file_matches "--header-only says so" hidden.header \
	'^# pid [0-9]+ : mappings not readable when recorded \(/proc hid them\)$'

say "## a process /proc shows: no warning, no flag"
expect_exit 0 in_ns 'mount -o remount,hidepid=2,gid=4 /proc || exit 9
	cd "$1" && exec "$XPROF" record -o shown.data -- "${as_nobody[@]}" "$T/split-nofp" 0.3' \
	"$XP_TMP"
assert_file_lacks "root with CAP_SYS_PTRACE: no warning" "$XP_ERR" '^xprof: warning: '
expect_exit 0 "$XPROF" report -i shown.data --header-only -o shown.header
assert_file_lacks "no process flagged" shown.header 'mappings not readable'
finish
