/* SPDX-License-Identifier: MIT */
/*
 * How the sampler interrupts the threads due at a tick (see
 * sampler_int.h): each running one from its own CPU.  What is left to do
 * between two CPUs' interrupts (collecting the stops) is the loop's: this
 * file plans the visits (s->irq) and makes them one at a time.
 */
#include "sampler_int.h"
#include "clock.h"
#include "ctl.h"
#include "err.h"
#include "schedule.h"
#include "trigger.h"

#include <stdlib.h>

void smp_irq_init(struct sampler *s)
{
	ctl_place_init(&s->irq.place);
	s->irq.rnd = s->start_mono ^ 0x6a09e667f3bcc909ull;
}

void smp_irq_start(struct sampler *s)
{
	struct smp_irq *q = &s->irq;

	if (s->o->same_cpu)
		triggers_init(&q->trig, q->place.cpu_end, s->st->rt_priority, &q->place.allowed);
}

void smp_irq_stop(struct sampler *s)
{
	s->st->trigger_idle_wakes = triggers_idle_wakes(&s->irq.trig);
	triggers_stop(&s->irq.trig);
	ctl_place_release(&s->irq.place);
}

void smp_irq_release(struct sampler *s)
{
	free(s->irq.visits);
	free(s->irq.sent);
}

/* Whether a stop of @th is asked for and not seen yet. */
static bool sent_pending(struct xp_thread *th)
{
	return th->interrupt_pending || smp_thread_of(th)->at_waiting_stop;
}

void smp_irq_sent_filter(struct sampler *s, bool (*keep)(struct sampler *, pid_t))
{
	struct smp_irq *q = &s->irq;
	unsigned long i, k = 0;
	struct xp_thread *th;

	/* @keep may handle a stop, and that an exit, which frees its thread. */
	for (i = 0; i < q->nsent; i++) {
		th = tracer_find(s->tr, q->sent[i]);
		if (th && sent_pending(th) && (!keep || keep(s, q->sent[i])))
			q->sent[k++] = q->sent[i];
	}
	q->nsent = k;
}

/*
 * The list is cut down to the pending ones when it has grown past twice
 * the interrupts pending: a thread interrupted at every tick and never
 * collected by tid stays in it once.
 */
void smp_irq_note_sent(struct sampler *s, pid_t tid)
{
	struct smp_irq *q = &s->irq;

	if (q->nsent >= 2 * s->tr->interrupts_pending + 64)
		smp_irq_sent_filter(s, NULL);
	xp_grow((void **)&q->sent, &q->sent_alloc, q->nsent + 1, sizeof(*q->sent));
	q->sent[q->nsent++] = tid;
}

/* Interrupt the due thread @d from where the controller is now (@here: its own CPU). */
static void interrupt(struct sampler *s, const struct smp_due *d, uint64_t now, bool here)
{
	struct smp_thread *x = smp_thread_of(d->th);

	if (tracer_interrupt(s->tr, d->th))
		return;
	smp_irq_note_sent(s, d->th->tid);
	x->irq_time = smp_now(s);
	x->cpu.wall_sampled = now;
	x->pending_weight = d->weight;
	x->irq_held = here;
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
	if (!schedule_wake_late(late, s->irq.wake_mean))
		s->irq.wake_mean += ((int64_t)late - (int64_t)s->irq.wake_mean) / 16;
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

	late = ctl_settle(late, s->irq.wake_mean, &s->irq.rnd, move_span(s, moves), &retries);
	note_wake(s, late, retries);
}

/*
 * Interrupt the due threads on @cpu (@held: held off it there).  With
 * @ths, the threads interrupted go there, their number is returned (at
 * most SAMPLER_COLLECT_MAX).
 */
static unsigned long interrupt_cpu(struct sampler *s, int cpu, uint64_t now, bool held,
				   struct xp_thread **ths)
{
	const struct smp_tick *tk = &s->tick;
	unsigned long j, n = 0;

	for (j = 0; j < tk->ndue; j++)
		if (tk->due[j].cpu == cpu) {
			struct xp_thread *th = tk->due[j].th;

			interrupt(s, &tk->due[j], now, held);
			if (ths && n < SAMPLER_COLLECT_MAX && th->interrupt_pending)
				ths[n++] = th;
		}
	return n;
}

/* Whether due thread @i is the first of this tick's on its CPU. */
static bool first_on_cpu(const struct smp_tick *tk, unsigned long i)
{
	unsigned long j;

	for (j = 0; j < i; j++)
		if (tk->due[j].cpu == tk->due[i].cpu)
			return false;
	return true;
}

/* Whether a due thread of this tick waits or runs on @cpu. */
static bool cpu_due(const struct smp_tick *tk, int cpu)
{
	unsigned long i;

	for (i = 0; i < tk->ndue; i++)
		if (tk->due[i].cpu == cpu)
			return true;
	return false;
}

/*
 * Move the controller off @here when a due thread is there and a CPU of
 * ours has none: it resumes the thread later, and a thread resumed while
 * the controller holds its CPU moves to an idle one (with its caches).
 * Returns where the controller runs now.
 */
static int step_aside(struct sampler *s, int here)
{
	struct ctl_place *pl = &s->irq.place;
	int cpu;

	if (here < 0 || !cpu_due(&s->tick, here))
		return here;
	for (cpu = 0; cpu < pl->cpu_end; cpu++)
		if (cpu != here && CPU_ISSET(cpu, &pl->allowed) && !cpu_due(&s->tick, cpu) &&
		    !ctl_move_to_cpu(pl, cpu)) {
			s->st->cpu_moves++;
			return ctl_cpu();
		}
	return here;
}

/*
 * Plan the visits of interrupt_by_moving: each CPU with due threads left
 * (other than @here, done already), once, in the order of the due list.
 * The loop collects the stops of the threads interrupted on a CPU before
 * the controller leaves it (smp_irq_visit says why) when the tasks that
 * run or wait for a CPU, the controller aside, are at most two per CPU: a
 * CPU is then likely to have no other to run while its due ones are
 * stopped.  With more, a thread interrupted while others run before it
 * stops only when its turn comes, and the wait only costs (threads64:
 * 1049 waits of 1723 ticks timed out, slowdown 1.376 -> 1.474 at 3999
 * Hz).  The count is the machine's (smp_others_running), read at this
 * tick: the target's threads that ran or waited since the last tick, the
 * count before, saw only the few that the scheduler ran in that time, and
 * let threads64 wait at 40% of the ticks at 999 Hz, 0.016 and 0.045 of
 * slowdown at 999 and 3999 Hz.  Only in CPU mode (in wall mode, not
 * measured).
 */
static void plan_visits(struct sampler *s, int here)
{
	const struct smp_tick *tk = &s->tick;
	struct smp_irq *q = &s->irq;
	unsigned long i;
	long others;

	q->nvisits = q->next_visit = 0;
	for (i = 0; i < tk->ndue; i++) {
		if (tk->due[i].cpu < 0 || tk->due[i].cpu == here || !first_on_cpu(tk, i))
			continue;
		xp_grow((void **)&q->visits, &q->visits_alloc, q->nvisits + 1, sizeof(*q->visits));
		q->visits[q->nvisits++] = (struct smp_visit){.cpu = tk->due[i].cpu};
	}
	others = s->o->mode == SAMPLER_CPU ? smp_others_running(s) : -1;
	q->collect = others >= 0 && others <= 2 * (long)q->place.nr_cpus;
}

/*
 * Move to each CPU with due threads left (at most once per CPU per tick)
 * and interrupt them from there; the controller stays on the last one.
 * Before it leaves a CPU the loop takes the samples of the threads it
 * interrupted there (for up to SAMPLER_COLLECT_NS): stopped, they leave
 * their CPU to the others, and a CPU whose runnable threads were all due
 * went idle until the controller came back from its visit elsewhere, its
 * pause there included (threads4 at 999 Hz: CPU 0 idle 81 us per stop
 * there, against 44 us of xprof's own time; 0.3 ms in 2 s without xprof).
 */
unsigned long smp_irq_visit(struct sampler *s, uint64_t now, struct xp_thread **ths)
{
	struct smp_irq *q = &s->irq;
	int cpu = q->visits[q->next_visit++].cpu;
	bool moved = !ctl_move_to_cpu(&q->place, cpu);

	s->st->cpu_moves += moved;
	/*
	 * The move preempted the thread through a reschedule request that,
	 * like the interrupt's signal, is flagged before its inter-processor
	 * interrupt arrives, and is honoured at the first system call exit in
	 * between: the thread would be taken there.  Let it run a while and be
	 * preempted again, this time by a timer of this CPU, which flags
	 * nothing in advance.
	 */
	if (moved)
		settle(s, q->nvisits,
		       ctl_pause_ns(schedule_pause_ns(&q->rnd, move_span(s, q->nvisits))));
	return interrupt_cpu(s, cpu, now, moved, ths);
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
	struct smp_irq *q = &s->irq;
	uint64_t span = move_span(s, 1), pause = schedule_pause_ns(&q->rnd, span);
	uint64_t park = s->loop.armed_at + 2 * q->wake_mean + schedule_pause_ns(&q->rnd, span);
	uint64_t until = xp_now_ns() + 2 * s->period + SAMPLER_TRIGGER_WAIT_NS;
	unsigned long i;
	int r;

	for (i = 0; i < q->nvisits; i++) {
		struct smp_visit *v = &q->visits[i];

		r = trigger_arm(&q->trig, v->cpu, pause, span, q->wake_mean, park, &v->at);
		if (r < 0) {
			interrupt_cpu(s, v->cpu, now, false, NULL);
			v->done = true;
		} else {
			s->st->trigger_parked += (unsigned)r;
		}
	}
	for (i = 0; i < q->nvisits; i++) {
		struct smp_visit *v = &q->visits[i];
		struct trigger_report rep;
		bool held;

		if (v->done)
			continue;
		held = !trigger_wait_arrived(&q->trig, v->cpu, v->at - SAMPLER_TRIGGER_SPIN_NS,
					     v->at + q->wake_mean + SAMPLER_TRIGGER_SPIN_NS, until);
		interrupt_cpu(s, v->cpu, now, held, NULL);
		if (trigger_release(&q->trig, v->cpu, &rep))
			note_wake(s, rep.late, rep.retries);
		else
			s->st->trigger_timeouts++;
	}
	q->nvisits = 0; /* no visits left for the loop */
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
 * controller then moves to each such CPU and preempts its threads itself
 * (smp_irq_visit), leaving the loop the stops to collect in between; it
 * stays on the last one, since moving back to a free CPU after each tick,
 * to unwind there, brought part of the skid back (22-32% for a truth of
 * 18-20%, t1300).
 * Threads whose CPU is unknown or not ours to use are interrupted from
 * anywhere.
 */
unsigned long smp_interrupt_due(struct sampler *s, uint64_t now, struct xp_thread **ths)
{
	const struct smp_tick *tk = &s->tick;
	bool idle = s->o->same_cpu && tk->ndue && smp_cpu_idle(s);
	int here = !s->o->same_cpu ? -1 : idle ? step_aside(s, ctl_cpu()) : ctl_cpu();
	bool shared = here >= 0 && cpu_due(tk, here), from_here = false;
	unsigned long i, n = 0;

	if (shared)
		settle(s, 1, s->loop.woke_late);
	for (i = 0; i < tk->ndue; i++) {
		if (tk->due[i].cpu == -1) {
			interrupt(s, &tk->due[i], now, false);
			from_here = true;
		}
	}
	if (here >= 0 && shared) {
		n = interrupt_cpu(s, here, now, true, ths);
		from_here = true;
	}
	plan_visits(s, here);
	/* Triggers leave the controller on a CPU without due threads. */
	s->irq.stops_elsewhere = idle && !shared && !from_here;
	if (idle && !shared)
		interrupt_by_triggers(s, now);
	return n;
}

bool smp_irq_more(const struct sampler *s)
{
	return s->irq.next_visit < s->irq.nvisits;
}
