/* SPDX-License-Identifier: MIT */
/*
 * The unwinder: a register snapshot plus target memory (the stack copy,
 * extended on demand through memread) in, code addresses out, innermost
 * first.  One native backend sits behind struct unwinder_ops and walks in
 * three modes:
 *
 *  - FP: frame records, validated at every step.  The innermost frame is
 *    fixed first with the CFI of the function holding the pc (GCC 12 leaves
 *    leaf functions frameless even with -fno-omit-frame-pointer, and any
 *    function can be caught in its prologue or epilogue; an FP walk from
 *    the registers would then skip the leaf's caller, as perf -g does).
 *  - DWARF: CFI (.eh_frame/.debug_frame) for every frame.
 *  - AUTO: per frame, the cached CFI row of its pc says whether the
 *    function keeps a frame record; if it does (or has no CFI at all) the
 *    record is followed, otherwise its CFI rules are.
 *
 * CFI rows come from libdw once per (module, pc) and are kept in a
 * direct-mapped per-unwinder cache, so a sample costs a few hash probes and
 * memory reads, no allocation and no syscall while the chain stays in the
 * stack copy.  A hostile stack ends the walk: every step checks alignment,
 * that the stack only grows toward its base, that memory is readable and
 * that return addresses land in executable mappings.  The depth limit
 * bounds everything else.
 */
#include "unwind.h"
#include "addrspace.h"
#include "arch.h"
#include "err.h"
#include "insn.h"
#include "memread.h"
#include "module.h"
#include "unwind_libunwind.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UW_ROW_CACHE	 1024 /* slots, a power of two */
#define UW_CFI_GAP	 16   /* bytes: how far past an FDE's end its last row may hold */
#define UW_CALL_CACHE	 1024 /* slots, a power of two */
#define UW_EXPR_STACK	 16
#define UNWIND_CHECK_MAX 1024 /* frames compared in check mode, at most */

/* Result of one step besides the caller's state. */
enum uw_step_end {
	UW_STEP_OK = 0,
	UW_STEP_END = 1, /* clean end of the stack (null fp, undefined return address) */
};

struct uw_call_slot {
	const struct module *mod; /* NULL: empty slot */
	uint64_t vaddr;		  /* a return address */
	bool after_call;
};

struct uw_row_slot {
	const struct module *mod; /* NULL: empty slot */
	uint64_t vaddr;
	int status;    /* 0, or -ENOENT/-ENOTSUP from module_cfi_row (cached too) */
	bool exact;    /* looked up for an exact pc (uw_row_from_code, uw_row_past_cfi) */
	bool past_cfi; /* the row is an FDE's last, carried past its end (uw_row_past_cfi) */
	struct cfi_row row;
};

/* The state of one frame during a walk. */
struct uw_frame {
	struct xp_regs regs;
	uint64_t pc; /* stripped */
	bool
	    exact; /* pc is exact (innermost, or interrupted by a signal): look up pc, not pc - 1 */
};

struct uw_walk {
	struct unwinder *u;
	const struct xp_arch *arch;
	struct memread *mem;
	struct addrspace *as;
	uint64_t stack_lo, stack_hi; /* the mapping holding sp; 0, 0 when unknown */
	uint64_t *sps;		     /* each frame's stack pointer, or NULL: not wanted */
	struct xp_map *last;	     /* the mapping found last: frames cluster in few modules */
	bool left_maps;		     /* an address (pc, return address) was in no mapping */
};

struct unwinder;

/*
 * The seam between callers and an unwinding backend (perf's
 * unwind_libunwind_ops): another backend (libunwind, libdwfl) fills one of
 * these and nothing outside this file changes.
 */
struct unwinder_ops {
	const char *name;
	int (*open)(struct unwinder *u);
	unsigned int (*unwind)(struct unwinder *u, struct uw_walk *w, const struct xp_regs *regs,
			       uint64_t *pcs, uint8_t *flags, unsigned int max);
	void (*close)(struct unwinder *u);
};

struct unwinder {
	const struct unwinder_ops *ops;
	enum unwind_mode mode; /* the native walk's: AUTO, FP or DWARF */
	bool check;	       /* UNWIND_CHECK: compare with libunwind */
	uint64_t *last_check;  /* the class counter the last comparison added to, or NULL */
	struct lu_unwinder *lu;
	unsigned int max_depth;
	struct unwind_stats stats;
	struct uw_row_slot *rows;   /* UW_ROW_CACHE slots */
	struct uw_call_slot *calls; /* UW_CALL_CACHE slots */
	struct insn_decoder *insn;
};

/* --- CFI rows ------------------------------------------------------------- */

static struct xp_map *uw_find(struct uw_walk *w, uint64_t addr)
{
	if (w->last && addr - w->last->start < w->last->end - w->last->start)
		return w->last;
	if (!w->as)
		return NULL;
	w->last = addrspace_find(w->as, addr);
	return w->last;
}

static uint64_t uw_hash(const struct module *mod, uint64_t vaddr, unsigned int slots)
{
	uint64_t h = (vaddr ^ ((uint64_t)(uintptr_t)mod >> 4)) * 0x9e3779b97f4a7c15ull;

	return h >> (64 - __builtin_ctz(slots));
}

/*
 * Without CFI: the frame state from the function's code (symbol table
 * start up to @pc, which for a caller frame is the return address).
 */
static int uw_row_from_code(struct uw_walk *w, struct module *mod, uint64_t vaddr, bool exact,
			    struct cfi_row *row)
{
	uint64_t start, size, pc = exact ? vaddr : vaddr + 1;
	const uint8_t *code;
	size_t len;

	if (module_symbol(mod, vaddr, NULL, &start, &size)) {
		/*
		 * A PLT stub has no symbol (nor, off x86-64, CFI) and no frame:
		 * interrupted in one, the frame is as at a function's entry.
		 */
		if (!exact || !module_is_plt(mod, vaddr))
			return -ENOENT;
		start = vaddr;
	}
	len = module_code(mod, start, &code);
	if (!len)
		return -ENOENT;
	return insn_frame_row(w->u->insn, w->arch, code, len, start, pc, row) ? -ENOENT : 0;
}

/*
 * An exact pc in no FDE nor symbol, at most UW_CFI_GAP bytes past the end
 * of an FDE whose code runs on to it: glibc's clone and clone3 end their
 * FDE before the system call (the child's frame is another), so the
 * parent stopped in the call, at its clone event, had neither CFI nor, in
 * a stripped libc, a symbol, and its stack ended there (as perf's and
 * libunwind's do).  The FDE's last row holds at @vaddr when every
 * instruction from that row's start on leaves the frame alone and goes
 * on to the next: straight code, as clone's and clone3's are.  Code
 * after an FDE that ends in a return, a jump, a call (to abort) or a
 * trap is another function's.  The caller found with it must follow a
 * call too (uw_step).
 */
static int uw_row_past_cfi(struct uw_walk *w, struct module *mod, uint64_t vaddr,
			   struct cfi_row *row)
{
	const struct xp_arch *arch = w->arch;
	uint64_t start, size;
	const uint8_t *code;
	unsigned int k;
	size_t len;
	int ret;

	if (!module_symbol(mod, vaddr, NULL, &start, &size))
		return -ENOENT; /* the prologue analysis had its chance */
	/* The row that covers vaddr - k ends at vaddr - k + 1 or later. */
	for (k = 1; k <= UW_CFI_GAP + 1 && k <= vaddr; k++) {
		ret = module_cfi_row(mod, vaddr - k, arch->dwarf.fp, arch->dwarf.sp, row);
		if (ret == -ENOENT)
			continue;
		if (ret || row->end > vaddr || row->signal || row->ra.kind == CFI_UNDEF)
			return -ENOENT;
		len = module_code(mod, row->start, &code);
		if (insn_frame_neutral(w->u->insn, arch, code, len, row->start, vaddr) != 1)
			return -ENOENT;
		row->start = vaddr;
		row->end = vaddr + 1;
		return 0;
	}
	return -ENOENT;
}

/*
 * The CFI row for the code at target address @addr (the pc, or a return
 * address - 1), and whether it was carried past its FDE's end
 * (uw_row_past_cfi).  0, -ENOENT when there is no module or no CFI for it
 * (nor, unless in DWARF mode, a frame state from the code), -ENOTSUP when
 * its rules are beyond us.
 */
static int uw_row(struct uw_walk *w, uint64_t addr, bool exact, const struct cfi_row **row,
		  bool *past_cfi)
{
	struct xp_map *m = uw_find(w, addr);
	struct uw_row_slot *s;
	uint64_t vaddr;

	if (!m || !m->mod || module_vaddr(m->mod, m, addr, &vaddr))
		return -ENOENT;
	s = &w->u->rows[uw_hash(m->mod, vaddr, UW_ROW_CACHE)];
	if (s->mod == m->mod && s->vaddr == vaddr && s->exact == exact) {
		w->u->stats.rows_cached++;
	} else {
		w->u->stats.rows_built++;
		s->mod = m->mod;
		s->vaddr = vaddr;
		s->exact = exact;
		s->status =
		    module_cfi_row(m->mod, vaddr, w->arch->dwarf.fp, w->arch->dwarf.sp, &s->row);
		s->past_cfi = false;
		if (s->status == -ENOENT && w->u->mode != UNWIND_DWARF)
			s->status = uw_row_from_code(w, m->mod, vaddr, exact, &s->row);
		if (s->status == -ENOENT && w->u->mode != UNWIND_DWARF && exact) {
			s->status = uw_row_past_cfi(w, m->mod, vaddr, &s->row);
			s->past_cfi = !s->status;
		}
	}
	*row = &s->row;
	*past_cfi = s->past_cfi;
	return s->status;
}

/*
 * Whether return address @ra follows a call instruction, from the module's
 * file (cached).  Code outside any ELF file (JIT) cannot be checked and
 * passes; so does code of an arch without a disassembler.
 */
static bool uw_is_after_call(struct uw_walk *w, uint64_t ra)
{
	struct xp_map *m = uw_find(w, ra);
	struct uw_call_slot *s;
	const uint8_t *code;
	uint64_t vaddr;
	size_t len;

	if (!m || !m->mod || module_vaddr(m->mod, m, ra, &vaddr))
		return true;
	s = &w->u->calls[uw_hash(m->mod, vaddr, UW_CALL_CACHE)];
	if (s->mod != m->mod || s->vaddr != vaddr) {
		len = module_code_before(m->mod, vaddr, 15, &code);
		s->mod = m->mod;
		s->vaddr = vaddr;
		s->after_call =
		    len && insn_call_ends_at(w->u->insn, w->arch, code, len, vaddr - len) != 0;
	}
	return s->after_call;
}

/* Whether a row is exactly the frame-record rule: then the record is the CFI. */
static bool uw_row_is_frame_record(const struct xp_arch *arch, const struct cfi_row *row)
{
	return row->cfa.kind == CFI_REG && row->cfa.reg == arch->dwarf.fp &&
	       row->cfa.off == arch->frame.cfa && row->ra.kind == CFI_OFFSET &&
	       row->ra.off == arch->frame.ra - arch->frame.cfa && row->fp.kind == CFI_OFFSET &&
	       row->fp.off == arch->frame.prev_fp - arch->frame.cfa;
}

static int uw_read(struct uw_walk *w, uint64_t addr, unsigned int bytes, uint64_t *out)
{
	return memread_word(w->mem, addr, bytes, out);
}

static int uw_reg(const struct xp_regs *regs, unsigned int reg, uint64_t *out)
{
	if (!xp_regs_has(regs, reg))
		return -ENOENT;
	*out = xp_regs_get(regs, reg);
	return 0;
}

/* The evaluation stack of a DWARF expression. */
struct uw_stack {
	uint64_t v[UW_EXPR_STACK];
	unsigned int n; /* values on it; the top is v[n - 1] */
};

/*
 * The ops that push one value: CFI_OP_CFA (@cfa), CONST, BREG (a register
 * of @regs plus n), DUP and OVER (copies of the top and the one below).
 * -EINVAL when the stack is full, DUP or OVER has nothing to copy or
 * there is no CFA; -ENOENT when the register is unknown.
 */
static int uw_eval_push(const struct cfi_op *op, const struct xp_regs *regs, const uint64_t *cfa,
			struct uw_stack *s)
{
	uint64_t v;

	if (s->n == UW_EXPR_STACK)
		return -EINVAL;
	switch (op->kind) {
	case CFI_OP_CFA:
		if (!cfa)
			return -EINVAL;
		v = *cfa;
		break;
	case CFI_OP_CONST:
		v = (uint64_t)op->n;
		break;
	case CFI_OP_BREG:
		if (uw_reg(regs, op->reg, &v))
			return -ENOENT;
		v += (uint64_t)op->n;
		break;
	case CFI_OP_DUP:
		if (s->n < 1)
			return -EINVAL;
		v = s->v[s->n - 1];
		break;
	default: /* CFI_OP_OVER */
		if (s->n < 2)
			return -EINVAL;
		v = s->v[s->n - 2];
		break;
	}
	s->v[s->n++] = v;
	return 0;
}

/*
 * The ops on the top value alone: CFI_OP_PLUS_CONST, DEREF (a read of
 * target memory: -EFAULT when it fails), NEG and NOT replace it, DROP
 * removes it.  -EINVAL on an empty stack.
 */
static int uw_eval_unary(struct uw_walk *w, const struct cfi_op *op, struct uw_stack *s)
{
	uint64_t *top, a;

	if (s->n < 1)
		return -EINVAL;
	top = &s->v[s->n - 1];
	switch (op->kind) {
	case CFI_OP_PLUS_CONST:
		*top += (uint64_t)op->n;
		break;
	case CFI_OP_DEREF:
		if (uw_read(w, *top, (unsigned int)op->n < 8 ? 4 : 8, &a))
			return -EFAULT;
		if (op->n < 4)
			a &= op->n == 1 ? 0xff : 0xffff;
		*top = a;
		break;
	case CFI_OP_NEG:
		*top = 0 - *top;
		break;
	case CFI_OP_NOT:
		*top = ~*top;
		break;
	default: /* CFI_OP_DROP */
		s->n--;
		break;
	}
	return 0;
}

/*
 * @a @kind @b for the binary ops, arithmetic, logic and comparisons
 * (signed, as DWARF has them), into *@out.  -EINVAL for any other op.
 */
static int uw_eval_binary(unsigned int kind, uint64_t a, uint64_t b, uint64_t *out)
{
	switch (kind) {
	case CFI_OP_PLUS:
		*out = a + b;
		return 0;
	case CFI_OP_MINUS:
		*out = a - b;
		return 0;
	case CFI_OP_MUL:
		*out = a * b;
		return 0;
	case CFI_OP_AND:
		*out = a & b;
		return 0;
	case CFI_OP_OR:
		*out = a | b;
		return 0;
	case CFI_OP_XOR:
		*out = a ^ b;
		return 0;
	case CFI_OP_SHL:
		*out = b < 64 ? a << b : 0;
		return 0;
	case CFI_OP_SHR:
		*out = b < 64 ? a >> b : 0;
		return 0;
	case CFI_OP_SHRA:
		*out = (uint64_t)((int64_t)a >> (b < 63 ? b : 63));
		return 0;
	case CFI_OP_EQ:
		*out = (int64_t)a == (int64_t)b;
		return 0;
	case CFI_OP_NE:
		*out = (int64_t)a != (int64_t)b;
		return 0;
	case CFI_OP_LT:
		*out = (int64_t)a < (int64_t)b;
		return 0;
	case CFI_OP_LE:
		*out = (int64_t)a <= (int64_t)b;
		return 0;
	case CFI_OP_GT:
		*out = (int64_t)a > (int64_t)b;
		return 0;
	case CFI_OP_GE:
		*out = (int64_t)a >= (int64_t)b;
		return 0;
	default:
		return -EINVAL;
	}
}

/*
 * The ops on the two top values: CFI_OP_SWAP exchanges them, a binary op
 * replaces them by its result.  -EINVAL with fewer than two values, or
 * for an op that is none of these.
 */
static int uw_eval_pair(const struct cfi_op *op, struct uw_stack *s)
{
	uint64_t a, b;

	if (s->n < 2)
		return -EINVAL;
	a = s->v[s->n - 2];
	b = s->v[s->n - 1];
	if (op->kind == CFI_OP_SWAP) {
		s->v[s->n - 2] = b;
		s->v[s->n - 1] = a;
		return 0;
	}
	if (uw_eval_binary(op->kind, a, b, &a))
		return -EINVAL;
	s->n--;
	s->v[s->n - 1] = a;
	return 0;
}

/* Evaluate ops[@first .. @first + @len) of @row; @cfa is pushed by CFI_OP_CFA. */
static int uw_eval(struct uw_walk *w, const struct cfi_row *row, unsigned int first,
		   unsigned int len, const struct xp_regs *regs, const uint64_t *cfa, uint64_t *out)
{
	struct uw_stack s;
	unsigned int i;
	int ret;

	if (first + len > row->nr_ops)
		return -EINVAL;
	s.n = 0;
	for (i = first; i < first + len; i++) {
		const struct cfi_op *op = &row->ops[i];

		switch (op->kind) {
		case CFI_OP_CFA:
		case CFI_OP_CONST:
		case CFI_OP_BREG:
		case CFI_OP_DUP:
		case CFI_OP_OVER:
			ret = uw_eval_push(op, regs, cfa, &s);
			break;
		case CFI_OP_PLUS_CONST:
		case CFI_OP_DEREF:
		case CFI_OP_DROP:
		case CFI_OP_NEG:
		case CFI_OP_NOT:
			ret = uw_eval_unary(w, op, &s);
			break;
		default:
			ret = uw_eval_pair(op, &s);
			break;
		}
		if (ret)
			return ret;
	}
	if (!s.n)
		return -EINVAL;
	*out = s.v[s.n - 1];
	return 0;
}

/*
 * The caller's value of a register under @rule.  -ENOENT when the rule
 * leaves it unknown (undefined, or computed from an unknown register).
 */
static int uw_apply_rule(struct uw_walk *w, const struct cfi_row *row, const struct cfi_rule *rule,
			 unsigned int reg, const struct xp_regs *regs, uint64_t cfa, uint64_t *out)
{
	uint64_t addr;
	int ret;

	switch (rule->kind) {
	case CFI_SAME:
		return uw_reg(regs, reg, out);
	case CFI_OFFSET:
		return uw_read(w, cfa + (uint64_t)rule->off, w->arch->addr_bytes, out) ? -EFAULT
										       : 0;
	case CFI_VAL_OFFSET:
		*out = cfa + (uint64_t)rule->off;
		return 0;
	case CFI_REG:
		return uw_reg(regs, rule->reg, out);
	case CFI_EXPR:
		ret = uw_eval(w, row, rule->expr, rule->expr_len, regs, &cfa, &addr);
		if (ret)
			return ret;
		return uw_read(w, addr, w->arch->addr_bytes, out) ? -EFAULT : 0;
	case CFI_VAL_EXPR:
		return uw_eval(w, row, rule->expr, rule->expr_len, regs, &cfa, out);
	default:
		return -ENOENT;
	}
}

/* --- validation ------------------------------------------------------------ */

static void uw_set_stack(struct uw_walk *w, uint64_t sp)
{
	const struct xp_map *m = w->as ? addrspace_find(w->as, sp) : NULL;

	w->stack_lo = m ? m->start : 0;
	w->stack_hi = m ? m->end : 0;
}

static bool uw_is_in_stack(const struct uw_walk *w, uint64_t addr)
{
	return !w->stack_hi || (addr >= w->stack_lo && addr < w->stack_hi);
}

static bool uw_is_code(struct uw_walk *w, uint64_t pc)
{
	const struct xp_map *m;

	if (!w->as)
		return true;
	m = uw_find(w, pc);
	if (!m)
		w->left_maps = true;
	return m && (m->prot & XP_PROT_EXEC);
}

/* Start the caller's state: only pc, sp, fp and the return-address register survive. */
static void uw_caller_init(const struct uw_walk *w, struct uw_frame *caller, uint64_t pc,
			   uint64_t sp)
{
	const struct xp_arch *arch = w->arch;

	caller->regs.valid = 0;
	caller->regs.nr = 0;
	caller->exact = false;
	caller->pc = pc;
	xp_regs_set(&caller->regs, arch->dwarf.pc, pc);
	xp_regs_set(&caller->regs, arch->dwarf.sp, sp);
}

/* --- steps ------------------------------------------------------------------ */

/*
 * Follow the frame record at the frame pointer of @f.  The record must lie
 * in the stack at or above sp, aligned; the return address must be code.
 */
static int uw_step_fp(struct uw_walk *w, const struct uw_frame *f, struct uw_frame *caller)
{
	const struct xp_arch *arch = w->arch;
	uint64_t fp, sp, prev_fp, ra, rec;
	int lo_off = arch->frame.prev_fp < arch->frame.ra ? arch->frame.prev_fp : arch->frame.ra;

	if (uw_reg(&f->regs, arch->dwarf.fp, &fp) || uw_reg(&f->regs, arch->dwarf.sp, &sp))
		return -EINVAL;
	if (!fp)
		return UW_STEP_END;
	rec = fp + (uint64_t)(int64_t)lo_off;
	if (fp % arch->frame.align || rec < sp || !uw_is_in_stack(w, rec) ||
	    !uw_is_in_stack(w, fp + (uint64_t)(int64_t)arch->frame.cfa - 1))
		return -EINVAL;
	if (uw_read(w, fp + (uint64_t)(int64_t)arch->frame.prev_fp, arch->addr_bytes, &prev_fp) ||
	    uw_read(w, fp + (uint64_t)(int64_t)arch->frame.ra, arch->addr_bytes, &ra))
		return -EFAULT;
	ra = arch->strip_pc(&f->regs, ra);
	if (!ra)
		return UW_STEP_END;
	if (!uw_is_code(w, ra))
		return -EINVAL;
	uw_caller_init(w, caller, ra, fp + (uint64_t)(int64_t)arch->frame.cfa);
	xp_regs_set(&caller->regs, arch->dwarf.fp, prev_fp);
	if (arch->dwarf.ra >= 0)
		xp_regs_set(&caller->regs, (unsigned int)arch->dwarf.ra, ra);
	caller->regs.pac_mask = f->regs.pac_mask;
	return UW_STEP_OK;
}

/* Apply the CFI row @row to @f. */
static int uw_step_row(struct uw_walk *w, const struct uw_frame *f, const struct cfi_row *row,
		       struct uw_frame *caller)
{
	const struct xp_arch *arch = w->arch;
	uint64_t cfa, ra, fp, sp, old_sp;
	bool have_fp, sp_is_cfa;
	int ret;

	if (row->cfa.kind == CFI_REG) {
		if (uw_reg(&f->regs, row->cfa.reg, &cfa))
			return -EINVAL;
		cfa += (uint64_t)row->cfa.off;
	} else if (uw_eval(w, row, row->cfa.expr, row->cfa.expr_len, &f->regs, NULL, &cfa)) {
		return -EINVAL;
	}
	if (row->ra.kind == CFI_UNDEF)
		return UW_STEP_END; /* the outermost frame (_start, clone) says so */
	/* "Same value" for the pc itself would loop on one frame. */
	if (row->ra_reg == arch->dwarf.pc && row->ra.kind == CFI_SAME)
		return -EINVAL;
	ret = uw_apply_rule(w, row, &row->ra, row->ra_reg, &f->regs, cfa, &ra);
	if (ret)
		return -EINVAL;
	sp_is_cfa = uw_apply_rule(w, row, &row->sp, arch->dwarf.sp, &f->regs, cfa, &sp) ||
		    row->sp.kind == CFI_SAME;
	if (sp_is_cfa)
		sp = cfa; /* every psABI defines the CFA as the caller's sp */
	/*
	 * A return address saved at or above the CFA lies in a push the CFA
	 * leaves out, so the caller's sp is past it: glibc's aarch64
	 * _dl_runtime_resolve takes the CFA as its sp at entry, below the
	 * x16/x30 pair that PLT0 pushed (x30 at CFA+8), and the caller, then
	 * walked 16 bytes low, read a stale return address of its own (one
	 * lazily bound call in 800 samples gave tgt_seconds_arg twice, then
	 * an unnamed frame).  Not past a signal trampoline, whose CFA is its
	 * saved context.
	 */
	if (sp_is_cfa && !row->signal && row->ra.kind == CFI_OFFSET && row->ra.off >= 0)
		sp = (cfa + (uint64_t)row->ra.off + arch->addr_bytes + 15) & ~(uint64_t)15;
	have_fp = !uw_apply_rule(w, row, &row->fp, arch->dwarf.fp, &f->regs, cfa, &fp);
	ra = arch->strip_pc(&f->regs, ra);
	if (!ra)
		return UW_STEP_END;
	if (!uw_is_code(w, ra))
		return -EINVAL;
	/*
	 * The stack grows down: a caller's frame lies above its callee's, and
	 * strictly so once the callee has made a call (only an innermost leaf
	 * may have no frame at all).  That also rules out loops.  A signal
	 * trampoline's caller may be on another stack (sigaltstack).
	 */
	old_sp = xp_regs_get(&f->regs, arch->dwarf.sp);
	if (!row->signal &&
	    (sp < old_sp || (sp == old_sp && !f->exact) || !uw_is_in_stack(w, sp - 1)))
		return -EINVAL;
	uw_caller_init(w, caller, ra, sp);
	if (have_fp)
		xp_regs_set(&caller->regs, arch->dwarf.fp, fp);
	if (row->ra_reg != arch->dwarf.pc)
		xp_regs_set(&caller->regs, row->ra_reg, ra);
	caller->regs.pac_mask = f->regs.pac_mask;
	/* Past a signal trampoline the caller was interrupted, not calling. */
	caller->exact = row->signal;
	return UW_STEP_OK;
}

/*
 * One step from @f to its caller, as the mode says.  0 (with *@cfi set when
 * CFI rules were applied), UW_STEP_END, or -errno for a bad frame.
 */
static int uw_step(struct uw_walk *w, const struct uw_frame *f, struct uw_frame *caller, bool *cfi)
{
	enum unwind_mode mode = w->u->mode;
	const struct cfi_row *row;
	uint64_t lookup = xp_lookup_pc(f->pc, f->exact ? XP_FRAME_EXACT : 0);
	bool past_cfi;
	int ret;

	*cfi = false;
	if (mode == UNWIND_FP && !f->exact)
		return uw_step_fp(w, f, caller);
	ret = uw_row(w, lookup, f->exact, &row, &past_cfi);
	if (!ret) {
		/* The record is what the CFI says: follow it without evaluating rules. */
		if (mode == UNWIND_AUTO && !f->exact && uw_row_is_frame_record(w->arch, row)) {
			ret = uw_step_fp(w, f, caller);
			if (ret >= 0)
				return ret;
		}
		ret = uw_step_row(w, f, row, caller);
		if (ret == UW_STEP_OK && past_cfi && !uw_is_after_call(w, caller->pc))
			ret = -EINVAL;
		if (ret >= 0 || mode == UNWIND_DWARF) {
			*cfi = ret >= 0;
			return ret;
		}
	} else if (mode == UNWIND_DWARF) {
		return -ENOENT;
	}
	/* No usable rule: a frame record must prove itself. */
	ret = uw_step_fp(w, f, caller);
	if (ret == UW_STEP_OK && mode == UNWIND_AUTO && !uw_is_after_call(w, caller->pc))
		ret = -EINVAL;
	return ret;
}

/* --- the native backend ------------------------------------------------------ */

static int native_open(struct unwinder *u)
{
	u->rows = xp_calloc(UW_ROW_CACHE, sizeof(*u->rows));
	u->calls = xp_calloc(UW_CALL_CACHE, sizeof(*u->calls));
	u->insn = insn_decoder_new();
	return 0;
}

static void native_close(struct unwinder *u)
{
	insn_decoder_free(u->insn);
	free(u->calls);
	free(u->rows);
	u->rows = NULL;
	u->calls = NULL;
	u->insn = NULL;
}

static unsigned int native_unwind(struct unwinder *u, struct uw_walk *w, const struct xp_regs *regs,
				  uint64_t *pcs, uint8_t *flags, unsigned int max)
{
	struct uw_frame frames[2], *f = &frames[0], *caller = &frames[1], *t;
	const struct xp_arch *arch = w->arch;
	unsigned int n = 0;
	bool cfi;
	int ret;

	if (!xp_regs_has(regs, arch->dwarf.pc))
		return 0;
	f->regs = *regs;
	f->pc = arch->strip_pc(regs, xp_regs_get(regs, arch->dwarf.pc));
	f->exact = true;
	pcs[n] = f->pc;
	if (w->sps)
		w->sps[n] = xp_regs_get(regs, arch->dwarf.sp);
	flags[n++] = XP_FRAME_EXACT;
	if (!xp_regs_has(regs, arch->dwarf.sp))
		return n;
	uw_set_stack(w, xp_regs_get(regs, arch->dwarf.sp));
	for (;;) {
		ret = uw_step(w, f, caller, &cfi);
		if (ret) {
			if (ret < 0)
				u->stats.bad_frames++;
			break;
		}
		if (n == max) {
			pcs[n - 1] = 0;
			flags[n - 1] = XP_FRAME_TRUNCATED;
			u->stats.truncated++;
			break;
		}
		if (cfi) {
			flags[n - 1] |= XP_FRAME_CFI;
			u->stats.frames_cfi++;
		} else {
			u->stats.frames_fp++;
		}
		if (caller->exact)
			uw_set_stack(w, xp_regs_get(&caller->regs, arch->dwarf.sp));
		pcs[n] = caller->pc;
		if (w->sps)
			w->sps[n] = xp_regs_get(&caller->regs, arch->dwarf.sp);
		flags[n++] = caller->exact ? XP_FRAME_EXACT : 0;
		t = f;
		f = caller;
		caller = t;
	}
	return n;
}

/* --- the libunwind backend (unwind_libunwind.c) ----------------------------- */

static int lu_open(struct unwinder *u)
{
	u->lu = lu_new();
	return 0;
}

static void lu_close(struct unwinder *u)
{
	lu_free(u->lu);
	u->lu = NULL;
}

static pid_t walk_pid(const struct uw_walk *w)
{
	return w->as ? w->as->pid : w->mem->pid;
}

/* libunwind over the walk's copy; the vdso's range from the maps. */
static unsigned int lu_walk_stack(struct unwinder *u, struct uw_walk *w, const struct xp_regs *regs,
				  uint64_t *pcs, uint8_t *flags, unsigned int max, uint64_t *bad)
{
	uint64_t vs = 0, ve = 0;
	size_t i;

	for (i = 0; w->as && i < w->as->nr; i++)
		if (!strcmp(w->as->maps[i].path, "[vdso]")) {
			vs = w->as->maps[i].start;
			ve = w->as->maps[i].end;
			break;
		}
	return lu_unwind(u->lu, w->arch, regs, w->mem, walk_pid(w), vs, ve, pcs, flags, w->sps, max,
			 bad);
}

static unsigned int lu_backend_unwind(struct unwinder *u, struct uw_walk *w,
				      const struct xp_regs *regs, uint64_t *pcs, uint8_t *flags,
				      unsigned int max)
{
	unsigned int n = lu_walk_stack(u, w, regs, pcs, flags, max, &u->stats.bad_frames), i;

	/*
	 * As the native walk does: a return address outside executable memory
	 * ends the walk (libunwind may guess past a function it has no tables
	 * for), and one in no mapping tells the caller its maps may be stale.
	 */
	for (i = 1; i < n && !(flags[i] & XP_FRAME_TRUNCATED); i++) {
		if (!uw_is_code(w, xp_lookup_pc(pcs[i], flags[i]))) {
			u->stats.bad_frames++;
			n = i;
		}
	}
	if (n && flags[n - 1] == XP_FRAME_TRUNCATED)
		u->stats.truncated++;
	u->stats.frames_cfi += n ? n - 1 : 0;
	return n;
}

/* Frames of a walk less a depth-limit marker; *@cut tells whether there was one. */
static unsigned int walked(const uint8_t *flags, unsigned int n, bool *cut)
{
	*cut = n && flags[n - 1] == XP_FRAME_TRUNCATED;
	return *cut ? n - 1 : n;
}

static void debug_stack(const char *who, const uint64_t *pcs, unsigned int n)
{
	char buf[512];
	size_t len = 0;
	unsigned int i;

	for (i = 0; i < n && i < 16 && len < sizeof(buf) - 20; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, " %#llx",
					(unsigned long long)pcs[i]);
	xp_debug(2, "  %s:%s%s", who, buf, i < n ? " ..." : "");
}

/*
 * UNWIND_CHECK: walk the stack of @w again with libunwind and count how
 * its answer differs from the native one in @pcs[0..@n).
 */
static void check_with_libunwind(struct unwinder *u, struct uw_walk *w, const struct xp_regs *regs,
				 const uint64_t *pcs, const uint8_t *flags, unsigned int n,
				 unsigned int max)
{
	uint64_t lpcs[UNWIND_CHECK_MAX], ignored = 0;
	uint8_t lflags[UNWIND_CHECK_MAX];
	unsigned int ln, i, a, b;
	bool acut, bcut;

	if (max > UNWIND_CHECK_MAX)
		max = UNWIND_CHECK_MAX;
	w->sps = NULL; /* the native walk's are kept */
	ln = lu_walk_stack(u, w, regs, lpcs, lflags, max, &ignored);
	a = walked(flags, n, &acut);
	b = walked(lflags, ln, &bcut);
	u->stats.check_stacks++;
	u->last_check = NULL;
	for (i = 0; i < a && i < b && pcs[i] == lpcs[i]; i++)
		;
	if (i < a && i < b)
		u->last_check = &u->stats.check_pc;
	else if (i < a && !bcut)
		u->last_check = &u->stats.check_lu_shorter;
	else if (i < b && !acut)
		u->last_check = &u->stats.check_native_shorter;
	else
		return;
	(*u->last_check)++;
	u->stats.check_differ++;
	if (xp_verbosity >= 2) {
		xp_debug(2,
			 "unwind check: pid %d: first difference at frame %u of %u (native) / %u "
			 "(libunwind)",
			 (int)walk_pid(w), i, a, b);
		debug_stack("native", pcs, a);
		debug_stack("libunwind", lpcs, b);
	}
}

/* --- API ------------------------------------------------------------------- */

enum uw_backend {
	UW_NATIVE,    /* UNWIND_AUTO, UNWIND_FP, UNWIND_DWARF, UNWIND_CHECK */
	UW_LIBUNWIND, /* UNWIND_LIBUNWIND */
};

/* The backends, in the order of enum uw_backend. */
static const struct unwinder_ops uw_backends[] = {
    {.name = "native", .open = native_open, .unwind = native_unwind, .close = native_close},
    {.name = "libunwind", .open = lu_open, .unwind = lu_backend_unwind, .close = lu_close},
};

struct unwinder *unwinder_new(enum unwind_mode mode, unsigned int max_depth)
{
	struct unwinder *u = xp_calloc(1, sizeof(*u));

	u->ops = &uw_backends[mode == UNWIND_LIBUNWIND ? UW_LIBUNWIND : UW_NATIVE];
	u->check = mode == UNWIND_CHECK;
	u->mode = mode == UNWIND_LIBUNWIND || mode == UNWIND_CHECK ? UNWIND_AUTO : mode;
	if (u->check)
		u->lu = lu_new();
	u->max_depth = max_depth ? max_depth : 1;
	if (u->ops->open(u))
		XP_BUG("unwinder backend failed to open");
	return u;
}

void unwinder_free(struct unwinder *u)
{
	if (!u)
		return;
	u->ops->close(u);
	lu_free(u->lu);
	free(u);
}

unsigned int unwind_stack(struct unwinder *u, const struct xp_arch *arch,
			  const struct xp_regs *regs, struct memread *mem, struct addrspace *as,
			  uint64_t *pcs, uint8_t *flags, unsigned int max, bool *left_maps)
{
	return unwind_stack_sp(u, arch, regs, mem, as, pcs, flags, NULL, max, left_maps);
}

unsigned int unwind_stack_sp(struct unwinder *u, const struct xp_arch *arch,
			     const struct xp_regs *regs, struct memread *mem, struct addrspace *as,
			     uint64_t *pcs, uint8_t *flags, uint64_t *sps, unsigned int max,
			     bool *left_maps)
{
	struct uw_walk w = {.u = u, .arch = arch, .mem = mem, .as = as, .sps = sps};
	unsigned int n;

	if (left_maps)
		*left_maps = false;
	if (max > u->max_depth)
		max = u->max_depth;
	if (!max || !arch || !regs)
		return 0;
	n = u->ops->unwind(u, &w, regs, pcs, flags, max);
	if (left_maps)
		*left_maps = w.left_maps;
	if (u->check)
		check_with_libunwind(u, &w, regs, pcs, flags, n, max);
	u->stats.stacks++;
	u->stats.frames += n;
	return n;
}

void unwind_check_forget(struct unwinder *u)
{
	if (!u->check || !u->stats.check_stacks)
		return;
	u->stats.check_stacks--;
	if (u->last_check) {
		(*u->last_check)--;
		u->stats.check_differ--;
		u->last_check = NULL;
	}
}

const struct unwind_stats *unwinder_stats(const struct unwinder *u)
{
	return &u->stats;
}
