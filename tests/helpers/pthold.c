/* SPDX-License-Identifier: MIT */
/*
 * pthold: be "another tracer" of a process, for the test that 'xprof
 * attach' refuses a process that is already traced and names the tracer.
 * strace -p would do, but strace is not always installed.
 *
 * Usage: pthold PID
 * Seizes PID (the main thread only: that is enough to make it "traced",
 * TracerPid in /proc/PID/status), then keeps it running exactly as before:
 * every signal-delivery-stop is resumed with its signal, every group-stop
 * with PTRACE_LISTEN.  Ends when PID exits (exit status 0), or on SIGTERM
 * or SIGINT, after detaching (exit status 0).  Exit status 1 with a message
 * on stderr when it cannot seize PID.  Not part of xprof.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef PTRACE_EVENT_STOP
#define PTRACE_EVENT_STOP 128
#endif

static volatile sig_atomic_t stop_asked;

static void on_term(int sig)
{
	(void)sig;
	stop_asked = 1;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	int status, sig;
	pid_t pid;

	if (argc != 2 || (pid = (pid_t)atol(argv[1])) <= 0) {
		fputs("usage: pthold PID\n", stderr);
		return 2;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term; /* no SA_RESTART: waitpid returns EINTR */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if (ptrace(PTRACE_SEIZE, pid, NULL, NULL)) {
		fprintf(stderr, "pthold: ptrace(PTRACE_SEIZE) of pid %ld: %s\n", (long)pid,
			strerror(errno));
		return 1;
	}
	while (!stop_asked) {
		if (waitpid(pid, &status, __WALL) < 0) {
			if (errno == EINTR)
				continue;
			perror("pthold: waitpid");
			return 1;
		}
		if (WIFEXITED(status) || WIFSIGNALED(status))
			return 0;
		if (!WIFSTOPPED(status))
			continue;
		sig = WSTOPSIG(status);
		if ((unsigned)status >> 16 == PTRACE_EVENT_STOP) {
			/* A group-stop (or our own interrupt below): keep job control. */
			if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU)
				ptrace(PTRACE_LISTEN, pid, NULL, NULL);
			else
				ptrace(PTRACE_CONT, pid, NULL, NULL);
			continue;
		}
		ptrace(PTRACE_CONT, pid, NULL, (void *)(long)sig);
	}
	/* Detaching needs a stop: interrupt, wait for it, detach with its signal. */
	if (ptrace(PTRACE_INTERRUPT, pid, NULL, NULL))
		return 0;
	while (waitpid(pid, &status, __WALL) == pid) {
		if (!WIFSTOPPED(status))
			return 0;
		sig = (unsigned)status >> 16 ? 0 : WSTOPSIG(status);
		ptrace(PTRACE_DETACH, pid, NULL, (void *)(long)sig);
		return 0;
	}
	return 0;
}
