/* SPDX-License-Identifier: MIT */
/*
 * How the sampler interrupts the threads due at a tick (see
 * sampler_int.h): each running one from its own CPU.
 */
#include "sampler_int.h"
#include "ctl.h"
#include "err.h"
#include "procfs.h"

/*
 * The CPU @th runs or waits on: the cpu_id of its rseq area (kept current
 * by the kernel on every return to user space; 4 bytes read from its
 * memory) or, for a thread without one, its stat file.  -1 if unknown.
 */
int smp_thread_cpu(struct sampler *s, struct xp_thread *th)
{
	struct smp_thread *x = smp_thread_of(th);
	uint32_t cpu;

	if (x->rseq_cpu) {
		if (stackcopy_read(&smp_proc_of(s, th->proc)->mem, &cpu, sizeof(cpu),
				   x->rseq_cpu) == (ssize_t)sizeof(cpu) &&
		    cpu < CPU_SETSIZE)
			return (int)cpu;
		return -1;
	}
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
	x->sample_wanted = true;
	x->irq_time = smp_now(s);
	x->cpu.wall_sampled = now;
	x->pending_weight = d->weight;
	s->pending++;
	s->st->interrupts++;
	s->st->irq_same_cpu += here;
}

/*
 * Interrupt this tick's due threads, each running one from its own CPU:
 * a PTRACE_INTERRUPT sent to a thread that runs on another CPU reaches it
 * by an inter-processor interrupt, microseconds later, and a thread that
 * enters a system call meanwhile stops only at the call's exit (the signal
 * is pending at once and is checked on every return to user space): with
 * 3 us bursts between short calls, most samples landed at a call's exit.
 * A controller that runs on the thread's CPU has preempted it, so the
 * thread is off its CPU when interrupted and stops where it was preempted.
 * The controller moves to each CPU with due threads (at most once per CPU
 * per tick), starting with its own, and stays on the last one: with one
 * busy thread it stays on that thread's CPU, where the next tick's timer
 * fires and wakes it.  (Moving back to a free CPU after each tick, to
 * unwind there, brought part of the skid back: 22-32% for a truth of
 * 18-20%.)  Threads whose CPU is unknown or not ours to use are
 * interrupted from anywhere.
 */
void smp_interrupt_due(struct sampler *s, uint64_t now)
{
	int here = s->o->same_cpu ? ctl_cpu() : -1;
	unsigned long i, j;

	for (i = 0; i < s->ndue; i++)
		if (s->due[i].cpu < 0 || s->due[i].cpu == here)
			interrupt(s, &s->due[i], now, here >= 0 && s->due[i].cpu == here);
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
		 * there.  Let it run a little and be preempted again, this time
		 * by a timer of this CPU, which flags nothing in advance.
		 */
		if (moved)
			ctl_pause_ns(SAMPLER_MOVE_PAUSE_NS);
		for (j = i; j < s->ndue; j++)
			if (s->due[j].cpu == cpu)
				interrupt(s, &s->due[j], now, moved);
	}
}
