/* SPDX-License-Identifier: MIT */
/*
 * The call tree, callers above their callees (perf report -g caller): one
 * line per node of the tree of stacks merged from the root, with its total
 * share (samples through it), self share (samples ending in it) and
 * samples, drawn with ASCII branches so that it survives any terminal and
 * grep.  Siblings are sorted by total weight (or self, --sort self),
 * largest first, then by name; --limit N keeps the first N under each
 * node and --min-percent drops entries whose total share is below, with
 * their subtrees, and a last comment line counts what was left out.
 * A comparison (report --diff) shows each entry's change of total and
 * self share in points, with its total share in the base and in the new
 * profile (each of its own whole); --min-percent then keeps what reaches
 * it in either profile.
 */
#include "out.h"
#include "aggregate.h"
#include "calltree.h"
#include "err.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* The value of @n that siblings are sorted by: its total, or its self with --sort self. */
static uint64_t tree_key(const struct out *o, const struct calltree_node *n)
{
	return OUT_ROW_VALUE(o, n, o->info.opts->sort != OUT_SORT_SELF);
}

/* qsort_r order of sibling node ids, with the writer (@ctx) in tree_end. */
static int cmp_node(const void *a, const void *b, void *ctx)
{
	const struct out *o = ctx;
	const struct calltree *t = o->priv;
	const struct calltree_node *x = &t->nodes[*(const uint32_t *)a];
	const struct calltree_node *y = &t->nodes[*(const uint32_t *)b];
	uint64_t kx = tree_key(o, x), ky = tree_key(o, y);

	if (kx != ky)
		return (kx < ky) - (kx > ky);
	return strcmp(o->info.names[x->name], o->info.names[y->name]);
}

/* One level of the walk: the children of a node still to print. */
struct level {
	uint32_t *kids;
	size_t nr, next;
};

/* The children of @node that pass the filters; *@hidden counts the others. */
static struct level level_of(const struct out *o, uint32_t node, uint64_t whole, size_t *hidden)
{
	const struct out_opts *opts = o->info.opts;
	const struct calltree *t = o->priv;
	struct level l = {NULL, 0, 0};
	size_t i, keep = 0;

	l.kids = calltree_children(t, node, cmp_node, (void *)o, &l.nr);
	for (i = 0; i < l.nr; i++) {
		const struct calltree_node *n = &t->nodes[l.kids[i]];
		double share = out_share(OUT_ROW_VALUE(o, n, true), whole),
		       base = out_share(n->base_total, o->info.base_total);

		/* A comparison keeps what was big in either profile. */
		if (o->info.diff && base > share)
			share = base;
		if ((opts->limit && keep >= opts->limit) || share < opts->min_percent)
			continue;
		l.kids[keep++] = l.kids[i];
	}
	*hidden += l.nr - keep;
	l.nr = keep;
	return l;
}

static int tree_end(struct out *o)
{
	struct calltree *t = o->priv;
	uint64_t whole = o->info.total;
	struct level *stack = xp_calloc(t->max_depth + 2, sizeof(*stack));
	char *prefix = xp_malloc(3 * (size_t)(t->max_depth + 2) + 1);
	size_t depth = 0, hidden = 0;

	if (o->info.diff) {
		out_put_diff_header(o);
		fprintf(o->f, "#%8s %9s %9s %9s  %s\n", "Delta", "Base", "New", "Delta",
			"Call tree (callers above callees)");
		fprintf(o->f, "#%8s %9s %9s %9s\n", "total", "total%", "total%", "self");
	} else {
		fprintf(o->f, "# Samples: %" PRIu64 ", weight: %" PRIu64 "\n#\n",
			o->info.total_count, o->info.total_weight);
		fprintf(o->f, "#%8s %9s %9s  %s\n", "Total%", "Self%", "Samples",
			"Call tree (callers above callees)");
	}
	stack[0] = level_of(o, 0, whole, &hidden);
	for (;;) {
		struct level *l = &stack[depth];
		const struct calltree_node *n;
		bool last;
		size_t plen;

		if (l->next >= l->nr) {
			free(l->kids);
			if (!depth)
				break;
			depth--;
			continue;
		}
		n = &t->nodes[l->kids[l->next++]];
		last = l->next == l->nr;
		/* Ancestors below the top level draw a bar while they have siblings left. */
		plen = 0;
		for (size_t d = 1; d <= depth; d++) {
			memcpy(prefix + plen,
			       d == depth		     ? (last ? "`- " : "|- ")
			       : stack[d].next < stack[d].nr ? "|  "
							     : "   ",
			       3);
			plen += 3;
		}
		prefix[plen] = 0;
		if (o->info.diff) {
			uint64_t bw = o->info.base_total;
			double nt = out_share(OUT_ROW_VALUE(o, n, true), whole);
			double ns = out_share(OUT_ROW_VALUE(o, n, false), whole);

			fprintf(o->f, "%+8.2f%% %8.2f%% %8.2f%% %+8.2f%%  %s",
				out_points(nt, out_share(n->base_total, bw)),
				out_share(n->base_total, bw), nt,
				out_points(ns, out_share(n->base_self, bw)), prefix);
		} else {
			fprintf(o->f, "%8.2f%% %8.2f%% %9" PRIu64 "  %s",
				out_share(OUT_ROW_VALUE(o, n, true), whole),
				out_share(OUT_ROW_VALUE(o, n, false), whole), n->total_count,
				prefix);
		}
		out_put_name(o->f, o->info.names[n->name]);
		fputc('\n', o->f);
		stack[++depth] = level_of(o, (uint32_t)(n - t->nodes), whole, &hidden);
	}
	if (hidden)
		fprintf(o->f, "# %zu more entries below --min-percent or past --limit\n", hidden);
	free(prefix);
	free(stack);
	out_calltree_free(o);
	return 0;
}

OUT_WRITER(tree, OUT_DIFF, out_calltree_begin, out_calltree_add, tree_end);
