#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# trap_rm and in_root are called from a trap and through expect_exit.
# shellcheck disable=SC2317
#
# The static binary as the way into a container (doc/install.md): built
# by scripts/static.sh, copied into a Debian 13 root with python3
# (scripts/debian-root.sh trixie python3: another release, its own C
# library and python3.13), run there in pid and mount namespaces of its
# own (unshare -p -m -f --mount-proc + chroot):
#   - it is one static file (no program interpreter, nothing it needs from
#     the root) and 'xprof --version' says so;
#   - without /proc in the root (a plain chroot) record stops with its
#     error line and the command that mounts /proc;
#   - with /proc, 'xprof record -- python3 work.py' records python3.13 of
#     the root, and 'report' in the root names its native frames:
#     _PyEval_EvalFrameDefault in >= 90% of the samples, Py_RunMain or
#     Py_BytesMain (how python3 starts) in >= 90%;
#   - outside the root, the data file alone with the copies the recorder
#     kept in the root (XPROF_CACHE_DIR) gives the same report byte for
#     byte, and so does the host's own xprof with --symfs <root> and no
#     copies.
# Skipped in the sanitizer build (the static binary is a build of its
# own) and where a root cannot be made or entered.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace
((EUID == 0)) || skip "needs root (chroot, mount and pid namespaces)"
is_sanitized_build && skip "the static binary is not a sanitizer build: tested by the plain suite"
require_cmd unshare util-linux
require_cmd chroot coreutils

say "## the static binary"
static=$XP_BUILD/static
expect_exit 0 "$XP_SRC/scripts/static.sh" -B "$static"
bin=$(tail -n 1 "$XP_OUT")
[[ -x $bin ]] || fail_now "scripts/static.sh printed no binary: '$bin'"
expect_exit 0 readelf -l "$bin"
assert_file_lacks "no program interpreter: statically linked" "$XP_OUT" 'program interpreter'
expect_exit 0 "$bin" --version
assert_file_matches "--version says it is static" "$XP_OUT" '^build: .*, static'

say "## a Debian 13 root with python3"
status=0
root=$("$XP_SRC/scripts/debian-root.sh" trixie python3 2>root.err) || status=$?
((status == 77)) && skip "no Debian 13 root: $(tail -n 1 root.err)"
((status == 0)) || fail_now "scripts/debian-root.sh trixie python3 failed: $(tail -n 5 root.err)"
say "# root: $root"
[[ -x $root/usr/bin/python3 ]] || fail_now "no python3 in $root"
# The root is cached and shared: what the test puts there goes under one
# directory of its own, removed at the end.
work=/tmp/${XP_TEST}.$$
mkdir -p "$root$work"
trap_rm() { rm -rf --one-file-system "${root:?}$work"; }
trap 'rc=$?; trap_rm; (exit $rc); _xp_exit' EXIT
cp "$bin" "$root$work/xprof"
cat >"$root$work/work.py" <<'EOF'
import time


def work(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


end = time.monotonic() + 1.5
while time.monotonic() < end:
    work(10000)
EOF

# in_root [--no-proc] COMMAND...: COMMAND in the root, in pid and mount
# namespaces of its own, /proc mounted there (not with --no-proc).
in_root() {
	local proc=(--mount-proc="$root/proc")
	if [[ $1 == --no-proc ]]; then
		proc=()
		shift
	fi
	unshare -p -m -f --propagation private "${proc[@]}" \
		chroot "$root" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/root \
		XPROF_CACHE_DIR="$work/cache" "$@"
}

say "## in the root without /proc"
expect_exit 1 in_root --no-proc "$work/xprof" record -o "$work/none.data" -- python3 "$work/work.py"
assert_error_line "one error" "$XP_ERR"
assert_file_matches "it says how to mount /proc" "$XP_ERR" "^hint: .*'mount -t proc proc /proc'"

say "## in the root, its own pid and mount namespaces"
expect_exit 0 in_root "$work/xprof" record -o "$work/py.data" -- python3 "$work/work.py"
show_file "summary" "$XP_ERR" 3
assert_file_lacks "no warning" "$XP_ERR" '^xprof: warning:'
# --interp beside: the loop's frame kept beside the Python frames it ran.
expect_exit 0 in_root "$work/xprof" report -i "$work/py.data" --folded --value samples \
	--interp beside -o "$work/inside.folded"
cp "$root$work/inside.folded" inside.folded
show_file "report in the root" inside.folded 5
assert_samples_at_least "python3 sampled" 500 inside.folded
assert_share_at_least "the interpreter loop named" 90 inside.folded 'frame:_PyEval_EvalFrameDefault'
assert_share_at_least "work() by name" 90 inside.folded 'frame:work \(work\.py:[0-9]+\)'
assert_share_at_least "python3's start named" 90 inside.folded 'frame:Py_RunMain|Py_BytesMain'
assert_file_matches "the program is the root's python3.13" inside.folded '^python3(\.13)?;'

say "## outside the root, from the data file"
cp "$root$work/py.data" py.data
XPROF_CACHE_DIR=$root$work/cache expect_exit 0 "$XPROF" -v report -i py.data --folded \
	--value samples --interp beside -o outside.folded
assert_files_equal "the same report outside, with the recorder's copies" inside.folded outside.folded
assert_file_matches "names from the copies kept in the root" "$XP_ERR" \
	"symbols of '/usr/bin/python3.13': the recorder's copy '$root$work/cache/buildid/"
XPROF_CACHE_DIR=off expect_exit 0 "$XPROF" report -i py.data --symfs "$root" --folded \
	--value samples --interp beside -o symfs.folded
assert_files_equal "the same report from the root's files (--symfs)" inside.folded symfs.folded
finish
