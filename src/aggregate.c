/* SPDX-License-Identifier: MIT */
/*
 * Aggregation in two passes: samples into groups keyed by (pid, epoch,
 * stack), then each group named once through the resolver and merged with
 * the groups whose names are equal.  Names are interned to dense ids so
 * stacks compare as integer arrays and writers can tally per function in
 * plain arrays.  No symbolization logic lives here.
 */
#include "aggregate.h"
#include "err.h"
#include "hash.h"
#include "profile.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct group {
	pid_t pid;
	uint64_t epoch;
	size_t stack; /* index into profile.stacks */
	uint64_t t;   /* of the first sample */
	uint64_t count, weight;
};

/* Open-addressing tables of index + 1 (0: empty slot), used while building. */
struct table {
	size_t *slots;
	size_t cap;
};

/* Make room for one more entry when @nr are in; @hash_of rehashes entry i. */
static void table_reserve(struct table *t, size_t nr, uint64_t (*hash_of)(const void *, size_t),
			  const void *ctx)
{
	size_t i, j;

	if ((nr + 1) * 4 <= t->cap * 3)
		return;
	free(t->slots);
	t->cap = t->cap ? t->cap * 2 : 1024;
	t->slots = xp_calloc(t->cap, sizeof(*t->slots));
	for (i = 0; i < nr; i++) {
		j = (size_t)hash_of(ctx, i) & (t->cap - 1);
		while (t->slots[j])
			j = (j + 1) & (t->cap - 1);
		t->slots[j] = i + 1;
	}
}

void agg_init(struct agg *a)
{
	memset(a, 0, sizeof(*a));
}

void agg_release(struct agg *a)
{
	size_t i;

	for (i = 0; i < a->nr_names; i++)
		free(a->names[i]);
	for (i = 0; i < a->nr_stacks; i++)
		free((uint32_t *)a->stacks[i].frames);
	free(a->names);
	free(a->stacks);
	memset(a, 0, sizeof(*a));
}

/* ---- names --------------------------------------------------------------- */

static uint64_t name_hash(const char *s)
{
	return xp_mix64(xp_fnv1a(XP_FNV_INIT, s, strlen(s)));
}

static uint64_t name_hash_of(const void *ctx, size_t i)
{
	return name_hash(((const struct agg *)ctx)->names[i]);
}

static uint32_t intern(struct agg *a, struct table *t, const char *s)
{
	size_t j;

	table_reserve(t, a->nr_names, name_hash_of, a);
	for (j = (size_t)name_hash(s) & (t->cap - 1); t->slots[j]; j = (j + 1) & (t->cap - 1))
		if (!strcmp(a->names[t->slots[j] - 1], s))
			return (uint32_t)(t->slots[j] - 1);
	if (a->nr_names >= UINT32_MAX)
		XP_BUG("more than 2^32 distinct frame names");
	xp_grow((void **)&a->names, &a->alloc_names, a->nr_names + 1, sizeof(*a->names));
	a->names[a->nr_names] = xp_strdup(s);
	t->slots[j] = ++a->nr_names;
	return (uint32_t)(a->nr_names - 1);
}

/* ---- symbolized stacks --------------------------------------------------- */

static uint64_t stack_hash(uint32_t comm, const uint32_t *frames, uint32_t nr)
{
	uint64_t h = xp_fnv1a(XP_FNV_INIT, &comm, sizeof(comm));

	return xp_mix64(xp_fnv1a(h, frames, nr * sizeof(*frames)) ^ nr);
}

static uint64_t stack_hash_of(const void *ctx, size_t i)
{
	const struct agg_stack *s = &((const struct agg *)ctx)->stacks[i];

	return stack_hash(s->comm, s->frames, s->nr);
}

static void add_stack(struct agg *a, struct table *t, uint32_t comm, const uint32_t *frames,
		      uint32_t nr, uint64_t count, uint64_t weight)
{
	struct agg_stack *s;
	uint32_t *copy;
	size_t j;

	table_reserve(t, a->nr_stacks, stack_hash_of, a);
	for (j = (size_t)stack_hash(comm, frames, nr) & (t->cap - 1); t->slots[j];
	     j = (j + 1) & (t->cap - 1)) {
		s = &a->stacks[t->slots[j] - 1];
		if (s->comm == comm && s->nr == nr &&
		    !memcmp(s->frames, frames, nr * sizeof(*frames))) {
			s->count += count;
			s->weight += weight;
			return;
		}
	}
	xp_grow((void **)&a->stacks, &a->alloc_stacks, a->nr_stacks + 1, sizeof(*a->stacks));
	copy = xp_malloc(nr * sizeof(*copy));
	memcpy(copy, frames, nr * sizeof(*copy));
	a->stacks[a->nr_stacks] = (struct agg_stack){comm, nr, copy, count, weight};
	t->slots[j] = ++a->nr_stacks;
}

static int cmp_stack(const void *x, const void *y, void *ctx)
{
	const struct agg_stack *a = x, *b = y;
	char *const *names = ctx;
	uint32_t i;
	int c;

	c = strcmp(names[a->comm], names[b->comm]);
	for (i = 0; !c && i < a->nr && i < b->nr; i++)
		c = strcmp(names[a->frames[i]], names[b->frames[i]]);
	if (c)
		return c;
	return (a->nr > b->nr) - (a->nr < b->nr);
}

/* ---- samples into groups ------------------------------------------------- */

struct groups {
	struct group *g;
	size_t nr;
	unsigned long alloc;
	struct table t;
};

static uint64_t group_hash(pid_t pid, uint64_t epoch, size_t stack)
{
	return xp_mix64(xp_mix64((uint64_t)(uint32_t)pid ^ epoch << 32) ^ stack);
}

static uint64_t group_hash_of(const void *ctx, size_t i)
{
	const struct group *g = &((const struct groups *)ctx)->g[i];

	return group_hash(g->pid, g->epoch, g->stack);
}

static void group_samples(struct groups *gs, const struct profile *p)
{
	size_t i, j;

	for (i = 0; i < p->nr_samples; i++) {
		const struct profile_sample *s = &p->samples[i];
		uint64_t epoch = profile_epoch(p, s->pid, s->t);
		struct group *g = NULL;

		table_reserve(&gs->t, gs->nr, group_hash_of, gs);
		for (j = (size_t)group_hash(s->pid, epoch, s->stack) & (gs->t.cap - 1);
		     gs->t.slots[j]; j = (j + 1) & (gs->t.cap - 1)) {
			g = &gs->g[gs->t.slots[j] - 1];
			if (g->pid == s->pid && g->epoch == epoch && g->stack == s->stack)
				break;
			g = NULL;
		}
		if (!g) {
			xp_grow((void **)&gs->g, &gs->alloc, gs->nr + 1, sizeof(*gs->g));
			g = &gs->g[gs->nr];
			*g = (struct group){s->pid, epoch, s->stack, s->t, 0, 0};
			gs->t.slots[j] = ++gs->nr;
		}
		g->count++;
		g->weight += s->weight;
	}
}

static unsigned int hex_label(const struct agg_frame_req *req, const char **labels, char *buf,
			      size_t len)
{
	snprintf(buf, len, "%#" PRIx64, req->pc);
	labels[0] = buf;
	return 1;
}

void agg_build(struct agg *a, const struct profile *p, agg_resolve_fn resolve, void *ctx)
{
	struct groups gs = {0};
	struct table names = {0}, stacks = {0};
	const char *labels[AGG_MAX_LABELS];
	uint32_t *frames = NULL;
	unsigned long alloc = 0;
	char hexbuf[32], commbuf[32];
	size_t i;

	group_samples(&gs, p);
	/* Never NULL, even for empty stacks: memcmp/memcpy of NULL is undefined. */
	xp_grow((void **)&frames, &alloc, 1, sizeof(*frames));
	for (i = 0; i < gs.nr; i++) {
		const struct group *g = &gs.g[i];
		const struct profile_stack *st = &p->stacks[g->stack];
		const char *comm = profile_comm(p, g->pid, g->t);
		uint32_t f, n = 0;

		for (f = st->nr; f-- > 0;) {
			struct agg_frame_req req = {g->pid, g->t, st->pcs[f], st->flags[f]};
			unsigned int k;

			if (resolve)
				k = resolve(ctx, &req, labels, AGG_MAX_LABELS);
			else
				k = hex_label(&req, labels, hexbuf, sizeof(hexbuf));
			if (!k) {
				labels[0] = "[unknown]";
				k = 1;
			}
			if (k > AGG_MAX_LABELS)
				k = AGG_MAX_LABELS;
			xp_grow((void **)&frames, &alloc, (unsigned long)n + k, sizeof(*frames));
			/* Labels come innermost first; stacks are stored root first. */
			while (k--)
				frames[n++] = intern(a, &names, labels[k]);
		}
		if (!comm) {
			snprintf(commbuf, sizeof(commbuf), "pid-%d", (int)g->pid);
			comm = commbuf;
		}
		add_stack(a, &stacks, intern(a, &names, comm), frames, n, g->count, g->weight);
		a->total_count += g->count;
		a->total_weight += g->weight;
	}
	/* Never qsort(NULL, 0): glibc declares the array nonnull (UBSan aborts on it). */
	if (a->nr_stacks > 1)
		qsort_r(a->stacks, a->nr_stacks, sizeof(*a->stacks), cmp_stack, a->names);
	free(frames);
	free(gs.g);
	free(gs.t.slots);
	free(names.slots);
	free(stacks.slots);
}
