/* SPDX-License-Identifier: MIT */
/*
 * Open-addressing hash table of stacks with an append-only pool of pcs.
 * Ids are dense and start at 1 in order of first appearance.
 */
#include "stacktab.h"
#include "err.h"
#include "dataformat.h"
#include "sorted.h"

#include <stdlib.h>
#include <string.h>

void stacktab_init(struct stacktab *t)
{
	memset(t, 0, sizeof(*t));
}

void stacktab_release(struct stacktab *t)
{
	free(t->slots);
	free(t->pcs);
	free(t->flags);
	free(t->by_id);
	stacktab_init(t);
}

static uint64_t hash_stack(const uint64_t *pcs, const uint8_t *flags, uint32_t nr)
{
	uint64_t h = 0xcbf29ce484222325ull ^ nr;
	uint32_t i;

	for (i = 0; i < nr; i++) {
		h ^= pcs[i] + ((uint64_t)flags[i] << 56);
		h *= 0x100000001b3ull;
		h ^= h >> 29;
	}
	return h ? h : 1;
}

static void rehash(struct stacktab *t)
{
	unsigned long n = t->nslots ? t->nslots * 2 : 1024, i;
	struct stacktab_entry *s = xp_calloc(n, sizeof(*s));

	for (i = 0; i < t->nslots; i++) {
		unsigned long j;

		if (!t->slots[i].id)
			continue;
		j = t->slots[i].hash & (n - 1);
		while (s[j].id)
			j = (j + 1) & (n - 1);
		s[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = s;
	t->nslots = n;
}

uint64_t stacktab_intern(struct stacktab *t, const uint64_t *pcs, const uint8_t *flags, uint32_t nr,
			 bool *is_new)
{
	uint64_t h = hash_stack(pcs, flags, nr);
	unsigned long j;

	if ((t->used + 1) * 4 >= t->nslots * 3)
		rehash(t);
	for (j = h & (t->nslots - 1); t->slots[j].id; j = (j + 1) & (t->nslots - 1)) {
		const struct stacktab_entry *e = &t->slots[j];

		if (e->hash == h && e->nr == nr &&
		    !memcmp(t->pcs + e->off, pcs, nr * sizeof(*pcs)) &&
		    !memcmp(t->flags + e->off, flags, nr)) {
			*is_new = false;
			return e->id;
		}
	}
	xp_grow((void **)&t->pcs, &t->pool_alloc, t->pool_nr + nr, sizeof(*t->pcs));
	xp_grow((void **)&t->flags, &t->flags_alloc, t->pool_nr + nr, 1);
	memcpy(t->pcs + t->pool_nr, pcs, nr * sizeof(*pcs));
	memcpy(t->flags + t->pool_nr, flags, nr);
	t->slots[j] = (struct stacktab_entry){
	    .hash = h, .id = t->used + 1, .nr = nr, .off = (uint32_t)t->pool_nr};
	xp_grow((void **)&t->by_id, &t->by_id_alloc, t->used + 1, sizeof(*t->by_id));
	t->by_id[t->used] = t->slots[j];
	t->pool_nr += nr;
	t->used++;
	*is_new = true;
	return t->slots[j].id;
}

uint32_t stacktab_get(const struct stacktab *t, uint64_t id, const uint64_t **pcs,
		      const uint8_t **flags)
{
	const struct stacktab_entry *e;

	if (!id || id > t->used)
		return 0;
	e = &t->by_id[id - 1];
	*pcs = t->pcs + e->off;
	*flags = t->flags + e->off;
	return e->nr;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

uint64_t *stacktab_sorted_pcs(const struct stacktab *t, size_t *nr)
{
	uint64_t *pcs = xp_malloc((t->pool_nr ? t->pool_nr : 1) * sizeof(*pcs));
	size_t i, n = 0, k;

	for (i = 0; i < t->pool_nr; i++) {
		if (t->flags[i] & XP_FRAME_MARKERS)
			continue;
		pcs[n++] = xp_lookup_pc(t->pcs[i], t->flags[i]);
	}
	xp_sort(pcs, n, sizeof(*pcs), cmp_u64);
	for (i = 0, k = 0; i < n; i++)
		if (!k || pcs[k - 1] != pcs[i])
			pcs[k++] = pcs[i];
	*nr = k;
	return pcs;
}

size_t stacktab_lower_bound(const uint64_t *pcs, size_t nr, uint64_t addr)
{
	return XP_PARTITION_POINT(0, nr, i, pcs[i] < addr);
}
