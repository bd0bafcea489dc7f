/* SPDX-License-Identifier: MIT */
/*
 * memread: reads served from the copy, little-endian words, reads that
 * leave the copy (refused without a pid; served live, through the page
 * cache, with one), short and unreadable pages.  The live cases read this
 * test's own memory with process_vm_readv.
 */
#include "t.h"

#include "memread.h"

#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

static int test_copy_only(void)
{
	uint8_t copy[64], buf[16];
	struct memread m;
	uint64_t w;
	unsigned int i;

	for (i = 0; i < sizeof(copy); i++)
		copy[i] = (uint8_t)i;
	memread_init(&m, 0, 0x10000, copy, sizeof(copy));
	T_EQ_U64(memread_word(&m, 0x10000, 8, &w), 0);
	T_EQ_U64(w, 0x0706050403020100ull);
	T_EQ_U64(memread_word(&m, 0x10004, 4, &w), 0);
	T_EQ_U64(w, 0x07060504);
	T_EQ_U64(memread_word(&m, 0x10038, 8, &w), 0); /* last whole word */
	T_EQ_U64(memread_word(&m, 0x10039, 8, &w), (uint64_t)-EFAULT);
	T_EQ_U64(memread_word(&m, 0xfff8, 8, &w), (uint64_t)-EFAULT);
	T_EQ_U64(memread_word(&m, 0x10000, 2, &w), (uint64_t)-EINVAL);
	T_EQ_U64(memread_read(&m, 0x10030, buf, 16), 0);
	T_EQ_U64(buf[15], 0x3f);
	T_EQ_U64(memread_read(&m, UINT64_MAX - 3, buf, 8), (uint64_t)-EFAULT);
	T_EQ_U64(memread_read(&m, 0, buf, 8), (uint64_t)-EFAULT);
	T_EQ_U64(m.live_reads, 0);
	/* An empty copy: everything is outside. */
	memread_init(&m, 0, 0x10000, NULL, 100);
	T_EQ_U64(memread_word(&m, 0x10000, 8, &w), (uint64_t)-EFAULT);
	return T_OK;
}

static int test_live(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *p =
	    mmap(NULL, (size_t)pg * 3, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t base = (uint64_t)(uintptr_t)p, w;
	uint8_t buf[32];
	struct memread m;
	long i;

	T_ASSERT(p != MAP_FAILED);
	T_ASSERT(pg == MEMREAD_PAGE);
	for (i = 0; i < pg * 3; i++)
		p[i] = (uint8_t)(i * 7);
	munmap(p + 2 * pg, (size_t)pg); /* the third page is a hole */
	/* The copy is the first 100 bytes; a copy is a snapshot, not live memory. */
	static uint8_t snap[100];
	memset(snap, 0xee, sizeof(snap));
	memread_init(&m, getpid(), base, snap, sizeof(snap));
	T_EQ_U64(memread_word(&m, base, 8, &w), 0);
	T_EQ_U64(w, 0xeeeeeeeeeeeeeeeeull);
	/* Straddling the copy's end: copy bytes, then live bytes. */
	T_EQ_U64(memread_read(&m, base + 96, buf, 8), 0);
	T_EQ_U64(buf[3], 0xee);
	T_EQ_U64(buf[4], (uint8_t)(100 * 7));
	T_EQ_U64(m.live_reads, 1);
	T_EQ_U64(memread_word(&m, base + 200, 8, &w), 0);
	T_EQ_U64(w & 0xff, (uint8_t)(200 * 7));
	T_EQ_U64(m.live_reads, 1); /* same page: cached */
	/* Across into the second page, then into the hole. */
	T_EQ_U64(memread_read(&m, base + (uint64_t)pg - 4, buf, 8), 0);
	T_EQ_U64(buf[4], (uint8_t)(pg * 7));
	T_EQ_U64(m.live_reads, 2);
	T_EQ_U64(memread_read(&m, base + 2 * (uint64_t)pg - 4, buf, 8), (uint64_t)-EFAULT);
	T_EQ_U64(memread_word(&m, base + 2 * (uint64_t)pg + 8, 8, &w), (uint64_t)-EFAULT);
	T_EQ_U64(memread_word(&m, base + 2 * (uint64_t)pg + 16, 8, &w), (uint64_t)-EFAULT);
	T_EQ_U64(m.live_reads, 3); /* the hole was asked once */
	munmap(p, (size_t)pg * 2);
	return T_OK;
}

static int test_page_eviction(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	unsigned int npages = MEMREAD_PAGES + 2, i;
	uint8_t *p = mmap(NULL, (size_t)pg * npages, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t base = (uint64_t)(uintptr_t)p, w;
	struct memread m;

	T_ASSERT(p != MAP_FAILED);
	for (i = 0; i < npages; i++)
		p[(size_t)pg * i] = (uint8_t)i;
	memread_init(&m, getpid(), 0, NULL, 0);
	for (i = 0; i < npages; i++) {
		T_EQ_U64(memread_word(&m, base + (uint64_t)pg * i, 4, &w), 0);
		T_EQ_U64(w & 0xff, i);
	}
	T_EQ_U64(m.live_reads, npages);
	/* The newest pages are still cached. */
	T_EQ_U64(memread_word(&m, base + (uint64_t)pg * (npages - 1), 4, &w), 0);
	T_EQ_U64(m.live_reads, npages);
	munmap(p, (size_t)pg * npages);
	return T_OK;
}

T_MAIN(T_CASE(test_copy_only), T_CASE(test_live), T_CASE(test_page_eviction))
