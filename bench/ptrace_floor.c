/* SPDX-License-Identifier: MIT */
/*
 * ptrace_floor: the least a ptrace sampler can cost its target, for the
 * overhead benchmark (bench/run.sh, tools floor and floor-user).  Not a
 * profiler and not a ctest test.
 *
 *   ptrace_floor [-F HZ] [-c CPUS] [-p | -m] -- COMMAND [ARG]...
 *
 * It launches COMMAND traced (PTRACE_SEIZE, following its threads) and
 * takes one sample per period (1/HZ) of the target's CPU time (its
 * process CPU clock, read at each tick of HZ per second of wall time), at
 * most one per CPU per tick: the rate xprof and perf are asked for.  A
 * sample is PTRACE_INTERRUPT; then, as the stop arrives, the registers
 * (PTRACE_GETREGSET), 2 KiB of stack (process_vm_readv) and PTRACE_CONT.
 * That is the work of every ptrace sample and nothing else: no /proc
 * read, no unwinding, no data file, the interrupt sent from whatever CPU
 * it runs on (so its samples may skid into system calls, which xprof's do
 * not).  Which threads run it learns for free from the target: it passes
 * a shared file of per-CPU slots (XP_TARGET_ONCPU=FD), where
 * tests/targets/threads writes each worker's thread id as it works, and
 * interrupts the threads of the slots written since the last tick.  A
 * target that writes no slot (split) has its threads interrupted in turn,
 * the main one of a multi-threaded target left out.  What it costs the
 * target is what a ptrace sampler costs at the least: one that needs no
 * reads to know which threads run, and interrupts from any CPU.

 * With -p it pins itself and COMMAND to one CPU (its first): the thread
 * it interrupts is then always one it has preempted, off its CPU, which
 * is how xprof keeps samples from skidding into system calls, here with
 * no cost of finding or reaching the thread's CPU (for a one-thread
 * target: the others would share that CPU).  With -m (for a target that
 * writes slots) it moves to each slot's CPU (sched_setaffinity),
 * preempting the thread there, interrupts it and waits there for its
 * stop, as xprof does when every CPU is busy, without reading where the
 * thread runs and without xprof's random pause after each move.
 *
 * With -s it does not use the slots: it learns which threads ran as a
 * profiler of a program that tells nothing must, from each thread's
 * schedstat (procfs_schedstat), read at every tick; the threads whose
 * counters moved since the last tick are interrupted first, the others
 * in turn.  What those reads add to the floor is what finding the
 * running threads costs at the least.
 *
 * Privileges as xprof's: as root idle CPUs kept polling and real-time
 * priority 1; otherwise a 100 us time slice and 1 ns timer slack, from a
 * session of its own.  CPUS defaults to the CPUs it may run on.
 *
 * On exit it prints one line on stderr (C: its own CPU time per sample):
 *   ptrace_floor: N samples in S s (L late ticks), stop mean M us, cpu C us per sample
 * and exits with COMMAND's status (128 + signal when killed).
 */
#include "../tests/targets/oncpu.h"
#include "arch/arch.h"
#include "clock.h"
#include "ctl.h"
#include "err.h"
#include "floor.h"
#include "procfs.h"
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define USAGE "usage: ptrace_floor [-F HZ] [-c CPUS] [-p | -m | -s] -- COMMAND [ARG]..."

struct thr {
	pid_t tid;
	bool pending;
	uint64_t interrupted_at;
	int schedstat_fd;	  /* -s: opened at its first read, -1 before */
	struct procfs_sched last; /* -s: its counters at the last tick */
};

static struct thr *thrs;
static size_t nthrs, next_thr;
static unsigned long cap_thrs;
static pid_t leader;
static int exit_status = -1;
static const struct xp_arch *arch;

static struct oncpu_slot *oncpu; /* the slots the target writes (oncpu.h) */
static bool oncpu_seen;		 /* the target writes its slots */
static bool move;		 /* -m: interrupt each from its CPU */
static bool reads;		 /* -s: the running threads found by reading schedstat */
static struct ctl_place place;	 /* the CPUs it may use, and where it is pinned */
static sigset_t chld;		 /* SIGCHLD, blocked: waited for */

static uint64_t nsamples, stop_ns;
static size_t npending; /* threads interrupted, their stop not seen yet */

/* "ptrace_floor: WHAT[: WHY]" and exit 2. */
static void die(const char *what, const char *why)
{
	fprintf(stderr, "ptrace_floor: %s%s%s\n", what, why ? ": " : "", why ? why : "");
	exit(2);
}

static struct thr *thr_find(pid_t tid)
{
	size_t i;

	for (i = 0; i < nthrs; i++)
		if (thrs[i].tid == tid)
			return &thrs[i];
	return NULL;
}

static void thr_add(pid_t tid)
{
	if (thr_find(tid))
		return;
	xp_grow((void **)&thrs, &cap_thrs, nthrs + 1, sizeof(*thrs));
	thrs[nthrs++] = (struct thr){.tid = tid, .schedstat_fd = -1};
}

static void thr_drop(pid_t tid)
{
	struct thr *t = thr_find(tid);

	if (!t)
		return;
	if (t->pending)
		npending--;
	if (t->schedstat_fd >= 0)
		close(t->schedstat_fd);
	*t = thrs[--nthrs];
}

/* One wait status of thread @tid. */
static void handle(pid_t tid, int st)
{
	struct thr *t = thr_find(tid);
	unsigned long msg;
	int event, sig = 0;

	if (WIFEXITED(st) || WIFSIGNALED(st)) {
		if (tid == leader)
			exit_status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		thr_drop(tid);
		return;
	}
	if (!WIFSTOPPED(st))
		return;
	if (!t) { /* a new thread's first stop may come before its clone event */
		thr_add(tid);
		t = thr_find(tid);
	}
	/*
	 * Any stop of an interrupted thread is its sample: another stop (its
	 * clone event, a signal) may have taken the interrupt's place.
	 */
	if (t->pending) {
		nsamples += floor_copy_sample(arch, t->tid, leader);
		t->pending = false;
		npending--;
		stop_ns += xp_now_ns() - t->interrupted_at;
	}
	event = st >> 16;
	if (event == PTRACE_EVENT_CLONE) {
		if (ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg) == 0)
			thr_add((pid_t)msg);
	} else if (event == PTRACE_EVENT_STOP) {
		sig = WSTOPSIG(st);
		if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU) {
			ptrace(PTRACE_LISTEN, tid, 0, 0); /* a group stop: stay stopped */
			return;
		}
		sig = 0;
	} else if (event == 0) {
		sig = WSTOPSIG(st); /* a signal on its way: deliver it */
	}
	ptrace(PTRACE_CONT, tid, 0, (void *)(uintptr_t)sig);
}

static void drain(bool block)
{
	pid_t tid;
	int st;

	while ((tid = waitpid(-1, &st, __WALL | (block ? 0 : WNOHANG))) > 0) {
		handle(tid, st);
		if (block)
			return;
	}
	if (tid < 0 && errno == ECHILD)
		exit_status = exit_status < 0 ? 0 : exit_status;
}

/*
 * Sleep until @at (xp_now_ns), handling the target's stops meanwhile;
 * with @tid, only while that thread's interrupt waits for its stop.
 */
static void sleep_until(uint64_t at, pid_t tid)
{
	struct timespec ts;
	struct thr *t;
	uint64_t now;

	while (exit_status < 0 && (now = xp_now_ns()) < at) {
		if (tid && (!(t = thr_find(tid)) || !t->pending))
			return;
		ts = xp_ns_timespec(at - now);
		if (sigtimedwait(&chld, NULL, &ts) == SIGCHLD)
			drain(false);
	}
}

/* Interrupt @t; false if it is interrupted already or gone. */
static bool interrupt(struct thr *t)
{
	if (t->pending || ptrace(PTRACE_INTERRUPT, t->tid, 0, 0))
		return false;
	t->pending = true;
	t->interrupted_at = xp_now_ns();
	npending++;
	return true;
}

/*
 * Busy-poll for the stops, at most 100 us: only while a CPU is free, where
 * sleeping would let this one halt and the wake cost the stop a halted
 * CPU's wake-up (xprof record does the same).
 */
static void spin_for_stops(void)
{
	uint64_t until = xp_now_ns() + 100000;
	pid_t tid;
	int st;

	while (npending && exit_status < 0 && xp_now_ns() < until)
		if ((tid = waitpid(-1, &st, __WALL | WNOHANG)) > 0)
			handle(tid, st);
		else if (tid < 0)
			break;
}

/*
 * Interrupt up to @n threads that wrote a slot since the last tick; the
 * number interrupted, or -1 if the target never wrote one.
 */
static long tick_oncpu(size_t n)
{
	static size_t first;
	size_t c, k = 0;

	if (!oncpu)
		return -1;
	for (c = 0; c < ONCPU_SLOTS; c++) { /* all cleared: a slot left would be stale */
		size_t cpu = (first + c) % ONCPU_SLOTS;
		pid_t tid = oncpu[cpu].tid;
		struct thr *t;

		if (!tid)
			continue;
		oncpu_seen = true;
		oncpu[cpu].tid = 0;
		t = thr_find(tid);
		if (k == n || !t || t->pending)
			continue;
		/*
		 * -m: from its CPU (preempting it there), waiting there for the stop
		 * at most 100 us, as xprof does before it moves on: another thread
		 * may have the CPU first.
		 */
		if (move && ctl_move_to_cpu(&place, (int)cpu) == 0) {
			if (!interrupt(t))
				continue;
			sleep_until(xp_now_ns() + 100000, tid);
		} else if (!interrupt(t)) {
			continue;
		}
		k++;
	}
	first++;
	return oncpu_seen ? (long)k : -1;
}

/*
 * Samples due: one per period of the target's CPU time (its process CPU
 * clock, which needs no privilege), as xprof and perf are asked for, at
 * most one per CPU per tick.  The clock of another process moves by the
 * kernel's ticks (a running thread's counter is brought up to date only
 * there), so the credit may come a few milliseconds at once: it is kept
 * up to 64 periods per CPU and spent over the next ticks.
 */
static clockid_t proc_clock;
static uint64_t proc_cpu_last, credit;

static size_t samples_due(size_t cpus, uint64_t period)
{
	uint64_t now;

	if (xp_clock_read(proc_clock, &now))
		return 0;
	credit += now - proc_cpu_last;
	proc_cpu_last = now;
	if (credit > 64 * cpus * period)
		credit = 64 * cpus * period;
	return credit / period < cpus ? credit / period : cpus;
}

/* Interrupt @n threads in turn, the main one of several left out; how many. */
static size_t tick_in_turn(size_t n)
{
	size_t ncand = nthrs, first = 0, i, k = 0;

	if (nthrs > 1) { /* the main thread of a multi-threaded target only waits */
		ncand = nthrs - 1;
		first = 1;
		for (i = 1; i < nthrs && thrs[0].tid != leader; i++)
			if (thrs[i].tid == leader) {
				struct thr tmp = thrs[0];

				thrs[0] = thrs[i];
				thrs[i] = tmp;
			}
	}
	for (i = 0; i < ncand && k < n; i++)
		k += interrupt(&thrs[first + (next_thr++ % ncand)]);
	return k;
}

/*
 * -s: read every thread's schedstat (the main one of several left out, as
 * in turn) and interrupt up to @n of those whose counters moved since the
 * last tick; how many.
 */
static size_t tick_schedstat(size_t n)
{
	size_t i, k = 0;

	for (i = 0; i < nthrs; i++) {
		struct thr *t = &thrs[i];
		struct procfs_sched ss;
		bool moved;

		if (t->tid == leader && nthrs > 1)
			continue;
		if (t->schedstat_fd < 0)
			t->schedstat_fd = procfs_open_task(leader, t->tid, "schedstat");
		if (procfs_schedstat(t->schedstat_fd, &ss))
			continue;
		moved = ss.cpu_ns != t->last.cpu_ns || ss.count != t->last.count;
		t->last = ss;
		if (moved && k < n)
			k += interrupt(t);
	}
	return k;
}

static void tick(size_t cpus, uint64_t period)
{
	size_t n = samples_due(cpus, period);
	long taken = reads ? (long)tick_schedstat(n) : tick_oncpu(n);

	if (taken < 0)
		taken = (long)tick_in_turn(n);
	else if (reads && (size_t)taken < n)
		taken += (long)tick_in_turn(n - (size_t)taken);
	credit -= (uint64_t)taken * period;
	if (nthrs - (nthrs > 1) < cpus)
		spin_for_stops();
}

int main(int argc, char **argv)
{
	unsigned long hz = 999, cpus = 0;
	bool pin = false;
	uint64_t period, next, start, late = 0;
	int go[2], err[2], c, e;
	struct rusage ru;
	double self_us;
	pid_t pid;

	while ((c = getopt(argc, argv, "+F:c:pms")) != -1) {
		if (c == 'F')
			hz = strtoul(optarg, NULL, 10);
		else if (c == 'c')
			cpus = strtoul(optarg, NULL, 10);
		else if (c == 'p')
			pin = true;
		else if (c == 'm')
			move = true;
		else if (c == 's')
			reads = true;
		else
			die(USAGE, NULL);
	}
	if (optind >= argc || hz == 0 || hz > 100000 || pin + move + reads > 1)
		die(USAGE, NULL);
	arch = xp_arch_host();
	if (!arch)
		die("unsupported architecture", NULL);
	ctl_place_init(&place);
	if (pin) { /* the first CPU it may use, for itself and the command */
		for (c = 0; c < place.cpu_end && ctl_move_to_cpu(&place, c); c++)
			;
		if (c == place.cpu_end)
			die("cannot pin to a CPU", NULL);
		cpus = 1;
	}
	if (!cpus)
		cpus = (unsigned long)place.nr_cpus;
	period = XP_NS_PER_SEC / hz;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	if (geteuid() == 0) {
		ctl_hold_poll_idle(); /* held open until exit */
		ctl_raise_priority(1);
	} else {
		ctl_short_slice(); /* reset at fork: the command keeps its own slice */
	}
	if (pipe2(go, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
		die("pipe", strerror(errno));
	c = reads ? -1 : memfd_create("oncpu", 0); /* inherited: the target maps it */
	if (c >= 0 && ftruncate(c, ONCPU_SLOTS * sizeof(*oncpu)) == 0) {
		void *p = mmap(NULL, ONCPU_SLOTS * sizeof(*oncpu), PROT_READ | PROT_WRITE,
			       MAP_SHARED, c, 0);
		char fd[16];

		if (p != MAP_FAILED) {
			oncpu = p;
			snprintf(fd, sizeof(fd), "%d", c);
			setenv(ONCPU_ENV, fd, 1);
		}
	}
	pid = spawn_held(argv + optind, go, err, 0);
	if (pid < 0)
		die("fork", strerror(errno));
	if (ptrace(PTRACE_SEIZE, pid, 0,
		   (void *)(uintptr_t)(PTRACE_O_TRACECLONE | PTRACE_O_EXITKILL))) {
		e = errno;
		kill(pid, SIGKILL);
		die("PTRACE_SEIZE", strerror(e));
	}
	leader = pid;
	thr_add(pid);
	if (geteuid() != 0) {
		ctl_min_timer_slack(); /* after the fork, which would pass it on */
		setsid(); /* a session of its own, not the command's (as xprof record) */
	}
	if (clock_getcpuclockid(pid, &proc_clock))
		die("clock_getcpuclockid", strerror(errno));
	close(go[0]);
	close(err[1]);
	if (write(go[1], "g", 1) != 1)
		die("write", strerror(errno));
	close(go[1]);
	if (read(err[0], &e, sizeof(e)) == (ssize_t)sizeof(e)) {
		fprintf(stderr, "ptrace_floor: %s: %s\n", argv[optind], strerror(e));
		drain(true);
		return 127;
	}
	close(err[0]);

	start = xp_now_ns();
	next = start + period;
	while (exit_status < 0) {
		uint64_t now;

		sleep_until(next, 0);
		if (exit_status >= 0)
			break;
		now = xp_now_ns();
		if (now >= next + period) { /* a whole period late: count it, start afresh */
			late++;
			next = now;
		}
		next += period;
		tick((size_t)cpus, period);
	}
	getrusage(RUSAGE_SELF, &ru);
	self_us = (double)ru.ru_utime.tv_sec * 1e6 + (double)ru.ru_utime.tv_usec +
		  (double)ru.ru_stime.tv_sec * 1e6 + (double)ru.ru_stime.tv_usec;
	fprintf(stderr,
		"ptrace_floor: %llu samples in %.3f s (%llu late ticks), stop mean %.1f us, "
		"cpu %.1f us per sample\n",
		(unsigned long long)nsamples, (double)(xp_now_ns() - start) / 1e9,
		(unsigned long long)late, nsamples ? (double)stop_ns / (double)nsamples / 1e3 : 0.0,
		nsamples ? self_us / (double)nsamples : 0.0);
	return exit_status;
}
