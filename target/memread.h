/* SPDX-License-Identifier: MIT */
/*
 * Reading target memory for the unwinder.  A memread serves reads from the
 * stack copy taken during the stop and, only when a frame chain leaves the
 * copy, from the live process with process_vm_readv through a small page
 * cache.  A memread belongs to one sample of one thread: create it after the
 * copy, drop it after the unwind.  Not thread-safe.  Returns -errno, prints
 * nothing.
 */
#ifndef XPROF_TARGET_MEMREAD_H
#define XPROF_TARGET_MEMREAD_H

#include <endian.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#define MEMREAD_PAGES 4
#define MEMREAD_PAGE  4096

struct memread {
	pid_t pid;	    /* 0: no live reads (canned memory in tests) */
	uint64_t copy_addr; /* target address of copy[0] */
	size_t copy_len;
	const uint8_t *copy; /* borrowed, not owned */
	struct memread_page {
		uint64_t addr; /* page-aligned; 0 = empty slot */
		int len;       /* bytes valid from addr (short near a hole) */
		uint8_t data[MEMREAD_PAGE];
	} page[MEMREAD_PAGES];
	unsigned next_victim;
	uint64_t live_reads; /* process_vm_readv calls made (statistics) */
	uint64_t hi;	     /* end of the highest range read so far (sizes the next copy) */
};

void memread_init(struct memread *m, pid_t pid, uint64_t copy_addr, const void *copy,
		  size_t copy_len);

/* Read @len bytes at @addr.  0, or -EFAULT when any byte is unreadable. */
int memread_read(struct memread *m, uint64_t addr, void *buf, size_t len);

/* memread_word's general case; call memread_word instead. */
int memread_word_slow(struct memread *m, uint64_t addr, unsigned bytes, uint64_t *out);

/*
 * Read one little-endian word of @bytes (4 or 8) at @addr, zero-extended.
 * 0, -EFAULT, or -EINVAL for another size.  Inline for the case of nearly
 * every frame: a whole 8-byte word inside the copy.
 */
static inline int memread_word(struct memread *m, uint64_t addr, unsigned bytes, uint64_t *out)
{
	uint64_t off = addr - m->copy_addr, v;

	if (bytes == 8 && addr >= m->copy_addr && off < m->copy_len && m->copy_len - off >= 8) {
		if (addr + 8 > m->hi)
			m->hi = addr + 8;
		memcpy(&v, m->copy + off, 8);
		*out = le64toh(v);
		return 0;
	}
	return memread_word_slow(m, addr, bytes, out);
}

#endif
