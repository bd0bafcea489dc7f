/* SPDX-License-Identifier: MIT */
/*
 * fifo CMD [ARGS...]: run CMD under SCHED_FIFO priority 10, its children
 * not (chrt -f -R 10; the guests' busybox has no chrt).  tests/xarch/guest.sh runs xprof so:
 * on a guest with one CPU the tracer can then preempt the target the
 * moment its sampling timer fires.  As an ordinary task it runs only when
 * the scheduler next preempts the target, which caps the rate near
 * CONFIG_HZ (250) and, with EEVDF (the riscv64 guest's 6.12 kernel), puts
 * the stops at the target's system-call returns rather than anywhere.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sched_param sp = {.sched_priority = 10};

	if (argc < 2) {
		fprintf(stderr, "usage: fifo CMD [ARGS...]\n");
		return 2;
	}
	/* Not for the children: a command recorded by xprof must run as usual. */
	if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp))
		fprintf(stderr, "fifo: sched_setscheduler: %s (running as usual)\n",
			strerror(errno));
	execvp(argv[1], argv + 1);
	fprintf(stderr, "fifo: cannot run '%s': %s\n", argv[1], strerror(errno));
	return 127;
}
