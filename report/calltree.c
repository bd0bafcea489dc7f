/* SPDX-License-Identifier: MIT */
/*
 * The call tree (see calltree.h): nodes in one array, children linked in
 * insertion order, and one hash table on (parent, name) to find a child
 * in constant time however many siblings it has.
 */
#include "calltree.h"
#include "err.h"
#include "hash.h"
#include "sorted.h"

#include <stdlib.h>
#include <string.h>

static uint64_t child_hash(uint32_t parent, uint32_t name)
{
	return xp_mix64((uint64_t)parent << 32 | name);
}

/* The hash of node @i of the tree @ctx, for xp_table_reserve. */
static uint64_t node_hash_of(const void *ctx, size_t i)
{
	const struct calltree_node *n = &((const struct calltree *)ctx)->nodes[i];

	return child_hash(n->parent, n->name);
}

void calltree_init(struct calltree *t)
{
	memset(t, 0, sizeof(*t));
	xp_grow((void **)&t->nodes, &t->alloc, 1, sizeof(*t->nodes));
	t->nodes[0] = (struct calltree_node){
	    .name = CALLTREE_NONE,
	    .parent = CALLTREE_NONE,
	    .first_child = CALLTREE_NONE,
	    .last_child = CALLTREE_NONE,
	    .next_sibling = CALLTREE_NONE,
	};
	t->nr = 1;
}

void calltree_release(struct calltree *t)
{
	free(t->nodes);
	xp_table_release(&t->children);
	memset(t, 0, sizeof(*t));
}

static uint32_t child(struct calltree *t, uint32_t parent, uint32_t name)
{
	struct xp_table *tab = &t->children;
	struct calltree_node *n, *p;
	size_t j;

	xp_table_reserve(tab, t->nr, node_hash_of, t);
	for (j = (size_t)child_hash(parent, name) & (tab->cap - 1); tab->slots[j];
	     j = (j + 1) & (tab->cap - 1)) {
		n = &t->nodes[tab->slots[j] - 1];
		if (n->parent == parent && n->name == name)
			return (uint32_t)(tab->slots[j] - 1);
	}
	if (t->nr >= CALLTREE_NONE)
		XP_BUG("call tree too large");
	xp_grow((void **)&t->nodes, &t->alloc, t->nr + 1, sizeof(*t->nodes));
	p = &t->nodes[parent];
	n = &t->nodes[t->nr];
	*n = (struct calltree_node){
	    .name = name,
	    .parent = parent,
	    .first_child = CALLTREE_NONE,
	    .last_child = CALLTREE_NONE,
	    .next_sibling = CALLTREE_NONE,
	    .depth = p->depth + 1,
	};
	if (n->depth > t->max_depth)
		t->max_depth = n->depth;
	/* Append, so children keep the order they were first met in. */
	if (p->last_child == CALLTREE_NONE)
		p->first_child = (uint32_t)t->nr;
	else
		t->nodes[p->last_child].next_sibling = (uint32_t)t->nr;
	p->last_child = (uint32_t)t->nr;
	p->nr_children++;
	tab->slots[j] = ++t->nr;
	return (uint32_t)(t->nr - 1);
}

void calltree_add(struct calltree *t, const uint32_t *frames, uint32_t nr, uint64_t count,
		  uint64_t weight)
{
	uint32_t node = 0, i;

	t->nodes[0].total_count += count;
	t->nodes[0].total_weight += weight;
	for (i = 0; i < nr; i++) {
		node = child(t, node, frames[i]);
		t->nodes[node].total_count += count;
		t->nodes[node].total_weight += weight;
	}
	t->nodes[node].self_count += count;
	t->nodes[node].self_weight += weight;
}

void calltree_add_base(struct calltree *t, const uint32_t *frames, uint32_t nr, uint64_t base)
{
	uint32_t node = 0, i;

	t->nodes[0].base_total += base;
	for (i = 0; i < nr; i++) {
		node = child(t, node, frames[i]);
		t->nodes[node].base_total += base;
	}
	t->nodes[node].base_self += base;
}

uint32_t *calltree_children(const struct calltree *t, uint32_t node,
			    int (*cmp)(const void *, const void *, void *), void *ctx, size_t *nr)
{
	const struct calltree_node *p = &t->nodes[node];
	uint32_t *out = xp_malloc((p->nr_children + 1) * sizeof(*out)), c;
	size_t n = 0;

	for (c = p->first_child; c != CALLTREE_NONE; c = t->nodes[c].next_sibling)
		out[n++] = c;
	if (cmp)
		xp_sort_r(out, n, sizeof(*out), cmp, ctx);
	*nr = n;
	return out;
}
