#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# A command that dies of SIGSEGV dumps core under xprof exactly as without
# it (doc/design.md, Never harm the target): with 'ulimit -c unlimited' and a
# core_pattern that writes a file in the working directory, the 'crash'
# target is killed by SIGSEGV with the core-dumped bit in its wait status
# (run.pl: "signal 11 core"), leaving an ELF core file; under 'xprof
# record', record exits 139, says "killed by signal 11 ..., core dumped",
# and the same kind of core file appears, of the same program and signal;
# the data file reports, most samples in crash_spin.
# Skipped (77) when cores cannot be produced here even without xprof: a
# core_pattern that pipes to a program (systemd-coredump, apport) or
# writes elsewhere, or a hard core limit of 0.
# Under a sanitizer build, ASan would lower RLIMIT_CORE to 0 for xprof and
# so for the command (disable_coredump): this test turns that off.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace

T=$XP_TARGETS
pattern=$(cat /proc/sys/kernel/core_pattern)
case $pattern in
"|"*) skip "core_pattern pipes cores to a program ('$pattern'): no core file to look at" ;;
*/*) skip "core_pattern writes cores to '$pattern', outside the working directory" ;;
esac
ulimit -c unlimited 2>/dev/null || skip "cannot raise the core size limit (hard limit $(ulimit -Hc))"
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}disable_coredump=0
say "# core_pattern '$pattern', core_uses_pid $(cat /proc/sys/kernel/core_uses_pid)"

# core_info DIR: "core PROGRAM signal=N" for the one core file in DIR
# (ELF type ET_CORE; NT_PRPSINFO's pr_fname; NT_SIGINFO's si_signo), or
# "none".  Read with perl: readelf does not decode these notes everywhere.
core_info() {
	local core
	core=$(find "$1" -maxdepth 1 -type f | head -n 1)
	if [[ -z $core ]]; then
		echo none
		return 0
	fi
	perl -e 'open(my $f, "<:raw", shift) or die; local $/; my $d = <$f>;
		my ($type, $fname, $sig) = (unpack("v", substr($d, 16, 2)), "?", "?");
		my ($phoff, $phsz, $phnum) = (unpack("Q<", substr($d, 32, 8)),
			unpack("v", substr($d, 54, 2)), unpack("v", substr($d, 56, 2)));
		for my $i (0 .. $phnum - 1) {
			my $ph = substr($d, $phoff + $i * $phsz, $phsz);
			next unless unpack("V", $ph) == 4;    # PT_NOTE
			my ($o, $end) = (unpack("Q<", substr($ph, 8, 8)), 0);
			$end = $o + unpack("Q<", substr($ph, 32, 8));
			while ($o + 12 <= $end) {
				my ($nsz, $dsz, $nt) = unpack("VVV", substr($d, $o, 12));
				my $desc = $o + 12 + (($nsz + 3) & ~3);
				($fname = substr($d, $desc + 40, 16)) =~ s/\0.*//s if $nt == 3;
				$sig = unpack("V", substr($d, $desc, 4)) if $nt == 0x53494749;
				$o = $desc + (($dsz + 3) & ~3);
			}
		}
		printf "%s %s signal=%s\n", $type == 4 ? "core" : "type$type", $fname, $sig' "$core"
}

say "## without xprof"
mkdir plain prof
cd plain
check_exit "signal 11 core" "$T/crash" 0.2
cd ..
cp "$XP_OUT" plain.out
plain_core=$(core_info plain)
say "  core file: $plain_core"
if [[ $plain_core == none ]]; then
	skip "no core file even without xprof (core_pattern '$pattern'): cores are not produced here"
fi

say "## under xprof"
cd prof
expect_exit 139 "$XPROF" record -o ../crash.data -- "$T/crash" 0.2
cd ..
assert_files_equal "output as without xprof" plain.out "$XP_OUT"
assert_file_matches "record says how the command died" "$XP_ERR" \
	"^xprof: '.*crash' was killed by signal 11 \(Segmentation fault\), core dumped$"
prof_core=$(core_info prof)
say "  core file: $prof_core"
assert_eq "the same core as without xprof (type, program, signal)" "$prof_core" "$plain_core"
expect_exit 0 "$XPROF" report -i crash.data --folded --value samples -o crash.folded
assert_folded_format crash.folded
assert_share_at_least "samples in crash_spin" 80 crash.folded "frame:crash_spin"

finish
