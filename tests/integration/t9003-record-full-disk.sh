#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# A full disk while recording (doc/design.md, Never harm the target; the exit
# status is decided in cmd/record.c and the README): on a 64 KiB tmpfs
# with 20 KiB left (the head of a file, with its [vdso] image, is ~10 KiB), at 9999 Hz,
#   - record: the write error is printed once ("cannot write ...: No space
#     left on device", first "xprof: error:" line) with one hint, no
#     summary claiming a file was written; sampling stops and xprof
#     detaches; the command finishes with the output and the status it
#     has without xprof, and record exits with that status (0); the file
#     keeps what was written, and 'report' reads it with one warning about
#     the cut tail, most samples in thread_work;
#   - record on a disk already full: the header cannot be written, exit 1
#     with one error line, the command is not run;
#   - attach: the same error, exit 1 (no command status to pass on); the
#     target is left running untraced and ends exactly as without xprof.
# Mounting needs root (or CAP_SYS_ADMIN): skipped (77) otherwise.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace

T=$XP_TARGETS
mkdir full
if ! mount -t tmpfs -o size=64k tmpfs full 2>mount.err; then
	skip "cannot mount a 64 KiB tmpfs here ($(head -n 1 mount.err)): needs root or CAP_SYS_ADMIN"
fi
# Unmount before lib.sh removes the directory, keeping the test's status
# (set +e: the umount fails when the test already unmounted it).
trap 'rc=$?; set +e; umount -l "$XP_TMP/full" 2>/dev/null; (exit $rc); _xp_exit' EXIT

# fill_to KIB: leave about KIB KiB free on the tmpfs.
fill_to() {
	rm -f full/filler
	# Filling it up completely ends in ENOSPC, which is the point.
	head -c $(((64 - $1) * 1024)) /dev/zero >full/filler 2>/dev/null || true
	say "# $(df -k full | awk 'NR == 2 { print $4 }') KiB free on the tmpfs"
}

"$T/threads" 2 0.1 >plain.out
say "# without xprof: $(cat plain.out)"

say "## record: the disk fills up"
fill_to 20
expect_exit 0 "$XPROF" record -F 9999 -o full/rec.data -- "$T/threads" 2 1
assert_files_equal "the command's output is as without xprof" plain.out "$XP_OUT"
assert_error_line "one error line" "$XP_ERR"
assert_file_matches "the error names the file and the cause" "$XP_ERR" \
	"^xprof: error: cannot write 'full/rec.data': No space left on device$"
assert_file_matches "a hint says what became of sampling and the file" "$XP_ERR" \
	"^hint: sampling stopped at the error, .* the command was left to finish; 'full/rec.data' keeps"
assert_file_lacks "no summary claiming the file was written" "$XP_ERR" "wrote 'full/rec.data'"
show_file "record's stderr" "$XP_ERR"
say "# data file: $(stat -c %s full/rec.data) bytes"
expect_exit 0 "$XPROF" report -i full/rec.data --folded --value samples -o rec.folded
assert_file_matches "report warns about the cut tail" "$XP_ERR" \
	"^xprof: warning: 'full/rec.data': .*|^xprof: warning: 'full/rec.data' is truncated"
assert_eq "report: exactly one warning" "$(grep -c '^xprof: warning:' "$XP_ERR")" 1
assert_folded_format rec.folded
assert_samples_at_least "what was written before the error" 200 rec.folded
assert_share_at_least "those samples are in thread_work" 80 rec.folded "frame:thread_work"

say "## record: the disk is full from the start"
rm -f full/rec.data
fill_to 0
check_exit 1 "$XPROF" record -o full/none.data -- sh -c 'echo ran >ran.txt'
assert_error_line "one error line" "$XP_ERR"
assert_file_matches "it names the file" "$XP_ERR" "^xprof: error: cannot (create|write) 'full/none.data'"
if [[ -e ran.txt ]]; then
	fail "the command ran although the data file could not be written"
else
	say "  ok: the command was not run"
fi

say "## attach: the disk fills up"
rm -f full/none.data
fill_to 20
ready_init
start_bg target "$T/threads" 2 2
wait_ready 1
tgt=$XP_READY_PID
expect_exit 1 "$XPROF" attach -F 9999 -d 20s -p "$tgt" -o full/att.data
assert_error_line "one error line" "$XP_ERR"
assert_file_matches "the error names the file and the cause" "$XP_ERR" \
	"^xprof: error: cannot write 'full/att.data': No space left on device$"
assert_file_matches "a hint says what became of sampling and the file" "$XP_ERR" \
	"^hint: sampling stopped at the error, .* the processes were left running; 'full/att.data' keeps"
assert_file_lacks "no summary claiming the file was written" "$XP_ERR" "wrote 'full/att.data'"
show_file "attach's stderr" "$XP_ERR"
bad=""
for t in /proc/"$tgt"/task/*; do
	s=$(awk '{ print $3 }' "$t/stat" 2>/dev/null) || continue
	tr=$(awk '/^TracerPid:/ { print $2 }' "$t/status" 2>/dev/null) || continue
	[[ $s == [tT] || $tr != 0 ]] && bad+="${t##*/}:$s:$tr "
done
assert_eq "the target's threads run on, untraced" "${bad:-ok}" "ok"
wait_bg target 0
assert_files_equal "the target's output is as without xprof" plain.out "$XP_TMP/target.out"
expect_exit 0 "$XPROF" report -i full/att.data --folded --value samples -o att.folded
assert_samples_at_least "attach: what was written before the error" 100 att.folded

umount "$XP_TMP/full"
finish
