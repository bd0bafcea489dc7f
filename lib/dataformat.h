/* SPDX-License-Identifier: MIT */
/*
 * The part of the data file's contract (doc/data-format.md) that folders
 * other than data/ need too: what a frame's flags mean, how deep a
 * recorded stack can be, and where a frame is looked up (the pc-1 rule).
 * The unwinders make frames by these rules and mark a walk cut at
 * --max-depth (unwind/), the recorder adds the syscall marker of a blocked
 * thread (record/); the report side (aggregation, symbolize/, dump) reads
 * them by the same ones.  Plain
 * types and one inline function: any folder may include it.
 */
#ifndef XPROF_LIB_DATAFORMAT_H
#define XPROF_LIB_DATAFORMAT_H

#include <stdint.h>

/* Per-frame flags stored beside each pc of a STACK record. */
enum xp_frame_flags {
	XP_FRAME_EXACT = 1 << 0, /* pc is exact (innermost or interrupted), not a return address */
	XP_FRAME_SYSCALL = 1 << 1,   /* "pc" is a system call number: leaf of a blocked thread */
	XP_FRAME_TRUNCATED = 1 << 2, /* marker at the root: the walk hit --max-depth */
	XP_FRAME_CFI = 1 << 3,	     /* this frame's caller was found with CFI (diagnostics) */
	/*
	 * Marker at the leaf: "pc" is the tid of a thread or process that
	 * ended before a sample of its own; the stack above is its creator's
	 * where it was created, the sample's weight its CPU time.
	 */
	XP_FRAME_EXITED = 1 << 4,
	/*
	 * In memory only, never in a STACK record: an interpreter frame (a
	 * Python function), its "pc" xp_interp_pc(code, line).  Such frames
	 * sit in a stack just before (inside) the native frame they ran in,
	 * the interpreter's loop; the data file carries them apart, in an
	 * ISTACK record beside the native STACK (doc/data-format.md).
	 */
	XP_FRAME_INTERP = 1 << 5,
};

/* The flags of frames whose "pc" is no address: nothing to look up for them. */
#define XP_FRAME_MARKERS (XP_FRAME_SYSCALL | XP_FRAME_TRUNCATED | XP_FRAME_EXITED | XP_FRAME_INTERP)

/* The "pc" of an XP_FRAME_INTERP frame: an ICODE record's id and a line (0: unknown). */
static inline uint64_t xp_interp_pc(uint32_t code, uint32_t line)
{
	return (uint64_t)code << 32 | line;
}

/*
 * The most frames the recorder keeps in one stack (--max-depth's ceiling),
 * not counting the XP_FRAME_TRUNCATED marker that may follow them.  A
 * deeper stack in a data file was not written by xprof.
 */
#define XP_MAX_DEPTH 65536u

/*
 * The address to look up (CFI, mapping, symbol, line) for frame @pc with
 * @flags.  A frame that is not XP_FRAME_EXACT holds a return address: the
 * instruction after the call.  That may be the first byte of the next
 * function or line (a call to a noreturn function ends its caller), so the
 * call is looked up at pc - 1, inside the call instruction (eu-stack's
 * pc_adjusted; DWARF 5, section 6.4.4).  The one place this rule is
 * written; compute it once per frame and pass the result along.
 */
static inline uint64_t xp_lookup_pc(uint64_t pc, unsigned int flags)
{
	return (flags & (XP_FRAME_EXACT | XP_FRAME_INTERP)) || pc == 0 ? pc : pc - 1;
}

#endif
