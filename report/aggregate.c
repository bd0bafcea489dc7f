/* SPDX-License-Identifier: MIT */
/*
 * Aggregation in two passes: samples into groups keyed by (pid, epoch,
 * stack), then each group named once through the resolver and merged with
 * the groups whose names are equal.  Names are interned to dense ids so
 * stacks compare as integer arrays and writers can tally per function in
 * plain arrays.  Filters are applied to each sample before grouping.  No
 * symbolization logic lives here: a frame's mapping is looked up only to
 * record where it came from (AGG_LOCATIONS).
 */
#include "aggregate.h"
#include "err.h"
#include "hash.h"
#include "table.h"
#include "profile.h"
#include "dataformat.h"
#include "sorted.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct group {
	pid_t pid, tid; /* tid 0 unless threads are kept apart */
	uint64_t epoch;
	size_t stack; /* index into profile.stacks */
	uint64_t t;   /* of the first sample */
	uint64_t count, weight;
};

void agg_init(struct agg *a)
{
	memset(a, 0, sizeof(*a));
}

void agg_release(struct agg *a)
{
	size_t i;

	for (i = 0; i < a->nr_names; i++)
		free(a->names[i]);
	for (i = 0; i < a->nr_stacks; i++) {
		free((uint32_t *)a->stacks[i].frames);
		free((uint32_t *)a->stacks[i].locs);
	}
	XP_FREE_ALL(a->names, a->stacks, a->locs, a->lines, a->samples, a->inames);
	memset(a, 0, sizeof(*a));
}

/* ---- names --------------------------------------------------------------- */

static uint64_t name_hash_of(const void *ctx, size_t i)
{
	return xp_hash_str(((const struct agg *)ctx)->names[i]);
}

static uint32_t intern(struct agg *a, struct xp_table *t, const char *s)
{
	size_t j;

	xp_table_reserve(t, a->nr_names, name_hash_of, a);
	for (j = (size_t)xp_hash_str(s) & (t->cap - 1); t->slots[j]; j = (j + 1) & (t->cap - 1))
		if (!strcmp(a->names[t->slots[j] - 1], s))
			return (uint32_t)(t->slots[j] - 1);
	if (a->nr_names >= UINT32_MAX)
		XP_BUG("more than 2^32 distinct frame names");
	xp_grow((void **)&a->names, &a->alloc_names, a->nr_names + 1, sizeof(*a->names));
	a->names[a->nr_names] = xp_strdup(s);
	t->slots[j] = ++a->nr_names;
	return (uint32_t)(a->nr_names - 1);
}

/* intern() a frame label, cut to AGG_NAME_MAX bytes (a whole UTF-8 character) and "...". */
static uint32_t intern_label(struct agg *a, struct xp_table *t, const char *s)
{
	char buf[AGG_NAME_MAX + 4];
	size_t len = strnlen(s, AGG_NAME_MAX + 1);

	if (len <= AGG_NAME_MAX)
		return intern(a, t, s);
	len = AGG_NAME_MAX;
	while (len && ((unsigned char)s[len] & 0xc0) == 0x80)
		len--;
	memcpy(buf, s, len);
	memcpy(buf + len, "...", 4);
	a->cut_names++;
	return intern(a, t, buf);
}

const struct agg_iname *agg_iname(const struct agg *a, uint32_t name)
{
	return name < a->nr_inames && a->inames[name].func != AGG_NONE ? &a->inames[name] : NULL;
}

/* Note that name @name is an interpreter frame's, @in. */
static void set_iname(struct agg *a, uint32_t name, const struct agg_iname *in)
{
	size_t i;

	if (name >= a->nr_inames) {
		xp_grow((void **)&a->inames, &a->alloc_inames, (size_t)name + 1,
			sizeof(*a->inames));
		for (i = a->nr_inames; i <= name; i++)
			a->inames[i] = (struct agg_iname){AGG_NONE, AGG_NONE, 0, 0};
		a->nr_inames = (size_t)name + 1;
	}
	a->inames[name] = *in;
}

void agg_interp_label(char *buf, size_t len, const char *func, const char *file, uint32_t line)
{
	const char *base = strrchr(file, '/'), *p;

	base = base ? base + 1 : file;
	/* A package's __init__.py says little alone: with its directory. */
	if (!strcmp(base, "__init__.py") && base > file) {
		for (p = base - 1; p > file && p[-1] != '/'; p--)
			;
		base = p;
	}
	if (!*base)
		snprintf(buf, len, "%s", func);
	else if (line)
		snprintf(buf, len, "%s (%s:%u)", func, base, line);
	else
		snprintf(buf, len, "%s (%s)", func, base);
}

/* ---- symbolized stacks --------------------------------------------------- */

/* @locs is NULL or parallel to @frames. */
static uint64_t stack_hash(const struct agg_stack *s)
{
	uint64_t h = xp_fnv1a(XP_FNV_INIT, &s->comm, sizeof(s->comm));

	h = xp_fnv1a(h, &s->thread, sizeof(s->thread));
	h = xp_fnv1a(h, s->frames, s->nr * sizeof(*s->frames));
	if (s->locs)
		h = xp_fnv1a(h, s->locs, s->nr * sizeof(*s->locs));
	return xp_mix64(h ^ s->nr);
}

static uint64_t stack_hash_of(const void *ctx, size_t i)
{
	return stack_hash(&((const struct agg *)ctx)->stacks[i]);
}

static bool stack_equal(const struct agg_stack *x, const struct agg_stack *y)
{
	return x->comm == y->comm && x->thread == y->thread && x->nr == y->nr &&
	       !memcmp(x->frames, y->frames, x->nr * sizeof(*x->frames)) &&
	       (!x->locs || !memcmp(x->locs, y->locs, x->nr * sizeof(*x->locs)));
}

/* Add @key's samples to the equal stack, or a copy of @key as a new one; returns that stack. */
static struct agg_stack *add_stack(struct agg *a, struct xp_table *t, const struct agg_stack *key)
{
	struct agg_stack *s;
	uint32_t *copy;
	size_t j;

	xp_table_reserve(t, a->nr_stacks, stack_hash_of, a);
	for (j = (size_t)stack_hash(key) & (t->cap - 1); t->slots[j]; j = (j + 1) & (t->cap - 1)) {
		s = &a->stacks[t->slots[j] - 1];
		if (stack_equal(s, key)) {
			s->count += key->count;
			s->weight += key->weight;
			return s;
		}
	}
	xp_grow((void **)&a->stacks, &a->alloc_stacks, a->nr_stacks + 1, sizeof(*a->stacks));
	s = &a->stacks[a->nr_stacks];
	*s = *key;
	copy = xp_malloc(key->nr * sizeof(*copy) + 1);
	memcpy(copy, key->frames, key->nr * sizeof(*copy));
	s->frames = copy;
	if (key->locs) {
		copy = xp_malloc(key->nr * sizeof(*copy) + 1);
		memcpy(copy, key->locs, key->nr * sizeof(*copy));
		s->locs = copy;
	}
	t->slots[j] = ++a->nr_stacks;
	return s;
}

static int cmp_u32(uint32_t x, uint32_t y)
{
	return (x > y) - (x < y);
}

static int cmp_stack(const void *x, const void *y, void *ctx)
{
	const struct agg_stack *a = x, *b = y;
	char *const *names = ctx;
	uint32_t i;
	int c;

	c = strcmp(names[a->comm], names[b->comm]);
	if (!c && a->thread != b->thread)
		c = a->thread == AGG_NONE   ? -1
		    : b->thread == AGG_NONE ? 1
					    : strcmp(names[a->thread], names[b->thread]);
	for (i = 0; !c && i < a->nr && i < b->nr; i++)
		c = strcmp(names[a->frames[i]], names[b->frames[i]]);
	if (!c)
		c = cmp_u32(a->nr, b->nr);
	/* Equal names, other code (AGG_LOCATIONS): order by where they were first met. */
	for (i = 0; !c && a->locs && i < a->nr; i++)
		c = cmp_u32(a->locs[i], b->locs[i]);
	return c;
}

static int cmp_stack_index(const void *x, const void *y, void *ctx)
{
	const struct agg *a = ctx;

	return cmp_stack(&a->stacks[*(const uint32_t *)x], &a->stacks[*(const uint32_t *)y],
			 a->names);
}

/* Sort the stacks; @new_index (NULL, or one per stack) is set to each stack's new index. */
static void sort_stacks(struct agg *a, uint32_t *new_index)
{
	uint32_t *perm = xp_malloc((a->nr_stacks + 1) * sizeof(*perm));
	struct agg_stack *sorted = xp_malloc((a->nr_stacks + 1) * sizeof(*sorted));
	size_t i;

	for (i = 0; i < a->nr_stacks; i++)
		perm[i] = (uint32_t)i;
	xp_sort_r(perm, a->nr_stacks, sizeof(*perm), cmp_stack_index, a);
	for (i = 0; i < a->nr_stacks; i++) {
		sorted[i] = a->stacks[perm[i]];
		if (new_index)
			new_index[perm[i]] = (uint32_t)i;
	}
	if (a->nr_stacks)
		memcpy(a->stacks, sorted, a->nr_stacks * sizeof(*sorted));
	free(sorted);
	free(perm);
}

/* ---- locations ----------------------------------------------------------- */

static uint64_t loc_hash(const struct agg_loc *l)
{
	uint64_t h = xp_mix64((uint64_t)(uintptr_t)l->map ^ l->addr * 0x9e3779b97f4a7c15ull);

	return xp_mix64(h ^ ((uint64_t)l->flags << 32 | l->name));
}

static uint64_t loc_hash_of(const void *ctx, size_t i)
{
	return loc_hash(&((const struct agg *)ctx)->locs[i]);
}

static uint32_t intern_loc(struct agg *a, struct xp_table *t, const struct agg_loc *l)
{
	const struct agg_loc *o;
	size_t j;

	xp_table_reserve(t, a->nr_locs, loc_hash_of, a);
	for (j = (size_t)loc_hash(l) & (t->cap - 1); t->slots[j]; j = (j + 1) & (t->cap - 1)) {
		o = &a->locs[t->slots[j] - 1];
		if (o->map == l->map && o->addr == l->addr && o->flags == l->flags &&
		    o->name == l->name)
			return (uint32_t)(t->slots[j] - 1);
	}
	if (a->nr_locs >= AGG_LOC_INLINED)
		XP_BUG("more than 2^31 distinct code locations");
	xp_grow((void **)&a->locs, &a->alloc_locs, a->nr_locs + 1, sizeof(*a->locs));
	a->locs[a->nr_locs] = *l;
	t->slots[j] = ++a->nr_locs;
	return (uint32_t)(a->nr_locs - 1);
}

/*
 * Give location @id (just interned, or met again) the source lines of its
 * @k labels (@src innermost first, as the resolver gave them), unless it
 * has them already: equal locations resolve alike.
 */
static void loc_lines(struct agg *a, struct xp_table *names, uint32_t id, const struct agg_src *src,
		      unsigned int k)
{
	struct agg_loc *l = &a->locs[id];
	unsigned int i;

	if (l->nr_lines)
		return;
	xp_grow((void **)&a->lines, &a->alloc_lines, a->nr_lines + k, sizeof(*a->lines));
	l->first_line = (uint32_t)a->nr_lines;
	l->nr_lines = k;
	for (i = 0; i < k; i++) {
		const struct agg_src *s = &src[k - 1 - i]; /* outermost first */

		a->lines[a->nr_lines++] =
		    (struct agg_line){s->file ? intern(a, names, s->file) : AGG_NONE, s->line};
	}
}

/* ---- samples into groups ------------------------------------------------- */

struct groups {
	struct group *g;
	size_t nr;
	unsigned long alloc;
	struct xp_table t;
};

static uint64_t group_hash(pid_t pid, pid_t tid, uint64_t epoch, size_t stack)
{
	uint64_t ids = (uint64_t)(uint32_t)pid << 32 | (uint32_t)tid;

	return xp_mix64(xp_mix64(ids ^ epoch * 0x9e3779b97f4a7c15ull) ^ stack);
}

static uint64_t group_hash_of(const void *ctx, size_t i)
{
	const struct group *g = &((const struct groups *)ctx)->g[i];

	return group_hash(g->pid, g->tid, g->epoch, g->stack);
}

static bool has_pid(const pid_t *list, size_t nr, pid_t pid)
{
	size_t i;

	for (i = 0; i < nr; i++)
		if (list[i] == pid)
			return true;
	return false;
}

static bool has_name(const char *const *list, size_t nr, const char *name)
{
	size_t i;

	for (i = 0; name && i < nr; i++)
		if (!strcmp(list[i], name))
			return true;
	return false;
}

static bool in_spans(const struct agg_span *spans, size_t nr, uint64_t t)
{
	size_t i;

	for (i = 0; i < nr; i++)
		if (t >= spans[i].from && t < spans[i].to)
			return true;
	return false;
}

static bool sample_wanted(const struct profile *p, const struct agg_opts *o,
			  const struct profile_sample *s)
{
	if (o->time_range && (s->t < o->t_from || s->t > o->t_to))
		return false;
	if (o->nr_spans && !in_spans(o->spans, o->nr_spans, s->t))
		return false;
	if (o->nr_pids && !has_pid(o->pids, o->nr_pids, s->pid))
		return false;
	if (o->nr_tids && !has_pid(o->tids, o->nr_tids, s->tid))
		return false;
	if (o->nr_comms && !has_name(o->comms, o->nr_comms, profile_comm(p, s->pid, s->t)) &&
	    !has_name(o->comms, o->nr_comms, profile_thread_comm(p, s->tid, s->t)))
		return false;
	return true;
}

/*
 * Samples into groups.  @group_of (NULL, or one per sample of @p) is set
 * to each kept sample's group, SIZE_MAX for a sample left out.
 */
static void group_samples(struct groups *gs, struct agg *a, const struct profile *p,
			  const struct agg_opts *o, size_t *group_of)
{
	bool threads = o->flags & (AGG_THREADS | AGG_THREAD_FRAME);
	size_t i, j;

	for (i = 0; i < p->nr_samples; i++) {
		const struct profile_sample *s = &p->samples[i];
		uint64_t epoch = profile_epoch(p, s->pid, s->t);
		pid_t tid = threads ? s->tid : 0;
		struct group *g = NULL;

		if (group_of)
			group_of[i] = SIZE_MAX;
		if (i < o->first_sample)
			continue;
		if (!sample_wanted(p, o, s)) {
			a->filtered_count++;
			a->filtered_weight += s->weight;
			continue;
		}
		xp_table_reserve(&gs->t, gs->nr, group_hash_of, gs);
		for (j = (size_t)group_hash(s->pid, tid, epoch, s->stack) & (gs->t.cap - 1);
		     gs->t.slots[j]; j = (j + 1) & (gs->t.cap - 1)) {
			g = &gs->g[gs->t.slots[j] - 1];
			if (g->pid == s->pid && g->tid == tid && g->epoch == epoch &&
			    g->stack == s->stack)
				break;
			g = NULL;
		}
		if (!g) {
			xp_grow((void **)&gs->g, &gs->alloc, gs->nr + 1, sizeof(*gs->g));
			g = &gs->g[gs->nr];
			*g = (struct group){s->pid, tid, epoch, s->stack, s->t, 0, 0};
			gs->t.slots[j] = ++gs->nr;
		}
		g->count++;
		g->weight += s->weight;
		if (group_of)
			group_of[i] = (size_t)(g - gs->g);
	}
}

static int cmp_sample_time(const void *x, const void *y)
{
	const struct agg_sample *a = x, *b = y;

	/* One thread has one sample at a time: no ties within a thread's timeline. */
	if (a->t != b->t)
		return (a->t > b->t) - (a->t < b->t);
	return (a->tid > b->tid) - (a->tid < b->tid);
}

/* AGG_TIMELINE: the kept samples with the index of their stack, by time. */
static void timeline(struct agg *a, const struct profile *p, const size_t *group_of,
		     const uint32_t *stack_of_group, const uint32_t *new_index)
{
	size_t i, n = 0;

	a->samples = xp_malloc((a->total_count + 1) * sizeof(*a->samples));
	for (i = 0; i < p->nr_samples; i++) {
		const struct profile_sample *s = &p->samples[i];

		if (group_of[i] == SIZE_MAX)
			continue;
		a->samples[n++] = (struct agg_sample){
		    s->t, s->weight, new_index[stack_of_group[group_of[i]]], s->tid};
	}
	a->nr_samples = n;
	xp_sort(a->samples, n, sizeof(*a->samples), cmp_sample_time);
}

static unsigned int hex_label(const struct agg_frame_req *req, const char **labels, char *buf,
			      size_t len)
{
	snprintf(buf, len, "%#" PRIx64, req->pc);
	labels[0] = buf;
	return 1;
}

/* Where frame @f of @g's stack came from. */
static struct agg_loc frame_loc(const struct profile *p, const struct agg_frame_req *req)
{
	struct agg_loc l = {.addr = req->addr, .flags = req->flags};

	if (!(req->flags & XP_FRAME_MARKERS))
		l.map = profile_find_mapping(p, req->pid, req->t, l.addr);
	return l;
}

/* "comm/tid", named as the thread was at @g's first sample. */
static uint32_t thread_label(struct agg *a, struct xp_table *names, const struct profile *p,
			     const struct group *g, const char *comm)
{
	const char *tcomm = profile_thread_comm(p, g->tid, g->t);
	char buf[96];

	snprintf(buf, sizeof(buf), "%s/%d", tcomm ? tcomm : comm, (int)g->tid);
	return intern(a, names, buf);
}

/* What agg_build_opts keeps from one group of samples to the next. */
struct builder {
	struct agg *a;
	const struct profile *p;
	agg_resolve_fn resolve; /* NULL: hexadecimal addresses */
	void *ctx;
	bool with_locs;	     /* AGG_LOCATIONS */
	unsigned int interp; /* enum agg_interp */
	struct xp_table names, stacks, locs;
	/*
	 * One stack's names and locations, root first.  Never NULL, even for
	 * empty stacks: memcmp/memcpy of NULL is undefined.
	 */
	uint32_t *frames, *flocs;
	unsigned long alloc, alloc_locs;
};

/*
 * Resolve the frame @pc (with its @flags) of a sample of @g and append its
 * names to b->frames from index @n, the function holding inlined ones
 * first, and with AGG_LOCATIONS their locations to b->flocs.  Returns the
 * new number of frames.
 */
static uint32_t build_frame(struct builder *b, const struct group *g, uint64_t pc, uint8_t flags,
			    uint32_t n)
{
	const char *labels[AGG_MAX_LABELS];
	struct agg_src src[AGG_MAX_LABELS];
	struct agg_frame_req req = {
	    g->pid, g->t, pc, xp_lookup_pc(pc, flags), flags, b->with_locs ? src : NULL};
	char hexbuf[32];
	unsigned int k;
	uint32_t first = n;

	if (b->with_locs)
		memset(src, 0, sizeof(src));
	if (b->resolve)
		k = b->resolve(b->ctx, &req, labels, AGG_MAX_LABELS);
	else
		k = hex_label(&req, labels, hexbuf, sizeof(hexbuf));
	if (!k) {
		labels[0] = "[unknown]";
		k = 1;
	}
	if (k > AGG_MAX_LABELS)
		k = AGG_MAX_LABELS;
	xp_grow((void **)&b->frames, &b->alloc, (unsigned long)n + k, sizeof(*b->frames));
	/* Labels come innermost first; stacks are stored root first. */
	while (k--)
		b->frames[n++] = intern_label(b->a, &b->names, labels[k]);
	if (b->with_locs) {
		struct agg_loc l = frame_loc(b->p, &req);
		uint32_t id, j;

		l.name = b->frames[first];
		id = intern_loc(b->a, &b->locs, &l);
		loc_lines(b->a, &b->names, id, src, n - first);
		xp_grow((void **)&b->flocs, &b->alloc_locs, n, sizeof(*b->flocs));
		for (j = first; j < n; j++)
			b->flocs[j] = j == first ? id : id | AGG_LOC_INLINED;
	}
	return n;
}

/* Append interpreter frame @f (its code from the data file) to b->frames at @n. */
static uint32_t build_iframe(struct builder *b, const struct profile_iframe *f, uint32_t n)
{
	const struct profile_code *c = profile_code_by_id(b->p, f->code);
	char label[AGG_NAME_MAX + 64];
	struct agg_iname in = {AGG_NONE, AGG_NONE, 0, 0};
	uint32_t name;

	if (c) {
		agg_interp_label(label, sizeof(label), c->name, c->file, f->line);
		name = intern_label(b->a, &b->names, label);
		in.func = intern_label(b->a, &b->names, c->name);
		in.file = intern_label(b->a, &b->names, c->file);
		in.line = f->line;
		in.first_line = c->first_line;
		set_iname(b->a, name, &in);
	} else {
		name = intern(b->a, &b->names, "[unknown]");
	}
	xp_grow((void **)&b->frames, &b->alloc, (unsigned long)n + 1, sizeof(*b->frames));
	b->frames[n] = name;
	if (b->with_locs) {
		struct agg_loc l = {.addr = xp_interp_pc((uint32_t)f->code, f->line),
				    .flags = XP_FRAME_INTERP,
				    .name = name};
		struct agg_src src = {c ? c->file : NULL, f->line};
		uint32_t id = intern_loc(b->a, &b->locs, &l);

		loc_lines(b->a, &b->names, id, &src, 1);
		xp_grow((void **)&b->flocs, &b->alloc_locs, (unsigned long)n + 1,
			sizeof(*b->flocs));
		b->flocs[n] = id;
	}
	return n + 1;
}

/*
 * Add the stack of the group @g to b->a (with the 'comm/tid' frame at its
 * root if AGG_THREAD_FRAME), counted with its samples.  Returns it.
 */
static struct agg_stack *build_group(struct builder *b, const struct group *g)
{
	struct agg *a = b->a;
	const struct profile_stack *st = &b->p->stacks[g->stack];
	const char *comm = profile_comm(b->p, g->pid, g->t);
	struct agg_stack key = {.thread = AGG_NONE, .count = g->count, .weight = g->weight};
	struct agg_stack *s;
	char commbuf[32];
	uint32_t f, k, n = 0;

	if (!comm) {
		snprintf(commbuf, sizeof(commbuf), "pid-%d", (int)g->pid);
		comm = commbuf;
	}
	key.comm = intern(a, &b->names, comm);
	if (a->flags & AGG_THREADS)
		key.thread = thread_label(a, &b->names, b->p, g, comm);
	if (a->flags & AGG_THREAD_FRAME) {
		struct agg_loc l = {.name = key.thread};

		b->frames[n] = key.thread;
		if (b->with_locs)
			b->flocs[n] = intern_loc(a, &b->locs, &l);
		n++;
	}
	k = b->interp == AGG_INTERP_NATIVE ? 0 : st->nr_interp;
	/* Interpreter frames whose loop the walk did not reach: outermost. */
	while (k > 0 && st->interp[k - 1].at >= st->nr)
		n = build_iframe(b, &st->interp[--k], n);
	for (f = st->nr; f-- > 0;) {
		bool ran = k > 0 && st->interp[k - 1].at == f;

		/* The loop's own frame: in place of its interpreter frames, or their caller. */
		if (!ran || b->interp == AGG_INTERP_BESIDE)
			n = build_frame(b, g, st->pcs[f], st->flags[f], n);
		while (k > 0 && st->interp[k - 1].at == f)
			n = build_iframe(b, &st->interp[--k], n);
	}
	key.nr = n;
	key.frames = b->frames;
	key.locs = b->with_locs ? b->flocs : NULL;
	s = add_stack(a, &b->stacks, &key);
	a->total_count += g->count;
	a->total_weight += g->weight;
	return s;
}

void agg_build_opts(struct agg *a, const struct profile *p, const struct agg_opts *opts,
		    agg_resolve_fn resolve, void *ctx)
{
	static const struct agg_opts none;
	const struct agg_opts *o = opts ? opts : &none;
	struct builder b = {.a = a, .p = p, .resolve = resolve, .ctx = ctx};
	struct groups gs = {0};
	size_t *group_of = NULL;
	uint32_t *stack_of_group = NULL, *new_index;
	size_t i;

	a->flags = o->flags;
	b.with_locs = a->flags & AGG_LOCATIONS;
	b.interp = o->interp;
	if (a->flags & AGG_THREAD_FRAME)
		a->flags |= AGG_THREADS;
	if (a->flags & AGG_TIMELINE)
		group_of = xp_malloc((p->nr_samples + 1) * sizeof(*group_of));
	group_samples(&gs, a, p, o, group_of);
	if (group_of)
		stack_of_group = xp_malloc((gs.nr + 1) * sizeof(*stack_of_group));
	xp_grow((void **)&b.frames, &b.alloc, 1, sizeof(*b.frames));
	xp_grow((void **)&b.flocs, &b.alloc_locs, 1, sizeof(*b.flocs));
	for (i = 0; i < gs.nr; i++) {
		struct agg_stack *s = build_group(&b, &gs.g[i]);

		if (stack_of_group)
			stack_of_group[i] = (uint32_t)(s - a->stacks);
	}
	new_index = group_of ? xp_malloc((a->nr_stacks + 1) * sizeof(*new_index)) : NULL;
	sort_stacks(a, new_index);
	if (group_of)
		timeline(a, p, group_of, stack_of_group, new_index);
	free(group_of);
	free(stack_of_group);
	free(new_index);
	free(b.frames);
	free(b.flocs);
	free(gs.g);
	free(gs.t.slots);
	free(b.names.slots);
	free(b.stacks.slots);
	free(b.locs.slots);
}

/* agg_add_base (@as_base) and agg_merge: @b's stacks into @a, by their names. */
static void merge(struct agg *a, const struct agg *base, bool as_base)
{
	struct xp_table names = {0}, stacks = {0};
	uint32_t *frames = xp_malloc(sizeof(*frames)), *map;
	unsigned long alloc = 1;
	size_t i, j;

	if ((a->flags | base->flags) & (AGG_LOCATIONS | AGG_TIMELINE))
		XP_BUG("merging profiles with code locations or timelines");
	/* The tables of @a, then @base's names as ids of @a. */
	xp_table_reserve(&names, a->nr_names, name_hash_of, a);
	xp_table_reserve(&stacks, a->nr_stacks, stack_hash_of, a);
	map = xp_malloc((base->nr_names + 1) * sizeof(*map));
	for (i = 0; i < base->nr_names; i++)
		map[i] = intern(a, &names, base->names[i]);
	for (i = 0; i < base->nr_names; i++) {
		const struct agg_iname *in = agg_iname(base, (uint32_t)i);
		struct agg_iname m;

		if (!in)
			continue;
		m = (struct agg_iname){map[in->func], map[in->file], in->line, in->first_line};
		set_iname(a, map[i], &m);
	}
	for (i = 0; i < base->nr_stacks; i++) {
		const struct agg_stack *b = &base->stacks[i];
		struct agg_stack key = {
		    .comm = map[b->comm],
		    .thread = b->thread == AGG_NONE ? AGG_NONE : map[b->thread],
		    .nr = b->nr,
		};
		struct agg_stack *s;

		xp_grow((void **)&frames, &alloc, (unsigned long)b->nr + 1, sizeof(*frames));
		for (j = 0; j < b->nr; j++)
			frames[j] = map[b->frames[j]];
		key.frames = frames;
		if (!as_base) {
			key.count = b->count;
			key.weight = b->weight;
		}
		s = add_stack(a, &stacks, &key);
		s->base_count += b->base_count;
		s->base_weight += b->base_weight;
		if (as_base) {
			s->base_count += b->count;
			s->base_weight += b->weight;
		}
	}
	if (as_base) {
		a->has_base = true;
		a->base_total_count = base->total_count;
		a->base_total_weight = base->total_weight;
	} else {
		a->total_count += base->total_count;
		a->total_weight += base->total_weight;
		a->filtered_count += base->filtered_count;
		a->filtered_weight += base->filtered_weight;
	}
	sort_stacks(a, NULL);
	free(map);
	free(frames);
	free(names.slots);
	free(stacks.slots);
}

void agg_add_base(struct agg *a, const struct agg *base)
{
	merge(a, base, true);
}

void agg_merge(struct agg *a, const struct agg *b)
{
	merge(a, b, false);
}

void agg_build(struct agg *a, const struct profile *p, agg_resolve_fn resolve, void *ctx)
{
	agg_build_opts(a, p, NULL, resolve, ctx);
}
