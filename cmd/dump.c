/* SPDX-License-Identifier: MIT */
/*
 * xprof dump: print the call stack of every thread of a running process
 * once, symbolized, then detach and leave it running as before (like
 * eu-stack, pstack or py-spy dump).  Each thread is stopped only for one
 * register read and one stack copy, as when sampling; unwinding and
 * symbolization run after the threads are resumed, on the copies.  The
 * mappings are read before stopping anything.  This file owns the options,
 * the output and the exit codes; the ptrace work is the tracer's.
 */
#include "cmd.h"
#include "clock.h"
#include "common.h"
#include "addrspace.h"
#include "ctl.h"
#include "err.h"
#include "memread.h"
#include "module.h"
#include "opt.h"
#include "out.h"
#include "procfs.h"
#include "stackcopy.h"
#include "tracer.h"
#include "unwind.h"
#include "arch.h"
#include "symbolize.h"
#include "sorted.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DUMP_STACK_BYTES (128 * 1024) /* one stop, so more than a sample copies */
#define DUMP_TIMEOUT_MS	 2000	      /* for every thread to stop */

static const struct xp_cmd_help dump_help = XP_CMD_HELP(
    "dump", XP_USAGE("xprof dump -p <pid> [-g auto|fp|dwarf|libunwind|check] [--max-depth <n>]"),
    "Print the call stack of every thread of a running process, then detach\n"
    "and leave it running.",
    "    xprof dump -p 4242                    # every thread of pid 4242\n"
    "    xprof dump -p $(pidof app) -g dwarf   # CFI for every frame\n");

int dump_parse_args(int argc, char **argv, struct dump_opts *opts)
{
	const struct xp_option options[] = {
	    XP_OPTION_STRING('p', "pid", &opts->pid_arg, "<pid>",
			     "the process to dump (every thread of it)"),
	    COMMON_OPTION_CALL_GRAPH(&opts->call_graph),
	    XP_OPTION_UINT(0, "max-depth", &opts->max_depth, "<n>", 1, XP_MAX_DEPTH,
			   "deepest stack shown, in frames (default 1024)"),
	    XP_OPTION_END(),
	};
	uint64_t v;
	int ret = xp_parse_options_only(argc, argv, options, &dump_help);

	if (ret)
		return ret;
	if (!opts->pid_arg)
		return xp_usage_error(&dump_help, "no process given: use -p <pid>");
	if (xp_parse_u64(opts->pid_arg, 1, 0x3fffffff, &v))
		return xp_usage_error(&dump_help,
				      "invalid value '%s' for -p, --pid (expected a process id)",
				      opts->pid_arg);
	opts->pid = (pid_t)v;
	return XP_EXIT_OK;
}

/* One thread: what was taken during its stop. */
struct dump_thread {
	pid_t tid;
	char comm[32];
	char state; /* from /proc before the stop: R, S, D, T... */
	bool taken, gone;
	int err; /* -errno of a failed register read */
	struct xp_regs regs;
	uint8_t *copy;
	size_t len;
};

static int cmp_tid(const void *a, const void *b)
{
	pid_t x = ((const struct dump_thread *)a)->tid, y = ((const struct dump_thread *)b)->tid;

	return (x > y) - (x < y);
}

static void describe_thread(pid_t pid, struct dump_thread *d)
{
	procfs_comm(pid, d->tid, d->comm, sizeof(d->comm));
	d->state = procfs_task_state(pid, d->tid);
}

/* Every thread of @pid in /proc, described, into *@d (grown).  Returns how many. */
static size_t list_threads(pid_t pid, struct dump_thread **d, unsigned long *alloc)
{
	char path[64];
	struct dirent *de;
	size_t nr = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return 0;
	while ((de = readdir(dir))) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);

		if (*end || tid <= 0)
			continue;
		xp_grow((void **)d, alloc, nr + 1, sizeof(**d));
		memset(&(*d)[nr], 0, sizeof(**d));
		(*d)[nr].tid = (pid_t)tid;
		describe_thread(pid, &(*d)[nr]);
		nr++;
	}
	closedir(dir);
	xp_sort(*d, nr, sizeof(**d), cmp_tid);
	return nr;
}

static const char *state_name(char state)
{
	switch (state) {
	case 'R':
		return "running";
	case 'S':
		return "sleeping";
	case 'D':
		return "waiting in the kernel";
	case 'T':
		return "stopped";
	case 't':
		return "traced";
	case 'Z':
		return "zombie";
	default:
		return "in an unknown state";
	}
}

/* In a ptrace-stop: registers and one copy of the stack from SP, as the sampler takes them. */
static void take(const struct xp_arch *arch, struct stackcopy_src *mem, struct dump_thread *d)
{
	d->taken = true;
	d->err = arch->regs_read(d->tid, &d->regs);
	if (d->err)
		return;
	d->copy = xp_malloc(DUMP_STACK_BYTES);
	d->len = stackcopy_take(mem, d->copy, DUMP_STACK_BYTES,
				xp_regs_get(&d->regs, arch->dwarf.sp), 0);
}

static struct dump_thread *find(struct dump_thread *d, size_t nr, pid_t tid)
{
	size_t i;

	for (i = 0; i < nr; i++)
		if (d[i].tid == tid)
			return &d[i];
	return NULL;
}

/*
 * Interrupt every thread of @d and take each at its first stop, resuming it
 * at once (signals re-injected by the tracer).  Threads that exit are
 * marked gone; those that do not stop in time are left untaken.
 */
static void stop_and_copy(struct tracer *t, const struct xp_arch *arch, pid_t pid,
			  struct dump_thread *d, size_t nr)
{
	uint64_t deadline = xp_now_ns() + DUMP_TIMEOUT_MS * 1000000ull;
	struct stackcopy_src mem;
	size_t pending = 0, i;

	stackcopy_init(&mem, pid);

	for (i = 0; i < nr; i++) {
		struct xp_thread *th = tracer_find(t, d[i].tid);

		if (th && !tracer_interrupt(t, th))
			pending++;
		else
			d[i].gone = true;
	}
	while (pending && xp_now_ns() < deadline) {
		struct tracer_event ev;
		struct dump_thread *dt;
		int status;
		pid_t tid = waitpid(-1, &status, __WALL | WNOHANG);

		if (tid < 0 && errno == EINTR)
			continue;
		if (tid < 0)
			break; /* ECHILD: nothing traced is left */
		if (tid == 0) {
			struct timespec ts = {0, 200000};

			nanosleep(&ts, NULL);
			continue;
		}
		dt = find(d, nr, tid);
		tracer_handle_status(t, tid, status, &ev);
		if (ev.kind == TEV_EXIT) {
			if (dt && !dt->taken && !dt->gone) {
				dt->gone = true;
				pending--;
			}
			continue;
		}
		if (ev.kind != TEV_STOP)
			continue;
		/* Any stop will do: a signal-delivery stop has the registers too. */
		if (dt && !dt->taken && !dt->gone) {
			take(arch, &mem, dt);
			pending--;
		}
		if (tracer_finish_stop(t, &ev))
			xp_debug(1, "cannot resume tid %d: %s", (int)tid, strerror(errno));
	}
	stackcopy_close(&mem);
}

static void print_frames(struct dump_thread *d, const struct xp_arch *arch, struct unwinder *u,
			 struct symbolizer *sym, struct addrspace *as, pid_t pid,
			 unsigned int max_depth)
{
	uint64_t *pcs = xp_calloc(max_depth + 1, sizeof(*pcs));
	uint8_t *flags = xp_calloc(max_depth + 1, 1);
	struct memread m;
	unsigned int n, i;

	memread_init(&m, pid, xp_regs_get(&d->regs, arch->dwarf.sp), d->copy, d->len);
	n = unwind_stack(u, arch, &d->regs, &m, as, pcs, flags, max_depth + 1, NULL);
	for (i = 0; i < n; i++) {
		const struct xp_map *xm = NULL;
		const struct sym_frame *f;
		struct sym_map sm;
		const uint8_t *id = NULL;
		size_t idlen = 0;
		uint64_t addr = xp_lookup_pc(pcs[i], flags[i]);

		if (!(flags[i] & XP_FRAME_MARKERS))
			xm = addrspace_find(as, addr);
		if (xm && xm->mod)
			idlen = module_build_id(xm->mod, &id);
		if (xm)
			sm = (struct sym_map){xm->start, xm->end, xm->offset, xm->path,
					      id,	 idlen,	  NULL};
		/* An address in inlined code: the inlined functions first, then their host. */
		for (f = symbolize_pc(sym, pid, xm ? &sm : NULL, pcs[i], addr, flags[i]); f;
		     f = f->caller) {
			fputs("    ", stdout);
			out_put_name(stdout, f->name);
			if (f->file && f->line)
				printf(" (%s:%u)", f->file, f->line);
			else if (f->file)
				printf(" (%s)", f->file);
			else if (f->module && f->kind == SYM_FUNC)
				printf(" (%s)", f->module);
			if (f->caller)
				fputs(" [inlined]", stdout);
			putchar('\n');
		}
	}
	if (!n)
		puts("    (no frames)");
	free(pcs);
	free(flags);
}

/* "Process 4242: ./app arg" from /proc/PID/cmdline (NULs between arguments). */
static void print_process(pid_t pid, const char *comm)
{
	char path[64], buf[4096];
	int fd;
	ssize_t n, i;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0) {
		snprintf(buf, sizeof(buf), "%s", comm);
		n = (ssize_t)strlen(buf);
	}
	for (i = 0; i < n; i++)
		if (!buf[i])
			buf[i] = i == n - 1 ? 0 : ' ';
	buf[n] = 0;
	printf("Process %d: ", (int)pid);
	out_put_name(stdout, buf);
	putchar('\n');
}

/*
 * Seize every thread of @pid into @t; @d lists them, described from /proc
 * before the seizure (once seized, a stopped thread shows as traced, 't',
 * rather than stopped, 'T'), then any born since.  XP_EXIT_OK, or
 * XP_EXIT_FAIL after a printed error (nothing left attached).
 */
static int dump_attach(struct tracer *t, pid_t pid, struct dump_thread **d, size_t *nr)
{
	unsigned long it = 0, alloc = 0;
	struct xp_thread *th;
	char what[64];
	int e;

	*nr = list_threads(pid, d, &alloc);
	e = tracer_attach(t, pid);
	if (e) {
		snprintf(what, sizeof(what), "attach to pid %d", (int)pid);
		if (e == -EINVAL)
			xp_error("cannot dump %d: it is a thread id, not a process id", (int)pid);
		else
			common_explain_trace_error(-e, pid, what);
		return XP_EXIT_FAIL;
	}
	while ((th = tracer_thread_at(t, &it))) {
		if (find(*d, *nr, th->tid))
			continue;
		xp_grow((void **)d, &alloc, *nr + 1, sizeof(**d));
		memset(&(*d)[*nr], 0, sizeof(**d));
		(*d)[*nr].tid = th->tid;
		describe_thread(pid, &(*d)[*nr]);
		(*nr)++;
	}
	xp_sort(*d, *nr, sizeof(**d), cmp_tid);
	return XP_EXIT_OK;
}

/* Unwind, symbolize and print every thread taken.  Returns how many were printed. */
static size_t dump_print(const struct dump_opts *opts, const char *comm, struct addrspace *as,
			 struct dump_thread *d, size_t nr)
{
	const struct xp_arch *arch = xp_arch_host();
	struct sym_opts so = {.lines = true};
	struct unwinder *u =
	    unwinder_new((enum unwind_mode)opts->call_graph, (unsigned int)opts->max_depth);
	struct symbolizer *sym = symbolizer_new(&so);
	size_t i, dumped = 0;

	print_process(opts->pid, comm);
	for (i = 0; i < nr; i++) {
		if (d[i].gone)
			continue; /* exited meanwhile */
		printf("\nThread %d (", (int)d[i].tid);
		out_put_name(stdout, d[i].comm);
		printf(") %s:\n", state_name(d[i].state));
		if (!d[i].taken)
			printf("    (did not stop within %d ms)\n", DUMP_TIMEOUT_MS);
		else if (d[i].err)
			printf("    (cannot read its registers: %s)\n", strerror(-d[i].err));
		else {
			print_frames(&d[i], arch, u, sym, as, opts->pid,
				     (unsigned int)opts->max_depth);
			dumped++;
		}
	}
	symbolizer_free(sym);
	unwinder_free(u);
	return dumped;
}

int cmd_dump(int argc, char **argv)
{
	struct dump_opts opts = DUMP_OPTS_INIT;
	struct dump_thread *d = NULL;
	struct module_cache *mc;
	struct addrspace as;
	struct tracer t;
	sigset_t block, old;
	size_t nr = 0, i, dumped = 0;
	int ret, e, lost;

	ret = dump_parse_args(argc, argv, &opts);
	if (ret)
		return xp_parse_status(ret);
	if (common_check_target(opts.pid, "dump"))
		return XP_EXIT_FAIL;
	/* Ctrl-C while threads are stopped takes effect once they are released. */
	ctl_signal_set(&block, false);
	sigprocmask(SIG_BLOCK, &block, &old);
	tracer_init(&t, 0);
	mc = module_cache_new();
	addrspace_init(&as, opts.pid, mc);
	ret = dump_attach(&t, opts.pid, &d, &nr);
	if (!ret) {
		/* Before stopping anything: /proc reads are slow next to a stop. */
		e = addrspace_load(&as);
		if (e)
			xp_warn("cannot read the mappings of pid %d: %s; frames will be addresses",
				(int)opts.pid, strerror(-e));
		stop_and_copy(&t, xp_arch_host(), opts.pid, d, nr);
		lost = tracer_detach_all(&t);
		if (lost)
			xp_warn("could not detach cleanly from %d thread(s) of pid %d", lost,
				(int)opts.pid);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (!ret)
		dumped = dump_print(&opts, t.procs[0]->comm, &as, d, nr);
	for (i = 0; i < nr; i++)
		free(d[i].copy);
	free(d);
	addrspace_release(&as);
	module_cache_free(mc);
	tracer_release(&t);
	if (!ret && !dumped) {
		xp_error("no thread of pid %d could be dumped", (int)opts.pid);
		ret = XP_EXIT_FAIL;
	}
	return ret;
}
