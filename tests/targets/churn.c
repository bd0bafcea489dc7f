/* SPDX-License-Identifier: MIT */
/*
 * churn: threads that come and go as fast as they can, and a process that
 * ends while every one of its threads is busy, for the races a sampling
 * tracer meets: a thread that exits between PTRACE_INTERRUPT and the wait
 * for its stop, a clone event of a thread that is already gone, and
 * exit_group tearing down threads that have interrupts pending.
 *
 * "churn threads SECONDS [N]": for SECONDS of wall time, keep N (default
 * 8, at most 64) threads in flight; each runs churn_work for one unit of
 * work (~5-10 us) and exits, and main, polling, joins it and starts another.
 * Truth: most samples are in churn_work or in thread creation and exit
 * (clone, the thread start in libc, munmap of a stack); thousands of
 * threads are seen.  Output (independent of timing):
 *   churn: threads unit=<hex> mismatches=0
 *
 * "churn exit N MS": N threads (1..64) spin in exit_work forever; main
 * spins too, and after MS ms of wall time calls exit(3) while they all
 * run, so the kernel kills them mid-work.  Truth: exit status 3; samples
 * in exit_work.  Output, flushed before the exit:
 *   churn: exit threads=<N> status=3
 *
 * Readiness: one line, role "threads" or "exit", once the work has started.
 */
#include "target.h"

#include <inttypes.h>
#include <pthread.h>

#define MAX_THREADS 64

TGT_NOINLINE uint64_t churn_work(void);
TGT_NOINLINE void exit_work(void);
void *churn_thread(void *arg);
void *exit_thread(void *arg);

struct slot {
	pthread_t thread;
	volatile int done;
	uint64_t result;
};

uint64_t churn_work(void)
{
	uint64_t x = 0xc4;

	TGT_MIX(x, TGT_UNIT_ITERS);
	return x;
}

void *churn_thread(void *arg)
{
	struct slot *s = arg;

	s->result = churn_work();
	__atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static int run_threads(int argc, char **argv)
{
	static struct slot slots[MAX_THREADS];
	unsigned long bad = 0, started = 0;
	uint64_t ref = 0;
	double seconds, end;
	pthread_attr_t attr;
	int n = 8, i, err;

	if (argc < 3 || argc > 4)
		tgt_die("churn", "usage: churn threads SECONDS [N]");
	seconds = tgt_seconds_arg("churn", argv[2]);
	if (argc == 4)
		n = (int)tgt_long_arg("churn", argv[3], 1, MAX_THREADS);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	end = tgt_clock(CLOCK_MONOTONIC) + seconds;
	for (i = 0; i < n; i++) {
		err = pthread_create(&slots[i].thread, &attr, churn_thread, &slots[i]);
		if (err)
			tgt_die("churn", strerror(err));
		started++;
	}
	tgt_ready("churn", "threads");
	while (tgt_clock(CLOCK_MONOTONIC) < end) {
		for (i = 0; i < n; i++) {
			if (!__atomic_load_n(&slots[i].done, __ATOMIC_ACQUIRE))
				continue;
			pthread_join(slots[i].thread, NULL);
			TGT_CHECK(&ref, slots[i].result, bad);
			slots[i].done = 0;
			err = pthread_create(&slots[i].thread, &attr, churn_thread, &slots[i]);
			if (err)
				tgt_die("churn", strerror(err));
			started++;
		}
	}
	for (i = 0; i < n; i++) {
		pthread_join(slots[i].thread, NULL);
		TGT_CHECK(&ref, slots[i].result, bad);
	}
	pthread_attr_destroy(&attr);
	fprintf(stderr, "churn: %lu threads started\n", started);
	fprintf(stderr, "churn: main %.0f ms of %.0f ms CPU\n",
		tgt_clock(CLOCK_THREAD_CPUTIME_ID) * 1e3,
		tgt_clock(CLOCK_PROCESS_CPUTIME_ID) * 1e3);
	printf("churn: threads unit=%016" PRIx64 " mismatches=%lu\n", ref, bad);
	return bad ? 1 : 0;
}

void exit_work(void)
{
	volatile uint64_t sink;
	uint64_t x = 0xe1;

	for (;;) {
		TGT_MIX(x, TGT_UNIT_ITERS);
		sink = x;
		(void)sink;
	}
}

void *exit_thread(void *arg)
{
	(void)arg;
	exit_work();
	return NULL;
}

static int run_exit(int argc, char **argv)
{
	pthread_t t;
	double end;
	int n, i, err;
	uint64_t x = 0;

	if (argc != 4)
		tgt_die("churn", "usage: churn exit N MS");
	n = (int)tgt_long_arg("churn", argv[2], 1, MAX_THREADS);
	end = tgt_clock(CLOCK_MONOTONIC) + (double)tgt_long_arg("churn", argv[3], 0, 60000) / 1000;
	for (i = 0; i < n; i++) {
		err = pthread_create(&t, NULL, exit_thread, NULL);
		if (err)
			tgt_die("churn", strerror(err));
	}
	tgt_ready("churn", "exit");
	while (tgt_clock(CLOCK_MONOTONIC) < end)
		TGT_MIX(x, TGT_UNIT_ITERS);
	printf("churn: exit threads=%d status=3\n", n + (int)(x & 0));
	fflush(stdout);
	exit(3);
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "threads"))
		return run_threads(argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "exit"))
		return run_exit(argc, argv);
	tgt_die("churn", "usage: churn threads SECONDS [N] | churn exit N MS");
	return 2;
}
