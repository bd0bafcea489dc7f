/* SPDX-License-Identifier: MIT */
/*
 * The frame walker on crafted stack memory, for each arch's frame-record
 * layout: a good chain, a chain ended by a null return address, a cycle,
 * a self-loop, a misaligned and a downward frame pointer, a return address
 * outside code, unreadable memory, and the depth limit.  The address space
 * has no ELF files, so no CFI: these are the frame-record paths (and the
 * pc - 1 rule's helper).
 */
#include "t.h"

#include "addrspace.h"
#include "arch/arch.h"
#include "memread.h"
#include "unwind.h"

#include <elf.h>

#define STACK_BASE 0x7ff000000000ull
#define STACK_SIZE 0x10000
#define CODE	   0x400000ull

static const char maps[] = "400000-410000 r-xp 00000000 00:00 0 [code]\n"
			   "600000-601000 rw-p 00000000 00:00 0 [data]\n"
			   "7ff000000000-7ff000010000 rw-p 00000000 00:00 0 [stack]\n";

static uint8_t stack[STACK_SIZE];

struct fixture {
	const struct xp_arch *arch;
	struct addrspace as;
	struct xp_regs regs;
	uint64_t sp;
};

static void put(uint64_t addr, uint64_t v)
{
	unsigned int b;

	for (b = 0; b < 8; b++)
		stack[addr - STACK_BASE + b] = (uint8_t)(v >> (8 * b));
}

/* A frame record at @fp (the arch's layout) linking to @prev_fp and returning to @ra. */
static void record(const struct xp_arch *a, uint64_t fp, uint64_t prev_fp, uint64_t ra)
{
	put(fp + (uint64_t)(int64_t)a->frame.prev_fp, prev_fp);
	put(fp + (uint64_t)(int64_t)a->frame.ra, ra);
}

static void setup(struct fixture *fx, uint16_t machine, uint64_t fp)
{
	memset(stack, 0, sizeof(stack));
	memset(fx, 0, sizeof(*fx));
	fx->arch = xp_arch_by_machine(machine);
	addrspace_init(&fx->as, 0, NULL);
	addrspace_load_text(&fx->as, maps);
	fx->sp = STACK_BASE + 0x1000;
	fx->regs.e_machine = machine;
	xp_regs_set(&fx->regs, fx->arch->dwarf.pc, CODE + 0x50);
	xp_regs_set(&fx->regs, fx->arch->dwarf.sp, fx->sp);
	xp_regs_set(&fx->regs, fx->arch->dwarf.fp, fp);
	if (fx->arch->dwarf.ra >= 0)
		xp_regs_set(&fx->regs, (unsigned int)fx->arch->dwarf.ra, CODE + 0x999);
}

/* Unwind in @mode; returns the frame count, pcs/flags filled. */
static unsigned int walk(struct fixture *fx, enum unwind_mode mode, unsigned int depth,
			 uint64_t *pcs, uint8_t *flags, uint64_t *bad)
{
	struct unwinder *u = unwinder_new(mode, depth);
	struct memread mem;
	unsigned int n;

	memread_init(&mem, 0, fx->sp, stack + (fx->sp - STACK_BASE),
		     STACK_SIZE - (size_t)(fx->sp - STACK_BASE));
	n = unwind_stack(u, fx->arch, &fx->regs, &mem, &fx->as, pcs, flags, 64, NULL);
	if (bad)
		*bad = unwinder_stats(u)->bad_frames;
	unwinder_free(u);
	addrspace_release(&fx->as);
	return n;
}

static const uint16_t machines[] = {EM_X86_64, EM_AARCH64, EM_RISCV};

/* A good chain of three records, the last one with a null fp. */
static int test_chain(void)
{
	unsigned int i, m, n;

	for (m = 0; m < 3; m++) {
		for (i = 0; i < 2; i++) {
			enum unwind_mode mode = i ? UNWIND_AUTO : UNWIND_FP;
			uint64_t pcs[64], bad, b = STACK_BASE;
			uint8_t flags[64];
			struct fixture fx;

			setup(&fx, machines[m], b + 0x1100);
			record(fx.arch, b + 0x1100, b + 0x1200, CODE + 0x100);
			record(fx.arch, b + 0x1200, b + 0x1300, CODE + 0x200);
			record(fx.arch, b + 0x1300, 0, CODE + 0x300);
			n = walk(&fx, mode, 64, pcs, flags, &bad);
			T_EQ_U64(n, 4);
			T_EQ_U64(pcs[0], CODE + 0x50);
			T_EQ_U64(flags[0], XP_FRAME_EXACT);
			T_EQ_U64(pcs[1], CODE + 0x100);
			T_EQ_U64(flags[1], 0);
			T_EQ_U64(pcs[2], CODE + 0x200);
			T_EQ_U64(pcs[3], CODE + 0x300);
			T_EQ_U64(bad, 0); /* the null fp ends the walk cleanly */
		}
	}
	return T_OK;
}

/* The chain ends cleanly on a null return address and on a null fp. */
static int test_clean_end(void)
{
	uint64_t pcs[64], bad, b = STACK_BASE;
	uint8_t flags[64];
	struct fixture fx;

	setup(&fx, EM_X86_64, b + 0x1100);
	record(fx.arch, b + 0x1100, b + 0x1200, CODE + 0x100);
	record(fx.arch, b + 0x1200, b + 0x1300, 0);
	T_EQ_U64(walk(&fx, UNWIND_FP, 64, pcs, flags, &bad), 2);
	T_EQ_U64(bad, 0);
	setup(&fx, EM_X86_64, 0);
	T_EQ_U64(walk(&fx, UNWIND_FP, 64, pcs, flags, &bad), 1);
	T_EQ_U64(bad, 0);
	return T_OK;
}

static int test_cycle(void)
{
	unsigned int m;

	for (m = 0; m < 3; m++) {
		uint64_t pcs[64], bad, b = STACK_BASE;
		uint8_t flags[64];
		struct fixture fx;

		/* Two records pointing at each other. */
		setup(&fx, machines[m], b + 0x1100);
		record(fx.arch, b + 0x1100, b + 0x1200, CODE + 0x100);
		record(fx.arch, b + 0x1200, b + 0x1100, CODE + 0x200);
		T_EQ_U64(walk(&fx, UNWIND_AUTO, 64, pcs, flags, &bad), 3);
		T_EQ_U64(bad, 1);
		/* A record pointing at itself. */
		setup(&fx, machines[m], b + 0x1100);
		record(fx.arch, b + 0x1100, b + 0x1100, CODE + 0x100);
		T_EQ_U64(walk(&fx, UNWIND_FP, 64, pcs, flags, &bad), 2);
		T_EQ_U64(bad, 1);
	}
	return T_OK;
}

static int test_bad_fp(void)
{
	unsigned int m;

	for (m = 0; m < 3; m++) {
		uint64_t pcs[64], bad, b = STACK_BASE;
		uint8_t flags[64];
		struct fixture fx;

		/* Misaligned. */
		setup(&fx, machines[m], b + 0x1104);
		record(fx.arch, b + 0x1104, 0, CODE + 0x100);
		T_EQ_U64(walk(&fx, UNWIND_FP, 64, pcs, flags, &bad), 1);
		T_EQ_U64(bad, 1);
		/* Going down the stack. */
		setup(&fx, machines[m], b + 0x1200);
		record(fx.arch, b + 0x1200, b + 0x1100, CODE + 0x100);
		record(fx.arch, b + 0x1100, 0, CODE + 0x200);
		T_EQ_U64(walk(&fx, UNWIND_FP, 64, pcs, flags, &bad), 2);
		T_EQ_U64(bad, 1);
		/* Below sp. */
		setup(&fx, machines[m], b + 0x800);
		T_EQ_U64(walk(&fx, UNWIND_AUTO, 64, pcs, flags, &bad), 1);
		T_EQ_U64(bad, 1);
		/* Out of the stack mapping (and of readable memory). */
		setup(&fx, machines[m], b + 0x100000);
		T_EQ_U64(walk(&fx, UNWIND_FP, 64, pcs, flags, &bad), 1);
		T_EQ_U64(bad, 1);
		/* The return address is data, not code. */
		setup(&fx, machines[m], b + 0x1100);
		record(fx.arch, b + 0x1100, 0, 0x600010);
		T_EQ_U64(walk(&fx, UNWIND_AUTO, 64, pcs, flags, &bad), 1);
		T_EQ_U64(bad, 1);
	}
	return T_OK;
}

/* Without an address space nothing is known to be code or stack: memory decides. */
static int test_unreadable(void)
{
	uint64_t pcs[64], b = STACK_BASE;
	struct unwinder *u = unwinder_new(UNWIND_FP, 64);
	uint8_t flags[64];
	struct memread mem;
	struct fixture fx;

	setup(&fx, EM_X86_64, b + 0x1100);
	addrspace_release(&fx.as);
	record(fx.arch, b + 0x1100, b + 0xf000, CODE + 0x100); /* next fp beyond the copy */
	memread_init(&mem, 0, fx.sp, stack + 0x1000, 0x1000);
	T_EQ_U64(unwind_stack(u, fx.arch, &fx.regs, &mem, NULL, pcs, flags, 64, NULL), 2);
	T_EQ_U64(unwinder_stats(u)->bad_frames, 1);
	unwinder_free(u);
	return T_OK;
}

static int test_truncated(void)
{
	uint64_t pcs[64], bad, b = STACK_BASE, i;
	uint8_t flags[64];
	struct fixture fx;
	unsigned int n;

	setup(&fx, EM_AARCH64, b + 0x1100);
	for (i = 0; i < 20; i++)
		record(fx.arch, b + 0x1100 + i * 0x40, b + 0x1140 + i * 0x40, CODE + 0x100 + i);
	record(fx.arch, b + 0x1100 + 20 * 0x40, 0, CODE + 0x500);
	n = walk(&fx, UNWIND_FP, 5, pcs, flags, &bad);
	T_EQ_U64(n, 5);
	T_EQ_U64(pcs[3], CODE + 0x102);
	T_EQ_U64(pcs[4], 0);
	T_EQ_U64(flags[4], XP_FRAME_TRUNCATED);
	/* Exactly enough room: no marker. */
	setup(&fx, EM_AARCH64, b + 0x1100);
	record(fx.arch, b + 0x1100, b + 0x1140, CODE + 0x100);
	record(fx.arch, b + 0x1140, 0, CODE + 0x200);
	n = walk(&fx, UNWIND_FP, 3, pcs, flags, &bad);
	T_EQ_U64(n, 3);
	T_EQ_U64(pcs[2], CODE + 0x200);
	T_EQ_U64(flags[2], 0);
	return T_OK;
}

/* DWARF mode needs CFI: with no ELF file behind the code it stops after the pc. */
static int test_dwarf_needs_cfi(void)
{
	uint64_t pcs[64], bad, b = STACK_BASE;
	uint8_t flags[64];
	struct fixture fx;

	setup(&fx, EM_X86_64, b + 0x1100);
	record(fx.arch, b + 0x1100, 0, CODE + 0x100);
	T_EQ_U64(walk(&fx, UNWIND_DWARF, 64, pcs, flags, &bad), 1);
	T_EQ_U64(bad, 1);
	return T_OK;
}

T_MAIN(T_CASE(test_chain), T_CASE(test_clean_end), T_CASE(test_cycle), T_CASE(test_bad_fp),
       T_CASE(test_unreadable), T_CASE(test_truncated),
       T_CASE(test_dwarf_needs_cfi))
