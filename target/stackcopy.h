/* SPDX-License-Identifier: MIT */
/*
 * The stack copy taken inside a stop, shared by the sampler and dump: one
 * bulk read from SP, short where the stack ends, and how many bytes to ask
 * for next time.  Reads go through process_vm_readv, then, from a
 * process's STACKCOPY_OPEN_AFTER-th read on, /proc/PID/mem kept open
 * (process_vm_readv again where it cannot be opened).  Prints nothing.
 */
#ifndef XPROF_TARGET_STACKCOPY_H
#define XPROF_TARGET_STACKCOPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define STACKCOPY_PAGE 4096
/* Reads of a process before its /proc/PID/mem is opened (stackcopy_read). */
#define STACKCOPY_OPEN_AFTER 16

/* Where a process's memory is read from. */
struct stackcopy_src {
	pid_t pid;
	int mem_fd;	 /* /proc/PID/mem of the current image, -1: not open yet */
	bool mem_failed; /* it could not be opened: use process_vm_readv */
	unsigned int reads; /* since the file was last closed, until it is opened */
};

void stackcopy_init(struct stackcopy_src *m, pid_t pid);
/* Close the file: the process exec'd (it held the old image) or exited. */
void stackcopy_close(struct stackcopy_src *m);

/* Copy @len bytes at @addr into @buf; short at the first unreadable page.  Bytes, or -1. */
ssize_t stackcopy_read(struct stackcopy_src *m, void *buf, size_t len, uint64_t addr);

/*
 * In a stop: copy up to @len bytes from @sp into @buf.  When the last walk
 * of the thread needed @need bytes (0: unknown) and a good margin more
 * still fits in SP's page, the copy stops at the page's end.  A window
 * that fails as a whole is retried to the end of SP's page.  Returns the
 * bytes copied (0 when nothing could be read).
 */
size_t stackcopy_take(struct stackcopy_src *m, void *buf, size_t len, uint64_t sp, uint32_t need);

/* The sizing of one thread's copies. */
struct stackcopy_size {
	uint32_t bytes; /* to copy at its next sample (0: the default) */
	uint32_t need;	/* bytes its last walk read */
	uint64_t top;	/* the address just above what its last walk read (0: unknown) */
};

/*
 * Bytes to copy at the next sample: @z's size, else @hint (what the last
 * walk of another thread of the process needed; 0: none), else @max.
 */
size_t stackcopy_size(const struct stackcopy_size *z, uint32_t hint, size_t max);

/*
 * Bytes from @sp that the last walk of @z needed, counted to where it
 * ended (z->top) when that is within @max above @sp, else z->need.
 */
uint32_t stackcopy_need(const struct stackcopy_size *z, uint64_t sp, size_t max);

/*
 * Bytes to copy at the next sample: stackcopy_size's, grown to @need
 * (stackcopy_need's, at this sample's SP), never beyond @max.
 */
size_t stackcopy_reach(const struct stackcopy_size *z, uint32_t hint, size_t max, uint64_t need);

/*
 * After a walk from @sp that read up to @top, exclusive (@live: it had to
 * read beyond the copy): size the next copy of @z and the process's @hint.
 * Pure.
 */
void stackcopy_resize(struct stackcopy_size *z, uint32_t *hint, uint64_t sp, uint64_t top,
		      bool live, size_t max);

#endif
