/* SPDX-License-Identifier: MIT */
/*
 * The architecture registry: an explicit const table (elfutils machines[]),
 * lookup by ELF e_machine, and the choice of the host arch.  This is the
 * only place that names a host architecture macro.
 * Per-arch knowledge lives in arch/<name>.c, never here: what is below
 * works on the tables the arch files hand it.
 */
#include "arch.h"
#include "arch_impl.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/uio.h>

/* The largest NT_PRSTATUS regset of the registry (aarch64's), in words. */
#define XP_ARCH_PRSTATUS_MAX 34

const struct xp_arch *const xp_arches[] = {
    &xp_arch_x86_64,
    &xp_arch_aarch64,
    &xp_arch_riscv64,
    NULL,
};

const struct xp_arch *xp_arch_by_machine(uint16_t e_machine)
{
	size_t i;

	for (i = 0; xp_arches[i]; i++)
		if (xp_arches[i]->e_machine == e_machine)
			return xp_arches[i];
	return NULL;
}

const struct xp_arch *xp_arch_host(void)
{
#if defined(__x86_64__)
	return &xp_arch_x86_64;
#elif defined(__aarch64__)
	return &xp_arch_aarch64;
#elif defined(__riscv) && __riscv_xlen == 64
	return &xp_arch_riscv64;
#else
	return NULL;
#endif
}

void xp_arch_cpu_relax(void)
{
#if defined(__x86_64__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#elif defined(__riscv)
	/* Zihintpause's "pause", encoded so that assemblers without it take it. */
	__asm__ __volatile__(".4byte 0x0100000f" ::: "memory");
#endif
}

bool xp_arch_is_host(const struct xp_arch *arch)
{
	return arch == xp_arch_host();
}

long xp_arch_getregset(pid_t tid, unsigned int type, void *buf, size_t len)
{
	struct iovec iov = {.iov_base = buf, .iov_len = len};

	if (ptrace(PTRACE_GETREGSET, tid, (void *)(unsigned long)type, &iov) < 0)
		return -errno;
	return (long)iov.iov_len;
}

const char *xp_arch_reg_name(const struct xp_arch *arch, unsigned int dwarf_reg)
{
	return dwarf_reg < arch->nr_regs ? arch->regs[dwarf_reg].name : NULL;
}

int xp_arch_regs_from_prstatus(const struct xp_arch *arch, const void *buf, unsigned long len,
			       struct xp_regs *out)
{
	unsigned int i;

	if (!buf || len < arch->prstatus_words * 8ul)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->e_machine = arch->e_machine;
	for (i = 0; i < arch->nr_regs; i++) {
		int word = arch->regs[i].word;

		xp_regs_set(out, i, word == XP_ARCH_REG_ZERO ? 0 : xp_arch_word(buf, (size_t)word));
	}
	if (arch->prstatus_syscall)
		arch->prstatus_syscall(buf, out);
	return 0;
}

int xp_arch_prstatus_read(const struct xp_arch *arch, pid_t tid, struct xp_regs *out)
{
	uint64_t raw[XP_ARCH_PRSTATUS_MAX];
	long n;

	if (!xp_arch_is_host(arch))
		return -ENOSYS;
	if (arch->prstatus_words > XP_ARCH_PRSTATUS_MAX)
		return -EINVAL;
	n = xp_arch_getregset(tid, NT_PRSTATUS, raw, arch->prstatus_words * sizeof(raw[0]));
	if (n < 0)
		return (int)n;
	return xp_arch_regs_from_prstatus(arch, raw, (unsigned long)n, out);
}

uint64_t xp_arch_strip_pc_none(const struct xp_regs *regs, uint64_t pc)
{
	(void)regs;
	return pc;
}

void xp_arch_sp_add_imm(const char *imm, bool sub, struct xp_insn_effect *eff)
{
	int32_t v;

	if (xp_arch_parse_imm(&imm, &v) || *imm || v == INT32_MIN)
		eff->flags |= XP_EFF_SP_UNKNOWN;
	else
		eff->sp_pre = sub ? -v : v;
}

int xp_arch_parse_imm(const char **p, int32_t *out)
{
	const char *s = *p;
	char *end;
	long long v;

	if (*s == '#')
		s++;
	if (*s != '-' && (*s < '0' || *s > '9'))
		return -EINVAL;
	errno = 0;
	v = strtoll(s, &end, 0);
	if (errno || end == s || v < INT32_MIN || v > INT32_MAX)
		return -EINVAL;
	*p = end;
	*out = (int32_t)v;
	return 0;
}

bool xp_arch_has_prefix(const char *s, const char *prefix, const char **rest)
{
	size_t n = strlen(prefix);

	if (strncmp(s, prefix, n))
		return false;
	if (rest)
		*rest = s + n;
	return true;
}

/* Whether @word is one of the space-separated words of @list. */
static bool arch_word_in(const char *list, const char *word)
{
	size_t n = strlen(word);

	while (*list) {
		size_t len = strcspn(list, " ");

		if (len == n && !strncmp(list, word, n))
			return true;
		list += len;
		list += strspn(list, " ");
	}
	return false;
}

/* Whether @ops is @pat, where a "%" of @pat stands for an immediate, then in *@imm. */
static bool arch_ops_match(const char *pat, const char *ops, int32_t *imm)
{
	const char *pct = strchr(pat, '%');

	if (!pct)
		return !strcmp(ops, pat);
	if (strncmp(ops, pat, (size_t)(pct - pat)))
		return false;
	ops += pct - pat;
	return !xp_arch_parse_imm(&ops, imm) && !strcmp(ops, pct + 1);
}

/* The field of @eff that @imm names, or NULL for XP_ARCH_IMM_NONE. */
static int32_t *arch_imm_field(struct xp_insn_effect *eff, enum xp_arch_imm imm)
{
	switch (imm) {
	case XP_ARCH_IMM_SP_FROM_FP:
		return &eff->sp_from_fp;
	case XP_ARCH_IMM_SP_PRE:
		return &eff->sp_pre;
	case XP_ARCH_IMM_SAVE_FP:
		return &eff->save_fp;
	case XP_ARCH_IMM_SAVE_RA:
		return &eff->save_ra;
	case XP_ARCH_IMM_SET_FP:
		return &eff->set_fp;
	case XP_ARCH_IMM_NONE:
		break;
	}
	return NULL;
}

bool xp_arch_insn_match(const struct xp_arch_insn *table, size_t n, const char *mn, const char *ops,
			struct xp_insn_effect *eff)
{
	size_t i;

	memset(eff, 0, sizeof(*eff));
	for (i = 0; i < n; i++) {
		const struct xp_arch_insn *row = &table[i];
		int32_t v = 0, *field;

		if (!arch_word_in(row->mn, mn) || (row->ops && !arch_ops_match(row->ops, ops, &v)))
			continue;
		if (row->neg && v == INT32_MIN)
			continue;
		eff->flags = row->flags;
		field = arch_imm_field(eff, row->imm);
		if (field)
			*field = row->neg ? -v : v;
		return true;
	}
	return false;
}
