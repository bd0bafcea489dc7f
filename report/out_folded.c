/* SPDX-License-Identifier: MIT */
/*
 * Folded stacks, the input of Brendan Gregg's flamegraph.pl and of most
 * flame graph tools: one line per distinct stack, the process name first
 * (as stackcollapse-perf.pl does; with --per-thread the "comm/tid" frame
 * stands in its place), then the frames from the root, joined
 * by ';', then a space and the stack's value: its weight in ns (CPU time, or
 * elapsed time with --mode wall) as every other format counts, or its number
 * of samples with --value samples or when the profile has no weights.  A
 * line of value 0 (weightless samples) is left out.  Lines are sorted
 * bytewise, so output is identical from run to run.  A ';' inside a name
 * would split a frame and a control character would break a line, so they
 * are printed as ':' and '?'.
 *
 * A comparison (report --diff) prints the two-column form that
 * difffolded.pl writes and flamegraph.pl draws as a differential flame
 * graph: "stack base new", the base profile's value scaled to the new
 * profile's whole (as difffolded.pl -n does), so a stack's two values
 * differ only where its share changed.
 */
#include "out.h"
#include "aggregate.h"
#include "err.h"
#include "sorted.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct folded_line {
	char *text;
	uint64_t value, base; /* base: in a comparison, the base profile's value, scaled */
};

struct folded {
	struct folded_line *lines;
	size_t nr;
	unsigned long alloc;
	char *buf; /* the line being built */
	unsigned long buf_alloc;
};

static int folded_begin(struct out *o)
{
	o->priv = xp_calloc(1, sizeof(struct folded));
	return 0;
}

static size_t append_name(struct folded *fo, size_t len, const char *name)
{
	size_t n = strlen(name), i;

	xp_grow((void **)&fo->buf, &fo->buf_alloc, len + n + 2, 1);
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];

		fo->buf[len++] = c == ';' ? ':' : (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	fo->buf[len] = 0;
	return len;
}

static int folded_add(struct out *o, const struct agg_stack *s, uint64_t count, uint64_t weight)
{
	struct folded *fo = o->priv;
	bool thread_root = o->info.agg->flags & AGG_THREAD_FRAME;
	size_t len;
	uint32_t i;

	/* The thread frame, when there is one, is the root: no process name before it. */
	len = thread_root ? append_name(fo, 0, "") : append_name(fo, 0, o->info.names[s->comm]);
	for (i = 0; i < s->nr; i++) {
		if (i || !thread_root)
			fo->buf[len++] = ';';
		len = append_name(fo, len, o->info.names[s->frames[i]]);
	}
	xp_grow((void **)&fo->lines, &fo->alloc, fo->nr + 1, sizeof(*fo->lines));
	fo->lines[fo->nr++] = (struct folded_line){xp_strdup(fo->buf), out_value(o, count, weight),
						   out_base_value(o, s)};
	return 0;
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(((const struct folded_line *)a)->text, ((const struct folded_line *)b)->text);
}

static int folded_end(struct out *o)
{
	struct folded *fo = o->priv;
	size_t i, j;

	xp_sort(fo->lines, fo->nr, sizeof(*fo->lines), cmp_line);
	for (i = 0; i < fo->nr; i = j) {
		uint64_t value = fo->lines[i].value, base = fo->lines[i].base;

		/* Stacks that differ only in characters replaced above are one line. */
		for (j = i + 1; j < fo->nr && !strcmp(fo->lines[j].text, fo->lines[i].text); j++) {
			value += fo->lines[j].value;
			base += fo->lines[j].base;
		}
		if (o->info.diff && (value || base))
			fprintf(o->f, "%s %" PRIu64 " %" PRIu64 "\n", fo->lines[i].text,
				out_scale_base(o, base), value);
		else if (!o->info.diff && value)
			fprintf(o->f, "%s %" PRIu64 "\n", fo->lines[i].text, value);
	}
	for (i = 0; i < fo->nr; i++)
		free(fo->lines[i].text);
	free(fo->lines);
	free(fo->buf);
	free(fo);
	o->priv = NULL;
	return 0;
}

OUT_WRITER(folded, OUT_DIFF, folded_begin, folded_add, folded_end);
