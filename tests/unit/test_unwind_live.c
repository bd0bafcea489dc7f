/* SPDX-License-Identifier: MIT */
/*
 * The unwinder on a real process: spawn tests/targets/unwindme (with and
 * without frame pointers), PTRACE_SEIZE it, and take samples the way the
 * recorder does (interrupt, registers, one stack copy, resume), then unwind
 * the copy in every mode and check that the frames land in the expected
 * functions, in order.  Skips (77) when ptrace is not permitted.
 */
#include "t.h"

#include "addrspace.h"
#include "arch/arch.h"
#include "memread.h"
#include "module.h"
#include "unwind.h"

#include <errno.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#define SAMPLES	   60
#define STACK_COPY 16384
#define MAX_FRAMES 64

struct live {
	pid_t pid;
	struct module_cache *mc;
	struct addrspace as;
	const struct xp_arch *arch;
	struct unwinder *u[3];
};

static const char *const mode_names[] = {"auto", "fp", "dwarf"};

static pid_t spawn(const char *path, const char *what)
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
		execl(path, path, what, fdarg, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	/* Wait for readiness, never for a sleep. */
	if (pid < 0 || read(pfd[0], &c, 1) != 1) {
		close(pfd[0]);
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		return -1;
	}
	close(pfd[0]);
	return pid;
}

/* Symbol name for a frame, "?" when unknown. */
static const char *frame_name(struct live *l, uint64_t pc, uint8_t flags)
{
	uint64_t addr = flags & XP_FRAME_EXACT ? pc : pc - 1, vaddr, start, size;
	struct xp_map *m = addrspace_find(&l->as, addr);
	const char *name;

	if (!m || !m->mod || module_vaddr(m->mod, m, addr, &vaddr) ||
	    module_symbol(m->mod, vaddr, &name, &start, &size))
		return "?";
	return name;
}

static void dump(struct live *l, const char *what, const uint64_t *pcs, const uint8_t *flags,
		 unsigned int n)
{
	unsigned int i;

	fprintf(stderr, "  %s:", what);
	for (i = 0; i < n; i++)
		fprintf(stderr, " %s(%#llx%s)", frame_name(l, pcs[i], flags[i]),
			(unsigned long long)pcs[i], flags[i] & XP_FRAME_CFI ? ",cfi" : "");
	fputc('\n', stderr);
}

/* Index of the first frame named @name at or after @from, or -1. */
static int find_frame(struct live *l, const uint64_t *pcs, const uint8_t *flags, unsigned int n,
		      unsigned int from, const char *name)
{
	unsigned int i;

	for (i = from; i < n; i++)
		if (!strcmp(frame_name(l, pcs[i], flags[i]), name))
			return (int)i;
	return -1;
}

typedef int (*check_fn)(struct live *l, int mode, bool nofp, const uint64_t *pcs,
			const uint8_t *flags, unsigned int n, unsigned int *hits);

/* leaf: [leaf] f2 f1 main, exactly adjacent. */
static int check_leaf(struct live *l, int mode, bool nofp, const uint64_t *pcs,
		      const uint8_t *flags, unsigned int n, unsigned int *hits)
{
	static const char *const chain[] = {"leaf", "f2", "f1", "main"};
	unsigned int i = 0, j, want;
	const char *top = frame_name(l, pcs[0], flags[0]);

	if (!strcmp(top, "leaf")) {
		(*hits)++;
	} else if (!strcmp(top, "f2")) {
		i = 1;
	} else {
		return 0; /* elsewhere (the stop itself): not judged */
	}
	/*
	 * Without frame pointers an FP walk cannot go past the frame that CFI
	 * fixed: check only that the innermost frame's caller is right.
	 */
	want = mode == UNWIND_FP && nofp ? 2 : 4 - i;
	if (n < want)
		return -1;
	for (j = 0; j < want; j++)
		if (strcmp(frame_name(l, pcs[j], flags[j]), chain[i + j]))
			return -1;
	return 0;
}

/* qsort: cmp ... qsort ... do_sort main. */
static int check_qsort(struct live *l, int mode, bool nofp, const uint64_t *pcs,
		       const uint8_t *flags, unsigned int n, unsigned int *hits)
{
	int s, m;

	(void)nofp;
	if (strcmp(frame_name(l, pcs[0], flags[0]), "cmp"))
		return 0;
	(*hits)++;
	if (mode == UNWIND_FP)
		return 0; /* libc has no frame pointers: nothing promised past cmp */
	s = find_frame(l, pcs, flags, n, 1, "do_sort");
	m = find_frame(l, pcs, flags, n, 1, "main");
	/* glibc 2.36's qsort tail-calls qsort_r: either may be on the stack. */
	if (s < 2 || m != s + 1 ||
	    (find_frame(l, pcs, flags, n, 1, "qsort") < 1 &&
	     find_frame(l, pcs, flags, n, 1, "qsort_r") < 1))
		return -1;
	return 0;
}

static int run_target(const char *name, const char *what, check_fn check, bool nofp)
{
	const char *dir = getenv("XP_TARGETS");
	static uint8_t copy[STACK_COPY];
	unsigned int hits[3] = {0}, bad[3] = {0}, s, k;
	char path[4096];
	struct live l;
	int ret = T_OK, status;

	if (!dir)
		return T_SKIP;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	memset(&l, 0, sizeof(l));
	l.arch = xp_arch_host();
	T_ASSERT(l.arch);
	l.pid = spawn(path, what);
	T_ASSERT(l.pid > 0);
	if (ptrace(PTRACE_SEIZE, l.pid, NULL, NULL)) {
		fprintf(stderr, "ptrace not permitted: %s\n", strerror(errno));
		kill(l.pid, SIGKILL);
		waitpid(l.pid, NULL, 0);
		return T_SKIP;
	}
	l.mc = module_cache_new();
	addrspace_init(&l.as, l.pid, l.mc);
	T_ASSERT(addrspace_load(&l.as) == 0);
	for (k = 0; k < 3; k++)
		l.u[k] = unwinder_new((enum unwind_mode)k, MAX_FRAMES);
	for (s = 0; s < SAMPLES && ret == T_OK; s++) {
		struct xp_regs regs;
		struct iovec local, remote;
		struct memread mem;
		ssize_t got;
		uint64_t sp;

		usleep(2000);
		T_ASSERT(ptrace(PTRACE_INTERRUPT, l.pid, NULL, NULL) == 0);
		T_ASSERT(waitpid(l.pid, &status, __WALL) == l.pid);
		T_ASSERT(WIFSTOPPED(status) && status >> 16 == PTRACE_EVENT_STOP);
		T_ASSERT(l.arch->regs_read(l.pid, &regs) == 0);
		sp = xp_regs_get(&regs, l.arch->dwarf_sp);
		local.iov_base = copy;
		local.iov_len = sizeof(copy);
		remote.iov_base = (void *)(uintptr_t)sp;
		remote.iov_len = sizeof(copy);
		got = process_vm_readv(l.pid, &local, 1, &remote, 1, 0);
		T_ASSERT(ptrace(PTRACE_CONT, l.pid, NULL, NULL) == 0);
		/* Unwind after resuming, on the copy, as the recorder does. */
		memread_init(&mem, l.pid, sp, copy, got > 0 ? (size_t)got : 0);
		for (k = 0; k < 3; k++) {
			uint64_t pcs[MAX_FRAMES];
			uint8_t flags[MAX_FRAMES];
			unsigned int n = unwind_stack(l.u[k], l.arch, &regs, &mem, &l.as, pcs,
						      flags, MAX_FRAMES);

			if (getenv("XP_DUMP"))
				dump(&l, mode_names[k], pcs, flags, n);
			if (check(&l, (int)k, nofp, pcs, flags, n, &hits[k])) {
				bad[k]++;
				fprintf(stderr, "%s %s: bad stack in mode %s\n", name, what,
					mode_names[k]);
				dump(&l, mode_names[k], pcs, flags, n);
				ret = T_FAIL;
			}
		}
	}
	for (k = 0; k < 3; k++) {
		const struct unwind_stats *st = unwinder_stats(l.u[k]);

		printf(
		    "# %s %s %s: %u in target frame, %u bad; frames fp %llu cfi %llu, bad %llu\n",
		    name, what, mode_names[k], hits[k], bad[k], (unsigned long long)st->frames_fp,
		    (unsigned long long)st->frames_cfi, (unsigned long long)st->bad_frames);
		if (!hits[k])
			ret = T_FAIL; /* the test proved nothing */
		unwinder_free(l.u[k]);
	}
	kill(l.pid, SIGKILL);
	waitpid(l.pid, NULL, __WALL);
	addrspace_release(&l.as);
	module_cache_free(l.mc);
	return ret;
}

static int test_leaf_fp(void)
{
	return run_target("unwindme", "leaf", check_leaf, false);
}

static int test_leaf_nofp(void)
{
	return run_target("unwindme-nofp", "leaf", check_leaf, true);
}

static int test_qsort_fp(void)
{
	return run_target("unwindme", "qsort", check_qsort, false);
}

static int test_qsort_nofp(void)
{
	return run_target("unwindme-nofp", "qsort", check_qsort, true);
}

T_MAIN(T_CASE(test_leaf_fp), T_CASE(test_leaf_nofp), T_CASE(test_qsort_fp), T_CASE(test_qsort_nofp))
