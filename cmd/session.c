/* SPDX-License-Identifier: MIT */
/*
 * The recorder in a session of its own (common.h).  With autogroups on
 * (sched(7), the default of most distributions), the scheduler shares a
 * CPU first between sessions, then between the tasks of a session.  A
 * recorder in the session of a target that keeps many threads busy is one
 * task among them: without a real-time priority (which needs privilege)
 * it gets a small share of a CPU and its ticks come late (64 busy threads
 * on 2 CPUs, as an ordinary user: 62% of the samples asked for in record,
 * 90% in an attach from another session).  Only setsid(2) makes a new
 * autogroup, and the process the shell started leads its process group,
 * which may not call it: so that process forks, the child does the work
 * and moves to a session of its own once the command is started (the
 * command stays in the terminal's process group, with its job control),
 * and the parent passes on the signals it gets and ends with the child's
 * status.
 *
 * It is not the default: across autogroups, the recorder that moves to a
 * running thread's CPU no longer preempts it at once (EEVDF), so the
 * thread ran on to its next system call and the sample skidded there
 * (tests/targets/sysmix as an ordinary user: 28% in system calls against
 * a truth of 13%, within 1 point in one session).  Since a late wake on
 * the thread's CPU is retried (interrupt.c's settle), that skid is no
 * longer seen: sysmix as nobody beside two busy processes on 2 CPUs, 999
 * Hz, 33.3 and 37.0% for truths of 34.8 and 38.6 with the option, 41.1
 * and 34.3% for 43.1 and 37.2 without; alone, 31.8 / 33.6 and 38.0 / 37.6
 * (3999 Hz).  And the rate it keeps is large: threads 64 as nobody,
 * bench/run.sh, 24% -> 99% of 999 Hz, 6% -> 80% of 3999 Hz, held stop p99
 * 12-13 ms -> 36-52 us.  Whether it should be the default is open.
 */
#include "common.h"
#include "cmd.h"
#include "ctl.h"
#include "err.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Whether the scheduler groups by session (/proc/sys/kernel/sched_autogroup_enabled). */
static bool autogroups_on(void)
{
	FILE *f = fopen("/proc/sys/kernel/sched_autogroup_enabled", "re");
	int on = 0;

	if (!f)
		return false;
	if (fscanf(f, "%d", &on) != 1)
		on = 0;
	fclose(f);
	return on == 1;
}

/* The parent's part: pass signals on until the child ends; its exit status. */
static int relay(pid_t child, const sigset_t *set)
{
	siginfo_t si;
	int status = 0;

	for (;;) {
		if (sigwaitinfo(set, &si) < 0)
			continue;
		if (si.si_signo == SIGCHLD) {
			if (waitpid(child, &status, WNOHANG) == child)
				break;
			continue;
		}
		if (si.si_signo == SIGINT && si.si_code == SI_KERNEL)
			sigqueue(child, SIGINT, (union sigval){.sival_int = CTL_SIGINT_FROM_TTY});
		else
			kill(child, si.si_signo);
	}
	return common_exit_status(status);
}

/* common_own_session is to move to a new session. */
static bool own_session_due;

int common_split_session(const struct record_opts *ro, bool shared)
{
	sigset_t set, old;
	pid_t child;

	/* Real-time priority puts the recorder ahead of any session already. */
	if (!ro->own_session || !shared || (ro->rt_priority && geteuid() == 0) || !autogroups_on())
		return -1;
	own_session_due = true;
	/* Not leading a process group (started by a script, not a shell's job): no fork needed. */
	if (getpgrp() != getpid())
		return -1;
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGQUIT);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, &old);
	fflush(NULL);
	child = fork();
	if (child == 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		return -1;
	}
	if (child < 0) {
		xp_debug(1, "recording in this session: fork: %s", strerror(errno));
		sigprocmask(SIG_SETMASK, &old, NULL);
		return -1;
	}
	return relay(child, &set);
}

void common_own_session(void)
{
	if (own_session_due && setsid() < 0)
		xp_debug(1, "recording in the command's session: setsid: %s", strerror(errno));
	own_session_due = false;
}
