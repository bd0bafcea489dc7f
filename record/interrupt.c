/* SPDX-License-Identifier: MIT */
/*
 * How the sampler interrupts the threads due at a tick (see
 * sampler_int.h): each running one from its own CPU.
 */
#include "sampler_int.h"
#include "clock.h"
#include "ctl.h"
#include "err.h"
#include "procfs.h"
#include "schedule.h"
#include "trigger.h"

/*
 * The CPU @th runs or waits on: field 39 of its stat file.  -1 if unknown.
 * Not the cpu_id of its rseq area, which is cheaper to read (1.5 us against
 * 3.7) but is read from the thread's memory: process_vm_readv takes the
 * lock of the process's address space, and waits, before the interrupt
 * is sent, for any thread that holds it: a thread making 16 MiB mmap
 * (MAP_POPULATE) calls while another called mprotect was interrupted only
 * once back in its own code, and its calls read 30-43% of its CPU time
 * for a truth of 72% (perf: 67%, stat: 71-72%).
 */
int smp_thread_cpu(struct xp_thread *th)
{
	struct smp_thread *x = smp_thread_of(th);

	if (x->stat_fd < 0)
		x->stat_fd = procfs_open_task(th->proc->pid, th->tid, "stat");
	return procfs_task_cpu(x->stat_fd);
}

/* Interrupt the due thread @d from where the controller is now (@here: its own CPU). */
static void interrupt(struct sampler *s, struct smp_due *d, uint64_t now, bool here)
{
	struct smp_thread *x = smp_thread_of(d->th);

	d->cpu = -2; /* done, whatever the outcome */
	if (tracer_interrupt(s->tr, d->th))
		return;
	x->irq_time = smp_now(s);
	x->cpu.wall_sampled = now;
	x->pending_weight = d->weight;
	s->st->interrupts++;
	s->st->irq_same_cpu += here;
}

/*
 * How long to let a thread run after moving to its CPU, before
 * interrupting it: SAMPLER_MOVE_PAUSE_NS and a random part of this span,
 * a quarter period shared among the @moves CPUs visited this tick
 * (schedule_pause_ns draws it).  The move's own preemption of the thread
 * (see below) often takes it at the exit of a system call, i.e. at a
 * fixed point of a loop that makes many short calls; a fixed pause from
 * there then samples a fixed point of the loop, and which one drifts with
 * the loop's speed: with a 20 us pause,
 * sysmix's 3 us bursts gave 4.5-20% of the samples in io() for a truth of
 * 14-15%, from run to run and in phases of one run.  A pause spread over
 * many turns of such a loop samples all of it.
 */
static uint64_t move_span(const struct sampler *s, unsigned long moves)
{
	return s->period / 4 / (moves ? moves : 1);
}

/*
 * Count a wake on a due thread's CPU, @late ns after its timer and
 * @retries late ones before it: the statistics, and the running mean of
 * prompt wakes that tells a late one (schedule_wake_late).
 */
static void note_wake(struct sampler *s, uint64_t late, unsigned int retries)
{
	s->st->late_wakes += retries;
	if (!schedule_wake_late(late, s->wake_mean))
		s->wake_mean += ((int64_t)late - (int64_t)s->wake_mean) / 16;
	schedule_hist_add(s->st->wake_hist, &s->st->wake_ns_max, late);
}

/*
 * The controller has just woken on a due thread's CPU, @late ns after its
 * timer: the thread was preempted then.  A prompt wake preempted it where
 * the timer found it, at a random point of its run.  A late one did not:
 * the scheduler let the thread run on (at normal priority, EEVDF preempts
 * for a waking task only while that task is eligible) and switched at its
 * next scheduling point, the thread's own clock_gettime of its CPU time
 * (which updates the scheduler's accounting), a tick, or a system call
 * exit.  sysmix as an ordinary user: 5-10% of the wakes came more than
 * 30 us late, its 1-in-8 clock reads took 10-15% of the samples for a
 * truth of 6-8%, and io() 4-9 points fewer than perf found in the same
 * run.  So wait again, from a fresh random instant, until a wake comes
 * promptly (at most SAMPLER_WAKE_RETRIES times): late means over three
 * times the usual lateness of prompt wakes (their running mean; ~15 us in
 * a VM whose timer interrupts pass through the host) and 30 us.
 */
static void settle(struct sampler *s, unsigned long moves, uint64_t late)
{
	unsigned int retries;

	late = ctl_settle(late, s->wake_mean, &s->rnd, move_span(s, moves), &retries);
	note_wake(s, late, retries);
}

/*
 * Interrupt due thread @i and the later ones on its CPU (@held: held off it
 * there).  With @ths, the threads interrupted go there, their number is
 * returned (at most @max).
 */
static unsigned long interrupt_cpu(struct sampler *s, unsigned long i, uint64_t now, bool held,
				   struct xp_thread **ths, unsigned long max)
{
	int cpu = s->due[i].cpu;
	unsigned long j, n = 0;

	for (j = i; j < s->ndue; j++)
		if (s->due[j].cpu == cpu) {
			struct xp_thread *th = s->due[j].th;

			interrupt(s, &s->due[j], now, held);
			if (ths && n < max && th->interrupt_pending)
				ths[n++] = th;
		}
	return n;
}

/* Whether due thread @i is the first of this tick's on its CPU. */
static bool first_on_cpu(const struct sampler *s, unsigned long i)
{
	unsigned long j;

	for (j = 0; j < i; j++)
		if (s->due[j].cpu == s->due[i].cpu)
			return false;
	return true;
}

/* Whether a due thread of this tick waits or runs on @cpu. */
static bool cpu_due(const struct sampler *s, int cpu)
{
	unsigned long i;

	for (i = 0; i < s->ndue; i++)
		if (s->due[i].cpu == cpu)
			return true;
	return false;
}

/*
 * The controller is to leave the CPU where it interrupted the @n threads
 * @ths: take their samples first (interrupt_by_moving says why), when the
 * tasks that run or wait for a CPU, the controller aside, are at most two
 * per CPU: a CPU is then likely to have no other to run while its due ones
 * are stopped.  With more, a thread interrupted while others run before
 * it stops only when its turn comes, and the wait only costs (threads64:
 * 1049 waits of 1723 ticks timed out, slowdown 1.376 -> 1.474 at 3999
 * Hz).  The count is the machine's (procfs_running), read at this tick:
 * the target's threads that ran or waited since the last tick, the count
 * before, saw only the few that the scheduler ran in that time, and let
 * threads64 wait at 40% of the ticks at 999 Hz, 0.016 and 0.045 of
 * slowdown at 999 and 3999 Hz.  Only in CPU mode (in wall mode, not
 * measured).
 */
static void before_leaving(struct sampler *s, struct xp_thread **ths, unsigned long n)
{
	long others;

	if (!n || s->o->mode != SAMPLER_CPU)
		return;
	others = smp_others_running(s);
	if (others >= 0 && others <= 2 * (long)s->place.nr_cpus)
		smp_collect_stops(s, ths, n, SAMPLER_COLLECT_NS);
}

long smp_others_running(struct sampler *s)
{
	if (!s->running_read) {
		long running = procfs_running(s->loadavg_fd);

		s->running = running > 0 ? running - 1 : -1;
		s->running_read = true;
	}
	return s->running;
}

/*
 * Whether a CPU of ours is idle: fewer other tasks want to run than we
 * have CPUs.
 */
static bool cpu_idle(struct sampler *s)
{
	long others = smp_others_running(s);

	return others >= 0 && others < s->place.nr_cpus;
}

/*
 * Move the controller off @here when a due thread is there and a CPU of
 * ours has none: it resumes the thread later, and a thread resumed while
 * the controller holds its CPU moves to an idle one (with its caches).
 * Returns where the controller runs now.
 */
static int step_aside(struct sampler *s, int here)
{
	int cpu;

	if (here < 0 || !cpu_due(s, here))
		return here;
	for (cpu = 0; cpu < s->place.cpu_end; cpu++)
		if (cpu != here && CPU_ISSET(cpu, &s->place.allowed) && !cpu_due(s, cpu) &&
		    !ctl_move_to_cpu(&s->place, cpu)) {
			s->st->cpu_moves++;
			return ctl_cpu();
		}
	return here;
}

/*
 * Move to each CPU with due threads left (at most once per CPU per tick)
 * and interrupt them from there; the controller stays on the last one.
 * Before it leaves a CPU it takes the samples of the threads it
 * interrupted there (for up to SAMPLER_COLLECT_NS): stopped, they leave
 * their CPU to the others, and a CPU whose runnable threads were all due
 * went idle until the controller came back from its visit elsewhere, its
 * pause there included (threads4 at 999 Hz: CPU 0 idle 81 us per stop
 * there, against 44 us of xprof's own time; 0.3 ms in 2 s without xprof).
 * The @n threads @ths were interrupted from where the controller is now
 * (usually the CPU it stayed on after the last tick).
 */
static void interrupt_by_moving(struct sampler *s, uint64_t now, struct xp_thread **ths,
				unsigned long n)
{
	unsigned long i, moves = 0, visited = 0;

	for (i = 0; i < s->ndue; i++)
		moves += s->due[i].cpu >= 0 && first_on_cpu(s, i);
	if (moves)
		before_leaving(s, ths, n);
	for (i = 0; i < s->ndue; i++) {
		int cpu = s->due[i].cpu;
		bool moved;

		if (cpu < 0)
			continue;
		moved = !ctl_move_to_cpu(&s->place, cpu);
		s->st->cpu_moves += moved;
		/*
		 * The move preempted the thread through a reschedule request
		 * that, like the interrupt's signal, is flagged before its
		 * inter-processor interrupt arrives, and is honoured at the
		 * first system call exit in between: the thread would be taken
		 * there.  Let it run a while and be preempted again, this time
		 * by a timer of this CPU, which flags nothing in advance.
		 */
		if (moved)
			settle(s, moves, ctl_pause_ns(schedule_pause_ns(&s->rnd, move_span(s, moves))));
		n = interrupt_cpu(s, i, now, moved, ths, SAMPLER_COLLECT_MAX);
		if (++visited < moves)
			before_leaving(s, ths, n);
	}
}

/*
 * Have each CPU with due threads left preempted by its trigger, and
 * interrupt them while it holds the CPU.  A CPU whose trigger cannot be
 * asked has its threads interrupted from here.  Each trigger is asked to
 * park for the next tick once released (trigger.h): a thread that runs on
 * alone is due there again, and its trigger then needs no wake.
 */
static void interrupt_by_triggers(struct sampler *s, uint64_t now)
{
	uint64_t span = move_span(s, 1), pause = schedule_pause_ns(&s->rnd, span);
	uint64_t park = s->armed_at + 2 * s->wake_mean + schedule_pause_ns(&s->rnd, span);
	uint64_t until = xp_now_ns() + 2 * s->period + SAMPLER_TRIGGER_WAIT_NS;
	unsigned long i;
	int r;

	for (i = 0; i < s->ndue; i++) {
		if (s->due[i].cpu < 0 || !first_on_cpu(s, i))
			continue;
		r = trigger_arm(&s->trig, s->due[i].cpu, pause, span, s->wake_mean, park,
				&s->due[i].at);
		if (r < 0)
			interrupt_cpu(s, i, now, false, NULL, 0);
		else
			s->st->trigger_parked += (unsigned)r;
	}
	for (i = 0; i < s->ndue; i++) {
		int cpu = s->due[i].cpu;
		uint64_t at = s->due[i].at;
		struct trigger_report rep;
		bool held;

		if (cpu < 0)
			continue;
		held = !trigger_wait_arrived(&s->trig, cpu, at - SAMPLER_TRIGGER_SPIN_NS,
					     at + s->wake_mean + SAMPLER_TRIGGER_SPIN_NS, until);
		interrupt_cpu(s, i, now, held, NULL, 0);
		if (trigger_release(&s->trig, cpu, &rep))
			note_wake(s, rep.late, rep.retries);
		else
			s->st->trigger_timeouts++;
	}
}

/*
 * Interrupt this tick's due threads, each running one while it is off its
 * CPU, preempted there: a PTRACE_INTERRUPT sent to a thread that runs on
 * another CPU reaches it by an inter-processor interrupt, microseconds
 * later, and a thread that enters a system call meanwhile stops only at
 * the call's exit (the signal is pending at once and is checked on every
 * return to user space): with 3 us bursts between short calls, most
 * samples landed at a call's exit.  A thread preempted on its CPU when
 * interrupted stops where it was preempted.
 *
 * When the controller has a CPU without due threads, xprof's trigger on
 * each CPU with due threads preempts them there (trigger.h), and they are
 * resumed on their own CPU, idle again.  When every CPU has due threads
 * (more busy threads than CPUs), no CPU is idle to draw a resumed thread
 * away, and a trigger would have to win its CPU from the threads at each
 * tick, then hold it until the controller, itself sharing a CPU, came:
 * threads4 as an ordinary user got 17% of 3999 Hz that way.  The
 * controller then moves to each such CPU and preempts its threads itself.
 * (Moving back to a free CPU after each tick, to unwind there, brought
 * part of the skid back: 22-32% for a truth of 18-20%.)  Threads whose
 * CPU is unknown or not ours to use are interrupted from anywhere.
 */
void smp_interrupt_due(struct sampler *s, uint64_t now)
{
	bool idle = s->o->same_cpu && s->ndue && cpu_idle(s);
	int here = !s->o->same_cpu ? -1 : idle ? step_aside(s, ctl_cpu()) : ctl_cpu();
	bool shared = here >= 0 && cpu_due(s, here), from_here = false;
	struct xp_thread *ths[SAMPLER_COLLECT_MAX];
	unsigned long i, n = 0;

	if (shared)
		settle(s, 1, s->woke_late);
	for (i = 0; i < s->ndue; i++) {
		if (s->due[i].cpu == -1) {
			interrupt(s, &s->due[i], now, false);
			from_here = true;
		} else if (s->due[i].cpu == here) { /* and the later ones there (done: -2) */
			n = interrupt_cpu(s, i, now, true, ths, SAMPLER_COLLECT_MAX);
			from_here = true;
		}
	}
	/* Triggers leave the controller on a CPU without due threads. */
	s->stops_elsewhere = idle && !shared && !from_here;
	if (idle && !shared)
		interrupt_by_triggers(s, now);
	else
		interrupt_by_moving(s, now, ths, n);
}
