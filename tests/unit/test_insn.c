/* SPDX-License-Identifier: MIT */
/*
 * Instruction analysis on canned machine code: the call-before-return-
 * address check, and the frame state (as a CFI row) at each pc of small
 * x86-64 and aarch64 functions: entry, after each prologue step, in the
 * body, after the epilogue, and on a path after an early return.
 */
#include "t.h"

#include "arch/arch.h"
#include "insn.h"
#include "module.h"

#include <elf.h>
#include <errno.h>

struct row_expect {
	uint64_t pc;
	uint8_t cfa_reg;
	int64_t cfa_off;
	uint8_t ra_kind;
	int64_t ra_off;
	uint8_t fp_kind;
	int64_t fp_off;
};

static int check_rows(const struct xp_arch *a, const uint8_t *code, size_t len,
		      const struct row_expect *e, size_t n)
{
	struct insn_decoder *d = insn_decoder_new();
	struct cfi_row row;
	size_t i;
	int ret = T_OK;

	for (i = 0; i < n && ret == T_OK; i++) {
		if (insn_frame_row(d, a, code, len, 0x1000, 0x1000 + e[i].pc, &row)) {
			fprintf(stderr, "%s: no row at +%llu\n", a->name,
				(unsigned long long)e[i].pc);
			ret = T_FAIL;
			break;
		}
		if (row.cfa.kind != CFI_REG || row.cfa.reg != e[i].cfa_reg ||
		    row.cfa.off != e[i].cfa_off || row.ra.kind != e[i].ra_kind ||
		    (row.ra.kind == CFI_OFFSET && row.ra.off != e[i].ra_off) ||
		    row.fp.kind != e[i].fp_kind ||
		    (row.fp.kind == CFI_OFFSET && row.fp.off != e[i].fp_off)) {
			fprintf(stderr, "%s +%llu: cfa %s%+lld ra %d/%lld fp %d/%lld\n", a->name,
				(unsigned long long)e[i].pc, xp_arch_reg_name(a, row.cfa.reg),
				(long long)row.cfa.off, row.ra.kind, (long long)row.ra.off,
				row.fp.kind, (long long)row.fp.off);
			ret = T_FAIL;
		}
	}
	insn_decoder_free(d);
	return ret;
}

static int test_x86_64_prologue(void)
{
	static const uint8_t f[] = {
	    0x55,			  /* 0: push rbp */
	    0x48, 0x89, 0xe5,		  /* 1: mov rbp, rsp */
	    0x53,			  /* 4: push rbx */
	    0x48, 0x83, 0xec, 0x18,	  /* 5: sub rsp, 0x18 */
	    0xe8, 0x00, 0x00, 0x00, 0x00, /* 9: call */
	    0x48, 0x83, 0xc4, 0x18,	  /* 14: add rsp, 0x18 */
	    0x5b,			  /* 18: pop rbx */
	    0x5d,			  /* 19: pop rbp */
	    0xc3,			  /* 20: ret */
	};
	static const struct row_expect e[] = {
	    {0, 7, 8, CFI_OFFSET, -8, CFI_SAME, 0},
	    {1, 7, 16, CFI_OFFSET, -8, CFI_OFFSET, -16},
	    {4, 6, 16, CFI_OFFSET, -8, CFI_OFFSET, -16},
	    {9, 6, 16, CFI_OFFSET, -8, CFI_OFFSET, -16},
	    {14, 6, 16, CFI_OFFSET, -8, CFI_OFFSET, -16},
	    {19, 6, 16, CFI_OFFSET, -8, CFI_OFFSET, -16},
	    {20, 7, 8, CFI_OFFSET, -8, CFI_SAME, 0},
	};

	return check_rows(xp_arch_by_machine(EM_X86_64), f, sizeof(f), e, sizeof(e) / sizeof(e[0]));
}

static int test_x86_64_early_return(void)
{
	static const uint8_t g[] = {
	    0x53,		    /* 0: push rbx */
	    0x48, 0x85, 0xff,	    /* 1: test rdi, rdi */
	    0x74, 0x02,		    /* 4: je 8 */
	    0x5b,		    /* 6: pop rbx */
	    0xc3,		    /* 7: ret */
	    0x48, 0x83, 0xec, 0x08, /* 8: sub rsp, 8 */
	    0x90,		    /* 12: nop */
	};
	static const struct row_expect e[] = {
	    {1, 7, 16, CFI_OFFSET, -8, CFI_SAME, 0},
	    {7, 7, 8, CFI_OFFSET, -8, CFI_SAME, 0},
	    {8, 7, 16, CFI_OFFSET, -8, CFI_SAME, 0}, /* after ret: the body again */
	    {12, 7, 24, CFI_OFFSET, -8, CFI_SAME, 0},
	};

	return check_rows(xp_arch_by_machine(EM_X86_64), g, sizeof(g), e, sizeof(e) / sizeof(e[0]));
}

static int test_x86_64_refused(void)
{
	static const uint8_t h[] = {
	    0x48, 0x83, 0xe4, 0xf0, /* 0: and rsp, -16 */
	    0x90,		    /* 4: nop */
	};
	const struct xp_arch *a = xp_arch_by_machine(EM_X86_64);
	struct insn_decoder *d = insn_decoder_new();
	struct cfi_row row;

	T_EQ_U64(insn_frame_row(d, a, h, sizeof(h), 0x1000, 0x1004, &row), (uint64_t)-EINVAL);
	/* Not on an instruction boundary, before the start, beyond the code. */
	T_EQ_U64(insn_frame_row(d, a, h, sizeof(h), 0x1000, 0x1002, &row), (uint64_t)-EINVAL);
	T_EQ_U64(insn_frame_row(d, a, h, sizeof(h), 0x1000, 0xfff, &row), (uint64_t)-EINVAL);
	T_EQ_U64(insn_frame_row(d, a, h, 2, 0x1000, 0x1004, &row), (uint64_t)-EINVAL);
	insn_decoder_free(d);
	return T_OK;
}

static int test_aarch64_prologue(void)
{
	static const uint32_t words[] = {
	    0xa9be7bfd, /* 0: stp x29, x30, [sp, #-0x20]! */
	    0x910003fd, /* 4: mov x29, sp */
	    0x94000010, /* 8: bl */
	    0xa8c27bfd, /* 12: ldp x29, x30, [sp], #0x20 */
	    0xd65f03c0, /* 16: ret */
	};
	static const struct row_expect e[] = {
	    {0, 31, 0, CFI_SAME, 0, CFI_SAME, 0},
	    {4, 31, 0x20, CFI_OFFSET, -0x18, CFI_OFFSET, -0x20},
	    {8, 29, 0x20, CFI_OFFSET, -0x18, CFI_OFFSET, -0x20},
	    {12, 29, 0x20, CFI_OFFSET, -0x18, CFI_OFFSET, -0x20},
	    {16, 31, 0, CFI_SAME, 0, CFI_SAME, 0},
	};
	uint8_t code[sizeof(words)];
	size_t i;

	for (i = 0; i < sizeof(code); i++)
		code[i] = (uint8_t)(words[i / 4] >> (8 * (i % 4)));
	return check_rows(xp_arch_by_machine(EM_AARCH64), code, sizeof(code), e,
			  sizeof(e) / sizeof(e[0]));
}

/*
 * An epilogue that restores the return address before it pops the frame
 * (RISC-V always does, with separate loads; here aarch64 without a frame
 * record) must not become the state the path after the return starts from.
 */
static int test_aarch64_epilogue_same_depth(void)
{
	static const uint32_t words[] = {
	    0xd10083ff, /* 0: sub sp, sp, #0x20 */
	    0xf90007fe, /* 4: str x30, [sp, #8] */
	    0x97fffffe, /* 8: bl */
	    0xf94007fe, /* 12: ldr x30, [sp, #8] */
	    0x910083ff, /* 16: add sp, sp, #0x20 */
	    0xd65f03c0, /* 20: ret */
	    0xd503201f, /* 24: nop (another path, in the body) */
	};
	static const struct row_expect e[] = {
	    {12, 31, 0x20, CFI_OFFSET, -0x18, CFI_SAME, 0},
	    {16, 31, 0x20, CFI_SAME, 0, CFI_SAME, 0},
	    {20, 31, 0, CFI_SAME, 0, CFI_SAME, 0},
	    {24, 31, 0x20, CFI_OFFSET, -0x18, CFI_SAME, 0},
	};
	uint8_t code[sizeof(words)];
	size_t i;

	for (i = 0; i < sizeof(code); i++)
		code[i] = (uint8_t)(words[i / 4] >> (8 * (i % 4)));
	return check_rows(xp_arch_by_machine(EM_AARCH64), code, sizeof(code), e,
			  sizeof(e) / sizeof(e[0]));
}

static int test_call_check(void)
{
	static const uint8_t x86[] = {
	    0x48, 0x83, 0xc4, 0x18,		/* add rsp, 0x18 */
	    0xe8, 0x10, 0x00, 0x00, 0x00,	/* call rel32 */
	    0xff, 0xd0,				/* call rax */
	    0x41, 0xff, 0xd3,			/* call r11 */
	    0xff, 0x15, 0x00, 0x10, 0x00, 0x00, /* call [rip + 0x1000] */
	};
	static const uint8_t arm[] = {
	    0xfd, 0x03, 0x00, 0x91, /* mov x29, sp */
	    0x10, 0x00, 0x00, 0x94, /* bl */
	    0x00, 0x02, 0x3f, 0xd6, /* blr x16 */
	};
	const struct xp_arch *x = xp_arch_by_machine(EM_X86_64);
	const struct xp_arch *a = xp_arch_by_machine(EM_AARCH64);
	struct insn_decoder *d = insn_decoder_new();

	T_EQ_U64(insn_call_ends_at(d, x, x86, 4, 0x1000), 0);
	T_EQ_U64(insn_call_ends_at(d, x, x86, 9, 0x1000), 1);
	T_EQ_U64(insn_call_ends_at(d, x, x86, 11, 0x1000), 1);
	T_EQ_U64(insn_call_ends_at(d, x, x86, 14, 0x1000), 1);
	T_EQ_U64(insn_call_ends_at(d, x, x86, 20, 0x1000), 1);
	T_EQ_U64(insn_call_ends_at(d, x, x86, 0, 0x1000), 0);
	T_EQ_U64(insn_call_ends_at(d, a, arm, 4, 0x1000), 0);
	T_EQ_U64(insn_call_ends_at(d, a, arm, 8, 0x1000), 1);
	T_EQ_U64(insn_call_ends_at(d, a, arm, 12, 0x1000), 1);
	T_EQ_U64(insn_call_ends_at(d, a, arm, 3, 0x1000), 0);
	insn_decoder_free(d);
	return T_OK;
}

/*
 * The code between an FDE's end and a pc: glibc's clone3 ends its FDE
 * before the syscall, whose next instruction is where the parent stops.
 */
static int test_frame_neutral(void)
{
	static const uint8_t c[] = {
	    0xb8, 0xb3, 0x01, 0x00, 0x00, /* 0: mov eax, 0x1b3 */
	    0x0f, 0x05,			  /* 5: syscall */
	    0x48, 0x85, 0xc0,		  /* 7: test rax, rax */
	    0x55,			  /* 10: push rbp */
	    0xc3,			  /* 11: ret */
	    0xcc,			  /* 12: int3 */
	};
	static const uint32_t words[] = {
	    0xd2800d08, /* 0: mov x8, #0x68 */
	    0xd4000001, /* 4: svc #0 */
	    0xa9bf7bfd, /* 8: stp x29, x30, [sp, #-0x10]! */
	};
	const struct xp_arch *a = xp_arch_by_machine(EM_X86_64);
	const struct xp_arch *a64 = xp_arch_by_machine(EM_AARCH64);
	struct insn_decoder *d = insn_decoder_new();
	uint8_t code[sizeof(words)];
	size_t i;

	T_EQ_U64(insn_frame_neutral(d, a, c, sizeof(c), 0x1000, 0x1000), 1);
	T_EQ_U64(insn_frame_neutral(d, a, c + 5, sizeof(c) - 5, 0x1005, 0x1007), 1);
	T_EQ_U64(insn_frame_neutral(d, a, c, sizeof(c), 0x1000, 0x100a), 1);
	/* A push moves sp; a return or a trap ends the path. */
	T_EQ_U64(insn_frame_neutral(d, a, c, sizeof(c), 0x1000, 0x100b), 0);
	T_EQ_U64(insn_frame_neutral(d, a, c + 11, 1, 0x100b, 0x100c), 0);
	T_EQ_U64(insn_frame_neutral(d, a, c + 12, 1, 0x100c, 0x100d), 0);
	/* Not an instruction boundary, before the start, past the code. */
	T_EQ_U64(insn_frame_neutral(d, a, c, sizeof(c), 0x1000, 0x1006), (uint64_t)-EINVAL);
	T_EQ_U64(insn_frame_neutral(d, a, c, sizeof(c), 0x1000, 0xfff), (uint64_t)-EINVAL);
	T_EQ_U64(insn_frame_neutral(d, a, c, 4, 0x1000, 0x1007), (uint64_t)-EINVAL);
	for (i = 0; i < sizeof(code); i++)
		code[i] = (uint8_t)(words[i / 4] >> (8 * (i % 4)));
	T_EQ_U64(insn_frame_neutral(d, a64, code, sizeof(code), 0x1000, 0x1008), 1);
	T_EQ_U64(insn_frame_neutral(d, a64, code, sizeof(code), 0x1000, 0x100c), 0);
	insn_decoder_free(d);
	return T_OK;
}

T_MAIN(T_CASE(test_x86_64_prologue), T_CASE(test_x86_64_early_return), T_CASE(test_x86_64_refused),
       T_CASE(test_aarch64_prologue), T_CASE(test_aarch64_epilogue_same_depth),
       T_CASE(test_call_check), T_CASE(test_frame_neutral))
