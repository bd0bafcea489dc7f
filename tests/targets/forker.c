/* SPDX-License-Identifier: MIT */
/*
 * forker: a process tree built with fork and exec, for following children.
 *
 * The parent forks a child that computes (child_work), forks a second
 * child that execs a program, then computes itself (parent_work) and waits
 * for both.  All three compute for SECONDS (default 2) of their own CPU
 * time, at the same time.  The exec'd program is, by default, this binary
 * again (resolved through /proc/self/exe to its real path, so the new comm
 * is still "forker", not "exe") running execed_work; or PROG ARGS when
 * given (e.g. the split target, whose comm is "split").
 * Truth: samples in parent_work, child_work and execed_work (or PROG's own
 * functions) in about equal numbers, from three different processes.
 *
 * Usage: forker [SECONDS [PROG [ARGS...]]]
 *        forker --execed SECONDS           (what the exec'd child runs)
 * Output, in this order (the parent prints after reaping both children;
 * the first child prints nothing and reports through its exit status):
 *   forker: execed=<hex> mismatches=0       (or PROG's output)
 *   forker: parent=<hex> child=exit 0 execed=exit 0 mismatches=0
 * Exit status 0 if all three succeeded, 1 otherwise.
 * Readiness: three lines, roles "parent", "child" and "execed" (PROG writes
 * its own line instead of "execed", if it follows the protocol).
 */
#include "target.h"

#include <inttypes.h>
#include <limits.h>
#include <sys/wait.h>

static unsigned long mismatches;

TGT_NOINLINE uint64_t parent_work(double seconds);
TGT_NOINLINE uint64_t child_work(double seconds);
TGT_NOINLINE uint64_t execed_work(double seconds);

/* The three bodies are kept separate so each process has its own names. */
#define COMPUTE(seconds)                                                                           \
	do {                                                                                       \
		double end_ = tgt_clock(CLOCK_THREAD_CPUTIME_ID) + (seconds);                      \
		unsigned int n_ = 0;                                                               \
		for (;;) {                                                                         \
			x = 0xf0;                                                                  \
			TGT_MIX(x, TGT_UNIT_ITERS);                                                \
			TGT_CHECK(&ref, x, mismatches);                                            \
			if ((++n_ & 15) == 0 && tgt_clock(CLOCK_THREAD_CPUTIME_ID) >= end_)        \
				break;                                                             \
		}                                                                                  \
	} while (0)

uint64_t parent_work(double seconds)
{
	uint64_t ref = 0, x;

	COMPUTE(seconds);
	return ref;
}

uint64_t child_work(double seconds)
{
	uint64_t ref = 0, x;

	COMPUTE(seconds);
	return ref;
}

uint64_t execed_work(double seconds)
{
	uint64_t ref = 0, x;

	COMPUTE(seconds);
	return ref;
}

static void describe(char *buf, size_t len, int status)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exit %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "signal %d", WTERMSIG(status));
	else
		snprintf(buf, len, "status 0x%x", (unsigned int)status);
}

static pid_t spawn_exec(const char *seconds_arg, char **prog_argv)
{
	char self[PATH_MAX], *self_argv[4];
	ssize_t n;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid)
		return pid;
	if (prog_argv) {
		execvp(prog_argv[0], prog_argv);
		fprintf(stderr, "forker: cannot exec '%s': %s\n", prog_argv[0], strerror(errno));
		_exit(127);
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0) {
		fprintf(stderr, "forker: readlink /proc/self/exe: %s\n", strerror(errno));
		_exit(127);
	}
	self[n] = 0;
	self_argv[0] = "forker";
	self_argv[1] = "--execed";
	self_argv[2] = (char *)seconds_arg;
	self_argv[3] = NULL;
	execv(self, self_argv);
	fprintf(stderr, "forker: cannot exec '%s': %s\n", self, strerror(errno));
	_exit(127);
}

int main(int argc, char **argv)
{
	const char *seconds_arg = "2";
	char child_desc[32], exec_desc[32];
	int child_status, exec_status, ok;
	double seconds;
	pid_t child, execed;
	uint64_t r;

	if (argc == 3 && !strcmp(argv[1], "--execed")) {
		seconds = tgt_seconds_arg("forker", argv[2]);
		tgt_ready("forker", "execed");
		r = execed_work(seconds);
		printf("forker: execed=%016" PRIx64 " mismatches=%lu\n", r, mismatches);
		return mismatches ? 1 : 0;
	}
	if (argc >= 2)
		seconds_arg = argv[1];
	seconds = tgt_seconds_arg("forker", seconds_arg);

	fflush(NULL);
	child = fork();
	if (child < 0) {
		perror("forker: fork");
		return 2;
	}
	if (!child) {
		tgt_ready("forker", "child");
		child_work(seconds);
		_exit(mismatches ? 1 : 0);
	}
	execed = spawn_exec(seconds_arg, argc >= 3 ? argv + 2 : NULL);
	if (execed < 0) {
		perror("forker: fork");
		return 2;
	}
	tgt_ready("forker", "parent");
	r = parent_work(seconds);

	if (waitpid(child, &child_status, 0) < 0 || waitpid(execed, &exec_status, 0) < 0) {
		perror("forker: waitpid");
		return 2;
	}
	describe(child_desc, sizeof(child_desc), child_status);
	describe(exec_desc, sizeof(exec_desc), exec_status);
	printf("forker: parent=%016" PRIx64 " child=%s execed=%s mismatches=%lu\n", r, child_desc,
	       exec_desc, mismatches);
	ok = !mismatches && WIFEXITED(child_status) && !WEXITSTATUS(child_status) &&
	     WIFEXITED(exec_status) && !WEXITSTATUS(exec_status);
	return ok ? 0 : 1;
}
