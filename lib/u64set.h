/* SPDX-License-Identifier: MIT */
/*
 * A set of non-zero 64-bit keys (stack ids, addresses): open addressing
 * with linear probing, a power-of-two capacity from 16 up, at most 3/4
 * full.  Small while small: one per process image costs nothing for a
 * process that is sampled a few times.  Header-only; not thread-safe.
 */
#ifndef XPROF_LIB_U64SET_H
#define XPROF_LIB_U64SET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "err.h"
#include "hash.h"

struct xp_u64set {
	uint64_t *slots; /* 0: empty */
	size_t cap, nr;
};

static inline void xp_u64set_release(struct xp_u64set *s)
{
	free(s->slots);
	s->slots = NULL;
	s->cap = s->nr = 0;
}

/* Put @key (non-zero) in its place among @cap slots (a power of two). */
static inline void xp_u64set_place(uint64_t *slots, size_t cap, uint64_t key)
{
	size_t j = (size_t)xp_mix64(key) & (cap - 1);

	while (slots[j] && slots[j] != key)
		j = (j + 1) & (cap - 1);
	slots[j] = key;
}

/* Add @key (non-zero): true when it was not in the set yet. */
static inline bool xp_u64set_add(struct xp_u64set *s, uint64_t key)
{
	size_t j;

	if ((s->nr + 1) * 4 > s->cap * 3) {
		size_t cap = s->cap ? s->cap * 2 : 16, i;
		uint64_t *slots = xp_calloc(cap, sizeof(*slots));

		for (i = 0; i < s->cap; i++)
			if (s->slots[i])
				xp_u64set_place(slots, cap, s->slots[i]);
		free(s->slots);
		s->slots = slots;
		s->cap = cap;
	}
	j = (size_t)xp_mix64(key) & (s->cap - 1);
	while (s->slots[j]) {
		if (s->slots[j] == key)
			return false;
		j = (j + 1) & (s->cap - 1);
	}
	s->slots[j] = key;
	s->nr++;
	return true;
}

#endif
