/* SPDX-License-Identifier: MIT */
/*
 * The emitter (see sampler_int.h): the one file of the recorder that
 * writes the data file.  It owns the writer, the failure of a write (which
 * ends the recording), every "already written" mark (a process's or
 * thread's record, a thread's name; a stack's and an interpreter code
 * object's are the writer's own) and the parts of a --switch-output
 * recording.  What an ICODE record says of a code object is kept here for
 * the recording (emit_code): a stack is written again to each part that
 * uses it, its codes with it, when the image that read them may be gone.
 *
 * --switch-output: a long recording in parts, each one data file that
 * reports alone (perf record's option of the same name).  When a part is
 * due (its length or size reached), the emitter writes into it what a
 * report of it needs and the recording has so far kept for the end: the
 * JIT symbols of its pcs, its statistics.  The command's switch_fn then
 * closes it and opens the next, which starts with what is known of every
 * live process: its process and thread records and the executable
 * mappings of its image ([vdso] image included), as at the start of an
 * attach.  Stacks are written to each part as its samples use them (the
 * emitter keeps which ones each file has), so a stack seen in an earlier
 * part is written again in the first part that uses it.  Times stay those of the whole
 * recording, so that parts reported together, or with --time, line up.
 */
#include "sampler_int.h"
#include "datafile.h"
#include "err.h"
#include "interp.h"
#include "jitmap.h"
#include "module.h"
#include "procfs.h"
#include "u64set.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void emit_init(struct sampler *s, struct df_writer *w)
{
	s->emit.w = w;
}

void emit_release(struct sampler *s)
{
	unsigned long i;

	for (i = 0; i < s->emit.codes_alloc; i++) {
		free(s->emit.codes[i].name);
		free(s->emit.codes[i].file);
	}
	free(s->emit.codes);
	xp_u64set_release(&s->emit.stacks);
	free(s->emit.acc);
}

/* @ret of a write: a failure ends the recording.  Whether it failed. */
static bool failed(struct sampler *s, int ret)
{
	if (ret)
		s->emit.failed = true;
	return s->emit.failed;
}

void emit_process(struct sampler *s, struct xp_process *p, uint32_t flags, uint64_t t)
{
	struct smp_proc *x = smp_proc_of(s, p);
	struct addrspace *as = &x->img->as;
	char read_exe[PATH_MAX];
	const char *exe = x->img->exe;

	if (s->emit.failed)
		return;
	if (x->img->maps_hidden)
		flags |= DF_PROC_NO_MAPS;
	/* Once per image: a fork's child has its parent's (smp_image_fork). */
	if (!exe) {
		procfs_exe(p->pid, read_exe, sizeof(read_exe));
		exe = read_exe;
		if (read_exe[0])
			x->img->exe = xp_strdup(read_exe);
	}
	addrspace_find_fs(as); /* the pid the process sees: as->nspid */
	if (!failed(s, df_write_process_ns(s->emit.w, t, p->pid, p->ppid, flags, p->comm, exe,
					   as->nspid)))
		x->em.described = true;
}

void emit_thread(struct sampler *s, struct xp_thread *th, uint64_t t, const char *comm)
{
	struct emit_thread *e = &smp_thread_of(th)->em;

	if (comm)
		snprintf(e->comm, sizeof(e->comm), "%s", comm);
	else
		tracer_comm(th, e->comm, sizeof(e->comm));
	if (!failed(s, df_write_thread(s->emit.w, t, th->proc->pid, th->tid, e->comm)))
		e->described = true;
}

void emit_thread_gone(struct sampler *s, pid_t pid, pid_t tid, uint64_t t, const char *comm)
{
	failed(s, df_write_thread(s->emit.w, t, pid, tid, comm));
}

/*
 * Threads are described at their first stop, usually before they name
 * themselves (pthread_setname_np): once a second, and at the end, write a
 * new THREAD record for every thread whose name changed (the report takes
 * the name in force at each sample).
 */
static void refresh_name(struct sampler *s, struct xp_thread *th, uint64_t t)
{
	struct emit_thread *e = &smp_thread_of(th)->em;
	char comm[sizeof(e->comm)];

	if (!e->described || th->state == THREAD_NEW)
		return;
	tracer_comm(th, comm, sizeof(comm));
	if (!comm[0] || !strcmp(comm, e->comm))
		return;
	memcpy(e->comm, comm, sizeof(comm));
	failed(s, df_write_thread(s->emit.w, t, th->proc->pid, th->tid, comm));
}

void emit_check_name(struct sampler *s, struct xp_thread *th, uint64_t t)
{
	struct emit_thread *e = &smp_thread_of(th)->em;

	/*
	 * Most threads name themselves as they start: look at their first
	 * samples, with the file opened once for them (an open costs ~4 us, a
	 * read ~1, and a forking server makes hundreds of threads a second).
	 */
	if (e->name_checks >= 3)
		return;
	if (!e->name_checks++)
		tracer_comm_open(th);
	refresh_name(s, th, t);
	if (e->name_checks == 3)
		tracer_comm_close(th);
}

void emit_thread_names(struct sampler *s)
{
	struct xp_thread *th;
	unsigned long i = 0;

	while ((th = tracer_thread_at(s->tr, &i)))
		refresh_name(s, th, smp_now(s));
}

/* The executable mapping @m of @pid, at @t; the [vdso]'s image with it. */
static void write_map(struct sampler *s, pid_t pid, const struct xp_map *m, uint64_t t)
{
	const uint8_t *id = NULL, *image;
	struct xp_file_id fid = {0};
	size_t idlen = 0, len;

	if (m->mod) {
		/* Without a GNU build-id: the Go build ID, or the file's SHA-256 (fileid.h). */
		if (!(idlen = module_build_id(m->mod, &id)))
			module_file_id(m->mod, &fid);
		/* The vDSO is no file: its image goes into the data file (each one once). */
		if (module_is_vdso(m->mod) && (len = module_image(m->mod, &image)) &&
		    len <= DF_VDSO_MAX && image != s->emit.vdso_written) {
			if (failed(s, df_write_vdso(s->emit.w, image, len)))
				return;
			s->emit.vdso_written = image;
		}
	}
	failed(s, df_write_mapping_id(s->emit.w, t, pid, m->start, m->end, m->offset, m->prot,
				      m->path, id, idlen, &fid));
}

void emit_new_maps(struct sampler *s, pid_t pid, const struct smp_image *img, uint64_t t)
{
	size_t i;

	for (i = 0; i < img->as.nr && !s->emit.failed; i++)
		if (img->as.maps[i].fresh && (img->as.maps[i].prot & XP_PROT_EXEC))
			write_map(s, pid, &img->as.maps[i], t);
}

void emit_code(struct sampler *s, unsigned int kind, const struct interp_code *c)
{
	struct emitter *e = &s->emit;
	unsigned long old = e->codes_alloc;
	struct emit_code *k;

	if (!c)
		return;
	xp_grow((void **)&e->codes, &e->codes_alloc, (unsigned long)c->id + 1, sizeof(*e->codes));
	memset(e->codes + old, 0, (e->codes_alloc - old) * sizeof(*e->codes));
	k = &e->codes[c->id];
	if (k->kind)
		return;
	*k = (struct emit_code){kind, c->first_line, xp_strdup(c->name), xp_strdup(c->file)};
	s->st->interp_codes++;
}

/* The ICODE records of the codes stack @pcs names, which this file may lack (it skips repeats). */
static void write_codes(struct sampler *s, const uint64_t *pcs, const uint8_t *flags, uint32_t nr)
{
	const struct emitter *e = &s->emit;
	const struct emit_code *k;
	uint64_t id;
	uint32_t i;

	for (i = 0; i < nr && !e->failed; i++) {
		if (!(flags[i] & XP_FRAME_INTERP))
			continue;
		id = pcs[i] >> 32;
		k = id < e->codes_alloc ? &e->codes[id] : NULL;
		if (k && k->kind)
			failed(s,
			       df_write_icode(e->w, id, k->kind, k->first_line, k->name, k->file));
	}
}

void emit_stack(struct sampler *s, uint64_t id, const uint64_t *pcs, const uint8_t *flags,
		uint32_t nr)
{
	if (!xp_u64set_add(&s->emit.stacks, id))
		return;
	write_codes(s, pcs, flags, nr);
	failed(s, df_write_stack(s->emit.w, id, pcs, flags, nr));
}

void emit_sample(struct sampler *s, uint64_t t, pid_t pid, pid_t tid, uint64_t stack_id,
		 uint64_t weight)
{
	if (failed(s, df_write_sample(s->emit.w, t, pid, tid, stack_id, weight)))
		return;
	s->st->samples++;
	s->st->weight_total += weight;
}

/* The accrual of (@pid, @id): its slot, free (pid 0) if there is none yet. */
static struct emit_accrual *accrual_of(struct emitter *e, pid_t pid, uint64_t id)
{
	size_t j = (size_t)xp_mix64(id ^ ((uint64_t)(uint32_t)pid << 40)) & (e->acc_cap - 1);

	while (e->acc[j].pid && (e->acc[j].pid != pid || e->acc[j].stack_id != id))
		j = (j + 1) & (e->acc_cap - 1);
	return &e->acc[j];
}

void emit_accrue(struct sampler *s, uint64_t t, pid_t pid, pid_t tid, uint64_t stack_id,
		 bool any_pid, uint64_t weight)
{
	struct emitter *e = &s->emit;
	struct emit_accrual *a;
	pid_t sample_pid = pid;

	if (any_pid)
		pid = -1; /* one accrual for all processes */
	if ((e->acc_nr + 1) * 4 > e->acc_cap * 3) {
		struct emit_accrual *old = e->acc;
		size_t cap = e->acc_cap, i;

		e->acc_cap = cap ? cap * 2 : 64;
		e->acc = xp_calloc(e->acc_cap, sizeof(*e->acc));
		for (i = 0; i < cap; i++)
			if (old[i].pid)
				*accrual_of(e, old[i].pid, old[i].stack_id) = old[i];
		free(old);
	}
	a = accrual_of(e, pid, stack_id);
	if (!a->pid) {
		*a = (struct emit_accrual){.pid = pid, .stack_id = stack_id};
		e->acc_nr++;
	}
	a->sample_pid = sample_pid;
	a->tid = tid;
	a->t = t;
	a->weight += weight;
	if (a->weight >= s->period) {
		emit_sample(s, a->t, a->sample_pid, a->tid, a->stack_id, a->weight);
		a->weight = 0;
	}
}

void emit_accrued(struct sampler *s)
{
	struct emitter *e = &s->emit;
	size_t i;

	for (i = 0; i < e->acc_cap; i++)
		if (e->acc[i].pid && e->acc[i].weight)
			emit_sample(s, e->acc[i].t, e->acc[i].sample_pid, e->acc[i].tid,
				    e->acc[i].stack_id, e->acc[i].weight);
	if (e->acc_cap)
		memset(e->acc, 0, e->acc_cap * sizeof(*e->acc));
	e->acc_nr = 0;
}

void emit_exit(struct sampler *s, uint64_t t, pid_t pid, pid_t tid, int status)
{
	failed(s, df_write_exit(s->emit.w, t, pid, tid, status));
}

void emit_mark(struct sampler *s, uint64_t t, uint32_t kind, const char *name)
{
	failed(s, df_write_mark(s->emit.w, t, kind, name));
}

static int jit_sym(void *ctx, pid_t pid, uint64_t start, uint64_t size, const char *name,
		   uint64_t t)
{
	return df_write_jitsym(ctx, pid, start, size, name, t);
}

static int jit_line(void *ctx, pid_t pid, uint64_t start, uint64_t end, const char *file,
		    uint32_t line)
{
	return df_write_jitline(ctx, pid, start, end, file, line);
}

/*
 * Only what the process itself sampled is looked at: a process without
 * JIT code costs nothing here, one with some costs its own samples, not
 * the recording's.
 */
void emit_jit(struct sampler *s, struct xp_process *p)
{
	struct smp_proc *x = smp_proc_of(s, p);
	const struct jitmap_sink sink = {s->emit.w, jit_sym, jit_line};
	const uint64_t *pcs;
	size_t nr;

	if (!x->ncode || !p->execed || s->emit.failed)
		return;
	pcs = smp_image_code_pcs(s, p, &nr);
	failed(s, jitmap_collect(&sink, &x->jit, p->pid, &x->img->as, pcs, nr, s->start_mono) < 0
		      ? -1
		      : 0);
}

void emit_flush(struct sampler *s)
{
	failed(s, df_writer_flush(s->emit.w));
}

/* A statistic record's name and value. */
struct emit_stat {
	const char *name;
	uint64_t v;
};

/* The rows at the end of emit_stats' table that only -g check writes. */
#define EMIT_CHECK_STATS 5

/*
 * The statistics a part needs to be reported alone: rate, mode, and its
 * sampling time, up to @sampled_ns of the recording's (smp_sampled_ns).
 */
static void part_stats(struct sampler *s, uint64_t sampled_ns)
{
	failed(s, df_write_stat(s->emit.w, "freq_hz", s->o->freq_hz));
	failed(s, df_write_stat(s->emit.w, "mode_wall", s->o->mode == SAMPLER_WALL));
	failed(s, df_write_stat(s->emit.w, "duration_ns", sampled_ns - s->emit.part_sampled));
}

void emit_stats(struct sampler *s)
{
	const struct sampler_stats *st = s->st;
	const struct unwind_stats *us = unwinder_stats(s->queue.unw);
	const struct emit_stat stats[] = {
	    {"ticks", st->ticks},
	    {"late_ticks", st->late_ticks},
	    {"interrupts", st->interrupts},
	    {"samples", st->samples},
	    {"failed", st->failed},
	    {"reused_blocked", st->reused},
	    {"waiting_stops", st->waiting_stops},
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
	    {"exit_ns", st->exit_ns},
	    {"origins", st->origins},
	    {"maps_reads", st->maps_reads},
	    {"stat_reads", st->stat_reads},
	    {"tree_cpu_ns", st->tree_cpu_ns},
	    {"stack_bytes_copied", st->stack_bytes_copied},
	    {"irq_same_cpu", st->irq_same_cpu},
	    {"cpu_moves", st->cpu_moves},
	    {"path_own", st->path_own},
	    {"path_any", st->path_any},
	    {"path_late", st->path_late},
	    {"irq_path_any", st->irq_path_any},
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
	    {"interp_samples", st->interp_samples},
	    {"interp_bytes", st->interp_bytes},
	    {"interp_unplaced", st->interp_unplaced},
	    {"interp_codes", st->interp_codes},
	    {"interp_misses", st->interp_misses},
	    {"interp_broken", st->interp_broken},
	    /* -g check: how often libunwind disagreed with the native walk (unwind.h). */
	    {"unwind_checked", us->check_stacks},
	    {"unwind_differ", us->check_differ},
	    {"unwind_differ_pc", us->check_pc},
	    {"unwind_differ_libunwind_shorter", us->check_lu_shorter},
	    {"unwind_differ_native_shorter", us->check_native_shorter},
	};
	size_t i, n = sizeof(stats) / sizeof(stats[0]) - (us->check_stacks ? 0 : EMIT_CHECK_STATS);

	s->st->unwind_checked = us->check_stacks;
	s->st->unwind_differ = us->check_differ;
	part_stats(s, st->duration_ns);
	for (i = 0; i < n && !s->emit.failed; i++)
		failed(s, df_write_stat(s->emit.w, stats[i].name, stats[i].v));
}

bool emit_part_due(const struct sampler *s, uint64_t now)
{
	const struct emitter *e = &s->emit;

	if (!s->o->switch_fn || e->switch_failed)
		return false;
	if (s->loop.switch_now)
		return true;
	if (s->o->switch_ns && now - e->part_start >= s->o->switch_ns)
		return true;
	return s->o->switch_bytes && df_writer_bytes(e->w) >= s->o->switch_bytes;
}

/* What the part needs from the end of recording: JIT symbols, statistics. */
static void end_part(struct sampler *s, uint64_t now)
{
	struct tracer *t = s->tr;
	unsigned long i;

	emit_thread_names(s);
	emit_accrued(s);
	for (i = 0; i < t->nprocs; i++)
		if (!t->procs[i]->exited)
			emit_jit(s, t->procs[i]);
	part_stats(s, smp_sampled_ns(s, now));
	failed(s, df_write_stat(s->emit.w, "part", s->emit.parts + 1));
}

/* The next part begins as an attach does: every live process and thread described. */
static void begin_part(struct sampler *s, uint64_t now)
{
	struct tracer *t = s->tr;
	unsigned long i, j;

	for (i = 0; i < t->nprocs; i++) {
		struct xp_process *p = t->procs[i];
		struct smp_proc *x = smp_proc_of(s, p);

		if (p->exited || !x->em.described)
			continue;
		emit_process(s, p, DF_PROC_ATTACHED, now);
		for (j = 0; j < x->img->as.nr && !s->emit.failed; j++)
			if (x->img->as.maps[j].prot & XP_PROT_EXEC)
				write_map(s, p->pid, &x->img->as.maps[j], now);
	}
	for (i = 0; i < t->nthreads; i++) {
		struct xp_thread *th = t->threads[i];
		struct emit_thread *e = &smp_thread_of(th)->em;

		if (!th->proc->exited && e->described)
			emit_thread(s, th, now, e->comm);
	}
	/* The phase under way and a pause of sampling go on (report --phase of this part). */
	if (s->loop.phase[0])
		emit_mark(s, s->loop.phase_t, DF_MARK_PHASE, s->loop.phase);
	if (!s->loop.enabled)
		emit_mark(s, now, DF_MARK_DISABLE, "");
}

void emit_switch_part(struct sampler *s, uint64_t now)
{
	struct emitter *e = &s->emit;
	struct df_writer *w;

	end_part(s, now);
	if (e->failed)
		return;
	w = s->o->switch_fn(s->o->switch_ctx, e->w);
	if (!w) {
		e->switch_failed = true; /* go on in the same file */
		return;
	}
	e->w = w;
	xp_u64set_release(&e->stacks); /* the new file has none */
	e->vdso_written = NULL;
	e->parts++;
	e->part_start = now;
	e->part_sampled = smp_sampled_ns(s, now);
	begin_part(s, now);
}
