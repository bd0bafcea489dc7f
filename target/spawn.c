/* SPDX-License-Identifier: MIT */
/* A command started held until its tracer is ready (see spawn.h). */
#include "spawn.h"

#include <errno.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

pid_t spawn_held(char **argv, const int go[2], const int err[2], pid_t ptracer)
{
	pid_t pid = fork();
	sigset_t empty;
	char c;
	ssize_t n;
	int e;

	if (pid)
		return pid;
	sigemptyset(&empty);
	sigprocmask(SIG_SETMASK, &empty, NULL);
	close(go[1]);
	close(err[0]);
	if (ptracer)
		prctl(PR_SET_PTRACER, ptracer, 0, 0, 0);
	while ((n = read(go[0], &c, 1)) < 0 && errno == EINTR)
		;
	if (n != 1)
		_exit(127); /* the parent gave up */
	execvp(argv[0], argv);
	e = errno;
	if (write(err[1], &e, sizeof(e)) != sizeof(e))
		_exit(127);
	_exit(127);
}
