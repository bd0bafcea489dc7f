/* SPDX-License-Identifier: MIT */
/*
 * threadexec: an exec from a thread other than the leader.  main ->
 * leader_work computes while a second thread waits SECONDS and execs PROG
 * ARGS...; the kernel then ends the leader (which stops at its exit under
 * ptrace with PTRACE_O_TRACEEXIT) and gives the exec'ing thread the
 * leader's thread id.  Truth: about SECONDS of CPU time in leader_work,
 * then PROG's own.
 *
 * Usage: threadexec SECONDS PROG [ARGS...]
 * Exit status: PROG's, or 127 if the exec failed.  Readiness: one line,
 * role "work", once leader_work starts.
 */
#include "target.h"

#include <pthread.h>

static double wait_s;
static char **prog;

TGT_NOINLINE void leader_work(void);

void leader_work(void)
{
	uint64_t x = 0x5eed;

	for (;;)
		TGT_MIX(x, TGT_UNIT_ITERS);
}

static void *execer(void *arg)
{
	struct timespec ts = {(time_t)wait_s, (long)((wait_s - (double)(time_t)wait_s) * 1e9)};

	(void)arg;
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	execv(prog[0], prog);
	fprintf(stderr, "threadexec: cannot exec %s: %s\n", prog[0], strerror(errno));
	_exit(127);
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc < 3)
		tgt_die("threadexec", "usage: threadexec SECONDS PROG [ARGS...]");
	wait_s = tgt_seconds_arg("threadexec", argv[1]);
	prog = argv + 2;
	if (pthread_create(&t, NULL, execer, NULL))
		tgt_die("threadexec", "cannot create a thread");
	tgt_ready("threadexec", "work");
	leader_work();
	return 0;
}
