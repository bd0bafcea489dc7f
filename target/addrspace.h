/* SPDX-License-Identifier: MIT */
/*
 * The address space of one traced process as record sees it: its mappings
 * from /proc/PID/maps (re-read on exec, and when a sampled pc falls outside
 * every known executable mapping), each linked to the module (ELF file on
 * disk: build-id, CFI) it maps.  Modules are shared between processes
 * through a module cache keyed by device, inode and path.
 *
 * A mapping and the parser of its /proc line are maps.h's; what a module
 * is, module.h's.  Functions return 0 or -errno and print nothing.  Not
 * thread-safe.  May be called while the target runs.
 */
#ifndef XPROF_TARGET_ADDRSPACE_H
#define XPROF_TARGET_ADDRSPACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "maps.h"

struct module_cache;

struct addrspace {
	pid_t pid;
	struct xp_map *maps;   /* sorted by start, non-overlapping */
	size_t nr, alloc;
	uint64_t loads;        /* times /proc/PID/maps was read */
	struct module_cache *mc; /* borrowed */
	/*
	 * How the process sees files and itself (targetfs.h), found by the
	 * first addrspace_load: its root (NULL: ours; owned by the module
	 * cache) and its innermost pid (0: unknown).
	 */
	bool fs_known;
	const struct targetfs_root *root;
	pid_t nspid;
};

void addrspace_init(struct addrspace *as, pid_t pid, struct module_cache *mc);
void addrspace_release(struct addrspace *as);
/*
 * Find the process's root and NSpid (fs_known, root, nspid), once; the
 * process must still live.
 */
void addrspace_find_fs(struct addrspace *as);
/*
 * (Re)read /proc/PID/maps (after addrspace_find_fs): a new generation of
 * the address space (@loads counts them).  Mappings identical to a known
 * one keep its module; the others are 'fresh', so that a recorder writes
 * out only those.  0 or -errno.
 */
int addrspace_load(struct addrspace *as);
/*
 * @as (empty) takes the mappings of @parent, the process its process was
 * forked from, without reading /proc: a fork copies the address space as
 * it is, and @parent's maps are what is known of it.  Every mapping is
 * @fresh or none (whether the child's own records are to be written is
 * the caller's to say).  Modules are shared, the root is the parent's, the
 * innermost pid found anew where it is not the pid itself.  A pc the copy
 * lacks (the parent mapped it after its last read) makes the recorder read
 * the child's maps as for any process.
 */
void addrspace_fork(struct addrspace *as, const struct addrspace *parent, bool fresh);
/* Load from a maps text (tests, fuzzing): same as addrspace_load. */
int addrspace_load_text(struct addrspace *as, const char *text);
/* Mapping containing @addr, or NULL. */
struct xp_map *addrspace_find(const struct addrspace *as, uint64_t addr);
/* Whether @addr lies in an executable mapping. */
bool addrspace_is_exec(const struct addrspace *as, uint64_t addr);
/*
 * Whether the file mapping holding @addr no longer maps what it did when
 * the maps were read: its range now maps another file (a library
 * dlclose'd, another dlopen'ed at the same address), or is no longer one
 * file mapping.  A pc inside it then means something the recorded mapping
 * does not, though addrspace_is_exec still says yes.  One readlink(2) of
 * /proc/PID/map_files/START-END, which a tracer may do (PTRACE_MODE_READ,
 * Linux >= 4.3).  false for anonymous and special mappings and when it
 * cannot tell.  May be called while the target runs.
 */
bool addrspace_is_stale(const struct addrspace *as, uint64_t addr);

#endif
