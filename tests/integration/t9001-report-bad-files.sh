#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# 'xprof report' on data files that are not what they should be, and on
# outputs it cannot write (doc/design.md, Output and messages: one error line naming the
# subject, exit 1, never a signal):
#   - not a data file at all: empty, /dev/null, text, 4 KiB of random
#     bytes, a directory, a missing file (with a hint), a header only (no
#     samples), a newer format version;
#   - cut short at 60 places, and at 40 record boundaries: each cut
#     file either reports (exit 0) what it holds -- every stack line is
#     one of the whole file's, with at most its count -- with one warning
#     naming the offset unless the cut fell between two records, or has no
#     samples yet (exit 1, one error line);
#   - 200 single-bit flips and 40 overwrites with 8 random bytes: exit 0
#     with folded output, or exit 1 with exactly one error line (after a
#     warning if a damaged length made the rest look like a cut tail);
#   - outputs: -o a directory, -o in a missing directory, -o /dev/full,
#     standard output on /dev/full, -o in a read-only directory; a report
#     that fails does not clobber an existing -o file.
# Needs no ptrace: the data files are canned (tests/data/fuzz/datafile/
# forker.xprof: three processes, fork and exec, SAMPLES batches) or made by
# tests/lib/mkdata.pl.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"

# status_of CMD...: run CMD (stdout, stderr to run.out / run.err) and set
# $st to "exit N", for loops of hundreds of runs whose acceptable outcomes
# are several (cheaper than run.pl).  xprof report never exits with 124 or
# more on its own: 124 is a timeout, 128+N a death by signal N.
status_of() {
	local rc=0
	timeout -k 5 "$XP_CMD_TIMEOUT" "$@" </dev/null >run.out 2>run.err || rc=$?
	if ((rc == 124)); then
		st="timeout"
	elif ((rc > 124)); then
		st="signal $((rc - 128))"
	else
		st="exit $rc"
	fi
}

# one_error FILE [ANYWHERE]: FILE (a stderr) has exactly one "xprof:
# error:" line, and it is the first line (or, with ANYWHERE, the first
# line that is not a warning: a cut file is warned about, then refused).
one_error() {
	local first=""
	if [[ ${2:-} ]]; then
		first=$(grep -v '^xprof: warning: ' "$1" | head -n 1)
	else
		IFS= read -r first <"$1" || true
	fi
	[[ $(grep -c '^xprof: error: ' "$1") == 1 && $first == "xprof: error: "* ]]
}

cp "$XP_DATA/fuzz/datafile/forker.xprof" good.data
expect_exit 0 "$XPROF" report -i good.data --folded --value samples -o good.folded
assert_folded_format good.folded
good_total=$(folded_total good.folded)
say "  whole file: $good_total samples in $(wc -l <good.folded) stacks, $(stat -c %s good.data) bytes"

say "## not a data file"
: >empty.data
printf 'hello, world\n' >text.data
head -c 4096 /dev/urandom >random.data
mkdir dir.data
head -c 24 good.data >header.data
# Version 2 at offset 8 (little-endian u16).
perl -e 'local $/; my $d = <STDIN>; substr($d, 8, 2) = pack("v", 2); print $d' \
	<good.data >v2.data
for f in empty.data /dev/null text.data random.data dir.data missing.data header.data v2.data; do
	check_exit 1 "$XPROF" report -i "$f" --folded --value samples -o out.folded
	assert_error_line "$f" "$XP_ERR"
	assert_file_matches "$f: the message names it" "$XP_ERR" "^xprof: error: .*'$f'"
	assert_file_empty "$f: nothing on stdout" "$XP_OUT"
done
check_exit 1 "$XPROF" report -i missing.data
assert_file_matches "missing file: a hint" "$XP_ERR" "^hint: run 'xprof record"
check_exit 1 "$XPROF" report -i header.data
assert_file_matches "header only: no samples" "$XP_ERR" "no samples in 'header.data'"
check_exit 1 "$XPROF" report -i v2.data
assert_file_matches "version 2: names both versions" "$XP_ERR" "version 2.*version 1"

say "## cut short"
# Record boundaries: a cut there leaves a valid (shorter) file, no warning.
mapfile -t bounds < <(perl -e 'local $/; my $d = <STDIN>; my $o = 24; print "$o\n";
	while ($o + 8 <= length $d) { my ($t, $n) = unpack("VV", substr($d, $o, 8));
	$o += 8 + $n; last if $o > length $d; print "$o\n" }' <good.data)
declare -A is_bound=()
for b in "${bounds[@]}"; do is_bound[$b]=1; done
size=$(stat -c %s good.data)
# At most 40 of the boundaries, spread over the file, and 60 other places.
cuts=()
for ((i = 0; i < ${#bounds[@]}; i += (${#bounds[@]} + 39) / 40)); do
	cuts+=("${bounds[i]}")
done
for ((i = 1; i <= 60; i++)); do
	cuts+=($((24 + (size - 24) * i / 61 + i % 7)))
done
n_cuts=0 n_reported=0 n_nosamples=0 n_warned=0 bad_cuts=0
for c in "${cuts[@]}"; do
	((c < size)) || continue
	n_cuts=$((n_cuts + 1))
	head -c "$c" good.data >cut.data
	status_of "$XPROF" report -i cut.data --folded --value samples -o cut.folded
	warn=$(grep -c "^xprof: warning: 'cut.data'" run.err || true)
	case $st in
	"exit 0")
		n_reported=$((n_reported + 1))
		n_warned=$((n_warned + warn))
		if [[ -z ${is_bound[$c]:-} ]] && ((warn != 1)); then
			fail "cut at $c (inside a record): $warn warnings about the cut, want 1"
			bad_cuts=$((bad_cuts + 1))
		elif [[ ${is_bound[$c]:-} ]] && ((warn != 0)); then
			fail "cut at $c (a record boundary): $warn warnings, want none"
			bad_cuts=$((bad_cuts + 1))
		fi
		# Every stack of the cut file is one of the whole file's, with at most its count.
		if ! awk 'NR == FNR { n = $NF; $NF = ""; whole[$0] = n; next }
			{ n = $NF; $NF = ""; if (!($0 in whole) || n > whole[$0]) { print; bad = 1 } }
			END { exit bad }' good.folded cut.folded >cut.extra; then
			fail "cut at $c: stacks not in the whole file's report (or with more samples):"
			head -n 5 cut.extra | sed 's/^/  | /'
			bad_cuts=$((bad_cuts + 1))
		fi
		;;
	"exit 1")
		n_nosamples=$((n_nosamples + 1))
		if ! one_error run.err anywhere || ! grep -q "no samples in 'cut.data'" run.err; then
			fail "cut at $c: exit 1 without exactly one 'no samples' error"
			show_file stderr run.err
			bad_cuts=$((bad_cuts + 1))
		fi
		;;
	*)
		fail "cut at $c: $st"
		show_file stderr run.err
		bad_cuts=$((bad_cuts + 1))
		;;
	esac
done
say "  $n_cuts cuts (the file has ${#bounds[@]} record boundaries): $n_reported reported ($n_warned with a" \
	"warning), $n_nosamples without samples yet, $bad_cuts wrong"
((bad_cuts == 0)) && say "  ok: every cut file reports what it holds or says it has no samples"

say "## bit flips and overwrites"
# Deterministic: the same 240 mutated files on every run, made by one perl.
mkdir mut
perl -e 'srand(9); local $/; my $g = <STDIN>; my $size = length $g;
	for my $i (1 .. 240) { my $d = $g; my $what;
		if ($i <= 200) { my ($o, $b) = (24 + int(rand($size - 24)), int(rand(8)));
			substr($d, $o, 1) = chr(ord(substr($d, $o, 1)) ^ (1 << $b)); $what = "flip-$o-$b" }
		else { my $o = int(rand($size - 8));
			substr($d, $o, 8) = pack("C8", map { int(rand(256)) } 1 .. 8); $what = "overwrite-$o" }
		open(my $f, ">", sprintf("mut/%03d-%s", $i, $what)) or die; print $f $d; close($f) }' <good.data
n_mut=0 n_ok=0 n_refused=0 bad_mut=0
for m in mut/*; do
	n_mut=$((n_mut + 1))
	kind=${m#mut/}
	cp "$m" mut.data
	status_of "$XPROF" report -i mut.data --folded --value samples -o mut.folded
	case $st in
	"exit 0")
		n_ok=$((n_ok + 1))
		if ! awk '!/^[^; ][^;]*(;[^;]+)* [1-9][0-9]*$/ { bad = 1 } END { exit bad || !NR }' \
			mut.folded; then
			fail "$kind: exit 0 but the output is not folded stacks"
			bad_mut=$((bad_mut + 1))
		fi
		;;
	"exit 1")
		n_refused=$((n_refused + 1))
		# A flipped length can make the rest look like a cut tail: a warning, then the error.
		if ! one_error run.err anywhere; then
			fail "$kind: exit 1 without exactly one error line (after warnings)"
			show_file stderr run.err
			bad_mut=$((bad_mut + 1))
		fi
		;;
	*)
		fail "$kind: $st"
		show_file stderr run.err
		bad_mut=$((bad_mut + 1))
		;;
	esac
done
say "  $n_mut mutated files: $n_ok reported, $n_refused refused with one error, $bad_mut wrong"
((bad_mut == 0)) && say "  ok: no mutated file crashes, hangs or gets a muddled error"

say "## outputs that cannot be written"
# A file whose symbols cannot be found does not warn (no path to open): errors come first.
perl "$XP_LIB/mkdata.pl" quiet.data "[anon]"
expect_exit 0 "$XPROF" report -i quiet.data --folded --value samples -o quiet.folded
assert_file_empty "canned file: no warnings" "$XP_ERR"
mkdir outdir
for o in outdir nodir/x.folded /dev/full; do
	check_exit 1 "$XPROF" report -i quiet.data --folded --value samples -o "$o"
	assert_error_line "-o $o" "$XP_ERR"
	assert_file_matches "-o $o: names it" "$XP_ERR" "^xprof: error: cannot (create|write) '$o'"
done
# shellcheck disable=SC2016 # $0 is expanded by that shell
check_exit 1 sh -c 'exec "$0" report -i quiet.data --folded --value samples >/dev/full' "$XPROF"
assert_error_line "stdout on /dev/full" "$XP_ERR"
assert_file_matches "stdout on /dev/full: says so" "$XP_ERR" \
	'^xprof: error: cannot write standard output: No space left on device'
printf 'keep me\n' >keep.folded
check_exit 1 "$XPROF" report -i random.data --folded --value samples -o keep.folded
assert_eq "a failed report leaves -o alone" "$(cat keep.folded)" "keep me"

# Read-only: chmod does not stop root, a read-only mount does.
mkdir ro
if ((EUID != 0)); then
	chmod 555 ro
	ro_how="chmod 555"
elif mount -t tmpfs -o ro,size=16k tmpfs ro 2>/dev/null; then
	trap 'rc=$?; set +e; umount -l "$XP_TMP/ro" 2>/dev/null; (exit $rc); _xp_exit' EXIT
	ro_how="a read-only tmpfs"
else
	ro_how=""
	say "# no read-only directory here (root without mount): skipping -o in one"
fi
if [[ $ro_how ]]; then
	check_exit 1 "$XPROF" report -i quiet.data --folded --value samples -o ro/x.folded
	assert_error_line "-o in $ro_how" "$XP_ERR"
	assert_file_matches "-o in $ro_how: names it" "$XP_ERR" "^xprof: error: cannot create 'ro/x.folded'"
	if ((EUID == 0)); then
		umount "$XP_TMP/ro"
	fi
fi

finish
