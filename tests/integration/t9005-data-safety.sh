#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Nothing lost, nothing unbounded (the data file writer, report's bounds,
# the allocation wrappers of lib/err.c):
#   - an existing output survives a record whose command cannot run (127)
#     and an attach that fails (to a thread id, 1): the same bytes, no
#     .old, nothing left beside it; a record that runs replaces it and
#     keeps the previous one as <name>.old (as perf does), mode 0600;
#   - report of a hostile file (a stack of 70000 frames, more than xprof
#     records, in a JIT symbol with a 1 MiB name; 1.7 MB) warns about
#     each bound -- depth cut to 65536, names cut to 4096 bytes, output
#     stopped at 64 MiB + 32 x the file -- exits 0, and writes at most that
#     bound (unbounded it would be 73 GB); the shallow stack beside it, which
#     sorts first, is reported whole.
# An allocation that fails is t9006's.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace

T=$XP_TARGETS

# leftovers NAME: files beside NAME other than NAME and NAME.old.
leftovers() {
	find . -maxdepth 1 -name "$1.*" ! -name "$1.old" -printf '%f '
}

say "## an existing output survives a failed record or attach"
expect_exit 0 "$XPROF" record -q -o keep.data -- "$T/threads" 1 0.3
cp keep.data keep.orig
expect_exit 127 "$XPROF" record -q -o keep.data -- /nonexistent/cmd
assert_files_equal "record of a missing command: output unchanged" keep.orig keep.data
ready_init
start_bg threads "$T/threads" 2 30
wait_ready 1
tid=$(other_thread "$XP_READY_PID")
expect_exit 1 "$XPROF" attach -p "$tid" -o keep.data
assert_file_matches "attach to a thread id fails" "$XP_ERR" "it is a thread id"
assert_files_equal "failed attach: output unchanged" keep.orig keep.data
assert_eq "no .old after failures" "$(ls keep.data.old 2>/dev/null || true)" ""
assert_eq "nothing left beside it" "$(leftovers keep.data)" ""
expect_exit 0 "$XPROF" record -q -o keep.data -- "$T/threads" 1 0.3
assert_files_equal "a record that ran keeps the previous output as .old" keep.orig keep.data.old
if cmp -s keep.orig keep.data; then
	fail "the new recording did not replace the output"
else
	say "  ok: the new recording replaced the output"
fi
assert_eq "the new output is private" "$(stat -c %a keep.data)" 600
assert_eq "nothing left beside it" "$(leftovers keep.data)" ""
expect_exit 0 "$XPROF" report -i keep.data --folded --value samples -o keep.folded
assert_folded_format keep.folded

say "## report of a hostile file stays bounded"
perl - hostile.data <<'EOF'
use strict;
use warnings;
sub str { my ($s) = @_; return pack('V', length($s)) . $s; }
sub rec { my ($type, $payload) = @_; return pack('VV', $type, length($payload)) . $payload; }
my $d = 'XPROFDAT' . pack('vCCvvQ<', 1, 1, 0, 62, 24, 1_700_000_000_000_000_000);
$d .= rec(1, pack('Q<VVV', 0, 100, 1, 1) . str('hostile') . str('/nonexistent/hostile'));
$d .= rec(2, pack('Q<VV', 0, 100, 100) . str('hostile'));
# JITSYM: pid, start, size, a 1 MiB name; and a short one.
$d .= rec(8, pack('VQ<Q<', 100, 0x10000, 0x1000) . str('J' x (1 << 20)));
$d .= rec(8, pack('VQ<Q<', 100, 0x20000, 0x1000) . str('A_shallow'));
# STACK 1: 70000 frames in the long name; STACK 2: two frames in the short one.
my $n = 70000;
$d .= rec(4, pack('Q<V', 1, $n) . pack('Q<*', (0x10100) x $n) . pack('C*', 1, (0) x ($n - 1)));
$d .= rec(4, pack('Q<V', 2, 2) . pack('Q<*', 0x20100, 0x20200) . pack('C*', 1, 0));
$d .= rec(5, pack('Q<VVQ<Q<', 1000 * $_, 100, 100, 1 + $_ % 2, 1000)) for 1 .. 4;
open(my $f, '>:raw', $ARGV[0]) or die "$ARGV[0]: $!\n";
print $f $d;
close($f) or die "$ARGV[0]: $!\n";
EOF
size=$(stat -c %s hostile.data)
bound=$(((64 << 20) + 32 * size))
say "# hostile.data: $size bytes; output bound $bound bytes"
cp hostile.data hostile.orig
expect_exit 0 "$XPROF" report -i hostile.data --folded --value samples -o hostile.folded
show_file "report's stderr" "$XP_ERR"
assert_file_matches "warns about the depth" "$XP_ERR" \
	"^xprof: warning: 'hostile.data': stack id 1 has 70000 frames, .*cutting .* to 65536$"
assert_file_matches "warns about the names" "$XP_ERR" \
	"^xprof: warning: 'hostile.data': [0-9]+ frame names longer than 4096 bytes"
assert_file_matches "warns about the output" "$XP_ERR" \
	"^xprof: warning: the report of 'hostile.data' stops after [0-9]+ MiB"
out=$(stat -c %s hostile.folded)
say "# hostile.folded: $out bytes"
((out <= bound)) || fail "report wrote $out bytes, more than $bound"
assert_file_matches "the shallow stack is there, whole" hostile.folded "^hostile;A_shallow;A_shallow 2$"
assert_files_equal "the data file is unchanged" hostile.orig hostile.data

finish
