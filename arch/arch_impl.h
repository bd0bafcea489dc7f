/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the arch/ files only (nothing outside arch/ includes
 * this): the one ptrace call every regs_read makes, register files decoded
 * from a table of the arch's registers, the hooks that several arches share,
 * and parsing of disassembler text.  The arch files themselves stay
 * declarative.
 */
#ifndef XPROF_ARCH_ARCH_IMPL_H
#define XPROF_ARCH_ARCH_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "arch.h"

extern const struct xp_arch xp_arch_x86_64;
extern const struct xp_arch xp_arch_aarch64;
extern const struct xp_arch xp_arch_riscv64;

/*
 * Whether @arch is the one xprof was built for, the only one whose live
 * registers it can read: every arch's regs_read asks this first.
 */
bool xp_arch_is_host(const struct xp_arch *arch);

/*
 * PTRACE_GETREGSET of regset @type into @buf (@len bytes).  Returns the
 * number of bytes the kernel filled, or -errno.  Host-independent.
 */
long xp_arch_getregset(pid_t tid, unsigned int type, void *buf, size_t len);

/*
 * Parse an immediate as the disassembler prints it ("0x20", "-0x10", "8",
 * "#0x20", "#-0x10").  Advances *@p past it.  0 or -EINVAL.
 */
int xp_arch_parse_imm(const char **p, int32_t *out);
/* The number of entries of one of an arch's tables (registers, instructions). */
#define XP_ARCH_NR(table) (sizeof(table) / sizeof((table)[0]))

/*
 * Read the NT_PRSTATUS regset of the ptrace-stopped thread @tid with one
 * PTRACE_GETREGSET and decode it as @arch's.  0 or -errno (-EINVAL when
 * the kernel returned less than the regset, -ENOSYS when @arch is not the
 * host, without a system call).
 */
int xp_arch_prstatus_read(const struct xp_arch *arch, pid_t tid, struct xp_regs *out);

/* The strip_pc hook of an arch whose code addresses carry no tag bits: @pc itself. */
uint64_t xp_arch_strip_pc_none(const struct xp_regs *regs, uint64_t pc);

/*
 * The effect of adding the immediate at @imm (the rest of the operands)
 * to sp, or of subtracting it when @sub: eff->sp_pre.  Anything but a
 * whole immediate, or one whose negation overflows, leaves sp unknown.
 */
void xp_arch_sp_add_imm(const char *imm, bool sub, struct xp_insn_effect *eff);

/* The field of struct xp_insn_effect that a row of an instruction table puts its immediate in. */
enum xp_arch_imm {
	XP_ARCH_IMM_NONE,	/* the immediate is only checked */
	XP_ARCH_IMM_SP_FROM_FP, /* eff.sp_from_fp */
	XP_ARCH_IMM_SP_PRE,	/* eff.sp_pre */
	XP_ARCH_IMM_SAVE_FP,	/* eff.save_fp */
	XP_ARCH_IMM_SAVE_RA,	/* eff.save_ra */
	XP_ARCH_IMM_SET_FP,	/* eff.set_fp */
};

/*
 * One row of an arch's table of instructions whose effect is fixed but for
 * an immediate: the mnemonics it covers (separated by spaces), the operands
 * exactly (NULL: any), and the effect: @flags, all else zero.  A "%" in
 * @ops stands for an immediate (xp_arch_parse_imm), which goes to the @imm
 * field of the effect, negated with @neg; a row whose immediate is missing,
 * or whose negation overflows, does not match.
 */
struct xp_arch_insn {
	const char *mn;
	const char *ops;
	uint32_t flags; /* enum xp_insn_eff_flags */
	enum xp_arch_imm imm;
	bool neg;
};

/*
 * Classify @mn @ops by the first row of @table (@n rows) that matches it.
 * Fills all of @eff: that row's effect, or zero when no row matches.
 * Returns whether one matched.
 */
bool xp_arch_insn_match(const struct xp_arch_insn *table, size_t n, const char *mn, const char *ops,
			struct xp_insn_effect *eff);

/* System call names (generated: arch/syscalls_*.c).  NULL for an unknown number. */
const char *xp_arch_syscall_x86_64(unsigned int nr);
const char *xp_arch_syscall_generic(unsigned int nr);

/* Whether @s starts with @prefix; then *@rest points after it. */
bool xp_arch_has_prefix(const char *s, const char *prefix, const char **rest);

/* Word @i (8 bytes, little-endian) of a raw regset. */
static inline uint64_t xp_arch_word(const void *buf, size_t i)
{
	const uint8_t *p = (const uint8_t *)buf + i * 8;
	uint64_t v = 0;
	int b;

	for (b = 7; b >= 0; b--)
		v = v << 8 | p[b];
	return v;
}

#endif
