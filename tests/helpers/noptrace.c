/* SPDX-License-Identifier: MIT */
/*
 * noptrace: run a command the way a container's default seccomp profile
 * runs it without CAP_SYS_PTRACE: ptrace(2), process_vm_readv(2) and
 * process_vm_writev(2) fail with EPERM (Docker's profile, moby
 * profiles/seccomp/default.json, names those three calls).  The filter
 * (seccomp(2), SECCOMP_SET_MODE_FILTER with no_new_privs) is inherited by
 * the command and its children and cannot be lifted.
 *
 * Usage: noptrace COMMAND [ARGS...]; exits 127 when COMMAND cannot be run,
 * 1 when the filter cannot be installed.  Not part of xprof; built with the
 * tests (tests/CMakeLists.txt).
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define DENY(nr)                                                                                   \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1),                                           \
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA))

int main(int argc, char **argv)
{
	struct sock_filter filter[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    DENY(SYS_ptrace),
	    DENY(SYS_process_vm_readv),
	    DENY(SYS_process_vm_writev),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
	    .len = (unsigned short)(sizeof(filter) / sizeof(filter[0])),
	    .filter = filter,
	};

	if (argc < 2) {
		fprintf(stderr, "usage: noptrace COMMAND [ARGS...]\n");
		return 2;
	}
	/*
	 * The system call numbers are the host's: the filter does not check
	 * seccomp_data.arch, which is fine for a test tool run natively.
	 */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog)) {
		fprintf(stderr, "noptrace: cannot install the seccomp filter: %s\n",
			strerror(errno));
		return 1;
	}
	execvp(argv[1], argv + 1);
	fprintf(stderr, "noptrace: cannot run '%s': %s\n", argv[1], strerror(errno));
	return 127;
}
