/* SPDX-License-Identifier: MIT */
/*
 * Idle spinners: what keeps idle CPUs from halting during stops when the
 * PM QoS request of ctl_hold_poll_idle is refused (it needs root).  A stop
 * leaves the stopped thread's CPU idle; a CPU that halted needs a wake-up
 * interrupt to run the thread again, which in a virtual machine costs tens
 * of microseconds (PTRACE-NOTES: doc/ptrace-notes.md).  One thread per CPU
 * xprof may run on, pinned there at SCHED_IDLE: it runs only when nothing
 * else wants the CPU, giving it up at the next wake-up, and spins with the
 * CPU's pause hint, so the CPU never enters an idle state.  The price is
 * the CPU time of the idle CPUs (and, on a virtual machine, host CPU time
 * the guest would have given back): only while recording, only on
 * request (--spin-idle).  Needs no privilege.
 */
#ifndef XPROF_RECORD_IDLESPIN_H
#define XPROF_RECORD_IDLESPIN_H

#include <pthread.h>
#include <stdatomic.h>

struct idlespin {
	pthread_t *threads;
	unsigned int nr;
	atomic_int stop;
};

/* Start one spinner per CPU of xprof's affinity mask.  Returns how many run (0: none). */
unsigned int idlespin_start(struct idlespin *is);
/* Stop and join them.  Fine on a zeroed struct. */
void idlespin_stop(struct idlespin *is);

#endif
