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
 * autogroup; the process that calls it leaves the terminal's process
 * group and its signals, and the process a shell started leads its group,
 * which may not call it: so xprof forks, the child does the work and moves
 * to a session of its own once the command is started (the command stays
 * in the terminal's process group, with its job control), and the parent
 * stays in the job, passes on the signals it gets and ends with the
 * child's status.
 *
 * It is the default (--no-own-session turns it off) for the rate it keeps:
 * threads 64 as nobody (bench/run.sh) gets 99% of 999 Hz and 80% of 3999
 * Hz from a session of its own against 24% and 6% from the command's, its
 * held stop p99 36-52 us against 12-13 ms (t1401 checks that it is not
 * starved).  Across autogroups the recorder that moves to a running
 * thread's CPU preempts it less promptly, and a wake that comes late is
 * retried (record/interrupt.c, settle), so samples do not skid to the
 * thread's next system call: sysmix as nobody beside two busy processes
 * on 2 CPUs, 999 Hz, 33.3 and 37.0% in its calls for truths of 34.8 and
 * 38.6 from its own session, 41.1 and 34.3% for 43.1 and 37.2 from the
 * command's (t1300 holds it within 3 points alone).
 *
 * Job control stays the command's and the terminal's (t1402): Ctrl-C and
 * Ctrl-\ reach the command and the process the shell started, which
 * passes them on; Ctrl-Z stops both, and the recorder, which no terminal
 * stops, goes on (sampling nothing: the command is stopped) and keeps its
 * status line off the terminal while the job is not in the foreground
 * (common_foreground).  An attach whose target shares the session but not
 * the job (a shell's other job) samples on through a Ctrl-Z of xprof,
 * whose -d goes on counting; its summary comes when the duration ends.
 * When the process the shell started dies of a signal it cannot pass on
 * (SIGKILL), the recorder gets SIGTERM, as if it had been passed on; a
 * recorder that dies of a signal (a crash) kills that process with it.
 */
#include "common.h"
#include "cmd.h"
#include "ctl.h"
#include "err.h"
#include "procfs.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
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

/*
 * The parent's part: pass signals on until the child ends; its exit
 * status.  A child that died of a signal (a crash, not the command's
 * status) kills the parent with it, as it would have killed xprof.
 */
static int relay(pid_t child, const sigset_t *set)
{
	struct rlimit no_core = {0, 0};
	siginfo_t si;
	int status = 0;
	pid_t r;

	for (;;) {
		if (sigwaitinfo(set, &si) < 0)
			continue;
		if (si.si_signo == SIGCHLD) {
			r = waitpid(child, &status, WNOHANG);
			if (r == child || (r < 0 && errno == ECHILD))
				break;
			continue;
		}
		/*
		 * The terminal's SIGINT reached the child too while it was still
		 * in this session (before the command was started).
		 */
		if (si.si_signo != SIGINT || si.si_code != SI_KERNEL)
			kill(child, si.si_signo);
		else if (getsid(child) != getsid(0))
			sigqueue(child, SIGINT, (union sigval){.sival_int = CTL_SIGINT_FROM_TTY});
	}
	if (WIFSIGNALED(status)) {
		setrlimit(RLIMIT_CORE, &no_core); /* the child's core is the one */
		signal(WTERMSIG(status), SIG_DFL);
		sigprocmask(SIG_UNBLOCK, set, NULL);
		raise(WTERMSIG(status));
	}
	return common_exit_status(status);
}

/* common_own_session is to move to a new session. */
static bool own_session_due;
/* A process of the job the shell started, whose terminal's foreground tells ours. */
static pid_t job_pid;

int common_split_session(const struct record_opts *ro, bool shared)
{
	sigset_t set, old;
	pid_t child;

	/*
	 * Real-time priority puts the recorder ahead of any session already:
	 * whether it will have it is tried, not guessed from the user (root in
	 * a container without CAP_SYS_NICE has none; a user with an
	 * RLIMIT_RTPRIO has it).
	 * --spin-idle's SCHED_IDLE spinners yield only within their session:
	 * in one of their own they would take half of each CPU from the target
	 * (split as nobody: 178 samples of its 1 s of CPU).
	 */
	if (ro->own_session == 0 || !shared || ro->spin_idle || !autogroups_on() ||
	    (ro->rt_priority && ctl_may_raise_priority((unsigned int)ro->rt_priority)))
		return -1;
	/*
	 * Fork even where setsid() alone would do (not leading a process
	 * group, as when a script runs xprof): the process that stays in the
	 * terminal's process group is what gets the terminal's signals.  An
	 * ignored SIGCHLD (inherited) would never tell it its child ended.
	 */
	signal(SIGCHLD, SIG_DFL);
	ctl_signal_set(&set, true);
	sigaddset(&set, SIGQUIT);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, &old);
	fflush(NULL);
	job_pid = getpid();
	child = fork();
	if (child == 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		/* Ended like a recorder the relay passed SIGTERM on to. */
		if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0)
			xp_debug(1, "no SIGTERM when the parent dies: %s", strerror(errno));
		else if (getppid() != job_pid)
			raise(SIGTERM);
		own_session_due = true;
		return -1;
	}
	if (child < 0) {
		xp_debug(1, "recording in this session: fork: %s", strerror(errno));
		sigprocmask(SIG_SETMASK, &old, NULL);
		job_pid = 0;
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

bool common_foreground(void)
{
	char state;
	long pgrp, tpgid;

	if (!job_pid) {
		pid_t fg = tcgetpgrp(STDERR_FILENO);

		/* Not our controlling terminal (or none): as before, shown. */
		return fg < 0 || fg == getpgrp();
	}
	if (getppid() != job_pid || procfs_job(job_pid, &state, &pgrp, &tpgid))
		return false;
	/* Stopped (Ctrl-Z) before the shell takes the terminal back: not shown either. */
	if (state == 'T' || state == 't')
		return false;
	return tpgid < 0 || (pgrp > 0 && pgrp == tpgid);
}
