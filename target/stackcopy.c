/* SPDX-License-Identifier: MIT */
/* One bulk copy of a stopped thread's stack, and its size (see stackcopy.h). */
#include "stackcopy.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/uio.h>
#include <unistd.h>

void stackcopy_init(struct stackcopy_src *m, pid_t pid)
{
	m->pid = pid;
	m->mem_fd = -1;
	m->mem_failed = false;
	m->reads = 0;
}

void stackcopy_close(struct stackcopy_src *m)
{
	if (m->mem_fd >= 0)
		close(m->mem_fd);
	m->mem_fd = -1;
	m->mem_failed = false;
	m->reads = 0;
}

/*
 * A pread of /proc/PID/mem, kept open, is the cheaper copy inside a stop:
 * process_vm_readv checks ptrace access at every call, the open file once
 * (~0.35 us of a ~1.5 us copy of one page, on this build's machine).  But
 * the open and the close cost ~9 us, the price of ~25 reads: a process
 * that lives for a few samples (a forking server's backend, a shell's
 * command) is read with process_vm_readv alone.
 */
ssize_t stackcopy_read(struct stackcopy_src *m, void *buf, size_t len, uint64_t addr)
{
	struct iovec local = {buf, len}, remote = {(void *)(uintptr_t)addr, len};
	char path[64];

	if (m->mem_fd < 0 && !m->mem_failed && ++m->reads > STACKCOPY_OPEN_AFTER) {
		snprintf(path, sizeof(path), "/proc/%d/mem", (int)m->pid);
		m->mem_fd = open(path, O_RDONLY | O_CLOEXEC);
		m->mem_failed = m->mem_fd < 0;
	}
	if (m->mem_fd >= 0 && addr <= (uint64_t)INT64_MAX - len)
		return pread(m->mem_fd, buf, len, (off_t)addr);
	return process_vm_readv(m->pid, &local, 1, &remote, 1, 0);
}

size_t stackcopy_take(struct stackcopy_src *m, void *buf, size_t len, uint64_t sp, uint32_t need)
{
	uint64_t room = STACKCOPY_PAGE - (sp & (STACKCOPY_PAGE - 1));
	ssize_t n;

	/*
	 * Each page copied is pinned on its own (~0.6 us more for a window
	 * that crosses into the next page): stop at the end of SP's page when
	 * the last walk needed a good margin less than that.
	 */
	if (len > room && need && need + need / 4 <= room)
		len = room;
	/* Short near the top of the stack: it stops at the first unreadable page. */
	n = stackcopy_read(m, buf, len, sp);
	if (n <= 0 && sp)
		n = stackcopy_read(m, buf, room < len ? room : len, sp);
	return n > 0 ? (size_t)n : 0;
}

/*
 * What the last walk of another thread of the process needed serves a
 * thread's first copy: the threads of a program mostly run the same code
 * (64 new threads each starting from the whole window, and shrinking it
 * over their first samples, kept each stop at ~45 us).
 */
size_t stackcopy_size(const struct stackcopy_size *z, uint32_t hint, size_t max)
{
	if (z->bytes)
		return z->bytes;
	if (hint)
		return hint;
	return max;
}

/*
 * A walk reads its outer frames at the same addresses from sample to
 * sample (main's callers, a thread's start routine), however deep its
 * leaf is.  A size counted from SP alone misses them when a sample comes
 * deeper than the last ones; the walk then reads them live, after the
 * resume, when the thread may have returned from them (forker's last
 * printf, through lazy binding, read exit's frames as main's callers).
 * Counted to the top of the last walk, the copy holds them.
 */
uint32_t stackcopy_need(const struct stackcopy_size *z, uint64_t sp, size_t max)
{
	if (z->top > sp && z->top - sp <= max)
		return (uint32_t)(z->top - sp);
	return z->need;
}

size_t stackcopy_reach(const struct stackcopy_size *z, uint32_t hint, size_t max, uint64_t need)
{
	size_t len = stackcopy_size(z, hint, max);

	if (need <= len)
		return len;
	need = (need + 511) & ~511ull;
	return need < max ? need : max;
}

/*
 * The copy is the one part of the stop that grows with its size (~3 us for
 * 16 KiB), and most stacks need a fraction of it.  Grow at once (half
 * again what was read), shrink slowly; never beyond @max.
 */
void stackcopy_resize(struct stackcopy_size *z, uint32_t *hint, uint64_t sp, uint64_t top,
		      bool live, size_t max)
{
	uint64_t used = top > sp ? top - sp : 0, want, cur;

	z->need = (uint32_t)(used < UINT32_MAX ? used : UINT32_MAX);
	z->top = top;
	cur = stackcopy_size(z, *hint, max);
	want = (used + used / 2 + 1023) & ~1023ull;
	if (want < 2048)
		want = 2048;
	if (live || want > cur) {
		cur = want > cur ? want : cur + cur / 2;
		cur = (cur + 511) & ~511ull;
	} else {
		/* Round down, or an eighth of less than 4 KiB never leaves the block. */
		cur = (cur - (cur - want) / 8) & ~511ull;
		if (cur < want)
			cur = want;
	}
	if (cur > max)
		cur = max;
	z->bytes = (uint32_t)cur;
	*hint = (uint32_t)(want < cur ? want : cur);
}
