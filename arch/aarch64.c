/* SPDX-License-Identifier: MIT */
/*
 * aarch64: DWARF register numbers (AADWARF64: x0..x30 = 0..30, sp = 31,
 * pc = 32), the AAPCS64 frame record ([x29] = caller x29, [x29 + 8] = saved
 * x30), the NT_PRSTATUS layout (struct user_pt_regs: x0..x30, sp, pc,
 * pstate; 272 bytes) and pointer-authentication stripping.  All of it is
 * built on every host; regs_read works on an aarch64 host only.
 */
#include "arch.h"
#include "arch_impl.h"

#include <elf.h>
#include <errno.h>
#include <stdatomic.h>

#define AARCH64_PRSTATUS_WORDS 34
#define AARCH64_DWARF_SP       31
#define AARCH64_DWARF_PC       32

#ifndef NT_ARM_PAC_MASK
#define NT_ARM_PAC_MASK 0x406
#endif

/*
 * Without the kernel's mask (not an aarch64 host, or a CPU without PAC)
 * assume a 48-bit VA: user code addresses never have bits 48..63 set, so
 * clearing them is harmless when there is no PAC and removes it when there
 * is (bits 48..54, plus 55..63 with TBI).  Kernels with 52-bit user VA only
 * hand out such addresses on request (mmap hint), never for code.
 */
#define AARCH64_PAC_DEFAULT 0xffff000000000000ull

/* DWARF registers 0..32: name, and word of struct user_pt_regs (the same number). */
static const struct xp_arch_reg aarch64_regs[] = {
    {"x0", 0},	 {"x1", 1},   {"x2", 2},   {"x3", 3},	{"x4", 4},   {"x5", 5},	  {"x6", 6},
    {"x7", 7},	 {"x8", 8},   {"x9", 9},   {"x10", 10}, {"x11", 11}, {"x12", 12}, {"x13", 13},
    {"x14", 14}, {"x15", 15}, {"x16", 16}, {"x17", 17}, {"x18", 18}, {"x19", 19}, {"x20", 20},
    {"x21", 21}, {"x22", 22}, {"x23", 23}, {"x24", 24}, {"x25", 25}, {"x26", 26}, {"x27", 27},
    {"x28", 28}, {"x29", 29}, {"x30", 30}, {"sp", 31},	{"pc", 32},
};

static uint64_t aarch64_strip_pc(const struct xp_regs *regs, uint64_t pc)
{
	uint64_t mask = regs && regs->pac_mask ? regs->pac_mask : AARCH64_PAC_DEFAULT;

	return pc & ~mask;
}

/* The mask is a property of the kernel and CPU: read it once per process. */
static _Atomic uint64_t aarch64_host_pac_mask;

static uint64_t aarch64_read_pac_mask(pid_t tid)
{
	uint64_t mask = atomic_load_explicit(&aarch64_host_pac_mask, memory_order_relaxed);
	uint64_t raw[2]; /* struct user_pac_mask: data_mask, insn_mask */

	if (mask)
		return mask;
	if (xp_arch_getregset(tid, NT_ARM_PAC_MASK, raw, sizeof(raw)) == (long)sizeof(raw) &&
	    raw[1])
		mask = raw[1];
	else
		mask = AARCH64_PAC_DEFAULT; /* EINVAL: no PAC on this CPU */
	atomic_store_explicit(&aarch64_host_pac_mask, mask, memory_order_relaxed);
	return mask;
}

static int aarch64_regs_read(pid_t tid, struct xp_regs *out)
{
	int ret = xp_arch_prstatus_read(&xp_arch_aarch64, tid, out);

	if (!ret)
		out->pac_mask = aarch64_read_pac_mask(tid);
	return ret;
}

/* "[sp, #-0x20]!" (pre-index), "[sp, #0x10]" (offset) or "[sp], #0x20" (post-index). */
static int aarch64_sp_addr(const char *p, int32_t *off, int *mode)
{
	if (xp_arch_has_prefix(p, "[sp], ", &p)) {
		*mode = 2;
		return xp_arch_parse_imm(&p, off) || *p ? -EINVAL : 0;
	}
	if (!strcmp(p, "[sp]")) {
		*mode = 1;
		*off = 0;
		return 0;
	}
	if (!xp_arch_has_prefix(p, "[sp, ", &p) || xp_arch_parse_imm(&p, off))
		return -EINVAL;
	if (!strcmp(p, "]!"))
		*mode = 0;
	else if (!strcmp(p, "]"))
		*mode = 1;
	else
		return -EINVAL;
	return 0;
}

/* Store/load of x29 and/or x30 relative to sp: stp/ldp x29, x30 and str/ldr x29 or x30. */
static void aarch64_sp_access(bool store, const char *ops, struct xp_insn_effect *eff)
{
	bool fp = false, ra = false, ra_second = false;
	const char *p = ops;
	int32_t off;
	int mode;

	if (xp_arch_has_prefix(p, "x29, x30, ", &p)) {
		fp = ra = ra_second = true;
	} else if (xp_arch_has_prefix(p, "x29, ", &p)) {
		fp = true;
	} else if (xp_arch_has_prefix(p, "x30, ", &p)) {
		ra = true;
	} else {
		/* Some other registers: only a writeback to sp matters. */
		const char *b = strchr(ops, '[');

		if (!b)
			return;
		p = b;
	}
	if (aarch64_sp_addr(p, &off, &mode)) {
		if (strstr(p, "sp") && strchr(p, '!'))
			eff->flags |= XP_EFF_SP_UNKNOWN;
		return;
	}
	if (mode == 0)
		eff->sp_pre = off;
	else if (mode == 2)
		eff->sp_post = off;
	if (mode != 1)
		off = 0; /* the access is at the updated (pre) or old (post) sp */
	if (store) {
		if (fp) {
			eff->flags |= XP_EFF_SAVE_FP;
			eff->save_fp = off;
		}
		if (ra) {
			eff->flags |= XP_EFF_SAVE_RA;
			eff->save_ra = off + (ra_second ? 8 : 0);
		}
	} else {
		eff->flags |= (fp ? XP_EFF_RESTORE_FP : 0) | (ra ? XP_EFF_RESTORE_RA : 0);
	}
}

/*
 * The instructions of aarch64_insn_effect whose effect is fixed but for an
 * immediate.  No rule of the function claims one of them too, so trying
 * the table first keeps the order of the rules.
 */
static const struct xp_arch_insn aarch64_insns[] = {
    {.mn = "brk udf hlt", .flags = XP_EFF_TRAP},
    {.mn = "ret retaa retab", .flags = XP_EFF_RETURN},
    {.mn = "b br", .flags = XP_EFF_JUMP},
    {.mn = "mov", .ops = "x29, sp", .flags = XP_EFF_SET_FP},
    {.mn = "add", .ops = "x29, sp, %", .flags = XP_EFF_SET_FP, .imm = XP_ARCH_IMM_SET_FP},
    {.mn = "mov", .ops = "sp, x29", .flags = XP_EFF_SP_FROM_FP},
    {.mn = "sub",
     .ops = "sp, x29, %",
     .flags = XP_EFF_SP_FROM_FP,
     .imm = XP_ARCH_IMM_SP_FROM_FP,
     .neg = true},
};

/*
 * AAPCS64 prologues and epilogues as GCC and clang emit them: stp/ldp of
 * x29, x30 around sp, sub/add sp, mov/add x29, sp; ret/b end a path.
 */
static void aarch64_insn_effect(const char *mn, const char *ops, struct xp_insn_effect *eff)
{
	const char *p;

	if (xp_arch_insn_match(aarch64_insns, XP_ARCH_NR(aarch64_insns), mn, ops, eff))
		return;
	if (!strcmp(mn, "stp") || !strcmp(mn, "str")) {
		aarch64_sp_access(true, ops, eff);
	} else if (!strcmp(mn, "ldp") || !strcmp(mn, "ldr")) {
		aarch64_sp_access(false, ops, eff);
		if (xp_arch_has_prefix(ops, "x29, ", NULL) && !(eff->flags & XP_EFF_RESTORE_FP))
			eff->flags |= XP_EFF_FP_CLOBBER;
	} else if ((!strcmp(mn, "sub") || !strcmp(mn, "add")) &&
		   xp_arch_has_prefix(ops, "sp, sp, ", &p)) {
		xp_arch_sp_add_imm(p, mn[0] == 's', eff);
	} else if (!strcmp(mn, "bl") || !strncmp(mn, "blr", 3)) {
		eff->flags |= XP_EFF_CALL; /* bl, blr, blraa, blraaz, blrab, blrabz */
	} else if (!strncmp(mn, "cmp", 3) || !strncmp(mn, "tst", 3)) {
		/* reads only */
	} else if (xp_arch_has_prefix(ops, "sp,", NULL) || !strcmp(ops, "sp")) {
		eff->flags |= XP_EFF_SP_UNKNOWN;
	} else if (xp_arch_has_prefix(ops, "x29,", NULL)) {
		eff->flags |= XP_EFF_FP_CLOBBER;
	}
}

const struct xp_arch xp_arch_aarch64 = {
    .name = "aarch64",
    .e_machine = EM_AARCH64,
    .addr_bytes = 8,
    .dwarf = {.pc = AARCH64_DWARF_PC, .sp = AARCH64_DWARF_SP, .fp = 29, .ra = 30},
    .nr_regs = XP_ARCH_NR(aarch64_regs),
    .regs = aarch64_regs,
    .prstatus_words = AARCH64_PRSTATUS_WORDS,
    /* AAPCS64: sp is 16-aligned, and x29 = sp when set */
    .frame = {.align = 16, .prev_fp = 0, .ra = 8, .cfa = 16},
    .min_call_len = 4,
    .unw_pc_reg = 32,
    /* nr_restart: asm-generic __NR_restart_syscall */
    .syscall = {.name = xp_arch_syscall_generic, .nr_restart = 128},
    .strip_pc = aarch64_strip_pc,
    .regs_read = aarch64_regs_read,
    .insn_effect = aarch64_insn_effect,
};
