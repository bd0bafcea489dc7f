#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# mkdata.pl OUT [--comm NAME] PATH...
#
# Writes a small, valid xprof data file (doc/data-format.md, version 1,
# x86-64) whose mappings name the given PATHs, for tests of what 'report'
# does with hostile contents that the writer itself would never produce
# or that only another machine could: a mapping path that is a FIFO, a
# device, a directory, /proc/self/mem, 10 MB long, or full of control
# characters; a process name with a newline.  A PATH written "=LONG:N"
# is a path N bytes long (argv cannot carry 10 MB).  Process 100 (NAME, default
# "hostile") has one executable mapping per PATH, 64 KiB each from
# 0x400000 on; one stack has one frame in each mapping (innermost is the
# first PATH's); three samples use it.  Every path is used by the report,
# so each is opened (or refused) by the symbolizer.
#
# Used by tests/integration/t9xxx; not part of xprof.
use strict;
use warnings;

my $out = shift @ARGV or die "usage: mkdata.pl OUT [--comm NAME] PATH...\n";
my $comm = "hostile";
if (@ARGV >= 2 && $ARGV[0] eq '--comm') {
	shift @ARGV;
	$comm = shift @ARGV;
}
# "=LONG:N" stands for a path of N bytes ("/aaa..."), too long for argv.
my @paths = map { /^=LONG:([0-9]+)$/ ? '/' . ('a' x ($1 - 1)) : $_ } @ARGV;
die "mkdata.pl: no PATH given\n" unless @paths;

sub str { my ($s) = @_; return pack('V', length($s)) . $s; }
sub rec { my ($type, $payload) = @_; return pack('VV', $type, length($payload)) . $payload; }

# Header: magic, version 1, little-endian, reserved, EM_X86_64, length 24, start time.
my $data = 'XPROFDAT' . pack('vCCvvQ<', 1, 1, 0, 62, 24, 1_700_000_000_000_000_000);
# PROCESS: t, pid, ppid, flags (DF_PROC_EXEC), comm, exe.
$data .= rec(1, pack('Q<VVV', 0, 100, 1, 1) . str($comm) . str('/nonexistent/hostile'));
# THREAD: t, pid, tid, comm.
$data .= rec(2, pack('Q<VV', 0, 100, 100) . str($comm));
my @pcs;
for my $i (0 .. $#paths) {
	my $start = 0x400000 + $i * 0x10000;
	# MAPPING: t, pid, prot (r-x), start, end, offset, path, no build-id.
	$data .= rec(3, pack('Q<VVQ<Q<Q<', 0, 100, 5, $start, $start + 0x10000, 0)
		. str($paths[$i]) . pack('C', 0));
	push @pcs, $start + 0x100;
}
# STACK: id 1, the frames (innermost first), flags (first exact, the rest return addresses).
$data .= rec(4, pack('Q<V', 1, scalar @pcs) . pack('Q<*', @pcs)
	. pack('C*', 1, (0) x $#pcs));
# SAMPLE: t, pid, tid, stack id, weight.
$data .= rec(5, pack('Q<VVQ<Q<', 1000 * $_, 100, 100, 1, 1000)) for 1 .. 3;

open(my $f, '>:raw', $out) or die "mkdata.pl: cannot write '$out': $!\n";
print $f $data;
close($f) or die "mkdata.pl: cannot write '$out': $!\n";
