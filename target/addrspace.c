/* SPDX-License-Identifier: MIT */
/*
 * The mappings of a traced process: a strict parser for /proc/PID/maps
 * lines (input we do not trust: a fuzz target covers it), a sorted array
 * of mappings with lookup by address, and reloading that keeps what is
 * already known about unchanged mappings (their module) and marks the
 * others fresh.
 * ELF files behind the mappings are the module cache's business
 * (target/module.c).
 */
#include "addrspace.h"
#include "module.h"
#include "err.h"
#include "targetfs.h"
#include "sorted.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void addrspace_init(struct addrspace *as, pid_t pid, struct module_cache *mc)
{
	memset(as, 0, sizeof(*as));
	as->pid = pid;
	as->mc = mc;
}

static void maps_free(struct xp_map *maps, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++)
		free(maps[i].path);
	free(maps);
}

void addrspace_release(struct addrspace *as)
{
	maps_free(as->maps, as->nr);
	addrspace_init(as, as->pid, as->mc);
}

static int map_cmp(const void *a, const void *b)
{
	const struct xp_map *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

void addrspace_fork(struct addrspace *as, const struct addrspace *parent, bool fresh)
{
	size_t i;

	addrspace_release(as);
	as->maps = xp_calloc(parent->nr ? parent->nr : 1, sizeof(*as->maps));
	as->alloc = parent->nr ? parent->nr : 1;
	for (i = 0; i < parent->nr; i++) {
		as->maps[i] = parent->maps[i];
		as->maps[i].path = xp_strdup(parent->maps[i].path);
		as->maps[i].fresh = fresh;
	}
	as->nr = parent->nr;
	as->fs_known = parent->fs_known;
	as->root = parent->root;
	/* Outside a pid namespace the innermost pid is the pid: no /proc read. */
	if (parent->fs_known)
		as->nspid = parent->nspid == parent->pid ? as->pid : targetfs_nspid(as->pid);
}

/* Index of the mapping with the greatest start <= @addr, or @nr if none. */
static size_t maps_search(const struct xp_map *maps, size_t nr, uint64_t addr)
{
	size_t lo = XP_PARTITION_POINT(0, nr, i, maps[i].start <= addr);

	return lo ? lo - 1 : nr;
}

static bool map_same(const struct xp_map *a, const struct xp_map *b)
{
	return a->start == b->start && a->end == b->end && a->offset == b->offset &&
	       a->prot == b->prot && a->dev_major == b->dev_major && a->dev_minor == b->dev_minor &&
	       a->inode == b->inode && !strcmp(a->path, b->path);
}

int addrspace_load_text(struct addrspace *as, const char *text)
{
	struct xp_map *maps = NULL;
	unsigned long alloc = 0;
	size_t nr = 0, i, keep;
	char pathbuf[4096];
	const char *p = text;

	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char line[4096 + 128];
		struct xp_map m;

		/* Malformed or overlong lines are skipped: the rest is still usable. */
		if (len < sizeof(line)) {
			memcpy(line, p, len);
			line[len] = '\0';
			if (!procmaps_parse_line(line, &m, pathbuf, sizeof(pathbuf))) {
				xp_grow((void **)&maps, &alloc, nr + 1, sizeof(*maps));
				m.path = xp_strdup(pathbuf);
				maps[nr++] = m;
			}
		}
		p = nl ? nl + 1 : NULL;
	}
	/* The kernel sorts; other text may not.  Drop overlaps, keeping the first. */
	xp_sort(maps, nr, sizeof(*maps), map_cmp);
	for (i = 0, keep = 0; i < nr; i++) {
		if (keep && maps[i].start < maps[keep - 1].end) {
			free(maps[i].path);
			continue;
		}
		maps[keep++] = maps[i];
	}
	nr = keep;
	for (i = 0; i < nr; i++) {
		struct xp_map *m = &maps[i];
		size_t j = maps_search(as->maps, as->nr, m->start);

		if (j < as->nr && map_same(&as->maps[j], m)) {
			m->mod = as->maps[j].mod;
			continue;
		}
		m->fresh = true;
		if (m->prot & XP_PROT_EXEC)
			m->mod = module_cache_get(as->mc, m, as->pid, as->root);
	}
	maps_free(as->maps, as->nr);
	as->maps = maps;
	as->nr = nr;
	as->alloc = alloc;
	as->loads++;
	return 0;
}

void addrspace_find_fs(struct addrspace *as)
{
	if (as->fs_known || as->pid <= 0)
		return;
	as->fs_known = true;
	as->root = targetfs_root_of(module_cache_fs(as->mc), as->pid);
	as->nspid = targetfs_nspid(as->pid);
}

int addrspace_load(struct addrspace *as)
{
	char file[64], *buf = NULL;
	unsigned long alloc = 0;
	size_t len = 0;
	ssize_t n;
	int fd, ret;

	addrspace_find_fs(as);
	snprintf(file, sizeof(file), "/proc/%d/maps", (int)as->pid);
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		xp_grow((void **)&buf, &alloc, len + 16384, 1);
		n = read(fd, buf + len, alloc - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	ret = n < 0 ? -errno : 0;
	close(fd);
	if (!ret) {
		buf[len] = '\0';
		ret = addrspace_load_text(as, buf);
	}
	free(buf);
	return ret;
}

struct xp_map *addrspace_find(const struct addrspace *as, uint64_t addr)
{
	size_t i = maps_search(as->maps, as->nr, addr);

	if (i < as->nr && addr < as->maps[i].end)
		return &as->maps[i];
	return NULL;
}

bool addrspace_is_exec(const struct addrspace *as, uint64_t addr)
{
	const struct xp_map *m = addrspace_find(as, addr);

	return m && (m->prot & XP_PROT_EXEC);
}

bool addrspace_is_stale(const struct addrspace *as, uint64_t addr)
{
	const struct xp_map *m = addrspace_find(as, addr);
	char file[96], link[4096];
	ssize_t n;

	if (!m || m->path[0] != '/')
		return false;
	snprintf(file, sizeof(file), "/proc/%d/map_files/%llx-%llx", (int)as->pid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
	n = readlink(file, link, sizeof(link) - 1);
	if (n < 0)
		return errno == ENOENT; /* no file mapping of exactly this range any more */
	link[n] = 0;
	return strcmp(link, m->path) != 0;
}
