/* SPDX-License-Identifier: MIT */
/*
 * A minimal JIT: copies a spin loop (x86-64 machine code, with a frame so
 * frame pointers unwind through it) into an anonymous executable page and
 * runs it for about argv[2] seconds of CPU time (default 1.0), then exits
 * 0.  It names the code the two ways perf documents
 * (tools/perf/Documentation/jit-interface.txt, jitdump-specification.txt):
 *
 *   jit perfmap [secs]        /tmp/perf-PID.map: "jitted_hot_loop"
 *   jit jitdump [secs] DIR    DIR/jit-PID.dump, mmapped executable as perf's
 *                             agents do so that profilers find it in
 *                             /proc/PID/maps: "jitted_dump_loop", with
 *                             line information (loop.js:1..3)
 *
 * Prints "pid PID" and the code's address on stdout first.  Deletes
 * nothing: the test does.  On another CPU it exits 77 (the machine code is
 * x86-64's; checked with uname(2), so no architecture macro is needed).
 */
#include "jitdump.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

/*
 * loop(n): push %rbp; mov %rsp,%rbp; 1: dec %rdi; jnz 1b; pop %rbp; ret
 * Offsets: the loop is at 4..8, the return at 9.
 */
static const uint8_t spin_code[] = {0x55, 0x48, 0x89, 0xe5, 0x48, 0xff,
				    0xcf, 0x75, 0xfb, 0x5d, 0xc3};

typedef void (*spin_fn)(unsigned long n);

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Calls the JIT code from a real frame, so stacks read main -> run_jitted -> the code. */
NOINLINE void run_jitted(spin_fn fn, double secs)
{
	double end = cpu_seconds() + secs;

	while (cpu_seconds() < end)
		fn(20000000);
	__asm__ volatile("" ::: "memory");
}

static void debug_entry(FILE *f, uint64_t addr, int32_t line, const char *file)
{
	jd_put64(f, addr);
	jd_put32(f, (uint32_t)line);
	jd_put32(f, 0);
	fwrite(file, strlen(file) + 1, 1, f);
}

/* Write DIR/jit-PID.dump describing @code and map it executable (the marker). */
static int write_jitdump(const char *dir, uint64_t code)
{
	const char *name = "jitted_dump_loop", *file = "loop.js";
	char path[4096];
	FILE *f;
	void *marker;
	int fd;

	snprintf(path, sizeof(path), "%s/jit-%d.dump", dir, (int)getpid());
	f = fopen(path, "w+");
	if (!f)
		return -1;
	jd_header(f, 0);
	/* Lines before the load they describe, as the specification asks. */
	jd_prefix(f, JD_CODE_DEBUG_INFO, (uint32_t)(32 + 3 * 16 + strlen(file) + 1 + 2 * 2), 0);
	jd_put64(f, code);
	jd_put64(f, 3);
	debug_entry(f, code, 1, file);
	debug_entry(f, code + 4, 2, "\xff");
	debug_entry(f, code + 9, 3, "\xff");
	jd_code_load(f, 0, code, name, spin_code, sizeof(spin_code), 1);
	if (fflush(f))
		return -1;
	fd = fileno(f);
	marker = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	return marker == MAP_FAILED ? -1 : 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "perfmap";
	double secs = argc > 2 ? atof(argv[2]) : 1.0;
	struct utsname u;
	uint8_t *page;
	char path[64];
	FILE *f;

	if (uname(&u) || strcmp(u.machine, "x86_64")) {
		fprintf(stderr, "jit: x86-64 only\n");
		return 77;
	}
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return 1;
	memcpy(page, spin_code, sizeof(spin_code));
	if (mprotect(page, 4096, PROT_READ | PROT_EXEC))
		return 1;
	if (!strcmp(mode, "jitdump")) {
		if (argc < 4 || write_jitdump(argv[3], (uint64_t)(uintptr_t)page))
			return 1;
	} else {
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
		f = fopen(path, "w");
		if (!f)
			return 1;
		fprintf(f, "%lx %zx jitted_hot_loop\n", (unsigned long)(uintptr_t)page,
			sizeof(spin_code));
		if (fclose(f))
			return 1;
	}
	printf("pid %d\ncode %p\n", (int)getpid(), (void *)page);
	fflush(stdout);
	run_jitted((spin_fn)(uintptr_t)page, secs);
	return 0;
}
