/* SPDX-License-Identifier: MIT */
/*
 * A call tree: aggregated stacks merged by common prefix from the root,
 * each node a frame name under its caller with the samples of every stack
 * through it (total) and of those ending in it (self).  It is what the
 * tree and flame graph writers draw.  A recursive function appears once
 * per level, as in a flame graph.  Prints nothing.  Not thread-safe.
 */
#ifndef XPROF_REPORT_CALLTREE_H
#define XPROF_REPORT_CALLTREE_H

#include <stddef.h>
#include <stdint.h>

#include "table.h"

#define CALLTREE_NONE UINT32_MAX

struct calltree_node {
	uint32_t name;	 /* name id (agg.names); CALLTREE_NONE for the root */
	uint32_t parent; /* CALLTREE_NONE for the root */
	uint32_t first_child, last_child, next_sibling; /* in insertion order */
	uint32_t nr_children;
	uint32_t depth; /* 0 for the root */
	uint64_t self_count, self_weight, total_count, total_weight;
	uint64_t base_self, base_total; /* calltree_add_base: a base profile's values */
};

struct calltree {
	struct calltree_node *nodes; /* nodes[0] is the root, which stands for every stack */
	size_t nr;
	uint32_t max_depth;

	unsigned long alloc;
	/*
	 * Finds a child by (parent, name).  From the first lookup on it holds
	 * the root too, under (CALLTREE_NONE, CALLTREE_NONE), which no lookup
	 * asks for.
	 */
	struct xp_table children;
};

/* An empty tree: the root alone. */
void calltree_init(struct calltree *t);
void calltree_release(struct calltree *t);

/* Add the stack @frames (@nr name ids, root first) with its samples. */
void calltree_add(struct calltree *t, const uint32_t *frames, uint32_t nr, uint64_t count,
		  uint64_t weight);

/*
 * Add the value @base of the stack @frames in a base profile (a
 * comparison): to base_total along the path, to base_self at its end.
 * Nodes only the base has are created, with zero counts and weights.
 */
void calltree_add_base(struct calltree *t, const uint32_t *frames, uint32_t nr, uint64_t base);

/*
 * The children of @node, sorted with @cmp (qsort_r style, on node indices,
 * with @ctx).  Returns a malloc'ed array of *@nr indices (free it).
 */
uint32_t *calltree_children(const struct calltree *t, uint32_t node,
			    int (*cmp)(const void *, const void *, void *), void *ctx, size_t *nr);

#endif
