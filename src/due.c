/* SPDX-License-Identifier: MIT */
/*
 * Which threads a tick samples, and what each sample weighs (see
 * sampler_int.h): the due rule of cputime.h applied to a live thread's
 * /proc counters (schedstat, syscall), the blocked thread counted without
 * a stop in wall mode, and the stop that found a thread at a system call
 * its CPU time has nothing to do with.  The loop that acts on these is
 * sampler.c's; the CPU each due thread is interrupted from is
 * interrupt.c's.
 */
#include "sampler_int.h"
#include "datafile.h"
#include "procfs.h"
#include "err.h"

#include <errno.h>

/*
 * CPU mode: whether the stop found @th at a system call that has nothing to
 * do with where its CPU time went; such a stop gives no sample.
 */
bool smp_stop_in_call(struct sampler *s, struct smp_thread *x, const struct xp_regs *regs)
{
	if (s->o->mode != SAMPLER_CPU)
		return false;
	/*
	 * It blocked in a system call between the tick and the stop.  Its CPU
	 * time was spent before, elsewhere: keep it for the next sample that
	 * finds it running, as the tick does for a thread already blocked.
	 */
	if (regs->flags & XP_REGS_SYSCALL_RESTART)
		return true;
	/*
	 * The same once it is woken, but stopped before it ran any code of its
	 * own: it is at the call's exit, not where its CPU time went (256
	 * threads woken from a barrier, stopped while they waited for a CPU,
	 * put a quarter of the samples at the barrier).  A call that did not
	 * block (one that uses CPU in the kernel) is sampled where it is.
	 */
	if ((regs->flags & XP_REGS_SYSCALL_EXIT) && x->blocked_since) {
		x->blocked_since = false;
		return true;
	}
	return false;
}

/*
 * schedstat of @th (procfs.h), opened at its first use, into @ss; the
 * growth of its run-queue wait since the last read is added to the
 * statistics.  0, or -1 if unreadable.
 */
static int read_schedstat(struct sampler *s, struct xp_thread *th, struct procfs_sched *ss)
{
	struct smp_thread *x = smp_thread_of(th);

	if (x->schedstat_fd == SMP_FD_LAZY) {
		x->schedstat_fd = procfs_open_task(th->proc->pid, th->tid, "schedstat");
		/*
		 * Without it the thread is sampled at every tick, weighing a
		 * period (thread_due): wall-clock samples in a CPU profile.  The
		 * soft limit is raised to the hard one already (ctl_raise_nofile).
		 */
		if (x->schedstat_fd < 0 && (errno == EMFILE || errno == ENFILE) &&
		    !s->warned_nofile) {
			s->warned_nofile = true;
			xp_warn("out of open files at %lu threads: the threads beyond are "
				"sampled at every tick, as in wall mode (raise the hard limit, "
				"ulimit -Hn)",
				(unsigned long)s->tr->threads_seen);
		}
	}
	if (procfs_schedstat(x->schedstat_fd, ss))
		return -1;
	if (x->wait_ns && ss->wait_ns > x->wait_ns)
		s->st->target_wait_ns += ss->wait_ns - x->wait_ns;
	x->wait_ns = ss->wait_ns ? ss->wait_ns : 1;
	return 0;
}

/* Where a thread is when it is not known to be on a CPU (off_cpu_state). */
enum off_cpu {
	OFF_UNKNOWN, /* its status is unreadable */
	OFF_RUNNING, /* on a CPU after all */
	OFF_PREEMPTED, /* waits for a CPU, preempted since it last blocked */
	OFF_WOKEN,     /* waits for a CPU after a block since the last look */
};

/*
 * Whether @th, not blocked, runs now or waits for a CPU, from its status
 * (procfs_switches): it runs exactly when it got a CPU (@count times,
 * schedstat read just before) once more than it left one.  A wait after
 * a voluntary switch beyond the stops of ours since the last look is a
 * wait after a block; so is any wait at the first look (it is asked only
 * of threads seen blocked: with 1000 threads in a 2 s run, taking them
 * as preempted put 38% of the samples in the sleep, 12% this way).  A switch
 * between the two reads makes a running thread look as if it waited.
 * The file costs ~7 us to read, against ~0.5 us for schedstat.
 */
static enum off_cpu off_cpu_state(struct sampler *s, struct xp_thread *th, uint64_t count)
{
	struct smp_thread *x = smp_thread_of(th);
	uint64_t vol, invol;
	bool woken;

	if (x->status_fd == SMP_FD_LAZY)
		x->status_fd = procfs_open_task(th->proc->pid, th->tid, "status");
	if (procfs_switches(x->status_fd, &vol, &invol))
		return OFF_UNKNOWN;
	s->st->running_checks++;
	woken = !x->vol_known || vol > x->vol_seen + x->stops_since;
	x->vol_known = true;
	x->vol_seen = vol;
	x->stops_since = 0;
	if (count == vol + invol + 1) {
		s->st->running_found++;
		return OFF_RUNNING;
	}
	return woken ? OFF_WOKEN : OFF_PREEMPTED;
}

/*
 * Weight of a sample of @th taken now, and whether it is due at all
 * (cputime.h); with *@unsure, only if it runs now (its times scheduled in
 * into *@count).
 */
static bool thread_due(struct sampler *s, struct xp_thread *th, uint64_t now, uint64_t *weight,
		       bool *unsure, uint64_t *count)
{
	struct smp_thread *x = smp_thread_of(th);
	struct procfs_sched ss;

	*unsure = false;
	if (s->o->mode == SAMPLER_WALL) {
		*weight = cputime_wall_weight(&x->cpu, now, s->period);
		return true;
	}
	x->cpu.on_cpu = false;
	if (read_schedstat(s, th, &ss)) {
		*weight = s->period;
		return x->schedstat_fd < 0;
	}
	*count = ss.count;
	if (cputime_due(&x->cpu, &ss, now, s->period, s->o->kind == SAMPLER_ATTACH, weight))
		return true;
	*unsure = cputime_due_if_running(&x->cpu, s->period, weight);
	return *unsure;
}

/*
 * CPU mode, in the stop of sample @r of @th, which is resumed at about @t:
 * the exact weight, or no sample for a thread that hardly ran
 * (cputime_settle).
 */
void smp_settle_weight(struct sampler *s, struct xp_thread *th, struct raw_sample *r, uint64_t t)
{
	struct smp_thread *x = smp_thread_of(th);
	struct procfs_sched ss;

	x->cpu.resume_known = false;
	if (read_schedstat(s, th, &ss))
		return;
	if (!cputime_settle(&x->cpu, &ss, s->period, t, &r->weight)) {
		s->nq--; /* @r is the last sample queued */
		s->st->dropped_idle++;
		return;
	}
	x->blocked_since = false;
}

/*
 * Is @th blocked in a system call?  Its syscall file (procfs.h) cannot be
 * read usefully once we have stopped the thread.  The call's number, -1 if
 * not blocked, PROCFS_GONE if the thread has exited.
 */
static int64_t read_blocked(struct xp_thread *th, uint64_t *sp, uint64_t *pc)
{
	struct smp_thread *x = smp_thread_of(th);

	if (x->syscall_fd < 0) {
		x->syscall_fd = procfs_open_task(th->proc->pid, th->tid, "syscall");
		if (x->syscall_fd < 0)
			return -1;
	}
	return procfs_syscall(x->syscall_fd, sp, pc);
}

/*
 * A thread still blocked in the same system call at the same SP and PC as at
 * its last sample has the same stack: count it without stopping it.
 */
static bool sample_blocked(struct sampler *s, struct xp_thread *th, uint64_t now, uint64_t w)
{
	struct smp_thread *x = smp_thread_of(th);
	uint64_t sp = 0, pc = 0;
	int64_t nr = read_blocked(th, &sp, &pc);

	if (nr == PROCFS_GONE)
		return true; /* its exit waits to be handled: nothing to sample */
	/*
	 * Our own earlier stop turned the sleep into restart_syscall: it is
	 * the call that stop interrupted (which the tick may not have seen
	 * blocked: one entered between the tick and the stop), or the same
	 * block as the last sample's.
	 */
	if (nr == s->arch->syscall.nr_restart && x->restart_nr >= 0)
		nr = x->restart_nr;
	else if (nr == s->arch->syscall.nr_restart && x->last_sys_nr >= 0 && sp == x->last_sys_sp &&
		 pc == x->last_sys_pc)
		nr = x->last_sys_nr;
	x->blocked_nr = nr;
	if (nr < 0 || !x->last_stack_id || nr != x->last_sys_nr || sp != x->last_sys_sp ||
	    pc != x->last_sys_pc) {
		x->last_sys_sp = sp;
		x->last_sys_pc = pc;
		return false;
	}
	x->cpu.wall_sampled = now;
	if (smp_check_write(
		s, df_write_sample(s->w, now, th->proc->pid, th->tid, x->last_stack_id, w)))
		return true;
	s->st->samples++;
	s->st->reused++;
	s->st->weight_total += w;
	return true;
}

/* Whether a tick at @now should interrupt @th, with the sample's weight. */
bool smp_want_sample(struct sampler *s, struct xp_thread *th, uint64_t now, uint64_t *w)
{
	struct smp_thread *x = smp_thread_of(th);
	uint64_t sp, pc, count = 0;
	enum off_cpu where = OFF_UNKNOWN;
	bool unsure;
	int64_t nr;

	if (th->state != THREAD_RUNNING || x->sample_wanted || !th->proc->execed)
		return false;
	if (!thread_due(s, th, now, w, &unsure, &count))
		return false;
	if (s->o->mode == SAMPLER_WALL && sample_blocked(s, th, now, *w))
		return false;
	/* Blocking switches a thread out: one never switched out is not blocked. */
	nr = s->o->mode == SAMPLER_CPU && !x->cpu.on_cpu ? read_blocked(th, &sp, &pc) : -1;
	/*
	 * It has exited: its exit is among the stops not handled yet (a target
	 * that ends thousands of threads a second): an interrupt would only
	 * fail.
	 */
	if (nr == PROCFS_GONE)
		return false;
	if (nr >= 0) {
		/*
		 * It ran, then blocked: the CPU time was spent elsewhere, not in
		 * the system call it sits in now.  Keep the time for the next
		 * sample that finds it running.
		 */
		x->blocked_since = true;
		x->blocks_seen = true;
		cputime_not_running(&x->cpu);
		return false;
	}
	/*
	 * Not blocked, not known to be on a CPU: it may wait for one.  A wait
	 * after a block ends at the call's exit, where an interrupt would stop
	 * it, not where its CPU time went: 1000 threads that run ~100 us
	 * between 1 ms sleeps, on 2 CPUs, put 93% of their samples in
	 * clock_nanosleep.  Its time waits for a tick that finds it running.
	 * A wait after a preemption stops where it was preempted, as good a
	 * place as any.  The status read is only for threads seen blocked
	 * before, where tasks outnumber CPUs (with idle ones, a woken thread
	 * gets a CPU at once), and for those whose progress is known only if
	 * they run (cputime_due_if_running).
	 */
	if (unsure || (s->o->mode == SAMPLER_CPU && !x->cpu.on_cpu && x->blocks_seen &&
		       smp_others_running(s) > s->place.nr_cpus))
		where = off_cpu_state(s, th, count);
	if (where == OFF_WOKEN || (unsure && where != OFF_RUNNING && where != OFF_UNKNOWN)) {
		x->blocked_since |= where == OFF_WOKEN;
		cputime_not_running(&x->cpu);
		return false;
	}
	if (where == OFF_RUNNING)
		x->cpu.on_cpu = true;
	return true;
}

/*
 * Sampling starts again after a pause: what each thread ran meanwhile is
 * not in its next sample (cputime_rebase).
 */
void smp_rebase_threads(struct sampler *s, uint64_t now)
{
	struct xp_thread *th;
	unsigned long i = 0;
	struct procfs_sched ss = {0};

	while ((th = tracer_thread_at(s->tr, &i))) {
		struct smp_thread *x = smp_thread_of(th);

		if (s->o->mode == SAMPLER_CPU && read_schedstat(s, th, &ss))
			continue; /* unreadable: sampled at every tick anyway (thread_due) */
		cputime_rebase(&x->cpu, ss.cpu_ns, now, s->period);
	}
}
