/* SPDX-License-Identifier: MIT */
/*
 * ptyjob: run a command as the foreground job of a terminal, the way an
 * interactive shell does, and type job-control keys at it.  For the tests
 * of what Ctrl-C and Ctrl-Z do to a recording (tests/integration).
 *
 * Usage: ptyjob ACTION... -- COMMAND [ARG]...
 *
 * ptyjob makes a pseudo-terminal, starts a session with it as the
 * controlling terminal, and runs COMMAND in a process group of its own,
 * in the terminal's foreground, with the terminal as its standard input
 * (standard output and error stay as given).  Then it does the actions in
 * order:
 *   sleep=MS   wait MS milliseconds
 *   intr       type Ctrl-C (the terminal sends SIGINT to the foreground)
 *   quit       type Ctrl-\ (SIGQUIT)
 *   susp       type Ctrl-Z (SIGTSTP), then wait up to 10 s for the job to
 *              stop, as a shell does, and take the terminal back (the
 *              terminal's log then has a line "<ptyjob: stopped>")
 *   fg         give the job the terminal and continue it (SIGCONT)
 *   bg         continue it without the terminal
 *   hup        hang the terminal up and send SIGHUP to the job, as a
 *              shell does when its terminal goes
 *   run=CMD    run 'sh -c CMD' outside the job and wait for it
 *   wait       wait up to 60 s for the job to end
 * It reports what it sees on standard error, one line each, starting
 * "ptyjob: " ("ptyjob: stopped", "ptyjob: exit 0", "ptyjob: signal 2").
 * With PTYJOB_TTYLOG=FILE in the environment, the job's standard output
 * and error are the terminal too, and what the terminal shows goes to
 * FILE, with a line "<ptyjob: ACTION>" where each action starts.
 * Exit status: the job's as a shell gives it (its code, 128 + a signal),
 * 124 when it did not stop or end in time (the job is then killed), 1
 * with a message on error, 0 when the actions end before the job.  Not
 * part of xprof; built with the tests.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static int master = -1, tty = -1;
static pid_t job;
static FILE *ttylog; /* PTYJOB_TTYLOG */
static struct termios keys; /* the terminal's settings: its Ctrl-C, Ctrl-\\, Ctrl-Z */

__attribute__((format(printf, 1, 2))) static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "ptyjob: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static void drain(void);

/* Sleep @ms milliseconds, reading the terminal every 5 ms. */
static void sleep_ms(long ms)
{
	struct timespec ts = {0, 5000000};

	for (; ms > 0; ms -= 5) {
		nanosleep(&ts, NULL);
		drain();
	}
}

/* Read what the terminal shows, so that its buffer never fills; log it. */
static void drain(void)
{
	char buf[512];
	ssize_t n;

	while ((n = read(master, buf, sizeof(buf))) > 0)
		if (ttylog)
			fwrite(buf, 1, (size_t)n, ttylog);
	if (ttylog)
		fflush(ttylog);
}

static void type_key(cc_t key)
{
	drain();
	if (write(master, &key, 1) != 1)
		say("cannot type at the terminal: %s", strerror(errno));
}

/* waitpid for the job, polled up to @secs seconds: 1 when it changed, 0 on timeout. */
static int wait_job(int *status, int flags, int secs)
{
	long ms;

	for (ms = 0; ms < secs * 1000L; ms += 5) {
		pid_t r = waitpid(job, status, WNOHANG | flags);

		if (r == job)
			return 1;
		if (r < 0) {
			say("waitpid: %s", strerror(errno));
			exit(1);
		}
		sleep_ms(5);
	}
	return 0;
}

static int ended(int status)
{
	if (WIFEXITED(status)) {
		say("exit %d", WEXITSTATUS(status));
		return WEXITSTATUS(status);
	}
	say("signal %d", WTERMSIG(status));
	return 128 + WTERMSIG(status);
}

static int timed_out(const char *what)
{
	say("the job did not %s in time", what);
	kill(-job, SIGKILL);
	waitpid(job, NULL, 0);
	return 124;
}

static void start_job(char **argv)
{
	job = fork();
	if (job < 0) {
		perror("ptyjob: fork");
		exit(1);
	}
	if (job == 0) {
		sigset_t none;
		int sig;

		setpgid(0, 0);
		tcsetpgrp(tty, getpid());
		for (sig = 1; sig < SIGRTMIN; sig++)
			if (sig != SIGKILL && sig != SIGSTOP)
				signal(sig, SIG_DFL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		dup2(tty, 0);
		if (ttylog) {
			dup2(tty, 1);
			dup2(tty, 2);
		}
		close(tty);
		close(master);
		execvp(argv[0], argv);
		fprintf(stderr, "ptyjob: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	setpgid(job, job);
	tcsetpgrp(tty, job);
}

static int act(const char *a)
{
	int status;

	drain();
	if (ttylog) {
		fprintf(ttylog, "\n<ptyjob: %s>\n", a);
		fflush(ttylog);
	}
	if (!strncmp(a, "sleep=", 6)) {
		sleep_ms(strtol(a + 6, NULL, 10));
	} else if (!strcmp(a, "intr")) {
		type_key(keys.c_cc[VINTR]);
	} else if (!strcmp(a, "quit")) {
		type_key(keys.c_cc[VQUIT]);
	} else if (!strcmp(a, "susp")) {
		type_key(keys.c_cc[VSUSP]);
		if (!wait_job(&status, WUNTRACED, 10))
			return timed_out("stop");
		if (!WIFSTOPPED(status))
			return ended(status);
		say("stopped (signal %d)", WSTOPSIG(status));
		tcsetpgrp(tty, getpgrp());
		drain();
		if (ttylog) {
			fprintf(ttylog, "\n<ptyjob: stopped>\n");
			fflush(ttylog);
		}
	} else if (!strcmp(a, "fg")) {
		tcsetpgrp(tty, job);
		kill(-job, SIGCONT);
	} else if (!strcmp(a, "bg")) {
		kill(-job, SIGCONT);
	} else if (!strcmp(a, "hup")) {
		close(master);
		master = open("/dev/null", O_RDONLY | O_NONBLOCK);
		kill(-job, SIGHUP);
		kill(-job, SIGCONT);
	} else if (!strncmp(a, "run=", 4)) {
		pid_t p = fork();

		if (p == 0) {
			execl("/bin/sh", "sh", "-c", a + 4, (char *)NULL);
			_exit(127);
		}
		if (p > 0)
			waitpid(p, NULL, 0);
	} else if (!strcmp(a, "wait")) {
		if (!wait_job(&status, 0, 60))
			return timed_out("end");
		return ended(status);
	} else {
		fprintf(stderr, "ptyjob: unknown action '%s'\n", a);
		kill(-job, SIGKILL);
		return 1;
	}
	return -1;
}

int main(int argc, char **argv)
{
	int first, i, ret = -1, status;
	pid_t leader;

	for (first = 1; first < argc && strcmp(argv[first], "--"); first++)
		;
	if (first + 1 >= argc) {
		fprintf(stderr, "usage: ptyjob ACTION... -- COMMAND [ARG]...\n");
		return 1;
	}
	/* The session leader must not lead a process group already: a child. */
	leader = fork();
	if (leader < 0) {
		perror("ptyjob: fork");
		return 1;
	}
	if (leader > 0) {
		if (waitpid(leader, &status, 0) < 0)
			return 1;
		return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
	}
	if (getenv("PTYJOB_TTYLOG")) {
		ttylog = fopen(getenv("PTYJOB_TTYLOG"), "we");
		if (!ttylog) {
			perror("ptyjob: PTYJOB_TTYLOG");
			return 1;
		}
	}
	signal(SIGTTOU, SIG_IGN);
	signal(SIGTTIN, SIG_IGN);
	signal(SIGTSTP, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (master < 0 || grantpt(master) || unlockpt(master) || setsid() < 0) {
		perror("ptyjob: a terminal");
		return 1;
	}
	tty = open(ptsname(master), O_RDWR | O_CLOEXEC);
	if (tty < 0 || ioctl(tty, TIOCSCTTY, 0) < 0 || tcgetattr(tty, &keys) < 0) {
		perror("ptyjob: the terminal");
		return 1;
	}
	fcntl(master, F_SETFL, O_NONBLOCK);
	start_job(argv + first + 1);
	for (i = 1; i < first; i++) {
		ret = act(argv[i]);
		if (ret >= 0)
			break;
	}
	drain();
	return ret < 0 ? 0 : ret;
}
