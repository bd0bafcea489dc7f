/* SPDX-License-Identifier: MIT */
/*
 * speedscope's JSON file format (https://www.speedscope.app/file-format-
 * schema.json; jlfwong/speedscope, src/lib/file-format-spec.ts): the frame
 * names once in shared.frames, then one "sampled" profile per thread,
 * named "comm/tid", whose samples are the thread's samples in time order
 * (frame indices from the root; consecutive samples of one stack merged
 * into one, their weights added), so speedscope's "Time Order" view shows
 * the run as it happened, and "Left Heavy" and "Sandwich" the shares.
 * The unit is nanoseconds (CPU time, or elapsed time with --mode wall),
 * or "none" with sample counts as weights (--value samples, or a profile
 * without weights); startValue is the time of the thread's first sample
 * since the start of recording.  Without a timeline (an aggregation built
 * without AGG_TIMELINE) each distinct stack is one sample.
 */
#include "out.h"
#include "aggregate.h"
#include "err.h"
#include "version.h"
#include "sorted.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static int ss_begin(struct out *o)
{
	(void)o;
	return 0;
}

/* Everything is written at the end, from the aggregation's stacks and timeline. */
static int ss_add(struct out *o, const struct agg_stack *s, uint64_t count, uint64_t weight)
{
	(void)o;
	(void)s;
	(void)count;
	(void)weight;
	return 0;
}

/* A profile per thread (per process when threads were not kept apart). */
static uint32_t profile_key(const struct agg_stack *s)
{
	return s->thread != AGG_NONE ? s->thread : s->comm;
}

static int cmp_key(const void *a, const void *b, void *ctx)
{
	const char *const *names = ctx;

	return strcmp(names[*(const uint32_t *)a], names[*(const uint32_t *)b]);
}

/* The samples of one profile: runs of one stack are one sample of their summed weight. */
struct ss_run {
	FILE *f;
	uint32_t stack; /* UINT32_MAX: none yet */
	uint64_t value, sum;
	struct {
		uint32_t *stack;
		uint64_t *value;
		size_t nr;
		unsigned long alloc_s, alloc_v;
	} out;
};

static void run_flush(struct ss_run *r)
{
	if (r->stack == UINT32_MAX)
		return;
	xp_grow((void **)&r->out.stack, &r->out.alloc_s, r->out.nr + 1, sizeof(*r->out.stack));
	xp_grow((void **)&r->out.value, &r->out.alloc_v, r->out.nr + 1, sizeof(*r->out.value));
	r->out.stack[r->out.nr] = r->stack;
	r->out.value[r->out.nr++] = r->value;
	r->stack = UINT32_MAX;
}

static void run_add(struct ss_run *r, uint32_t stack, uint64_t value)
{
	if (stack != r->stack) {
		run_flush(r);
		r->stack = stack;
		r->value = 0;
	}
	r->value += value;
	r->sum += value;
}

/* Print the profile named @key from the runs in @r (emptied). */
static void put_profile(struct out *o, const uint32_t *frame_of, uint32_t key, struct ss_run *r,
			uint64_t start, bool first)
{
	const struct agg *a = o->info.agg;
	size_t i;
	uint32_t f;

	run_flush(r);
	fputs(first ? "\n{" : ",\n{", o->f);
	fputs("\"type\":\"sampled\",\"name\":", o->f);
	out_put_json_string(o->f, o->info.names[key]);
	fprintf(o->f, ",\"unit\":\"%s\",\"startValue\":%" PRIu64 ",\"endValue\":%" PRIu64 ",\n",
		o->info.by_count ? "none" : "nanoseconds", start, start + r->sum);
	fputs("\"samples\":[", o->f);
	for (i = 0; i < r->out.nr; i++) {
		const struct agg_stack *s = &a->stacks[r->out.stack[i]];

		fputs(i ? ",\n[" : "\n[", o->f);
		for (f = 0; f < s->nr; f++)
			fprintf(o->f, "%s%" PRIu32, f ? "," : "", frame_of[s->frames[f]]);
		fputc(']', o->f);
	}
	fputs("],\n\"weights\":[", o->f);
	for (i = 0; i < r->out.nr; i++)
		fprintf(o->f, "%s%" PRIu64, i ? "," : "", r->out.value[i]);
	fputs("]}", o->f);
	r->out.nr = 0;
	r->sum = 0;
}

/*
 * The profiles from a timeline: every sample, in time order within each
 * profile.  @keys holds the profiles' keys in the order they are printed
 * (@nkeys of them), @rank each key's place in it; @r is the empty run
 * buffer put_profile uses.
 */
static void put_profiles_in_time(struct out *o, const uint32_t *frame_of, const uint32_t *rank,
				 const uint32_t *keys, size_t nkeys, struct ss_run *r)
{
	const struct agg *a = o->info.agg;
	size_t *first = xp_calloc(nkeys + 1, sizeof(*first));
	size_t *order = xp_malloc((a->nr_samples + 1) * sizeof(*order));
	size_t i, k;

	/* A counting sort by profile keeps the time order within each. */
	for (i = 0; i < a->nr_samples; i++)
		first[rank[profile_key(&a->stacks[a->samples[i].stack])] + 1]++;
	for (k = 0; k < nkeys; k++)
		first[k + 1] += first[k];
	for (i = 0; i < a->nr_samples; i++)
		order[first[rank[profile_key(&a->stacks[a->samples[i].stack])]]++] = i;
	for (k = 0, i = 0; k < nkeys; k++) {
		uint64_t start = i < a->nr_samples ? a->samples[order[i]].t : 0;

		for (; i < first[k]; i++) {
			const struct agg_sample *smp = &a->samples[order[i]];

			run_add(r, smp->stack, o->info.by_count ? 1 : smp->weight);
		}
		put_profile(o, frame_of, keys[k], r, start, k == 0);
	}
	free(first);
	free(order);
}

/* The same without a timeline: each distinct stack once, with its whole value. */
static void put_profiles_by_stack(struct out *o, const uint32_t *frame_of, const uint32_t *rank,
				  const uint32_t *keys, size_t nkeys, struct ss_run *r)
{
	const struct agg *a = o->info.agg;
	size_t i, k;

	for (k = 0; k < nkeys; k++) {
		for (i = 0; i < a->nr_stacks; i++)
			if (rank[profile_key(&a->stacks[i])] == k)
				run_add(r, (uint32_t)i,
					out_value(o, a->stacks[i].count, a->stacks[i].weight));
		put_profile(o, frame_of, keys[k], r, 0, k == 0);
	}
}

/* An interpreter frame's source file and line, as speedscope's frame has them. */
static void put_source(struct out *o, uint32_t name)
{
	const struct agg_iname *in = agg_iname(o->info.agg, name);

	if (!in)
		return;
	fputs(",\"file\":", o->f);
	out_put_json_string(o->f, o->info.names[in->file]);
	if (in->line)
		fprintf(o->f, ",\"line\":%u", in->line);
}

static int ss_end(struct out *o)
{
	const struct agg *a = o->info.agg;
	uint32_t *frame_of = xp_malloc((o->info.nr_names + 1) * sizeof(*frame_of));
	uint32_t *rank = xp_malloc((o->info.nr_names + 1) * sizeof(*rank));
	uint32_t *keys = xp_malloc((a->nr_stacks + 1) * sizeof(*keys));
	struct ss_run r = {.stack = UINT32_MAX};
	size_t i, j, k, nframes = 0, nkeys = 0;
	uint32_t f;

	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n", o->f);
	fputs("\"exporter\":\"xprof " XPROF_VERSION "\",\"name\":", o->f);
	out_put_json_string(o->f, o->info.opts->title ? o->info.opts->title : "xprof");
	/* Frames in the order they are first used by the (sorted) stacks. */
	fputs(",\"activeProfileIndex\":0,\n\"shared\":{\"frames\":[", o->f);
	for (i = 0; i < o->info.nr_names; i++) {
		frame_of[i] = UINT32_MAX;
		rank[i] = UINT32_MAX;
	}
	for (i = 0; i < a->nr_stacks; i++) {
		for (j = 0; j < a->stacks[i].nr; j++) {
			f = a->stacks[i].frames[j];
			if (frame_of[f] != UINT32_MAX)
				continue;
			frame_of[f] = (uint32_t)nframes;
			fputs(nframes ? ",\n{\"name\":" : "\n{\"name\":", o->f);
			out_put_json_string(o->f, o->info.names[f]);
			put_source(o, f);
			fputc('}', o->f);
			nframes++;
		}
		f = profile_key(&a->stacks[i]);
		if (rank[f] == UINT32_MAX) {
			rank[f] = 0;
			keys[nkeys++] = f;
		}
	}
	fputs("]},\n\"profiles\":[", o->f);
	xp_sort_r(keys, nkeys, sizeof(*keys), cmp_key, (void *)o->info.names);
	for (k = 0; k < nkeys; k++)
		rank[keys[k]] = (uint32_t)k;
	if (a->samples)
		put_profiles_in_time(o, frame_of, rank, keys, nkeys, &r);
	else
		put_profiles_by_stack(o, frame_of, rank, keys, nkeys, &r);
	fputs("]}\n", o->f);
	free(r.out.stack);
	free(r.out.value);
	free(keys);
	free(rank);
	free(frame_of);
	return 0;
}

OUT_WRITER(speedscope, OUT_THREADS | OUT_TIMELINE, ss_begin, ss_add, ss_end);
