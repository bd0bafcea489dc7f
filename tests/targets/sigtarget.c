/* SPDX-License-Identifier: MIT */
/*
 * sigtarget: counts the signals it receives, for signal re-injection tests.
 * It computes (in busy) while counting, in handlers: every SIGRTMIN (sent
 * by another process with sigqueue, each carrying an integer value, which
 * is summed), and every SIGCONT (so SIGSTOP/SIGCONT cycles are counted).
 * SIGUSR1 asks it to finish: it prints the counts and exits 0.  Real-time
 * signals are queued, not merged, so the counts are exact: a tracer that
 * swallows, duplicates or alters a signal changes them.  All signals sent
 * before SIGUSR1 have been delivered when the counts are printed (the
 * kernel runs every pending unblocked handler before returning to the
 * program).
 * Truth: after N sigqueue(SIGRTMIN, v_i), K SIGSTOP/SIGCONT cycles and one
 * SIGUSR1, the output is "rtmin=N sum=<sum of v_i> cont=K", exit status 0;
 * a SIGSTOP stops it (state T) until SIGCONT, and it then goes on.
 *
 * Usage: sigtarget [MAX_SECONDS]   give up after MAX_SECONDS of wall time
 *                                  (default 60): print the counts, exit 3
 * Output: sigtarget: rtmin=<N> sum=<S> cont=<K>
 * Readiness: one line, role "signals", once the handlers are installed;
 * then one line, role "cont-<K>", each time the main loop sees that the
 * SIGCONT handler has run for the K-th time.  A test must wait for it
 * before the next SIGSTOP: a stop signal discards a pending SIGCONT
 * (signal(7)), so a cycle sent too soon is legitimately not counted.
 */
#include "target.h"

#include <signal.h>

static volatile sig_atomic_t rtmin_count, cont_count, finish;
/* Updated only by the SIGRTMIN handler, read once handlers are done. */
static volatile long long rtmin_sum;

TGT_NOINLINE int busy(double give_up_at);

static void on_rtmin(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	rtmin_count++;
	rtmin_sum += si->si_value.sival_int;
}

static void on_cont(int sig)
{
	(void)sig;
	cont_count++;
}

static void on_usr1(int sig)
{
	(void)sig;
	finish = 1;
}

/* Compute until asked to finish; 0 when asked, -1 after giving up. */
int busy(double give_up_at)
{
	sig_atomic_t conts_seen = 0;
	uint64_t x = 0;
	unsigned int n = 0;
	char role[32];

	while (!finish) {
		if (cont_count != conts_seen) {
			conts_seen = cont_count;
			snprintf(role, sizeof(role), "cont-%d", (int)conts_seen);
			tgt_ready("sigtarget", role);
		}
		TGT_MIX(x, TGT_UNIT_ITERS);
		if ((++n & 63) == 0 && tgt_clock(CLOCK_MONOTONIC) >= give_up_at)
			return -1;
	}
	return x == 1 ? 1 : 0; /* uses x, so the loop is not optimised away */
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	double max_seconds = 60;
	int ret;

	if (argc > 2)
		tgt_die("sigtarget", "usage: sigtarget [MAX_SECONDS]");
	if (argc == 2)
		max_seconds = tgt_seconds_arg("sigtarget", argv[1]);

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sa.sa_sigaction = on_rtmin;
	sigaction(SIGRTMIN, &sa, NULL);
	sa.sa_flags = SA_RESTART;
	sa.sa_handler = on_cont;
	sigaction(SIGCONT, &sa, NULL);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);

	tgt_ready("sigtarget", "signals");
	ret = busy(tgt_clock(CLOCK_MONOTONIC) + max_seconds);
	printf("sigtarget: rtmin=%d sum=%lld cont=%d\n", (int)rtmin_count, (long long)rtmin_sum,
	       (int)cont_count);
	return ret < 0 ? 3 : 0;
}
