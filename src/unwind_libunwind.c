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
 * libunwind's register numbers equal the DWARF numbers for the registers
 * xprof keeps, on x86-64 (rax..r15 0-15, rip 16), aarch64 (x0-x30, sp 31,
 * pc 32) and riscv64 (x0-x31, pc 32), so the snapshot serves them as
 * they are.
 */
#include "unwind_libunwind.h"
#include "arch.h"
#include "err.h"
#include "memread.h"
#include "unwind.h"

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
};

static __thread struct lu_walk *lu_cur;

static int lu_find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
			     int need_unwind_info, void *arg)
{
	return _UPT_find_proc_info(as, ip, pi, need_unwind_info, arg);
}

static void lu_put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
	_UPT_put_unwind_info(as, pi, arg);
}

static int lu_get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *addr, void *arg)
{
	(void)as;
	(void)addr;
	(void)arg;
	return -UNW_ENOINFO;
}

static int lu_access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write,
			 void *arg)
{
	uint64_t v;

	(void)as;
	(void)arg;
	if (write || !lu_cur)
		return -UNW_EINVAL;
	if (memread_word(lu_cur->mem, (uint64_t)addr, sizeof(*val), &v))
		return -UNW_EINVAL;
	*val = (unw_word_t)v;
	return 0;
}

static int lu_access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *val, int write,
			 void *arg)
{
	(void)as;
	(void)arg;
	if (write || !lu_cur || reg < 0 || !xp_regs_has(lu_cur->regs, (unsigned int)reg))
		return -UNW_EBADREG;
	*val = (unw_word_t)xp_regs_get(lu_cur->regs, (unsigned int)reg);
	return 0;
}

static int lu_access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write,
			   void *arg)
{
	(void)as;
	(void)reg;
	(void)val;
	(void)write;
	(void)arg;
	return -UNW_EBADREG;
}

static int lu_resume(unw_addr_space_t as, unw_cursor_t *c, void *arg)
{
	(void)as;
	(void)c;
	(void)arg;
	return -UNW_EINVAL;
}

static int lu_get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf, size_t len,
			    unw_word_t *off, void *arg)
{
	(void)as;
	(void)addr;
	(void)buf;
	(void)len;
	(void)off;
	(void)arg;
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
		       const struct xp_regs *regs, struct memread *mem, pid_t pid, uint64_t *pcs,
		       uint8_t *flags, unsigned int max, uint64_t *bad)
{
	struct lu_walk walk = {arch, regs, mem, NULL};
	unw_cursor_t c;
	unw_word_t ip;
	unsigned int n = 0;
	bool next_exact;
	int ret;

	if (!max || !xp_regs_has(regs, arch->dwarf_pc))
		return 0;
	pcs[n] = arch->strip_pc(regs, xp_regs_get(regs, arch->dwarf_pc));
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
		flags[n - 1] |= XP_FRAME_CFI;
		flags[n++] = next_exact ? XP_FRAME_EXACT : 0;
	}
out:
	lu_cur = NULL;
	return n;
}
