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

const char *xp_arch_regs_name(const struct xp_arch *arch, unsigned int dwarf_reg)
{
	return dwarf_reg < arch->nr_regs ? arch->regs[dwarf_reg].name : NULL;
}

int xp_arch_prstatus_decode(const struct xp_arch *arch, const void *buf, unsigned long len,
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
	return xp_arch_prstatus_decode(arch, raw, (unsigned long)n, out);
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
