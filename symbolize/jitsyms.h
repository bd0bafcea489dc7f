/* SPDX-License-Identifier: MIT */
/*
 * JIT symbols at report time: the address ranges a recording copied from
 * a process's perf map or jitdump (JITSYM records) and, from a jitdump,
 * the source lines of ranges of them (JITLINE records), looked up by (pid,
 * address).  Ranges may overlap where a JIT reused memory: a symbol carries
 * the time it was named at, and a lookup at time t takes the covering
 * symbol named last at or before t (the one added last among equal
 * times; with every time 0, as in older data files, the one added last);
 * an address looked up before any covering symbol was named gets the
 * earliest.  Line ranges carry no time: the one added last wins.  Reading the side-files is
 * the recorder's business (record/jitmap.c); this is only the lookup table.
 * Owns copies of every string.  Prints nothing; not thread-safe.
 */
#ifndef XPROF_SYMBOLIZE_JITSYMS_H
#define XPROF_SYMBOLIZE_JITSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct jit_range {
	pid_t pid;
	uint64_t start, end; /* [start, end), end > start */
	uint64_t seq;	     /* order of addition: breaks ties of t */
	uint64_t t;	     /* symbols: when it was named (recording time); 0 for lines */
	char *text;	     /* the symbol name, or the source file of a line range */
	unsigned int line;   /* line ranges only */
};

struct jit_ranges {
	struct jit_range *r;
	uint64_t *max_end; /* max_end[i]: largest end among r[0..i] of the same pid */
	size_t nr;
	unsigned long alloc;
	bool dirty; /* added to since the last sort */
};

struct jitsyms {
	struct jit_ranges syms, lines;
	uint64_t seq;
};

void jitsyms_init(struct jitsyms *j);
void jitsyms_release(struct jitsyms *j);

/* Add a symbol named at @t; @size 0 is ignored, a range running past 2^64 is cut there. */
void jitsyms_add(struct jitsyms *j, pid_t pid, uint64_t start, uint64_t size, const char *name,
		 uint64_t t);
/* Add a source line for [@start, @end); empty ranges are ignored. */
void jitsyms_add_line(struct jitsyms *j, pid_t pid, uint64_t start, uint64_t end, const char *file,
		      unsigned int line);
/* Whether any symbol was added for @pid (cheap: lets callers skip lookups). */
bool jitsyms_has_pid(const struct jitsyms *j, pid_t pid);

/* The symbol of @pid covering @addr at time @t, or NULL.  Valid until the next add. */
const struct jit_range *jitsyms_find(struct jitsyms *j, pid_t pid, uint64_t addr, uint64_t t);
/* The latest line range of @pid covering @addr, or NULL. */
const struct jit_range *jitsyms_find_line(struct jitsyms *j, pid_t pid, uint64_t addr);

#endif
