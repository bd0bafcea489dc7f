/* SPDX-License-Identifier: MIT */
/*
 * The flat profile: one row per function with its self share (samples
 * whose innermost frame it is) and total share (samples with it anywhere
 * on the stack, counted once per stack however deep it recurses), like
 * perf report's Self and Children columns and gprof's flat profile.
 * Shares are of the total weight (of the sample count with --value
 * samples); the sample counts are shown beside them.
 * Rows are sorted by self weight (or total, --sort total), largest first,
 * then by name; --limit and --min-percent cut the list, and a last comment
 * line says how many rows they left out.
 */
#include "out.h"
#include "aggregate.h"
#include "err.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct flat_func {
	uint64_t self_count, self_weight, total_count, total_weight;
	size_t seen; /* 1 + index of the last stack that counted this function's total */
};

struct flat {
	struct flat_func *fn; /* by name id */
	size_t stacks;
};

static int flat_begin(struct out *o)
{
	struct flat *fl = xp_calloc(1, sizeof(*fl));

	fl->fn = xp_calloc(o->info.nr_names, sizeof(*fl->fn));
	o->priv = fl;
	return 0;
}

static int flat_add(struct out *o, const struct agg_stack *s, uint64_t count, uint64_t weight)
{
	struct flat *fl = o->priv;
	struct flat_func *f;
	uint32_t i;

	fl->stacks++;
	for (i = 0; i < s->nr; i++) {
		f = &fl->fn[s->frames[i]];
		if (f->seen == fl->stacks)
			continue; /* recursion: once per stack */
		f->seen = fl->stacks;
		f->total_count += count;
		f->total_weight += weight;
	}
	if (s->nr) {
		f = &fl->fn[s->frames[s->nr - 1]];
		f->self_count += count;
		f->self_weight += weight;
	}
	return 0;
}

struct flat_sort {
	const struct flat_func *fn;
	const char *const *names;
	bool by_total, by_count;
};

static uint64_t flat_key(const struct flat_sort *fs, const struct flat_func *f)
{
	if (fs->by_total)
		return fs->by_count ? f->total_count : f->total_weight;
	return fs->by_count ? f->self_count : f->self_weight;
}

static int cmp_row(const void *a, const void *b, void *ctx)
{
	const struct flat_sort *fs = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint64_t wx = flat_key(fs, &fs->fn[x]), wy = flat_key(fs, &fs->fn[y]);

	if (wx != wy)
		return (wx < wy) - (wx > wy);
	return strcmp(fs->names[x], fs->names[y]);
}

static int flat_end(struct out *o)
{
	const struct out_opts *opts = o->info.opts;
	struct flat *fl = o->priv;
	uint64_t whole = o->info.total;
	struct flat_sort fs = {fl->fn, o->info.names, opts->sort == OUT_SORT_TOTAL,
			       o->info.by_count};
	uint32_t *rows = xp_malloc((o->info.nr_names + 1) * sizeof(*rows));
	size_t i, nr = 0, shown = 0;

	for (i = 0; i < o->info.nr_names; i++)
		if (fl->fn[i].total_count)
			rows[nr++] = (uint32_t)i;
	qsort_r(rows, nr, sizeof(*rows), cmp_row, &fs);
	fprintf(o->f, "# Samples: %" PRIu64 ", weight: %" PRIu64 "\n#\n", o->info.total_count,
		o->info.total_weight);
	fprintf(o->f, "#%8s %9s %9s %9s  %s\n", "Self%", "Total%", "Self", "Total", "Function");
	for (i = 0; i < nr; i++) {
		const struct flat_func *f = &fl->fn[rows[i]];

		if (opts->limit && shown >= opts->limit)
			break;
		if (out_share(flat_key(&fs, f), whole) < opts->min_percent)
			break; /* sorted by this key: every later row is smaller */
		fprintf(o->f, "%8.2f%% %8.2f%% %9" PRIu64 " %9" PRIu64 "  ",
			out_share(fs.by_count ? f->self_count : f->self_weight, whole),
			out_share(fs.by_count ? f->total_count : f->total_weight, whole),
			f->self_count, f->total_count);
		out_put_name(o->f, o->info.names[rows[i]]);
		fputc('\n', o->f);
		shown++;
	}
	if (shown < nr)
		fprintf(o->f, "# %zu more functions below --min-percent or past --limit\n",
			nr - shown);
	free(rows);
	free(fl->fn);
	free(fl);
	o->priv = NULL;
	return 0;
}

const struct out_ops out_flat = {
    .name = "flat",
    .begin = flat_begin,
    .add = flat_add,
    .end = flat_end,
};
