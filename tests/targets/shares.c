/* SPDX-License-Identifier: MIT */
/*
 * shares: a program whose CPU time splits 50/30/20 between three functions,
 * for checking the shares every report format gives.  main -> run_rounds
 * -> {work_fifty, work_thirty, work_twenty}; each call of a work_ function
 * runs the same loop for the same number of iterations, and a round makes
 * five, three and two calls of them, so over any window longer than a
 * round (~0.2 ms) they get 50%, 30% and 20% of the CPU time, all of it
 * self time.  Each round shuffles its ten calls: a fixed order would be
 * periodic and could alias with the sampling period, skewing the shares
 * by several points.  The functions are global and noinline so symbol
 * tables name them, and each uses its result so no call becomes a tail
 * call.
 *
 * Usage: shares [-s SECONDS] [-t THREADS] [-i] [-r FD]
 *   -s  run until each working thread used SECONDS of CPU time (default 2;
 *       0: until killed)
 *   -t  number of working threads, main included (default 1); the others
 *       are named "shares-N" (N from 1)
 *   -i  one more thread, named "idle", blocked in read(2) until the end
 *   -r  write "R" to file descriptor FD once every thread is running
 * Exits 0 after joining the threads.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define UNIT	 20000 /* iterations per call: ~20 us */

volatile uint64_t sink;
static double seconds = 2;
static pthread_barrier_t started;
static int idle_pipe[2] = {-1, -1};

/*
 * Same body in each, and the same alignment, so that each loop sits alike
 * across 32- and 64-byte boundaries: otherwise a compare-and-branch
 * straddling a boundary in one of them (Intel's JCC erratum mitigation)
 * makes it measurably slower than the others.
 */
#define WORK NOINLINE __attribute__((aligned(64)))

WORK uint64_t work_fifty(uint64_t x)
{
	for (unsigned int i = 0; i < UNIT; i++)
		x = x * 6364136223846793005ull + i;
	return x;
}

WORK uint64_t work_thirty(uint64_t x)
{
	for (unsigned int i = 0; i < UNIT; i++)
		x = x * 6364136223846793005ull + i;
	return x;
}

WORK uint64_t work_twenty(uint64_t x)
{
	for (unsigned int i = 0; i < UNIT; i++)
		x = x * 6364136223846793005ull + i;
	return x;
}

static double thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

NOINLINE void run_rounds(uint64_t seed)
{
	static const unsigned char calls[10] = {5, 3, 5, 2, 5, 3, 5, 2, 5, 3};
	unsigned char order[10];
	uint64_t x = 1;
	unsigned int r, i, j;

	while (!seconds || thread_cpu() < seconds) {
		for (r = 0; r < 50; r++) {
			/* Fisher-Yates with xorshift64: a new order every round. */
			memcpy(order, calls, sizeof(order));
			for (i = 9; i > 0; i--) {
				unsigned char t;

				seed ^= seed << 13;
				seed ^= seed >> 7;
				seed ^= seed << 17;
				j = (unsigned int)(seed % (i + 1));
				t = order[i];
				order[i] = order[j];
				order[j] = t;
			}
			for (i = 0; i < 10; i++) {
				if (order[i] == 5)
					x = work_fifty(x);
				else if (order[i] == 3)
					x = work_thirty(x);
				else
					x = work_twenty(x);
			}
		}
	}
	sink = x;
	__asm__ volatile("" ::: "memory");
}

static void *worker(void *arg)
{
	char name[16];

	snprintf(name, sizeof(name), "shares-%d", (int)(intptr_t)arg);
	pthread_setname_np(pthread_self(), name);
	pthread_barrier_wait(&started);
	run_rounds(0x9e3779b97f4a7c15ull * (uint64_t)((intptr_t)arg + 1));
	return NULL;
}

static void *idler(void *arg)
{
	char c;

	(void)arg;
	pthread_setname_np(pthread_self(), "idle");
	pthread_barrier_wait(&started);
	while (read(idle_pipe[0], &c, 1) < 0)
		;
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = 1, ready_fd = -1, idle = 0, opt, i;
	pthread_t tids[64], idle_tid;

	while ((opt = getopt(argc, argv, "s:t:ir:")) != -1) {
		if (opt == 's')
			seconds = atof(optarg);
		else if (opt == 't')
			threads = atoi(optarg);
		else if (opt == 'i')
			idle = 1;
		else if (opt == 'r')
			ready_fd = atoi(optarg);
		else
			return 2;
	}
	if (threads < 1 || threads > 64)
		return 2;
	pthread_barrier_init(&started, NULL, (unsigned int)(threads + idle));
	if (idle && (pipe(idle_pipe) || pthread_create(&idle_tid, NULL, idler, NULL)))
		return 1;
	for (i = 1; i < threads; i++)
		if (pthread_create(&tids[i], NULL, worker, (void *)(intptr_t)i))
			return 1;
	pthread_barrier_wait(&started);
	if (ready_fd >= 0) {
		if (write(ready_fd, "R", 1) != 1)
			return 1;
		close(ready_fd);
	}
	run_rounds(0x9e3779b97f4a7c15ull);
	for (i = 1; i < threads; i++)
		pthread_join(tids[i], NULL);
	if (idle) {
		close(idle_pipe[1]);
		pthread_join(idle_tid, NULL);
	}
	return 0;
}
