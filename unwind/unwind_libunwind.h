/* SPDX-License-Identifier: MIT */
/*
 * The libunwind backend of the unwinding seam (unwind.h: UNWIND_LIBUNWIND,
 * and the second opinion of UNWIND_CHECK).  libunwind walks the stack
 * with our accessors: memory from the stack copy taken in the stop
 * (memread: the live process only past the copy) and registers from the
 * snapshot, so the thread is not stopped while it runs.  Unwind tables are
 * found by libunwind-ptrace's own find_proc_info, which reads
 * /proc/PID/maps and the mapped ELF files: the process must still exist
 * (an exited process's stacks end at their first frame); the vdso's are
 * read from its memory.  This is the
 * only file that includes <libunwind*.h>.  Not thread-safe per unwinder;
 * prints nothing.
 */
#ifndef XPROF_UNWIND_UNWIND_LIBUNWIND_H
#define XPROF_UNWIND_UNWIND_LIBUNWIND_H

#include <stdint.h>
#include <sys/types.h>

struct xp_arch;
struct xp_regs;
struct memread;
struct lu_unwinder;

struct lu_unwinder *lu_new(void);
void lu_free(struct lu_unwinder *lu);

/*
 * Walk the stack of a thread of process @pid from @regs (of the host
 * arch: libunwind is built for it).  [@vdso_start, @vdso_end) is the
 * process's [vdso] (0, 0: none), whose tables are read from its memory.
 * Same contract as unwind_stack: up to @max frames, innermost first, an
 * XP_FRAME_TRUNCATED marker in place of the deepest when cut.  *@bad is
 * incremented when the walk ended on an error rather than at the stack's
 * end.
 * @sps (NULL: not wanted) gets each frame's stack pointer, 0 where libunwind
 * cannot tell.
 */
unsigned int lu_unwind(struct lu_unwinder *lu, const struct xp_arch *arch,
		       const struct xp_regs *regs, struct memread *mem, pid_t pid,
		       uint64_t vdso_start, uint64_t vdso_end, uint64_t *pcs, uint8_t *flags,
		       uint64_t *sps, unsigned int max, uint64_t *bad);

#endif
