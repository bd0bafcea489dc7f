/* SPDX-License-Identifier: MIT */
/*
 * threads: CPU work spread over threads, for thread tracking and fairness.
 *
 * "threads [-n] [-l] N [SECONDS]": N worker threads (1..64) each run worker ->
 * thread_work until SECONDS (default 2) of their own CPU time
 * (CLOCK_THREAD_CPUTIME_ID), so every worker does the same CPU work however
 * the scheduler shares the 2 CPUs.  main blocks in pthread_join meanwhile.
 * Truth: in CPU mode nearly every sample is "...;worker;thread_work", each
 * worker thread gets 1/N of them, and main (blocked) gets almost none.
 * With -n the workers are named "worker-<i>" (pthread_setname_np), so a
 * profiler that reports the thread name shows them apart.  With -l (N at
 * most 8) worker i calls thread_work through a function of its own,
 * lane_<i>: "...;worker;lane_<i>;thread_work", so the share of each thread
 * can be read from stacks alone, without per-thread reporting.
 *
 * "threads [-n] [-i IDLE] -r UNITS N": the same, but each worker runs exactly UNITS
 * units of work instead of a CPU-time budget (benchmarks: time a profiler
 * takes from the workers then shows up as a longer run).  With
 * XP_TARGET_VERBOSE set, the wall and CPU time of the work (from the start
 * line to the last join) go to stderr, as split's do (for bench/run.sh).
 * With -i, IDLE more threads (at most 1000) stay blocked all along
 * (sem_wait), as the idle threads of a server or a runtime do.  With
 * XP_TARGET_ONCPU=FD (bench/ptrace_floor), FD is a shared file of 256
 * 64-byte slots, one per CPU, and each worker writes its thread id into
 * its CPU's slot after every unit (sched_getcpu reads the rseq area: no
 * system call), so a sampler can tell which thread runs where without
 * reading /proc.
 *
 * "threads waves [MS]": 256 threads in two waves of 128.  All threads of a
 * wave exist at once (they meet at a barrier), each runs wave_work for MS
 * (default 10) ms of its own CPU time and exits; main joins the first wave
 * before starting the second.  For clone/exit tracking at scale and tid
 * reuse.  Truth: samples are in wave_work under worker_wave.
 *
 * "threads pool [N] [SECONDS]": a pool of N threads (default 100, at most
 * 1000), each running pool_work for ~100 us (wall time) then sleeping 1 ms
 * (clock_nanosleep), over and over for SECONDS (default 2) of wall time.
 * With more threads than CPUs, a thread woken from its sleep waits for a
 * CPU at the call's exit.  Truth: most samples in pool_work under
 * worker_pool (perf: 90% with 100 threads on 2 CPUs, the rest in the
 * kernel's sleep and switches).
 *
 * "threads idle [N] [SECONDS]": N threads (default 200, at most 1000) that
 * block beside a worker that runs idle_busy for SECONDS (default 2) of wall
 * time.  Every 20 ms the next blocked thread in turn wakes on its own
 * timer (sem_clockwait's timeout: no other thread of the process runs to
 * wake it), runs idle_burst for 4 ms of its own CPU time and blocks
 * again.  Truth: idle_busy and idle_burst share the CPU time; with
 * XP_TARGET_VERBOSE set, the CPU time of the bursts and of the whole
 * process go to stderr:
 *   threads: idle: bursts <S> s CPU of <S> s CPU
 *
 * Prints one line that does not depend on the duration or scheduling, and
 * exits 0 (1 if a unit computed a different value):
 *   threads: workers=<N> unit=<hex> mismatches=0
 *   threads: waves=2 threads=256 unit=<hex> mismatches=0
 *   threads: pool=<N> unit=<hex> mismatches=0
 *   threads: idle=<N> unit=<hex> mismatches=0
 * Readiness: one line, role "workers" once all N workers run (or "waves"
 * once the first wave runs, "pool" once the pool does, "idle" once the
 * worker and the blocked threads do), written by the
 * main thread.
 */
#include "oncpu.h"
#include "target.h"

#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <sys/mman.h>

#define MAX_WORKERS  64
#define MAX_LANES    8
#define WAVES	     2
#define WAVE_THREADS 128
#define POOL_MAX     1000
#define IDLE_GAP     0.020 /* threads idle: s between two wakes */

struct worker {
	pthread_t thread;
	int index;
	int named;
	int laned;
	int lane_done;
	double seconds;
	unsigned long units; /* > 0: exactly this many units instead of @seconds */
	uint64_t ref;
	unsigned long bad;
	sem_t quit;	  /* threads idle: posted at the end */
	double burst_cpu; /* ... the CPU time its bursts took */
};

static pthread_barrier_t start_line;

static struct oncpu_slot *oncpu; /* XP_TARGET_ONCPU's slots (oncpu.h), or NULL */

static void oncpu_map(void)
{
	const char *fd = getenv(ONCPU_ENV);
	void *p;

	if (!fd || !*fd)
		return;
	p = mmap(NULL, ONCPU_SLOTS * sizeof(*oncpu), PROT_READ | PROT_WRITE, MAP_SHARED,
		 (int)tgt_long_arg("threads", fd, 0, 1023), 0);
	if (p == MAP_FAILED)
		tgt_die("threads", "XP_TARGET_ONCPU: cannot map its file");
	oncpu = p;
}

TGT_NOINLINE void thread_work(struct worker *w);
TGT_NOINLINE void wave_work(struct worker *w);
TGT_NOINLINE void lane_0(struct worker *w);
TGT_NOINLINE void lane_1(struct worker *w);
TGT_NOINLINE void lane_2(struct worker *w);
TGT_NOINLINE void lane_3(struct worker *w);
TGT_NOINLINE void lane_4(struct worker *w);
TGT_NOINLINE void lane_5(struct worker *w);
TGT_NOINLINE void lane_6(struct worker *w);
TGT_NOINLINE void lane_7(struct worker *w);
void *worker(void *arg);
void *worker_wave(void *arg);
TGT_NOINLINE void idle_busy(struct worker *w);
TGT_NOINLINE void idle_burst(struct worker *w);
void *worker_busy(void *arg);
void *worker_idle(void *arg);
void *worker_blocked(void *arg);

/* Units until @w->seconds of this thread's CPU time, or exactly @w->units. */
void thread_work(struct worker *w)
{
	double end = w->units ? 0 : tgt_clock(CLOCK_THREAD_CPUTIME_ID) + w->seconds;
	int32_t tid = oncpu ? (int32_t)gettid() : 0;
	unsigned long n = 0;
	uint64_t x;

	for (;;) {
		x = 0x7;
		TGT_MIX(x, TGT_UNIT_ITERS);
		TGT_CHECK(&w->ref, x, w->bad);
		n++;
		if (oncpu) {
			int cpu = sched_getcpu();

			if (cpu >= 0 && cpu < ONCPU_SLOTS)
				oncpu[cpu].tid = tid;
		}
		if (w->units ? n >= w->units
			     : (n & 15) == 0 && tgt_clock(CLOCK_THREAD_CPUTIME_ID) >= end)
			break;
	}
}

/* The same as thread_work, under another name so the two modes differ. */
void wave_work(struct worker *w)
{
	double end = tgt_clock(CLOCK_THREAD_CPUTIME_ID) + w->seconds;
	unsigned int n = 0;
	uint64_t x;

	for (;;) {
		x = 0x7;
		TGT_MIX(x, TGT_UNIT_ITERS);
		TGT_CHECK(&w->ref, x, w->bad);
		if ((++n & 15) == 0 && tgt_clock(CLOCK_THREAD_CPUTIME_ID) >= end)
			break;
	}
}

/*
 * One function per worker, so each thread's samples carry its own frame.
 * The store after the call keeps it from becoming a tail call (which would
 * remove the lane's frame); the different values keep GCC from folding the
 * eight functions into one.
 */
void lane_0(struct worker *w)
{
	thread_work(w);
	w->lane_done = 1;
}

void lane_1(struct worker *w)
{
	thread_work(w);
	w->lane_done = 2;
}

void lane_2(struct worker *w)
{
	thread_work(w);
	w->lane_done = 3;
}

void lane_3(struct worker *w)
{
	thread_work(w);
	w->lane_done = 4;
}

void lane_4(struct worker *w)
{
	thread_work(w);
	w->lane_done = 5;
}

void lane_5(struct worker *w)
{
	thread_work(w);
	w->lane_done = 6;
}

void lane_6(struct worker *w)
{
	thread_work(w);
	w->lane_done = 7;
}

void lane_7(struct worker *w)
{
	thread_work(w);
	w->lane_done = 8;
}

static void (*const lanes[MAX_LANES])(struct worker *) = {
    lane_0, lane_1, lane_2, lane_3, lane_4, lane_5, lane_6, lane_7,
};

void *worker(void *arg)
{
	struct worker *w = arg;
	char name[16];

	if (w->named) {
		snprintf(name, sizeof(name), "worker-%d", w->index);
		pthread_setname_np(pthread_self(), name);
	}
	pthread_barrier_wait(&start_line);
	if (w->laned)
		lanes[w->index](w);
	else
		thread_work(w);
	return NULL;
}

void *worker_wave(void *arg)
{
	struct worker *w = arg;

	pthread_barrier_wait(&start_line);
	wave_work(w);
	return NULL;
}

static volatile int pool_stop;

/* ~100 us of units, by the wall clock (a vDSO call: no system call in the burst). */
TGT_NOINLINE void pool_work(struct worker *w)
{
	double end = tgt_clock(CLOCK_MONOTONIC) + 100e-6;

	do {
		uint64_t x = 1;

		TGT_MIX(x, TGT_UNIT_ITERS / 8);
		TGT_CHECK(&w->ref, x, w->bad);
	} while (tgt_clock(CLOCK_MONOTONIC) < end);
}

void *worker_pool(void *arg)
{
	struct worker *w = arg;
	const struct timespec nap = {0, 1000000};

	pthread_barrier_wait(&start_line);
	/*
	 * Once at least: a thread that never ran before the end would have no
	 * unit to compare, which counted as a mismatch (300 threads under a
	 * profiler on a loaded machine).
	 */
	do {
		pool_work(w);
		clock_nanosleep(CLOCK_MONOTONIC, 0, &nap, NULL);
	} while (!pool_stop);
	return NULL;
}

/* @s seconds (of CLOCK_MONOTONIC, or a span) as a timespec. */
static struct timespec timespec_of(double s)
{
	return (struct timespec){(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
}

/* Sleep @seconds of wall time, through interruptions. */
static void sleep_wall(double seconds)
{
	double end = tgt_clock(CLOCK_MONOTONIC) + seconds, left;

	while ((left = end - tgt_clock(CLOCK_MONOTONIC)) > 0) {
		struct timespec ts = timespec_of(left);

		nanosleep(&ts, NULL);
	}
}

/* "threads MODE [N] [SECONDS]": N (at most POOL_MAX) into *@n, SECONDS into *@seconds. */
static void mode_args(int argc, char **argv, const char *usage, int *n, double *seconds)
{
	if (argc > 4)
		tgt_die("threads", usage);
	if (argc >= 3)
		*n = (int)tgt_long_arg("threads", argv[2], 1, POOL_MAX);
	if (argc == 4)
		*seconds = tgt_seconds_arg("threads", argv[3]);
}

static volatile int idle_stop;
static double idle_t0; /* threads idle: when the first round starts */
static int idle_n;

/* Units until the wall-clock stop (threads idle's worker). */
void idle_busy(struct worker *w)
{
	unsigned int n = 0;

	while (!idle_stop || (n & 15)) {
		uint64_t x = 0x7;

		TGT_MIX(x, TGT_UNIT_ITERS);
		TGT_CHECK(&w->ref, x, w->bad);
		n++;
	}
}

/* 4 ms of this thread's CPU time, from a blocked thread woken for it. */
void idle_burst(struct worker *w)
{
	double start = tgt_clock(CLOCK_THREAD_CPUTIME_ID), now;
	unsigned int n = 0;

	do {
		uint64_t x = 0x7;

		TGT_MIX(x, TGT_UNIT_ITERS);
		TGT_CHECK(&w->ref, x, w->bad);
		now = (++n & 15) ? start : tgt_clock(CLOCK_THREAD_CPUTIME_ID);
	} while (now < start + 4e-3);
	w->burst_cpu += now - start;
}

void *worker_busy(void *arg)
{
	pthread_barrier_wait(&start_line);
	idle_busy(arg);
	return NULL;
}

/*
 * Wakes at its own instant in each round of n * 20 ms (its timer, not
 * another thread, wakes it), runs a burst, blocks again; quits when posted.
 */
void *worker_idle(void *arg)
{
	struct worker *w = arg;
	double at;

	pthread_barrier_wait(&start_line);
	for (at = idle_t0 + IDLE_GAP * (w->index + 1);; at += IDLE_GAP * idle_n) {
		struct timespec ts = timespec_of(at);

		if (!sem_clockwait(&w->quit, CLOCK_MONOTONIC, &ts) || idle_stop)
			return NULL;
		idle_burst(w);
	}
}

static sem_t blocked_quit;

void *worker_blocked(void *arg)
{
	pthread_barrier_wait(&start_line);
	while (sem_wait(&blocked_quit))
		;
	return arg;
}

/* Start @n threads running @fn, wait until all of them are at the start line. */
static void start(struct worker *ws, int n, void *(*fn)(void *))
{
	pthread_attr_t attr;
	int i, err;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	pthread_barrier_init(&start_line, NULL, (unsigned int)n + 1);
	for (i = 0; i < n; i++) {
		err = pthread_create(&ws[i].thread, &attr, fn, &ws[i]);
		if (err) {
			fprintf(stderr, "threads: pthread_create: %s\n", strerror(err));
			exit(2);
		}
	}
	pthread_attr_destroy(&attr);
	pthread_barrier_wait(&start_line);
}

static void join(struct worker *ws, int n, uint64_t *ref, unsigned long *bad)
{
	int i;

	for (i = 0; i < n; i++) {
		pthread_join(ws[i].thread, NULL);
		TGT_CHECK(ref, ws[i].ref, *bad);
		*bad += ws[i].bad;
	}
	pthread_barrier_destroy(&start_line);
}

static int run_waves(int argc, char **argv)
{
	static struct worker ws[WAVE_THREADS];
	double seconds = 0.010;
	unsigned long bad = 0;
	uint64_t ref = 0;
	int wave, i;

	if (argc > 3)
		tgt_die("threads", "usage: threads waves [MS]");
	if (argc == 3)
		seconds = (double)tgt_long_arg("threads", argv[2], 0, 60000) / 1000;
	for (wave = 0; wave < WAVES; wave++) {
		for (i = 0; i < WAVE_THREADS; i++)
			ws[i] = (struct worker){.index = i, .seconds = seconds};
		start(ws, WAVE_THREADS, worker_wave);
		if (wave == 0)
			tgt_ready("threads", "waves");
		join(ws, WAVE_THREADS, &ref, &bad);
	}
	printf("threads: waves=%d threads=%d unit=%016" PRIx64 " mismatches=%lu\n", WAVES,
	       WAVES * WAVE_THREADS, ref, bad);
	return bad ? 1 : 0;
}

static int run_pool(int argc, char **argv)
{
	static struct worker ws[POOL_MAX];
	double seconds = 2;
	unsigned long bad = 0;
	uint64_t ref = 0;
	int n = 100, i;

	mode_args(argc, argv, "usage: threads pool [N] [SECONDS]", &n, &seconds);
	for (i = 0; i < n; i++)
		ws[i] = (struct worker){.index = i};
	start(ws, n, worker_pool);
	tgt_ready("threads", "pool");
	sleep_wall(seconds);
	pool_stop = 1;
	join(ws, n, &ref, &bad);
	printf("threads: pool=%d unit=%016" PRIx64 " mismatches=%lu\n", n, ref, bad);
	return bad ? 1 : 0;
}

static int run_idle(int argc, char **argv)
{
	static struct worker busy, ws[POOL_MAX];
	double seconds = 2, cpu0, bursts = 0;
	unsigned long bad = 0;
	uint64_t ref = 0;
	int n = 200, i;

	mode_args(argc, argv, "usage: threads idle [N] [SECONDS]", &n, &seconds);
	cpu0 = tgt_clock(CLOCK_PROCESS_CPUTIME_ID);
	for (i = 0; i < n; i++) {
		ws[i] = (struct worker){.index = i};
		sem_init(&ws[i].quit, 0, 0);
	}
	idle_n = n;
	idle_t0 = tgt_clock(CLOCK_MONOTONIC) + 0.05;
	start(ws, n, worker_idle);
	pthread_barrier_destroy(&start_line);
	start(&busy, 1, worker_busy);
	tgt_ready("threads", "idle");
	sleep_wall(seconds);
	idle_stop = 1;
	join(&busy, 1, &ref, &bad);
	for (i = 0; i < n; i++)
		sem_post(&ws[i].quit);
	for (i = 0; i < n; i++) {
		pthread_join(ws[i].thread, NULL);
		bad += ws[i].bad;
		if (ws[i].ref)
			TGT_CHECK(&ref, ws[i].ref, bad);
		bursts += ws[i].burst_cpu;
	}
	if (getenv("XP_TARGET_VERBOSE"))
		fprintf(stderr, "threads: idle: bursts %.6f s CPU of %.6f s CPU\n", bursts,
			tgt_clock(CLOCK_PROCESS_CPUTIME_ID) - cpu0);
	printf("threads: idle=%d unit=%016" PRIx64 " mismatches=%lu\n", n, ref, bad);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	static struct worker ws[MAX_WORKERS], idle[POOL_MAX];
	double seconds = 2, wall, cpu;
	unsigned long bad = 0, units = 0;
	uint64_t ref = 0;
	int named = 0, laned = 0, arg = 1, nidle = 0, n, i;

	if (argc >= 2 && !strcmp(argv[1], "waves"))
		return run_waves(argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "pool"))
		return run_pool(argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "idle"))
		return run_idle(argc, argv);
	for (; arg < argc && argv[arg][0] == '-' && argv[arg][1]; arg++) {
		if (!strcmp(argv[arg], "-n"))
			named = 1;
		else if (!strcmp(argv[arg], "-l"))
			laned = 1;
		else if (!strcmp(argv[arg], "-i") && arg + 1 < argc)
			nidle = (int)tgt_long_arg("threads", argv[++arg], 0, POOL_MAX);
		else
			break;
	}
	if (arg + 1 < argc && !strcmp(argv[arg], "-r")) {
		units = (unsigned long)tgt_long_arg("threads", argv[arg + 1], 1, 1000000000L);
		arg += 2;
	}
	if (arg >= argc || argc - arg > (units ? 1 : 2))
		tgt_die("threads", "usage: threads [-n] [-l] [-i IDLE] N [SECONDS] | "
				   "threads [-n] [-l] [-i IDLE] -r UNITS N | threads waves [MS] | "
				   "threads pool [N] [SECONDS]\n"
				   "       threads idle [N] [SECONDS]");
	n = (int)tgt_long_arg("threads", argv[arg], 1, laned ? MAX_LANES : MAX_WORKERS);
	if (arg + 1 < argc)
		seconds = tgt_seconds_arg("threads", argv[arg + 1]);

	oncpu_map();
	sem_init(&blocked_quit, 0, 0);
	if (nidle) {
		start(idle, nidle, worker_blocked);
		pthread_barrier_destroy(&start_line);
	}
	for (i = 0; i < n; i++)
		ws[i] = (struct worker){.index = i,
					.named = named,
					.laned = laned,
					.seconds = seconds,
					.units = units};
	start(ws, n, worker);
	wall = tgt_clock(CLOCK_MONOTONIC);
	cpu = tgt_clock(CLOCK_PROCESS_CPUTIME_ID);
	tgt_ready("threads", "workers");
	join(ws, n, &ref, &bad);
	wall = tgt_clock(CLOCK_MONOTONIC) - wall;
	cpu = tgt_clock(CLOCK_PROCESS_CPUTIME_ID) - cpu;
	for (i = 0; i < nidle; i++)
		sem_post(&blocked_quit);
	for (i = 0; i < nidle; i++)
		pthread_join(idle[i].thread, NULL);
	/* For benchmarks: the work's own time, without a profiler's start-up. */
	if (getenv("XP_TARGET_VERBOSE"))
		fprintf(stderr, "threads: %d workers in %.6f s wall, %.6f s CPU\n", n, wall, cpu);
	printf("threads: workers=%d unit=%016" PRIx64 " mismatches=%lu\n", n, ref, bad);
	return bad ? 1 : 0;
}
