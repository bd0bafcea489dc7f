/* SPDX-License-Identifier: MIT */
/*
 * Target with known call chains for the unwinder tests, built with and
 * without frame pointers.  "leaf": main -> f1 -> f2 -> leaf, where leaf
 * needs no stack, so GCC 12 gives it no frame even with
 * -fno-omit-frame-pointer (doc/ptrace-notes.md, trap 4) and f2 calls it in
 * a loop (samples land in both).  "qsort": main -> do_sort -> qsort (libc, no
 * frame pointers) -> cmp.  "deep": main -> deep x 64 -> f2 -> leaf, for
 * the unwind benchmark.  "signal": main -> sig_main -> raise (libc), and
 * the SIGUSR1 handler, on a sigaltstack, runs on_signal -> f2 -> leaf
 * forever, so unwinding must cross the signal frame and the stack switch.
 * "vdso": main -> vdso_loop -> clock_gettime (libc, then the vDSO).  The functions are global
 * and noinline so the tests find them in the symbol table (as perf's dwarf-unwind test does).
 * Readiness: writes "R" to the file descriptor given as argv[2] (in
 * "signal" mode from inside the handler), then runs until killed.
 */
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

volatile unsigned long sink;
volatile int stop;
static int ready_fd = -1;
static char altstack[65536];

NOINLINE unsigned long leaf(unsigned long n)
{
	unsigned long i, acc = 0;

	for (i = 0; i < n; i++)
		acc += i ^ sink;
	return acc;
}

NOINLINE void f2(void)
{
	while (!stop)
		sink += leaf(2000);
	__asm__ volatile("" ::: "memory"); /* no tail call: keep f2's frame live */
}

NOINLINE void f1(void)
{
	f2();
	__asm__ volatile("" ::: "memory");
}

/* A leaf too, made slow enough that samples land in it. */
NOINLINE int cmp(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;
	unsigned long i;

	for (i = 0; i < 64; i++)
		x += sink & i;
	return (x > y) - (x < y);
}

NOINLINE void do_sort(void)
{
	static unsigned long v[4096];
	unsigned long i, seed = 12345;

	while (!stop) {
		for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
			seed = seed * 6364136223846793005ul + 1442695040888963407ul;
			v[i] = seed >> 17;
		}
		qsort(v, sizeof(v) / sizeof(v[0]), sizeof(v[0]), cmp);
	}
	__asm__ volatile("" ::: "memory");
}

NOINLINE void deep(int n)
{
	if (n > 0)
		deep(n - 1);
	else
		f2();
	__asm__ volatile("" ::: "memory"); /* no tail call, no loop: one frame per level */
}

static void ready(void)
{
	if (ready_fd >= 0 && write(ready_fd, "R", 1) == 1)
		close(ready_fd);
	ready_fd = -1;
}

NOINLINE void on_signal(int sig)
{
	(void)sig;
	ready();
	f2();
	__asm__ volatile("" ::: "memory");
}

NOINLINE void sig_main(void)
{
	stack_t ss = {.ss_sp = altstack, .ss_size = sizeof(altstack)};
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_ONSTACK;
	sigaltstack(&ss, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
	__asm__ volatile("" ::: "memory");
}

NOINLINE void vdso_loop(void)
{
	struct timespec ts;

	while (!stop) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		sink += (unsigned long)ts.tv_nsec;
	}
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	if (argc > 2)
		ready_fd = atoi(argv[2]);
	if (argc > 1 && !strcmp(argv[1], "signal")) {
		sig_main();
		return 0;
	}
	ready();
	if (argc > 1 && !strcmp(argv[1], "qsort"))
		do_sort();
	else if (argc > 1 && !strcmp(argv[1], "deep"))
		deep(64);
	else if (argc > 1 && !strcmp(argv[1], "vdso"))
		vdso_loop();
	else
		f1();
	return 0;
}
