/* SPDX-License-Identifier: MIT */
/*
 * The arch registry: every entry complete (the job of elfutils'
 * fill_defaults: callers never test hooks for NULL), NT_PRSTATUS decoding
 * of each arch on canned regsets (word i holds 0x1000 + i, so a wrong
 * index shows), PAC stripping, and the prologue classifiers on
 * disassembler text.
 */
#include "t.h"

#include "arch/arch.h"

#include <elf.h>
#include <errno.h>

static void canned(uint8_t *buf, unsigned int words)
{
	unsigned int i, b;

	for (i = 0; i < words; i++)
		for (b = 0; b < 8; b++)
			buf[i * 8 + b] = (uint8_t)((0x1000ull + i) >> (8 * b));
}

static int test_registry_complete(void)
{
	unsigned int i, r, n = 0;

	for (i = 0; xp_arches[i]; i++, n++) {
		const struct xp_arch *a = xp_arches[i];

		T_ASSERT(a->name && a->name[0]);
		T_ASSERT(a->e_machine);
		T_ASSERT(a->addr_bytes == 8);
		T_ASSERT(a->nr_regs > 0 && a->nr_regs <= XP_REGS_MAX);
		T_ASSERT(a->dwarf.pc < a->nr_regs && a->dwarf.sp < a->nr_regs &&
			 a->dwarf.fp < a->nr_regs);
		T_ASSERT(a->dwarf.ra < (int)a->nr_regs);
		T_ASSERT(a->frame.align >= 8 && !(a->frame.align & (a->frame.align - 1)));
		T_ASSERT(a->frame.ra != a->frame.prev_fp);
		T_ASSERT(a->min_call_len >= 2);
		T_ASSERT(a->strip_pc && a->regs_read && a->insn_effect && a->syscall.name);
		/* Every Linux arch numbers read, write and exit_group; none has 100000 calls. */
		T_ASSERT(a->syscall.name(0) && a->syscall.name(100000) == NULL);
		T_ASSERT(xp_arch_reg_name(a, a->dwarf.pc) && xp_arch_reg_name(a, a->dwarf.sp) &&
			 xp_arch_reg_name(a, a->dwarf.fp));
		if (a->dwarf.ra >= 0)
			T_ASSERT(xp_arch_reg_name(a, (unsigned int)a->dwarf.ra));
		T_ASSERT(xp_arch_reg_name(a, 1000) == NULL);
		T_ASSERT(xp_arch_reg_name(a, a->nr_regs) == NULL);
		/* Every register has a name, and a word inside the regset (or none). */
		T_ASSERT(a->regs && a->prstatus_words > 0);
		for (r = 0; r < a->nr_regs; r++) {
			T_EQ_STR(xp_arch_reg_name(a, r), a->regs[r].name);
			T_ASSERT(a->regs[r].word == XP_ARCH_REG_ZERO ||
				 (a->regs[r].word >= 0 && a->regs[r].word < a->prstatus_words));
		}
		T_ASSERT(xp_arch_by_machine(a->e_machine) == a);
	}
	T_EQ_U64(n, 3);
	T_ASSERT(xp_arch_by_machine(EM_SPARC) == NULL);
	T_ASSERT(xp_arch_host() != NULL); /* the build host is one of ours */
	return T_OK;
}

static int test_x86_64_prstatus(void)
{
	const struct xp_arch *a = xp_arch_by_machine(EM_X86_64);
	uint8_t buf[27 * 8];
	struct xp_regs r;

	canned(buf, 27);
	T_EQ_U64(xp_arch_regs_from_prstatus(a, buf, sizeof(buf) - 1, &r), (uint64_t)-EINVAL);
	T_EQ_U64(xp_arch_regs_from_prstatus(a, buf, sizeof(buf), &r), 0);
	T_EQ_U64(r.e_machine, EM_X86_64);
	T_EQ_U64(r.nr, 17);
	T_EQ_U64(r.valid, 0x1ffff);
	T_EQ_U64(xp_regs_get(&r, 0), 0x1000 + 10);  /* rax */
	T_EQ_U64(xp_regs_get(&r, 3), 0x1000 + 5);   /* rbx */
	T_EQ_U64(xp_regs_get(&r, 6), 0x1000 + 4);   /* rbp */
	T_EQ_U64(xp_regs_get(&r, 7), 0x1000 + 19);  /* rsp */
	T_EQ_U64(xp_regs_get(&r, 15), 0x1000 + 0);  /* r15 */
	T_EQ_U64(xp_regs_get(&r, 16), 0x1000 + 16); /* rip */
	T_EQ_STR(xp_arch_reg_name(a, a->dwarf.pc), "rip");
	T_EQ_STR(xp_arch_reg_name(a, a->dwarf.fp), "rbp");
	T_EQ_U64(a->strip_pc(&r, 0xffff000000401000ull), 0xffff000000401000ull);
	return T_OK;
}

static int test_aarch64_prstatus(void)
{
	const struct xp_arch *a = xp_arch_by_machine(EM_AARCH64);
	uint8_t buf[34 * 8];
	struct xp_regs r;

	canned(buf, 34);
	T_EQ_U64(xp_arch_regs_from_prstatus(a, buf, 271, &r), (uint64_t)-EINVAL);
	T_EQ_U64(xp_arch_regs_from_prstatus(a, buf, sizeof(buf), &r), 0);
	T_EQ_U64(r.e_machine, EM_AARCH64);
	T_EQ_U64(xp_regs_get(&r, 0), 0x1000);
	T_EQ_U64(xp_regs_get(&r, 29), 0x1000 + 29); /* fp */
	T_EQ_U64(xp_regs_get(&r, 30), 0x1000 + 30); /* lr */
	T_EQ_U64(xp_regs_get(&r, a->dwarf.sp), 0x1000 + 31);
	T_EQ_U64(xp_regs_get(&r, a->dwarf.pc), 0x1000 + 32);
	T_ASSERT(!xp_regs_has(&r, 33)); /* pstate is not a DWARF register */
	T_EQ_STR(xp_arch_reg_name(a, a->dwarf.sp), "sp");
	T_EQ_STR(xp_arch_reg_name(a, a->dwarf.pc), "pc");
	/* A PAC in bits 48..54 (as seen in the xarch guest) goes with the default mask... */
	T_EQ_U64(a->strip_pc(&r, 0x002a0000004005d4ull), 0x4005d4);
	/* ...and with the kernel's mask; bits outside it stay. */
	r.pac_mask = 0x007f000000000000ull;
	T_EQ_U64(a->strip_pc(&r, 0x007f0000004005d4ull), 0x4005d4);
	T_EQ_U64(a->strip_pc(NULL, 0x0001aaaabbbbcccc), 0xaaaabbbbcccc);
	return T_OK;
}

static int test_riscv64_prstatus(void)
{
	const struct xp_arch *a = xp_arch_by_machine(EM_RISCV);
	uint8_t buf[32 * 8];
	struct xp_regs r;

	canned(buf, 32);
	T_EQ_U64(xp_arch_regs_from_prstatus(a, buf, 255, &r), (uint64_t)-EINVAL);
	T_EQ_U64(xp_arch_regs_from_prstatus(a, buf, sizeof(buf), &r), 0);
	T_EQ_U64(r.e_machine, EM_RISCV);
	T_ASSERT(xp_regs_has(&r, 0));
	T_EQ_U64(xp_regs_get(&r, 0), 0);	  /* x0 */
	T_EQ_U64(xp_regs_get(&r, 1), 0x1000 + 1); /* ra */
	T_EQ_U64(xp_regs_get(&r, 2), 0x1000 + 2); /* sp */
	T_EQ_U64(xp_regs_get(&r, 8), 0x1000 + 8); /* s0 */
	T_EQ_U64(xp_regs_get(&r, a->dwarf.pc), 0x1000 + 0);
	T_EQ_STR(xp_arch_reg_name(a, a->dwarf.fp), "s0");
	T_EQ_STR(xp_arch_reg_name(a, (unsigned int)a->dwarf.ra), "ra");
	return T_OK;
}

/* Off-host regs_read must say so, not touch anything. */
static int test_regs_read_off_host(void)
{
	unsigned int i;
	struct xp_regs r;

	for (i = 0; xp_arches[i]; i++)
		if (xp_arches[i] != xp_arch_host())
			T_EQ_U64(xp_arches[i]->regs_read(1, &r), (uint64_t)-ENOSYS);
	return T_OK;
}

struct eff_case {
	const char *mn, *ops;
	struct xp_insn_effect eff;
};

static int check_effects(uint16_t machine, const struct eff_case *c, size_t n)
{
	const struct xp_arch *a = xp_arch_by_machine(machine);
	struct xp_insn_effect e;
	size_t i;

	for (i = 0; i < n; i++) {
		a->insn_effect(c[i].mn, c[i].ops, &e);
		if (memcmp(&e, &c[i].eff, sizeof(e))) {
			fprintf(stderr,
				"%s: '%s %s': flags %#x pre %d post %d fp %d ra %d set %d "
				"from %d\n",
				a->name, c[i].mn, c[i].ops, e.flags, e.sp_pre, e.sp_post, e.save_fp,
				e.save_ra, e.set_fp, e.sp_from_fp);
			return T_FAIL;
		}
	}
	return T_OK;
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

static int test_x86_64_insn_effect(void)
{
	static const struct eff_case c[] = {
	    {"push", "rbp", {.flags = XP_EFF_SAVE_FP, .sp_pre = -8}},
	    {"push", "rbx", {.sp_pre = -8}},
	    {"push", "qword ptr [rsp + 8]", {.sp_pre = -8}},
	    {"mov", "rbp, rsp", {.flags = XP_EFF_SET_FP}},
	    {"sub", "rsp, 0x20", {.sp_pre = -0x20}},
	    {"add", "rsp, 8", {.sp_pre = 8}},
	    {"sub", "rsp, rax", {.flags = XP_EFF_SP_UNKNOWN}},
	    {"pop", "rbp", {.flags = XP_EFF_RESTORE_FP, .sp_post = 8}},
	    {"pop", "r12", {.sp_post = 8}},
	    {"leave", "", {.flags = XP_EFF_SP_FROM_FP | XP_EFF_RESTORE_FP, .sp_post = 8}},
	    {"lea", "rsp, [rbp - 0x18]", {.flags = XP_EFF_SP_FROM_FP, .sp_from_fp = -0x18}},
	    {"lea", "rsp, [rsp + 0x10]", {.sp_pre = 0x10}},
	    {"and", "rsp, 0xfffffffffffffff0", {.flags = XP_EFF_SP_UNKNOWN}},
	    {"xor", "ebp, ebp", {.flags = XP_EFF_FP_CLOBBER}},
	    {"mov", "rbp, rdi", {.flags = XP_EFF_FP_CLOBBER}},
	    {"ret", "", {.flags = XP_EFF_RETURN}},
	    {"jmp", "0x1234", {.flags = XP_EFF_JUMP}},
	    {"call", "rax", {.flags = XP_EFF_CALL}},
	    {"int3", "", {.flags = XP_EFF_TRAP}},
	    {"ud2", "", {.flags = XP_EFF_TRAP}},
	    {"syscall", "", {0}},
	    {"mov", "rax, qword ptr [rbp - 8]", {0}},
	    {"cmp", "rbp, rax", {0}},
	    {"test", "rsp, rsp", {0}},
	    {"retq", "", {.flags = XP_EFF_RETURN}},
	    {"mov", "rsp, rbp", {.flags = XP_EFF_SP_FROM_FP}},
	    {"lea", "rsp, [rbp]", {.flags = XP_EFF_SP_FROM_FP}},
	    {"lea", "rsp, [rbp + 8]", {.flags = XP_EFF_SP_FROM_FP, .sp_from_fp = 8}},
	    {"lea", "rsp, [rbp - -0x80000000]", {.flags = XP_EFF_SP_UNKNOWN}},
	    {"lea", "rsp, [rbp + rax]", {.flags = XP_EFF_SP_UNKNOWN}},
	    {"lea", "rsp, [rsp]", {0}},
	    {"lea", "rsp, [rsp - 8]", {.sp_pre = -8}},
	    {"lea", "rbp, [rsp]", {.flags = XP_EFF_SET_FP}},
	    {"lea", "rbp, [rsp + 0x10]", {.flags = XP_EFF_SET_FP, .set_fp = 0x10}},
	    {"lea", "rbp, [rsp - 8]", {.flags = XP_EFF_SET_FP, .set_fp = -8}},
	    {"lea", "rbp, [rsp + rax]", {.flags = XP_EFF_FP_CLOBBER}},
	    {"lea", "rbp, [rbp - 8]", {.flags = XP_EFF_FP_CLOBBER}},
	    {"add", "rsp, -0x80000000", {.flags = XP_EFF_SP_UNKNOWN}},
	};

	return check_effects(EM_X86_64, c, N(c));
}

static int test_aarch64_insn_effect(void)
{
	static const struct eff_case c[] = {
	    {"stp",
	     "x29, x30, [sp, #-0x20]!",
	     {.flags = XP_EFF_SAVE_FP | XP_EFF_SAVE_RA, .sp_pre = -0x20, .save_ra = 8}},
	    {"stp",
	     "x29, x30, [sp, #0x10]",
	     {.flags = XP_EFF_SAVE_FP | XP_EFF_SAVE_RA, .save_fp = 0x10, .save_ra = 0x18}},
	    {"stp", "x19, x20, [sp, #-0x30]!", {.sp_pre = -0x30}},
	    {"stp", "x19, x20, [sp, #0x10]", {0}},
	    {"str", "x30, [sp, #-0x10]!", {.flags = XP_EFF_SAVE_RA, .sp_pre = -0x10}},
	    {"sub", "sp, sp, #0x20", {.sp_pre = -0x20}},
	    {"add", "sp, sp, #0x20", {.sp_pre = 0x20}},
	    {"mov", "x29, sp", {.flags = XP_EFF_SET_FP}},
	    {"add", "x29, sp, #0x10", {.flags = XP_EFF_SET_FP, .set_fp = 0x10}},
	    {"ldp",
	     "x29, x30, [sp], #0x20",
	     {.flags = XP_EFF_RESTORE_FP | XP_EFF_RESTORE_RA, .sp_post = 0x20}},
	    {"ldp", "x29, x30, [sp, #0x10]", {.flags = XP_EFF_RESTORE_FP | XP_EFF_RESTORE_RA}},
	    {"ldr", "x30, [sp], #0x10", {.flags = XP_EFF_RESTORE_RA, .sp_post = 0x10}},
	    {"mov", "sp, x29", {.flags = XP_EFF_SP_FROM_FP}},
	    {"mov", "sp, x0", {.flags = XP_EFF_SP_UNKNOWN}},
	    {"ret", "", {.flags = XP_EFF_RETURN}},
	    {"b", "#0x1000", {.flags = XP_EFF_JUMP}},
	    {"brk", "#0x3e8", {.flags = XP_EFF_TRAP}},
	    {"svc", "#0", {0}},
	    {"bl", "#0x1000", {.flags = XP_EFF_CALL}},
	    {"blr", "x16", {.flags = XP_EFF_CALL}},
	    {"blraaz", "x16", {.flags = XP_EFF_CALL}},
	    {"br", "x16", {.flags = XP_EFF_JUMP}},
	    {"add", "x0, x1, #1", {0}},
	    {"retaa", "", {.flags = XP_EFF_RETURN}},
	    {"retab", "", {.flags = XP_EFF_RETURN}},
	    {"add", "x29, sp, x1", {.flags = XP_EFF_FP_CLOBBER}},
	    {"add", "x29, sp, #0x10, lsl #12", {.flags = XP_EFF_FP_CLOBBER}},
	    {"sub", "sp, x29, #0x10", {.flags = XP_EFF_SP_FROM_FP, .sp_from_fp = -0x10}},
	    {"sub", "sp, x29, #-0x80000000", {.flags = XP_EFF_SP_UNKNOWN}},
	    {"sub", "sp, x29, x1", {.flags = XP_EFF_SP_UNKNOWN}},
	    {"sub", "sp, sp, #-0x80000000", {.flags = XP_EFF_SP_UNKNOWN}},
	    {"add", "sp, sp, #-0x80000000", {.flags = XP_EFF_SP_UNKNOWN}},
	    {"cmp", "x29, #0", {0}},
	};

	return check_effects(EM_AARCH64, c, N(c));
}

static int test_riscv64_insn_effect(void)
{
	static const struct eff_case c[] = {
	    {"addi", "sp, sp, -32", {.sp_pre = -32}},
	    {"c.addi16sp", "sp, -64", {.sp_pre = -64}},
	    {"sd", "ra, 24(sp)", {.flags = XP_EFF_SAVE_RA, .save_ra = 24}},
	    {"c.sdsp", "s0, 16(sp)", {.flags = XP_EFF_SAVE_FP, .save_fp = 16}},
	    {"addi", "s0, sp, 32", {.flags = XP_EFF_SET_FP, .set_fp = 32}},
	    {"ld", "ra, 24(sp)", {.flags = XP_EFF_RESTORE_RA}},
	    {"ld", "s0, 16(sp)", {.flags = XP_EFF_RESTORE_FP}},
	    {"ret", "", {.flags = XP_EFF_RETURN}},
	    {"j", "0x100", {.flags = XP_EFF_JUMP}},
	    {"ebreak", "", {.flags = XP_EFF_TRAP}},
	    {"ecall", "", {0}},
	    {"jal", "0x100", {.flags = XP_EFF_CALL}},
	    {"jalr", "ra, 0(a5)", {.flags = XP_EFF_CALL}},
	    {"c.jalr", "a5", {.flags = XP_EFF_CALL}},
	    {"jal", "zero, 0x100", {0}},
	    {"sd", "a0, 8(sp)", {0}},
	    {"mv", "sp, a0", {.flags = XP_EFF_SP_UNKNOWN}},
	    {"sub", "sp, sp, t0", {.flags = XP_EFF_SP_UNKNOWN}},
	    {"slli", "s0, a0, 3", {.flags = XP_EFF_FP_CLOBBER}},
	    /* As capstone 5 prints GCC 12's prologue and epilogue (the xarch riscv64 guest). */
	    {"c.addi", "sp, -0x10", {.sp_pre = -16}},
	    {"c.sdsp", "ra, 8(sp)", {.flags = XP_EFF_SAVE_RA, .save_ra = 8}},
	    {"c.addi4spn", "s0, sp, 0x10", {.flags = XP_EFF_SET_FP, .set_fp = 16}},
	    {"addi", "s0, sp, 0x30", {.flags = XP_EFF_SET_FP, .set_fp = 48}},
	    {"c.mv", "s0, sp", {.flags = XP_EFF_SET_FP}},
	    {"c.mv", "sp, s0", {.flags = XP_EFF_SP_FROM_FP}},
	    {"c.ldsp", "ra, 8(sp)", {.flags = XP_EFF_RESTORE_RA}},
	    {"ld", "s0, 0x20(sp)", {.flags = XP_EFF_RESTORE_FP}},
	    {"c.addi", "sp, 0x10", {.sp_pre = 16}},
	    {"c.jr", "ra", {.flags = XP_EFF_RETURN}},
	    {"c.jr", "a5", {.flags = XP_EFF_JUMP}},
	    {"jal", "-0x40", {.flags = XP_EFF_CALL}},
	    {"c.j", "-0x66", {.flags = XP_EFF_JUMP}},
	    {"c.beqz", "a1, 0x26", {0}},
	    {"sd", "s0, 16(sp)", {.flags = XP_EFF_SAVE_FP, .save_fp = 16}},
	    {"c.sdsp", "ra, -0x80000000(sp)", {.flags = XP_EFF_SAVE_RA, .save_ra = INT32_MIN}},
	    {"sd", "ra, 8(a0)", {0}},
	    {"c.ldsp", "s0, 0(sp)", {.flags = XP_EFF_RESTORE_FP}},
	    {"ld", "ra, 8(a0)", {0}},
	    {"ld", "s0, 8(a0)", {.flags = XP_EFF_FP_CLOBBER}},
	    {"addi", "s0, sp, a0", {.flags = XP_EFF_FP_CLOBBER}},
	    {"mv", "s0, sp", {.flags = XP_EFF_SET_FP}},
	    {"mv", "sp, s0", {.flags = XP_EFF_SP_FROM_FP}},
	    /* Taken as an sp adjustment first ("sp, " then no immediate). */
	    {"addi", "sp, s0, -16", {.flags = XP_EFF_SP_UNKNOWN}},
	    {"addi", "sp, sp, -0x80000000", {.sp_pre = INT32_MIN}},
	    {"jr", "ra", {.flags = XP_EFF_RETURN}},
	    {"c.jr", "ra, 0", {.flags = XP_EFF_JUMP}},
	};

	return check_effects(EM_RISCV, c, N(c));
}

/* Spot checks of the generated tables against the UAPI numbers. */
static int test_syscall_names(void)
{
	const struct xp_arch *x86 = xp_arch_by_machine(EM_X86_64);
	const struct xp_arch *a64 = xp_arch_by_machine(EM_AARCH64);
	const struct xp_arch *rv = xp_arch_by_machine(EM_RISCV);

	T_EQ_STR(x86->syscall.name(0), "read");
	T_EQ_STR(x86->syscall.name(35), "nanosleep");
	T_EQ_STR(x86->syscall.name(202), "futex");
	T_EQ_STR(x86->syscall.name(231), "exit_group");
	T_EQ_STR(x86->syscall.name(230), "clock_nanosleep");
	T_ASSERT(x86->syscall.name(335) == NULL); /* the gap after rseq (334) */
	T_EQ_STR(a64->syscall.name(63), "read");
	T_EQ_STR(a64->syscall.name(101), "nanosleep");
	T_EQ_STR(a64->syscall.name(98), "futex");
	T_EQ_STR(a64->syscall.name(79), "newfstatat");
	T_EQ_STR(a64->syscall.name(222), "mmap");
	T_EQ_STR(rv->syscall.name(101), "nanosleep");
	T_EQ_STR(rv->syscall.name(259), "riscv_flush_icache");
	T_ASSERT(a64->syscall.name(259) == NULL);
	return T_OK;
}

T_MAIN(T_CASE(test_registry_complete), T_CASE(test_syscall_names), T_CASE(test_x86_64_prstatus),
       T_CASE(test_aarch64_prstatus), T_CASE(test_riscv64_prstatus),
       T_CASE(test_regs_read_off_host), T_CASE(test_x86_64_insn_effect),
       T_CASE(test_aarch64_insn_effect), T_CASE(test_riscv64_insn_effect))
