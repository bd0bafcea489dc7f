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
 *
 * A comparison (report --diff) shows per function the change of its self
 * and total shares in points, with the base's and the new profile's
 * shares (each of its own whole, so runs of different lengths compare),
 * sorted by the size of the change, largest first.
 */
#include "out.h"
#include "aggregate.h"
#include "err.h"
#include "sorted.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct flat_func {
	uint64_t self_count, self_weight, total_count, total_weight;
	uint64_t base_self, base_total; /* a comparison: the base profile's values */
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
	uint64_t base = out_base_value(o, s);
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
		f->base_total += base;
	}
	if (s->nr) {
		f = &fl->fn[s->frames[s->nr - 1]];
		f->self_count += count;
		f->self_weight += weight;
		f->base_self += base;
	}
	return 0;
}

/* Rows are sorted by total share with --sort total, else by self share. */
static bool flat_by_total(const struct out *o)
{
	return o->info.opts->sort == OUT_SORT_TOTAL;
}

/* The value of @f that the rows are sorted by. */
static uint64_t flat_key(const struct out *o, const struct flat_func *f)
{
	return OUT_ROW_VALUE(o, f, flat_by_total(o));
}

/* qsort_r order of function ids, with the writer (@ctx) in flat_end. */
static int cmp_row(const void *a, const void *b, void *ctx)
{
	const struct out *o = ctx;
	const struct flat *fl = o->priv;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint64_t wx = flat_key(o, &fl->fn[x]), wy = flat_key(o, &fl->fn[y]);

	if (wx != wy)
		return (wx < wy) - (wx > wy);
	return strcmp(o->info.names[x], o->info.names[y]);
}

/* The last line (what --limit and --min-percent left out of @nr rows), and free all. */
static int flat_finish(struct out *o, uint32_t *rows, size_t nr, size_t shown)
{
	struct flat *fl = o->priv;

	if (shown < nr)
		fprintf(o->f, "# %zu more functions below --min-percent or past --limit\n",
			nr - shown);
	free(rows);
	free(fl->fn);
	free(fl);
	o->priv = NULL;
	return 0;
}

/* Change of the self (or @total) share of @f in points: new share minus base share. */
static double diff_delta(const struct out *o, const struct flat_func *f, bool total)
{
	return out_points(out_share(OUT_ROW_VALUE(o, f, total), o->info.total),
			  out_share(total ? f->base_total : f->base_self, o->info.base_total));
}

/*
 * qsort_r order of a comparison's rows, with the writer (@ctx): what
 * changed most, by self share (or total), first.
 */
static int cmp_diff_row(const void *a, const void *b, void *ctx)
{
	const struct out *o = ctx;
	const struct flat *fl = o->priv;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	double dx = diff_delta(o, &fl->fn[x], flat_by_total(o));
	double dy = diff_delta(o, &fl->fn[y], flat_by_total(o));

	dx = dx < 0 ? -dx : dx;
	dy = dy < 0 ? -dy : dy;
	if (dx != dy)
		return (dx < dy) - (dx > dy);
	return strcmp(o->info.names[x], o->info.names[y]);
}

static int flat_diff_end(struct out *o)
{
	const struct out_opts *opts = o->info.opts;
	struct flat *fl = o->priv;
	uint64_t base_whole = o->info.base_total;
	uint32_t *rows = xp_malloc((o->info.nr_names + 1) * sizeof(*rows));
	size_t i, nr = 0, shown = 0;

	for (i = 0; i < o->info.nr_names; i++)
		if (fl->fn[i].total_count || fl->fn[i].base_total)
			rows[nr++] = (uint32_t)i;
	xp_sort_r(rows, nr, sizeof(*rows), cmp_diff_row, o);
	out_put_diff_header(o);
	fprintf(o->f, "#%8s %9s %9s %9s %9s %9s  %s\n", "Delta", "Base", "New", "Delta", "Base",
		"New", "Function");
	fprintf(o->f, "#%8s %9s %9s %9s %9s %9s\n", "self", "self%", "self%", "total", "total%",
		"total%");
	for (i = 0; i < nr; i++) {
		const struct flat_func *f = &fl->fn[rows[i]];
		double d = diff_delta(o, f, flat_by_total(o));

		if (opts->limit && shown >= opts->limit)
			break;
		if ((d < 0 ? -d : d) < opts->min_percent)
			break; /* sorted by this: every later row changed less */
		fprintf(o->f, "%+8.2f%% %8.2f%% %8.2f%% %+8.2f%% %8.2f%% %8.2f%%  ",
			diff_delta(o, f, false), out_share(f->base_self, base_whole),
			out_share(OUT_ROW_VALUE(o, f, false), o->info.total),
			diff_delta(o, f, true), out_share(f->base_total, base_whole),
			out_share(OUT_ROW_VALUE(o, f, true), o->info.total));
		out_put_name(o->f, o->info.names[rows[i]]);
		fputc('\n', o->f);
		shown++;
	}
	return flat_finish(o, rows, nr, shown);
}

static int flat_end(struct out *o)
{
	const struct out_opts *opts = o->info.opts;
	struct flat *fl = o->priv;
	uint64_t whole = o->info.total;
	uint32_t *rows;
	size_t i, nr = 0, shown = 0;

	if (o->info.diff)
		return flat_diff_end(o);
	rows = xp_malloc((o->info.nr_names + 1) * sizeof(*rows));
	for (i = 0; i < o->info.nr_names; i++)
		if (fl->fn[i].total_count)
			rows[nr++] = (uint32_t)i;
	xp_sort_r(rows, nr, sizeof(*rows), cmp_row, o);
	fprintf(o->f, "# Samples: %" PRIu64 ", weight: %" PRIu64 "\n#\n", o->info.total_count,
		o->info.total_weight);
	fprintf(o->f, "#%8s %9s %9s %9s  %s\n", "Self%", "Total%", "Self", "Total", "Function");
	for (i = 0; i < nr; i++) {
		const struct flat_func *f = &fl->fn[rows[i]];

		if (opts->limit && shown >= opts->limit)
			break;
		if (out_share(flat_key(o, f), whole) < opts->min_percent)
			break; /* sorted by this key: every later row is smaller */
		fprintf(o->f, "%8.2f%% %8.2f%% %9" PRIu64 " %9" PRIu64 "  ",
			out_share(OUT_ROW_VALUE(o, f, false), whole),
			out_share(OUT_ROW_VALUE(o, f, true), whole), f->self_count, f->total_count);
		out_put_name(o->f, o->info.names[rows[i]]);
		fputc('\n', o->f);
		shown++;
	}
	return flat_finish(o, rows, nr, shown);
}

OUT_WRITER(flat, OUT_DIFF, flat_begin, flat_add, flat_end);
