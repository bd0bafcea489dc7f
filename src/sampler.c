/* SPDX-License-Identifier: MIT */
/*
 * The sampling loop (see sampler.h).  While a thread is stopped we do only
 * what needs the stop: registers and one bulk stack copy.  Unwinding,
 * interning and writing happen after it runs again, from a queue of raw
 * samples, once no interrupt is outstanding.
 */
#include "sampler.h"
#include "tracer.h"
#include "datafile.h"
#include "memread.h"
#include "stacktab.h"
#include "jitmap.h"
#include "vdso.h"
#include "err.h"
#include "arch.h"

#include <sched.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A raw sample waiting to be unwound. */
struct raw_sample {
	struct xp_process *proc; /* kept alive by the tracer until tracer_release */
	pid_t tid;
	uint64_t t, weight;
	int64_t sys_nr, sys_sp, sys_pc; /* blocked in this system call (wall mode), or -1 */
	struct xp_regs regs;
	size_t len;
	uint8_t *copy;
};

struct sampler {
	struct tracer *tr;
	struct df_writer *w;
	const struct sampler_opts *o;
	struct sampler_stats *st;
	const struct xp_arch *arch;
	struct unwinder *unw;
	struct stacktab stacks;
	struct raw_sample *q;
	unsigned long nq, qalloc;
	uint64_t *pcs;
	uint8_t *flags;
	uint64_t start_mono, period, next_k, last_flush;
	uint64_t rnd;
	unsigned long pending;
	bool stopping, write_failed;
	int sigfd, timerfd;
	uint64_t last_status;
	unsigned long ncpus;
	int nsigint;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t rel_ns(const struct sampler *s)
{
	return mono_ns() - s->start_mono;
}

static uint32_t next_rand(struct sampler *s)
{
	/* xorshift64*: statistical quality is plenty for timer jitter. */
	s->rnd ^= s->rnd >> 12;
	s->rnd ^= s->rnd << 25;
	s->rnd ^= s->rnd >> 27;
	return (uint32_t)((s->rnd * 0x2545F4914F6CDD1Dull) >> 32);
}

uint64_t sampler_tick_time(uint64_t start, uint64_t period, uint64_t k, uint32_t rnd)
{
	uint64_t span = period / 4; /* jitter in [-period/8, +period/8) */
	uint64_t j = span ? (uint64_t)(((unsigned __int128)rnd * span) >> 32) : 0;

	return start + k * period + j - span / 2;
}

uint64_t sampler_next_index(uint64_t start, uint64_t period, uint64_t now)
{
	if (now < start)
		return 0;
	return (now - start) / period + 1;
}

uint64_t sampler_stop_percentile(const struct sampler_stats *st, double p)
{
	return sampler_hist_percentile(st->stop_hist, st->stop_ns_max, p);
}

uint64_t sampler_hist_percentile(const uint64_t *hist, uint64_t max, double p)
{
	uint64_t total = 0, acc = 0, want;
	unsigned i;

	for (i = 0; i < SAMPLER_STOP_HIST; i++)
		total += hist[i];
	if (!total)
		return 0;
	want = (uint64_t)((double)total * p / 100.0);
	if (want >= total)
		want = total - 1;
	for (i = 0; i < SAMPLER_STOP_HIST; i++) {
		acc += hist[i];
		if (acc > want)
			return i < SAMPLER_STOP_FINE
				   ? (uint64_t)i * 1000 + 500
				   : ((uint64_t)(i - SAMPLER_STOP_FINE) + 10) * 100000 + 50000;
	}
	return max;
}

static int check_write(struct sampler *s, int ret)
{
	if (ret && !s->write_failed) {
		s->write_failed = true;
		s->stopping = true;
		s->st->end = SAMPLER_END_WRITE_ERROR;
	}
	return ret;
}

static void arm_timer(struct sampler *s)
{
	uint64_t at = sampler_tick_time(s->start_mono, s->period, s->next_k, next_rand(s));
	struct itimerspec its = {.it_value = {.tv_sec = (time_t)(at / 1000000000ull),
					      .tv_nsec = (long)(at % 1000000000ull)}};

	if (timerfd_settime(s->timerfd, TFD_TIMER_ABSTIME, &its, NULL))
		xp_warn("cannot arm the sampling timer: %s", strerror(errno));
}

static void write_mappings(struct sampler *s, struct xp_process *p, uint64_t t)
{
	size_t i;

	for (i = 0; i < p->as.nr; i++) {
		struct xp_map *m = &p->as.maps[i];
		const uint8_t *id = NULL;
		size_t idlen = 0;

		if (m->reported || !(m->prot & XP_PROT_EXEC))
			continue;
		if (m->mod)
			idlen = module_build_id(m->mod, &id);
		if (!strcmp(m->path, "[vdso]") &&
		    check_write(s, vdso_write(s->w, p->pid, m->start, m->end)))
			return;
		if (check_write(s, df_write_mapping(s->w, t, p->pid, m->start, m->end, m->offset,
						    m->prot, m->path, id, idlen)))
			return;
		m->reported = true;
	}
}

static void load_maps(struct sampler *s, struct xp_process *p, uint64_t t)
{
	int e = addrspace_load(&p->as);

	p->maps_loaded_at = rel_ns(s);
	if (e) {
		xp_debug(1, "cannot read the mappings of pid %d: %s", (int)p->pid, strerror(-e));
		return;
	}
	write_mappings(s, p, t);
}

static void report_process(struct sampler *s, struct xp_process *p, uint32_t flags, uint64_t t)
{
	char path[64], exe[PATH_MAX];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)p->pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	check_write(s, df_write_process(s->w, t, p->pid, p->ppid, flags, p->comm, exe));
	p->reported = true;
	load_maps(s, p, t);
}

/* The thread's name now; "" when it cannot be read. */
static void thread_comm(const struct xp_thread *th, char *comm, size_t len)
{
	char path[80];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)th->proc->pid, (int)th->tid);
	comm[0] = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, comm, len - 1);
	close(fd);
	comm[n > 0 ? n : 0] = 0;
	comm[strcspn(comm, "\n")] = 0;
}

/* @comm: its name if known (a new thread has its creator's), else NULL: read it. */
static void report_thread(struct sampler *s, struct xp_thread *th, uint64_t t, const char *comm)
{
	if (comm)
		snprintf(th->comm, sizeof(th->comm), "%s", comm);
	else
		thread_comm(th, th->comm, sizeof(th->comm));
	check_write(s, df_write_thread(s->w, t, th->proc->pid, th->tid, th->comm));
	th->reported = true;
}

/*
 * Threads are described at their first stop, usually before they name
 * themselves (pthread_setname_np): once a second, and at the end, write a
 * new THREAD record for every thread whose name changed (the report takes
 * the name in force at each sample).
 */
static void refresh_thread_name(struct sampler *s, struct xp_thread *th, uint64_t t)
{
	char comm[sizeof(th->comm)];

	if (!th->reported || th->state == THREAD_NEW)
		return;
	thread_comm(th, comm, sizeof(comm));
	if (!comm[0] || !strcmp(comm, th->comm))
		return;
	memcpy(th->comm, comm, sizeof(comm));
	check_write(s, df_write_thread(s->w, t, th->proc->pid, th->tid, comm));
}

static void refresh_thread_names(struct sampler *s)
{
	struct xp_thread *th;
	unsigned long i = 0;

	while ((th = tracer_thread_at(s->tr, &i)))
		refresh_thread_name(s, th, rel_ns(s));
}

static struct raw_sample *queue_slot(struct sampler *s)
{
	unsigned long old = s->qalloc, i;
	struct raw_sample *r;

	xp_grow((void **)&s->q, &s->qalloc, s->nq + 1, sizeof(*s->q));
	for (i = old; i < s->qalloc; i++)
		s->q[i].copy = NULL;
	r = &s->q[s->nq];
	if (!r->copy)
		r->copy = xp_malloc(s->o->stack_bytes);
	return r;
}

/*
 * Copy @len bytes of @p's memory at @addr; short at the first unreadable
 * page.  A pread of /proc/PID/mem, kept open, is the cheaper copy inside a
 * stop: process_vm_readv checks ptrace access at every call, the open file
 * once (~0.35 us of a ~1.5 us copy of one page, on this build's machine).
 */
static ssize_t copy_memory(struct xp_process *p, void *buf, size_t len, uint64_t addr)
{
	struct iovec local = {buf, len}, remote = {(void *)(uintptr_t)addr, len};
	char path[64];

	if (p->mem_fd < 0 && !p->mem_failed) {
		snprintf(path, sizeof(path), "/proc/%d/mem", (int)p->pid);
		p->mem_fd = open(path, O_RDONLY | O_CLOEXEC);
		p->mem_failed = p->mem_fd < 0;
	}
	if (p->mem_fd >= 0 && addr <= (uint64_t)INT64_MAX - len)
		return pread(p->mem_fd, buf, len, (off_t)addr);
	return process_vm_readv(p->pid, &local, 1, &remote, 1, 0);
}

/*
 * Stack bytes to copy at the next sample of @th: what its last walks
 * needed; for its first, what the last walk of another thread of the
 * process needed (the threads of a program mostly run the same code: 64
 * new threads each starting from the whole window, and shrinking it over
 * their first samples, kept each stop at ~45 us), else the whole window.
 */
static size_t copy_size(const struct sampler *s, const struct xp_thread *th)
{
	if (th->copy_bytes)
		return th->copy_bytes;
	if (th->proc->copy_hint && s->o->adaptive_copy)
		return th->proc->copy_hint;
	return s->o->stack_bytes;
}

/*
 * Called with @th in a ptrace-stop: copy what the unwinder needs.  Returns
 * the queued sample, NULL if none was taken.
 */
static struct raw_sample *take_sample(struct sampler *s, struct xp_thread *th, uint64_t weight)
{
	struct raw_sample *r = queue_slot(s);
	uint64_t sp, room;
	size_t len;
	ssize_t n;
	int e;

	e = s->arch->regs_read(th->tid, &r->regs);
	if (e) {
		s->st->failed++;
		xp_debug(2, "cannot read registers of tid %d: %s", (int)th->tid, strerror(-e));
		return NULL;
	}
	/*
	 * CPU mode: it blocked in a system call between the tick and the stop.
	 * Its CPU time was spent before, elsewhere: keep it for the next sample
	 * that finds it running, as the tick does for a thread already blocked.
	 */
	if (s->o->mode == SAMPLER_CPU && (r->regs.flags & XP_REGS_SYSCALL_RESTART)) {
		s->st->dropped_blocked++;
		return NULL;
	}
	/*
	 * The same once it is woken, but stopped before it ran any code of its
	 * own: it is at the call's exit, not where its CPU time went (256
	 * threads woken from a barrier, stopped while they waited for a CPU,
	 * put a quarter of the samples at the barrier).  A call that did not
	 * block (one that uses CPU in the kernel) is sampled where it is.
	 */
	if (s->o->mode == SAMPLER_CPU && (r->regs.flags & XP_REGS_SYSCALL_EXIT) &&
	    th->blocked_since) {
		th->blocked_since = false;
		s->st->dropped_blocked++;
		return NULL;
	}
	sp = xp_regs_get(&r->regs, s->arch->dwarf_sp);
	len = copy_size(s, th);
	/*
	 * Each page copied is pinned on its own (~0.6 us more for a window
	 * that crosses into the next page): stop at the end of SP's page when
	 * the last walk needed a good margin less than that.
	 */
	room = 4096 - (sp & 4095);
	if (len > room && th->copy_need && th->copy_need + th->copy_need / 4 <= room)
		len = room;
	/* Short near the top of the stack: it stops at the first unreadable page. */
	n = copy_memory(th->proc, r->copy, len, sp);
	r->len = n > 0 ? (size_t)n : 0;
	if (n <= 0 && sp) {
		/* The page-crossing window failed as a whole: retry to the end of SP's page. */
		n = copy_memory(th->proc, r->copy, 4096 - (sp & 4095), sp);
		r->len = n > 0 ? (size_t)n : 0;
	}
	r->proc = th->proc;
	r->tid = th->tid;
	r->t = th->irq_time ? th->irq_time : rel_ns(s);
	r->weight = weight;
	r->sys_nr = th->blocked_nr;
	r->sys_sp = (int64_t)th->last_sys_sp;
	r->sys_pc = (int64_t)th->last_sys_pc;
	s->st->stack_bytes_copied += r->len;
	s->nq++;
	return r;
}

/*
 * Size the next stack copy of @th from what this walk read: the copy is the
 * one part of the stop that grows with its size (~3 us for 16 KiB, PTRACE-
 * NOTES), and most stacks need a fraction of it.  Grow at once (half again
 * what was read), shrink slowly; never beyond the allocated window.
 */
static void size_next_copy(struct sampler *s, struct xp_thread *th, const struct memread *m,
			   uint64_t sp)
{
	uint64_t used = m->hi > sp ? m->hi - sp : 0, want, cur;

	if (!s->o->adaptive_copy)
		return;
	th->copy_need = (uint32_t)(used < UINT32_MAX ? used : UINT32_MAX);
	cur = copy_size(s, th);
	want = (used + used / 2 + 1023) & ~1023ull;
	if (want < 2048)
		want = 2048;
	if (m->live_reads || want > cur) {
		cur = want > cur ? want : cur + cur / 2;
		cur = (cur + 511) & ~511ull;
	} else {
		/* Round down, or an eighth of less than 4 KiB never leaves the block. */
		cur = (cur - (cur - want) / 8) & ~511ull;
		if (cur < want)
			cur = want;
	}
	if (cur > s->o->stack_bytes)
		cur = s->o->stack_bytes;
	th->copy_bytes = (uint32_t)cur;
	th->proc->copy_hint = (uint32_t)(want < cur ? want : cur);
}

/*
 * Whether the maps of @p may be read again for a sample taken at @t.
 * Reading them is ~50 us; a reload that did not help (a wild address, not
 * a new library) doubles the wait, up to a second, so a hostile stack
 * cannot make us read them per sample.  Until a reload has failed to help,
 * maps read before the sample was taken may be read again at once: the
 * first sample of a process can come within a millisecond of its exec,
 * when the maps read at the exec lack the libraries ld.so maps after it
 * (its stack stopped at main, once a run).
 */
static bool maps_due(struct sampler *s, const struct xp_process *p, uint64_t t)
{
	uint64_t wait = p->maps_backoff ? p->maps_backoff : 1000000ull;

	if (p->exited)
		return false;
	return rel_ns(s) - p->maps_loaded_at >= wait ||
	       (p->maps_loaded_at < t && wait <= 1000000ull);
}

/*
 * Whether @pc is in anonymous executable memory (JIT code) and the maps of
 * @p are older than SAMPLER_JIT_MAPS_NS.  Maps read once, early, missed a
 * jitdump mapped just after: with samples only in the JIT's code they
 * were never read again, and none of its symbols were collected.
 */
static bool in_jit_code(const struct sampler *s, const struct xp_process *p, uint64_t pc)
{
	const struct xp_map *m = addrspace_find(&p->as, pc);

	return m && !m->path[0] && rel_ns(s) - p->maps_loaded_at >= SAMPLER_JIT_MAPS_NS;
}

static bool maps_stale(struct sampler *s, struct xp_process *p, uint64_t pc)
{
	uint64_t now = rel_ns(s);

	if (now - p->stale_checked_at < 20000000ull)
		return false;
	p->stale_checked_at = now;
	return addrspace_is_stale(&p->as, pc);
}

static void maps_backoff(struct xp_process *p, bool helped)
{
	if (helped || !p->maps_backoff)
		p->maps_backoff = 1000000ull;
	else if (p->maps_backoff < 1000000000ull)
		p->maps_backoff *= 2;
}

static void unwind_one(struct sampler *s, struct raw_sample *r)
{
	struct xp_process *p = r->proc;
	struct xp_thread *th;
	struct memread m;
	uint64_t pc, id;
	unsigned int nr, top = 0;
	uint64_t unmapped;
	bool is_new;

	pc = xp_regs_get(&r->regs, s->arch->dwarf_pc);
	/*
	 * A pc outside every known executable mapping: something was mapped
	 * since.  Inside one that now maps another file: a library was
	 * dlclose'd and another dlopen'ed at its address.  That check costs a
	 * readlink, so it is made at most every 20 ms per process.  Inside
	 * anonymous executable memory: JIT code, which the JIT describes in
	 * files it maps as it goes (a jitdump, found through the maps when the
	 * process ends): maps older than 100 ms are read again.
	 */
	if (maps_due(s, p, r->t) && (!addrspace_is_exec(&p->as, pc) || maps_stale(s, p, pc) ||
				     in_jit_code(s, p, pc))) {
		load_maps(s, p, r->t);
		maps_backoff(p, addrspace_is_exec(&p->as, pc));
	}
	memread_init(&m, p->exited ? 0 : p->pid, xp_regs_get(&r->regs, s->arch->dwarf_sp), r->copy,
		     r->len);
	if (r->sys_nr >= 0) {
		/* The blocking system call is the leaf, as in perf's off-CPU views. */
		s->pcs[0] = (uint64_t)r->sys_nr;
		s->flags[0] = XP_FRAME_SYSCALL;
		top = 1;
	}
	unmapped = unwinder_stats(s->unw)->unmapped;
	nr = top + unwind_stack(s->unw, s->arch, &r->regs, &m, &p->as, s->pcs + top, s->flags + top,
				s->o->max_depth + 1);
	/*
	 * A return address in no mapping: libraries mapped since the maps were
	 * read (ld.so maps them after the exec event).  Read them again and
	 * walk the same copy once more.
	 */
	if (unwinder_stats(s->unw)->unmapped != unmapped && maps_due(s, p, r->t)) {
		load_maps(s, p, r->t);
		memread_init(&m, p->pid, xp_regs_get(&r->regs, s->arch->dwarf_sp), r->copy, r->len);
		unmapped = unwinder_stats(s->unw)->unmapped;
		nr = top + unwind_stack(s->unw, s->arch, &r->regs, &m, &p->as, s->pcs + top,
					s->flags + top, s->o->max_depth + 1);
		maps_backoff(p, unwinder_stats(s->unw)->unmapped == unmapped);
	}
	id = stacktab_intern(&s->stacks, s->pcs, s->flags, nr, &is_new);
	th = tracer_find(s->tr, r->tid);
	if (th && th->proc == p) {
		size_next_copy(s, th, &m, xp_regs_get(&r->regs, s->arch->dwarf_sp));
		/* Most threads name themselves as they start: look at their first samples. */
		if (th->name_checks < 3) {
			th->name_checks++;
			refresh_thread_name(s, th, r->t);
		}
	}
	if (th && th->proc == p) {
		th->last_stack_id = r->sys_nr >= 0 ? id : 0;
		th->last_sys_nr = r->sys_nr;
		th->last_sys_sp = (uint64_t)r->sys_sp;
		th->last_sys_pc = (uint64_t)r->sys_pc;
	}
	if (is_new) {
		s->st->stacks++;
		if (check_write(s, df_write_stack(s->w, id, s->pcs, s->flags, nr)))
			return;
	}
	if (check_write(s, df_write_sample(s->w, r->t, p->pid, r->tid, id, r->weight)))
		return;
	s->st->samples++;
	s->st->weight_total += r->weight;
}

static void drain_queue(struct sampler *s)
{
	unsigned long i;

	for (i = 0; i < s->nq; i++)
		if (!s->write_failed)
			unwind_one(s, &s->q[i]);
	s->nq = 0;
}

/*
 * Copy the JIT symbols of (the latest process with) pid @pid that cover
 * sampled pcs into the data file (jitmap.h); queued samples are unwound
 * first so that their pcs count.
 */
static void collect_jit(struct sampler *s, pid_t pid)
{
	struct xp_process *p = NULL;
	unsigned long i;

	drain_queue(s);
	for (i = 0; i < s->tr->nprocs; i++)
		if (s->tr->procs[i]->pid == pid)
			p = s->tr->procs[i];
	if (p && p->execed && !s->write_failed)
		check_write(s, jitmap_collect(s->w, pid, &p->as, &s->stacks) < 0 ? -1 : 0);
}

/*
 * /proc/PID/task/TID/schedstat: "on-CPU ns, run-queue wait ns, times
 * scheduled in".  -1 if unreadable (the thread is gone).
 */
static int read_schedstat(struct xp_thread *th, uint64_t *cpu_ns, uint64_t *count)
{
	char buf[96], *end;
	ssize_t n;

	if (th->schedstat_fd == TRACER_FD_LAZY) {
		snprintf(buf, sizeof(buf), "/proc/%d/task/%d/schedstat", (int)th->proc->pid,
			 (int)th->tid);
		th->schedstat_fd = open(buf, O_RDONLY | O_CLOEXEC);
	}
	if (th->schedstat_fd < 0)
		return -1;
	n = pread(th->schedstat_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	*cpu_ns = strtoull(buf, &end, 10);
	strtoull(end, &end, 10);
	*count = strtoull(end, NULL, 10);
	return 0;
}

/* Weight of a sample of @th taken now, and whether it is due at all. */
static bool thread_due(struct sampler *s, struct xp_thread *th, uint64_t now, uint64_t *weight)
{
	uint64_t cpu_ns, count, progress, expect, moved;

	if (s->o->mode == SAMPLER_WALL) {
		if (!th->cpu_init) {
			th->cpu_init = true;
			th->wall_sampled = now > s->period ? now - s->period : 0;
		}
		*weight = now - th->wall_sampled;
		return true;
	}
	th->on_cpu = false;
	if (read_schedstat(th, &cpu_ns, &count)) {
		*weight = s->period;
		return th->schedstat_fd < 0;
	}
	if (!th->cpu_init) {
		/*
		 * Launched threads start from zero; attached ones from now.  A new
		 * thread starts with half a period to its credit, so that any
		 * progress makes it due: threads that live for less CPU time than
		 * a period (a pool that runs a task per thread) are sampled once
		 * each, not never (37,000 threads of ~40 us each gave 7 samples).
		 */
		th->cpu_init = true;
		th->cpu_carry = (int64_t)s->period / 2;
		if (s->o->kind == SAMPLER_ATTACH) {
			th->cpu_ns_sampled = cpu_ns;
			th->sched_count = count;
			return false;
		}
	}
	th->sched_count = count;
	/*
	 * Due when the CPU time since its last sample, with what earlier
	 * samples over- or under-covered (the carry), makes half a period:
	 * about one sample per period of CPU time, as perf's cpu-clock gives,
	 * although ticks come per period of wall time (a thread stopped for
	 * part of each period was sampled 2% too often per CPU-second).
	 *
	 * The counter (sum_exec_runtime) moves only when the thread is switched
	 * out and at the kernel's tick (4 ms here), so it lags a thread that
	 * runs: one on a CPU since our last resume shows no progress at all
	 * (at 999 Hz such ticks were skipped and 9% of the samples lost).  A
	 * counter that has not moved since that resume, with the thread
	 * scheduled in exactly once since, means it has run since: its
	 * progress is the time since the resume.  Scheduled in never since:
	 * it waits for a CPU, and is not due.  Once the counter has moved,
	 * it is the progress; it may lag (by a kernel tick at most: the tick
	 * brings a running thread's counter up to date), the carry makes up
	 * for it at the next sample.  (Counting any progress after two periods
	 * without a sample, as a guard against stale counters, sampled 64
	 * threads on 2 CPUs four times per period of their CPU time.)
	 */
	progress = cpu_ns > th->cpu_ns_sampled ? cpu_ns - th->cpu_ns_sampled : 0;
	expect = th->resume_count + !th->resume_ran;
	moved = cpu_ns > th->resume_cpu_ns ? cpu_ns - th->resume_cpu_ns : 0;
	th->on_cpu = th->resume_known && count == expect && !moved;
	if (th->resume_known &&
	    (count == expect || (count == expect + 1 && moved < s->period / 8))) {
		uint64_t ran = th->resume_cpu_ns > th->cpu_ns_sampled
				   ? th->resume_cpu_ns - th->cpu_ns_sampled
				   : 0;

		ran += now - th->resume_time;
		if (ran > progress)
			progress = ran;
	}
	if (!progress)
		return false;
	if ((int64_t)progress + th->cpu_carry < (int64_t)s->period / 2)
		return false;
	*weight = progress;
	return true;
}

static void note_resume(struct xp_thread *th, uint64_t cpu_ns, uint64_t count, uint64_t t)
{
	th->resume_known = true;
	th->resume_ran = count > th->sched_count;
	th->resume_count = count;
	th->resume_cpu_ns = cpu_ns;
	th->resume_time = t;
}

/*
 * CPU mode, just after resuming a new thread from its first stop: where its
 * progress counts from, as after a sample.  It runs from that stop on, and
 * shows no progress until the kernel's tick or a switch (threads living
 * less than a tick were never sampled).  Its counts are not read: it has
 * been scheduled in once, to reach the stop, and used next to no CPU time
 * (a target starting 15,000 threads a second left the controller too
 * little time for its ticks).  Other stops that take no sample (a clone, a
 * signal) only make the anchor stale.
 */
static void anchor_new_thread(struct xp_thread *th, uint64_t t)
{
	th->sched_count = 1;
	note_resume(th, 0, 1, t);
}

/*
 * CPU mode, just after resuming @th from the stop of sample @r: the CPU
 * time it used since its last sample is now exact (the stop switched it
 * out, which brings the counter up to date), so it replaces the estimate
 * made at the tick.  The counts read here also tell the next ticks whether
 * it has stayed on a CPU since.  A thread that ran less than an eighth of
 * a period since its last sample (it waited for a CPU nearly all along)
 * gives no sample, and that time counts toward its next: a sample stands
 * for about a period of CPU time, and one for a few microseconds would
 * count as much in a report that counts samples (100 forked children,
 * stopped as soon as they first ran, put a third of the samples in
 * arch_fork).
 */
static void settle_weight(struct sampler *s, struct xp_thread *th, struct raw_sample *r,
			  uint64_t t)
{
	uint64_t cpu_ns, count;

	th->resume_known = false;
	if (read_schedstat(th, &cpu_ns, &count))
		return;
	if ((cpu_ns <= th->cpu_ns_sampled || cpu_ns - th->cpu_ns_sampled < s->period / 8) &&
	    r == &s->q[s->nq - 1]) {
		s->nq--;
		s->st->dropped_idle++;
		note_resume(th, cpu_ns, count, t);
		return;
	}
	r->weight = cpu_ns - th->cpu_ns_sampled;
	th->cpu_ns_sampled = cpu_ns;
	th->blocked_since = false;
	/* Carry at most four periods either way: a long run since the last sample is few samples. */
	th->cpu_carry += (int64_t)r->weight - (int64_t)s->period;
	if (th->cpu_carry > 4 * (int64_t)s->period)
		th->cpu_carry = 4 * (int64_t)s->period;
	if (th->cpu_carry < -4 * (int64_t)s->period)
		th->cpu_carry = -4 * (int64_t)s->period;
	note_resume(th, cpu_ns, count, t);
}

#define SAMPLER_GONE (-2)

/*
 * Is @th blocked in a system call?  /proc/PID/task/TID/syscall gives "NR
 * args... SP PC" for a blocked thread and "running" otherwise (PTRACE-NOTES
 * trap 5); it cannot be read once we have stopped the thread.  The call's
 * number, -1 if not blocked, SAMPLER_GONE if the thread has exited.
 */
static int64_t read_blocked(struct xp_thread *th, uint64_t *sp, uint64_t *pc)
{
	char buf[256], *p, *end;
	unsigned long long v[9];
	long long nr;
	ssize_t n;
	int i;

	if (th->syscall_fd < 0) {
		snprintf(buf, sizeof(buf), "/proc/%d/task/%d/syscall", (int)th->proc->pid,
			 (int)th->tid);
		th->syscall_fd = open(buf, O_RDONLY | O_CLOEXEC);
		if (th->syscall_fd < 0)
			return -1;
	}
	n = pread(th->syscall_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	nr = strtoll(buf, &end, 10);
	if (end == buf)
		return -1;
	if (nr < 0) {
		/* "-1 SP PC" outside a call; "-1 0x0 0x0": it has exited, not reaped yet. */
		v[0] = strtoull(end, &p, 16);
		v[1] = strtoull(p, &end, 16);
		return end != p && !v[0] && !v[1] ? SAMPLER_GONE : -1;
	}
	for (i = 0, p = end; i < 8; i++, p = end) {
		v[i] = strtoull(p, &end, 16);
		if (end == p)
			return -1;
	}
	*sp = v[6];
	*pc = v[7];
	return nr;
}

/*
 * A thread still blocked in the same system call at the same SP and PC as at
 * its last sample has the same stack: count it without stopping it.
 */
static bool sample_blocked(struct sampler *s, struct xp_thread *th, uint64_t now, uint64_t w)
{
	uint64_t sp = 0, pc = 0;
	int64_t nr = read_blocked(th, &sp, &pc);

	if (nr == SAMPLER_GONE)
		return true; /* its exit waits to be handled: nothing to sample */
	/* Our own earlier stop turned the sleep into restart_syscall: same block. */
	if (nr == s->arch->nr_restart_syscall && th->last_sys_nr >= 0 && sp == th->last_sys_sp &&
	    pc == th->last_sys_pc)
		nr = th->last_sys_nr;
	th->blocked_nr = nr;
	if (nr < 0 || !th->last_stack_id || nr != th->last_sys_nr || sp != th->last_sys_sp ||
	    pc != th->last_sys_pc) {
		th->last_sys_sp = sp;
		th->last_sys_pc = pc;
		return false;
	}
	th->wall_sampled = now;
	if (check_write(s,
			df_write_sample(s->w, now, th->proc->pid, th->tid, th->last_stack_id, w)))
		return true;
	s->st->samples++;
	s->st->reused++;
	s->st->weight_total += w;
	return true;
}

static void tick(struct sampler *s)
{
	uint64_t now = rel_ns(s), w, sp, pc;
	int64_t nr;
	struct xp_thread *th;
	unsigned long i = 0;

	s->st->ticks++;
	while ((th = tracer_thread_at(s->tr, &i))) {
		if (th->state != THREAD_RUNNING || th->sample_wanted || !th->proc->execed)
			continue;
		if (!thread_due(s, th, now, &w))
			continue;
		if (s->o->mode == SAMPLER_WALL && sample_blocked(s, th, now, w))
			continue;
		/* Blocking switches a thread out: one never switched out is not blocked. */
		nr = s->o->mode == SAMPLER_CPU && !th->on_cpu ? read_blocked(th, &sp, &pc) : -1;
		/*
		 * It has exited: its exit is among the stops not handled yet (a
		 * target that ends thousands of threads a second): an interrupt
		 * would only fail.
		 */
		if (nr == SAMPLER_GONE)
			continue;
		if (nr >= 0) {
			/*
			 * It ran, then blocked: the CPU time was spent elsewhere, not
			 * in the system call it sits in now.  Keep the time for the
			 * next sample that finds it running.
			 */
			th->blocked_since = true;
			continue;
		}
		if (tracer_interrupt(s->tr, th))
			continue;
		th->sample_wanted = true;
		th->irq_time = rel_ns(s);
		th->wall_sampled = now;
		th->pending_weight = w;
		s->pending++;
		s->st->interrupts++;
	}
}

static void hist_add(uint64_t *hist, uint64_t *max, uint64_t ns)
{
	uint64_t b = ns < 1000000 ? ns / 1000 : SAMPLER_STOP_FINE + ns / 100000 - 10;

	if (b >= SAMPLER_STOP_HIST)
		b = SAMPLER_STOP_HIST - 1;
	hist[b]++;
	if (ns > *max)
		*max = ns;
}

/*
 * Samples queued before an exec of @p were taken in the old image: unwind
 * them while its mappings are still known, that is before the tracer resets
 * them.  The process already runs the new image, so nothing may be read
 * from it (maps, memory) for them: it counts as exited meanwhile.
 */
static void drain_old_image(struct sampler *s, struct xp_process *p)
{
	bool exited = p->exited;

	p->exited = true;
	drain_queue(s);
	p->exited = exited;
}

/* Returns whether this was the stop of one of our interrupts. */
static bool handle_status(struct sampler *s, pid_t tid, int status)
{
	struct xp_thread *th = tracer_find(s->tr, tid);
	struct tracer_event ev;
	struct raw_sample *r = NULL;
	bool wanted = th && th->sample_wanted;
	uint64_t t = rel_ns(s), resumed;

	if (wanted) {
		th->sample_wanted = false;
		s->pending--;
	}
	if (th && tracer_status_is_exec(status))
		drain_old_image(s, th->proc);
	tracer_handle_status(s->tr, tid, status, &ev);
	switch (ev.kind) {
	case TEV_EXIT:
		if (wanted)
			s->st->failed++;
		check_write(s, df_write_exit(s->w, t, ev.pid, tid, status));
		if (tid == ev.pid)
			collect_jit(s, ev.pid);
		if (tid == s->tr->root && s->o->kind == SAMPLER_RECORD) {
			s->stopping = true;
			s->st->end = SAMPLER_END_ROOT_EXITED;
		}
		return wanted;
	case TEV_STOP:
		break;
	default:
		return wanted;
	}
	th = ev.th;
	/*
	 * An interrupt that this stop consumed (PTRACE-NOTES trap 1) samples
	 * the new image: date it at the exec, not before, or report would name
	 * it and read it with the old image.
	 */
	if (ev.exec)
		th->irq_time = t;
	if (wanted && th->proc->execed)
		r = take_sample(s, th, th->pending_weight);
	if (tracer_finish_stop(s->tr, &ev) && ev.th)
		xp_debug(1, "cannot resume tid %d: %s", (int)ev.th->tid, strerror(errno));
	resumed = rel_ns(s);
	if (wanted) {
		hist_add(s->st->stop_hist, &s->st->stop_ns_max, resumed - th->irq_time);
		hist_add(s->st->held_hist, &s->st->held_ns_max, resumed - t);
	}
	if (r && s->o->mode == SAMPLER_CPU)
		settle_weight(s, th, r, resumed);
	else if (s->o->mode == SAMPLER_CPU && ev.th && ev.th->state == THREAD_RUNNING && ev.fresh)
		anchor_new_thread(ev.th, resumed);
	else if (ev.th)
		ev.th->resume_known = false; /* switched out and in again: the anchor is stale */
	/*
	 * Describing a new image, process or thread reads /proc (maps, exe,
	 * comm): done after the resume, so the thread does not wait for it.
	 * The queued sample is unwound later, with these maps.
	 */
	if (ev.exec) {
		report_process(s, th->proc, DF_PROC_EXEC, t);
		report_thread(s, th, t, NULL);
	} else if (!th->proc->reported && th->proc->execed) {
		report_process(s, th->proc, 0, t);
	}
	if (!th->reported && th->proc->execed)
		report_thread(s, th, t, NULL);
	/*
	 * A new thread of the same process is named as its creator until it
	 * renames itself (its first samples read the name again): no /proc
	 * read for each of thousands of short-lived threads.
	 */
	if (ev.child && ev.child->proc == th->proc && !ev.child->reported && th->reported)
		report_thread(s, ev.child, t, th->comm);
	if (ev.child && ev.child->proc != th->proc && !ev.child->proc->reported) {
		ev.child->proc->ppid = th->proc->pid;
		report_process(s, ev.child->proc, 0, t);
	}
	return wanted;
}

static void status_line(struct sampler *s, bool final)
{
	uint64_t now = rel_ns(s);

	if (!s->o->status_line || xp_quiet)
		return;
	if (!final && now - s->last_status < 250000000ull)
		return;
	s->last_status = now;
	fprintf(stderr,
		"\rxprof: %.1fs  %llu samples  %lu thread%s  %lu process%s  %llu failed\033[K",
		(double)now / 1e9, (unsigned long long)s->st->samples, tracer_live_threads(s->tr),
		tracer_live_threads(s->tr) == 1 ? "" : "s", (unsigned long)s->tr->nprocs,
		s->tr->nprocs == 1 ? "" : "es", (unsigned long long)s->st->failed);
	if (final)
		fputs("\r\033[K", stderr);
}

static void handle_signal(struct sampler *s, const struct signalfd_siginfo *si)
{
	int sig = (int)si->ssi_signo;

	if (s->o->kind == SAMPLER_RECORD && sig == SIGINT && s->nsigint++ == 0) {
		/*
		 * Ctrl-C on a terminal reaches the command too (same process
		 * group); one sent to xprof alone is passed on.  Either way the
		 * command decides, and its exit ends the recording.
		 */
		if (si->ssi_code != SI_KERNEL && s->tr->root)
			kill(s->tr->root, SIGINT);
		return;
	}
	if (s->o->kind == SAMPLER_RECORD && sig != SIGINT && s->tr->root && !s->tr->root_done)
		kill(s->tr->root, sig);
	s->stopping = true;
	s->st->end = SAMPLER_END_SIGNAL;
	s->st->end_signal = sig;
}

static int setup_fds(struct sampler *s)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	s->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (s->sigfd < 0)
		return xp_error("cannot create a signalfd: %s", strerror(errno));
	s->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (s->timerfd < 0)
		return xp_error("cannot create a timerfd: %s", strerror(errno));
	return 0;
}

/*
 * A stopped thread leaves its CPU idle, and waking an idle CPU that halted
 * is most of what a stop costs the thread beyond the stop itself: the
 * resume has to bring the CPU out of its idle state (an interrupt to a
 * halted virtual CPU, tens of microseconds in a guest).  A PM QoS request
 * for zero exit latency keeps idle CPUs in the polling state, from which a
 * wake-up needs no interrupt at all (cyclictest asks for the same).  The
 * request lives as long as the file stays open, so it ends with xprof even
 * if xprof is killed.  Needs root; without it, or without the device, the
 * CPUs idle as usual.  Returns the descriptor to close, or -1.
 */
static int hold_poll_idle(void)
{
	int32_t zero = 0;
	int fd = open("/dev/cpu_dma_latency", O_WRONLY | O_CLOEXEC);

	if (fd < 0) {
		xp_debug(1, "idle CPUs not kept polling: /dev/cpu_dma_latency: %s",
			 strerror(errno));
		return -1;
	}
	if (write(fd, &zero, sizeof(zero)) != (ssize_t)sizeof(zero)) {
		xp_debug(1, "idle CPUs not kept polling: %s", strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Take the CPU when the timer fires, as perf's sampling interrupt does.  At
 * normal priority the controller is one task among the target's: with more
 * busy threads than CPUs it gets a small share, ticks come late and each
 * stop waits for it (4 threads on 2 CPUs at 3999 Hz: 278 late ticks in
 * 0.27 s; at real-time priority none).  Round-robin at the lowest real-time
 * priority by default; the stops and their bookkeeping are short, the spin
 * is bounded and the kernel's real-time throttling caps the rest.  The
 * launched command was started before and children of ours reset to
 * normal (SCHED_RESET_ON_FORK).  Needs root or CAP_SYS_NICE; without it,
 * normal priority.  Returns the priority taken, 0 if none.
 */
static unsigned int raise_priority(unsigned int prio)
{
	struct sched_param sp = {.sched_priority = (int)prio};

	if (sched_setscheduler(0, SCHED_RR | SCHED_RESET_ON_FORK, &sp)) {
		xp_debug(1, "staying at normal priority: %s", strerror(errno));
		return 0;
	}
	return prio;
}

static void write_stats(struct sampler *s)
{
	const struct sampler_stats *st = s->st;
	const struct unwind_stats *us = unwinder_stats(s->unw);
	struct {
		const char *name;
		uint64_t v;
	} stats[] = {
	    {"freq_hz", s->o->freq_hz},
	    {"mode_wall", s->o->mode == SAMPLER_WALL},
	    {"duration_ns", st->duration_ns},
	    {"ticks", st->ticks},
	    {"late_ticks", st->late_ticks},
	    {"interrupts", st->interrupts},
	    {"samples", st->samples},
	    {"failed", st->failed},
	    {"reused_blocked", st->reused},
	    {"spin_timeouts", st->spin_timeouts},
	    {"dropped_blocked", st->dropped_blocked},
	    {"dropped_idle", st->dropped_idle},
	    {"vanished", s->tr->vanished},
	    {"threads", s->tr->threads_seen},
	    {"processes", s->tr->procs_seen},
	    {"stop_p50_ns", sampler_stop_percentile(st, 50)},
	    {"stop_p99_ns", sampler_stop_percentile(st, 99)},
	    {"stop_max_ns", st->stop_ns_max},
	    {"held_p50_ns", sampler_hist_percentile(st->held_hist, st->held_ns_max, 50)},
	    {"held_p99_ns", sampler_hist_percentile(st->held_hist, st->held_ns_max, 99)},
	    {"stack_bytes_copied", st->stack_bytes_copied},
	    {"poll_idle", st->poll_idle},
	    {"rt_priority", st->rt_priority},
	    {"frames_fp", us->frames_fp},
	    {"frames_cfi", us->frames_cfi},
	    {"unwind_truncated", us->truncated},
	};
	size_t i;

	for (i = 0; i < sizeof(stats) / sizeof(stats[0]); i++)
		if (check_write(s, df_write_stat(s->w, stats[i].name, stats[i].v)))
			return;
}

/*
 * Handle the stops and exits that are waiting, of which at most @max that
 * are not the stops our interrupts asked for: a target that starts and
 * ends threads without pause (40,000 in 2 s) would otherwise keep the loop
 * here and away from the timer (11 ticks in a second at 9999 Hz).  The
 * rest is handled after the tick.  The stops of our interrupts are always
 * all handled first: a tick that interrupted threads again before the
 * last round was resumed would keep them stopped (256 threads sampled in
 * wall mode at 4999 Hz made no progress).
 */
static void drain_waits(struct sampler *s, bool *none_left, unsigned int max)
{
	unsigned int n = 0;
	pid_t tid = 0;
	int status;

	*none_left = false;
	while (n < max && (tid = waitpid(-1, &status, __WALL | WNOHANG)) > 0)
		if (!handle_status(s, tid, status))
			n++;
	if (tid < 0 && errno == ECHILD)
		*none_left = true;
}

/*
 * Collect the stops of this tick's interrupts by polling waitpid for a
 * bounded time instead of sleeping: a sleeping tracer's wake-up is most of
 * the stop (PTRACE-NOTES: ~40 us stop sleeping, ~18 us spinning).  Only
 * when a CPU is free for it, or the spin steals the target's time (trap 7).
 */
static void spin_for_stops(struct sampler *s)
{
	uint64_t deadline;
	int status;
	pid_t tid;

	if (!s->pending || s->pending >= s->ncpus || !s->o->spin_ns)
		return;
	deadline = mono_ns() + s->o->spin_ns;
	while (s->pending && !s->stopping) {
		tid = waitpid(-1, &status, __WALL | WNOHANG);
		if (tid > 0) {
			handle_status(s, tid, status);
			continue;
		}
		if (tid < 0 && errno != EINTR)
			return;
		if (mono_ns() >= deadline) {
			s->st->spin_timeouts++;
			return;
		}
	}
}

int sampler_run(struct tracer *t, struct df_writer *w, const struct sampler_opts *o,
		struct sampler_stats *st)
{
	struct sampler s = {.tr = t, .w = w, .o = o, .st = st, .sigfd = -1, .timerfd = -1};
	int qos_fd = -1;
	unsigned long i;
	bool none_left;
	int ret = 0;

	memset(st, 0, sizeof(*st));
	s.arch = xp_arch_host();
	s.ncpus = (unsigned long)sysconf(_SC_NPROCESSORS_ONLN);
	s.start_mono = mono_ns();
	s.period = 1000000000ull / (o->freq_hz ? o->freq_hz : 1);
	s.rnd = s.start_mono ^ ((uint64_t)getpid() << 32) ^ 0x9e3779b97f4a7c15ull;
	s.unw = unwinder_new(o->unwind, o->max_depth);
	s.pcs = xp_calloc(o->max_depth + 2, sizeof(*s.pcs));
	s.flags = xp_calloc(o->max_depth + 2, 1);
	stacktab_init(&s.stacks);
	if (setup_fds(&s)) {
		ret = -1;
		goto out;
	}
	/* Processes present from the start (attach): describe them now. */
	for (i = 0; i < t->nprocs; i++)
		if (t->procs[i]->execed && !t->procs[i]->reported)
			report_process(&s, t->procs[i], t->root ? 0 : DF_PROC_ATTACHED, 0);
	for (i = 0; i < t->nthreads; i++)
		if (t->threads[i]->proc->execed && !t->threads[i]->reported)
			report_thread(&s, t->threads[i], 0, NULL);
	if (o->poll_idle)
		qos_fd = hold_poll_idle();
	st->poll_idle = qos_fd >= 0;
	if (o->rt_priority)
		st->rt_priority = raise_priority(o->rt_priority);
	s.next_k = 1;
	arm_timer(&s);
	while (!s.stopping) {
		struct pollfd pfd[2] = {{s.sigfd, POLLIN, 0}, {s.timerfd, POLLIN, 0}};
		uint64_t now;

		drain_waits(&s, &none_left, SAMPLER_DRAIN_MAX);
		if (s.stopping)
			break;
		if (none_left || !tracer_live_threads(t)) {
			st->end = SAMPLER_END_ALL_EXITED;
			break;
		}
		if (!s.pending)
			drain_queue(&s);
		now = rel_ns(&s);
		if (o->duration_ns && now >= o->duration_ns) {
			st->end = SAMPLER_END_DURATION;
			break;
		}
		if (now - s.last_flush >= 1000000000ull) {
			refresh_thread_names(&s);
			check_write(&s, df_writer_flush(w));
			s.last_flush = now;
		}
		status_line(&s, false);
		if (poll(pfd, 2, s.pending ? 2 : 250) < 0 && errno != EINTR) {
			ret = xp_error("poll failed: %s", strerror(errno));
			st->end = SAMPLER_END_ERROR;
			break;
		}
		if (pfd[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			while (read(s.sigfd, &si, sizeof(si)) == sizeof(si))
				if (si.ssi_signo != SIGCHLD)
					handle_signal(&s, &si);
		}
		if (pfd[1].revents & POLLIN) {
			uint64_t exp, k;

			if (read(s.timerfd, &exp, sizeof(exp)) != sizeof(exp))
				continue;
			now = mono_ns();
			k = sampler_next_index(s.start_mono, s.period, now);
			if (k > s.next_k + 1)
				st->late_ticks += k - s.next_k - 1;
			s.next_k = k > s.next_k ? k : s.next_k + 1;
			tick(&s);
			arm_timer(&s);
			spin_for_stops(&s);
		}
	}
	st->duration_ns = rel_ns(&s);
	if (qos_fd >= 0)
		close(qos_fd);
	if (st->rt_priority) {
		struct sched_param sp = {.sched_priority = 0};

		/* Writing the data and reading JIT files is no business for a real-time task. */
		sched_setscheduler(0, SCHED_OTHER, &sp);
	}
	drain_waits(&s, &none_left, UINT_MAX);
	drain_queue(&s);
	refresh_thread_names(&s);
	status_line(&s, true);
	for (i = 0; i < t->nprocs; i++)
		if (!t->procs[i]->exited)
			collect_jit(&s, t->procs[i]->pid);
	if (tracer_detach_all(t))
		xp_warn("could not detach cleanly from every thread");
	write_stats(&s);
	if (!s.write_failed)
		check_write(&s, df_writer_flush(w));
	if (s.write_failed)
		ret = -1;
out:
	for (i = 0; i < s.qalloc; i++)
		free(s.q[i].copy);
	free(s.q);
	free(s.pcs);
	free(s.flags);
	stacktab_release(&s.stacks);
	unwinder_free(s.unw);
	if (s.sigfd >= 0)
		close(s.sigfd);
	if (s.timerfd >= 0)
		close(s.timerfd);
	return ret;
}
