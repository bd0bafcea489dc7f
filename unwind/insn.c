/* SPDX-License-Identifier: MIT */
/*
 * Instruction decoding for the unwinder, with capstone (the one file that
 * includes it).  Capstone 4 knows x86-64 and aarch64; RISC-V needs
 * capstone 5.  The prologue analysis here is arch-neutral bookkeeping of
 * sp, fp and return-address locations; each arch's insn_effect hook says
 * what one instruction does.  It follows the code linearly, and after a
 * return or an unconditional jump continues from the deepest frame state
 * seen outside an epilogue (the body), which handles the usual single
 * prologue with one or more epilogues; shrink-wrapped paths can fool it,
 * which is why CFI is always preferred.
 */
#include "insn.h"
#include "arch.h"
#include "err.h"
#include "module.h"

#include <capstone/capstone.h>
#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Code from a function start longer than this is not analysed. */
#define INSN_MAX_SCAN 16384

#define INSN_NR_ARCHES 3

struct insn_arch_desc {
	uint16_t e_machine;
	int cs_arch, cs_mode;
	uint8_t max_len, min_len, align;
};

static const struct insn_arch_desc insn_arches[INSN_NR_ARCHES] = {
    {EM_X86_64, CS_ARCH_X86, CS_MODE_64, 15, 1, 1},
    {EM_AARCH64, CS_ARCH_ARM64, CS_MODE_ARM, 4, 4, 4},
#if CS_API_MAJOR >= 5
    {EM_RISCV, CS_ARCH_RISCV, CS_MODE_RISCV64 | CS_MODE_RISCVC, 4, 2, 2},
#else
    {EM_RISCV, -1, 0, 4, 2, 2},
#endif
};

struct insn_decoder {
	bool tried[INSN_NR_ARCHES];
	csh handle[INSN_NR_ARCHES];
	cs_insn *insn[INSN_NR_ARCHES];
};

struct insn_decoder *insn_decoder_new(void)
{
	return xp_calloc(1, sizeof(struct insn_decoder));
}

void insn_decoder_free(struct insn_decoder *d)
{
	unsigned int i;

	if (!d)
		return;
	for (i = 0; i < INSN_NR_ARCHES; i++) {
		if (d->insn[i])
			cs_free(d->insn[i], 1);
		if (d->handle[i])
			cs_close(&d->handle[i]);
	}
	free(d);
}

/* The open disassembler for @arch and its descriptor, or -ENOTSUP. */
static int insn_open(struct insn_decoder *d, const struct xp_arch *arch,
		     const struct insn_arch_desc **desc, unsigned int *idx)
{
	unsigned int i;

	for (i = 0; i < INSN_NR_ARCHES; i++)
		if (insn_arches[i].e_machine == arch->e_machine)
			break;
	if (i == INSN_NR_ARCHES || insn_arches[i].cs_arch < 0)
		return -ENOTSUP;
	if (!d->tried[i]) {
		d->tried[i] = true;
		if (cs_open((cs_arch)insn_arches[i].cs_arch, (cs_mode)insn_arches[i].cs_mode,
			    &d->handle[i]) != CS_ERR_OK) {
			d->handle[i] = 0;
		} else {
			d->insn[i] = cs_malloc(d->handle[i]);
		}
	}
	if (!d->handle[i] || !d->insn[i])
		return -ENOTSUP;
	*desc = &insn_arches[i];
	*idx = i;
	return 0;
}

int insn_call_ends_at(struct insn_decoder *d, const struct xp_arch *arch, const uint8_t *code,
		      size_t len, uint64_t addr)
{
	const struct insn_arch_desc *desc;
	unsigned int idx, l;
	int ret = insn_open(d, arch, &desc, &idx);

	if (ret)
		return ret;
	/*
	 * Decode backwards: try each length a call can have and accept one
	 * that decodes to exactly that length and is a call (x86 calls are 2
	 * to 7 bytes plus prefixes; fixed-width ISAs have one length).
	 */
	for (l = desc->min_len; l <= desc->max_len && l <= len; l += desc->align) {
		const uint8_t *p = code + len - l;
		uint64_t a = addr + len - l;
		size_t n = l;
		struct xp_insn_effect eff;

		if (!cs_disasm_iter(d->handle[idx], &p, &n, &a, d->insn[idx]) || n)
			continue;
		arch->insn_effect(d->insn[idx]->mnemonic, d->insn[idx]->op_str, &eff);
		if (eff.flags & XP_EFF_CALL)
			return 1;
	}
	return 0;
}

/* The analysis state: where the CFA and the caller's fp and ra are. */
struct insn_frame {
	bool sp_ok;    /* CFA = sp + sp_cfa */
	bool fp_frame; /* CFA = fp + fp_cfa (fp was set from sp) */
	bool fp_saved; /* caller's fp at CFA + fp_save */
	bool ra_saved; /* return address at CFA + ra_save (else still in the ra register) */
	/*
	 * This path has begun to restore the caller's registers: it is an
	 * epilogue, whose states must not become the body another path starts
	 * from (RISC-V restores ra and s0 with separate loads before it pops
	 * the frame, so depth alone does not tell).
	 */
	bool epilogue;
	int64_t sp_cfa, fp_cfa, fp_save, ra_save;
};

static int64_t insn_frame_depth(const struct insn_frame *f)
{
	if (f->fp_frame)
		return INT64_MAX;
	return f->sp_ok ? f->sp_cfa : -1;
}

static int insn_frame_apply(struct insn_frame *f, const struct xp_insn_effect *e)
{
	if (e->flags & XP_EFF_SP_FROM_FP) {
		if (!f->fp_frame)
			return -EINVAL;
		f->sp_ok = true;
		f->sp_cfa = f->fp_cfa - e->sp_from_fp;
	}
	f->sp_cfa -= e->sp_pre;
	if (e->flags & (XP_EFF_SAVE_FP | XP_EFF_SAVE_RA | XP_EFF_SET_FP) && !f->sp_ok)
		return -EINVAL;
	if (e->flags & XP_EFF_SAVE_FP && !f->fp_saved) {
		f->fp_saved = true;
		f->fp_save = e->save_fp - f->sp_cfa;
	}
	if (e->flags & XP_EFF_SAVE_RA && !f->ra_saved) {
		f->ra_saved = true;
		f->ra_save = e->save_ra - f->sp_cfa;
	}
	if (e->flags & XP_EFF_SET_FP) {
		f->fp_frame = true;
		f->fp_cfa = f->sp_cfa - e->set_fp;
	}
	if (e->flags & XP_EFF_RESTORE_FP) {
		f->fp_saved = false;
		f->fp_frame = false;
		f->epilogue = true;
	}
	if (e->flags & XP_EFF_RESTORE_RA) {
		f->ra_saved = false;
		f->epilogue = true;
	}
	if (e->flags & XP_EFF_FP_CLOBBER)
		f->fp_frame = false;
	f->sp_cfa -= e->sp_post;
	if (e->flags & XP_EFF_SP_UNKNOWN)
		f->sp_ok = false;
	if (!f->sp_ok && !f->fp_frame)
		return -EINVAL;
	return 0;
}

static void insn_frame_to_row(const struct xp_arch *arch, const struct insn_frame *f, uint64_t pc,
			      struct cfi_row *row)
{
	memset(row, 0, sizeof(*row));
	row->start = pc;
	row->end = pc + 1;
	row->cfa.kind = CFI_REG;
	if (f->fp_frame) {
		row->cfa.reg = (uint8_t)arch->dwarf.fp;
		row->cfa.off = f->fp_cfa;
	} else {
		row->cfa.reg = (uint8_t)arch->dwarf.sp;
		row->cfa.off = f->sp_cfa;
	}
	row->ra_reg = (uint8_t)(arch->dwarf.ra < 0 ? arch->dwarf.pc : arch->dwarf.ra);
	row->ra.kind = f->ra_saved ? CFI_OFFSET : CFI_SAME;
	row->ra.off = f->ra_save;
	row->fp.kind = f->fp_saved ? CFI_OFFSET : CFI_SAME;
	row->fp.off = f->fp_save;
	row->sp.kind = CFI_VAL_OFFSET;
}

int insn_frame_row(struct insn_decoder *d, const struct xp_arch *arch, const uint8_t *code,
		   size_t len, uint64_t start, uint64_t pc, struct cfi_row *row)
{
	struct insn_frame f = {.sp_ok = true}, body;
	const struct insn_arch_desc *desc;
	struct xp_insn_effect eff;
	uint64_t addr = start;
	unsigned int idx;
	size_t left;
	int ret;

	if (pc < start || pc - start > INSN_MAX_SCAN)
		return -EINVAL;
	/* At entry the call has just put the return address on the stack or in ra. */
	if (arch->dwarf.ra < 0) {
		f.sp_cfa = arch->addr_bytes;
		f.ra_saved = true;
		f.ra_save = -(int64_t)arch->addr_bytes;
	}
	body = f;
	if (pc > start) {
		ret = insn_open(d, arch, &desc, &idx);
		if (ret)
			return ret;
		left = len < pc - start ? len : (size_t)(pc - start);
		if (left < pc - start)
			return -EINVAL;
		while (addr < pc) {
			if (!cs_disasm_iter(d->handle[idx], &code, &left, &addr, d->insn[idx]))
				return -EINVAL;
			arch->insn_effect(d->insn[idx]->mnemonic, d->insn[idx]->op_str, &eff);
			ret = insn_frame_apply(&f, &eff);
			if (ret)
				return ret;
			if (!f.epilogue && insn_frame_depth(&f) >= insn_frame_depth(&body))
				body = f;
			/* Nothing falls through a return or a jump: what follows is another path.
			 */
			if (eff.flags & (XP_EFF_RETURN | XP_EFF_JUMP))
				f = body;
		}
		if (addr != pc)
			return -EINVAL; /* pc is not on an instruction boundary of this path */
	}
	insn_frame_to_row(arch, &f, pc, row);
	return 0;
}

int insn_frame_neutral(struct insn_decoder *d, const struct xp_arch *arch, const uint8_t *code,
		       size_t len, uint64_t addr, uint64_t pc)
{
	static const struct xp_insn_effect none;
	const struct insn_arch_desc *desc;
	struct xp_insn_effect eff;
	unsigned int idx;
	size_t left;
	int ret;

	if (pc < addr || pc - addr > INSN_MAX_SCAN || len < pc - addr)
		return -EINVAL;
	if (pc == addr)
		return 1;
	ret = insn_open(d, arch, &desc, &idx);
	if (ret)
		return ret;
	left = (size_t)(pc - addr);
	while (addr < pc) {
		if (!cs_disasm_iter(d->handle[idx], &code, &left, &addr, d->insn[idx]))
			return -EINVAL;
		arch->insn_effect(d->insn[idx]->mnemonic, d->insn[idx]->op_str, &eff);
		if (memcmp(&eff, &none, sizeof(eff)))
			return 0; /* a trap too (XP_EFF_TRAP) */
	}
	return 1;
}
