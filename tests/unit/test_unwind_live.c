/* SPDX-License-Identifier: MIT */
/*
 * The unwinder on a real process: spawn tests/targets/unwindme (with and
 * without frame pointers), PTRACE_SEIZE it, and take samples the way the
 * recorder does (interrupt, registers, one stack copy, resume), then unwind
 * the copy in every mode and check that the frames land in the expected
 * functions, in order.  The "nocfi" variants point the address space at a
 * copy of the target whose CFI is hidden, so its frames must come from
 * prologue analysis and validated frame records.  Skips (77) when ptrace
 * is not permitted.
 */
#include "t.h"

#include "addrspace.h"
#include "arch/arch.h"
#include "memread.h"
#include "module.h"
#include "unwind.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
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
	struct unwinder *u[4];
};

static const char *const mode_names[] = {"auto", "fp", "dwarf", "libunwind"};

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

/* Copy @src to a temporary file with its CFI hidden from libdw.  0 or -1. */
static int copy_without_cfi(const char *src, char *dst, size_t dstlen)
{
	static const char *const hide[] = {".eh_frame", ".eh_frame_hdr", ".debug_frame"};
	Elf64_Ehdr *eh;
	Elf64_Shdr *sh;
	Elf64_Phdr *ph;
	struct stat st;
	uint8_t *img;
	size_t i, k;
	int fd, ok = -1;

	fd = open(src, O_RDONLY);
	if (fd < 0 || fstat(fd, &st) || st.st_size < (off_t)sizeof(*eh))
		return -1;
	img = malloc((size_t)st.st_size);
	if (!img || read(fd, img, (size_t)st.st_size) != st.st_size)
		goto out;
	close(fd);
	eh = (Elf64_Ehdr *)img;
	ph = (Elf64_Phdr *)(img + eh->e_phoff);
	sh = (Elf64_Shdr *)(img + eh->e_shoff);
	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_GNU_EH_FRAME)
			ph[i].p_type = PT_NULL;
	for (i = 0; i < eh->e_shnum; i++) {
		char *name = (char *)img + sh[eh->e_shstrndx].sh_offset + sh[i].sh_name;

		for (k = 0; k < sizeof(hide) / sizeof(hide[0]); k++)
			if (!strcmp(name, hide[k]))
				name[1] = 'X';
	}
	snprintf(dst, dstlen, "/tmp/xprof-nocfi-XXXXXX");
	fd = mkstemp(dst);
	if (fd >= 0 && write(fd, img, (size_t)st.st_size) == st.st_size)
		ok = 0;
out:
	if (fd >= 0)
		close(fd);
	free(img);
	return ok;
}

/* Load /proc/PID/maps with the mappings of file @real shown as file @copy. */
static int load_maps_as(struct live *l, const char *real, const char *copy)
{
	char file[64], line[8192], *text = NULL;
	size_t len = 0, rl = strlen(real);
	FILE *f;
	int ret;

	snprintf(file, sizeof(file), "/proc/%d/maps", (int)l->pid);
	f = fopen(file, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, real);
		size_t add;

		if (p && !strcmp(p + rl, "\n"))
			snprintf(p, sizeof(line) - (size_t)(p - line), "%s\n", copy);
		add = strlen(line);
		text = realloc(text, len + add + 1);
		memcpy(text + len, line, add + 1);
		len += add;
	}
	fclose(f);
	ret = text ? addrspace_load_text(&l->as, text) : -1;
	free(text);
	return ret;
}

/* Symbol name for a frame, "?" when unknown. */
static const char *frame_name(struct live *l, uint64_t pc, uint8_t flags)
{
	uint64_t addr = xp_lookup_pc(pc, flags), vaddr, start, size;
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

struct variant {
	const char *target; /* file in $XP_TARGETS */
	bool nofp;	    /* built with -fomit-frame-pointer */
	bool nocfi;	    /* unwind with the target's CFI hidden */
};

typedef int (*check_fn)(struct live *l, int mode, const struct variant *v, const uint64_t *pcs,
			const uint8_t *flags, unsigned int n, unsigned int *hits);

/* leaf: [leaf] f2 f1 main, exactly adjacent. */
static int check_leaf(struct live *l, int mode, const struct variant *v, const uint64_t *pcs,
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
	if (mode == UNWIND_DWARF && v->nocfi)
		return 0; /* nothing to go by */
	/*
	 * Without frame pointers an FP walk cannot go past the frame that CFI
	 * fixed: check only that the innermost frame's caller is right.
	 */
	want = mode == UNWIND_FP && v->nofp ? 2 - i : 4 - i;
	if (n < want)
		return -1;
	for (j = 0; j < want; j++)
		if (strcmp(frame_name(l, pcs[j], flags[j]), chain[i + j]))
			return -1;
	return 0;
}

/* qsort: cmp ... qsort ... do_sort main. */
static int check_qsort(struct live *l, int mode, const struct variant *v, const uint64_t *pcs,
		       const uint8_t *flags, unsigned int n, unsigned int *hits)
{
	int s, m;

	if (strcmp(frame_name(l, pcs[0], flags[0]), "cmp"))
		return 0;
	(*hits)++;
	if (mode == UNWIND_FP || (mode == UNWIND_DWARF && v->nocfi))
		return 0; /* libc has no frame pointers; no CFI: nothing promised past cmp */
	s = find_frame(l, pcs, flags, n, 1, "do_sort");
	m = find_frame(l, pcs, flags, n, 1, "main");
	/* glibc 2.36's qsort tail-calls qsort_r: either may be on the stack. */
	if (s < 2 || m != s + 1 ||
	    (find_frame(l, pcs, flags, n, 1, "qsort") < 1 &&
	     find_frame(l, pcs, flags, n, 1, "qsort_r") < 1))
		return -1;
	return 0;
}

/* signal: [leaf] f2 on_signal <trampoline> <libc raise...> sig_main main. */
static int check_signal(struct live *l, int mode, const struct variant *v, const uint64_t *pcs,
			const uint8_t *flags, unsigned int n, unsigned int *hits)
{
	const char *top = frame_name(l, pcs[0], flags[0]);
	unsigned int h;
	int s, m;

	if (!strcmp(top, "leaf"))
		h = 2;
	else if (!strcmp(top, "f2"))
		h = 1;
	else
		return 0; /* not in the handler's loop */
	(*hits)++;
	if (mode == UNWIND_DWARF && v->nocfi)
		return 0; /* nothing to go by */
	if (h == 2 && (n < 2 || strcmp(frame_name(l, pcs[1], flags[1]), "f2")))
		return -1;
	if (mode == UNWIND_FP && v->nofp)
		return 0; /* only the innermost fix is promised */
	if (n <= h || strcmp(frame_name(l, pcs[h], flags[h]), "on_signal"))
		return -1;
	if (mode == UNWIND_FP)
		return 0; /* no frame record crosses a signal frame */
	s = find_frame(l, pcs, flags, n, h + 1, "sig_main");
	m = find_frame(l, pcs, flags, n, h + 1, "main");
	if (s < (int)h + 2 || m != s + 1)
		return -1;
	/* Past the trampoline the pc is exact: the interrupted frame, not a call. */
	while (--s > (int)h && !(flags[s] & XP_FRAME_EXACT))
		;
	return s > (int)h + 1 ? 0 : -1;
}

/* vdso: <vDSO> ... vdso_loop main, with the vDSO's own CFI. */
static int check_vdso(struct live *l, int mode, const struct variant *v, const uint64_t *pcs,
		      const uint8_t *flags, unsigned int n, unsigned int *hits)
{
	const struct xp_map *m = addrspace_find(&l->as, pcs[0]);
	int s;

	if (!m || strcmp(m->path, "[vdso]"))
		return 0;
	(*hits)++;
	if (mode == UNWIND_FP || (mode == UNWIND_DWARF && v->nocfi))
		return 0; /* libc's clock_gettime keeps no frame record */
	s = find_frame(l, pcs, flags, n, 1, "vdso_loop");
	if (s < 2 || find_frame(l, pcs, flags, n, (unsigned int)s, "main") != s + 1)
		return -1;
	return 0;
}

static int run_target(const struct variant *v, const char *what, check_fn check)
{
	const char *dir = getenv("XP_TARGETS"), *name = v->target;
	static uint8_t copy[STACK_COPY];
	unsigned int hits[4] = {0}, bad[4] = {0}, s, k, modes;
	char path[4096], real[PATH_MAX], nocfi[64] = "";
	struct live l;
	int ret = T_OK, status;

	if (!dir)
		return T_SKIP;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (v->nocfi) {
		T_ASSERT(realpath(path, real));
		T_ASSERT(copy_without_cfi(real, nocfi, sizeof(nocfi)) == 0);
	}
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
	if (v->nocfi)
		T_ASSERT(load_maps_as(&l, real, nocfi) == 0);
	else
		T_ASSERT(addrspace_load(&l.as) == 0);
	/*
	 * libunwind too, except on the copy without CFI: libunwind-ptrace finds
	 * the tables in the files /proc/PID/maps names, which have them.
	 */
	modes = v->nocfi ? 3 : 4;
	for (k = 0; k < modes; k++)
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
		sp = xp_regs_get(&regs, l.arch->dwarf.sp);
		local.iov_base = copy;
		local.iov_len = sizeof(copy);
		remote.iov_base = (void *)(uintptr_t)sp;
		remote.iov_len = sizeof(copy);
		got = process_vm_readv(l.pid, &local, 1, &remote, 1, 0);
		T_ASSERT(ptrace(PTRACE_CONT, l.pid, NULL, NULL) == 0);
		/* Unwind after resuming, on the copy, as the recorder does. */
		memread_init(&mem, l.pid, sp, copy, got > 0 ? (size_t)got : 0);
		for (k = 0; k < modes; k++) {
			uint64_t pcs[MAX_FRAMES];
			uint8_t flags[MAX_FRAMES];
			unsigned int n = unwind_stack(l.u[k], l.arch, &regs, &mem, &l.as, pcs,
						      flags, MAX_FRAMES, NULL);

			if (getenv("XP_DUMP"))
				dump(&l, mode_names[k], pcs, flags, n);
			if (check(&l, (int)k, v, pcs, flags, n, &hits[k])) {
				bad[k]++;
				fprintf(stderr, "%s%s %s: bad stack in mode %s\n", name,
					v->nocfi ? " (no cfi)" : "", what, mode_names[k]);
				dump(&l, mode_names[k], pcs, flags, n);
				ret = T_FAIL;
			}
		}
	}
	for (k = 0; k < modes; k++) {
		const struct unwind_stats *st = unwinder_stats(l.u[k]);

		printf("# %s%s %s %s: %u in target frame, %u bad; frames fp %llu cfi %llu, bad "
		       "%llu\n",
		       name, v->nocfi ? " (no cfi)" : "", what, mode_names[k], hits[k], bad[k],
		       (unsigned long long)st->frames_fp, (unsigned long long)st->frames_cfi,
		       (unsigned long long)st->bad_frames);
		fflush(stdout);
		if (!hits[k])
			ret = T_FAIL; /* the test proved nothing */
		unwinder_free(l.u[k]);
	}
	kill(l.pid, SIGKILL);
	waitpid(l.pid, NULL, __WALL);
	addrspace_release(&l.as);
	module_cache_free(l.mc);
	if (v->nocfi)
		unlink(nocfi);
	return ret;
}

static const struct variant fp = {"unwindme", false, false};
static const struct variant nofp = {"unwindme-nofp", true, false};
static const struct variant fp_nocfi = {"unwindme", false, true};
static const struct variant nofp_nocfi = {"unwindme-nofp", true, true};

static int test_leaf_fp(void)
{
	return run_target(&fp, "leaf", check_leaf);
}

static int test_leaf_nofp(void)
{
	return run_target(&nofp, "leaf", check_leaf);
}

static int test_qsort_fp(void)
{
	return run_target(&fp, "qsort", check_qsort);
}

static int test_qsort_nofp(void)
{
	return run_target(&nofp, "qsort", check_qsort);
}

static int test_signal_fp(void)
{
	return run_target(&fp, "signal", check_signal);
}

static int test_signal_nofp(void)
{
	return run_target(&nofp, "signal", check_signal);
}

static int test_signal_nofp_nocfi(void)
{
	return run_target(&nofp_nocfi, "signal", check_signal);
}

static int test_vdso_fp(void)
{
	return run_target(&fp, "vdso", check_vdso);
}

static int test_vdso_nofp_nocfi(void)
{
	return run_target(&nofp_nocfi, "vdso", check_vdso);
}

static int test_leaf_fp_nocfi(void)
{
	return run_target(&fp_nocfi, "leaf", check_leaf);
}

static int test_leaf_nofp_nocfi(void)
{
	return run_target(&nofp_nocfi, "leaf", check_leaf);
}

static int test_qsort_fp_nocfi(void)
{
	return run_target(&fp_nocfi, "qsort", check_qsort);
}

static int test_qsort_nofp_nocfi(void)
{
	return run_target(&nofp_nocfi, "qsort", check_qsort);
}

T_MAIN(T_CASE(test_leaf_fp), T_CASE(test_leaf_nofp), T_CASE(test_qsort_fp), T_CASE(test_qsort_nofp),
       T_CASE(test_leaf_fp_nocfi), T_CASE(test_leaf_nofp_nocfi), T_CASE(test_qsort_fp_nocfi),
       T_CASE(test_qsort_nofp_nocfi), T_CASE(test_signal_fp), T_CASE(test_signal_nofp),
       T_CASE(test_signal_nofp_nocfi), T_CASE(test_vdso_fp), T_CASE(test_vdso_nofp_nocfi))
