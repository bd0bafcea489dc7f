/* SPDX-License-Identifier: MIT */
/*
 * Unwind micro-benchmark (not a ctest test): snapshot a real process the
 * way the recorder does (tests/targets/unwindme deep: 64 recursive frames
 * plus f2, leaf, main and libc's start), then unwind that one snapshot
 * over and over in each mode and print unwinds/s and ns per frame.  "warm"
 * reuses one unwinder (row caches hot: the steady state of a profile);
 * "cold" makes a new unwinder per unwind (every CFI row from libdw: the
 * first samples).  The module cache stays warm in both.
 *
 *   unwind_bench [path/to/unwindme] [iterations]
 */
#include "addrspace.h"
#include "arch/arch.h"
#include "memread.h"
#include "module.h"
#include "unwind.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define STACK_COPY 16384
#define MAX_FRAMES 128

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static pid_t spawn(const char *path)
{
	int pfd[2];
	pid_t pid;
	char fdarg[16], c;

	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		snprintf(fdarg, sizeof(fdarg), "%d", pfd[1]);
		execl(path, path, "deep", fdarg, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	if (pid < 0 || read(pfd[0], &c, 1) != 1)
		pid = -1;
	close(pfd[0]);
	return pid;
}

/* One sample: interrupt, registers, stack copy, resume.  Returns the copy length or -1. */
static ssize_t sample(pid_t pid, const struct xp_arch *arch, struct xp_regs *regs, uint8_t *copy)
{
	struct iovec local = {copy, STACK_COPY}, remote;
	ssize_t got;
	int status;

	if (ptrace(PTRACE_INTERRUPT, pid, NULL, NULL) || waitpid(pid, &status, __WALL) != pid)
		return -1;
	if (arch->regs_read(pid, regs)) {
		ptrace(PTRACE_CONT, pid, NULL, NULL);
		return -1;
	}
	remote.iov_base = (void *)(uintptr_t)xp_regs_get(regs, arch->dwarf.sp);
	remote.iov_len = STACK_COPY;
	got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	ptrace(PTRACE_CONT, pid, NULL, NULL);
	return got;
}

int main(int argc, char **argv)
{
	static const char *const modes[] = {"auto", "fp", "dwarf"};
	const char *path = argc > 1 ? argv[1] : "build/targets/unwindme";
	long iters = argc > 2 ? atol(argv[2]) : 200000, i, cold_iters;
	const struct xp_arch *arch = xp_arch_host();
	static uint8_t copy[STACK_COPY];
	struct module_cache *mc;
	struct addrspace as;
	struct xp_regs regs;
	uint64_t pcs[MAX_FRAMES];
	uint8_t flags[MAX_FRAMES];
	ssize_t got = -1;
	unsigned int k, n = 0, tries;
	pid_t pid;

	pid = spawn(path);
	if (pid < 0 || ptrace(PTRACE_SEIZE, pid, NULL, NULL)) {
		fprintf(stderr, "unwind_bench: cannot run and trace '%s': %s\n", path,
			strerror(errno));
		return 1;
	}
	mc = module_cache_new();
	addrspace_init(&as, pid, mc);
	/* Wait (by sampling) until the target sits at the bottom of its recursion. */
	for (tries = 0; tries < 2000; tries++) {
		struct unwinder *u = unwinder_new(UNWIND_DWARF, MAX_FRAMES);
		struct memread mem;

		usleep(1000);
		addrspace_load(&as);
		got = sample(pid, arch, &regs, copy);
		if (got > 0) {
			memread_init(&mem, pid, xp_regs_get(&regs, arch->dwarf.sp), copy,
				     (size_t)got);
			n = unwind_stack(u, arch, &regs, &mem, &as, pcs, flags, MAX_FRAMES, NULL);
		}
		unwinder_free(u);
		if (n >= 68)
			break;
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, __WALL);
	if (n < 68) {
		fprintf(stderr, "unwind_bench: the target never reached its 64-deep chain\n");
		return 1;
	}
	printf("snapshot: %u frames (dwarf), %zd bytes of stack copied\n", n, got);
	printf("%-6s %-5s %12s %8s %10s %8s\n", "mode", "cache", "unwinds/s", "frames", "ns/frame",
	       "live rd");
	for (k = 0; k < 3; k++) {
		struct unwinder *u = unwinder_new((enum unwind_mode)k, MAX_FRAMES);
		uint64_t live = 0;
		struct memread mem;
		double t0 = now(), t;

		/* warm: one unwinder, as a recording session keeps it */
		for (i = -1; i < iters; i++) {
			if (!i)
				t0 = now();
			memread_init(&mem, 0, xp_regs_get(&regs, arch->dwarf.sp), copy,
				     (size_t)got);
			n = unwind_stack(u, arch, &regs, &mem, &as, pcs, flags, MAX_FRAMES, NULL);
			live += mem.live_reads;
		}
		t = now() - t0;
		printf("%-6s %-5s %12.0f %8u %10.1f %8llu\n", modes[k], "warm", (double)iters / t,
		       n, t * 1e9 / ((double)iters * n), (unsigned long long)live);
		unwinder_free(u);
		/* cold: every row from libdw again */
		cold_iters = iters / 100 ? iters / 100 : 1;
		t0 = now();
		for (i = 0; i < cold_iters; i++) {
			u = unwinder_new((enum unwind_mode)k, MAX_FRAMES);
			memread_init(&mem, 0, xp_regs_get(&regs, arch->dwarf.sp), copy,
				     (size_t)got);
			n = unwind_stack(u, arch, &regs, &mem, &as, pcs, flags, MAX_FRAMES, NULL);
			unwinder_free(u);
		}
		t = now() - t0;
		printf("%-6s %-5s %12.0f %8u %10.1f\n", modes[k], "cold", (double)cold_iters / t, n,
		       t * 1e9 / ((double)cold_iters * n));
	}
	addrspace_release(&as);
	module_cache_free(mc);
	return 0;
}
