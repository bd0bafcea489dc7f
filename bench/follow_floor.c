/* SPDX-License-Identifier: MIT */
/*
 * follow_floor: the least that following a process tree with ptrace costs
 * it, and with -F the least that sampling it costs as well, for the
 * process-tree benchmarks (bench/trees.sh, tools follow, follow-exit and
 * floor).  Not a profiler and not a ctest test.
 *
 *   follow_floor [-x] [-F HZ] -p PID
 *   follow_floor [-x] [-F HZ] -- COMMAND [ARG]...
 *
 * It seizes every thread of PID as xprof attach does (tracer_attach, with
 * xprof's options for following the tree: clone, fork, vfork and exec
 * events; with -x exit stops too, as xprof's CPU mode asks for them), or
 * launches COMMAND seized with the same options (tracer_launch, as xprof
 * record does).
 * Without -F it then only resumes each stop as it arrives: the creator's
 * event stop at each fork, the new task's first stop, each exec's and
 * (with -x) each exit's, and the reaping of each end.  No sample, no /proc
 * read, no data file: what a tracer that follows the tree costs it at the
 * least, whatever it records.  Every stop is resumed at once with a
 * blocking wait4 (one wake-up per stop), at real-time priority 1 as root,
 * as xprof runs.
 *
 * With -F it also samples, as bench/ptrace_floor does one process: at
 * each tick of HZ per second it reads the CPU clock of every process of
 * the tree (a system call each, no /proc) and takes one sample per
 * period (1/HZ) of a process's CPU time, the first once it has run, at
 * most one per CPU per tick: PTRACE_INTERRUPT of one of its threads (in
 * turn), then at the stop the registers, 2 KiB of stack and the resume,
 * the interrupt sent from whatever CPU it runs on.  With -x, the time a
 * process ran since the last tick is sampled at its exit stop when due
 * (registers and stack, no interrupt), so that it takes about as many
 * samples of a tree of short lives as xprof, which instead adds that time
 * to the weight of the process's last sample.  Between ticks it sleeps in
 * sigtimedwait for SIGCHLD and handles the stops that arrive.  Which
 * process ran is the least a tree sampler must learn, and a process clock
 * is the cheapest way to learn it; which thread of a process ran it does
 * not learn (the trees here are of single-threaded processes).
 *
 * Attached, it prints "follow_floor: attached to N threads" on stdout once
 * seized; on SIGINT or SIGTERM it detaches from every thread.  Launched, it
 * passes SIGINT and SIGTERM on to COMMAND, runs until every task of the
 * tree has ended and exits with COMMAND's status (128 + signal when
 * killed).  At the end it prints on stderr
 *   follow_floor: N stops, T tasks, S samples, cpu C us per task
 * (T: the threads and processes it saw begin, COMMAND included; C: its own
 * CPU time over them).  Without -F a signal that comes just before it
 * blocks in wait4 is seen at the next stop of the tree; with -F, at the
 * next tick.
 */
#include "arch/arch.h"
#include "clock.h"
#include "ctl.h"
#include "err.h"
#include "floor.h"
#include "tracer.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef PTRACE_EVENT_STOP
#define PTRACE_EVENT_STOP 128
#endif

#define USAGE "usage: follow_floor [-x] [-F HZ] (-p PID | -- COMMAND [ARG]...)"

struct task {
	pid_t tid;
	pid_t tgid;   /* its process: a fork's child is one, a clone's joins its creator's */
	bool pending; /* interrupted for a sample, its stop not seen yet */
};

struct proc {
	pid_t pid;
	uint64_t clock_ns; /* its CPU clock when last read (a tick, its exit stop) */
	int64_t credit;	   /* CPU time not sampled yet, less what samples over-covered */
	unsigned long turn;
};

static struct task *tasks;
static size_t ntasks;
static unsigned long tasks_alloc;
static struct proc *procs;
static size_t nprocs;
static unsigned long procs_alloc;
static volatile sig_atomic_t got_signal; /* SIGINT or SIGTERM, not acted on yet */
static bool stopping;
static const struct xp_arch *arch;
static pid_t leader;
static int exit_status = -1;
static unsigned long long nsamples;
static int64_t period; /* ns of CPU time per sample; 0: no samples (no -F) */

static void die(const char *what, const char *why)
{
	fprintf(stderr, "follow_floor: %s%s%s\n", what, why ? ": " : "", why ? why : "");
	exit(2);
}

static struct task *task_find(pid_t tid)
{
	size_t i;

	for (i = 0; i < ntasks; i++)
		if (tasks[i].tid == tid)
			return &tasks[i];
	return NULL;
}

static struct proc *proc_find(pid_t pid)
{
	size_t i;

	for (i = 0; i < nprocs; i++)
		if (procs[i].pid == pid)
			return &procs[i];
	return NULL;
}

/*
 * @pid's process, known from now on; its CPU time before is not sampled.
 * Only for samples (-F): following alone keeps no process list.
 */
static void proc_add(pid_t pid)
{
	struct proc *p;

	if (!period || proc_find(pid))
		return;
	xp_grow((void **)&procs, &procs_alloc, nprocs + 1, sizeof(*procs));
	p = &procs[nprocs++];
	*p = (struct proc){.pid = pid, .credit = period / 2 - 1}; /* due once it has run */
	xp_clock_read(xp_process_clock(pid), &p->clock_ns);
}

static void proc_remove(pid_t pid)
{
	struct proc *p = proc_find(pid);

	if (p)
		*p = procs[--nprocs];
}

/* Whether @tid was new; it belongs to @tgid's process (a new one when @tgid is @tid). */
static bool task_add(pid_t tid, pid_t tgid)
{
	struct task *t = task_find(tid);

	if (t) {
		if (t->tgid != tgid && t->tgid == tid) { /* first seen before its creator's event */
			proc_remove(tid);
			t->tgid = tgid;
		}
		return false;
	}
	xp_grow((void **)&tasks, &tasks_alloc, ntasks + 1, sizeof(*tasks));
	tasks[ntasks++] = (struct task){.tid = tid, .tgid = tgid};
	if (tid == tgid)
		proc_add(tid);
	return true;
}

static void task_remove(pid_t tid)
{
	struct task *t = task_find(tid);

	if (!t)
		return;
	if (t->tid == t->tgid)
		proc_remove(t->tid);
	*t = tasks[--ntasks];
}

static void on_signal(int sig)
{
	got_signal = sig;
}

static bool is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/*
 * @p's CPU time since its last read into its credit; false when its clock
 * is gone (ended, not reaped yet).  The credit stays within 4 periods
 * below and 64 above: a running thread's clock moves by the kernel's
 * ticks (ptrace_floor.c).
 */
static bool proc_credit(struct proc *p)
{
	uint64_t ns;

	if (xp_clock_read(xp_process_clock(p->pid), &ns))
		return false;
	p->credit += ns > p->clock_ns ? (int64_t)(ns - p->clock_ns) : 0;
	p->clock_ns = ns;
	if (p->credit > 64 * period)
		p->credit = 64 * period;
	return true;
}

/*
 * Due: a sample per period of the process's CPU time, the first once it
 * has run (it starts with half a period to its credit), each when the
 * credit reaches half a period: as xprof's rule (record/cputime.h), so
 * that both take as many samples of a tree of short lives.
 */
static bool proc_due(const struct proc *p)
{
	return period && p->credit >= period / 2;
}

static void proc_sampled(struct proc *p)
{
	p->credit -= period;
	if (p->credit < -4 * period)
		p->credit = -4 * period;
}

/*
 * One wait status of @tid: its sample if it was interrupted for one, the
 * task it made, then its resume (or, when stopping, its detach).  A new
 * task counts in @ntasks_seen where it is first seen (its creator's event
 * or its own first stop, whichever comes first).
 */
static void handle(pid_t tid, int status, unsigned long *ntasks_seen)
{
	int sig = WSTOPSIG(status), event = (unsigned)status >> 16;
	long deliver = event == 0 ? sig : 0; /* a signal-delivery stop passes its signal on */
	unsigned long msg;
	struct task *t;
	struct proc *p;

	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		if (tid == leader)
			exit_status =
			    WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		task_remove(tid);
		return;
	}
	if (task_add(tid, tid))
		(*ntasks_seen)++; /* a thread or process seen at its first stop */
	t = task_find(tid);
	/* Any stop of an interrupted thread is its sample, as ptrace_floor's. */
	if (t->pending) {
		t->pending = false;
		nsamples += floor_copy_sample(arch, t->tid, t->tgid);
	} else if (event == PTRACE_EVENT_EXIT && (p = proc_find(t->tgid)) && proc_credit(p) &&
		   proc_due(p)) {
		/* Its time since the last tick, sampled where it ends. */
		nsamples += floor_copy_sample(arch, t->tid, t->tgid);
		proc_sampled(p);
	}
	/*
	 * Sampling needs each task's process: a fork's child is one, a clone's
	 * joins its creator's, and a thread's exec takes the place of the
	 * process's first thread (which never reports its end).  Following
	 * alone learns each task at its first stop.
	 */
	if (period &&
	    (event == PTRACE_EVENT_FORK || event == PTRACE_EVENT_VFORK ||
	     event == PTRACE_EVENT_CLONE) &&
	    ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg) == 0 &&
	    task_add((pid_t)msg, event == PTRACE_EVENT_CLONE ? t->tgid : (pid_t)msg))
		(*ntasks_seen)++; /* seen at its creator's event, before its own first stop */
	if (period && event == PTRACE_EVENT_EXEC && ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg) == 0 &&
	    (pid_t)msg != tid)
		task_remove((pid_t)msg);
	if (stopping) {
		ptrace(PTRACE_DETACH, tid, 0, (void *)deliver);
		task_remove(tid);
	} else if (event == PTRACE_EVENT_STOP && is_stop_signal(sig)) {
		ptrace(PTRACE_LISTEN, tid, 0, 0); /* group-stop: job control as without us */
	} else {
		ptrace(PTRACE_CONT, tid, 0, (void *)deliver);
	}
}

/* Interrupt one thread of @p (in turn) for a sample; false if none could be. */
static bool interrupt_in(struct proc *p)
{
	size_t i, n = ntasks;

	for (i = 0; i < n; i++) {
		struct task *t = &tasks[(p->turn + i) % n];

		if (t->tgid != p->pid || t->pending || ptrace(PTRACE_INTERRUPT, t->tid, 0, 0))
			continue;
		t->pending = true;
		p->turn += i + 1;
		return true;
	}
	return false;
}

/*
 * A tick: every process's CPU since the last, the samples due (proc_due),
 * at most @cpus in all, the processes taken in turn (a process with more
 * due than one gets its second once every other had its first).
 */
static void tick(size_t cpus)
{
	static size_t first;
	size_t i, k = 0, n = nprocs;
	bool taken;

	for (i = 0; i < n; i++)
		proc_credit(&procs[i]);
	for (taken = true; taken && k < cpus;) {
		taken = false;
		for (i = 0; i < n && k < cpus; i++) {
			struct proc *p = &procs[(first + i) % n];

			if (proc_due(p) && interrupt_in(p)) {
				proc_sampled(p);
				taken = true;
				k++;
			}
		}
	}
	first++;
}

/* The wait statuses there are now; false once no task is left. */
static bool drain(unsigned long *stops, unsigned long *ntasks_seen)
{
	pid_t tid;
	int status;

	while ((tid = waitpid(-1, &status, __WALL | WNOHANG)) > 0) {
		if (!WIFEXITED(status) && !WIFSIGNALED(status))
			(*stops)++;
		handle(tid, status, ntasks_seen);
	}
	return !(tid < 0 && errno == ECHILD);
}

int main(int argc, char **argv)
{
	unsigned int flags = TRACER_FOLLOW;
	unsigned long stops = 0, ntasks_seen = 0, hz = 0;
	struct sigaction sa = {.sa_handler = on_signal}; /* no SA_RESTART: wait4 returns */
	uint64_t next = 0;
	struct tracer tr;
	struct xp_thread *th;
	struct rusage ru;
	unsigned long k = 0;
	sigset_t chld;
	size_t cpus;
	pid_t pid = 0;
	int c, e, status;
	size_t i;

	while ((c = getopt(argc, argv, "+xp:F:")) != -1) {
		if (c == 'x')
			flags |= TRACER_EXIT_STOPS;
		else if (c == 'p')
			pid = (pid_t)strtol(optarg, NULL, 10);
		else if (c == 'F')
			hz = strtoul(optarg, NULL, 10);
		else
			die(USAGE, NULL);
	}
	if ((pid <= 0) == (optind == argc) || hz > 100000)
		die(USAGE, NULL);
	arch = xp_arch_host();
	if (!arch)
		die("unsupported architecture", NULL);
	cpus = (size_t)sysconf(_SC_NPROCESSORS_ONLN);
	if (hz)
		period = (int64_t)(XP_NS_PER_SEC / hz);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = SIG_DFL; /* not ignored: each stop must queue one */
	sigaction(SIGCHLD, &sa, NULL);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if (hz)
		sigprocmask(SIG_BLOCK, &chld, NULL); /* taken with sigtimedwait */
	if (geteuid() == 0) {
		ctl_hold_poll_idle(); /* held open until exit */
		ctl_raise_priority(1);
	}
	tracer_init(&tr, flags);
	if (pid > 0 && (e = tracer_attach(&tr, pid)))
		die("cannot attach", strerror(-e));
	if (pid <= 0) {
		if ((e = tracer_launch(&tr, argv + optind)))
			die("cannot launch", strerror(-e));
		/* Read once the exec is done or failed: it closes or writes the pipe. */
		if ((e = tracer_exec_error(&tr))) {
			fprintf(stderr, "follow_floor: %s: %s\n", argv[optind], strerror(e));
			return 127;
		}
		leader = tr.root;
		ntasks_seen++;
	}
	while ((th = tracer_thread_at(&tr, &k)))
		task_add(th->tid, th->proc->pid);
	tracer_release(&tr); /* from here on its own lists */
	if (pid > 0) {
		printf("follow_floor: attached to %zu threads\n", ntasks);
		fflush(stdout);
	}

	next = xp_now_ns() + (uint64_t)period;
	for (;;) {
		pid_t tid;

		if (got_signal && leader) { /* launched: the command decides */
			kill(leader, got_signal);
			got_signal = 0;
		}
		if (got_signal)
			stopping = true;
		if (stopping)
			break;
		if (hz) {
			uint64_t now = xp_now_ns();
			struct timespec ts;

			if (now >= next) {
				next = now >= next + (uint64_t)period ? now + (uint64_t)period
								      : next + (uint64_t)period;
				/* A thread in a stop not handled yet is not interrupted. */
				if (!drain(&stops, &ntasks_seen))
					break; /* ECHILD: all gone */
				tick(cpus);
				now = xp_now_ns();
			}
			ts = xp_ns_timespec(next > now ? next - now : 0);
			if (sigtimedwait(&chld, NULL, &ts) == SIGCHLD &&
			    !drain(&stops, &ntasks_seen))
				break; /* ECHILD: all gone */
			continue;
		}
		tid = waitpid(-1, &status, __WALL);
		if (tid < 0 && errno == EINTR)
			continue;
		if (tid < 0)
			break; /* ECHILD: all gone */
		if (!WIFEXITED(status) && !WIFSIGNALED(status))
			stops++;
		handle(tid, status, &ntasks_seen);
	}
	/* Interrupt each thread and detach it at its stop (or see it end). */
	if (stopping) {
		sigprocmask(SIG_UNBLOCK, &chld, NULL);
		for (i = 0; i < ntasks; i++)
			ptrace(PTRACE_INTERRUPT, tasks[i].tid, 0, 0);
		alarm(5); /* a thread that never stops again must not hold us */
		sa.sa_handler = SIG_DFL;
		sigaction(SIGALRM, &sa, NULL);
		while (ntasks) {
			pid_t tid = waitpid(-1, &status, __WALL);

			if (tid < 0 && errno == EINTR)
				continue;
			if (tid < 0)
				break;
			handle(tid, status, &ntasks_seen);
		}
	}
	getrusage(RUSAGE_SELF, &ru);
	fprintf(stderr, "follow_floor: %lu stops, %lu tasks, %llu samples, cpu %.1f us per task\n",
		stops, ntasks_seen, nsamples,
		ntasks_seen ? ((double)ru.ru_utime.tv_sec * 1e6 + (double)ru.ru_utime.tv_usec +
			       (double)ru.ru_stime.tv_sec * 1e6 + (double)ru.ru_stime.tv_usec) /
				  (double)ntasks_seen
			    : 0.0);
	return pid > 0 ? 0 : exit_status < 0 ? 0 : exit_status;
}
