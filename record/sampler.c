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
#include "schedule.h"

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
#include <sys/wait.h>
#include <unistd.h>

/* Draw the time of tick s->loop.next_k (s->loop.armed_at), for arm_planned. */
static void plan_tick(struct sampler *s)
{
	s->loop.armed_at = schedule_tick_time(s->start_mono, s->period, s->loop.next_k,
					      schedule_rand(&s->loop.rnd));
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

/* Stack bytes to copy at the next sample of @th, whose last walk needed @need from its SP. */
static size_t copy_size(const struct sampler *s, struct xp_thread *th, uint32_t need)
{
	uint32_t hint = s->o->adaptive_copy ? smp_proc_of(s, th->proc)->copy_hint : 0;

	return stackcopy_reach(&smp_thread_of(th)->copy, hint, s->o->stack_bytes, need);
}

/*
 * Called with @th in a ptrace-stop: copy what the unwinder needs.  Returns
 * the queued sample, NULL if none was taken.
 */
static struct raw_sample *take_sample(struct sampler *s, struct xp_thread *th, uint64_t weight)
{
	struct raw_sample *r = smp_queue_slot(s);
	struct smp_thread *x = smp_thread_of(th);
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
	r->len = stackcopy_take(&smp_proc_of(s, th->proc)->mem, r->copy, copy_size(s, th, need), sp,
				need);
	r->proc = th->proc;
	r->tid = th->tid;
	r->t = x->irq_time ? x->irq_time : smp_now(s);
	r->weight = weight;
	r->sys_nr = x->blocked_nr;
	r->sys_sp = (int64_t)x->last_sys_sp;
	r->sys_pc = (int64_t)x->last_sys_pc;
	s->st->stack_bytes_copied += r->len;
	s->nq++;
	return r;
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

/* A thread or process exited (@ev): write it down; the end of the root ends the recording. */
static void handle_exit(struct sampler *s, const struct tracer_event *ev, uint64_t t)
{
	smp_check_write(s, df_write_exit(s->w, t, ev->pid, ev->tid, ev->status));
	if (ev->proc && ev->tid == ev->pid)
		stackcopy_close(&smp_proc_of(s, ev->proc)->mem);
	if (ev->tid == ev->pid)
		smp_collect_jit(s, ev->pid);
	if (ev->tid == s->tr->root && s->o->kind == SAMPLER_RECORD) {
		s->stopping = true;
		s->st->end = SAMPLER_END_ROOT_EXITED;
	}
}

/*
 * Describing a new image, process or thread reads /proc (maps, exe, comm):
 * done after the resume, so the thread does not wait for it.  A queued
 * sample is unwound later, with these maps.
 */
static void describe_new(struct sampler *s, const struct tracer_event *ev, uint64_t t)
{
	struct xp_thread *th = ev->th;
	struct smp_thread *x = smp_thread_of(th);

	if (ev->exec) {
		smp_report_process(s, th->proc, DF_PROC_EXEC, t);
		smp_report_thread(s, th, t, NULL);
	} else if (!smp_proc_of(s, th->proc)->reported && th->proc->execed) {
		smp_report_process(s, th->proc, 0, t);
	}
	if (!x->reported && th->proc->execed)
		smp_report_thread(s, th, t, NULL);
	/*
	 * A new thread of the same process is named as its creator until it
	 * renames itself (its first samples read the name again): no /proc
	 * read for each of thousands of short-lived threads.
	 */
	if (ev->child && ev->child->proc == th->proc && !smp_thread_of(ev->child)->reported &&
	    x->reported)
		smp_report_thread(s, ev->child, t, x->comm);
	if (ev->child && ev->child->proc != th->proc &&
	    !smp_proc_of(s, ev->child->proc)->reported) {
		ev->child->proc->ppid = th->proc->pid;
		smp_report_process(s, ev->child->proc, 0, t);
	}
}

/*
 * The stop @ev of a thread, seen at @t: sample it if one was @wanted,
 * settle what the sample weighs, resume it, describe what is new.
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
		/*
		 * An interrupt that this stop consumed (any other ptrace stop
		 * consumes a pending interrupt) samples the new image: date it
		 * at the exec, not before, or report would name it and read it
		 * with the old image.
		 */
		x->irq_time = t;
	}
	if (wanted && th->proc->execed)
		r = take_sample(s, th, x->pending_weight);
	/*
	 * Its counters are read while it is stopped (one pread, ~1 us of the
	 * stop): read after the resume, the count of times it was scheduled in
	 * could not tell a thread already back on its CPU from one that waited
	 * for it, and 64 busy threads on 2 CPUs were interrupted 3.7 times per
	 * sample taken, mostly while they waited, each such stop dropped.
	 */
	settled = r && s->o->mode == SAMPLER_CPU;
	if (settled)
		smp_settle_weight(s, th, r, smp_now(s));
	if (tracer_finish_stop(s->tr, ev))
		xp_debug(1, "cannot resume tid %d: %s", (int)th->tid, strerror(errno));
	resumed = smp_now(s);
	if (wanted) {
		schedule_hist_add(s->st->stop_hist, &s->st->stop_ns_max, resumed - x->irq_time);
		s->st->stop_ns_total += resumed - x->irq_time;
		schedule_hist_add(s->st->held_hist, &s->st->held_ns_max, resumed - t);
	}
	if (!settled && s->o->mode == SAMPLER_CPU && th->state == THREAD_RUNNING && ev->fresh)
		cputime_anchor_new(&x->cpu, resumed);
	else if (!settled)
		x->cpu.resume_known = false; /* switched out and in again: the anchor is stale */
	describe_new(s, ev, t);
}

/* Returns whether this was the stop of one of our interrupts. */
static bool handle_status(struct sampler *s, pid_t tid, int status)
{
	struct xp_thread *th = tracer_find(s->tr, tid);
	struct tracer_event ev;
	uint64_t t = smp_now(s);
	bool wanted;

	if (th)
		smp_thread_of(th)->stops_since++;
	if (th && tracer_status_is_exec(status))
		smp_drain_old_image(s, th->proc);
	tracer_handle_status_of(s->tr, th, tid, status, &ev);
	wanted = ev.interrupt;
	if (ev.kind == TEV_EXIT) {
		if (wanted)
			s->st->failed++;
		handle_exit(s, &ev, t);
	} else if (ev.kind == TEV_STOP && ev.th) {
		handle_stop(s, &ev, wanted, t);
	}
	return wanted;
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
		s->switch_now = true; /* only in the set with --switch-output signal */
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
	s->stopping = true;
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
 * the stop (measured here: ~40 us from interrupt to resume sleeping, ~18
 * us spinning).  Only when a CPU is free for it: a spin that shares the
 * target's CPU steals its time.
 */
static void spin_for_stops(struct sampler *s)
{
	uint64_t deadline;
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
	while (s->tr->interrupts_pending && !s->stopping) {
		tid = waitpid(-1, &status, __WALL | WNOHANG);
		if (tid > 0) {
			handle_status(s, tid, status);
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

/* Read the signals that are waiting: SIGCHLD only woke us, the rest are handled. */
static void read_signals(struct sampler *s)
{
	struct signalfd_siginfo si;

	while (read(s->loop.sigfd, &si, sizeof(si)) == sizeof(si))
		if (si.ssi_signo != SIGCHLD)
			handle_signal(s, &si);
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
			tid = waitpid(ths[i]->tid, &status, __WALL | WNOHANG);
			if (tid == 0 || (tid < 0 && errno == EINTR)) {
				left++;
				continue;
			}
			ths[i] = NULL; /* its exit may free it */
			if (tid > 0)
				handle_status(s, tid, status);
		}
		now = xp_now_ns();
		if (!left || s->stopping)
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
	s->loop.enable_at = 0;
	if (on == s->loop.enabled)
		return;
	s->loop.enabled = on;
	smp_check_write(s, df_write_mark(s->w, now, on ? DF_MARK_ENABLE : DF_MARK_DISABLE, ""));
	if (!on) {
		s->loop.sampled_ns += now - s->loop.enabled_at;
		arm_timer_at(s, 0);
		return;
	}
	if (!s->loop.was_enabled) {
		s->loop.was_enabled = true;
		s->loop.first_enabled = now;
	}
	s->loop.enabled_at = now;
	smp_rebase_threads(s, now);
	s->loop.next_k = schedule_next_index(s->start_mono, s->period, xp_now_ns());
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
	k = schedule_next_index(s->start_mono, s->period, xp_now_ns());
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
			smp_check_write(s, df_write_mark(s->w, now, DF_MARK_PHASE, cmd.name));
			snprintf(s->loop.phase, sizeof(s->loop.phase), "%s", cmd.name);
			s->loop.phase_t = now;
			break;
		case CONTROL_STOP:
			if (!s->stopping)
				s->st->end = SAMPLER_END_CONTROL;
			s->stopping = true;
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
	if (s->stopping)
		return false;
	if (none_left || !tracer_live_threads(s->tr)) {
		s->st->end = SAMPLER_END_ALL_EXITED;
		return false;
	}
	now = smp_now(s);
	/*
	 * Unwinding waits for the stops our interrupts asked for, but not
	 * for longer than a period: with more busy threads than CPUs one is
	 * nearly always pending (a thread interrupted while it waits for a
	 * CPU stops when it gets one), and the queue held every sample of
	 * the run, its copies with it (threads64: 17 MB more each second,
	 * all unwound at the end).
	 */
	if (!s->tr->interrupts_pending)
		smp_drain_queue(s);
	else if (s->nq > s->qhead && now - s->q[s->qhead].t >= s->period)
		smp_drain_some(s, SMP_DRAIN_SOME + (s->nq - s->qhead) / 8);
	if (s->o->duration_ns && s->loop.was_enabled &&
	    now - s->loop.first_enabled >= s->o->duration_ns) {
		s->st->end = SAMPLER_END_DURATION;
		return false;
	}
	if (now - s->loop.last_flush >= s->o->flush_ns) {
		smp_refresh_names(s);
		smp_check_write(s, df_writer_flush(s->w));
		s->loop.last_flush = now;
	}
	if (!s->tr->interrupts_pending && smp_part_due(s, now))
		smp_switch_part(s, now);
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
	return !s->stopping;
}

/* Describe the processes and threads present from the start (attach), then start the timer. */
static void start(struct sampler *s)
{
	struct tracer *t = s->tr;
	unsigned long i;

	for (i = 0; i < t->nprocs; i++)
		if (t->procs[i]->execed && !smp_proc_of(s, t->procs[i])->reported)
			smp_report_process(s, t->procs[i], t->root ? 0 : DF_PROC_ATTACHED, 0);
	for (i = 0; i < t->nthreads; i++)
		if (t->threads[i]->proc->execed && !smp_thread_of(t->threads[i])->reported)
			smp_report_thread(s, t->threads[i], 0, NULL);
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
	s->loop.start_cpu = xp_cpu_ns();
	smp_irq_start(s);
	if (s->o->delay_ns || s->o->start_disabled) {
		smp_check_write(s, df_write_mark(s->w, 0, DF_MARK_DISABLE, ""));
		s->loop.enable_at = s->o->start_disabled ? 0 : s->o->delay_ns;
		arm_timer_at(s, s->loop.enable_at);
		return;
	}
	s->loop.enabled = s->loop.was_enabled = true;
	s->loop.next_k = 1;
	arm_timer(s);
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
	smp_drain_queue(s);
	smp_refresh_names(s);
	status_line(s, true);
	for (i = 0; i < t->nprocs; i++)
		if (!t->procs[i]->exited)
			smp_collect_jit(s, t->procs[i]->pid);
	if (tracer_detach_all(t))
		xp_warn("could not detach cleanly from every thread");
	for (i = 0; i < t->nprocs; i++)
		capture_note(&s->cap, &smp_proc_of(s, t->procs[i])->as, &s->stacks);
	capture_save(&s->cap, &s->st->capture);
	smp_write_stats(s);
	if (!s->write_failed)
		smp_check_write(s, df_writer_flush(s->w));
	return s->write_failed ? -1 : 0;
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
	for (i = 0; i < s->qalloc; i++)
		free(s->q[i].copy);
	XP_FREE_ALL(s->q, s->pcs, s->flags);
	smp_tick_release(s);
	smp_irq_release(s);
	stacktab_release(&s->stacks);
	capture_release(&s->cap);
	unwinder_free(s->unw);
	module_cache_free(s->mc);
	if (s->loop.sigfd >= 0)
		close(s->loop.sigfd);
	if (s->loop.timerfd >= 0)
		close(s->loop.timerfd);
}

int sampler_run(struct tracer *t, struct df_writer *w, const struct sampler_opts *o,
		struct sampler_stats *st)
{
	struct sampler s = {.tr = t,
			    .w = w,
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
	s.unw = unwinder_new(o->unwind, o->max_depth);
	s.pcs = xp_calloc(o->max_depth + 2, sizeof(*s.pcs));
	s.flags = xp_calloc(o->max_depth + 2, 1);
	s.mc = module_cache_new();
	smp_irq_init(&s);
	smp_tick_init(&s);
	stacktab_init(&s.stacks);
	capture_init(&s.cap);
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
