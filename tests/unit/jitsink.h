/* SPDX-License-Identifier: MIT */
/*
 * For the tests and fuzz targets of the JIT collector (jitmap.h): a sink
 * that writes what it keeps into a data file, as the recorder's emitter
 * does, and the collector run over the pcs of a stack table.
 */
#ifndef XPROF_TESTS_JITSINK_H
#define XPROF_TESTS_JITSINK_H

#include "datafile.h"
#include "jitmap.h"
#include "stacktab.h"

#include <stdlib.h>

static inline int jitsink_sym(void *ctx, pid_t pid, uint64_t start, uint64_t size, const char *name,
			      uint64_t t)
{
	return df_write_jitsym(ctx, pid, start, size, name, t);
}

static inline int jitsink_line(void *ctx, pid_t pid, uint64_t start, uint64_t end, const char *file,
			       uint32_t line)
{
	return df_write_jitline(ctx, pid, start, end, file, line);
}

/* jitmap_collect_files into @w for the pcs of @stacks; @watch may be NULL (none). */
static inline int jitsink_collect_files(struct df_writer *w, struct jit_watch *watch, pid_t pid,
					const char *perfmap, const char *const *dumps,
					size_t nr_dumps, const struct stacktab *stacks,
					uint64_t start_mono)
{
	const struct jitmap_sink sink = {w, jitsink_sym, jitsink_line};
	struct jit_watch none = {0};
	size_t nr;
	uint64_t *pcs = stacktab_sorted_pcs(stacks, &nr);
	int ret = jitmap_collect_files(&sink, watch ? watch : &none, pid, perfmap, dumps, nr_dumps,
				       pcs, nr, start_mono);

	free(pcs);
	return ret;
}

/* jitmap_collect into @w for the pcs of @stacks. */
static inline int jitsink_collect(struct df_writer *w, pid_t pid, const struct addrspace *as,
				  const struct stacktab *stacks, uint64_t start_mono)
{
	const struct jitmap_sink sink = {w, jitsink_sym, jitsink_line};
	struct jit_watch none = {0};
	size_t nr;
	uint64_t *pcs = stacktab_sorted_pcs(stacks, &nr);
	int ret = jitmap_collect(&sink, &none, pid, as, pcs, nr, start_mono);

	free(pcs);
	return ret;
}

#endif
