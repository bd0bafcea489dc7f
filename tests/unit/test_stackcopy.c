/* SPDX-License-Identifier: MIT */
/*
 * stackcopy: the copy from SP of this process's own memory (whole, short at
 * an unreadable page, kept within SP's page when the last walk needed
 * little; /proc/PID/mem opened only after STACKCOPY_OPEN_AFTER reads), and
 * the sizing of the next copy (grow at once, shrink slowly,
 * the process hint, the bound).
 */
#include "t.h"

#include "stackcopy.h"

#include <sys/mman.h>
#include <unistd.h>

static int test_take(void)
{
	const size_t pg = STACKCOPY_PAGE;
	uint8_t *p = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t buf[4 * STACKCOPY_PAGE];
	struct stackcopy_src m;
	uint64_t sp;
	size_t i;

	T_ASSERT(p != MAP_FAILED);
	/* A hole: /proc/PID/mem would read even a PROT_NONE page. */
	T_EQ_U64(munmap(p + 2 * pg, pg), 0);
	for (i = 0; i < 2 * pg; i++)
		p[i] = (uint8_t)(i * 7);
	stackcopy_init(&m, getpid());
	sp = (uint64_t)(uintptr_t)p + 100;
	/* Short at the unmapped third page. */
	T_EQ_U64(stackcopy_take(&m, buf, sizeof(buf), sp, 0), 2 * pg - 100);
	T_EQ_U64(buf[0], (uint8_t)(100 * 7));
	T_EQ_U64(buf[2 * pg - 101], (uint8_t)((2 * pg - 1) * 7));
	/* The last walk needed 1000 bytes: SP's page holds them with margin. */
	T_EQ_U64(stackcopy_take(&m, buf, sizeof(buf), sp, 1000), pg - 100);
	/* It needed 3900: not within the margin, the whole window. */
	T_EQ_U64(stackcopy_take(&m, buf, sizeof(buf), sp, 3900), 2 * pg - 100);
	/* Nothing readable at all. */
	T_EQ_U64(stackcopy_take(&m, buf, sizeof(buf), (uint64_t)(uintptr_t)p + 2 * pg, 0), 0);
	/* Those were read with process_vm_readv; /proc/PID/mem opens after more. */
	T_ASSERT(m.mem_fd < 0);
	while (m.reads < STACKCOPY_OPEN_AFTER)
		T_EQ_U64(stackcopy_take(&m, buf, sizeof(buf), sp, 0), 2 * pg - 100);
	T_ASSERT(m.mem_fd < 0);
	T_EQ_U64(stackcopy_take(&m, buf, sizeof(buf), sp, 0), 2 * pg - 100);
	T_ASSERT(m.mem_fd >= 0);
	T_EQ_U64(buf[2 * pg - 101], (uint8_t)((2 * pg - 1) * 7));
	stackcopy_close(&m);
	T_ASSERT(m.mem_fd < 0);
	/* Through process_vm_readv when /proc/PID/mem is refused. */
	m.mem_failed = true;
	T_EQ_U64(stackcopy_take(&m, buf, sizeof(buf), sp, 0), 2 * pg - 100);
	munmap(p, 2 * pg);
	munmap(p + 3 * pg, pg);
	return T_OK;
}

#define SP 0x7ff000100000ull

static int test_size(void)
{
	struct stackcopy_size z = {0};
	uint32_t hint = 0;
	unsigned int i;

	T_EQ_U64(stackcopy_size(&z, 0, 65536), 65536);	 /* nothing known: the whole window */
	T_EQ_U64(stackcopy_size(&z, 6144, 65536), 6144); /* another thread's need */
	/* A walk read 1000 bytes: the next copy shrinks by an eighth of the excess. */
	stackcopy_resize(&z, &hint, SP, SP + 1000, false, 65536);
	T_EQ_U64(z.need, 1000);
	T_EQ_U64(z.bytes, (65536 - (65536 - 2048) / 8) & ~511u);
	T_EQ_U64(hint, 2048);
	for (i = 0; i < 100; i++)
		stackcopy_resize(&z, &hint, SP, SP + 1000, false, 65536);
	T_EQ_U64(z.bytes, 2048); /* settles at 1.5x rounded up to 1 KiB, at least 2 KiB */
	/* A deeper walk grows it at once. */
	stackcopy_resize(&z, &hint, SP, SP + 20000, false, 65536);
	T_EQ_U64(z.bytes, 30720);
	/* A walk that had to read live grows it by half even if it seemed enough. */
	stackcopy_resize(&z, &hint, SP, SP + 1000, true, 65536);
	T_EQ_U64(z.bytes, 46080);
	/* Never beyond the window. */
	stackcopy_resize(&z, &hint, SP, SP + (1 << 20), false, 65536);
	T_EQ_U64(z.bytes, 65536);
	T_EQ_U64(hint, 65536);
	return T_OK;
}

/* A sample deeper than the last ones still copies up to where their walks ended. */
static int test_reach(void)
{
	struct stackcopy_size z = {0};
	uint32_t hint = 0;
	unsigned int i;

	for (i = 0; i < 100; i++)
		stackcopy_resize(&z, &hint, SP, SP + 1000, false, 65536);
	T_EQ_U64(z.bytes, 2048);
	T_EQ_U64(z.top, SP + 1000);
	/* At the same depth: the size alone. */
	T_EQ_U64(stackcopy_need(&z, SP, 65536), 1000);
	T_EQ_U64(stackcopy_reach(&z, hint, 65536, stackcopy_need(&z, SP, 65536)), 2048);
	/* 3000 bytes deeper: up to the old top, rounded to 512. */
	T_EQ_U64(stackcopy_need(&z, SP - 3000, 65536), 4000);
	T_EQ_U64(stackcopy_reach(&z, hint, 65536, stackcopy_need(&z, SP - 3000, 65536)), 4096);
	/* A top further than the window (another stack): the size alone. */
	T_EQ_U64(stackcopy_need(&z, SP - 70000, 65536), 1000);
	T_EQ_U64(stackcopy_reach(&z, hint, 65536, stackcopy_need(&z, SP - 70000, 65536)), 2048);
	/* Above the old top (a shallower stack, or another one): the size alone. */
	T_EQ_U64(stackcopy_reach(&z, hint, 65536, stackcopy_need(&z, SP + 8192, 65536)), 2048);
	/* Never beyond the window. */
	T_EQ_U64(stackcopy_reach(&z, hint, 8000, stackcopy_need(&z, SP - 6900, 8000)), 8000);
	return T_OK;
}

T_MAIN(T_CASE(test_take), T_CASE(test_size), T_CASE(test_reach))
