/* SPDX-License-Identifier: MIT */
/*
 * The kernel's [vdso] in the data file.  Its functions (clock_gettime,
 * gettimeofday, ...) run in every process, but its ELF image exists only
 * in memory, and the kernel where a report runs may have another one, so
 * the recorder copies the image it saw (VDSO record, written once per
 * distinct image) and the report symbolizes [vdso] frames from it.
 */
#ifndef XPROF_RECORD_VDSO_H
#define XPROF_RECORD_VDSO_H

#include <stdint.h>
#include <sys/types.h>

struct df_writer;

/*
 * Copy the [vdso] mapped at [@start, @end) in process @pid into @w, unless
 * the same image is already there.  An image that cannot be read is
 * skipped quietly (debug message): the report then shows [vdso]+0xOFF as
 * before.  0, or -1 after a write error (printed by the writer).  May be
 * called while the target runs.
 */
int vdso_write(struct df_writer *w, pid_t pid, uint64_t start, uint64_t end);

#endif
