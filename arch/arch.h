/* SPDX-License-Identifier: MIT */
/*
 * Everything xprof needs to know about a CPU architecture, behind one ops
 * table selected by ELF e_machine.  Registers are kept in a snapshot indexed
 * by DWARF register number, the vocabulary shared by libdw, the psABIs and
 * the data file.  Every arch file is compiled on every host; only the part
 * that reads the live registers of a stopped thread is fenced to its host.
 * No other file of xprof may test an architecture macro.
 */
#ifndef XPROF_ARCH_ARCH_H
#define XPROF_ARCH_ARCH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Enough for riscv64 (x0..x31 + pc) and aarch64 (x0..x30, sp, pc). */
#define XP_REGS_MAX 34

struct xp_regs {
	uint16_t e_machine;
	uint16_t nr;		 /* valid entries in r[] (all, from 0) */
	uint64_t valid;		 /* bit n set: r[n] holds a known value */
	uint64_t r[XP_REGS_MAX]; /* indexed by DWARF register number */
	/*
	 * Bits of a code address that carry a pointer-authentication code
	 * (aarch64 NT_ARM_PAC_MASK, instruction mask); 0 when unknown, and
	 * strip_pc then uses a default safe for a 48-bit VA.  Unused elsewhere.
	 */
	uint64_t pac_mask;
	/*
	 * XP_REGS_SYSCALL_RESTART: the thread was stopped in the middle of a
	 * blocking system call that the kernel is about to restart (x86-64:
	 * orig_rax >= 0 and rax an -ERESTART* code).  XP_REGS_SYSCALL_EXIT:
	 * it stopped on its way out of a system call, before running any
	 * instruction of its own since (x86-64: orig_rax >= 0).  Known only
	 * where the register set tells it; 0 elsewhere.  With either flag,
	 * @sys_nr is the call's number.
	 */
	uint32_t flags;
	uint32_t sys_nr;
};

/*
 * What one instruction does to the frame, for prologue and epilogue
 * analysis where a function has no CFI.  Applied in this order:
 * XP_EFF_SP_FROM_FP (sp = fp + sp_from_fp), sp += sp_pre, the saves at
 * sp + save_fp / sp + save_ra, XP_EFF_SET_FP (fp = sp + set_fp), the
 * restores, sp += sp_post.  All zero: no effect on sp, fp or the return
 * address.
 */
enum xp_insn_eff_flags {
	XP_EFF_SP_FROM_FP = 1 << 0,
	XP_EFF_SAVE_FP = 1 << 1,
	XP_EFF_SAVE_RA = 1 << 2,
	XP_EFF_SET_FP = 1 << 3,
	XP_EFF_RESTORE_FP = 1 << 4,
	XP_EFF_RESTORE_RA = 1 << 5,
	XP_EFF_SP_UNKNOWN = 1 << 6, /* sp changed in a way the analysis cannot follow */
	XP_EFF_FP_CLOBBER = 1 << 7, /* fp overwritten with something else than a frame address */
	XP_EFF_RETURN = 1 << 8,
	XP_EFF_JUMP = 1 << 9,  /* unconditional jump: what follows is another path */
	XP_EFF_CALL = 1 << 10, /* a call: what follows is a return address */
	XP_EFF_TRAP = 1 << 11, /* a breakpoint or undefined instruction: the thread stops there */
};

struct xp_insn_effect {
	uint32_t flags; /* enum xp_insn_eff_flags */
	int32_t sp_from_fp, sp_pre, save_fp, save_ra, set_fp, sp_post;
};

/* One register of an arch's snapshot, as its regs[] table lists it. */
struct xp_arch_reg {
	const char *name;
	int8_t word; /* 8-byte word of NT_PRSTATUS; XP_ARCH_REG_ZERO: none, always 0 */
};

#define XP_ARCH_REG_ZERO (-1)

/* The DWARF register numbers of an arch's pc, stack pointer and frame pointer. */
struct xp_arch_dwarf {
	uint16_t pc, sp, fp;
	int16_t ra; /* register holding the return address, -1: none (x86) */
};

/*
 * The frame record: with fp the frame pointer of a frame, the caller's fp
 * is at fp + prev_fp and the return address at fp + ra.  The caller's sp
 * (the CFA) is fp + cfa.
 */
struct xp_arch_frame {
	uint8_t align; /* SP/FP alignment required of a valid frame */
	int8_t prev_fp, ra, cfa;
};

/* An arch's system calls. */
struct xp_arch_syscalls {
	/*
	 * The name of system call @nr ("nanosleep"), or NULL when this arch
	 * has no such call.  Pure; tables generated from the kernel's UAPI
	 * headers by arch/gen-syscalls.sh.
	 */
	const char *(*name)(unsigned int nr);
	/*
	 * The number of restart_syscall(2): what a sleep interrupted by a
	 * ptrace stop resumes as, so it is the same block as the call it
	 * continues.
	 */
	uint16_t nr_restart;
};

struct xp_arch {
	const char *name; /* as printed by uname -m */
	uint16_t e_machine;
	uint8_t addr_bytes;
	struct xp_arch_dwarf dwarf;
	uint16_t nr_regs; /* DWARF registers 0..nr_regs-1 are kept in xp_regs */
	/*
	 * DWARF registers 0..nr_regs-1 in order: the name and where the
	 * NT_PRSTATUS regset, of prstatus_words 8-byte words, holds each.
	 */
	const struct xp_arch_reg *regs;
	uint8_t prstatus_words;
	struct xp_arch_frame frame;
	/* Length of the shortest call instruction, used to sanity-check return addresses. */
	uint8_t min_call_len;
	/*
	 * libunwind's number for the pc (UNW_X86_64_RIP, UNW_AARCH64_PC,
	 * UNW_RISCV_PC); its numbers below 32 are the DWARF ones.
	 */
	uint16_t unw_pc_reg;
	/* Remove pointer-authentication (or other) tag bits from a code address. */
	uint64_t (*strip_pc)(const struct xp_regs *regs, uint64_t pc);
	/*
	 * Read the registers of a ptrace-stopped thread of this (host) arch into
	 * @out with one PTRACE_GETREGSET(NT_PRSTATUS).  0 or -errno; -ENOSYS when
	 * this arch is not the host.  Thread-safe; the thread must be stopped.
	 */
	int (*regs_read)(pid_t tid, struct xp_regs *out);
	/*
	 * Where the NT_PRSTATUS regset tells of a system call in progress,
	 * set @out's XP_REGS_SYSCALL_* flags and sys_nr from @buf, a whole
	 * regset; NULL where it does not.  Pure.
	 */
	void (*prstatus_syscall)(const void *buf, struct xp_regs *out);
	/*
	 * Classify one decoded instruction, given as the disassembler's
	 * mnemonic and operand text (capstone syntax), for prologue/epilogue
	 * analysis.  Pure; fills all of @eff.
	 */
	void (*insn_effect)(const char *mnemonic, const char *ops, struct xp_insn_effect *eff);
	struct xp_arch_syscalls syscall;
};

enum xp_regs_flags {
	XP_REGS_SYSCALL_RESTART = 1 << 0,
	XP_REGS_SYSCALL_EXIT = 1 << 1,
};

/* NULL if unknown. */
const struct xp_arch *xp_arch_by_machine(uint16_t e_machine);
/* The arch xprof was built for (the only one it can trace live). */
const struct xp_arch *xp_arch_host(void);
/*
 * Decode a raw NT_PRSTATUS regset of @arch (@len bytes) into @out: every
 * register of its regs[] table, and the system call state where it has
 * one.  Pure; used by regs_read and by tests on canned regsets.  0, or
 * -EINVAL when @buf is NULL or shorter than the regset.
 */
int xp_arch_regs_from_prstatus(const struct xp_arch *arch, const void *buf, unsigned long len,
			       struct xp_regs *out);
/* The name of DWARF register @dwarf_reg of @arch ("rbp"), or NULL when its snapshot has none. */
const char *xp_arch_reg_name(const struct xp_arch *arch, unsigned int dwarf_reg);
/*
 * The host CPU's spin-wait hint (x86 pause, arm yield, riscv pause, which
 * is a no-op fence where Zihintpause is missing): for busy loops.
 */
void xp_arch_cpu_relax(void);
/* The registry, for tests: array of pointers, NULL-terminated. */
extern const struct xp_arch *const xp_arches[];

static inline uint64_t xp_regs_get(const struct xp_regs *r, unsigned int n)
{
	return n < XP_REGS_MAX ? r->r[n] : 0;
}

static inline bool xp_regs_has(const struct xp_regs *r, unsigned int n)
{
	return n < 64 && (r->valid >> n) & 1;
}

static inline void xp_regs_set(struct xp_regs *r, unsigned int n, uint64_t v)
{
	if (n >= XP_REGS_MAX)
		return;
	r->r[n] = v;
	if (n < 64)
		r->valid |= 1ull << n;
	if (n >= r->nr)
		r->nr = (uint16_t)(n + 1);
}

#endif
