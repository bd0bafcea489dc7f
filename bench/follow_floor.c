/* SPDX-License-Identifier: MIT */
/*
 * follow_floor: the least that following a process tree with ptrace costs
 * it, for the forkserver benchmark (bench/trees.sh, tools follow and
 * follow-exit).  Not a profiler and not a ctest test.
 *
 *   follow_floor [-x] -p PID
 *
 * It seizes every thread of PID as xprof attach does (tracer_attach, with
 * xprof's options for following the tree: clone, fork, vfork and exec
 * events; with -x exit stops too, as xprof's CPU mode asks for them) and
 * then only resumes each stop
 * as it arrives: the creator's event stop at each fork, the new task's
 * first stop, each exec's and (with -x) each exit's, and the reaping of
 * each end.  No sample, no /proc read, no data file: what a tracer that
 * follows the tree costs it at the least, whatever it records.  Every
 * stop is resumed at once with a blocking wait4 (one wake-up per stop),
 * at real-time priority 1 as root, as xprof runs.
 *
 * It prints "follow_floor: attached to N threads" on stdout once seized;
 * on SIGINT or SIGTERM it detaches from every thread and prints on stderr
 *   follow_floor: N stops, T tasks, cpu C us per task
 * (T: the threads and processes it saw begin; C: its own CPU time over
 * them), exit status 0.  A signal that comes just before it blocks in
 * wait4 is seen at the next stop of the tree.
 */
#include "ctl.h"
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

#define USAGE "usage: follow_floor [-x] -p PID"

static pid_t *tids;
static size_t ntids, tids_alloc;
static volatile sig_atomic_t stopping;

static void die(const char *what, const char *why)
{
	fprintf(stderr, "follow_floor: %s%s%s\n", what, why ? ": " : "", why ? why : "");
	exit(2);
}

static ssize_t tid_index(pid_t tid)
{
	size_t i;

	for (i = 0; i < ntids; i++)
		if (tids[i] == tid)
			return (ssize_t)i;
	return -1;
}

/* Whether @tid was new. */
static bool tid_add(pid_t tid)
{
	if (tid_index(tid) >= 0)
		return false;
	if (ntids == tids_alloc) {
		tids_alloc = tids_alloc ? 2 * tids_alloc : 64;
		tids = realloc(tids, tids_alloc * sizeof(*tids));
		if (!tids)
			die("out of memory", NULL);
	}
	tids[ntids++] = tid;
	return true;
}

static void tid_remove(pid_t tid)
{
	ssize_t i = tid_index(tid);

	if (i >= 0)
		tids[i] = tids[--ntids];
}

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

static bool is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* Resume (or, when stopping, detach) the stopped @tid; a new task counts in @tasks. */
static void resume(pid_t tid, int status, unsigned long *tasks)
{
	int sig = WSTOPSIG(status), event = (unsigned)status >> 16;
	long deliver = event == 0 ? sig : 0; /* a signal-delivery stop passes its signal on */

	if (tid_add(tid) && event == PTRACE_EVENT_STOP)
		(*tasks)++; /* a thread or process seen at its first stop */
	if (stopping) {
		ptrace(PTRACE_DETACH, tid, 0, (void *)deliver);
		tid_remove(tid);
	} else if (event == PTRACE_EVENT_STOP && is_stop_signal(sig)) {
		ptrace(PTRACE_LISTEN, tid, 0, 0); /* group-stop: job control as without us */
	} else {
		ptrace(PTRACE_CONT, tid, 0, (void *)deliver);
	}
}

int main(int argc, char **argv)
{
	unsigned int flags = TRACER_FOLLOW;
	unsigned long stops = 0, tasks = 0;
	struct sigaction sa = {.sa_handler = on_signal}; /* no SA_RESTART: wait4 returns */
	struct tracer tr;
	struct xp_thread *th;
	struct rusage ru;
	unsigned long k = 0;
	pid_t pid = 0;
	int c, e, status;
	size_t i;

	while ((c = getopt(argc, argv, "xp:")) != -1) {
		if (c == 'x')
			flags |= TRACER_EXIT_STOPS;
		else if (c == 'p')
			pid = (pid_t)strtol(optarg, NULL, 10);
		else
			die(USAGE, NULL);
	}
	if (pid <= 0 || optind != argc)
		die(USAGE, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (geteuid() == 0) {
		ctl_hold_poll_idle(); /* held open until exit */
		ctl_raise_priority(1);
	}
	tracer_init(&tr, flags);
	if ((e = tracer_attach(&tr, pid)))
		die("cannot attach", strerror(-e));
	while ((th = tracer_thread_at(&tr, &k)))
		tid_add(th->tid);
	tracer_release(&tr); /* from here on its own list: no bookkeeping per stop */
	printf("follow_floor: attached to %zu threads\n", ntids);
	fflush(stdout);

	while (!stopping) {
		pid_t tid = waitpid(-1, &status, __WALL);

		if (tid < 0 && errno == EINTR)
			continue;
		if (tid < 0)
			break; /* ECHILD: all gone */
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			tid_remove(tid);
			continue;
		}
		stops++;
		resume(tid, status, &tasks);
	}
	/* Interrupt each thread and detach it at its stop (or see it end). */
	for (i = 0; i < ntids; i++)
		ptrace(PTRACE_INTERRUPT, tids[i], 0, 0);
	alarm(5); /* a thread that never stops again must not hold us */
	sa.sa_handler = SIG_DFL;
	sigaction(SIGALRM, &sa, NULL);
	while (ntids) {
		pid_t tid = waitpid(-1, &status, __WALL);

		if (tid < 0 && errno == EINTR)
			continue;
		if (tid < 0)
			break;
		if (WIFEXITED(status) || WIFSIGNALED(status))
			tid_remove(tid);
		else
			resume(tid, status, &tasks);
	}
	getrusage(RUSAGE_SELF, &ru);
	fprintf(stderr, "follow_floor: %lu stops, %lu tasks, cpu %.1f us per task\n", stops, tasks,
		tasks ? ((double)ru.ru_utime.tv_sec * 1e6 + (double)ru.ru_utime.tv_usec +
			 (double)ru.ru_stime.tv_sec * 1e6 + (double)ru.ru_stime.tv_usec) /
			    (double)tasks
		      : 0.0);
	return 0;
}
