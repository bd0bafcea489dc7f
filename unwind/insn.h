/* SPDX-License-Identifier: MIT */
/*
 * Machine-code questions the unwinder asks where unwind information is
 * missing or must be double-checked: is a return address preceded by a
 * call instruction, and what is the frame state at a pc given the code
 * from its function's start (prologue/epilogue analysis)?  Decoding is
 * capstone's (this is the only user of <capstone/capstone.h>); what an
 * instruction means for the frame is the arch's insn_effect hook.
 *
 * Returns 0/1 or -errno, prints nothing.  A decoder is not thread-safe.
 */
#ifndef XPROF_UNWIND_INSN_H
#define XPROF_UNWIND_INSN_H

#include <stddef.h>
#include <stdint.h>

struct xp_arch;
struct cfi_row;
struct insn_decoder;

/* Never NULL.  Disassemblers are opened per arch on first use. */
struct insn_decoder *insn_decoder_new(void);
void insn_decoder_free(struct insn_decoder *d);

/*
 * Whether the @len bytes at @code (target address @addr .. @addr + @len)
 * end with a call instruction (as the arch's insn_effect classifies it),
 * i.e. whether @addr + @len is a plausible return address.  1 yes, 0 no, -ENOTSUP when there is no
 * disassembler for
 * @arch.
 */
int insn_call_ends_at(struct insn_decoder *d, const struct xp_arch *arch, const uint8_t *code,
		      size_t len, uint64_t addr);

/*
 * The frame state at @pc in the function starting at @start, found by
 * following the prologue (and epilogues) from @start, as a CFI row valid
 * at @pc only.  @code holds @len bytes from @start.  A pc at the function
 * start needs no disassembler.  0; -ENOTSUP (no disassembler for @arch),
 * -EINVAL (the code does something the analysis cannot follow, or is too
 * long).
 */
int insn_frame_row(struct insn_decoder *d, const struct xp_arch *arch, const uint8_t *code,
		   size_t len, uint64_t start, uint64_t pc, struct cfi_row *row);

/*
 * Whether the instructions from @addr up to @pc (@code holds @len bytes
 * from @addr) leave sp, fp and the return address as they are and each
 * may go on to the next: no return, jump, call or trap among them (a
 * conditional branch may also go on).  1 yes, 0 no, -ENOTSUP (no
 * disassembler for @arch), -EINVAL (@pc is not an instruction boundary
 * from @addr, is before it or too far, or @len does not reach it).
 */
int insn_frame_neutral(struct insn_decoder *d, const struct xp_arch *arch, const uint8_t *code,
		       size_t len, uint64_t addr, uint64_t pc);

#endif
