/* SPDX-License-Identifier: MIT */
/*
 * Triggers: one thread of xprof's per CPU that a sampled thread runs on,
 * pinned there, that preempts that CPU's thread at the controller's
 * request, so that the controller can interrupt it from another CPU while
 * it is off its CPU (see interrupt.c for why a preempted thread stops
 * where it was).  They serve while a CPU is free for the controller
 * (interrupt.c: interrupt_by_triggers; when every CPU has due threads, the
 * controller moves to each itself): a controller that sat on the thread's
 * CPU when it resumed the thread left it no idle CPU but the other one,
 * and the thread moved at every sample; sqlite3 then spent 14-37% more CPU
 * time than alone, its caches cold after each move (a task that moved
 * sqlite3 between the two CPUs every millisecond, with no ptrace at all:
 * 25-30% more).
 *
 * One request at a time per CPU:
 *   controller: trigger_arm (IDLE -> ARMED, with a pause);
 *   trigger: wakes on its CPU, sleeps the pause on a timer of that CPU
 *            (again while its wake comes late, as interrupt.c's settle),
 *            then ARMED -> ARRIVED and spins, holding the CPU;
 *   controller: trigger_wait_arrived, interrupts the CPU's threads, then
 *            trigger_release (-> RELEASED); the trigger goes back to IDLE
 *            and sleeps, and the preempted thread runs on into its stop.
 * A controller that gives up waiting releases an ARMED trigger, which
 * then goes back to IDLE without spinning.
 *
 * Woken from IDLE, the trigger preempts the thread twice per request: once
 * to arm its timer, once when it fires.  So a request may name the instant
 * of the CPU's next one (the next tick and its pause): the trigger arms its
 * timer for it while it holds the CPU (arming a timer costs a virtual CPU
 * an exit to its host: not in the thread's way after the release) and,
 * released, waits PARKED; a request made before that instant finds it so
 * (PARKED -> ARMED) and costs the thread only the preemption that samples
 * it.  A parked trigger that wakes unasked goes back to IDLE.
 */
#ifndef XPROF_RECORD_TRIGGER_H
#define XPROF_RECORD_TRIGGER_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

enum { TRIGGER_IDLE, TRIGGER_PARKED, TRIGGER_ARMED, TRIGGER_ARRIVED, TRIGGER_RELEASED };

/* What a trigger reports of its last arrival. */
struct trigger_report {
	uint64_t late;	      /* ns its last pause's wake came after the timer */
	unsigned int retries; /* pauses taken again because the wake came late */
};

struct triggers;

struct trigger_cpu {
	_Atomic uint32_t state;
	uint64_t pause_ns;  /* ARMED: how long to let the thread run first */
	uint64_t span_ns;   /* ARMED: a late wake pauses again a random part of this */
	uint64_t wake_mean; /* ARMED: the usual lateness of a prompt wake (ns) */
	uint64_t rnd;	    /* the trigger's own random state */
	uint64_t park_at;	      /* ARMED: park until this instant once released, 0: not */
	uint64_t parked_at;	      /* PARKED: the instant it waits for */
	uint64_t timer_at;	      /* the instant its timer is set for, 0: none */
	int timer_fd;		      /* that timer (a timerfd), -1: it does not park */
	_Atomic uint64_t idle_wakes; /* parked wakes that found no request */
	struct trigger_report rep;
	struct triggers *tg; /* the set it belongs to */
	pthread_t thread;
	bool started;
	bool failed; /* could not be started: the CPU is interrupted from elsewhere */
};

struct triggers {
	struct trigger_cpu *cpu; /* indexed by CPU number, nr entries */
	int nr;
	unsigned int rt_prio; /* the controller's real-time priority, 0: none */
	_Atomic int stop;
	cpu_set_t allowed; /* the CPUs xprof may run on (none: no trigger) */
};

/*
 * Prepare for the CPUs below @cpu_end of the set xprof may run on,
 * @allowed (no thread yet; each starts at its first request).
 */
void triggers_init(struct triggers *tg, int cpu_end, unsigned int rt_prio,
		   const cpu_set_t *allowed);
/*
 * Ask CPU @cpu's trigger to preempt its thread: at the instant it is parked
 * for, if it is parked, else after @pause_ns; then to park until @park_at
 * (0: not) once released.  A wake
 * later than three times @wake_mean (the usual lateness of prompt wakes)
 * and SAMPLER_WAKE_LATE_NS pauses again, SAMPLER_MOVE_PAUSE_NS and a
 * random part of @span_ns.  *@at: when it should arrive (xp_now_ns).  -1
 * if it cannot (no trigger there, or its last request is not over):
 * interrupt from elsewhere.  1 if it was parked (no wake was needed).
 */
int trigger_arm(struct triggers *tg, int cpu, uint64_t pause_ns, uint64_t span_ns,
		uint64_t wake_mean, uint64_t park_at, uint64_t *at);
/*
 * Wait until @cpu's armed trigger holds its CPU, until @until at most
 * (xp_now_ns times): asleep, but spinning from @spin_from to @spin_to,
 * when it is expected (a woken controller would come tens of
 * microseconds after it, while the thread waits).  0 or -ETIMEDOUT.
 */
int trigger_wait_arrived(struct triggers *tg, int cpu, uint64_t spin_from, uint64_t spin_to,
			 uint64_t until);
/* Let @cpu's trigger go (arrived or not); its report in @rep when it had arrived. */
bool trigger_release(struct triggers *tg, int cpu, struct trigger_report *rep);
/* Parked wakes that found no request, over all CPUs. */
uint64_t triggers_idle_wakes(struct triggers *tg);
/* Stop and join every trigger.  Fine on a zeroed struct. */
void triggers_stop(struct triggers *tg);

#endif
