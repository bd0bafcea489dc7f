/* SPDX-License-Identifier: MIT */
/*
 * A JIT that reuses code addresses: one executable page holds, in turn,
 * two functions, reuse_a and reuse_b (spin loops; x86-64 machine code with
 * a frame).  Each phase writes the next function over the previous one,
 * names it at the same address, and runs it; reuse_a's phases are
 * longer, so the truth differs from any single name for the whole run:
 *
 *   jitreuse perfmap [phases] [secs]      /tmp/perf-PID.map, one line per phase
 *   jitreuse jitdump [phases] [secs] DIR  DIR/jit-PID.dump, one JIT_CODE_LOAD
 *                                         per phase (CLOCK_MONOTONIC times)
 *
 * Phases alternate reuse_a (even) and reuse_b (odd), each pair splitting
 * its CPU time 70:30, secs in all (defaults: 6 phases, 2.0 s).
 * Prints "pid PID" first, and at the end the truth measured with the
 * process CPU clock: "truth reuse_a PCT reuse_b PCT".  On another CPU it
 * exits 77 (checked with uname(2), so no architecture macro is needed).
 */
#include "jitdump.h"
#include "target.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

/* loop(n): push %rbp; mov %rsp,%rbp; 1: dec %rdi; jnz 1b; pop %rbp; ret */
static const uint8_t spin_a[] = {0x55, 0x48, 0x89, 0xe5, 0x48, 0xff, 0xcf, 0x75, 0xfb, 0x5d, 0xc3};
/* The same loop with a nop in it: other code, same place. */
static const uint8_t spin_b[] = {0x55, 0x48, 0x89, 0xe5, 0x90, 0x48,
				 0xff, 0xcf, 0x75, 0xfa, 0x5d, 0xc3};

typedef void (*spin_fn)(unsigned long n);

/* Runs the JIT code from a real frame for @secs of CPU time; the CPU time it took. */
TGT_NOINLINE double run_jitted(spin_fn fn, double secs)
{
	double start = tgt_clock(CLOCK_PROCESS_CPUTIME_ID), now = start;

	while (now < start + secs) {
		fn(200000);
		now = tgt_clock(CLOCK_PROCESS_CPUTIME_ID);
	}
	__asm__ volatile("" ::: "memory");
	return now - start;
}

/* A jitdump header: magic, version, size, EM_X86_64, pad, pid, timestamp, flags. */
static FILE *open_jitdump(const char *dir)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/jit-%d.dump", dir, (int)getpid());
	f = fopen(path, "w+");
	if (!f)
		return NULL;
	jd_header(f, (uint64_t)(tgt_clock(CLOCK_MONOTONIC) * 1e9));
	if (fflush(f))
		return NULL;
	/* Mapped executable, as perf's agents do, so profilers find it in /proc/PID/maps. */
	if (mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fileno(f), 0) == MAP_FAILED)
		return NULL;
	return f;
}

static int name_code(FILE *f, int dump, uint8_t *page, const char *name, const uint8_t *code,
		     size_t len, unsigned int index)
{
	struct timespec ts;

	if (!dump) {
		fprintf(f, "%lx %zx %s\n", (unsigned long)(uintptr_t)page, len, name);
		return fflush(f);
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	jd_code_load(f, (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec,
		     (uint64_t)(uintptr_t)page, name, code, len, index);
	return fflush(f);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "perfmap";
	int phases = argc > 2 ? atoi(argv[2]) : 6, dump = !strcmp(mode, "jitdump"), k;
	double secs = argc > 3 ? atof(argv[3]) : 2.0, cpu[2] = {0, 0};
	struct utsname u;
	char path[64];
	uint8_t *page;
	FILE *f;

	if (uname(&u) || strcmp(u.machine, "x86_64")) {
		fprintf(stderr, "jitreuse: x86-64 only\n");
		return 77;
	}
	if (phases < 2 || secs <= 0 || (dump && argc < 5)) {
		fprintf(stderr, "usage: jitreuse perfmap|jitdump [phases] [secs] [DIR]\n");
		return 2;
	}
	page = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return 1;
	if (dump) {
		f = open_jitdump(argv[4]);
	} else {
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
		f = fopen(path, "w");
	}
	if (!f)
		return 1;
	printf("pid %d\ncode %p\n", (int)getpid(), (void *)page);
	fflush(stdout);
	for (k = 0; k < phases; k++) {
		int b = k % 2;
		const uint8_t *code = b ? spin_b : spin_a;
		size_t len = b ? sizeof(spin_b) : sizeof(spin_a);
		/* Pairs of phases split 70:30. */
		double want = secs * 2 / phases * (b ? 0.3 : 0.7);

		/* Free the old code and put the new one in its place. */
		if (mprotect(page, 4096, PROT_READ | PROT_WRITE))
			return 1;
		memset(page, 0xcc, 64);
		memcpy(page, code, len);
		if (mprotect(page, 4096, PROT_READ | PROT_EXEC))
			return 1;
		if (name_code(f, dump, page, b ? "reuse_b" : "reuse_a", code, len, (unsigned int)k))
			return 1;
		cpu[b] += run_jitted((spin_fn)(uintptr_t)page, want);
	}
	if (fclose(f))
		return 1;
	printf("truth reuse_a %.1f reuse_b %.1f\n", 100 * cpu[0] / (cpu[0] + cpu[1]),
	       100 * cpu[1] / (cpu[0] + cpu[1]));
	return 0;
}
