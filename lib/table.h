/* SPDX-License-Identifier: MIT */
/*
 * Open-addressing hash tables of entry index + 1 (0: an empty slot), for
 * entries the caller keeps in an array of its own (names interned by id,
 * stacks, rows): the table only finds an entry's index.  Linear probing,
 * a power-of-two capacity, at most 3/4 full.  Header-only.
 */
#ifndef XPROF_LIB_TABLE_H
#define XPROF_LIB_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "err.h"

struct xp_table {
	size_t *slots;
	size_t cap;
};

/*
 * Make room for one more entry when @nr are in: on growing, entry i is
 * placed again by @hash_of(@ctx, i).  The first slot to look at for a
 * hash h is then h & (cap - 1), the next ones follow (mod cap).
 */
static inline void xp_table_reserve(struct xp_table *t, size_t nr,
				    uint64_t (*hash_of)(const void *, size_t), const void *ctx)
{
	size_t i, j, cap = t->cap ? t->cap : 1024;

	if ((nr + 1) * 4 <= t->cap * 3)
		return;
	while ((nr + 1) * 4 > cap * 3)
		cap *= 2;
	free(t->slots);
	t->cap = cap;
	t->slots = xp_calloc(t->cap, sizeof(*t->slots));
	for (i = 0; i < nr; i++) {
		j = (size_t)hash_of(ctx, i) & (t->cap - 1);
		while (t->slots[j])
			j = (j + 1) & (t->cap - 1);
		t->slots[j] = i + 1;
	}
}

static inline void xp_table_release(struct xp_table *t)
{
	free(t->slots);
	t->slots = NULL;
	t->cap = 0;
}

#endif
