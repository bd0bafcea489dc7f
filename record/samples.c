/* SPDX-License-Identifier: MIT */
/*
 * The sampler's state per thread and process (see sampler_int.h), and the
 * queue of raw samples: each taken in a stop (registers, a stack copy and,
 * in an image with an interpreter, a copy of the thread's interpreter
 * frames), unwound after the threads run again, in the image it was taken
 * in (reading the maps again when the walk shows they are out of date),
 * its interpreter frames named and merged in, interned and handed to the
 * emitter.
 */
#include "sampler_int.h"
#include "clock.h"
#include "err.h"
#include "hash.h"
#include "interp.h"
#include "memread.h"
#include "module.h"
#include "schedule.h"

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
		x->blocked_nr = x->last_sys_nr = x->restart_nr = x->blocked_call = -1;
		th->priv = x;
	}
	return x;
}

struct smp_proc *smp_proc_of(struct sampler *s, struct xp_process *p)
{
	struct smp_proc *x = p->priv;

	if (!x) {
		x = xp_calloc(1, sizeof(*x));
		stackcopy_init(&x->mem, p->pid);
		x->img = smp_image_new(s, p->pid, false);
		/* Launched and sampled from its start: all its CPU time counts. */
		x->born = s->o->kind == SAMPLER_RECORD && s->loop.enabled;
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
	smp_image_put(x->img);
	stackcopy_close(&x->mem);
	jitmap_watch_release(&x->jit);
	free(x->code_pcs);
	free(x);
	p->priv = NULL;
}

/*
 * The process exec'd @th: a new image.  The old one stays, retired, as
 * long as samples queued in it need it; nothing is unwound or read here.
 * The process's other threads are gone already (the tracer freed them).
 */
void smp_exec(struct sampler *s, struct xp_thread *th)
{
	struct smp_proc *p = smp_proc_of(s, th->proc);
	struct smp_thread *x = smp_thread_of(th);

	stackcopy_close(&p->mem); /* it holds the old image's memory */
	p->copy_hint = 0;
	x->copy.bytes = 0;
	p->img->retired = true;
	smp_image_put(p->img);
	p->img = smp_image_new(s, th->proc->pid, true);
	smp_close_fds(x);
	x->last_stack_id = 0;
}

void smp_queue_init(struct sampler *s)
{
	struct smp_queue *q = &s->queue;

	q->unw = unwinder_new(s->o->unwind, s->o->max_depth);
	q->pcs = xp_calloc(s->o->max_depth + 2 + SMP_INTERP_MAX, sizeof(*q->pcs));
	q->flags = xp_calloc(s->o->max_depth + 2 + SMP_INTERP_MAX, 1);
	q->sps = xp_calloc(s->o->max_depth + 2, sizeof(*q->sps));
	q->mpcs = xp_calloc(s->o->max_depth + 2 + SMP_INTERP_MAX, sizeof(*q->mpcs));
	q->mflags = xp_calloc(s->o->max_depth + 2 + SMP_INTERP_MAX, 1);
	q->iframes = xp_calloc(SMP_INTERP_MAX + 2, sizeof(*q->iframes));
	q->iat = xp_calloc(SMP_INTERP_MAX + 2, sizeof(*q->iat));
	q->mc = module_cache_new();
	stacktab_init(&q->stacks);
}

void smp_queue_release(struct sampler *s)
{
	struct smp_queue *q = &s->queue;
	unsigned long i;

	for (i = q->head; i < q->nq; i++)
		smp_image_put(q->q[i].img);
	for (i = 0; i < q->alloc; i++) {
		free(q->q[i].copy);
		free(q->q[i].interp.f);
	}
	XP_FREE_ALL(q->q, q->pcs, q->flags, q->sps, q->mpcs, q->mflags, q->iframes, q->iat,
		    q->markers);
	stacktab_release(&q->stacks);
	unwinder_free(q->unw);
	/* After every image, which uses its modules: the processes' are put already. */
	module_cache_free(q->mc);
}

/* The next free slot of the queue, its copy buffer allocated; q->nq++ keeps it. */
static struct raw_sample *queue_slot(struct sampler *s)
{
	struct smp_queue *q = &s->queue;
	unsigned long old = q->alloc, i;
	struct raw_sample *r;

	xp_grow((void **)&q->q, &q->alloc, q->nq + 1, sizeof(*q->q));
	for (i = old; i < q->alloc; i++) {
		q->q[i].copy = NULL;
		q->q[i].interp = (struct interp_raw){0};
	}
	r = &q->q[q->nq];
	if (!r->copy)
		r->copy = xp_malloc(s->o->stack_bytes);
	return r;
}

/* Stack bytes to copy at the next sample of @th, whose last walk needed @need from its SP. */
static size_t copy_size(struct sampler *s, struct xp_thread *th, uint32_t need)
{
	uint32_t hint = s->o->adaptive_copy ? smp_proc_of(s, th->proc)->copy_hint : 0;

	return stackcopy_reach(&smp_thread_of(th)->copy, hint, s->o->stack_bytes, need);
}

/* Read @th's registers into @r.  0, or -1 (counted as a failed sample). */
static int read_regs(struct sampler *s, struct xp_thread *th, struct raw_sample *r)
{
	int e = s->arch->regs_read(th->tid, &r->regs);

	if (e) {
		s->st->failed++;
		xp_debug(2, "cannot read registers of tid %d: %s", (int)th->tid, strerror(-e));
		return -1;
	}
	return 0;
}

/*
 * In the stop, right after the stack copy of @r: copy @th's interpreter
 * frames, when its image runs an interpreter.  The chain changes as soon
 * as the thread runs; naming its frames waits for the resume.
 */
static void copy_interp(struct sampler *s, struct xp_thread *th, struct smp_image *img,
			struct raw_sample *r)
{
	struct interp_mem m;

	r->interp.nr = 0;
	if (!img->interp)
		return;
	if (!r->interp.f) {
		r->interp.cap = s->o->max_depth < SMP_INTERP_MAX ? s->o->max_depth : SMP_INTERP_MAX;
		r->interp.f = xp_calloc(r->interp.cap + 2, sizeof(*r->interp.f));
	}
	m = smp_interp_mem(s, th->proc, img, r);
	if (interp_take(img->interp, th->tid, &m, &r->interp))
		r->interp.nr = 0;
	s->st->interp_bytes += r->interp.bytes;
	s->st->interp_misses += !r->interp.nr;
	s->st->interp_broken += (r->interp.flags & INTERP_RAW_BROKEN) != 0;
}

/* Copy @th's stack into @r, whose registers are read, and queue it as a @kind of @weight at @t. */
static void copy_stack(struct sampler *s, struct xp_thread *th, struct raw_sample *r,
		       enum smp_raw_kind kind, uint64_t weight, uint64_t t)
{
	struct smp_thread *x = smp_thread_of(th);
	struct smp_proc *p = smp_proc_of(s, th->proc);
	uint64_t sp = xp_regs_get(&r->regs, s->arch->dwarf.sp);
	uint32_t need = stackcopy_need(&x->copy, sp, s->o->stack_bytes);

	r->len = stackcopy_take(&p->mem, r->copy, copy_size(s, th, need), sp, need);
	copy_interp(s, th, p->img, r);
	r->kind = kind;
	r->seq = ++s->queue.seq ? s->queue.seq : ++s->queue.seq; /* 0 is none */
	r->proc = th->proc;
	r->img = smp_image_get(p->img);
	r->tid = th->tid;
	r->t = t;
	r->weight = weight;
	r->sys_nr = kind == SMP_RAW_SAMPLE ? x->blocked_nr : -1;
	r->sys_sp = (int64_t)x->last_sys_sp;
	r->sys_pc = (int64_t)x->last_sys_pc;
	s->st->stack_bytes_copied += r->len;
	s->queue.nq++;
}

struct raw_sample *smp_take_sample(struct sampler *s, struct xp_thread *th, uint64_t weight,
				   uint64_t t)
{
	struct raw_sample *r = queue_slot(s);
	struct smp_thread *x = smp_thread_of(th);

	if (read_regs(s, th, r))
		return NULL;
	/*
	 * A stop in the middle of a blocking call makes the kernel continue it
	 * as restart_syscall once resumed: remember which call that is.
	 */
	if ((r->regs.flags & XP_REGS_SYSCALL_RESTART) &&
	    r->regs.sys_nr != (uint32_t)s->arch->syscall.nr_restart)
		x->restart_nr = r->regs.sys_nr;
	if (smp_stop_in_call(s, x, &r->regs)) {
		smp_stop_dropped(s, x, &r->regs);
		s->st->dropped_blocked++;
		return NULL;
	}
	copy_stack(s, th, r, SMP_RAW_SAMPLE, weight, t);
	r->prev_seq = x->last_seq;
	x->last_seq = r->seq;
	return r;
}

/* Whether copy @seq is still among those whose stack is kept (or will be, once unwound). */
static bool seen_kept(const struct smp_queue *q, uint32_t seq)
{
	return seq && q->seq - seq < SMP_SEEN;
}

/*
 * A creator that makes threads or processes in a loop does so from the
 * same place each time: where its registers are those of its last copy,
 * the child shares that copy's origin, and costs one register read.
 */
void smp_take_origin(struct sampler *s, struct xp_thread *creator, struct xp_thread *child)
{
	struct smp_thread *x = smp_thread_of(creator), *c = smp_thread_of(child);
	struct raw_sample *r = queue_slot(s);
	uint64_t pc, sp, fp;

	c->born = true;
	smp_path_born(c);
	c->origin_proc = creator->proc;
	c->origin_tid = creator->tid;
	if (!creator->proc->execed || read_regs(s, creator, r))
		return;
	pc = xp_regs_get(&r->regs, s->arch->dwarf.pc);
	sp = xp_regs_get(&r->regs, s->arch->dwarf.sp);
	fp = xp_regs_get(&r->regs, s->arch->dwarf.fp);
	if (pc == x->made_pc && sp == x->made_sp && fp == x->made_fp &&
	    seen_kept(&s->queue, x->made_seq)) {
		c->origin_seq = x->made_seq;
		return;
	}
	copy_stack(s, creator, r, SMP_RAW_ORIGIN, 0, smp_now(s));
	s->st->origins++;
	x->made_seq = c->origin_seq = r->seq;
	x->made_pc = pc;
	x->made_sp = sp;
	x->made_fp = fp;
}

void smp_exit_note(struct sampler *s, struct xp_thread *th, uint64_t weight, uint64_t t,
		   struct smp_exit_note *n)
{
	struct smp_thread *x = smp_thread_of(th);
	/* Under its creator where known, else under itself. */
	bool origin = x->origin_seq && x->origin_proc;

	*n = (struct smp_exit_note){.pending = true, .weight = weight, .t = t};
	/*
	 * Its last sample is unwound already (its stack known), or queued
	 * still (its stack in smp_queue.seen by the time this is unwound).
	 */
	if (x->cpu.sampled_ns && x->last_seq &&
	    (x->last_walked_seq == x->last_seq || seen_kept(&s->queue, x->last_seq))) {
		n->kind = SMP_RAW_TAIL;
		n->seq = x->last_seq;
		n->stack_id = x->last_walked_seq == x->last_seq ? x->last_walked_id : 0;
		n->proc = th->proc;
		n->tid = th->tid;
		return;
	}
	n->kind = SMP_RAW_EXITED;
	n->seq = origin ? x->origin_seq : 0;
	n->proc = origin ? x->origin_proc : th->proc;
	n->tid = origin ? x->origin_tid : th->tid;
	n->exited_pid = th->proc->pid;
	n->exited_tid = th->tid;
	/* Its name: its own once known, else its process's (a new thread's is its creator's). */
	snprintf(n->exited_comm, sizeof(n->exited_comm), "%.15s",
		 x->em.described ? x->em.comm : th->proc->comm);
}

void smp_exit_note_of(struct xp_process *p, uint64_t weight, uint64_t t, struct smp_exit_note *n)
{
	*n = (struct smp_exit_note){.pending = true,
				    .kind = SMP_RAW_EXITED,
				    .proc = p,
				    .tid = p->pid,
				    .exited_pid = p->pid,
				    .exited_tid = p->pid,
				    .weight = weight,
				    .t = t};
	snprintf(n->exited_comm, sizeof(n->exited_comm), "%.15s", p->comm);
}

void smp_queue_note(struct sampler *s, struct smp_exit_note *n)
{
	struct raw_sample *r;

	if (!n->pending || !n->weight)
		return;
	r = queue_slot(s);
	r->kind = n->kind;
	r->seq = n->seq;
	r->stack_id = n->stack_id;
	r->proc = n->proc;
	r->img = smp_image_get(smp_proc_of(s, n->proc)->img);
	r->tid = n->tid;
	r->exited_pid = n->exited_pid;
	r->exited_tid = n->exited_tid;
	memcpy(r->exited_comm, n->exited_comm, sizeof(r->exited_comm));
	r->t = n->t;
	r->weight = n->weight;
	r->len = 0;
	r->interp.nr = 0;
	r->sys_nr = -1;
	s->queue.nq++;
	n->pending = false;
}

void smp_drop_last(struct sampler *s, struct raw_sample *r)
{
	struct smp_queue *q = &s->queue;
	struct xp_thread *th;

	if (q->nq > q->head && r == &q->q[q->nq - 1]) {
		th = tracer_find(s->tr, r->tid);
		if (th && smp_thread_of(th)->last_seq == r->seq)
			smp_thread_of(th)->last_seq = r->prev_seq;
		smp_image_put(r->img);
		q->nq--;
	}
}

bool smp_queued(const struct sampler *s, uint64_t *oldest)
{
	const struct smp_queue *q = &s->queue;

	if (q->nq == q->head)
		return false;
	*oldest = q->q[q->head].t;
	return true;
}

/* Walk the copy of @r into the queue's pcs; the number of frames, *@left: it left the maps. */
static unsigned int walk(struct sampler *s, const struct raw_sample *r, struct memread *m,
			 bool *left)
{
	struct smp_queue *q = &s->queue;
	unsigned int top = 0;

	/* Nothing is read from the process for an image it left (exec) or once it exited. */
	memread_init(m, r->img->retired || r->proc->exited ? 0 : r->proc->pid,
		     xp_regs_get(&r->regs, s->arch->dwarf.sp), r->copy, r->len);
	if (r->sys_nr >= 0) {
		/* The blocking system call is the leaf, as in perf's off-CPU views. */
		q->pcs[0] = (uint64_t)r->sys_nr;
		q->flags[0] = XP_FRAME_SYSCALL;
		q->sps[0] = xp_regs_get(&r->regs, s->arch->dwarf.sp);
		top = 1;
	}
	return top + unwind_stack_sp(q->unw, s->arch, &r->regs, m, &r->img->as, q->pcs + top,
				     q->flags + top, q->sps + top, s->o->max_depth + 1, left);
}

/*
 * Put the interpreter frames of @r into its walked stack q->pcs[0..@nr)
 * (stack pointers q->sps): each run just inside the native frame of the
 * loop that ran it, which it stands for (interp_place).  Returns the new
 * number of frames; @nr when there are none, or they could not be placed.
 */
static unsigned int merge_interp(struct sampler *s, const struct raw_sample *r, unsigned int nr)
{
	struct smp_queue *q = &s->queue;
	struct interp *ip = r->img->interp;
	unsigned int nf, nn = nr, i, k, n = 0;
	struct interp_mem m;

	if (!ip || !r->interp.nr)
		return nr;
	m = smp_interp_mem(s, r->proc, r->img, r);
	nf = interp_decode(ip, &r->interp, &m, r->t, smp_now(s), q->iframes, SMP_INTERP_MAX);
	if (!nf)
		return nr;
	if (nn && (q->flags[nn - 1] & XP_FRAME_TRUNCATED))
		nn--;
	if (interp_place(q->iframes, nf, q->sps, nn, q->iat)) {
		s->st->interp_unplaced++;
		return nr;
	}
	for (i = 0, k = 0; i <= nr; i++) {
		/* The runs of native frame i, then the frame itself (a truncation marker last). */
		for (; k < nf && q->iat[k] <= (i < nn ? i : nn); k++) {
			if (!q->iframes[k].code)
				continue;
			q->mpcs[n] = xp_interp_pc(q->iframes[k].code, q->iframes[k].line);
			q->mflags[n++] = XP_FRAME_INTERP;
		}
		if (i < nr) {
			q->mpcs[n] = q->pcs[i];
			q->mflags[n++] = q->flags[i];
		}
	}
	memcpy(q->pcs, q->mpcs, n * sizeof(*q->pcs));
	memcpy(q->flags, q->mflags, n);
	s->st->interp_samples++;
	return n;
}

/* A new stack of @r's image, q->pcs[0..@nr): what ICODE says of each code it names. */
static void note_codes(struct sampler *s, const struct raw_sample *r, unsigned int nr)
{
	struct smp_queue *q = &s->queue;
	struct interp *ip = r->img->interp;
	unsigned int i;

	for (i = 0; ip && i < nr; i++)
		if (q->flags[i] & XP_FRAME_INTERP)
			emit_code(s, interp_kind_of(ip),
				  interp_code(ip, (uint32_t)(q->pcs[i] >> 32)));
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
	emit_check_name(s, th, r->t);
	x->last_walked_seq = r->seq;
	x->last_walked_id = id;
	x->last_stack_id = r->sys_nr >= 0 ? id : 0;
	x->last_stack_part = s->emit.parts;
	x->last_sys_nr = r->sys_nr;
	x->last_sys_sp = (uint64_t)r->sys_sp;
	x->last_sys_pc = (uint64_t)r->sys_pc;
}

/* The marker slot of (@origin, @comm): its own, or a free one for it. */
static struct smp_marker *marker_of(struct smp_queue *q, uint64_t origin, const char *comm)
{
	size_t j = (size_t)xp_mix64(origin ^ xp_hash_str(comm)) & (q->markers_cap - 1);

	while (q->markers[j].stack_id &&
	       (q->markers[j].origin != origin || strcmp(q->markers[j].comm, comm)))
		j = (j + 1) & (q->markers_cap - 1);
	return &q->markers[j];
}

static struct smp_marker *marker_get(struct smp_queue *q, uint64_t origin, const char *comm)
{
	if ((q->markers_nr + 1) * 4 > q->markers_cap * 3) {
		struct smp_marker *old = q->markers;
		size_t cap = q->markers_cap, i;

		q->markers_cap = cap ? cap * 2 : 64;
		q->markers = xp_calloc(q->markers_cap, sizeof(*q->markers));
		for (i = 0; i < cap; i++)
			if (old[i].stack_id)
				*marker_of(q, old[i].origin, old[i].comm) = old[i];
		free(old);
	}
	return marker_of(q, origin, comm);
}

/*
 * The CPU time of a thread that exited unsampled, under its origin: the
 * origin's frames with a marker at the leaf that the report names after
 * the thread (a record of it is written with the marker).  Threads of one
 * name from one origin share one such stack.
 */
static void unwind_exited(struct sampler *s, struct raw_sample *r)
{
	struct smp_queue *q = &s->queue;
	const struct smp_seen *o = &q->seen[r->seq % SMP_SEEN];
	uint64_t origin = r->seq && o->seq == r->seq ? o->stack_id : 0;
	struct smp_marker *mk = marker_get(q, origin, r->exited_comm);
	const uint64_t *pcs;
	const uint8_t *flags;
	uint32_t nr = 0;
	bool is_new;

	if (!mk->stack_id) {
		if (origin)
			nr = stacktab_get(&q->stacks, origin, &pcs, &flags);
		if (nr > s->o->max_depth + SMP_INTERP_MAX)
			nr = s->o->max_depth + SMP_INTERP_MAX;
		q->pcs[0] = (uint64_t)r->exited_tid;
		q->flags[0] = XP_FRAME_EXITED;
		if (nr) {
			memcpy(q->pcs + 1, pcs, nr * sizeof(*pcs));
			memcpy(q->flags + 1, flags, nr);
		}
		*mk = (struct smp_marker){origin, 0, r->exited_tid, ""};
		memcpy(mk->comm, r->exited_comm, sizeof(mk->comm));
		mk->stack_id = stacktab_intern(&q->stacks, q->pcs, q->flags, nr + 1, &is_new);
		q->markers_nr++;
		if (is_new)
			s->st->stacks++;
		emit_thread_gone(s, r->exited_pid, r->exited_tid, r->t, r->exited_comm);
	}
	nr = stacktab_get(&q->stacks, mk->stack_id, &pcs, &flags);
	smp_image_note_stack(s, r->proc, r->img, mk->stack_id, pcs, flags, nr);
	emit_stack(s, mk->stack_id, pcs, flags, nr);
	emit_accrue(s, r->t, r->proc->pid, r->tid, mk->stack_id, !origin, r->weight);
}

static void unwind_one(struct sampler *s, struct raw_sample *r)
{
	struct smp_queue *q = &s->queue;
	struct memread m;
	unsigned int nr;
	uint64_t id;
	bool is_new, left;

	if (r->kind == SMP_RAW_EXITED) {
		unwind_exited(s, r);
		return;
	}
	if (r->kind == SMP_RAW_TAIL) {
		const struct smp_seen *o = &q->seen[r->seq % SMP_SEEN];
		uint64_t last = r->stack_id ? r->stack_id : o->seq == r->seq ? o->stack_id : 0;
		const uint64_t *pcs;
		const uint8_t *flags;

		/* A sample dropped since (settled as too small) left no stack: fall back. */
		if (!(nr = stacktab_get(&q->stacks, last, &pcs, &flags))) {
			r->kind = SMP_RAW_EXITED;
			r->seq = 0;
			r->exited_pid = r->proc->pid;
			r->exited_tid = r->tid;
			snprintf(r->exited_comm, sizeof(r->exited_comm), "%.15s", r->proc->comm);
			unwind_exited(s, r);
			return;
		}
		emit_stack(s, last, pcs, flags, nr);
		emit_accrue(s, r->t, r->proc->pid, r->tid, last, false, r->weight);
		return;
	}
	smp_image_check_pc(s, r);
	nr = walk(s, r, &m, &left);
	/*
	 * A return address in no mapping: libraries mapped since the maps were
	 * read (ld.so maps them after the exec event).  Read them again and
	 * walk the same copy once more.
	 */
	if (left && smp_image_maps_due(s, r)) {
		smp_image_load(s, r->proc, r->img, r->t);
		unwind_check_forget(q->unw);
		nr = walk(s, r, &m, &left);
		smp_image_reloaded(r->img, !left);
	}
	nr = merge_interp(s, r, nr);
	id = stacktab_intern(&q->stacks, q->pcs, q->flags, nr, &is_new);
	if (is_new) {
		s->st->stacks++;
		note_codes(s, r, nr);
	}
	/* Kept for the raw samples that refer to it (an origin is written with them). */
	q->seen[r->seq % SMP_SEEN] = (struct smp_seen){r->seq, id};
	if (r->kind == SMP_RAW_ORIGIN)
		return;
	smp_image_note_stack(s, r->proc, r->img, id, q->pcs, q->flags, nr);
	note_walk(s, r, &m, id);
	emit_stack(s, id, q->pcs, q->flags, nr);
	emit_sample(s, r->t, r->proc->pid, r->tid, id, r->weight);
}

void smp_drain_some(struct sampler *s, unsigned long max)
{
	struct smp_queue *q = &s->queue;
	unsigned long n = q->nq - q->head, i;
	struct raw_sample t;

	if (n > max)
		n = max;
	for (i = 0; i < n; i++) {
		struct raw_sample *r = &q->q[q->head + i];

		if (!s->emit.failed)
			unwind_one(s, r);
		smp_image_put(r->img);
		r->img = NULL;
	}
	q->head += n;
	if (q->head == q->nq) {
		q->head = q->nq = 0;
		return;
	}
	/*
	 * Move the rest to the front once it is no more than what was
	 * unwound, swapping so that every slot keeps a copy buffer.
	 */
	if (q->nq - q->head > q->head)
		return;
	for (i = q->head; i < q->nq; i++) {
		t = q->q[i - q->head];
		q->q[i - q->head] = q->q[i];
		q->q[i] = t;
	}
	q->nq -= q->head;
	q->head = 0;
}

void smp_drain_queue(struct sampler *s)
{
	smp_drain_some(s, ULONG_MAX);
}
