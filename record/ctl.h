/* SPDX-License-Identifier: MIT */
/*
 * The controller process itself (the xprof process that traces): the
 * signals it takes through a signalfd or sigwaitinfo instead of
 * handlers, and how it asks the machine for prompt stops (idle CPUs kept
 * polling, a real-time priority).  Prints only debug lines.
 */
#ifndef XPROF_RECORD_CTL_H
#define XPROF_RECORD_CTL_H

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * The signals the controller handles itself: SIGINT, SIGTERM, SIGHUP (not
 * when ignored as xprof started: nohup's, ignored by its command too), and
 * SIGCHLD when @with_chld (the sampling loop and the wait for a command
 * learn of children through it).  Fills @set; blocks nothing.
 */
void ctl_signal_set(sigset_t *set, bool with_chld);

/*
 * The value with which the process the shell started passes on a SIGINT
 * that came from the terminal (sigqueue), when the recorder runs in a
 * session of its own (common_split_session): the recorder treats it as the
 * terminal's, which reached the command's process group already.
 */
#define CTL_SIGINT_FROM_TTY 0x78707474
/* Whether a SIGINT with this si_code and value came from the terminal. */
static inline bool ctl_sigint_from_tty(int code, int value)
{
	return code == SI_KERNEL || (code == SI_QUEUE && value == CTL_SIGINT_FROM_TTY);
}

/*
 * Keep idle CPUs polling while the returned descriptor stays open (a PM QoS
 * request for zero exit latency through /dev/cpu_dma_latency; needs root).
 * Returns the descriptor to close, or -1 when refused.
 */
int ctl_hold_poll_idle(void);

/*
 * Run the calling thread at SCHED_RR priority @prio (SCHED_RESET_ON_FORK).
 * Returns @prio, or 0 when refused (needs root or CAP_SYS_NICE).
 */
unsigned int ctl_raise_priority(unsigned int prio);
/*
 * Whether the calling thread may run at SCHED_RR priority @prio: tried,
 * then undone (root, CAP_SYS_NICE, or an RLIMIT_RTPRIO of @prio or more).
 */
bool ctl_may_raise_priority(unsigned int prio);

/* Ask for a 100 us time slice at normal priority (see ctl.c).  0 or -1. */
int ctl_short_slice(void);
/*
 * The smallest timer slack for the calling thread (PR_SET_TIMERSLACK 1 ns):
 * a normal task's timers may otherwise fire up to 50 us late (a real-time
 * one has none).  Returns the previous slack in ns.
 */
unsigned long ctl_min_timer_slack(void);
/*
 * Raise the soft limit on open files to the hard one: the sampler keeps
 * up to four /proc files open per thread.  Only for the recorder, once the
 * command is started (it keeps the limits it was given).  Returns the new
 * soft limit, 0 if unknown.
 */
unsigned long ctl_raise_nofile(void);
/* Back to @ns. */
void ctl_set_timer_slack(unsigned long ns);

/* Back to SCHED_OTHER. */
void ctl_drop_priority(void);

/*
 * Where the controller runs.  ctl_place_init saves the CPUs it may use (its
 * affinity at the start); ctl_move_to_cpu pins the calling thread to @cpu
 * and returns once it runs there (0, or -errno: @cpu is not among the saved
 * ones, or the kernel refused); ctl_place_release restores the saved set.
 * ctl_cpu: the CPU the caller runs on now, -1 if unknown.
 */
struct ctl_place {
	cpu_set_t allowed;
	bool saved;
	int pinned;  /* the CPU the controller is pinned to, -1: none */
	int nr_cpus; /* CPUs in @allowed (the online count when it is not saved) */
	int cpu_end; /* one past the highest of them: CPU numbers need not be dense */
};
void ctl_place_init(struct ctl_place *pl);
int ctl_move_to_cpu(struct ctl_place *pl, int cpu);
void ctl_place_release(struct ctl_place *pl);
int ctl_cpu(void);
/*
 * Start a thread of xprof's that runs @fn(@arg) on @cpu alone, with a
 * small stack (an idle spinner, a trigger): 0 or an errno.
 */
int ctl_start_pinned(pthread_t *thread, int cpu, void *(*fn)(void *), void *arg);
/* Set timerfd @fd to expire at @at (xp_now_ns, CLOCK_MONOTONIC); 0 disarms it.  0 or -errno. */
int ctl_timerfd_at(int fd, uint64_t at);
/* Sleep @ns on a timer of the CPU the caller runs on; how late it woke, in ns. */
uint64_t ctl_pause_ns(uint64_t ns);
/*
 * After a wake @late ns past its timer (prompt ones come @mean late):
 * while it came late (schedule_wake_late), pause again for
 * schedule_pause_ns(@rnd, @span), at most SAMPLER_WAKE_RETRIES times.
 * The last wake's lateness; the pauses taken again in *@retries.
 */
uint64_t ctl_settle(uint64_t late, uint64_t mean, uint64_t *rnd, uint64_t span,
		    unsigned int *retries);

#endif
