/* SPDX-License-Identifier: MIT */
/*
 * What the sampler keeps and writes (see sampler_int.h): its state per
 * thread and process, the process, thread and mapping records, and the
 * queue of raw samples, unwound after the threads run again (reading the
 * maps again when a sample needs it), interned and written.
 */
#include "sampler_int.h"
#include "clock.h"
#include "datafile.h"
#include "err.h"
#include "jitmap.h"
#include "memread.h"
#include "procfs.h"
#include "schedule.h"
#include "vdso.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

uint64_t smp_now(const struct sampler *s)
{
	return xp_now_ns() - s->start_mono;
}

struct smp_thread *smp_thread_of(struct xp_thread *th)
{
	struct smp_thread *x = th->priv;

	if (!x) {
		x = xp_calloc(1, sizeof(*x));
		x->schedstat_fd = SMP_FD_LAZY;
		x->syscall_fd = -1;
		x->stat_fd = -1;
		x->status_fd = SMP_FD_LAZY;
		x->blocked_nr = x->last_sys_nr = x->restart_nr = -1;
		th->priv = x;
	}
	return x;
}

struct smp_proc *smp_proc_of(const struct sampler *s, struct xp_process *p)
{
	struct smp_proc *x = p->priv;

	if (!x) {
		x = xp_calloc(1, sizeof(*x));
		stackcopy_init(&x->mem, p->pid);
		addrspace_init(&x->as, p->pid, s->mc);
		p->priv = x;
	}
	return x;
}

static void smp_close_fds(struct smp_thread *x)
{
	if (x->schedstat_fd >= 0)
		close(x->schedstat_fd);
	if (x->syscall_fd >= 0)
		close(x->syscall_fd);
	if (x->stat_fd >= 0)
		close(x->stat_fd);
	if (x->status_fd >= 0)
		close(x->status_fd);
	x->stat_fd = -1;
	x->status_fd = SMP_FD_LAZY;
	x->schedstat_fd = SMP_FD_LAZY;
	x->syscall_fd = -1;
}

void smp_thread_free(void *ctx, struct xp_thread *th)
{
	struct smp_thread *x = th->priv;

	(void)ctx;
	if (!x)
		return;
	smp_close_fds(x);
	free(x);
	th->priv = NULL;
}

void smp_proc_free(void *ctx, struct xp_process *p)
{
	struct smp_proc *x = p->priv;

	(void)ctx;
	if (!x)
		return;
	addrspace_release(&x->as);
	stackcopy_close(&x->mem);
	free(x);
	p->priv = NULL;
}

/*
 * The process exec'd @th: what was known of its old image is stale.  Its
 * other threads are gone already (the tracer freed them).
 */
void smp_exec(struct sampler *s, struct xp_thread *th)
{
	struct smp_proc *p = smp_proc_of(s, th->proc);
	struct smp_thread *x = smp_thread_of(th);

	stackcopy_close(&p->mem); /* it holds the old image's memory */
	p->copy_hint = 0;
	x->copy.bytes = 0;
	addrspace_release(&p->as);
	addrspace_init(&p->as, th->proc->pid, s->mc);
	smp_close_fds(x);
	x->last_stack_id = 0;
}

int smp_check_write(struct sampler *s, int ret)
{
	if (ret && !s->write_failed) {
		s->write_failed = true;
		s->stopping = true;
		s->st->end = SAMPLER_END_WRITE_ERROR;
	}
	return ret;
}

static void write_mappings(struct sampler *s, struct xp_process *p, uint64_t t)
{
	struct addrspace *as = &smp_proc_of(s, p)->as;
	size_t i;

	for (i = 0; i < as->nr; i++) {
		struct xp_map *m = &as->maps[i];
		const uint8_t *id = NULL;
		size_t idlen = 0;

		if (m->reported || !(m->prot & XP_PROT_EXEC))
			continue;
		if (m->mod)
			idlen = module_build_id(m->mod, &id);
		if (!strcmp(m->path, "[vdso]") &&
		    smp_check_write(s, vdso_write(s->w, p->pid, m->start, m->end)))
			return;
		if (smp_check_write(s, df_write_mapping(s->w, t, p->pid, m->start, m->end,
							m->offset, m->prot, m->path, id, idlen)))
			return;
		m->reported = true;
	}
}

static void load_maps(struct sampler *s, struct xp_process *p, uint64_t t)
{
	struct smp_proc *sp = smp_proc_of(s, p);
	int e = addrspace_load(&sp->as);

	sp->maps_loaded_at = smp_now(s);
	if (e) {
		xp_debug(1, "cannot read the mappings of pid %d: %s", (int)p->pid, strerror(-e));
		return;
	}
	write_mappings(s, p, t);
}

void smp_report_process(struct sampler *s, struct xp_process *p, uint32_t flags, uint64_t t)
{
	struct addrspace *as = &smp_proc_of(s, p)->as;
	char exe[PATH_MAX];

	procfs_exe(p->pid, exe, sizeof(exe));
	addrspace_find_fs(as); /* the pid the process sees: as->nspid */
	smp_check_write(
	    s, df_write_process_ns(s->w, t, p->pid, p->ppid, flags, p->comm, exe, as->nspid));
	smp_proc_of(s, p)->reported = true;
	load_maps(s, p, t);
}

/* @comm: its name if known (a new thread has its creator's), else NULL: read it. */
void smp_report_thread(struct sampler *s, struct xp_thread *th, uint64_t t, const char *comm)
{
	struct smp_thread *x = smp_thread_of(th);

	if (comm)
		snprintf(x->comm, sizeof(x->comm), "%s", comm);
	else
		procfs_comm(th->proc->pid, th->tid, x->comm, sizeof(x->comm));
	smp_check_write(s, df_write_thread(s->w, t, th->proc->pid, th->tid, x->comm));
	x->reported = true;
}

/*
 * Threads are described at their first stop, usually before they name
 * themselves (pthread_setname_np): once a second, and at the end, write a
 * new THREAD record for every thread whose name changed (the report takes
 * the name in force at each sample).
 */
static void refresh_thread_name(struct sampler *s, struct xp_thread *th, uint64_t t)
{
	struct smp_thread *x = smp_thread_of(th);
	char comm[sizeof(x->comm)];

	if (!x->reported || th->state == THREAD_NEW)
		return;
	procfs_comm(th->proc->pid, th->tid, comm, sizeof(comm));
	if (!comm[0] || !strcmp(comm, x->comm))
		return;
	memcpy(x->comm, comm, sizeof(comm));
	smp_check_write(s, df_write_thread(s->w, t, th->proc->pid, th->tid, comm));
}

void smp_refresh_names(struct sampler *s)
{
	struct xp_thread *th;
	unsigned long i = 0;

	while ((th = tracer_thread_at(s->tr, &i)))
		refresh_thread_name(s, th, smp_now(s));
}

struct raw_sample *smp_queue_slot(struct sampler *s)
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
 * Whether the maps of @p may be read again for a sample taken at @t.
 * Reading them is ~50 us; a reload that did not help (a wild address, not
 * a new library) doubles the wait, up to a second, so a hostile stack
 * cannot make us read them per sample.  Until a reload has failed to help,
 * maps read before the sample was taken may be read again at once: the
 * first sample of a process can come within a millisecond of its exec,
 * when the maps read at the exec lack the libraries ld.so maps after it
 * (its stack stopped at main, once a run).
 */
static bool maps_due(struct sampler *s, struct xp_process *p, uint64_t t)
{
	const struct smp_proc *x = smp_proc_of(s, p);
	uint64_t wait = x->maps_backoff ? x->maps_backoff : 1000000ull;

	if (p->exited)
		return false;
	return smp_now(s) - x->maps_loaded_at >= wait ||
	       (x->maps_loaded_at < t && wait <= 1000000ull);
}

/*
 * Whether @pc is in anonymous executable memory (JIT code) and the maps of
 * @x are older than SAMPLER_JIT_MAPS_NS.  Maps read once, early, missed a
 * jitdump mapped just after: with samples only in the JIT's code they
 * were never read again, and none of its symbols were collected.
 */
static bool is_anon_code(const struct smp_proc *x, uint64_t pc)
{
	const struct xp_map *m = addrspace_find(&x->as, pc);

	return m && !m->path[0];
}

static bool in_jit_code(const struct sampler *s, const struct smp_proc *x, uint64_t pc)
{
	return is_anon_code(x, pc) && smp_now(s) - x->maps_loaded_at >= SAMPLER_JIT_MAPS_NS;
}

static bool maps_stale(struct sampler *s, struct smp_proc *x, uint64_t pc)
{
	uint64_t now = smp_now(s);

	if (now - x->stale_checked_at < 20000000ull)
		return false;
	x->stale_checked_at = now;
	return addrspace_is_stale(&x->as, pc);
}

static void maps_backoff(struct smp_proc *x, bool helped)
{
	if (helped || !x->maps_backoff)
		x->maps_backoff = 1000000ull;
	else if (x->maps_backoff < XP_NS_PER_SEC)
		x->maps_backoff *= 2;
}

/*
 * Before walking sample @r: a pc outside every known executable mapping
 * means something was mapped since.  Inside one that now maps another
 * file: a library was dlclose'd and another dlopen'ed at its address; that
 * check costs a readlink, so it is made at most every 20 ms per process.
 * Inside anonymous executable memory: JIT code, which the JIT describes in
 * files it maps as it goes (a jitdump, found through the maps when the
 * process ends): maps older than 100 ms are read again.
 */
static void maps_check_pc(struct sampler *s, const struct raw_sample *r)
{
	struct smp_proc *x = smp_proc_of(s, r->proc);
	uint64_t pc = xp_regs_get(&r->regs, s->arch->dwarf.pc);

	if (maps_due(s, r->proc, r->t) &&
	    (!addrspace_is_exec(&x->as, pc) || maps_stale(s, x, pc) || in_jit_code(s, x, pc))) {
		load_maps(s, r->proc, r->t);
		maps_backoff(x, addrspace_is_exec(&x->as, pc));
	}
	/* JIT code: date what the JIT's perf map gains (names valid at each sample's time). */
	if (is_anon_code(x, pc))
		jitmap_poll(r->proc->pid, &x->as, s->start_mono);
}

/* Walk the copy of @r into s->pcs; the number of frames. */
static unsigned int walk(struct sampler *s, const struct raw_sample *r, struct memread *m)
{
	struct xp_process *p = r->proc;
	unsigned int top = 0;

	memread_init(m, p->exited ? 0 : p->pid, xp_regs_get(&r->regs, s->arch->dwarf.sp), r->copy,
		     r->len);
	if (r->sys_nr >= 0) {
		/* The blocking system call is the leaf, as in perf's off-CPU views. */
		s->pcs[0] = (uint64_t)r->sys_nr;
		s->flags[0] = XP_FRAME_SYSCALL;
		top = 1;
	}
	return top + unwind_stack(s->unw, s->arch, &r->regs, m, &smp_proc_of(s, p)->as,
				  s->pcs + top, s->flags + top, s->o->max_depth + 1);
}

/* After the walk of @r (stack @id) read @m: what the thread's next samples need. */
static void note_walk(struct sampler *s, const struct raw_sample *r, const struct memread *m,
		      uint64_t id)
{
	struct xp_thread *th = tracer_find(s->tr, r->tid);
	uint64_t sp = xp_regs_get(&r->regs, s->arch->dwarf.sp);
	struct smp_thread *x;

	if (!th || th->proc != r->proc)
		return;
	x = smp_thread_of(th);
	if (s->o->adaptive_copy)
		stackcopy_resize(&x->copy, &smp_proc_of(s, th->proc)->copy_hint, sp, m->hi,
				 m->live_reads != 0, s->o->stack_bytes);
	/* Most threads name themselves as they start: look at their first samples. */
	if (x->name_checks < 3) {
		x->name_checks++;
		refresh_thread_name(s, th, r->t);
	}
	x->last_stack_id = r->sys_nr >= 0 ? id : 0;
	x->last_sys_nr = r->sys_nr;
	x->last_sys_sp = (uint64_t)r->sys_sp;
	x->last_sys_pc = (uint64_t)r->sys_pc;
}

static void unwind_one(struct sampler *s, struct raw_sample *r)
{
	struct xp_process *p = r->proc;
	struct memread m;
	uint64_t id, unmapped;
	unsigned int nr;
	bool is_new;

	maps_check_pc(s, r);
	unmapped = unwinder_stats(s->unw)->unmapped;
	nr = walk(s, r, &m);
	/*
	 * A return address in no mapping: libraries mapped since the maps were
	 * read (ld.so maps them after the exec event).  Read them again and
	 * walk the same copy once more.
	 */
	if (unwinder_stats(s->unw)->unmapped != unmapped && maps_due(s, p, r->t)) {
		load_maps(s, p, r->t);
		unwind_check_forget(s->unw);
		unmapped = unwinder_stats(s->unw)->unmapped;
		nr = walk(s, r, &m);
		maps_backoff(smp_proc_of(s, p), unwinder_stats(s->unw)->unmapped == unmapped);
	}
	id = stacktab_intern(&s->stacks, s->pcs, s->flags, nr, &is_new);
	note_walk(s, r, &m, id);
	if (is_new)
		s->st->stacks++;
	/* After a switch, a known stack may be new to this part's file (which skips repeats). */
	if ((is_new || s->parts) &&
	    smp_check_write(s, df_write_stack(s->w, id, s->pcs, s->flags, nr)))
		return;
	if (smp_check_write(s, df_write_sample(s->w, r->t, p->pid, r->tid, id, r->weight)))
		return;
	s->st->samples++;
	s->st->weight_total += r->weight;
}

void smp_drain_some(struct sampler *s, unsigned long max)
{
	unsigned long n = s->nq - s->qhead, i;
	struct raw_sample t;

	if (n > max)
		n = max;
	for (i = 0; i < n; i++)
		if (!s->write_failed)
			unwind_one(s, &s->q[s->qhead + i]);
	s->qhead += n;
	if (s->qhead == s->nq) {
		s->qhead = s->nq = 0;
		return;
	}
	/*
	 * Move the rest to the front once it is no more than what was
	 * unwound, swapping so that every slot keeps a copy buffer.
	 */
	if (s->nq - s->qhead > s->qhead)
		return;
	for (i = s->qhead; i < s->nq; i++) {
		t = s->q[i - s->qhead];
		s->q[i - s->qhead] = s->q[i];
		s->q[i] = t;
	}
	s->nq -= s->qhead;
	s->qhead = 0;
}

void smp_drain_queue(struct sampler *s)
{
	smp_drain_some(s, ULONG_MAX);
}

/*
 * Copy the JIT symbols of (the latest process with) pid @pid that cover
 * sampled pcs into the data file (jitmap.h); queued samples are unwound
 * first so that their pcs count.
 */
void smp_collect_jit(struct sampler *s, pid_t pid)
{
	struct xp_process *p = NULL;
	unsigned long i;

	smp_drain_queue(s);
	for (i = 0; i < s->tr->nprocs; i++)
		if (s->tr->procs[i]->pid == pid)
			p = s->tr->procs[i];
	if (p && p->execed && !s->write_failed)
		smp_check_write(s, jitmap_collect(s->w, pid, &smp_proc_of(s, p)->as, &s->stacks,
						  s->start_mono) < 0
				       ? -1
				       : 0);
}

/*
 * Samples queued before an exec of @p were taken in the old image: unwind
 * them while its mappings are still known, that is before the tracer resets
 * them.  The process already runs the new image, so nothing may be read
 * from it (maps, memory) for them: it counts as exited meanwhile.
 */
void smp_drain_old_image(struct sampler *s, struct xp_process *p)
{
	bool exited = p->exited;

	p->exited = true;
	smp_drain_queue(s);
	p->exited = exited;
	capture_note(&s->cap, &smp_proc_of(s, p)->as, &s->stacks);
}

/* A statistic record's name and value. */
struct smp_stat {
	const char *name;
	uint64_t v;
};

/* The rows at the end of smp_write_stats' table that only -g check writes. */
#define SMP_CHECK_STATS 5

void smp_write_part_stats(struct sampler *s, uint64_t sampled_ns)
{
	smp_check_write(s, df_write_stat(s->w, "freq_hz", s->o->freq_hz));
	smp_check_write(s, df_write_stat(s->w, "mode_wall", s->o->mode == SAMPLER_WALL));
	smp_check_write(s, df_write_stat(s->w, "duration_ns", sampled_ns - s->part_sampled));
}

void smp_write_stats(struct sampler *s)
{
	const struct sampler_stats *st = s->st;
	const struct unwind_stats *us = unwinder_stats(s->unw);
	const struct smp_stat stats[] = {
	    {"ticks", st->ticks},
	    {"late_ticks", st->late_ticks},
	    {"interrupts", st->interrupts},
	    {"samples", st->samples},
	    {"failed", st->failed},
	    {"reused_blocked", st->reused},
	    {"spin_timeouts", st->spin_timeouts},
	    {"collect_timeouts", st->collect_timeouts},
	    {"dropped_blocked", st->dropped_blocked},
	    {"dropped_idle", st->dropped_idle},
	    {"running_checks", st->running_checks},
	    {"running_found", st->running_found},
	    {"quiet_skips", st->quiet_skips},
	    {"quiet_sweeps", st->quiet_sweeps},
	    {"vanished", s->tr->vanished},
	    {"threads", s->tr->threads_seen},
	    {"processes", s->tr->procs_seen},
	    {"stop_p50_ns", schedule_hist_percentile(st->stop_hist, st->stop_ns_max, 50)},
	    {"stop_p99_ns", schedule_hist_percentile(st->stop_hist, st->stop_ns_max, 99)},
	    {"stop_max_ns", st->stop_ns_max},
	    {"held_p50_ns", schedule_hist_percentile(st->held_hist, st->held_ns_max, 50)},
	    {"held_p99_ns", schedule_hist_percentile(st->held_hist, st->held_ns_max, 99)},
	    {"wake_p50_ns", schedule_hist_percentile(st->wake_hist, st->wake_ns_max, 50)},
	    {"wake_p90_ns", schedule_hist_percentile(st->wake_hist, st->wake_ns_max, 90)},
	    {"wake_p99_ns", schedule_hist_percentile(st->wake_hist, st->wake_ns_max, 99)},
	    {"late_wakes", st->late_wakes},
	    {"stop_ns_total", st->stop_ns_total},
	    {"target_wait_ns", st->target_wait_ns},
	    {"xprof_cpu_ns", st->xprof_cpu_ns},
	    {"stack_bytes_copied", st->stack_bytes_copied},
	    {"irq_same_cpu", st->irq_same_cpu},
	    {"cpu_moves", st->cpu_moves},
	    {"trigger_timeouts", st->trigger_timeouts},
	    {"trigger_parked", st->trigger_parked},
	    {"trigger_idle_wakes", st->trigger_idle_wakes},
	    {"poll_idle", st->poll_idle},
	    {"spin_idle", st->spin_idle},
	    {"rt_priority", st->rt_priority},
	    {"frames_fp", us->frames_fp},
	    {"frames_cfi", us->frames_cfi},
	    {"unwind_truncated", us->truncated},
	    {"capture_modules", st->capture.modules},
	    {"capture_bytes", st->capture.bytes},
	    {"capture_ns", st->capture.ns},
	    /* -g check: how often libunwind disagreed with the native walk (unwind.h). */
	    {"unwind_checked", us->check_stacks},
	    {"unwind_differ", us->check_differ},
	    {"unwind_differ_pc", us->check_pc},
	    {"unwind_differ_libunwind_shorter", us->check_lu_shorter},
	    {"unwind_differ_native_shorter", us->check_native_shorter},
	};
	size_t i, n = sizeof(stats) / sizeof(stats[0]) - (us->check_stacks ? 0 : SMP_CHECK_STATS);

	s->st->unwind_checked = us->check_stacks;
	s->st->unwind_differ = us->check_differ;
	smp_write_part_stats(s, st->duration_ns);
	for (i = 0; i < n; i++)
		if (smp_check_write(s, df_write_stat(s->w, stats[i].name, stats[i].v)))
			return;
}
