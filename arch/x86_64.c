/* SPDX-License-Identifier: MIT */
/*
 * x86-64: DWARF register numbers (System V psABI, figure 3.36), the frame
 * record pushed by "push %rbp; mov %rsp,%rbp", and the NT_PRSTATUS layout
 * (struct user_regs_struct, <sys/user.h>, 27 words) with the system call
 * state it tells.  All of it is built on every host; only regs_read talks
 * to a live thread, and only on an x86-64 host.
 */
#include "arch.h"
#include "arch_impl.h"

#include <elf.h>
#include <errno.h>
#include <sys/ptrace.h>

#define X86_64_PRSTATUS_WORDS 27
#define X86_64_DWARF_RIP      16
/* x86's PTRACE_GETREGS (<asm/ptrace-abi.h>), which aarch64's headers lack. */
#define X86_64_PTRACE_GETREGS 12

/* DWARF registers 0..16: name, and word of struct user_regs_struct. */
static const struct xp_arch_reg x86_64_regs[] = {
    {"rax", 10}, {"rdx", 12}, {"rcx", 11}, {"rbx", 5}, {"rsi", 13}, {"rdi", 14},
    {"rbp", 4},	 {"rsp", 19}, {"r8", 9},   {"r9", 8},  {"r10", 7},  {"r11", 6},
    {"r12", 3},	 {"r13", 2},  {"r14", 1},  {"r15", 0}, {"rip", 16},
};

static void x86_64_prstatus_syscall(const void *buf, struct xp_regs *out)
{
	/*
	 * struct user_regs_struct: rax is word 10, orig_rax word 15.  A stop
	 * inside a blocking call reports it before the restart is set up
	 * (arch_do_signal_or_restart): rax still holds -ERESTARTSYS (512),
	 * -ERESTARTNOINTR (513), -ERESTARTNOHAND (514) or
	 * -ERESTART_RESTARTBLOCK (516).
	 */
	if ((int64_t)xp_arch_word(buf, 15) >= 0) {
		int64_t rax = (int64_t)xp_arch_word(buf, 10);

		out->flags |= XP_REGS_SYSCALL_EXIT;
		out->sys_nr = (uint32_t)xp_arch_word(buf, 15);
		if (rax == -512 || rax == -513 || rax == -514 || rax == -516)
			out->flags |= XP_REGS_SYSCALL_RESTART;
	}
}

static int x86_64_regs_read(pid_t tid, struct xp_regs *out)
{
	uint64_t raw[X86_64_PRSTATUS_WORDS];

	if (!xp_arch_is_host(&xp_arch_x86_64))
		return -ENOSYS;
	/*
	 * PTRACE_GETREGS fills struct user_regs_struct, NT_PRSTATUS's layout,
	 * ~0.1 us sooner than PTRACE_GETREGSET (no iovec, no allocation):
	 * this is inside every stop.
	 */
	if (ptrace(X86_64_PTRACE_GETREGS, tid, 0, raw) < 0)
		return -errno;
	return xp_arch_regs_from_prstatus(&xp_arch_x86_64, raw, sizeof(raw), out);
}

/* Whether the first operand of @ops is @reg (the destination in Intel syntax). */
static bool x86_64_dest_is(const char *ops, const char *reg)
{
	const char *rest;

	return xp_arch_has_prefix(ops, reg, &rest) && (*rest == ',' || !*rest);
}

static bool x86_64_dest_is_sp(const char *ops)
{
	return x86_64_dest_is(ops, "rsp") || x86_64_dest_is(ops, "esp") ||
	       x86_64_dest_is(ops, "sp") || x86_64_dest_is(ops, "spl");
}

static bool x86_64_dest_is_fp(const char *ops)
{
	return x86_64_dest_is(ops, "rbp") || x86_64_dest_is(ops, "ebp") ||
	       x86_64_dest_is(ops, "bp") || x86_64_dest_is(ops, "bpl");
}

/*
 * The instructions of x86_64_insn_effect whose effect is fixed but for an
 * immediate, lea of rsp or rbp at "[rbp]", "[rbp + N]" or "[rbp - N]" (or
 * rsp) among them.  No rule of the function claims one of them too, so
 * trying the table first keeps the order of the rules.
 */
static const struct xp_arch_insn x86_64_insns[] = {
    {.mn = "int3 ud2 ud1 ud0 hlt", .flags = XP_EFF_TRAP},
    {.mn = "ret retq", .flags = XP_EFF_RETURN},
    {.mn = "jmp", .flags = XP_EFF_JUMP},
    {.mn = "mov", .ops = "rbp, rsp", .flags = XP_EFF_SET_FP},
    {.mn = "mov", .ops = "rsp, rbp", .flags = XP_EFF_SP_FROM_FP},
    {.mn = "lea", .ops = "rsp, [rbp]", .flags = XP_EFF_SP_FROM_FP},
    {.mn = "lea",
     .ops = "rsp, [rbp + %]",
     .flags = XP_EFF_SP_FROM_FP,
     .imm = XP_ARCH_IMM_SP_FROM_FP},
    {.mn = "lea",
     .ops = "rsp, [rbp - %]",
     .flags = XP_EFF_SP_FROM_FP,
     .imm = XP_ARCH_IMM_SP_FROM_FP,
     .neg = true},
    {.mn = "lea", .ops = "rsp, [rsp]"},
    {.mn = "lea", .ops = "rsp, [rsp + %]", .imm = XP_ARCH_IMM_SP_PRE},
    {.mn = "lea", .ops = "rsp, [rsp - %]", .imm = XP_ARCH_IMM_SP_PRE, .neg = true},
    {.mn = "lea", .ops = "rbp, [rsp]", .flags = XP_EFF_SET_FP},
    {.mn = "lea", .ops = "rbp, [rsp + %]", .flags = XP_EFF_SET_FP, .imm = XP_ARCH_IMM_SET_FP},
    {.mn = "lea",
     .ops = "rbp, [rsp - %]",
     .flags = XP_EFF_SET_FP,
     .imm = XP_ARCH_IMM_SET_FP,
     .neg = true},
    {.mn = "cmp test"}, /* reads its operands only */
};

/*
 * The instructions GCC and clang emit in x86-64 prologues and epilogues
 * (push/pop, sub/add/lea on rsp, mov/lea between rsp and rbp, leave, ret),
 * in capstone's Intel syntax.  Anything else that writes rsp or rbp makes
 * the analysis give up on that register.
 */
static void x86_64_insn_effect(const char *mn, const char *ops, struct xp_insn_effect *eff)
{
	const char *p;

	if (xp_arch_insn_match(x86_64_insns, XP_ARCH_NR(x86_64_insns), mn, ops, eff))
		return;
	if (!strcmp(mn, "push") || !strcmp(mn, "pushfq")) {
		eff->sp_pre = -8;
		if (!strcmp(ops, "rbp")) {
			eff->flags |= XP_EFF_SAVE_FP;
			eff->save_fp = 0;
		}
	} else if (!strcmp(mn, "pop") || !strcmp(mn, "popfq")) {
		eff->sp_post = 8;
		if (!strcmp(ops, "rbp"))
			eff->flags |= XP_EFF_RESTORE_FP;
		else if (x86_64_dest_is_sp(ops))
			eff->flags |= XP_EFF_SP_UNKNOWN;
	} else if (!strcmp(mn, "leave")) {
		eff->flags |= XP_EFF_SP_FROM_FP | XP_EFF_RESTORE_FP;
		eff->sp_post = 8;
	} else if ((!strcmp(mn, "sub") || !strcmp(mn, "add")) &&
		   xp_arch_has_prefix(ops, "rsp, ", &p)) {
		xp_arch_sp_add_imm(p, mn[0] == 's', eff);
	} else if (!strncmp(mn, "call", 4)) {
		eff->flags |= XP_EFF_CALL; /* pushes, and the callee pops */
	} else if (x86_64_dest_is_sp(ops)) {
		eff->flags |= XP_EFF_SP_UNKNOWN; /* and rsp, -16; mov rsp, rax; ... */
	} else if (x86_64_dest_is_fp(ops)) {
		eff->flags |= XP_EFF_FP_CLOBBER;
	}
}

const struct xp_arch xp_arch_x86_64 = {
    .name = "x86_64",
    .e_machine = EM_X86_64,
    .addr_bytes = 8,
    .dwarf = {.pc = X86_64_DWARF_RIP, .sp = 7, .fp = 6, .ra = -1},
    .nr_regs = XP_ARCH_NR(x86_64_regs),
    .regs = x86_64_regs,
    .prstatus_words = X86_64_PRSTATUS_WORDS,
    /*
     * rbp is 16-aligned in ABI-conforming code, but hand-written assembly
     * only guarantees 8; demanding 16 would cut valid chains.
     */
    .frame = {.align = 8, .prev_fp = 0, .ra = 8, .cfa = 16},
    .min_call_len = 2, /* call *%rax: ff d0 */
    .unw_pc_reg = 16,
    .syscall = {.name = xp_arch_syscall_x86_64, .nr_restart = 219},
    .strip_pc = xp_arch_strip_pc_none,
    .regs_read = x86_64_regs_read,
    .prstatus_syscall = x86_64_prstatus_syscall,
    .insn_effect = x86_64_insn_effect,
};
