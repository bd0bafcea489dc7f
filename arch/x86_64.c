/* SPDX-License-Identifier: MIT */
/*
 * x86-64: DWARF register numbers (System V psABI, figure 3.36), the frame
 * record pushed by "push %rbp; mov %rsp,%rbp", and the NT_PRSTATUS layout
 * (struct user_regs_struct, <sys/user.h>, 27 words).  The decoder is pure
 * and built on every host; only regs_read talks to a live thread, and only
 * on an x86-64 host.
 */
#include "arch.h"
#include "arch_impl.h"

#include <elf.h>
#include <errno.h>

#define X86_64_PRSTATUS_WORDS 27
#define X86_64_DWARF_RIP      16

/* struct user_regs_struct word index of DWARF registers 0..16. */
static const uint8_t x86_64_prstatus_index[] = {
    10, /* rax */
    12, /* rdx */
    11, /* rcx */
    5,	/* rbx */
    13, /* rsi */
    14, /* rdi */
    4,	/* rbp */
    19, /* rsp */
    9,	/* r8 */
    8,	/* r9 */
    7,	/* r10 */
    6,	/* r11 */
    3,	/* r12 */
    2,	/* r13 */
    1,	/* r14 */
    0,	/* r15 */
    16, /* rip */
};

static const char *const x86_64_names[] = {
    "rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", "r8",
    "r9",  "r10", "r11", "r12", "r13", "r14", "r15", "rip",
};

static const char *x86_64_reg_name(unsigned int dwarf_reg)
{
	if (dwarf_reg >= sizeof(x86_64_names) / sizeof(x86_64_names[0]))
		return NULL;
	return x86_64_names[dwarf_reg];
}

static uint64_t x86_64_strip_pc(const struct xp_regs *regs, uint64_t pc)
{
	(void)regs;
	return pc;
}

static int x86_64_regs_from_prstatus(const void *buf, unsigned long len, struct xp_regs *out)
{
	unsigned int i;

	if (!buf || len < X86_64_PRSTATUS_WORDS * 8)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->e_machine = EM_X86_64;
	for (i = 0; i < sizeof(x86_64_prstatus_index); i++)
		xp_regs_set(out, i, xp_arch_word(buf, x86_64_prstatus_index[i]));
	return 0;
}

static int x86_64_regs_read(pid_t tid, struct xp_regs *out)
{
#if defined(__x86_64__)
	uint64_t raw[X86_64_PRSTATUS_WORDS];
	long n = xp_arch_getregset(tid, NT_PRSTATUS, raw, sizeof(raw));

	if (n < 0)
		return (int)n;
	return x86_64_regs_from_prstatus(raw, (unsigned long)n, out);
#else
	(void)tid;
	(void)out;
	return -ENOSYS;
#endif
}

const struct xp_arch xp_arch_x86_64 = {
    .name = "x86_64",
    .e_machine = EM_X86_64,
    .addr_bytes = 8,
    .dwarf_pc = X86_64_DWARF_RIP,
    .dwarf_sp = 7,
    .dwarf_fp = 6,
    .dwarf_ra = -1,
    .nr_regs = 17,
    /*
     * rbp is 16-aligned in ABI-conforming code, but hand-written assembly
     * only guarantees 8; demanding 16 would cut valid chains.
     */
    .stack_align = 8,
    .fp_off_prev_fp = 0,
    .fp_off_ra = 8,
    .fp_off_cfa = 16,
    .min_call_len = 2, /* call *%rax: ff d0 */
    .reg_name = x86_64_reg_name,
    .strip_pc = x86_64_strip_pc,
    .regs_read = x86_64_regs_read,
    .regs_from_prstatus = x86_64_regs_from_prstatus,
};
