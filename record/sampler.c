/* SPDX-License-Identifier: MIT */
/*
 * The sampling loop (see sampler.h).  While a thread is stopped we do only
 * what needs the stop: registers and one bulk stack copy.  Unwinding,
 * interning and writing happen after it runs again, from a queue of raw
 * samples, once no interrupt is outstanding.
 */
#include "sampler_int.h"
#include "clock.h"
#include "control.h"
#include "ctl.h"
#include "datafile.h"
#include "err.h"
#include "procfs.h"
#include "schedule.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

/* Draw the time of tick s->loop.next_k (s->loop.armed_at), for arm_planned. */
static void plan_tick(struct sampler *s)
{
	s->loop.tick_off =
	    schedule_tick_offset(s->period, s->loop.tick_off, schedule_rand(&s->loop.rnd));
	s->loop.armed_at = s->start_mono + s->loop.next_k * s->period + s->loop.tick_off;
}

/* Arm the timer for CLOCK_MONOTONIC ns @at, 0: disarm it. */
static void set_timer(struct sampler *s, uint64_t at)
{
	int e = ctl_timerfd_at(s->loop.timerfd, at);

	if (e)
		xp_warn("cannot arm the sampling timer: %s", strerror(-e));
}

/* Arm the timer for the planned tick. */
static void arm_planned(struct sampler *s)
{
	set_timer(s, s->loop.armed_at);
}

/* Arm the timer for tick s->loop.next_k. */
static void arm_timer(struct sampler *s)
{
	plan_tick(s);
	arm_planned(s);
}

static void collect_stops(struct sampler *s, struct xp_thread **ths, unsigned long n, uint64_t ns);

/*
 * Interrupt the threads due at this tick.  Where the controller visits
 * their CPUs one after the other (interrupt.c), it takes the samples of
 * one CPU's threads before it leaves for the next when s->irq.collect.
 */
static void tick(struct sampler *s)
{
	struct xp_thread *ths[SAMPLER_COLLECT_MAX];
	uint64_t now = smp_now(s);
	unsigned long n;

	s->st->ticks++;
	smp_find_due(s, now);
	n = smp_interrupt_due(s, now, ths);
	while (smp_irq_more(s)) {
		if (s->irq.collect && n)
			collect_stops(s, ths, n, SAMPLER_COLLECT_NS);
		n = smp_irq_visit(s, now, ths);
	}
}

/* Leave work for the loop (struct smp_work). */
static struct smp_work *add_work(struct sampler *s, enum smp_work_kind kind,
				 struct xp_process *proc, pid_t tid, uint64_t t)
{
	struct smp_loop *l = &s->loop;
	struct smp_work *w;

	xp_grow((void **)&l->work, &l->work_alloc, l->nwork + 1, sizeof(*l->work));
	w = &l->work[l->nwork++];
	*w = (struct smp_work){.kind = kind, .proc = proc, .tid = tid, .t = t};
	if (proc)
		w->pid = proc->pid;
	/* Its maps as they are after the event, not after a later exec. */
	if (kind == SMP_WORK_PROCESS)
		w->img = smp_image_get(smp_proc_of(s, proc)->img);
	return w;
}

/*
 * A thread or process exited (@ev) at @t: the end of the root ends the
 * recording; its record, and a process's JIT symbols, are work for later.
 */
static void handle_exit(struct sampler *s, const struct tracer_event *ev, uint64_t t,
			const struct rusage *ru)
{
	struct smp_work *w = add_work(s, SMP_WORK_EXIT, ev->proc, ev->tid, t);

	w->pid = ev->pid;
	w->status = ev->status;
	if (ev->proc && ev->tid == ev->pid) {
		struct smp_proc *x = smp_proc_of(s, ev->proc);

		stackcopy_close(&x->mem);
		x->img->retired = true;
		/*
		 * Its CPU time since it was traced counts in the tree's
		 * (tree_cpu_ns): every process of an attach, less its clock at
		 * the start for one found then.  The kernel's work past its
		 * threads' exit stops, which its clock alone shows, goes into
		 * the profile with its leader's exit where that is the
		 * process's (account_exit), else under the process itself.
		 */
		if (s->o->mode == SAMPLER_CPU && (x->born || s->o->kind == SAMPLER_ATTACH)) {
			uint64_t total = smp_proc_cpu_at_end(s, ev->proc, ru);

			s->loop.ended_cpu_ns +=
			    total > x->start_clock_ns ? total - x->start_clock_ns : 0;
			if (x->born && !x->leader_exit.pending)
				smp_exit_note_of(ev->proc, 0, t, &x->leader_exit);
			if (x->born && total > x->accounted_ns) {
				x->leader_exit.weight += total - x->accounted_ns;
				s->st->exit_ns += total - x->accounted_ns;
				x->accounted_ns = total;
			}
		}
		smp_queue_note(s, &x->leader_exit);
		x->born = false;
	}
	if (ev->tid == s->tr->root && s->o->kind == SAMPLER_RECORD) {
		s->loop.stopping = true;
		s->st->end = SAMPLER_END_ROOT_EXITED;
	}
}

/*
 * A process born while traced starts with the maps of its parent (its
 * ppid) where that is traced: a fork copies the address space, so no
 * /proc read is needed until a sample shows something new.  The parent's
 * image as it is at the event goes with the work (a reference); the copy
 * is made there, not while threads are held.
 */
static void add_process_work(struct sampler *s, struct xp_process *p, bool born, uint64_t t)
{
	struct xp_thread *parent = born && p->ppid > 0 ? tracer_find(s->tr, p->ppid) : NULL;
	struct smp_work *w = add_work(s, SMP_WORK_PROCESS, p, 0, t);

	if (parent && parent->proc != p)
		w->parent = smp_image_get(smp_proc_of(s, parent->proc)->img);
}

/*
 * What a stop shows new (an image, a process, a thread) is described by
 * reading /proc (maps, exe, comm): work for later, so that neither this
 * thread nor those interrupted with it wait for it.  A sample queued
 * meanwhile is unwound after that work, with these maps.
 */
static void describe_new(struct sampler *s, const struct tracer_event *ev, uint64_t t)
{
	struct xp_thread *th = ev->th;
	struct xp_process *p = th->proc;
	struct smp_thread *x = smp_thread_of(th);
	struct smp_proc *px = smp_proc_of(s, p);

	if (ev->exec) {
		add_work(s, SMP_WORK_PROCESS, p, 0, t)->flags = DF_PROC_EXEC;
		add_work(s, SMP_WORK_THREAD, p, th->tid, t)->flags = SMP_WORK_RENAME;
		px->describe_queued = x->describe_queued = true;
	}
	if (!px->describe_queued && p->execed) {
		/* Its own first stop may come before its parent's fork event. */
		add_process_work(s, p, ev->fresh && th->tid == p->pid, t);
		px->describe_queued = true;
	}
	if (!x->describe_queued && p->execed) {
		add_work(s, SMP_WORK_THREAD, p, th->tid, t);
		x->describe_queued = true;
	}
	/*
	 * A new thread of the same process is named as its creator until it
	 * renames itself (its first samples read the name again): no /proc
	 * read for each of thousands of short-lived threads.
	 */
	if (ev->child && ev->child->proc == p && !smp_thread_of(ev->child)->describe_queued) {
		struct smp_work *w = add_work(s, SMP_WORK_THREAD, p, ev->child->tid, t);

		w->flags = SMP_WORK_AS_CREATOR;
		w->from = th->tid;
		smp_thread_of(ev->child)->describe_queued = true;
	}
	if (ev->child && ev->child->proc != p) {
		struct smp_proc *cx = smp_proc_of(s, ev->child->proc);

		ev->child->proc->ppid = p->pid;
		cx->born = s->loop.enabled;
		if (!cx->describe_queued) {
			add_process_work(s, ev->child->proc, true, t);
			cx->describe_queued = true;
		}
	}
}

/* Describe @w's thread, unless done already (or it is gone). */
static void describe_thread(struct sampler *s, const struct smp_work *w)
{
	struct xp_thread *th = tracer_find(s->tr, w->tid), *creator;
	const char *comm = NULL;

	if (!th || th->proc != w->proc || !th->proc->execed)
		return;
	if (smp_thread_of(th)->em.described && !(w->flags & SMP_WORK_RENAME))
		return;
	if (w->flags & SMP_WORK_AS_CREATOR) {
		creator = tracer_find(s->tr, w->from);
		comm = creator && smp_thread_of(creator)->em.described
			   ? smp_thread_of(creator)->em.comm
			   : th->proc->comm;
	} else if (th->tid == th->proc->pid && !(w->flags & SMP_WORK_RENAME) && th->proc->comm[0]) {
		/*
		 * A process's first thread: the name the tracer read as it found
		 * the process is that thread's (its first samples read it again).
		 */
		comm = th->proc->comm;
	}
	emit_thread(s, th, w->t, comm);
}

/*
 * In the exec stop of @p: the kernel runs a set-user-ID, set-group-ID or
 * file-capability program as its caller when the tracer lacks
 * CAP_SYS_PTRACE over it, so that it fails or does otherwise than it
 * would without xprof (a set-group-ID chage as an ordinary user cannot
 * read /etc/shadow).  Nothing can be done for it once the exec is over:
 * said once, with the way out.  Looked at in the stop (two stats, ~3 us,
 * and only without the capability): such a program that fails at once is
 * gone by the time the work is done.
 */
static void check_exec_privilege(struct sampler *s, struct xp_process *p)
{
	static const char *const what[] = {
	    [PROCFS_PRIV_SETUID] = "set-user-ID",
	    [PROCFS_PRIV_SETGID] = "set-group-ID",
	    [PROCFS_PRIV_CAPS] = "file-capability",
	};
	enum procfs_priv lost;
	char exe[PATH_MAX];

	if (s->loop.ptrace_cap || s->loop.priv_warned)
		return;
	lost = procfs_exe_privilege_lost(p->pid);
	if (lost == PROCFS_PRIV_NONE)
		return;
	s->loop.priv_warned = true;
	procfs_exe(p->pid, exe, sizeof(exe));
	xp_warn("pid %d runs %s program '%s' without its privileges: a traced exec gets "
		"none unless xprof has CAP_SYS_PTRACE (as root)",
		(int)p->pid, what[lost], exe[0] ? exe : p->comm);
}

/* Do @w. */
static void do_work(struct sampler *s, const struct smp_work *w)
{
	struct smp_proc *x;
	int e;

	switch (w->kind) {
	case SMP_WORK_PROCESS:
		x = smp_proc_of(s, w->proc);
		if (w->parent) {
			smp_image_fork(s, w->proc, w->img, w->parent);
			smp_image_put(w->parent);
		}
		if (w->proc->execed && (!x->em.described || (w->flags & DF_PROC_EXEC))) {
			/*
			 * The maps first: the PROCESS record says whether /proc
			 * hid them.  A fork's child has its parent's already.
			 */
			e = w->img->forked ? 0 : smp_image_read(s, w->proc, w->img);
			emit_process(s, w->proc,
				     w->flags | (w->img->maps_hidden ? DF_PROC_NO_MAPS : 0), w->t);
			if (!e)
				emit_new_maps(s, w->proc->pid, w->img, w->t);
		}
		smp_image_put(w->img);
		return;
	case SMP_WORK_THREAD:
		describe_thread(s, w);
		return;
	case SMP_WORK_EXIT:
		emit_exit(s, w->t, w->pid, w->tid, w->status);
		/* Its JIT symbols name the pcs it sampled: unwind them first. */
		if (w->proc && w->tid == w->pid) {
			smp_drain_queue(s);
			emit_jit(s, w->proc);
		}
		return;
	}
}

/* Do the work events left, @max items at most. */
static void do_some_work(struct sampler *s, unsigned long max)
{
	struct smp_loop *l = &s->loop;

	while (l->work_head < l->nwork && max--)
		do_work(s, &l->work[l->work_head++]);
	if (l->work_head == l->nwork)
		l->work_head = l->nwork = 0;
}

/*
 * CPU mode, in the exit stop of @th at @t: the CPU time its samples have
 * not covered goes into the profile (smp_exit_note says where), so that
 * short lives are not lost: a thread or process that lives between two
 * ticks gets no sample.
 */
static void account_exit(struct sampler *s, struct xp_thread *th, uint64_t t)
{
	struct smp_proc *px = smp_proc_of(s, th->proc);
	uint64_t left = smp_exit_unaccounted(s, th);
	struct smp_exit_note n;

	smp_exit_note(s, th, left, t, &n);
	px->accounted_ns += left;
	s->st->exit_ns += left;
	/*
	 * A leader never sampled: what the process's end shows besides goes
	 * with it (a short process's exit, in all, under where it was made).
	 * One sampled, that has had no other thread: that rest is its own
	 * (the kernel's work of its exit), with its last stack.  With other
	 * threads it may be theirs, and goes under the process alone
	 * (handle_exit).
	 */
	if (th->tid == th->proc->pid && (n.kind == SMP_RAW_EXITED || th->proc->threads_seen == 1))
		px->leader_exit = n;
	else
		smp_queue_note(s, &n);
}

/*
 * The stop @ev of a thread, seen at @t: sample it if one was @wanted,
 * settle what the sample weighs, resume it, leave what is new as work.
 */
static void handle_stop(struct sampler *s, const struct tracer_event *ev, bool wanted, uint64_t t)
{
	struct xp_thread *th = ev->th;
	struct smp_thread *x = smp_thread_of(th);
	struct raw_sample *r = NULL;
	bool settled;
	uint64_t resumed;

	if (ev->exec) {
		smp_exec(s, th);
		check_exec_privilege(s, th->proc);
		/*
		 * An interrupt that this stop consumed (any other ptrace stop
		 * consumes a pending interrupt) samples the new image: date it
		 * at the exec, not before, or report would name it and read it
		 * with the old image.
		 */
		x->irq_time = t;
	}
	wanted = wanted || x->at_waiting_stop;
	if (wanted && th->proc->execed)
		r = smp_take_sample(s, th, x->pending_weight, x->irq_time ? x->irq_time : t);
	/*
	 * Its counters are read while it is stopped (one pread, ~1 us of the
	 * stop): read after the resume, the count of times it was scheduled in
	 * could not tell a thread already back on its CPU from one that waited
	 * for it, and 64 busy threads on 2 CPUs were interrupted 3.7 times per
	 * sample taken, mostly while they waited, each such stop dropped.
	 */
	settled = r && s->o->mode == SAMPLER_CPU;
	if (settled && !smp_settle_weight(s, th, r, smp_now(s)))
		smp_drop_last(s, r);
	else if (settled)
		smp_proc_of(s, th->proc)->accounted_ns += r->weight;
	if (ev->exiting)
		account_exit(s, th, t);
	/* Where a new thread or process comes from, for its CPU time if it ends unsampled. */
	if (ev->child && !smp_thread_of(ev->child)->born && s->o->mode == SAMPLER_CPU)
		smp_take_origin(s, th, ev->child);
	if (tracer_finish_stop(s->tr, ev))
		xp_debug(1, "cannot resume tid %d: %s", (int)th->tid, strerror(errno));
	resumed = smp_now(s);
	/* A stop that waited for us before the tick is not one of its interrupts. */
	if (x->at_waiting_stop) {
		x->at_waiting_stop = false;
	} else if (wanted) {
		schedule_hist_add(s->st->stop_hist, &s->st->stop_ns_max, resumed - x->irq_time);
		s->st->stop_ns_total += resumed - x->irq_time;
		/*
		 * What a sample holds a thread: not an event's stop that took
		 * the interrupt with it (an exit, an exec, a clone), which does
		 * that event's part as well.
		 */
		if (!ev->exec && !ev->exiting && !ev->child)
			schedule_hist_add(s->st->held_hist, &s->st->held_ns_max, resumed - t);
	}
	if (!settled && s->o->mode == SAMPLER_CPU && th->state == THREAD_RUNNING && ev->fresh)
		cputime_anchor_new(&x->cpu, resumed);
	else if (!settled)
		x->cpu.resume_known = false; /* switched out and in again: the anchor is stale */
	describe_new(s, ev, t);
}

/* Returns whether this was the stop of one of our interrupts. */
static bool handle_status(struct sampler *s, pid_t tid, int status, const struct rusage *ru)
{
	struct xp_thread *th = tracer_find(s->tr, tid);
	struct tracer_event ev;
	uint64_t t = smp_now(s);

	if (th)
		smp_thread_of(th)->stops_since++;
	tracer_handle_status_of(s->tr, th, tid, status, &ev);
	if (ev.kind == TEV_EXIT) {
		if (ev.interrupt)
			s->st->failed++;
		handle_exit(s, &ev, t, ru);
	} else if (ev.kind == TEV_STOP && ev.th) {
		handle_stop(s, &ev, ev.interrupt, t);
	}
	return ev.interrupt;
}

static void status_line(struct sampler *s, bool final)
{
	uint64_t now = smp_now(s);

	if (!s->o->status_line || xp_quiet)
		return;
	if (!final && now - s->loop.last_status < 250000000ull)
		return;
	s->loop.last_status = now;
	/* Not over the shell's prompt while the job is stopped or in the background. */
	if (s->o->foreground && !s->o->foreground()) {
		s->loop.status_shown = false;
		return;
	}
	if (final && !s->loop.status_shown)
		return;
	s->loop.status_shown = true;
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

	if (sig == SIGUSR2) {
		s->loop.switch_now = true; /* only in the set with --switch-output signal */
		return;
	}
	if (s->o->kind == SAMPLER_RECORD && sig == SIGINT && s->loop.nsigint++ == 0) {
		/*
		 * Ctrl-C on a terminal reaches the command too (same process
		 * group); one sent to xprof alone is passed on.  Either way the
		 * command decides, and its exit ends the recording.
		 */
		if (!ctl_sigint_from_tty(si->ssi_code, si->ssi_int) && s->tr->root)
			kill(s->tr->root, SIGINT);
		return;
	}
	if (s->o->kind == SAMPLER_RECORD && sig != SIGINT && s->tr->root && !s->tr->root_done)
		kill(s->tr->root, sig);
	s->loop.stopping = true;
	s->st->end = SAMPLER_END_SIGNAL;
	s->st->end_signal = sig;
}

static int setup_fds(struct sampler *s)
{
	sigset_t set;

	ctl_signal_set(&set, true);
	if (s->o->switch_signal)
		sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, NULL);
	s->loop.sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (s->loop.sigfd < 0)
		return xp_error("cannot create a signalfd: %s", strerror(errno));
	s->loop.timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (s->loop.timerfd < 0)
		return xp_error("cannot create a timerfd: %s", strerror(errno));
	return 0;
}

/*
 * The stop of interrupted thread @tid if it came (smp_irq_sent_filter):
 * whether it is still to come.
 */
static bool collect_sent(struct sampler *s, pid_t tid)
{
	struct rusage ru;
	int status;
	pid_t got = wait4(tid, &status, __WALL | WNOHANG, &ru);

	if (got > 0)
		handle_status(s, got, status, &ru);
	return !got || (got < 0 && errno == EINTR);
}

/*
 * Read the signals that are waiting: SIGCHLD only woke us, the rest are
 * handled.  A read returns all those waiting that fit: one that does not
 * fill the buffer leaves none, and saves the read that would find none
 * (two reads at each of the ~4 wakes a short process costs).
 */
static void read_signals(struct sampler *s)
{
	struct signalfd_siginfo si[8];
	ssize_t n;
	size_t i;

	do {
		n = read(s->loop.sigfd, si, sizeof(si));
		for (i = 0; n > 0 && i < (size_t)n / sizeof(si[0]); i++)
			if (si[i].ssi_signo != SIGCHLD)
				handle_signal(s, &si[i]);
	} while (n == (ssize_t)sizeof(si));
}

/*
 * Handle the stops and exits that are waiting, of which at most @max that
 * are not the stops our interrupts asked for: a target that starts and
 * ends threads without pause (40,000 in 2 s) would otherwise keep the loop
 * here and away from the timer (11 ticks in a second at 9999 Hz).  The
 * rest is handled after the tick.  The stops of our interrupts do not
 * count: a tick that interrupted threads again before the last round was
 * resumed would keep them stopped (256 threads sampled in wall mode at
 * 4999 Hz made no progress).  Where @max others are handled, the stops
 * asked for are then looked for by tid: wait4(-1) gives the newest
 * tracee's event first, and behind a steady stream of new threads' events
 * an older thread's stop waited to the end of the run ('churn threads 2
 * 8' at 9999 Hz: stops of 0.1 to 2 s, p99 up to 2 s; 3-16 ms since).
 * Each status collected left a SIGCHLD in the signalfd, which would end
 * the loop's next poll at once for a drain that finds nothing.  Where the
 * drain likely ends, after the stop of the tick's last interrupt, the
 * signals are read, and the wait4 after the read takes whatever they
 * announced: a status that comes after the read raises its own SIGCHLD.
 * A lone busy thread's sample took 15 system calls, now 13 (a poll and a
 * wait4 fewer).  Not after an event (a fork, an exit), nor after stops
 * collected before the drain: in a build another event followed within
 * microseconds as often as not, and the read was one call more.
 * A new task's first stop that comes before its creator's event (wait4
 * gives the newest tracee's first; a third of a forking server's
 * backends) is handled at the end of the drain, after that event where
 * it came in the same drain: the task is then known from the event, its
 * ids and name not read from /proc (~20 us).  It has not run yet.
 */
struct born_stop {
	pid_t tid;
	int status; /* a stop: no rusage to keep */
};

static void drain_waits(struct sampler *s, bool *none_left, unsigned int max)
{
	struct born_stop born[16];
	unsigned int n = 0, nborn = 0, i;
	struct rusage ru;
	pid_t tid = 0;
	bool signals_read = false, irq = false;
	int status;

	*none_left = false;
	while (n < max) {
		if (irq && !signals_read && !s->tr->interrupts_pending) {
			read_signals(s);
			signals_read = true;
		}
		tid = wait4(-1, &status, __WALL | WNOHANG, &ru);
		if (tid <= 0)
			break;
		if (nborn < sizeof(born) / sizeof(born[0]) &&
		    tracer_unknown_birth(s->tr, tid, status)) {
			born[nborn++] = (struct born_stop){tid, status};
			continue;
		}
		/* Killed at its first stop: that stop first, as it came. */
		for (i = 0; i < nborn; i++) {
			if (born[i].tid == tid) {
				handle_status(s, tid, born[i].status, NULL);
				born[i] = born[--nborn];
				n++;
				break;
			}
		}
		irq = handle_status(s, tid, status, &ru);
		n += !irq;
	}
	for (i = 0; i < nborn; i++)
		handle_status(s, born[i].tid, born[i].status, NULL);
	n += nborn;
	if (tid < 0 && errno == ECHILD)
		*none_left = true;
	if (n >= max)
		smp_irq_sent_filter(s, collect_sent);
}

/*
 * Collect the stops of this tick's interrupts by polling waitpid for a
 * bounded time instead of sleeping: a sleeping tracer's wake-up is most of
 * the stop (measured here: ~40 us from interrupt to resume sleeping, ~18
 * us spinning).  Only when a CPU is free for it: a spin that shares the
 * target's CPU steals its time.
 */
static void spin_for_stops(struct sampler *s)
{
	uint64_t deadline;
	struct rusage ru;
	int status;
	pid_t tid;

	/*
	 * From the threads' own CPUs only when triggers took every one off
	 * another CPU than the controller's: a thread interrupted from the
	 * controller's CPU stops only once the controller lets it run, and one
	 * whose CPU was not known may be there too (a controller spinning at
	 * real-time priority on a thread's CPU kept a target that starts
	 * thousands of threads a second at 60 threads in 3 s, every stop ~0.1
	 * s).  And only when the controller's idle CPU would halt while it
	 * slept (no PM QoS request held: an ordinary user), whose wake was a
	 * fifth of such a stop (split as nobody, 3999 Hz: stop p50 34.5 us
	 * sleeping, 28.5 polling; p99 94.5 and 54.5); with idle CPUs polling
	 * it gains nothing.
	 */
	if (!s->tr->interrupts_pending ||
	    s->tr->interrupts_pending >= (unsigned long)s->irq.place.nr_cpus || !s->o->spin_ns ||
	    (s->o->same_cpu && (!s->irq.stops_elsewhere || s->loop.qos_fd >= 0)))
		return;
	deadline = xp_now_ns() + s->o->spin_ns;
	while (s->tr->interrupts_pending && !s->loop.stopping) {
		tid = wait4(-1, &status, __WALL | WNOHANG, &ru);
		if (tid > 0) {
			handle_status(s, tid, status, &ru);
			continue;
		}
		if (tid < 0 && errno != EINTR)
			return;
		if (xp_now_ns() >= deadline) {
			s->st->spin_timeouts++;
			return;
		}
	}
}

/*
 * Wait up to @ns for the stops of the @n threads @ths that this tick
 * interrupted, and take their samples; entries are cleared as they are
 * handled.  Other children's events wait for the loop.
 */
static void collect_stops(struct sampler *s, struct xp_thread **ths, unsigned long n, uint64_t ns)
{
	uint64_t end = xp_now_ns() + ns, now;
	struct pollfd pfd = {s->loop.sigfd, POLLIN, 0};
	struct timespec ts;
	struct rusage ru;
	unsigned long i, left;
	int status;
	pid_t tid;

	for (;;) {
		left = 0;
		for (i = 0; i < n; i++) {
			if (!ths[i])
				continue;
			if (!ths[i]->interrupt_pending) {
				ths[i] = NULL;
				continue;
			}
			tid = wait4(ths[i]->tid, &status, __WALL | WNOHANG, &ru);
			if (tid == 0 || (tid < 0 && errno == EINTR)) {
				left++;
				continue;
			}
			ths[i] = NULL; /* its exit may free it */
			if (tid > 0)
				handle_status(s, tid, status, &ru);
		}
		now = xp_now_ns();
		if (!left || s->loop.stopping)
			return;
		if (now >= end) {
			s->st->collect_timeouts++;
			return;
		}
		ts = (struct timespec){0, (long)(end - now)};
		if (ppoll(&pfd, 1, &ts, NULL) > 0)
			read_signals(s);
	}
}

/* Arm the timer for @t ns since the start, 0: disarm it. */
static void arm_timer_at(struct sampler *s, uint64_t t)
{
	set_timer(s, t ? s->start_mono + t : 0);
}

uint64_t smp_sampled_ns(const struct sampler *s, uint64_t now)
{
	return s->loop.sampled_ns + (s->loop.enabled ? now - s->loop.enabled_at : 0);
}

/*
 * Start (@on) or pause sampling at @now.  Paused, the timer is disarmed:
 * no thread is interrupted, the target runs at full speed, and only its
 * ptrace events (clone, exec, exit) stop it.
 */
static void set_enabled(struct sampler *s, bool on, uint64_t now)
{
	/* What runs meanwhile is not in the profile: the tree's time would hold it. */
	if (!on)
		s->loop.tree_unknown = true;
	s->loop.enable_at = 0;
	if (on == s->loop.enabled)
		return;
	s->loop.enabled = on;
	emit_mark(s, now, on ? DF_MARK_ENABLE : DF_MARK_DISABLE, "");
	if (!on) {
		struct tracer *t = s->tr;
		unsigned long i;

		s->loop.sampled_ns += now - s->loop.enabled_at;
		arm_timer_at(s, 0);
		/* What runs unsampled now is no process's rest at its end. */
		for (i = 0; i < t->nprocs; i++)
			smp_proc_of(s, t->procs[i])->born = false;
		return;
	}
	if (!s->loop.was_enabled) {
		s->loop.was_enabled = true;
		s->loop.first_enabled = now;
	}
	s->loop.enabled_at = now;
	smp_rebase_threads(s, now);
	s->loop.next_k = schedule_slot(s->start_mono, s->period, xp_now_ns()) + 1;
	arm_timer(s);
}

/* The timer fired: count late ticks, interrupt the due threads, arm the next tick. */
static void on_timer(struct sampler *s)
{
	uint64_t exp, k;

	if (read(s->loop.timerfd, &exp, sizeof(exp)) != sizeof(exp))
		return;
	s->loop.woke_late = xp_now_ns() - s->loop.armed_at;
	if (!s->loop.enabled) {
		/* The end of --delay. */
		if (s->loop.enable_at && smp_now(s) >= s->loop.enable_at)
			set_enabled(s, true, smp_now(s));
		return;
	}
	/*
	 * The next tick is in the next slot, or in the slot of now where whole
	 * slots went by (late ticks): drawn before now, it comes at once.
	 */
	k = schedule_slot(s->start_mono, s->period, xp_now_ns());
	if (k > s->loop.next_k + 1)
		s->st->late_ticks += k - s->loop.next_k - 1;
	s->loop.next_k = k > s->loop.next_k ? k : s->loop.next_k + 1;
	/* Before the stops: triggers park for the next tick (interrupt.c). */
	plan_tick(s);
	tick(s);
	arm_planned(s);
	spin_for_stops(s);
}

/* Act on the commands waiting in the --control FIFO, acknowledging each. */
static void on_control(struct sampler *s)
{
	struct control_cmd cmd;

	while (control_poll(s->o->control, &cmd)) {
		uint64_t now = smp_now(s);

		switch (cmd.kind) {
		case CONTROL_ENABLE:
		case CONTROL_DISABLE:
			set_enabled(s, cmd.kind == CONTROL_ENABLE, now);
			break;
		case CONTROL_MARK:
			emit_mark(s, now, DF_MARK_PHASE, cmd.name);
			snprintf(s->loop.phase, sizeof(s->loop.phase), "%s", cmd.name);
			s->loop.phase_t = now;
			break;
		case CONTROL_STOP:
			if (!s->loop.stopping)
				s->st->end = SAMPLER_END_CONTROL;
			s->loop.stopping = true;
			break;
		case CONTROL_NONE:
		case CONTROL_PING:
			break;
		case CONTROL_INVALID:
			/* As perf: no acknowledgement for what is not a command. */
			xp_warn("ignored --control command '%s': %s", cmd.name, cmd.why);
			continue;
		}
		xp_debug(1, "--control: '%s %s' at %.3f s", control_kind_name(cmd.kind), cmd.name,
			 (double)now / 1e9);
		control_ack(s->o->control);
	}
}

/*
 * One turn of the loop: handle the waiting stops, end on the end
 * conditions, sleep until the timer, a signal or a --control command.
 * False once it should end.
 */
static bool loop_once(struct sampler *s)
{
	struct pollfd pfd[3] = {{s->loop.sigfd, POLLIN, 0},
				{s->loop.timerfd, POLLIN, 0},
				{s->o->control ? s->o->control->fd : -1, POLLIN, 0}};
	bool none_left;
	uint64_t now;

	drain_waits(s, &none_left, SAMPLER_DRAIN_MAX);
	if (s->emit.failed && !s->loop.stopping) {
		s->loop.stopping = true;
		s->st->end = SAMPLER_END_WRITE_ERROR;
	}
	if (s->loop.stopping)
		return false;
	if (none_left || !tracer_live_threads(s->tr)) {
		s->st->end = SAMPLER_END_ALL_EXITED;
		return false;
	}
	now = smp_now(s);
	/*
	 * The work events left, then unwinding, wait for the stops our
	 * interrupts asked for: no thread stays stopped while we keep books.
	 * But not for longer than a period: with more busy threads than CPUs
	 * one is nearly always pending (a thread interrupted while it waits
	 * for a CPU stops when it gets one), and the queue held every sample
	 * of the run, its copies with it (threads64: 17 MB more each second,
	 * all unwound at the end).
	 */
	if (!s->tr->interrupts_pending) {
		do_some_work(s, ULONG_MAX);
		smp_drain_queue(s);
	} else {
		struct smp_loop *l = &s->loop;
		uint64_t oldest;

		if (l->nwork > l->work_head && now - l->work[l->work_head].t >= s->period)
			do_some_work(s, SMP_DRAIN_SOME + (l->nwork - l->work_head) / 8);
		if (smp_queued(s, &oldest) && now - oldest >= s->period)
			smp_drain_some(s, SMP_DRAIN_SOME + (s->queue.nq - s->queue.head) / 8);
	}
	if (s->o->duration_ns && s->loop.was_enabled &&
	    now - s->loop.first_enabled >= s->o->duration_ns) {
		s->st->end = SAMPLER_END_DURATION;
		return false;
	}
	if (now - s->loop.last_flush >= s->o->flush_ns) {
		emit_thread_names(s);
		emit_flush(s);
		s->loop.last_flush = now;
	}
	if (!s->tr->interrupts_pending && emit_part_due(s, now)) {
		smp_drain_queue(s);
		emit_switch_part(s, now);
		s->loop.switch_now = false;
	}
	status_line(s, false);
	if (poll(pfd, 3, s->tr->interrupts_pending ? 2 : 250) < 0 && errno != EINTR) {
		s->st->end = SAMPLER_END_ERROR;
		return xp_error("poll failed: %s", strerror(errno)) && false;
	}
	if (pfd[0].revents & POLLIN)
		read_signals(s);
	if (pfd[1].revents & POLLIN)
		on_timer(s);
	if (pfd[2].revents & POLLIN)
		on_control(s);
	return !s->loop.stopping;
}

/* Describe the processes and threads present from the start (attach), then start the timer. */
static void start(struct sampler *s)
{
	struct tracer *t = s->tr;
	unsigned long i;
	int e;

	for (i = 0; i < t->nprocs; i++) {
		struct xp_process *p = t->procs[i];
		struct smp_proc *x = smp_proc_of(s, p);

		if (!p->execed || x->describe_queued)
			continue;
		e = smp_image_read(s, p, x->img);
		emit_process(s, p, t->root ? 0 : DF_PROC_ATTACHED, 0);
		if (!e)
			emit_new_maps(s, p->pid, x->img, 0);
		x->describe_queued = true;
	}
	for (i = 0; i < t->nthreads; i++) {
		struct xp_thread *th = t->threads[i];

		if (!th->proc->execed || smp_thread_of(th)->describe_queued)
			continue;
		emit_thread(s, th, 0, NULL);
		smp_thread_of(th)->describe_queued = true;
	}
	if (s->o->poll_idle)
		s->loop.qos_fd = ctl_hold_poll_idle();
	s->st->poll_idle = s->loop.qos_fd >= 0;
	if (s->o->spin_idle)
		s->st->spin_idle = idlespin_start(&s->loop.spin);
	if (s->o->rt_priority)
		s->st->rt_priority = ctl_raise_priority(s->o->rt_priority);
	if (!s->st->rt_priority)
		ctl_short_slice();
	s->loop.slack = ctl_min_timer_slack();
	xp_debug(1, "open files: up to %lu", ctl_raise_nofile());
	s->loop.ptrace_cap = procfs_self_has_cap(CAP_SYS_PTRACE);
	s->loop.start_cpu = xp_cpu_ns();
	for (i = 0; s->o->kind == SAMPLER_ATTACH && s->o->mode == SAMPLER_CPU && i < t->nprocs; i++)
		smp_proc_start_clock(s, t->procs[i]);
	smp_irq_start(s);
	if (s->o->delay_ns || s->o->start_disabled) {
		s->loop.tree_unknown = true; /* as set_enabled */
		emit_mark(s, 0, DF_MARK_DISABLE, "");
		s->loop.enable_at = s->o->start_disabled ? 0 : s->o->delay_ns;
		arm_timer_at(s, s->loop.enable_at);
		return;
	}
	s->loop.enabled = s->loop.was_enabled = true;
	/* A launched command is sampled from its start: all its CPU time counts. */
	for (i = 0; i < t->nprocs; i++)
		smp_proc_of(s, t->procs[i])->born = s->o->kind == SAMPLER_RECORD;
	s->loop.next_k = 1;
	arm_timer(s);
}

/*
 * The CPU time the traced tree used while recording, 0 when not known: a
 * launched command's from getrusage once it has ended (its descendants'
 * as far as their parents waited for them, as time(1) shows); for an
 * attach, each traced process's CPU clock since the start, at its end or
 * now (smp_tree_cpu_ns).  Without following, the traced process's own:
 * the children it waits for are in the rusage and not in the profile (a
 * launched command's is its time at its end, as its exit counted it).
 * Not known once sampling was off for a while (--delay, 'disable'): those
 * figures hold what ran meanwhile, the profile does not (record -D 500ms
 * of a 1.5 s split: 1.01 s in the profile, 1.50 used).
 */
static uint64_t tree_cpu_ns(struct sampler *s)
{
	struct rusage ru;

	if (s->loop.tree_unknown)
		return 0;
	if (s->o->kind == SAMPLER_ATTACH)
		return smp_tree_cpu_ns(s);
	if (!s->tr->root_done)
		return 0;
	if (!(s->tr->flags & TRACER_FOLLOW))
		return s->loop.ended_cpu_ns;
	if (getrusage(RUSAGE_CHILDREN, &ru))
		return 0;
	return xp_timeval_ns(&ru.ru_utime) + xp_timeval_ns(&ru.ru_stime);
}

/* After the loop: collect what is left, detach, write the statistics.  0 or -1. */
static int finish(struct sampler *s)
{
	struct tracer *t = s->tr;
	bool none_left;
	unsigned long i;

	s->st->duration_ns = smp_sampled_ns(s, smp_now(s));
	s->st->xprof_cpu_ns = xp_cpu_ns() - s->loop.start_cpu;
	if (s->loop.qos_fd >= 0)
		close(s->loop.qos_fd);
	idlespin_stop(&s->loop.spin);
	smp_irq_stop(s);
	/* Writing the data and reading JIT files is no business for a real-time task. */
	if (s->st->rt_priority)
		ctl_drop_priority();
	ctl_set_timer_slack(s->loop.slack);
	drain_waits(s, &none_left, UINT_MAX);
	/* Leaders whose exit stop came and whose end did not yet. */
	for (i = 0; i < t->nprocs; i++)
		smp_queue_note(s, &smp_proc_of(s, t->procs[i])->leader_exit);
	do_some_work(s, ULONG_MAX);
	smp_drain_queue(s);
	emit_accrued(s);
	emit_thread_names(s);
	status_line(s, true);
	for (i = 0; i < t->nprocs; i++)
		if (!t->procs[i]->exited)
			emit_jit(s, t->procs[i]);
	if (s->o->mode == SAMPLER_CPU && s->o->kind == SAMPLER_ATTACH)
		s->st->tree_cpu_ns = tree_cpu_ns(s);
	if (tracer_detach_all(t))
		xp_warn("could not detach cleanly from every thread");
	if (s->o->mode == SAMPLER_CPU && s->o->kind == SAMPLER_RECORD)
		s->st->tree_cpu_ns = tree_cpu_ns(s);
	smp_images_save(s, &s->st->capture);
	emit_stats(s);
	emit_flush(s);
	if (s->emit.failed && s->st->end != SAMPLER_END_ERROR)
		s->st->end = SAMPLER_END_WRITE_ERROR;
	return s->emit.failed ? -1 : 0;
}

/* Free everything of the sampler's, its state in the tracer's threads and processes included. */
static void release(struct sampler *s)
{
	struct tracer *t = s->tr;
	unsigned long i;

	for (i = 0; i < t->nthreads; i++)
		smp_thread_free(s, t->threads[i]);
	for (i = 0; i < t->nprocs; i++)
		smp_proc_free(s, t->procs[i]);
	memset(&t->hooks, 0, sizeof(t->hooks));
	for (i = s->loop.work_head; i < s->loop.nwork; i++)
		if (s->loop.work[i].kind == SMP_WORK_PROCESS) {
			smp_image_put(s->loop.work[i].img);
			smp_image_put(s->loop.work[i].parent);
		}
	free(s->loop.work);
	smp_images_release(s);
	emit_release(s);
	smp_queue_release(s); /* after the images, which use its modules */
	smp_tick_release(s);
	smp_irq_release(s);
	if (s->loop.sigfd >= 0)
		close(s->loop.sigfd);
	if (s->loop.timerfd >= 0)
		close(s->loop.timerfd);
}

int sampler_run(struct tracer *t, struct df_writer *w, const struct sampler_opts *o,
		struct sampler_stats *st)
{
	struct sampler s = {.tr = t,
			    .o = o,
			    .st = st,
			    .loop = {.sigfd = -1, .timerfd = -1, .qos_fd = -1},
			    .tick = {.loadavg_fd = -1}};
	int ret = -1;

	memset(st, 0, sizeof(*st));
	s.arch = xp_arch_host();
	s.start_mono = xp_now_ns();
	s.period = XP_NS_PER_SEC / (o->freq_hz ? o->freq_hz : 1);
	s.loop.rnd = s.start_mono ^ ((uint64_t)getpid() << 32) ^ 0x9e3779b97f4a7c15ull;
	s.loop.tick_off = schedule_scale(schedule_rand(&s.loop.rnd), s.period);
	smp_queue_init(&s);
	smp_images_init(&s);
	emit_init(&s, w);
	smp_irq_init(&s);
	smp_tick_init(&s);
	t->hooks = (struct tracer_hooks){&s, smp_thread_free, smp_proc_free};
	if (!setup_fds(&s)) {
		start(&s);
		while (loop_once(&s))
			;
		ret = finish(&s);
		if (st->end == SAMPLER_END_ERROR)
			ret = -1;
	}
	release(&s);
	return ret;
}
