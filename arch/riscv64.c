/* SPDX-License-Identifier: MIT */
/*
 * riscv64: DWARF register numbers (psABI: x0..x31 = 0..31; the pc has no
 * DWARF number, xprof keeps it as 32), the frame record below s0 ([s0 - 16]
 * = caller s0, [s0 - 8] = ra, s0 = CFA) and the NT_PRSTATUS layout (struct
 * user_regs_struct: pc, x1..x31; 256 bytes).  All of it is built on every
 * host; regs_read works on a riscv64 host only.
 */
#include "arch.h"
#include "arch_impl.h"

#include <elf.h>
#include <errno.h>

#define RISCV64_PRSTATUS_WORDS 32
#define RISCV64_DWARF_PC       32

/*
 * DWARF registers 0..32: name, and word of struct user_regs_struct, whose
 * word 0 is the pc where x0 would be.
 */
static const struct xp_arch_reg riscv64_regs[] = {
    {"zero", XP_ARCH_REG_ZERO},
    {"ra", 1},
    {"sp", 2},
    {"gp", 3},
    {"tp", 4},
    {"t0", 5},
    {"t1", 6},
    {"t2", 7},
    {"s0", 8},
    {"s1", 9},
    {"a0", 10},
    {"a1", 11},
    {"a2", 12},
    {"a3", 13},
    {"a4", 14},
    {"a5", 15},
    {"a6", 16},
    {"a7", 17},
    {"s2", 18},
    {"s3", 19},
    {"s4", 20},
    {"s5", 21},
    {"s6", 22},
    {"s7", 23},
    {"s8", 24},
    {"s9", 25},
    {"s10", 26},
    {"s11", 27},
    {"t3", 28},
    {"t4", 29},
    {"t5", 30},
    {"t6", 31},
    {"pc", 0},
};

static int riscv64_regs_read(pid_t tid, struct xp_regs *out)
{
	return xp_arch_prstatus_read(&xp_arch_riscv64, tid, out);
}

/*
 * The instructions of riscv64_insn_effect, "c." prefix removed, whose
 * effect is fixed but for an immediate: tried after the sp adjustment
 * and before the other rules, which claim none of them.  "addi sp, s0, N"
 * has no row: the sp adjustment claims it first, and finds no immediate.
 */
static const struct xp_arch_insn riscv64_insns[] = {
    {.mn = "ebreak c.ebreak unimp c.unimp", .flags = XP_EFF_TRAP},
    {.mn = "sd sdsp", .ops = "ra, %(sp)", .flags = XP_EFF_SAVE_RA, .imm = XP_ARCH_IMM_SAVE_RA},
    {.mn = "sd sdsp", .ops = "s0, %(sp)", .flags = XP_EFF_SAVE_FP, .imm = XP_ARCH_IMM_SAVE_FP},
    {.mn = "ld ldsp", .ops = "ra, %(sp)", .flags = XP_EFF_RESTORE_RA},
    {.mn = "ld ldsp", .ops = "s0, %(sp)", .flags = XP_EFF_RESTORE_FP},
    /* GCC's "addi s0, sp, N" is mostly the compressed c.addi4spn. */
    {.mn = "addi addi4spn", .ops = "s0, sp, %", .flags = XP_EFF_SET_FP, .imm = XP_ARCH_IMM_SET_FP},
    {.mn = "mv", .ops = "s0, sp", .flags = XP_EFF_SET_FP},
    {.mn = "mv", .ops = "sp, s0", .flags = XP_EFF_SP_FROM_FP},
    {.mn = "ret", .flags = XP_EFF_RETURN},
    {.mn = "jr", .ops = "ra", .flags = XP_EFF_RETURN},
    {.mn = "j jr", .flags = XP_EFF_JUMP},
};

/*
 * RISC-V prologues and epilogues (addi sp; sd/ld ra and s0 relative to sp;
 * addi s0, sp), in the syntax of capstone 5, which is the first capstone
 * with RISC-V; compressed forms are printed with a "c." prefix and hex
 * immediates, as seen in the riscv64 guest (tests/xarch):
 * "c.addi sp, -0x10", "c.sdsp ra, 8(sp)", "c.addi4spn s0, sp, 0x10",
 * "c.ldsp s0, 0(sp)", "c.jr ra", "jal -0x40" (a call: rd = ra implied).
 */
static void riscv64_insn_effect(const char *mn, const char *ops, struct xp_insn_effect *eff)
{
	const char *p;
	int32_t v;

	if (xp_arch_has_prefix(mn, "c.", &p))
		mn = p;
	if ((!strcmp(mn, "addi") || !strcmp(mn, "addi16sp")) &&
	    (xp_arch_has_prefix(ops, "sp, sp, ", &p) || xp_arch_has_prefix(ops, "sp, ", &p))) {
		memset(eff, 0, sizeof(*eff));
		if (xp_arch_parse_imm(&p, &v) || *p)
			eff->flags |= XP_EFF_SP_UNKNOWN;
		else
			eff->sp_pre = v;
		return;
	}
	if (xp_arch_insn_match(riscv64_insns, XP_ARCH_NR(riscv64_insns), mn, ops, eff))
		return;
	if (!strcmp(mn, "call") || (!strncmp(mn, "jal", 3) && !strchr(ops, ',')) ||
	    ((!strcmp(mn, "jal") || !strcmp(mn, "jalr")) && xp_arch_has_prefix(ops, "ra,", NULL))) {
		eff->flags |= XP_EFF_CALL; /* links into ra: jal/jalr with rd = ra */
	} else if (!strcmp(mn, "sb") || !strcmp(mn, "sh") || !strcmp(mn, "sw") ||
		   !strcmp(mn, "sd") || !strcmp(mn, "swsp") || !strcmp(mn, "sdsp") ||
		   !strncmp(mn, "b", 1)) {
		/* stores and branches write no register */
	} else if (xp_arch_has_prefix(ops, "sp,", NULL)) {
		eff->flags |= XP_EFF_SP_UNKNOWN;
	} else if (xp_arch_has_prefix(ops, "s0,", NULL)) {
		eff->flags |= XP_EFF_FP_CLOBBER;
	}
}

/*
 * The generic table, plus the calls riscv64 adds after
 * __NR_arch_specific_syscall (244): <asm/unistd.h> of riscv.
 */
static const char *riscv64_syscall_name(unsigned int nr)
{
	if (nr == 244 + 15)
		return "riscv_flush_icache";
	if (nr == 244 + 14)
		return "riscv_hwprobe";
	return xp_arch_syscall_generic(nr);
}

const struct xp_arch xp_arch_riscv64 = {
    .name = "riscv64",
    .e_machine = EM_RISCV,
    .addr_bytes = 8,
    .dwarf = {.pc = RISCV64_DWARF_PC, .sp = 2, .fp = 8, .ra = 1},
    .nr_regs = XP_ARCH_NR(riscv64_regs),
    .regs = riscv64_regs,
    .prstatus_words = RISCV64_PRSTATUS_WORDS,
    /* psABI: sp 16-aligned; s0 is the CFA, a caller's sp */
    .frame = {.align = 16, .prev_fp = -16, .ra = -8, .cfa = 0},
    .min_call_len = 2, /* c.jalr */
    .unw_pc_reg = 64,
    /* nr_restart: asm-generic __NR_restart_syscall */
    .syscall = {.name = riscv64_syscall_name, .nr_restart = 128},
    .strip_pc = xp_arch_strip_pc_none,
    .regs_read = riscv64_regs_read,
    .insn_effect = riscv64_insn_effect,
};
