/* SPDX-License-Identifier: MIT */
/*
 * Time in nanoseconds as xprof counts it: the unit, the one conversion from
 * a struct timespec and back, and the clocks the controller reads (the
 * monotonic clock of every duration and deadline, its own CPU time, another
 * process's CPU clock).  No state; safe from any thread.
 */
#ifndef XPROF_LIB_CLOCK_H
#define XPROF_LIB_CLOCK_H

#include <stdint.h>
#include <sys/time.h>
#include <sys/types.h>
#include <time.h>

#define XP_NS_PER_SEC 1000000000ull

/* @ts in ns (a time or a duration; negative fields are not expected). */
static inline uint64_t xp_timespec_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * XP_NS_PER_SEC + (uint64_t)ts->tv_nsec;
}

/* @tv in ns. */
static inline uint64_t xp_timeval_ns(const struct timeval *tv)
{
	return (uint64_t)tv->tv_sec * XP_NS_PER_SEC + (uint64_t)tv->tv_usec * 1000;
}

/* @ns as a struct timespec. */
static inline struct timespec xp_ns_timespec(uint64_t ns)
{
	struct timespec ts = {.tv_sec = (time_t)(ns / XP_NS_PER_SEC),
			      .tv_nsec = (long)(ns % XP_NS_PER_SEC)};

	return ts;
}

/* CLOCK_MONOTONIC in ns: every duration and deadline of record, attach and dump. */
uint64_t xp_now_ns(void);

/* CPU time of xprof's own threads, in ns (CLOCK_PROCESS_CPUTIME_ID). */
uint64_t xp_cpu_ns(void);

/*
 * Clock @id in ns into *@ns (another process's CPU clock, from
 * xp_process_clock, fails once it is gone).  0 or -1.
 */
int xp_clock_read(clockid_t id, uint64_t *ns);

/*
 * The CPU clock of process @pid: the id clock_getcpuclockid(3) returns,
 * made without the system call it spends to check that @pid exists (a
 * read of the clock fails then).  The kernel's encoding (the pid's
 * complement above 3 bits of clock type, CPUCLOCK_SCHED = 2) is its ABI.
 */
clockid_t xp_process_clock(pid_t pid);

#endif
