#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# xprof itself inside an unprivileged container fails with one clear line
# and a hint, never a hang, and leaves the target as it was:
#   - under the seccomp filter of a container's default profile without
#     CAP_SYS_PTRACE (tests/helpers/noptrace: ptrace, process_vm_readv and
#     process_vm_writev fail with EPERM): 'record -- true' and 'attach -p
#     PID' exit 1 within 30 s with one "xprof: error:" line first and a
#     hint naming the seccomp filter; the attached process still runs,
#     untraced;
#   - in a user namespace (unshare -U -r: root inside, no capability over
#     the host's processes): 'attach -p PID' to a host process exits 1 the
#     same way, with a hint naming the user namespace; 'record' of its own
#     command works there (exit 0, samples of split's main).
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace attach

NOPTRACE=$XP_HELPERS/noptrace
[[ -x $NOPTRACE ]] || fail_now "helper '$NOPTRACE' not built: build the tests first"
# LeakSanitizer stops the world with ptrace, which the filter denies: in a
# sanitizer build its exit check would abort the refused xprof.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
XP_CMD_TIMEOUT=30 # "never a hang": every command below must end well before

state_of() {
	awk '/^State:/ { s = $2 } /^TracerPid:/ { t = $2 } END { print s, t }' "/proc/$1/status"
}

ready_init
start_bg split "$XP_TARGETS/split" 30
wait_ready 1
pid=$XP_READY_PID

say "## a seccomp filter denies ptrace"
if ! "$NOPTRACE" true 2>noptrace.err; then
	skip "cannot install a seccomp filter here: $(cat noptrace.err)"
fi
expect_exit 1 "$NOPTRACE" "$XPROF" record -o sc.data -- true
assert_error_line "record under seccomp" "$XP_ERR"
assert_file_matches "record under seccomp: the hint names the filter" "$XP_ERR" \
	'^hint: a seccomp filter confines xprof'
expect_exit 1 "$NOPTRACE" "$XPROF" attach -p "$pid" -d 1s -o sc.data
assert_error_line "attach under seccomp" "$XP_ERR"
assert_file_matches "attach under seccomp: the hint names the filter" "$XP_ERR" \
	'^hint: a seccomp filter confines xprof'
assert_eq "the target after the refused attach: running, not traced" \
	"$(state_of "$pid" | sed 's/^[RS] /running /')" "running 0"

say "## a user namespace"
if ((EUID != 0)) || ! unshare -U -r true 2>/dev/null; then
	say "# no user namespaces here (or not root): that part is not run"
else
	expect_exit 1 unshare -U -r "$XPROF" attach -p "$pid" -d 1s -o userns.data
	assert_error_line "attach from a user namespace" "$XP_ERR"
	assert_file_matches "attach from a user namespace: the hint names it" "$XP_ERR" \
		'^hint: xprof runs in a user namespace'
	assert_eq "the target after the refused attach: running, not traced" \
		"$(state_of "$pid" | sed 's/^[RS] /running /')" "running 0"
	expect_exit 0 unshare -U -r -p -f -m --mount-proc \
		"$XPROF" record -o own.data -- "$XP_TARGETS/split" 0.3
	expect_exit 0 "$XPROF" report -i own.data --folded --value samples -o own.folded
	assert_share_at_least "record in a user namespace: main" 95 own.folded frame:main
fi
finish
