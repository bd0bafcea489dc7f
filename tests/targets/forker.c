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
 *
 * "forker --storm N [MS [NAME]]": a fork storm.  The parent forks N
 * children (1..1000) as fast as it can, all alive at once; child i
 * computes MS (default 5) ms of its own CPU time in storm_work and exits
 * with status i % 100 + 1, which the parent checks when it reaps them all.
 * With NAME, the parent first names itself NAME (prctl PR_SET_NAME), and
 * its children are born with that name.  Truth: N + 1 processes, samples
 * in storm_work.  Output:
 *   forker: storm children=<N> statuses=ok unit=<hex> mismatches=0
 * Readiness: one line, role "storm", once every child is forked.
 *
 * "forker --chain N [MS]": an exec chain.  The process computes MS
 * (default 5) ms in chain_work, then execs this binary again with N - 1,
 * passing its result along, until N is 0: N + 1 images in one process.
 * Every link checks the result it was handed.  Truth: one process, N
 * execs, samples in chain_work.  Output (printed by the last link):
 *   forker: chain end unit=<hex> mismatches=0
 * Readiness: one line, role "chain", from the first link.
 *
 * "forker --forks N [MS]": a fork chain.  The process forks a child and
 * waits for it, the child forks the next, N generations down, none
 * exec'ing; the last computes MS (default 5) ms in deep_work and exits 0,
 * each parent exits 0 only if its child did.  Truth: N + 1 processes, one
 * image, samples in deep_work in the last.  Output (by the first process):
 *   forker: forks depth=<N> statuses=ok mismatches=0
 * Readiness: one line, role "forks", from the first process.
 */
#include "target.h"

#include <inttypes.h>
#include <limits.h>
#include <sys/prctl.h>
#include <sys/wait.h>

static unsigned long mismatches;

TGT_NOINLINE uint64_t parent_work(double seconds);
TGT_NOINLINE uint64_t child_work(double seconds);
TGT_NOINLINE uint64_t execed_work(double seconds);
TGT_NOINLINE uint64_t storm_work(double seconds);
TGT_NOINLINE uint64_t chain_work(double seconds);
TGT_NOINLINE uint64_t deep_work(double seconds);

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

uint64_t storm_work(double seconds)
{
	uint64_t ref = 0, x;

	COMPUTE(seconds);
	return ref;
}

uint64_t chain_work(double seconds)
{
	uint64_t ref = 0, x;

	COMPUTE(seconds);
	return ref;
}

uint64_t deep_work(double seconds)
{
	uint64_t ref = 0, x;

	COMPUTE(seconds);
	return ref;
}

static void describe(char *buf, size_t len, int status);

/* --forks N [MS] */
static int run_forks(int argc, char **argv)
{
	double seconds = 0.005;
	uint64_t ref = deep_work(0);
	long n, depth;
	int status;
	pid_t child;

	if (argc > 4)
		tgt_die("forker", "usage: forker --forks N [MS]");
	n = tgt_long_arg("forker", argv[2], 1, 100);
	if (argc == 4)
		seconds = (double)tgt_long_arg("forker", argv[3], 0, 60000) / 1000;
	tgt_ready("forker", "forks");
	for (depth = 0; depth < n; depth++) {
		fflush(NULL);
		child = fork();
		if (child < 0) {
			perror("forker: fork");
			return 2;
		}
		if (child) {
			if (waitpid(child, &status, 0) != child) {
				perror("forker: waitpid");
				return 2;
			}
			status = WIFEXITED(status) && !WEXITSTATUS(status);
			if (depth)
				_exit(status ? 0 : 1);
			printf("forker: forks depth=%ld statuses=%s mismatches=%lu\n", n,
			       status ? "ok" : "BAD", mismatches);
			return status ? 0 : 1;
		}
	}
	/* A different unit value would mean a corrupted register or stack. */
	_exit(deep_work(seconds) == ref ? 0 : 1);
}

/* --storm N [MS [NAME]] */
static int run_storm(int argc, char **argv)
{
	static pid_t pids[1000];
	double seconds = 0.005;
	int n, i, status, bad_status = 0;
	uint64_t ref = storm_work(0);

	if (argc > 5)
		tgt_die("forker", "usage: forker --storm N [MS [NAME]]");
	n = (int)tgt_long_arg("forker", argv[2], 1, 1000);
	if (argc >= 4)
		seconds = (double)tgt_long_arg("forker", argv[3], 0, 60000) / 1000;
	if (argc == 5 && prctl(PR_SET_NAME, argv[4], 0, 0, 0)) {
		perror("forker: prctl");
		return 2;
	}
	fflush(NULL);
	for (i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			perror("forker: fork");
			return 2;
		}
		if (!pids[i]) {
			/* A different unit value would mean a corrupted register or stack. */
			_exit(storm_work(seconds) == ref ? i % 100 + 1 : 0);
		}
	}
	tgt_ready("forker", "storm");
	for (i = 0; i < n; i++) {
		if (waitpid(pids[i], &status, 0) != pids[i]) {
			perror("forker: waitpid");
			return 2;
		}
		if (!WIFEXITED(status) || WEXITSTATUS(status) != i % 100 + 1) {
			char desc[32];

			describe(desc, sizeof(desc), status);
			fprintf(stderr, "forker: child %d ended with %s, expected exit %d\n", i,
				desc, i % 100 + 1);
			bad_status++;
		}
	}
	printf("forker: storm children=%d statuses=%s unit=%016" PRIx64 " mismatches=%lu\n", n,
	       bad_status ? "BAD" : "ok", ref, mismatches);
	return bad_status || mismatches ? 1 : 0;
}

/* --chain N [MS [REF]]: REF is the previous link's result, in hex. */
static int run_chain(int argc, char **argv)
{
	char self[PATH_MAX], left[16], ref_arg[24], *next[6];
	double seconds = 0.005;
	const char *ms = argc >= 4 ? argv[3] : "5";
	uint64_t r;
	ssize_t len;
	long n;

	if (argc > 5)
		tgt_die("forker", "usage: forker --chain N [MS]");
	n = tgt_long_arg("forker", argv[2], 0, 1000);
	seconds = (double)tgt_long_arg("forker", ms, 0, 60000) / 1000;
	if (argc < 5)
		tgt_ready("forker", "chain");
	r = chain_work(seconds);
	if (argc == 5 && strtoull(argv[4], NULL, 16) != r)
		mismatches++;
	if (n == 0 || mismatches) {
		printf("forker: chain end unit=%016" PRIx64 " mismatches=%lu\n", r, mismatches);
		return mismatches ? 1 : 0;
	}
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len < 0) {
		fprintf(stderr, "forker: readlink /proc/self/exe: %s\n", strerror(errno));
		return 2;
	}
	self[len] = 0;
	snprintf(left, sizeof(left), "%ld", n - 1);
	snprintf(ref_arg, sizeof(ref_arg), "%016" PRIx64, r);
	next[0] = "forker";
	next[1] = "--chain";
	next[2] = left;
	next[3] = (char *)ms;
	next[4] = ref_arg;
	next[5] = NULL;
	fflush(NULL);
	execv(self, next);
	fprintf(stderr, "forker: cannot exec '%s': %s\n", self, strerror(errno));
	return 2;
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

	if (argc >= 3 && !strcmp(argv[1], "--storm"))
		return run_storm(argc, argv);
	if (argc >= 3 && !strcmp(argv[1], "--chain"))
		return run_chain(argc, argv);
	if (argc >= 3 && !strcmp(argv[1], "--forks"))
		return run_forks(argc, argv);
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
