/* SPDX-License-Identifier: MIT */
/*
 * What every ptrace sample copies, for the floors of the benchmark suite
 * (ptrace_floor.c, follow_floor.c): the registers of a stopped thread and
 * the top FLOOR_STACK_BYTES of its stack.  Not xprof's: no unwinding, the
 * copy thrown away.
 */
#ifndef XPROF_BENCH_FLOOR_H
#define XPROF_BENCH_FLOOR_H

#include "arch/arch.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#define FLOOR_STACK_BYTES 2048

/* Copy them from thread @tid of process @pid, in a ptrace stop; whether both were read. */
static inline bool floor_copy_sample(const struct xp_arch *arch, pid_t tid, pid_t pid)
{
	static char buf[FLOOR_STACK_BYTES];
	struct iovec local = {buf, sizeof(buf)}, remote;
	struct xp_regs regs;

	if (arch->regs_read(tid, &regs))
		return false;
	remote.iov_base = (void *)(uintptr_t)xp_regs_get(&regs, arch->dwarf.sp);
	remote.iov_len = sizeof(buf);
	return process_vm_readv(pid, &local, 1, &remote, 1, 0) > 0;
}

#endif
