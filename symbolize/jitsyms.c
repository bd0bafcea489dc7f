/* SPDX-License-Identifier: MIT */
/*
 * The JIT range tables (see jitsyms.h): two arrays of ranges sorted by
 * (pid, start) on first lookup after an addition, with a running maximum
 * of the ends per pid so a lookup walks back only over ranges that can
 * still reach the address (as profile.c does for mappings).
 */
#include "jitsyms.h"
#include "err.h"
#include "sorted.h"

#include <stdlib.h>
#include <string.h>

void jitsyms_init(struct jitsyms *j)
{
	memset(j, 0, sizeof(*j));
}

static void ranges_release(struct jit_ranges *rs)
{
	size_t i;

	for (i = 0; i < rs->nr; i++)
		free(rs->r[i].text);
	free(rs->r);
	free(rs->max_end);
	memset(rs, 0, sizeof(*rs));
}

void jitsyms_release(struct jitsyms *j)
{
	ranges_release(&j->syms);
	ranges_release(&j->lines);
}

static void ranges_add(struct jit_ranges *rs, uint64_t seq, pid_t pid, uint64_t start, uint64_t end,
		       uint64_t t, const char *text, unsigned int line)
{
	if (end <= start)
		return;
	xp_grow((void **)&rs->r, &rs->alloc, rs->nr + 1, sizeof(*rs->r));
	rs->r[rs->nr++] = (struct jit_range){pid, start, end, seq, t, xp_strdup(text), line};
	rs->dirty = true;
}

void jitsyms_add(struct jitsyms *j, pid_t pid, uint64_t start, uint64_t size, const char *name,
		 uint64_t t)
{
	uint64_t end = start + size < start ? UINT64_MAX : start + size;

	ranges_add(&j->syms, j->seq++, pid, start, end, t, name ? name : "", 0);
}

void jitsyms_add_line(struct jitsyms *j, pid_t pid, uint64_t start, uint64_t end, const char *file,
		      unsigned int line)
{
	ranges_add(&j->lines, j->seq++, pid, start, end, 0, file ? file : "", line);
}

bool jitsyms_has_pid(const struct jitsyms *j, pid_t pid)
{
	size_t i;

	/* Sorted or not, a linear scan is fine: callers cache per pid. */
	for (i = 0; i < j->syms.nr; i++)
		if (j->syms.r[i].pid == pid)
			return true;
	return false;
}

static int cmp_range(const void *a, const void *b)
{
	const struct jit_range *x = a, *y = b;

	if (x->pid != y->pid)
		return (x->pid > y->pid) - (x->pid < y->pid);
	if (x->start != y->start)
		return (x->start > y->start) - (x->start < y->start);
	return (x->seq > y->seq) - (x->seq < y->seq);
}

static void ranges_sort(struct jit_ranges *rs)
{
	size_t i;

	xp_sort(rs->r, rs->nr, sizeof(*rs->r), cmp_range);
	free(rs->max_end);
	rs->max_end = xp_malloc((rs->nr ? rs->nr : 1) * sizeof(*rs->max_end));
	for (i = 0; i < rs->nr; i++) {
		uint64_t end = rs->r[i].end;

		if (i && rs->r[i - 1].pid == rs->r[i].pid && rs->max_end[i - 1] > end)
			end = rs->max_end[i - 1];
		rs->max_end[i] = end;
	}
	rs->dirty = false;
}

/* Whether range @r was named later than @b (time, then order of addition). */
static bool named_later(const struct jit_range *r, const struct jit_range *b)
{
	return r->t > b->t || (r->t == b->t && r->seq > b->seq);
}

static const struct jit_range *ranges_find(struct jit_ranges *rs, pid_t pid, uint64_t addr,
					   uint64_t t)
{
	const struct jit_range *early = NULL;
	const struct jit_range *best = NULL;
	size_t lo, i;

	if (rs->dirty)
		ranges_sort(rs);
	/* Ranges at or before (pid, addr): the last is r[lo - 1]. */
	lo = XP_PARTITION_POINT(
	    0, rs->nr, k, rs->r[k].pid < pid || (rs->r[k].pid == pid && rs->r[k].start <= addr));
	for (i = lo; i-- > 0 && rs->r[i].pid == pid && rs->max_end[i] > addr;) {
		const struct jit_range *r = &rs->r[i];

		if (r->end <= addr)
			continue;
		if (r->t <= t && (!best || named_later(r, best)))
			best = r;
		else if (r->t > t && (!early || named_later(early, r)))
			early = r;
	}
	return best ? best : early;
}

const struct jit_range *jitsyms_find(struct jitsyms *j, pid_t pid, uint64_t addr, uint64_t t)
{
	return ranges_find(&j->syms, pid, addr, t);
}

const struct jit_range *jitsyms_find_line(struct jitsyms *j, pid_t pid, uint64_t addr)
{
	return ranges_find(&j->lines, pid, addr, UINT64_MAX);
}
