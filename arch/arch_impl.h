/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the arch/ files only (nothing outside arch/ includes
 * this): the one ptrace call every regs_read makes, and little-endian
 * decoding of raw regsets.  The arch files themselves stay declarative.
 */
#ifndef XPROF_ARCH_ARCH_IMPL_H
#define XPROF_ARCH_ARCH_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

extern const struct xp_arch xp_arch_x86_64;
extern const struct xp_arch xp_arch_aarch64;
extern const struct xp_arch xp_arch_riscv64;

/*
 * PTRACE_GETREGSET of regset @type into @buf (@len bytes).  Returns the
 * number of bytes the kernel filled, or -errno.  Host-independent.
 */
long xp_arch_getregset(pid_t tid, unsigned int type, void *buf, size_t len);

/*
 * Parse an immediate as the disassembler prints it ("0x20", "-0x10", "8",
 * "#0x20", "#-0x10").  Advances *@p past it.  0 or -EINVAL.
 */
int xp_arch_parse_imm(const char **p, int32_t *out);
/* System call names (generated: arch/syscalls_*.c).  NULL for an unknown number. */
const char *xp_arch_syscall_x86_64(unsigned int nr);
const char *xp_arch_syscall_generic(unsigned int nr);

/* Whether @s starts with @prefix; then *@rest points after it. */
bool xp_arch_has_prefix(const char *s, const char *prefix, const char **rest);

/* Word @i (8 bytes, little-endian) of a raw regset. */
static inline uint64_t xp_arch_word(const void *buf, size_t i)
{
	const uint8_t *p = (const uint8_t *)buf + i * 8;
	uint64_t v = 0;
	int b;

	for (b = 7; b >= 0; b--)
		v = v << 8 | p[b];
	return v;
}

#endif
