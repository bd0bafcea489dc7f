/* SPDX-License-Identifier: MIT */
/*
 * Inside interp/: what a runtime's reader (python.c) plugs into the seam
 * of interp.c, and the code-object cache they share.  Not for other
 * folders.
 */
#ifndef XPROF_INTERP_INTERP_INT_H
#define XPROF_INTERP_INTERP_INT_H

#include "interp.h"

struct xp_map;

/* A code object as read from the target, cached by address. */
struct interp_code_entry {
	uint64_t addr;	     /* the object's address; 0: empty slot */
	uint64_t print;	     /* a digest of what identifies it (the reader's: type, names, size) */
	uint64_t checked_at; /* the caller's time it was last read or checked */
	uint64_t code_start; /* address of its first code unit */
	uint32_t unit;	     /* bytes per code unit */
	uint32_t nunits;     /* code units, and lines[] entries */
	uint32_t *lines;     /* line of each code unit, 0: none */
	struct interp_code info;
};

/* One runtime's reader. */
struct interp_backend {
	const char *name;
	unsigned int kind; /* enum interp_kind */
	/* Whether mapping @m may hold the runtime (by its file's name: cheap). */
	bool (*is_candidate)(const struct xp_map *m);
	/*
	 * Find the runtime in the module of @m (mapped in @as).  0 and
	 * ip->priv set; -ENOENT when it is not there; another -errno after
	 * printing the one warning (the runtime is there, and unusable).
	 */
	int (*open)(struct interp *ip, const struct addrspace *as, const struct xp_map *m,
		    const struct interp_mem *mem);
	int (*take)(struct interp *ip, pid_t tid, const struct interp_mem *mem,
		    struct interp_raw *raw);
	/*
	 * Read the code object at @addr into @e (addr set, lines and strings
	 * allocated), or with @check only its digest into e->print.  0 or
	 * -errno (not a code object, unreadable).
	 */
	int (*read_code)(struct interp *ip, const struct interp_mem *mem, uint64_t addr,
			 struct interp_code_entry *e, bool check);
	void (*free)(struct interp *ip);
};

struct interp {
	const struct interp_backend *be;
	void *priv;
	pid_t pid;
	char comm[32];
	char what[48]; /* interp_describe */
	uint32_t *next_id;
	struct interp_stats st;
	/*
	 * Code objects: each entry allocated on its own; by address (open
	 * addressing, the current object at each address) and by id (in the
	 * order made, so ids increase: every entry, also those of objects
	 * since replaced at their address, whose ids stacks may still hold).
	 */
	struct interp_code_entry **by_addr;
	size_t nby_addr, cap_by_addr;
	struct interp_code_entry **by_id;
	unsigned long nby_id, alloc_by_id;
	bool disabled;	  /* warned: reads nothing more */
	uint32_t bad_run; /* code objects that could not be read since the last that could */
};

/* Read exactly @len bytes at @addr (the stack copy first).  0 or -EFAULT. */
int interp_read(const struct interp_mem *mem, uint64_t addr, void *buf, size_t len);

/* Say once that the frames of @ip's process cannot be read, why, and stop reading them. */
void interp_give_up(struct interp *ip, const char *why);

extern const struct interp_backend interp_python;

#endif
