/* SPDX-License-Identifier: MIT */
/*
 * One mapping of a traced process, as /proc/PID/maps shows it, and the
 * strict parser of such a line (input we do not trust: a unit test and a
 * fuzz target cover it).  Below both the address space (addrspace.h),
 * which keeps a process's mappings, and the modules (module.h), the files
 * they map.  Pure; prints nothing.
 */
#ifndef XPROF_TARGET_MAPS_H
#define XPROF_TARGET_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define XP_PROT_READ  1
#define XP_PROT_WRITE 2
#define XP_PROT_EXEC  4

#define XP_BUILD_ID_MAX 64

struct module;

struct xp_map {
	uint64_t start, end, offset;
	uint32_t prot;                  /* XP_PROT_* */
	uint32_t dev_major, dev_minor;
	uint64_t inode;
	char *path;                     /* owned; "" for anonymous, "[vdso]", ... */
	struct module *mod;             /* NULL when not a readable ELF file */
	bool fresh; /* new at the last load: unlike every mapping known before */
};

/*
 * Parse one line of /proc/PID/maps (without or with its trailing newline).
 * On success fills @out with path pointing into @pathbuf (copied, cut to
 * @pathlen - 1 bytes) and returns 0; -EINVAL on a malformed line.
 */
int procmaps_parse_line(const char *line, struct xp_map *out, char *pathbuf, size_t pathlen);

#endif
