/* SPDX-License-Identifier: MIT */
/*
 * The capture: what a report needs from files that may vanish, kept while
 * they exist.  A report names addresses after the run from the ELF files
 * the recorded mappings name (and their separate debuginfo); those may be
 * gone by then: a container's files, a binary replaced by an upgrade, a
 * build directory cleaned, a report on another machine.  So, as perf keeps
 * ~/.debug, the recorder keeps a copy of every file that holds a sampled
 * address in a cache keyed by the file's identity (lib/fileid.h):
 *
 *     <cache>/buildid/<hex build-id>/elf     the mapped file, byte for byte
 *     <cache>/buildid/<hex build-id>/debug   its separate debuginfo, if found
 *     <cache>/buildid/go-<hex>/elf           a file without a build-id: by its
 *     <cache>/buildid/sha256-<hex>/elf       Go build ID, else its SHA-256
 *
 * <cache> is $XPROF_CACHE_DIR, else $XDG_CACHE_HOME/xprof, else
 * ~/.cache/xprof ("off" in XPROF_CACHE_DIR turns the capture off).  The
 * copy of the mapped file is taken from the module (module.h), which has
 * held the file mapped since it was first opened, so it is the very file
 * that ran even if replaced or deleted since; a file already in the cache
 * costs one stat.  What one recording copies is bounded by
 * CAPTURE_MAX_BYTES: the end of recording does not grow with the size of
 * the programs without limit (a copy runs at the speed of the page cache,
 * ~1 GiB/s).  The report (symbolize/) looks in
 * the cache when a file is missing or is not the one recorded.
 *
 * The sampler calls capture_add for each file the first time a sampled
 * address is found in it, then capture_save once, after detaching (the
 * targets do not wait for it).  Not thread-safe.  Prints one warning when
 * the cache cannot be written.
 */
#ifndef XPROF_RECORD_CAPTURE_H
#define XPROF_RECORD_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

struct module;
struct targetfs_root;

#define CAPTURE_MAX_BYTES (2ull << 30) /* copied per recording, at most */

struct capture_stats {
	uint64_t modules; /* files holding a sampled address, with an identity */
	uint64_t saved;	  /* of which copied now (the others were in the cache) */
	uint64_t bytes;	  /* bytes copied now (files and debuginfo) */
	uint64_t ns;	  /* time capture_save took */
	uint64_t no_id;	  /* files holding a sampled address whose identity is unknown */
	uint64_t over;	  /* files not copied: the recording's CAPTURE_MAX_BYTES was reached */
	int disabled;	  /* 1: XPROF_CACHE_DIR=off */
};

struct capture_item {
	struct module *mod;
	const struct targetfs_root *root; /* where to look for its debuginfo */
};

struct capture {
	struct capture_item *items;
	size_t nr;
	unsigned long alloc;
	uint64_t no_id;
};

void capture_init(struct capture *c);
void capture_release(struct capture *c);

/*
 * Keep @mod, which holds a sampled address, for capture_save; its
 * debuginfo is looked for under @root (the process's root; NULL: ours).
 * Once per module: the caller marks it (module_mark).
 */
void capture_add(struct capture *c, struct module *mod, const struct targetfs_root *root);

/*
 * Copy the noted modules (and their debuginfo) into the cache, skipping
 * what it holds already; fill @st.  0, or -1 when the cache cannot be
 * written (one warning printed).
 */
int capture_save(struct capture *c, struct capture_stats *st);

/*
 * The cache directory into @buf (capture.h's rule).  0; -ENOENT when it is
 * turned off or no home is known; -ENAMETOOLONG.
 */
int capture_cache_dir(char *buf, size_t len);

#endif
