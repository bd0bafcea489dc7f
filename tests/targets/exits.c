/* SPDX-License-Identifier: MIT */
/*
 * exits: ends in a way chosen on the command line, for exit-status tests.
 * "exits [code] N" exits with status N; "exits signal N" resets signal N to
 * its default action, unblocks it and raises it (with core dumps disabled,
 * so no core file is left behind).  An optional SECONDS of CPU work (spin)
 * comes first, so a profiler has samples to write.
 * Truth: the wait status is exit N, or death by signal N (a shell or
 * 'xprof record' reports 128+N).  A signal whose default action is to
 * ignore (SIGCHLD, SIGURG, SIGWINCH) does not kill: exits then exits 1.
 *
 * Usage: exits [code] N [SECONDS] | exits signal N [SECONDS]
 * Prints one line first ("exits: code N" or "exits: signal N"), flushed.
 * Readiness: one line, role "spin", when the spin starts (only if SECONDS
 * was given).
 */
#include "target.h"

#include <signal.h>
#include <sys/resource.h>

TGT_NOINLINE uint64_t spin(double seconds);

uint64_t spin(double seconds)
{
	double end = tgt_clock(CLOCK_PROCESS_CPUTIME_ID) + seconds;
	uint64_t x = 0;

	/*
	 * Reading a CPU-time clock is a system call, slow in a VM: check it
	 * every 64 units so that spin, not the kernel, is on top.
	 */
	while (tgt_clock(CLOCK_PROCESS_CPUTIME_ID) < end)
		TGT_MIX(x, 64 * TGT_UNIT_ITERS);
	return x;
}

int main(int argc, char **argv)
{
	static const char usage[] = "usage: exits [code] N [SECONDS] | exits signal N [SECONDS]";
	struct rlimit no_core = {0, 0};
	int arg = 1, sig = 0, n;
	volatile uint64_t sink;
	sigset_t set;

	if (arg < argc && (!strcmp(argv[arg], "signal") || !strcmp(argv[arg], "code")))
		sig = !strcmp(argv[arg++], "signal");
	if (arg >= argc || argc - arg > 2)
		tgt_die("exits", usage);
	n = (int)tgt_long_arg("exits", argv[arg], sig ? 1 : 0, sig ? SIGRTMAX : 255);
	printf("exits: %s %d\n", sig ? "signal" : "code", n);
	fflush(stdout);
	if (arg + 1 < argc) {
		double seconds = tgt_seconds_arg("exits", argv[arg + 1]);

		tgt_ready("exits", "spin");
		sink = spin(seconds);
		(void)sink;
	}
	if (!sig)
		return n;

	setrlimit(RLIMIT_CORE, &no_core);
	signal(n, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, n);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(n);
	fprintf(stderr, "exits: still alive after signal %d\n", n);
	return 1;
}
