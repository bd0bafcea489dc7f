/* SPDX-License-Identifier: MIT */
/*
 * sigqueue: send a signal carrying a value with sigqueue(3), which neither
 * the shell's kill nor kill(1) can do portably.  For signal tests against
 * tests/targets/sigtarget.
 *
 * Usage: sigqueue PID SIGNAL VALUE [COUNT]
 * SIGNAL is a number, RTMIN or RTMIN+<n>.  Sends COUNT (default 1) signals
 * with the values VALUE, VALUE+1, ...; EAGAIN (the receiver's queue is
 * full) is retried after 1 ms, for up to 10 s.  Exit status 0, or 1 with a
 * message on stderr.  Not part of xprof; built with the tests.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int parse_signal(const char *s)
{
	char *end;
	long n;

	if (!strncmp(s, "RTMIN", 5)) {
		if (!s[5])
			return SIGRTMIN;
		if (s[5] != '+')
			return -1;
		n = strtol(s + 6, &end, 10);
		return *end || n < 0 || SIGRTMIN + n > SIGRTMAX ? -1 : SIGRTMIN + (int)n;
	}
	n = strtol(s, &end, 10);
	return *end || end == s || n < 1 || n > SIGRTMAX ? -1 : (int)n;
}

int main(int argc, char **argv)
{
	struct timespec ms = {0, 1000000};
	long value, count = 1, i, waited = 0;
	union sigval sv;
	pid_t pid;
	int sig;

	if (argc < 4 || argc > 5) {
		fputs("usage: sigqueue PID SIGNAL VALUE [COUNT]\n", stderr);
		return 1;
	}
	pid = (pid_t)atol(argv[1]);
	sig = parse_signal(argv[2]);
	value = atol(argv[3]);
	if (argc == 5)
		count = atol(argv[4]);
	if (pid <= 0 || sig < 0 || count < 0) {
		fputs("sigqueue: bad PID, SIGNAL or COUNT\n", stderr);
		return 1;
	}
	for (i = 0; i < count; i++) {
		sv.sival_int = (int)(value + i);
		while (sigqueue(pid, sig, sv)) {
			if (errno != EAGAIN || ++waited > 10000) {
				fprintf(stderr, "sigqueue: pid %ld signal %d: %s\n", (long)pid, sig,
					strerror(errno));
				return 1;
			}
			nanosleep(&ms, NULL);
		}
	}
	return 0;
}
