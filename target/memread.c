/* SPDX-License-Identifier: MIT */
/*
 * Target memory for the unwinder: the stack copy taken during the stop
 * first, then a few live pages read with process_vm_readv(2) while the
 * target runs.  A page that is only partly readable (the end of a mapping)
 * is cached with its readable length, an unreadable one with length 0, so a
 * bad frame chain costs one syscall per page, not one per word.  No
 * PTRACE_PEEKDATA fallback: the thread is running again when we unwind.
 */
#include "memread.h"

#include <endian.h>
#include <errno.h>
#include <string.h>
#include <sys/uio.h>

void memread_init(struct memread *m, pid_t pid, uint64_t copy_addr, const void *copy,
		  size_t copy_len)
{
	unsigned int i;

	m->pid = pid;
	m->copy_addr = copy_addr;
	m->copy = copy;
	m->copy_len = copy ? copy_len : 0;
	/* A copy wrapping past the top of the address space is cut short. */
	if (m->copy_len && copy_addr + m->copy_len < copy_addr)
		m->copy_len = (size_t)(0 - copy_addr);
	for (i = 0; i < MEMREAD_PAGES; i++) {
		m->page[i].addr = 0;
		m->page[i].len = 0;
	}
	m->next_victim = 0;
	m->live_reads = 0;
	m->hi = 0;
}

/* The cache slot holding the page at @page_addr, filled on a miss; NULL if no live reads. */
static const struct memread_page *memread_page(struct memread *m, uint64_t page_addr)
{
	struct iovec local, remote;
	unsigned int i;
	ssize_t n;

	for (i = 0; i < MEMREAD_PAGES; i++)
		if (m->page[i].addr == page_addr)
			return &m->page[i];
	if (!m->pid)
		return NULL;
	i = m->next_victim;
	m->next_victim = (i + 1) % MEMREAD_PAGES;
	local.iov_base = m->page[i].data;
	local.iov_len = MEMREAD_PAGE;
	remote.iov_base = (void *)(uintptr_t)page_addr;
	remote.iov_len = MEMREAD_PAGE;
	m->live_reads++;
	/* Short when the page is partly mapped; -1 (EFAULT, ESRCH) is cached as empty. */
	n = process_vm_readv(m->pid, &local, 1, &remote, 1, 0);
	m->page[i].addr = page_addr;
	m->page[i].len = n > 0 ? (int)n : 0;
	return &m->page[i];
}

int memread_read(struct memread *m, uint64_t addr, void *buf, size_t len)
{
	uint8_t *out = buf;

	if (addr + len < addr)
		return -EFAULT;
	if (addr + len > m->hi)
		m->hi = addr + len;
	while (len) {
		uint64_t page_addr, off;
		size_t n;

		if (addr >= m->copy_addr && addr - m->copy_addr < m->copy_len) {
			off = addr - m->copy_addr;
			n = m->copy_len - off < len ? m->copy_len - off : len;
			memcpy(out, m->copy + off, n);
		} else {
			const struct memread_page *pg;

			/* The zero page is never mapped, and 0 marks an empty slot. */
			page_addr = addr & ~(uint64_t)(MEMREAD_PAGE - 1);
			if (!page_addr)
				return -EFAULT;
			pg = memread_page(m, page_addr);
			off = addr - page_addr;
			if (!pg || off >= (uint64_t)pg->len)
				return -EFAULT;
			n = (size_t)pg->len - off < len ? (size_t)pg->len - off : len;
			/* Never read live memory the copy covers: stop where the copy starts. */
			if (addr < m->copy_addr && m->copy_len && m->copy_addr - addr < n)
				n = m->copy_addr - addr;
			memcpy(out, pg->data + off, n);
		}
		out += n;
		addr += n;
		len -= n;
	}
	return 0;
}

int memread_word_slow(struct memread *m, uint64_t addr, unsigned bytes, uint64_t *out)
{
	uint64_t off = addr - m->copy_addr, v8;
	uint32_t v4;
	uint8_t b[8];
	int ret;

	if (bytes != 4 && bytes != 8)
		return -EINVAL;
	if (addr >= m->copy_addr && off < m->copy_len && m->copy_len - off >= bytes) {
		if (addr + bytes > m->hi)
			m->hi = addr + bytes;
		memcpy(b, m->copy + off, bytes);
	} else {
		ret = memread_read(m, addr, b, bytes);
		if (ret)
			return ret;
	}
	if (bytes == 8) {
		memcpy(&v8, b, 8);
		*out = le64toh(v8);
	} else {
		memcpy(&v4, b, 4);
		*out = le32toh(v4);
	}
	return 0;
}
