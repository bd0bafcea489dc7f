/* SPDX-License-Identifier: MIT */
/*
 * The driver shared by every output writer: feeds the aggregated stacks
 * through a writer's begin/add/end, the escaping helpers the text formats
 * share, and the call tree the call-tree writers build.  The formats
 * themselves live in out_<format>.c.
 */
#include "out.h"
#include "aggregate.h"
#include "calltree.h"
#include "err.h"

#include <inttypes.h>
#include <stdlib.h>

int out_write_opts(const struct out_ops *ops, FILE *f, const struct agg *a,
		   const struct out_opts *opts)
{
	static const struct out_opts defaults;
	const struct out_opts *oo = opts ? opts : &defaults;
	bool by_count = oo->samples || !a->total_weight || (a->has_base && !a->base_total_weight);
	struct out o = {
	    .ops = ops,
	    .f = f,
	    .info = {(const char *const *)a->names, a->nr_names, a->total_count, a->total_weight,
		     by_count, by_count ? a->total_count : a->total_weight,
		     a->has_base && (ops->flags & OUT_DIFF),
		     by_count ? a->base_total_count : a->base_total_weight, a, oo},
	};
	size_t i;
	int ret = 0;

	if (ops->begin(&o))
		return -1;
	for (i = 0; i < a->nr_stacks && !ret; i++)
		ret = ops->add(&o, &a->stacks[i], a->stacks[i].count, a->stacks[i].weight);
	if (ops->end(&o))
		ret = -1;
	return ret;
}

void out_put_diff_header(struct out *o)
{
	const struct out_opts *opts = o->info.opts;

	fputs("# Comparison of ", o->f);
	out_put_name(o->f, opts->base_title ? opts->base_title : "base");
	fputs(" (base) with ", o->f);
	out_put_name(o->f, opts->title ? opts->title : "new");
	fprintf(o->f, " (new), shares of each one's %s\n", o->info.by_count ? "samples" : "weight");
	fprintf(o->f, "# Samples: %" PRIu64 " (base), %" PRIu64 " (new)\n#\n",
		o->info.agg->base_total_count, o->info.total_count);
}

uint64_t out_base_value(const struct out *o, const struct agg_stack *s)
{
	return o->info.diff ? out_value(o, s->base_count, s->base_weight) : 0;
}

uint64_t out_scale_base(const struct out *o, uint64_t base_value)
{
	if (!o->info.base_total)
		return 0;
	return (uint64_t)((double)base_value * (double)o->info.total / (double)o->info.base_total +
			  0.5);
}

int out_write(const struct out_ops *ops, FILE *f, const struct agg *a)
{
	return out_write_opts(ops, f, a, NULL);
}

void out_put_name(FILE *f, const char *name)
{
	for (; *name; name++) {
		unsigned char c = (unsigned char)*name;

		putc(c < 0x20 || c == 0x7f ? '?' : c, f);
	}
}

double out_share(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

double out_points(double now, double before)
{
	double d = now - before;

	return d > -0.005 && d < 0.005 ? 0 : d;
}

/* Length of the valid UTF-8 sequence at @s (1..4), or 0 if it is not one. */
static size_t utf8_len(const unsigned char *s)
{
	uint32_t cp;
	size_t n, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	cp = s[0] & (0x7f >> n);
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0; /* also stops at the terminating NUL */
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and values past U+10FFFF are not UTF-8. */
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

void out_put_json_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	putc('"', f);
	while (*p) {
		size_t n = utf8_len(p);

		if (!n) {
			fputs("\\ufffd", f);
			p++;
		} else if (n > 1) {
			/* U+2028 and U+2029 end a line in older JavaScript. */
			if (n == 3 && p[0] == 0xe2 && p[1] == 0x80 &&
			    (p[2] == 0xa8 || p[2] == 0xa9))
				fprintf(f, "\\u%04x", p[2] == 0xa8 ? 0x2028 : 0x2029);
			else
				fwrite(p, 1, n, f);
			p += n;
		} else if (*p == '"' || *p == '\\') {
			putc('\\', f);
			putc(*p++, f);
		} else if (*p < 0x20 || *p == 0x7f || *p == '<' || *p == '>' || *p == '&') {
			fprintf(f, "\\u%04x", *p++);
		} else {
			putc(*p++, f);
		}
	}
	putc('"', f);
}

int out_calltree_begin(struct out *o)
{
	struct calltree *t = xp_malloc(sizeof(*t));

	calltree_init(t);
	o->priv = t;
	return 0;
}

int out_calltree_add(struct out *o, const struct agg_stack *s, uint64_t count, uint64_t weight)
{
	calltree_add(o->priv, s->frames, s->nr, count, weight);
	if (o->info.diff)
		calltree_add_base(o->priv, s->frames, s->nr, out_base_value(o, s));
	return 0;
}

void out_calltree_free(struct out *o)
{
	calltree_release(o->priv);
	free(o->priv);
	o->priv = NULL;
}
