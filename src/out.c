/* SPDX-License-Identifier: MIT */
/*
 * The driver shared by every output writer: feeds the aggregated stacks
 * through a writer's begin/add/end.  The formats themselves live in
 * out_<format>.c.
 */
#include "out.h"
#include "aggregate.h"

int out_write(const struct out_ops *ops, FILE *f, const struct agg *a)
{
	struct out o = {
	    .ops = ops,
	    .f = f,
	    .info = {(const char *const *)a->names, a->nr_names, a->total_count, a->total_weight},
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

void out_put_name(FILE *f, const char *name)
{
	for (; *name; name++) {
		unsigned char c = (unsigned char)*name;

		putc(c < 0x20 || c == 0x7f ? '?' : c, f);
	}
}
