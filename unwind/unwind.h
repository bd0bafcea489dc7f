/* SPDX-License-Identifier: MIT */
/*
 * The unwinding seam: turns a register snapshot and target memory (the stack
 * copy, extended on demand) into a list of code addresses, innermost first.
 * It runs after the thread was resumed, on the copy.  Two backends sit
 * behind struct unwinder_ops (unwind.c): the native one, which walks frame
 * records with validation, CFI, or both (enum unwind_mode), and libunwind
 * (unwind_libunwind.h, also the second opinion of UNWIND_CHECK); callers
 * only see unwinder_new / unwind_stack.  Prints nothing.
 */
#ifndef XPROF_UNWIND_UNWIND_H
#define XPROF_UNWIND_UNWIND_H

#include <stdbool.h>
#include <stdint.h>

#include "dataformat.h"

struct xp_arch;
struct xp_regs;
struct memread;
struct addrspace;

enum unwind_mode {
	UNWIND_AUTO = 0, /* frame pointers, CFI where they are missing or invalid */
	UNWIND_FP,    /* frame pointers only (innermost frame fixed with CFI/prologue analysis) */
	UNWIND_DWARF, /* CFI for every frame */
	UNWIND_LIBUNWIND, /* libunwind (unwind_libunwind.h) over the same copy and snapshot */
	UNWIND_CHECK,	  /* AUTO's stacks, each also walked by libunwind and compared (stats) */
};

struct unwind_stats {
	uint64_t stacks, frames, frames_fp, frames_cfi, truncated, bad_frames;
	/* CFI rows served from the unwinder's cache, and built (libdw, prologue analysis) */
	uint64_t rows_cached, rows_built;
	/*
	 * UNWIND_CHECK: stacks walked by both backends, and those that differ:
	 * at some frame both have (pc), or by one ending before the other
	 * (walks cut by the depth limit are compared up to the shorter).
	 */
	uint64_t check_stacks, check_differ, check_pc, check_lu_shorter, check_native_shorter;
};

struct unwinder;

/*
 * Never NULL.  @max_depth counts frames (>= 1).  The unwinder caches rows
 * per module: free it before the module cache its address spaces use.
 */
struct unwinder *unwinder_new(enum unwind_mode mode, unsigned int max_depth);
void unwinder_free(struct unwinder *u);

/*
 * Walk one thread's stack.  Writes up to @max entries of @pcs/@flags,
 * innermost first (pcs[0] is the exact pc), and returns how many.  Never
 * fails: garbage, cycles and unreadable memory end the walk cleanly.  When
 * the walk is cut by the depth limit (the smaller of @max and max_depth),
 * the last entry is an XP_FRAME_TRUNCATED marker with pc 0 in place of
 * the deepest frame.  @as may be NULL (no mapping checks, no CFI: frame
 * records only).  *@left_maps (when not NULL): whether the walk met an
 * address (pc, return address) in no mapping of @as at all, which means
 * the maps may be out of date.  Reads memory through @mem only.  Not
 * thread-safe (per-unwinder caches); may run while the target runs.
 */
unsigned int unwind_stack(struct unwinder *u, const struct xp_arch *arch,
			  const struct xp_regs *regs, struct memread *mem, struct addrspace *as,
			  uint64_t *pcs, uint8_t *flags, unsigned int max, bool *left_maps);

/*
 * The same, and each frame's stack pointer in @sps (parallel to @pcs:
 * the innermost's from @regs, a caller's as the walk recovered it, 0 where
 * the backend cannot tell), for what must be matched to a frame by the
 * stack addresses its locals occupy (interpreter frames: interp.h).
 */
unsigned int unwind_stack_sp(struct unwinder *u, const struct xp_arch *arch,
			     const struct xp_regs *regs, struct memread *mem, struct addrspace *as,
			     uint64_t *pcs, uint8_t *flags, uint64_t *sps, unsigned int max,
			     bool *left_maps);

const struct unwind_stats *unwinder_stats(const struct unwinder *u);

/*
 * UNWIND_CHECK: forget the comparison of the last walk, which the caller
 * discards to walk the same stack again (after reading new maps).
 */
void unwind_check_forget(struct unwinder *u);

#endif
