#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# 'xprof report' on data files from elsewhere whose mapping paths and
# process names are hostile (tests/lib/mkdata.pl writes them):
#   - paths that are a FIFO with no writer (open would block forever), a
#     directory, /dev/zero, /dev/urandom, a terminal, /proc/self/mem, a
#     path that does not exist, a relative path, an empty one, "[vdso]",
#     one 10 MB long, one with a newline and an escape sequence: the
#     report finishes (within 20 s), exits 0 with every sample, names each
#     such file in at most one warning, and the frames fall back to
#     module+offset;
#   - a process name with a newline, ';' and an escape sequence: the
#     folded output stays one line per stack;
#   - nothing from the file reaches stdout or stderr as a control
#     character, and stderr stays small (a message is at most 4 KiB).
# Needs no ptrace.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"

XP_CMD_TIMEOUT=20
mkfifo fifo
mkdir dir
esc=$'/tmp/new\nline\033[31mred'
paths=("$XP_TMP/fifo" "$XP_TMP/dir" /dev/zero /dev/urandom /dev/tty /proc/self/mem
	/nonexistent/lib.so relative/lib.so "" "[vdso]" "=LONG:$((10 << 20))" "$esc")
perl "$XP_LIB/mkdata.pl" hostile.data --comm $'evil\n;name\033[2J' "${paths[@]}"
say "# data file: $(stat -c %s hostile.data) bytes, ${#paths[@]} mappings"

expect_exit 0 "$XPROF" report -i hostile.data --folded --value samples -o hostile.folded
show_file "report's stderr" "$XP_ERR" 20
assert_folded_format hostile.folded
assert_eq "one stack" "$(wc -l <hostile.folded)" 1
assert_eq "every sample" "$(folded_total hostile.folded)" 3
assert_eq "the stack has a frame per mapping, plus the process" \
	"$(awk '{ sub(/ [0-9]+$/, ""); print split($0, f, ";") }' hostile.folded)" $((${#paths[@]} + 1))
assert_file_matches "the FIFO is refused, not opened" "$XP_ERR" \
	"^xprof: warning: cannot open '$XP_TMP/fifo': not a regular file"
assert_file_matches "so is the directory" "$XP_ERR" \
	"^xprof: warning: cannot open '$XP_TMP/dir': not a regular file"
# The kernel names shared anonymous memory "/dev/zero": nothing to read there.
assert_file_matches "/dev/zero is anonymous memory: a bare address" hostile.folded \
	";urandom\+0x100;0x[0-9a-f]+;dir\+0x100;"
assert_file_matches "frames in the FIFO (the leaf) are module+offset" hostile.folded ";fifo\+0x100 3$"
n=$(grep -c . "$XP_ERR")
if ((n <= ${#paths[@]})); then
	say "  ok: at most one warning per path ($n lines)"
else
	fail "$n lines on stderr for ${#paths[@]} paths"
fi
size=$(stat -c %s "$XP_ERR")
if ((size < 64 * 1024)); then
	say "  ok: stderr stays small with a 10 MB path ($size bytes)"
else
	fail "stderr is $size bytes for a 10 MB path"
fi
if LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$XP_ERR" hostile.folded; then
	fail "a control character from the data file reached the output"
	LC_ALL=C grep -n $'[\x01-\x08\x0b-\x1f\x7f]' "$XP_ERR" hostile.folded | cat -A | head -n 5
else
	say "  ok: no control character from the data file reaches stdout or stderr"
fi

say "## the flat report too"
expect_exit 0 "$XPROF" report -i hostile.data --flat -o hostile.flat
if LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$XP_ERR" hostile.flat; then
	fail "a control character from the data file reached the flat report"
else
	say "  ok: no control character in the flat report"
fi

finish
