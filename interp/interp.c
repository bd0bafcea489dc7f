/* SPDX-License-Identifier: MIT */
/*
 * The seam of interp.h: the registry of readers, the code-object cache
 * they share (by address, each object checked again before it names a
 * sample taken after its last check), and where runs of interpreter
 * frames go in a native stack.
 */
#include "interp.h"
#include "interp_int.h"
#include "addrspace.h"
#include "err.h"
#include "hash.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The readers, tried in this order. */
static const struct interp_backend *const backends[] = {
    &interp_python,
};

#define NR_BACKENDS (sizeof(backends) / sizeof(backends[0]))

/* Code objects that could not be read in a row, with none read before, before giving up. */
#define INTERP_BAD_RUN 256

int interp_read(const struct interp_mem *mem, uint64_t addr, void *buf, size_t len)
{
	uint64_t off = addr - mem->stack_addr;

	if (addr >= mem->stack_addr && off < mem->stack_len && mem->stack_len - off >= len) {
		memcpy(buf, mem->stack + off, len);
		return 0;
	}
	if (!addr || addr + len < addr || !mem->read)
		return -EFAULT;
	return mem->read(mem->ctx, addr, buf, len) == (long)len ? 0 : -EFAULT;
}

void interp_give_up(struct interp *ip, const char *why)
{
	if (ip->disabled)
		return;
	ip->disabled = true;
	xp_warn("cannot read the %s frames of pid %d (%s): %s; its profile has native frames only",
		ip->be->name, (int)ip->pid, ip->comm, why);
}

struct interp *interp_probe(const struct addrspace *as, const struct interp_mem *mem, pid_t pid,
			    const char *comm, uint32_t *next_id, bool *settled)
{
	struct interp *ip;
	size_t i, b;
	int e;

	*settled = false;
	for (b = 0; b < NR_BACKENDS; b++) {
		for (i = 0; i < as->nr; i++) {
			const struct xp_map *m = &as->maps[i];

			if (!m->mod || !(m->prot & XP_PROT_EXEC) || !backends[b]->is_candidate(m))
				continue;
			ip = xp_calloc(1, sizeof(*ip));
			ip->be = backends[b];
			ip->pid = pid;
			ip->next_id = next_id;
			snprintf(ip->comm, sizeof(ip->comm), "%s", comm ? comm : "?");
			snprintf(ip->what, sizeof(ip->what), "%s", ip->be->name);
			e = ip->be->open(ip, as, m, mem);
			if (!e) {
				*settled = true;
				return ip;
			}
			free(ip);
			if (e != -ENOENT) {
				*settled = true;
				return NULL;
			}
		}
	}
	return NULL;
}

static void entry_free(struct interp_code_entry *e)
{
	if (!e)
		return;
	free(e->lines);
	free((char *)e->info.name);
	free((char *)e->info.file);
	free(e);
}

void interp_free(struct interp *ip)
{
	unsigned long i;

	if (!ip)
		return;
	if (ip->be->free)
		ip->be->free(ip);
	for (i = 0; i < ip->nby_id; i++)
		entry_free(ip->by_id[i]);
	free(ip->by_id);
	free(ip->by_addr);
	free(ip);
}

const char *interp_describe(const struct interp *ip)
{
	return ip->what;
}

unsigned int interp_kind_of(const struct interp *ip)
{
	return ip->be->kind;
}

const struct interp_stats *interp_stats(const struct interp *ip)
{
	return &ip->st;
}

int interp_take(struct interp *ip, pid_t tid, const struct interp_mem *mem, struct interp_raw *raw)
{
	raw->nr = 0;
	raw->flags = 0;
	raw->bytes = 0;
	if (ip->disabled)
		return -ENOTSUP;
	return ip->be->take(ip, tid, mem, raw);
}

/* ---- code objects ------------------------------------------------------ */

static size_t addr_slot(const struct interp *ip, uint64_t addr)
{
	return (size_t)xp_mix64(addr) & (ip->cap_by_addr - 1);
}

static void addr_grow(struct interp *ip)
{
	struct interp_code_entry **old = ip->by_addr;
	size_t cap = ip->cap_by_addr, i, j;

	ip->cap_by_addr = cap ? cap * 2 : 256;
	ip->by_addr = xp_calloc(ip->cap_by_addr, sizeof(*ip->by_addr));
	for (i = 0; i < cap; i++) {
		if (!old[i])
			continue;
		for (j = addr_slot(ip, old[i]->addr); ip->by_addr[j];
		     j = (j + 1) & (ip->cap_by_addr - 1))
			;
		ip->by_addr[j] = old[i];
	}
	free(old);
}

/* The slot of @addr: its entry, or the empty slot where it goes. */
static struct interp_code_entry **addr_find(struct interp *ip, uint64_t addr)
{
	size_t j;

	if ((ip->nby_addr + 1) * 2 > ip->cap_by_addr)
		addr_grow(ip);
	for (j = addr_slot(ip, addr); ip->by_addr[j]; j = (j + 1) & (ip->cap_by_addr - 1))
		if (ip->by_addr[j]->addr == addr)
			break;
	return &ip->by_addr[j];
}

/* Read the code object at @addr afresh into a new entry with a new id, in @slot. */
static struct interp_code_entry *code_new(struct interp *ip, const struct interp_mem *mem,
					  uint64_t addr, struct interp_code_entry **slot,
					  uint64_t t)
{
	struct interp_code_entry *e = xp_calloc(1, sizeof(*e));

	if (ip->be->read_code(ip, mem, addr, e, false)) {
		entry_free(e);
		ip->st.bad_codes++;
		return NULL;
	}
	e->addr = addr;
	e->checked_at = t;
	e->info.id = (*ip->next_id)++;
	if (!*slot)
		ip->nby_addr++;
	*slot = e; /* an older entry at the address stays in by_id */
	xp_grow((void **)&ip->by_id, &ip->alloc_by_id, ip->nby_id + 1, sizeof(*ip->by_id));
	ip->by_id[ip->nby_id++] = e;
	ip->st.codes++;
	return e;
}

/*
 * The code object at @addr for a sample taken at @t: the cached entry if
 * it was read or checked at or after @t, or still has the digest it had;
 * else read again (the object was freed and another took its place).
 */
static struct interp_code_entry *code_at(struct interp *ip, const struct interp_mem *mem,
					 uint64_t addr, uint64_t t, uint64_t now)
{
	struct interp_code_entry **slot = addr_find(ip, addr), cur;

	if (*slot && (*slot)->checked_at >= t)
		return *slot;
	if (*slot) {
		memset(&cur, 0, sizeof(cur));
		ip->st.revalidated++;
		if (!ip->be->read_code(ip, mem, addr, &cur, true) && cur.print == (*slot)->print) {
			(*slot)->checked_at = now;
			return *slot;
		}
	}
	return code_new(ip, mem, addr, slot, now);
}

const struct interp_code *interp_code(const struct interp *ip, uint32_t id)
{
	unsigned long lo = 0, hi = ip->nby_id;

	while (lo < hi) {
		unsigned long mid = lo + (hi - lo) / 2;

		if (ip->by_id[mid]->info.id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ip->nby_id && ip->by_id[lo]->info.id == id ? &ip->by_id[lo]->info : NULL;
}

/* The line of instruction @at in @e: from its line table, else 0. */
static uint32_t code_line(const struct interp_code_entry *e, uint64_t at)
{
	uint64_t unit;

	/* 3.11, 3.12: a frame just pushed points one unit before its code: its first line. */
	if (e->unit && at + e->unit == e->code_start)
		return e->info.first_line;
	if (at < e->code_start || !e->unit)
		return 0;
	unit = (at - e->code_start) / e->unit;
	return unit < e->nunits ? e->lines[unit] : 0;
}

unsigned int interp_decode(struct interp *ip, const struct interp_raw *raw,
			   const struct interp_mem *mem, uint64_t t, uint64_t now,
			   struct interp_frame *out, unsigned int max)
{
	unsigned int n = 0, i;

	for (i = 0; i < raw->nr && n < max && !ip->disabled; i++) {
		const struct interp_raw_frame *r = &raw->f[i];
		struct interp_code_entry *e;

		if (!r->code) {
			out[n++] = (struct interp_frame){0, 0, r->ip};
			continue;
		}
		e = code_at(ip, mem, r->code, t, now);
		if (!e) {
			/* A runtime whose code objects are never readable is not what it says. */
			if (++ip->bad_run >= INTERP_BAD_RUN && !ip->st.codes)
				interp_give_up(ip, "its code objects cannot be read");
			continue;
		}
		ip->bad_run = 0;
		out[n++] = (struct interp_frame){e->info.id, code_line(e, r->ip), 0};
	}
	return ip->disabled ? 0 : n;
}

/* ---- placement ----------------------------------------------------------- */

/* The native frame of @nn whose locals hold @marker: i with sps[i] <= marker < sps[i + 1]. */
static uint32_t frame_of(uint64_t marker, const uint64_t *sps, unsigned int nn)
{
	unsigned int lo = 0, hi = nn;

	/* sps[] increases (the walk checks that the stack only grows toward its base). */
	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (sps[mid] <= marker)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo - 1; /* lo >= 1: the caller checked marker >= sps[0] */
}

int interp_place(const struct interp_frame *f, unsigned int nf, const uint64_t *sps,
		 unsigned int nn, uint32_t *at)
{
	unsigned int i, j, start = 0;
	uint32_t where, last = 0;

	for (i = 0; i < nf; i++) {
		if (f[i].code)
			continue;
		/* A boundary: frames start..i ran in the native frame holding its marker. */
		if (!f[i].marker) {
			/* Unknown: they go with the next run (its loop called theirs). */
			continue;
		}
		if (!nn || f[i].marker < sps[0])
			return -EINVAL;
		where = frame_of(f[i].marker, sps, nn);
		/* Past the outermost frame walked, or its own frame (a thread's root): beyond. */
		if (where + 1 >= nn)
			where = nn;
		if (where < last)
			return -EINVAL;
		for (j = start; j <= i; j++)
			at[j] = where;
		last = where;
		start = i + 1;
	}
	/* Frames after the last boundary (a chain cut short): their loop was not found. */
	for (j = start; j < nf; j++)
		at[j] = nn;
	return 0;
}
