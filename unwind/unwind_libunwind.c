/* SPDX-License-Identifier: MIT */
/*
 * libunwind as an unwinding backend (unwind_libunwind.h).  The accessors
 * are ours for memory (memread over the stack copy) and registers (the
 * snapshot); libunwind-ptrace's _UPT_find_proc_info finds the unwind
 * tables, one UPT handle per process.  libunwind hands every accessor the
 * argument given to unw_init_remote, which must be the UPT handle for
 * _UPT_find_proc_info; our own state is found through a thread-local
 * pointer set for the length of one walk.
 *
 * The vdso is no file, so libunwind-ptrace finds no tables for it; its
 * .eh_frame_hdr is in the process's memory, and libunwind searches it there
 * as a remote table (as it does the tables UPT finds in files).
 *
 * libunwind's numbers of the general registers equal their DWARF numbers
 * on x86-64 (rax..r15 0-15), aarch64 (x0-x30, sp 31) and riscv64 (x0-x31);
 * its pc is 16, 32 and 64 (after f0-f31) where xprof's snapshot keeps it
 * at 16, 32 and 32.
 */
#include "unwind_libunwind.h"
#include "arch.h"
#include "dataformat.h"
#include "err.h"
#include "memread.h"

#include <libunwind-ptrace.h>
#include <stdlib.h>
#include <string.h>

#define LU_UPT_SLOTS 8 /* processes whose UPT handle (maps, the last ELF image) is kept */

struct lu_upt {
	pid_t pid; /* 0: empty */
	void *upt;
	uint64_t used; /* for eviction: the least recently used goes */
};

struct lu_unwinder {
	unw_addr_space_t as;
	struct lu_upt upts[LU_UPT_SLOTS];
	uint64_t clock;
	pid_t last_pid; /* libunwind's caches are per address space: flushed on a change */
};

/* The walk in progress on this thread. */
struct lu_walk {
	const struct xp_arch *arch;
	const struct xp_regs *regs;
	struct memread *mem;
	void *upt;
	uint64_t vdso_start, vdso_end;
};

static __thread struct lu_walk *lu_cur;

/* An argument an accessor does not use: libunwind fixes their signatures. */
#define LU_UNUSED __attribute__((unused))

/* libunwind's own search of a binary-search table (not in its headers). */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip,
					      unw_dyn_info_t *di, unw_proc_info_t *pi,
					      int need_unwind_info, void *arg);

static int mem_read(uint64_t addr, void *buf, size_t len)
{
	return memread_read(lu_cur->mem, addr, buf, len);
}

/*
 * The unwind table of the vdso at [@start, @end) of the process: its ELF
 * header, the PT_GNU_EH_FRAME segment, and the .eh_frame_hdr there (the
 * binary-search table GNU ld and the kernel's vdso build write: udata4
 * count, datarel sdata4 entries).  0, or -1.
 */
static int vdso_table(uint64_t start, uint64_t end, unw_dyn_info_t *di)
{
	uint8_t eh[64], hdr[12];
	uint64_t phoff, bias = UINT64_MAX, frame = 0;
	uint16_t phentsize, phnum, i;
	uint32_t count;

	if (mem_read(start, eh, sizeof(eh)) || memcmp(eh, "\177ELF", 4) || eh[4] != 2)
		return -1;
	memcpy(&phoff, eh + 32, 8);
	memcpy(&phentsize, eh + 54, 2);
	memcpy(&phnum, eh + 56, 2);
	if (phentsize < 56 || phnum > 64 || phoff > end - start)
		return -1;
	for (i = 0; i < phnum; i++) {
		uint8_t ph[56];
		uint32_t type;
		uint64_t vaddr;

		if (mem_read(start + phoff + (uint64_t)i * phentsize, ph, sizeof(ph)))
			return -1;
		memcpy(&type, ph, 4);
		memcpy(&vaddr, ph + 16, 8);
		if (type == 1 /* PT_LOAD */ && bias == UINT64_MAX)
			bias = start - (vaddr & ~0xfffull);
		else if (type == 0x6474e550 /* PT_GNU_EH_FRAME */)
			frame = vaddr;
	}
	if (bias == UINT64_MAX || !frame || mem_read(bias + frame, hdr, sizeof(hdr)))
		return -1;
	/* version 1, eh_frame_ptr sdata4 (any base), count udata4, table datarel|sdata4 */
	if (hdr[0] != 1 || (hdr[1] & 0x0f) != 0x0b || hdr[2] != 0x03 || hdr[3] != 0x3b)
		return -1;
	memcpy(&count, hdr + 8, 4);
	memset(di, 0, sizeof(*di));
	di->start_ip = start;
	di->end_ip = end;
	di->format = UNW_INFO_FORMAT_REMOTE_TABLE;
	di->u.rti.segbase = bias + frame;
	di->u.rti.table_data = bias + frame + sizeof(hdr);
	di->u.rti.table_len = (unw_word_t)count * 8 / sizeof(unw_word_t);
	return 0;
}

static int lu_find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
			     int need_unwind_info, void *arg)
{
	unw_dyn_info_t di;

	if (lu_cur && ip >= lu_cur->vdso_start && ip < lu_cur->vdso_end) {
		if (vdso_table(lu_cur->vdso_start, lu_cur->vdso_end, &di))
			return -UNW_ENOINFO;
		return UNW_OBJ(dwarf_search_unwind_table)(as, ip, &di, pi, need_unwind_info, arg);
	}
	return _UPT_find_proc_info(as, ip, pi, need_unwind_info, arg);
}

static void lu_put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
	_UPT_put_unwind_info(as, pi, arg);
}

static int lu_access_mem(unw_addr_space_t as LU_UNUSED, unw_word_t addr, unw_word_t *val, int write,
			 void *arg LU_UNUSED)
{
	uint64_t v;

	if (write || !lu_cur)
		return -UNW_EINVAL;
	if (memread_word(lu_cur->mem, (uint64_t)addr, sizeof(*val), &v))
		return -UNW_EINVAL;
	*val = (unw_word_t)v;
	return 0;
}

static int lu_access_reg(unw_addr_space_t as LU_UNUSED, unw_regnum_t reg, unw_word_t *val,
			 int write, void *arg LU_UNUSED)
{
	unsigned int dwarf;

	if (write || !lu_cur || reg < 0)
		return -UNW_EBADREG;
	if (reg == lu_cur->arch->unw_pc_reg)
		dwarf = lu_cur->arch->dwarf.pc;
	else if (reg < 32)
		dwarf = (unsigned int)reg;
	else
		return -UNW_EBADREG;
	if (!xp_regs_has(lu_cur->regs, dwarf))
		return -UNW_EBADREG;
	*val = (unw_word_t)xp_regs_get(lu_cur->regs, dwarf);
	return 0;
}

/*
 * The accessors xprof has nothing for: no dynamic unwind info, no
 * floating-point registers, no resuming and no procedure names (xprof
 * calls neither unw_resume nor unw_get_proc_name).
 */
static int lu_get_dyn_info_list_addr(unw_addr_space_t as LU_UNUSED, unw_word_t *addr LU_UNUSED,
				     void *arg LU_UNUSED)
{
	return -UNW_ENOINFO;
}

static int lu_access_fpreg(unw_addr_space_t as LU_UNUSED, unw_regnum_t reg LU_UNUSED,
			   unw_fpreg_t *val LU_UNUSED, int write LU_UNUSED, void *arg LU_UNUSED)
{
	return -UNW_EBADREG;
}

static int lu_resume(unw_addr_space_t as LU_UNUSED, unw_cursor_t *c LU_UNUSED, void *arg LU_UNUSED)
{
	return -UNW_EINVAL;
}

static int lu_get_proc_name(unw_addr_space_t as LU_UNUSED, unw_word_t addr LU_UNUSED,
			    char *buf LU_UNUSED, size_t len LU_UNUSED, unw_word_t *off LU_UNUSED,
			    void *arg LU_UNUSED)
{
	return -UNW_ENOINFO;
}

static unw_accessors_t lu_accessors = {
    .find_proc_info = lu_find_proc_info,
    .put_unwind_info = lu_put_unwind_info,
    .get_dyn_info_list_addr = lu_get_dyn_info_list_addr,
    .access_mem = lu_access_mem,
    .access_reg = lu_access_reg,
    .access_fpreg = lu_access_fpreg,
    .resume = lu_resume,
    .get_proc_name = lu_get_proc_name,
};

struct lu_unwinder *lu_new(void)
{
	struct lu_unwinder *lu = xp_calloc(1, sizeof(*lu));

	lu->as = unw_create_addr_space(&lu_accessors, 0);
	if (lu->as)
		unw_set_caching_policy(lu->as, UNW_CACHE_GLOBAL);
	return lu;
}

void lu_free(struct lu_unwinder *lu)
{
	size_t i;

	if (!lu)
		return;
	for (i = 0; i < LU_UPT_SLOTS; i++)
		if (lu->upts[i].upt)
			_UPT_destroy(lu->upts[i].upt);
	if (lu->as)
		unw_destroy_addr_space(lu->as);
	free(lu);
}

/* The UPT handle of @pid, created on first use (NULL if it cannot be). */
static void *upt_of(struct lu_unwinder *lu, pid_t pid)
{
	struct lu_upt *slot = &lu->upts[0];
	size_t i;

	lu->clock++;
	for (i = 0; i < LU_UPT_SLOTS; i++) {
		if (lu->upts[i].pid == pid && lu->upts[i].upt) {
			lu->upts[i].used = lu->clock;
			return lu->upts[i].upt;
		}
		if (lu->upts[i].used < slot->used)
			slot = &lu->upts[i];
	}
	if (slot->upt)
		_UPT_destroy(slot->upt);
	slot->pid = pid;
	slot->upt = _UPT_create(pid);
	slot->used = lu->clock;
	return slot->upt;
}

unsigned int lu_unwind(struct lu_unwinder *lu, const struct xp_arch *arch,
		       const struct xp_regs *regs, struct memread *mem, pid_t pid,
		       uint64_t vdso_start, uint64_t vdso_end, uint64_t *pcs, uint8_t *flags,
		       uint64_t *sps, unsigned int max, uint64_t *bad)
{
	struct lu_walk walk = {arch, regs, mem, NULL, vdso_start, vdso_end};
	unw_cursor_t c;
	unw_word_t ip, sp;
	unsigned int n = 0;
	bool next_exact;
	int ret;

	if (!max || !xp_regs_has(regs, arch->dwarf.pc))
		return 0;
	pcs[n] = arch->strip_pc(regs, xp_regs_get(regs, arch->dwarf.pc));
	if (sps)
		sps[n] = xp_regs_get(regs, arch->dwarf.sp);
	flags[n++] = XP_FRAME_EXACT;
	if (!lu->as || pid <= 0 || !(walk.upt = upt_of(lu, pid)))
		return n;
	if (pid != lu->last_pid) {
		unw_flush_cache(lu->as, 0, 0);
		lu->last_pid = pid;
	}
	lu_cur = &walk;
	if (unw_init_remote(&c, lu->as, walk.upt) < 0) {
		(*bad)++;
		goto out;
	}
	for (;;) {
		next_exact = unw_is_signal_frame(&c) > 0;
		ret = unw_step(&c);
		if (ret <= 0) {
			if (ret < 0)
				(*bad)++;
			break;
		}
		if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || !ip)
			break;
		if (n == max) {
			pcs[n - 1] = 0;
			flags[n - 1] = XP_FRAME_TRUNCATED;
			break;
		}
		pcs[n] = arch->strip_pc(regs, (uint64_t)ip);
		if (sps)
			sps[n] = unw_get_reg(&c, UNW_REG_SP, &sp) < 0 ? 0 : (uint64_t)sp;
		flags[n - 1] |= XP_FRAME_CFI;
		flags[n++] = next_exact ? XP_FRAME_EXACT : 0;
	}
out:
	lu_cur = NULL;
	return n;
}
