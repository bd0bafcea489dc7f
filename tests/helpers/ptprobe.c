/* SPDX-License-Identifier: MIT */
/*
 * ptprobe: can this process do what xprof does with ptrace?  The test
 * library runs it before any test that needs ptrace and skips (exit 77)
 * when it fails, instead of reporting an xprof failure.  It is independent
 * of xprof on purpose: an xprof bug must never turn into a skip.
 *
 * Without arguments it forks a child and, like 'xprof record', seizes it
 * (PTRACE_SEIZE with PTRACE_O_EXITKILL), interrupts it, waits for the stop,
 * copies a word of its memory with process_vm_readv (from the start of its
 * first readable mapping, found in /proc/PID/maps), then kills it.  With a
 * PID it does the same to that existing process, like 'xprof attach', and
 * detaches instead of killing (Yama ptrace_scope 1 allows the first case
 * but not the second for a process that is not a descendant).
 *
 * Exit status 0 when everything worked; otherwise 1, with one line on
 * stdout naming the step that failed and the error, e.g.
 *   ptrace(PTRACE_SEIZE) of pid 42: Operation not permitted
 * Not part of xprof; built with the tests (tests/CMakeLists.txt).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static int fail(const char *what, pid_t pid, int err)
{
	printf("%s of pid %ld: %s\n", what, (long)pid, strerror(err));
	return 1;
}

/* Start of the first readable mapping of @pid, or 0. */
static unsigned long readable_address(pid_t pid)
{
	unsigned long start = 0, end;
	char path[64], perms[8];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/maps", (long)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fscanf(f, "%lx-%lx %7s%*[^\n]", &start, &end, perms) == 3) {
		if (perms[0] == 'r')
			break;
		start = 0;
	}
	fclose(f);
	return start;
}

static int probe(pid_t pid)
{
	long copy = 0;
	struct iovec local = {&copy, sizeof(copy)}, remote = {NULL, sizeof(copy)};
	int status;

	if (ptrace(PTRACE_SEIZE, pid, NULL, (void *)(long)PTRACE_O_EXITKILL))
		return fail("ptrace(PTRACE_SEIZE)", pid, errno);
	if (ptrace(PTRACE_INTERRUPT, pid, NULL, NULL))
		return fail("ptrace(PTRACE_INTERRUPT)", pid, errno);
	if (waitpid(pid, &status, __WALL) != pid)
		return fail("waitpid", pid, errno);
	if (!WIFSTOPPED(status)) {
		printf("waitpid of pid %ld: not a stop (status 0x%x)\n", (long)pid, status);
		return 1;
	}
	remote.iov_base = (void *)readable_address(pid);
	if (!remote.iov_base) {
		printf("reading /proc/%ld/maps: no readable mapping\n", (long)pid);
		return 1;
	}
	if (process_vm_readv(pid, &local, 1, &remote, 1, 0) < 0)
		return fail("process_vm_readv", pid, errno);
	return 0;
}

int main(int argc, char **argv)
{
	pid_t pid;
	int ret;

	if (argc > 2) {
		fputs("usage: ptprobe [PID]\n", stderr);
		return 2;
	}
	if (argc == 2) {
		pid = (pid_t)atol(argv[1]);
		ret = probe(pid);
		if (!ret && ptrace(PTRACE_DETACH, pid, NULL, NULL))
			ret = fail("ptrace(PTRACE_DETACH)", pid, errno);
		return ret;
	}
	pid = fork();
	if (pid < 0)
		return fail("fork", getpid(), errno);
	if (!pid) {
		for (;;)
			pause();
	}
	ret = probe(pid);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, __WALL);
	return ret;
}
