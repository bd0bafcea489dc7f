/* SPDX-License-Identifier: MIT */
/* The controller's signal set, idle-state and priority requests (see ctl.h). */
#include "ctl.h"
#include "clock.h"
#include "err.h"
#include "schedule.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

/* Whether @sig is ignored (SIG_IGN): nohup's SIGHUP. */
static bool signal_ignored(int sig)
{
	struct sigaction sa;

	return !sigaction(sig, NULL, &sa) && sa.sa_handler == SIG_IGN;
}

void ctl_signal_set(sigset_t *set, bool with_chld)
{
	sigemptyset(set);
	if (with_chld)
		sigaddset(set, SIGCHLD);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	/*
	 * A blocked signal is queued even when ignored: nohup's SIGHUP is left
	 * out.  Not SIGINT, which a script's background job starts with
	 * ignored, and which 'kill -INT $!' is to stop xprof with (as perf).
	 */
	if (!signal_ignored(SIGHUP))
		sigaddset(set, SIGHUP);
}

/*
 * A stopped thread leaves its CPU idle, and waking an idle CPU that halted
 * is most of what a stop costs the thread beyond the stop itself: the
 * resume has to bring the CPU out of its idle state (an interrupt to a
 * halted virtual CPU, tens of microseconds in a guest).  A PM QoS request
 * for zero exit latency keeps idle CPUs in the polling state, from which a
 * wake-up needs no interrupt at all (cyclictest asks for the same).  The
 * request lives as long as the file stays open, so it ends with xprof even
 * if xprof is killed.  Without root, or without the device, the CPUs idle
 * as usual.
 */
int ctl_hold_poll_idle(void)
{
	int32_t zero = 0;
	int fd = open("/dev/cpu_dma_latency", O_WRONLY | O_CLOEXEC);

	if (fd < 0) {
		xp_debug(1, "idle CPUs not kept polling: /dev/cpu_dma_latency: %s",
			 strerror(errno));
		return -1;
	}
	if (write(fd, &zero, sizeof(zero)) != (ssize_t)sizeof(zero)) {
		xp_debug(1, "idle CPUs not kept polling: %s", strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Take the CPU when the timer fires, as perf's sampling interrupt does.  At
 * normal priority the controller is one task among the target's: with more
 * busy threads than CPUs it gets a small share, ticks come late and each
 * stop waits for it (4 threads on 2 CPUs at 3999 Hz: 278 late ticks in
 * 0.27 s; at real-time priority none).  Round-robin at a low real-time
 * priority; the stops and their bookkeeping are short, the spin is bounded
 * and the kernel's real-time throttling caps the rest.  The launched
 * command was started before, and children of ours reset to normal
 * (SCHED_RESET_ON_FORK).
 */
unsigned int ctl_raise_priority(unsigned int prio)
{
	struct sched_param sp = {.sched_priority = (int)prio};

	if (sched_setscheduler(0, SCHED_RR | SCHED_RESET_ON_FORK, &sp)) {
		xp_debug(1, "staying at normal priority: %s", strerror(errno));
		return 0;
	}
	return prio;
}

bool ctl_may_raise_priority(unsigned int prio)
{
	struct sched_param sp = {.sched_priority = (int)prio}, old;
	int policy = sched_getscheduler(0);

	if (policy < 0 || sched_getparam(0, &old) || sched_setscheduler(0, SCHED_RR, &sp))
		return false;
	sched_setscheduler(0, policy, &old); /* lowering one's own priority needs no privilege */
	return true;
}

/*
 * Without real-time priority, the controller that moves to a running
 * thread's CPU must preempt it at once, or the sample waits for the end
 * of the thread's time slice (EEVDF: up to a few ms; 40% of the samples
 * asked for at 999 Hz on an idle machine).  Since Linux 6.12 a task may
 * ask for a shorter slice with sched_setattr (sched_runtime, from 100 us),
 * unprivileged, and a waking task with a shorter slice preempts one with
 * a longer.  Older kernels ignore the field for SCHED_OTHER.  0 or -1.
 */
int ctl_short_slice(void)
{
	/* The kernel's struct sched_attr, first version (glibc has no wrapper). */
	struct {
		uint32_t size, sched_policy;
		uint64_t sched_flags;
		int32_t sched_nice;
		uint32_t sched_priority;
		uint64_t sched_runtime, sched_deadline, sched_period;
	} attr = {.size = 48, .sched_policy = SCHED_OTHER, .sched_flags = 1 /* reset on fork */,
		  .sched_runtime = 100000};

	errno = 0;
	attr.sched_nice = getpriority(PRIO_PROCESS, 0); /* keep a user's nice */
	if (errno)
		attr.sched_nice = 0;
	if (syscall(SYS_sched_setattr, 0, &attr, 0)) {
		xp_debug(1, "no short time slice: %s", strerror(errno));
		return -1;
	}
	return 0;
}

unsigned long ctl_raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return 0;
	if (rl.rlim_cur < rl.rlim_max) {
		rlim_t cur = rl.rlim_cur;

		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			rl.rlim_cur = cur;
	}
	return rl.rlim_cur == RLIM_INFINITY ? ULONG_MAX : (unsigned long)rl.rlim_cur;
}

unsigned long ctl_min_timer_slack(void)
{
	int old = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);

	prctl(PR_SET_TIMERSLACK, 1ul, 0, 0, 0);
	return old > 0 ? (unsigned long)old : 0;
}

void ctl_set_timer_slack(unsigned long ns)
{
	if (ns)
		prctl(PR_SET_TIMERSLACK, ns, 0, 0, 0);
}

void ctl_drop_priority(void)
{
	struct sched_param sp = {.sched_priority = 0};

	sched_setscheduler(0, SCHED_OTHER, &sp);
}

/*
 * CPU numbers are not always 0 to the online count - 1: with SMT turned
 * off, or a CPU taken offline, some in the middle are missing, and a
 * container's cpuset holds any of them (a count of them left the triggers
 * of the highest numbers unmade, and their threads were interrupted from
 * another CPU, with the skid that brings).
 */
void ctl_place_init(struct ctl_place *pl)
{
	long online;
	int cpu;

	pl->pinned = -1;
	pl->saved = !sched_getaffinity(0, sizeof(pl->allowed), &pl->allowed);
	if (!pl->saved) {
		online = sysconf(_SC_NPROCESSORS_ONLN);
		pl->nr_cpus = pl->cpu_end = online > 0 ? (int)online : 1;
		return;
	}
	pl->nr_cpus = CPU_COUNT(&pl->allowed);
	pl->cpu_end = 0;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &pl->allowed))
			pl->cpu_end = cpu + 1;
}

int ctl_move_to_cpu(struct ctl_place *pl, int cpu)
{
	cpu_set_t one;

	if (!pl->saved || cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &pl->allowed))
		return -EINVAL;
	if (pl->pinned == cpu && sched_getcpu() == cpu)
		return 0;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		return -errno;
	pl->pinned = cpu;
	return 0;
}

void ctl_place_release(struct ctl_place *pl)
{
	if (pl->saved && pl->pinned >= 0)
		sched_setaffinity(0, sizeof(pl->allowed), &pl->allowed);
	pl->pinned = -1;
}

int ctl_cpu(void)
{
	return sched_getcpu();
}

int ctl_timerfd_at(int fd, uint64_t at)
{
	struct itimerspec its = {.it_value = xp_ns_timespec(at)};

	return timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL) ? -errno : 0;
}

uint64_t ctl_pause_ns(uint64_t ns)
{
	uint64_t at = xp_now_ns() + ns, now;
	struct timespec ts = xp_ns_timespec(at);

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
	now = xp_now_ns();
	return now > at ? now - at : 0;
}

int ctl_start_pinned(pthread_t *thread, int cpu, void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	cpu_set_t one;
	int e = pthread_attr_init(&attr);

	if (e)
		return e;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	pthread_attr_setaffinity_np(&attr, sizeof(one), &one);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	e = pthread_create(thread, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return e;
}

uint64_t ctl_settle(uint64_t late, uint64_t mean, uint64_t *rnd, uint64_t span,
		    unsigned int *retries)
{
	*retries = 0;
	while (schedule_wake_late(late, mean) && *retries < SAMPLER_WAKE_RETRIES) {
		++*retries;
		late = ctl_pause_ns(schedule_pause_ns(rnd, span));
	}
	return late;
}
