/* SPDX-License-Identifier: MIT */
/*
 * The architecture registry: an explicit const table (elfutils machines[]),
 * lookup by ELF e_machine, and the choice of the host arch.  This is the
 * only place besides the arch files that names a host architecture macro.
 * Per-arch knowledge lives in arch/<name>.c, never here.
 */
#include "arch.h"
#include "arch_impl.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/uio.h>

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

long xp_arch_getregset(pid_t tid, unsigned int type, void *buf, size_t len)
{
	struct iovec iov = {.iov_base = buf, .iov_len = len};

	if (ptrace(PTRACE_GETREGSET, tid, (void *)(unsigned long)type, &iov) < 0)
		return -errno;
	return (long)iov.iov_len;
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
