/* SPDX-License-Identifier: MIT */
/*
 * Triggers: one thread of xprof's per CPU that a sampled thread runs on,
 * pinned there, that preempts that CPU's thread at the controller's
 * request, so that the controller can interrupt it from another CPU while
 * it is off its CPU (see interrupt.c for why a preempted thread stops
 * where it was).  The controller itself no longer moves to the thread's
 * CPU: a controller that sat there when it resumed the thread left the
 * thread no idle CPU but the other one, and the thread moved at every
 * sample; sqlite3 then spent 14-37% more CPU time than alone, its caches
 * cold after each move (a task that moved sqlite3 between the two CPUs
 * every millisecond, with no ptrace at all: 25-30% more).
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
 */
#ifndef XPROF_SRC_TRIGGER_H
#define XPROF_SRC_TRIGGER_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

enum { TRIGGER_IDLE, TRIGGER_ARMED, TRIGGER_ARRIVED, TRIGGER_RELEASED };

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
 * Ask CPU @cpu's trigger to preempt its thread after @pause_ns; a wake
 * later than three times @wake_mean (the usual lateness of prompt wakes)
 * and SAMPLER_WAKE_LATE_NS pauses again, SAMPLER_MOVE_PAUSE_NS and a
 * random part of @span_ns.  -1 if it cannot (no trigger there, or its
 * last request is not over): interrupt from elsewhere.
 */
int trigger_arm(struct triggers *tg, int cpu, uint64_t pause_ns, uint64_t span_ns,
		uint64_t wake_mean);
/*
 * Wait until @cpu's armed trigger holds its CPU, until @until at most
 * (ctl_now_ns times): asleep, but spinning from @spin_from to @spin_to,
 * when it is expected (a woken controller would come tens of
 * microseconds after it, while the thread waits).  0 or -ETIMEDOUT.
 */
int trigger_wait_arrived(struct triggers *tg, int cpu, uint64_t spin_from, uint64_t spin_to,
			 uint64_t until);
/* Let @cpu's trigger go (arrived or not); its report in @rep when it had arrived. */
bool trigger_release(struct triggers *tg, int cpu, struct trigger_report *rep);
/* Stop and join every trigger.  Fine on a zeroed struct. */
void triggers_stop(struct triggers *tg);

#endif
