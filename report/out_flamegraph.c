/* SPDX-License-Identifier: MIT */
/*
 * The interactive flame graph: one self-contained HTML file (the page is
 * report/flamegraph.html, embedded at build time) holding the call tree as
 * JSON, which the page's script draws as SVG with hover details, click to
 * zoom and search, without any network access.  Frame widths are shares
 * of the total weight (of the sample count when every weight is 0); the
 * root is "all", then the frames from the callers up, siblings sorted by
 * name as flamegraph.pl does.  Frames narrower than FG_PRUNE_PPM parts per
 * million of the whole (0.01%: a tenth of a pixel on a 1200-pixel page)
 * are left out with everything above them, as flamegraph.pl's --minwidth
 * does, so a profile with hundreds of thousands of distinct stacks still
 * makes a page a browser opens at once; the page says how many frames and
 * how much of the weight that was.  The page culls what is too small to
 * see at the current zoom.
 *
 * Interpreter frames (Python functions) are drawn in their own colours,
 * green and blue, beside the warm colours of native code.
 *
 * A comparison (report --diff) is a differential flame graph as
 * flamegraph.pl draws one: the new profile's shape, each frame coloured
 * by the change of its share from the base profile (red grew, blue
 * shrank, white unchanged); frames only the base has are not drawn.
 */
#include "out.h"
#include "aggregate.h"
#include "calltree.h"
#include "err.h"

#include "flamegraph_html.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define TITLE_MARK "@XPROF_TITLE@"
#define DATA_MARK  "@XPROF_DATA@"

/* Frames narrower than this many parts per million of the whole are pruned. */
#define FG_PRUNE_PPM 100

/* What pruning left out: frames (with their callees) and the weight of the outermost. */
struct fg_pruned {
	uint64_t frames, value;
};

static int cmp_by_name(const void *a, const void *b, void *ctx)
{
	const struct out *o = ctx;
	const struct calltree *t = o->priv;

	return strcmp(o->info.names[t->nodes[*(const uint32_t *)a].name],
		      o->info.names[t->nodes[*(const uint32_t *)b].name]);
}

/*
 * The number of nodes in each node's subtree, itself included.  A node is
 * always added after its parent, so one pass from the end adds each into
 * its parent (no recursion: a hostile file can make a very deep tree).
 */
static uint32_t *subtree_sizes(const struct calltree *t)
{
	uint32_t *size = xp_malloc((t->nr + 1) * sizeof(*size));
	size_t i;

	for (i = 0; i < t->nr; i++)
		size[i] = 1;
	for (i = t->nr; i-- > 1;)
		size[t->nodes[i].parent] += size[i];
	return size;
}

static void put_html(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '<')
			fputs("&lt;", f);
		else if (c == '>')
			fputs("&gt;", f);
		else if (c == '&')
			fputs("&amp;", f);
		else if (c == '"')
			fputs("&quot;", f);
		else
			putc(c < 0x20 || c == 0x7f ? '?' : c, f);
	}
}

/*
 * The call tree in preorder, five numbers a node: parent, name, total,
 * self, samples; in a comparison a sixth: the total in the base profile,
 * scaled to this profile's whole.
 */
static void put_nodes(struct out *o, bool by_count, struct fg_pruned *pruned)
{
	const struct calltree *t = o->priv;
	uint32_t *order = xp_malloc(t->nr * sizeof(*order)); /* preorder position by node */
	uint32_t *todo = xp_malloc(t->nr * sizeof(*todo));
	size_t ntodo = 1, pos = 0, i, nkids;
	uint64_t whole = by_count ? t->nodes[0].total_count : t->nodes[0].total_weight;
	/* Widths below this are pruned; the product cannot overflow before a 2^44 ns whole. */
	double min = (double)whole * FG_PRUNE_PPM / 1e6;
	uint32_t *size = subtree_sizes(t);

	todo[0] = 0;
	while (ntodo) {
		uint32_t id = todo[--ntodo], *kids;
		const struct calltree_node *n = &t->nodes[id];
		uint64_t value = by_count ? n->total_count : n->total_weight;

		/* A comparison keeps what the base had too (it colours the frame below). */
		if (id && o->info.diff && out_scale_base(o, n->base_total) > value)
			value = out_scale_base(o, n->base_total);
		if (id && (double)value < min) {
			pruned->frames += size[id];
			pruned->value += by_count ? n->total_count : n->total_weight;
			continue;
		}

		order[id] = (uint32_t)pos;
		fprintf(o->f, "%s%" PRId64 ",%" PRId64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64,
			pos ? ",\n" : "", id ? (int64_t)order[n->parent] : -1,
			id ? (int64_t)n->name : -1, by_count ? n->total_count : n->total_weight,
			by_count ? n->self_count : n->self_weight, n->total_count);
		if (o->info.diff)
			fprintf(o->f, ",%" PRIu64, out_scale_base(o, n->base_total));
		pos++;
		/* Pushed in reverse so that they come out sorted. */
		kids = calltree_children(t, id, cmp_by_name, o, &nkids);
		for (i = nkids; i-- > 0;)
			todo[ntodo++] = kids[i];
		free(kids);
	}
	free(size);
	free(todo);
	free(order);
}

static void put_data(struct out *o)
{
	bool by_count = o->info.by_count;
	struct fg_pruned pruned = {0, 0};
	size_t i, n;

	fputs("{\"title\":", o->f);
	out_put_json_string(o->f, o->info.opts->title ? o->info.opts->title : "xprof");
	fprintf(o->f, ",\"unit\":\"%s\",\"wall\":%s,\"diff\":%s,\n", by_count ? "samples" : "ns",
		o->info.opts->wall ? "true" : "false", o->info.diff ? "true" : "false");
	if (o->info.diff) {
		fputs("\"base\":", o->f);
		out_put_json_string(o->f,
				    o->info.opts->base_title ? o->info.opts->base_title : "base");
		fputs(",\n", o->f);
	}
	fputs("\"names\":[", o->f);
	for (i = 0; i < o->info.nr_names; i++) {
		if (i)
			fputs(i % 8 ? "," : ",\n", o->f);
		out_put_json_string(o->f, o->info.names[i]);
	}
	/* The names of interpreter frames, which the page colours apart. */
	fputs("],\n\"interp\":[", o->f);
	for (i = 0, n = 0; i < o->info.nr_names; i++)
		if (agg_iname(o->info.agg, (uint32_t)i))
			fprintf(o->f, "%s%zu", n++ ? "," : "", i);
	fputs("],\n\"nodes\":[\n", o->f);
	put_nodes(o, by_count, &pruned);
	fprintf(o->f, "],\n\"pruned\":{\"ppm\":%d,\"frames\":%" PRIu64 ",\"value\":%" PRIu64 "}}",
		FG_PRUNE_PPM, pruned.frames, pruned.value);
}

static int fg_end(struct out *o)
{
	const char *page = (const char *)flamegraph_html;
	const char *title = strstr(page, TITLE_MARK), *data = strstr(page, DATA_MARK);

	if (!title || !data || data < title)
		XP_BUG("the flame graph page lacks its markers");
	fwrite(page, 1, (size_t)(title - page), o->f);
	fputs("xprof flame graph: ", o->f);
	put_html(o->f, o->info.opts->title ? o->info.opts->title : "profile");
	title += strlen(TITLE_MARK);
	fwrite(title, 1, (size_t)(data - title), o->f);
	put_data(o);
	fputs(data + strlen(DATA_MARK), o->f);
	out_calltree_free(o);
	return 0;
}

OUT_WRITER(flamegraph, OUT_DIFF, out_calltree_begin, out_calltree_add, fg_end);
