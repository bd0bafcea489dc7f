/* SPDX-License-Identifier: MIT */
/*
 * Stack interning (hash-consing): each distinct (pcs, flags) sequence gets
 * one id, so a sample is only (tid, time, stack id, weight) and every stack
 * is written to the data file once.  Owns copies of the stacks it has seen.
 * Not thread-safe; prints nothing.
 */
#ifndef XPROF_DATA_STACKTAB_H
#define XPROF_DATA_STACKTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct stacktab_entry {
	uint64_t hash;
	uint64_t id;
	uint32_t nr;
	uint32_t off; /* index of the first pc in the pool */
};

struct stacktab {
	struct stacktab_entry *slots; /* open addressing; id 0 = empty */
	unsigned long nslots, used;
	uint64_t *pcs;	/* pool of every stack's pcs */
	uint8_t *flags; /* pool of flags, parallel to pcs */
	unsigned long pool_nr, pool_alloc, flags_alloc;
	struct stacktab_entry *by_id; /* by_id[id - 1]: where stack id is in the pool */
	unsigned long by_id_alloc;
};

void stacktab_init(struct stacktab *t);
void stacktab_release(struct stacktab *t);

/*
 * Intern the stack; return its id (>= 1).  *@is_new tells whether this is
 * its first appearance (so the caller writes it out).
 */
uint64_t stacktab_intern(struct stacktab *t, const uint64_t *pcs, const uint8_t *flags, uint32_t nr,
			 bool *is_new);

/*
 * The frames of stack @id: *@pcs and *@flags point into the table (valid
 * until the next intern), the number of frames is returned; 0 for an
 * unknown id.
 */
uint32_t stacktab_get(const struct stacktab *t, uint64_t id, const uint64_t **pcs,
		      const uint8_t **flags);

/*
 * The distinct addresses to look up for the frames of every stack (the
 * pc-1 rule applied; system call and truncation markers and interpreter
 * frames left out), sorted,
 * in a new array of *@nr entries (free it).
 */
uint64_t *stacktab_sorted_pcs(const struct stacktab *t, size_t *nr);
/* Index of the first of the sorted @pcs that is >= @addr (@nr if none). */
size_t stacktab_lower_bound(const uint64_t *pcs, size_t nr, uint64_t addr);

#endif
