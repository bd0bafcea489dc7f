/* SPDX-License-Identifier: MIT */
/*
 * speedscope's JSON file format (https://www.speedscope.app/file-format-
 * schema.json; jlfwong/speedscope, src/lib/file-format-spec.ts): the frame
 * names once in shared.frames, then one "sampled" profile per thread,
 * named "comm/tid", whose samples are its distinct stacks (frame indices
 * from the root) with their weights.  The unit is nanoseconds (CPU time,
 * or elapsed time with --mode wall), or "none" with sample counts as
 * weights when the profile has no weights.  Stacks are aggregated, so the
 * "Time Order" view shows them merged rather than in time order; "Left
 * Heavy" and "Sandwich" show the true shares.
 */
#include "out.h"
#include "aggregate.h"
#include "err.h"
#include "version.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct speedscope {
	const struct agg_stack **stacks; /* in the order given */
	size_t nr;
	unsigned long alloc;
};

static int ss_begin(struct out *o)
{
	o->priv = xp_calloc(1, sizeof(struct speedscope));
	return 0;
}

static int ss_add(struct out *o, const struct agg_stack *s, uint64_t count, uint64_t weight)
{
	struct speedscope *ss = o->priv;

	(void)count;
	(void)weight;
	xp_grow((void **)&ss->stacks, &ss->alloc, ss->nr + 1, sizeof(*ss->stacks));
	ss->stacks[ss->nr++] = s;
	return 0;
}

/* A profile per thread (per process when threads were not kept apart). */
static uint32_t profile_key(const struct agg_stack *s)
{
	return s->thread != AGG_NONE ? s->thread : s->comm;
}

static int cmp_profile(const void *a, const void *b, void *ctx)
{
	const char *const *names = ctx;
	const struct agg_stack *x = *(const struct agg_stack *const *)a;
	const struct agg_stack *y = *(const struct agg_stack *const *)b;
	int c = strcmp(names[profile_key(x)], names[profile_key(y)]);

	/* Keep the given (deterministic) order within a profile. */
	return c ? c : (x > y) - (x < y);
}

static int ss_end(struct out *o)
{
	struct speedscope *ss = o->priv;
	bool by_count = o->info.by_count;
	uint32_t *frame_of = xp_malloc((o->info.nr_names + 1) * sizeof(*frame_of));
	size_t i, j, nframes = 0, nprof = 0;
	uint32_t f;

	if (ss->nr)
		qsort_r(ss->stacks, ss->nr, sizeof(*ss->stacks), cmp_profile,
			(void *)o->info.names);
	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n", o->f);
	fputs("\"exporter\":\"xprof " XPROF_VERSION "\",\"name\":", o->f);
	out_put_json_string(o->f, o->info.opts->title ? o->info.opts->title : "xprof");
	/* Frames in the order they are first used. */
	fputs(",\"activeProfileIndex\":0,\n\"shared\":{\"frames\":[", o->f);
	for (i = 0; i < o->info.nr_names; i++)
		frame_of[i] = UINT32_MAX;
	for (i = 0; i < ss->nr; i++) {
		for (j = 0; j < ss->stacks[i]->nr; j++) {
			f = ss->stacks[i]->frames[j];
			if (frame_of[f] != UINT32_MAX)
				continue;
			frame_of[f] = (uint32_t)nframes;
			fputs(nframes ? ",\n{\"name\":" : "\n{\"name\":", o->f);
			out_put_json_string(o->f, o->info.names[f]);
			fputc('}', o->f);
			nframes++;
		}
	}
	fputs("]},\n\"profiles\":[", o->f);
	for (i = 0; i < ss->nr; i = j) {
		uint32_t key = profile_key(ss->stacks[i]);
		uint64_t end = 0;

		for (j = i; j < ss->nr && profile_key(ss->stacks[j]) == key; j++)
			end += by_count ? ss->stacks[j]->count : ss->stacks[j]->weight;
		fputs(nprof++ ? ",\n{" : "\n{", o->f);
		fputs("\"type\":\"sampled\",\"name\":", o->f);
		out_put_json_string(o->f, o->info.names[key]);
		fprintf(o->f, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%" PRIu64 ",\n",
			by_count ? "none" : "nanoseconds", end);
		fputs("\"samples\":[", o->f);
		for (j = i; j < ss->nr && profile_key(ss->stacks[j]) == key; j++) {
			const struct agg_stack *s = ss->stacks[j];

			fputs(j > i ? ",\n[" : "\n[", o->f);
			for (f = 0; f < s->nr; f++)
				fprintf(o->f, "%s%" PRIu32, f ? "," : "", frame_of[s->frames[f]]);
			fputc(']', o->f);
		}
		fputs("],\n\"weights\":[", o->f);
		for (j = i; j < ss->nr && profile_key(ss->stacks[j]) == key; j++)
			fprintf(o->f, "%s%" PRIu64, j > i ? "," : "",
				by_count ? ss->stacks[j]->count : ss->stacks[j]->weight);
		fputs("]}", o->f);
	}
	fputs("]}\n", o->f);
	free(frame_of);
	free(ss->stacks);
	free(ss);
	o->priv = NULL;
	return 0;
}

const struct out_ops out_speedscope = {
    .name = "speedscope",
    .flags = OUT_THREADS,
    .begin = ss_begin,
    .add = ss_add,
    .end = ss_end,
};
