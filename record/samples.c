/* SPDX-License-Identifier: MIT */
/*
 * The sampler's state per thread and process (see sampler_int.h), and the
 * queue of raw samples: each taken in a stop (registers and a stack copy),
 * unwound after the threads run again, in the image it was taken in
 * (reading the maps again when the walk shows they are out of date),
 * interned and handed to the emitter.
 */
#include "sampler_int.h"
#include "clock.h"
#include "err.h"
#include "memread.h"
#include "schedule.h"

#include <limits.h>
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

struct smp_proc *smp_proc_of(struct sampler *s, struct xp_process *p)
{
	struct smp_proc *x = p->priv;

	if (!x) {
		x = xp_calloc(1, sizeof(*x));
		stackcopy_init(&x->mem, p->pid);
		x->img = smp_image_new(s, p->pid);
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
	p->img = smp_image_new(s, th->proc->pid);
	smp_close_fds(x);
	x->last_stack_id = 0;
}

void smp_queue_init(struct sampler *s)
{
	struct smp_queue *q = &s->queue;

	q->unw = unwinder_new(s->o->unwind, s->o->max_depth);
	q->pcs = xp_calloc(s->o->max_depth + 2, sizeof(*q->pcs));
	q->flags = xp_calloc(s->o->max_depth + 2, 1);
	q->mc = module_cache_new();
	stacktab_init(&q->stacks);
}

void smp_queue_release(struct sampler *s)
{
	struct smp_queue *q = &s->queue;
	unsigned long i;

	for (i = q->head; i < q->nq; i++)
		smp_image_put(q->q[i].img);
	for (i = 0; i < q->alloc; i++)
		free(q->q[i].copy);
	XP_FREE_ALL(q->q, q->pcs, q->flags);
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
	for (i = old; i < q->alloc; i++)
		q->q[i].copy = NULL;
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

struct raw_sample *smp_take_sample(struct sampler *s, struct xp_thread *th, uint64_t weight,
				   uint64_t t)
{
	struct raw_sample *r = queue_slot(s);
	struct smp_thread *x = smp_thread_of(th);
	struct smp_proc *p = smp_proc_of(s, th->proc);
	uint32_t need;
	uint64_t sp;
	int e;

	e = s->arch->regs_read(th->tid, &r->regs);
	if (e) {
		s->st->failed++;
		xp_debug(2, "cannot read registers of tid %d: %s", (int)th->tid, strerror(-e));
		return NULL;
	}
	/*
	 * A stop in the middle of a blocking call makes the kernel continue it
	 * as restart_syscall once resumed: remember which call that is.
	 */
	if ((r->regs.flags & XP_REGS_SYSCALL_RESTART) &&
	    r->regs.sys_nr != (uint32_t)s->arch->syscall.nr_restart)
		x->restart_nr = r->regs.sys_nr;
	if (smp_stop_in_call(s, x, &r->regs)) {
		s->st->dropped_blocked++;
		return NULL;
	}
	sp = xp_regs_get(&r->regs, s->arch->dwarf.sp);
	need = stackcopy_need(&x->copy, sp, s->o->stack_bytes);
	r->len = stackcopy_take(&p->mem, r->copy, copy_size(s, th, need), sp, need);
	r->proc = th->proc;
	r->img = smp_image_get(p->img);
	r->tid = th->tid;
	r->t = t;
	r->weight = weight;
	r->sys_nr = x->blocked_nr;
	r->sys_sp = (int64_t)x->last_sys_sp;
	r->sys_pc = (int64_t)x->last_sys_pc;
	s->st->stack_bytes_copied += r->len;
	s->queue.nq++;
	return r;
}

void smp_drop_last(struct sampler *s, struct raw_sample *r)
{
	struct smp_queue *q = &s->queue;

	if (q->nq > q->head && r == &q->q[q->nq - 1]) {
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
		top = 1;
	}
	return top + unwind_stack(q->unw, s->arch, &r->regs, m, &r->img->as, q->pcs + top,
				  q->flags + top, s->o->max_depth + 1, left);
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
	x->last_stack_id = r->sys_nr >= 0 ? id : 0;
	x->last_stack_part = s->emit.parts;
	x->last_sys_nr = r->sys_nr;
	x->last_sys_sp = (uint64_t)r->sys_sp;
	x->last_sys_pc = (uint64_t)r->sys_pc;
}

static void unwind_one(struct sampler *s, struct raw_sample *r)
{
	struct smp_queue *q = &s->queue;
	struct memread m;
	unsigned int nr;
	uint64_t id;
	bool is_new, left;

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
	id = stacktab_intern(&q->stacks, q->pcs, q->flags, nr, &is_new);
	smp_image_note_stack(s, r->proc, r->img, id, q->pcs, q->flags, nr);
	note_walk(s, r, &m, id);
	if (is_new)
		s->st->stacks++;
	emit_stack(s, id, q->pcs, q->flags, nr, is_new);
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
