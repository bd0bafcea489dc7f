#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# run.pl STATUS_FILE TIMEOUT_SECONDS COMMAND [ARGS...]
#
# Runs COMMAND (stdin, stdout and stderr inherited) and writes how it ended
# to STATUS_FILE, one line:
#   exit N       it exited with status N
#   signal N     it was killed by signal N (with " core" if it dumped core)
#   timeout N    it ran longer than TIMEOUT_SECONDS; it was sent SIGTERM,
#                then SIGKILL 5 s later, and its own ending follows
#                ("timeout 60 signal 15")
#   noexec MSG   it could not be started at all (MSG is the reason)
# Exits 0 once the status is written (2 on a usage error).
#
# Why: a shell cannot tell "exited with 139" from "killed by SIGSEGV"
# ($? is 139 for both), and 'xprof record' must do the former when its
# command dies of a signal, never the latter.  Perl is used because
# perl-base is Essential on Debian and its waitpid gives the raw status.
# Used by tests/lib/lib.sh (expect_exit, start_bg); not part of xprof.
use strict;
use warnings;
use POSIX ();

if (@ARGV < 3 || $ARGV[1] !~ /^[0-9]+$/) {
	print STDERR "usage: run.pl STATUS_FILE TIMEOUT_SECONDS COMMAND [ARGS...]\n";
	exit 2;
}
my ($status_file, $timeout, @cmd) = @ARGV;

sub put_status {
	my ($line) = @_;
	open(my $f, '>', $status_file) or die "run.pl: cannot write '$status_file': $!\n";
	print $f "$line\n";
	close($f) or die "run.pl: cannot write '$status_file': $!\n";
}

# The child reports a failed exec through this pipe (close-on-exec, so
# it sees EOF when the exec succeeds).
pipe(my $rd, my $wr) or die "run.pl: pipe: $!\n";
my $pid = fork();
die "run.pl: fork: $!\n" unless defined $pid;
if ($pid == 0) {
	close($rd);
	# A background job of a non-interactive shell starts with INT and QUIT
	# ignored; the command must get the default dispositions.
	$SIG{$_} = 'DEFAULT' for qw(ALRM TERM INT QUIT);
	{
		no warnings qw(exec);    # the message goes through the pipe
		exec { $cmd[0] } @cmd;
	}
	print $wr "cannot run '$cmd[0]': $!";
	close($wr);
	POSIX::_exit(127);
}
close($wr);
my $exec_error = do { local $/; <$rd> };
close($rd);

my $timed_out = 0;
$SIG{ALRM} = sub {
	if (!$timed_out) {
		$timed_out = 1;
		kill('TERM', $pid);
		alarm(5);
	} else {
		kill('KILL', $pid);
	}
};
# Pass on a TERM or INT (the test's trap), so the child is not orphaned.
$SIG{TERM} = sub { kill('TERM', $pid) };
$SIG{INT} = sub { kill('INT', $pid) };
alarm($timeout) if $timeout > 0;

my $got;
do {
	$got = waitpid($pid, 0);
} while ($got == -1 && $!{EINTR});
my $status = $?;
alarm(0);
die "run.pl: waitpid: $!\n" if $got != $pid;

if (defined $exec_error && length $exec_error) {
	put_status("noexec $exec_error");
	exit 0;
}
my $how;
if ($status & 127) {
	$how = sprintf("signal %d%s", $status & 127, ($status & 128) ? " core" : "");
} else {
	$how = sprintf("exit %d", $status >> 8);
}
$how = "timeout $timeout $how" if $timed_out;
put_status($how);
exit 0;
