/* SPDX-License-Identifier: MIT */
/*
 * --switch-output: a long recording in parts, each one data file that
 * reports alone (perf record's option of the same name).  When a part is
 * due (its length or size reached), the sampler writes into it what a
 * report of it needs and the recording has so far kept for the end: the
 * queued samples, the JIT symbols of its pcs, its statistics; noted
 * files go to the capture.  The command's switch_fn then closes it and
 * opens the next, which starts with what is known of every live process:
 * its process and thread records and its mappings ([vdso] image
 * included), as at the start of an attach.  Stacks are written to each
 * part as its samples use them (the writer skips repeats), so a stack
 * seen in an earlier part is written again in the first part that uses
 * it.  Times stay those of the whole recording, so that parts reported
 * together, or with --time, line up.
 */
#include "capture.h"
#include "datafile.h"
#include "sampler_int.h"
#include "tracer.h"

bool smp_part_due(const struct sampler *s, uint64_t now)
{
	if (!s->o->switch_fn || s->switch_failed)
		return false;
	if (s->switch_now)
		return true;
	if (s->o->switch_ns && now - s->part_start >= s->o->switch_ns)
		return true;
	return s->o->switch_bytes && df_writer_bytes(s->w) >= s->o->switch_bytes;
}

/* What the part needs from the end of recording: JIT symbols, statistics. */
static void end_part(struct sampler *s, uint64_t now)
{
	struct tracer *t = s->tr;
	unsigned long i;

	smp_drain_queue(s);
	smp_refresh_names(s);
	for (i = 0; i < t->nprocs; i++) {
		if (t->procs[i]->exited)
			continue;
		smp_collect_jit(s, t->procs[i]->pid);
		capture_note(&s->cap, &smp_proc_of(s, t->procs[i])->as, &s->stacks);
	}
	smp_write_part_stats(s, smp_sampled_ns(s, now));
	smp_check_write(s, df_write_stat(s->w, "part", s->parts + 1));
}

/* The next part begins as an attach does: every live process and thread described. */
static void begin_part(struct sampler *s, uint64_t now)
{
	struct tracer *t = s->tr;
	unsigned long i, j;

	for (i = 0; i < t->nprocs; i++) {
		struct xp_process *p = t->procs[i];
		struct smp_proc *sp = smp_proc_of(s, p);

		if (p->exited || !sp->reported)
			continue;
		for (j = 0; j < sp->as.nr; j++)
			sp->as.maps[j].reported = false;
		smp_report_process(s, p, DF_PROC_ATTACHED, now);
	}
	for (i = 0; i < t->nthreads; i++) {
		struct xp_thread *th = t->threads[i];
		struct smp_thread *x = smp_thread_of(th);

		x->last_stack_id = 0; /* a blocked thread's stack is walked again */
		if (!th->proc->exited && x->reported)
			smp_report_thread(s, th, now, x->comm);
	}
	/* The phase under way and a pause of sampling go on (report --phase of this part). */
	if (s->loop.phase[0])
		smp_check_write(s,
				df_write_mark(s->w, s->loop.phase_t, DF_MARK_PHASE, s->loop.phase));
	if (!s->loop.enabled)
		smp_check_write(s, df_write_mark(s->w, now, DF_MARK_DISABLE, ""));
}

void smp_switch_part(struct sampler *s, uint64_t now)
{
	struct df_writer *w;

	end_part(s, now);
	if (s->write_failed)
		return;
	w = s->o->switch_fn(s->o->switch_ctx, s->w);
	if (!w) {
		s->switch_failed = true; /* go on in the same file */
		return;
	}
	s->w = w;
	s->switch_now = false;
	s->parts++;
	s->part_start = now;
	s->part_sampled = smp_sampled_ns(s, now);
	begin_part(s, now);
}
