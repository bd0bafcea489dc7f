/* SPDX-License-Identifier: MIT */
/*
 * The reader side of the data file: loads a whole profile into memory
 * (processes with their exec generations, threads, mappings, stacks,
 * samples, exits, stats, meta, JIT symbols and lines, [vdso] images) and answers the questions
 * report asks of it: which stack a sample has, which mapping covered an
 * address of a process at a given time, what a process was called.
 *
 * The file is untrusted input (it may come from another machine): every
 * length is checked before use.  Loading prints its own diagnostics, naming
 * the file and the byte offset: an error (and -1) when the file is not an
 * xprof file, has another version or is corrupt in the middle; one warning
 * when the tail is truncated or corrupt, in which case every whole record
 * before it is kept.  Lookups print nothing.  Not thread-safe while
 * loading; lookups on a loaded profile may run concurrently.
 */
#ifndef XPROF_DATA_PROFILE_H
#define XPROF_DATA_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "datafile.h"

/* Times are ns since the start of recording.  Strings are owned, never NULL. */

struct profile_process {
	uint64_t t;
	uint64_t seq; /* record number in the file: orders records of equal time */
	pid_t pid, ppid;
	uint32_t flags; /* enum df_process_flags */
	char *comm, *exe;
	pid_t nspid; /* the pid in its own pid namespace; 0: not recorded */
};

struct profile_thread {
	uint64_t t;
	pid_t pid, tid;
	char *comm;
};

struct profile_mapping {
	uint64_t t, seq;
	uint64_t start, end, offset; /* end > start */
	pid_t pid;
	uint32_t prot; /* XP_PROT_* */
	char *path;
	uint8_t build_id_len;
	uint8_t build_id[DF_BUILD_ID_MAX];
	/* Without a build-id: the file's Go build ID or SHA-256 (no length: none, older files) */
	struct xp_file_id file_id;
};

/* An interpreter frame of a stack (ISTACK): it goes in place of native frame @at. */
struct profile_iframe {
	uint32_t at;   /* index into the stack's pcs, or nr: beyond its outermost frame */
	uint32_t line; /* 0: unknown */
	uint64_t code; /* an ICODE id */
};

struct profile_stack {
	uint64_t id;
	uint32_t nr;
	uint64_t *pcs;	/* innermost first */
	uint8_t *flags; /* enum xp_frame_flags, one per pc */
	/*
	 * Its interpreter frames, innermost first, by @at (never decreasing):
	 * each run of frames with one @at replaces that native frame, the
	 * interpreter's loop they ran in.  None in a file without ISTACK.
	 */
	uint32_t nr_interp;
	struct profile_iframe *interp;
};

/* An interpreter's code object (ICODE). */
struct profile_code {
	uint64_t id;
	uint32_t kind; /* 1: Python */
	uint32_t first_line;
	char *name, *file;
};

/* An ISTACK record while loading: attached to its stack once every stack is read. */
struct profile_istack {
	uint64_t stack_id;
	uint32_t nr;
	struct profile_iframe *f;
};

struct profile_sample {
	uint64_t t;
	pid_t pid, tid;
	uint64_t stack_id;
	uint64_t weight;
	size_t stack; /* index into profile.stacks of the stack with stack_id */
};

struct profile_exit {
	uint64_t t;
	pid_t pid, tid; /* tid 0: the whole process */
	int32_t status;
};

struct profile_stat {
	char *name;
	uint64_t value;
};

struct profile_meta {
	char *key, *value;
};

struct profile_jitsym {
	pid_t pid;
	uint64_t start, size;
	char *name;
	uint64_t t; /* when the JIT named it (recording time); 0: unknown, or an older file */
};

struct profile_jitline {
	pid_t pid;
	uint64_t start, end; /* end > start */
	uint32_t line;
	char *file;
};

struct profile_vdso {
	uint8_t *image;
	size_t len; /* > 0 */
};

/* A MARK record: a phase starts, or sampling is enabled or disabled (enum df_mark_kind). */
struct profile_mark {
	uint64_t t;
	uint32_t kind;
	char *name; /* the phase (DF_MARK_PHASE), else "" */
};

struct profile_index;

struct profile {
	char *name; /* the file, as named in messages */
	uint16_t version, e_machine;
	uint64_t start_ns; /* wall clock, ns since the epoch */

	/* In file order.  nr_* elements; alloc_* is capacity (internal). */
	struct profile_process *procs;
	size_t nr_procs;
	struct profile_thread *threads;
	size_t nr_threads;
	struct profile_mapping *maps;
	size_t nr_maps;
	struct profile_stack *stacks;
	size_t nr_stacks;
	struct profile_sample *samples; /* only samples whose stack is known */
	size_t nr_samples;
	struct profile_exit *exits;
	size_t nr_exits;
	struct profile_stat *stats;
	size_t nr_stats;
	struct profile_meta *metas;
	size_t nr_metas;
	struct profile_jitsym *jitsyms;
	size_t nr_jitsyms;
	struct profile_jitline *jitlines;
	size_t nr_jitlines;
	struct profile_vdso *vdsos;
	size_t nr_vdsos;
	struct profile_mark *marks; /* of the kinds this reader knows */
	size_t nr_marks;
	struct profile_code *codes; /* by id once indexed */
	size_t nr_codes;
	struct profile_istack *istacks; /* emptied into the stacks when indexed */
	size_t nr_istacks;
	unsigned long alloc_procs, alloc_threads, alloc_maps, alloc_stacks, alloc_samples,
	    alloc_exits, alloc_stats, alloc_metas, alloc_jitsyms, alloc_jitlines, alloc_vdsos,
	    alloc_marks, alloc_codes, alloc_istacks;

	uint64_t records;	 /* whole records read */
	uint64_t unknown;	 /* records of an unknown type, skipped */
	uint64_t orphan_samples; /* samples whose stack id has no STACK record, dropped */
	uint64_t deep_stacks;	 /* stacks deeper than XP_MAX_DEPTH + 1 frames, cut to that */
	uint64_t dup_stacks;	 /* STACK records repeating an id, ignored */
	uint64_t bad_istacks;	 /* ISTACK records of no stack, or of one that had them: ignored */
	uint64_t total_weight;	 /* sum of the weights of samples[] */
	uint64_t good_bytes;	 /* the file is used up to this offset */
	bool truncated;		 /* the tail after good_bytes was cut or corrupt */
	/*
	 * Set before reading a file that is still being written (a live
	 * view): a cut tail is then expected, and not warned about.
	 */
	bool live;

	struct profile_index *idx; /* lookup tables, built after loading */
};

void profile_init(struct profile *p);
/* Free everything @p owns; @p can then be loaded again after profile_init. */
void profile_release(struct profile *p);

/*
 * Load a profile from @f, read from its current position to EOF, naming it
 * @name in messages.  @p must be freshly initialised.  0, or -1 after
 * printing an error; call profile_release in both cases.
 */
int profile_read(struct profile *p, FILE *f, const char *name);
/* Open @path and profile_read it.  Prints "cannot open" errors too. */
int profile_load(struct profile *p, const char *path);
/* The same from @len bytes in memory (tests and fuzzing). */
int profile_load_mem(struct profile *p, const void *buf, size_t len, const char *name);

/* The stack of a sample. */
static inline const struct profile_stack *profile_sample_stack(const struct profile *p,
							       const struct profile_sample *s)
{
	return &p->stacks[s->stack];
}

/* The STACK record with @id, or NULL. */
const struct profile_stack *profile_stack_by_id(const struct profile *p, uint64_t id);

/* The ICODE record with @id, or NULL (the first of an id repeated). */
const struct profile_code *profile_code_by_id(const struct profile *p, uint64_t id);

/*
 * The PROCESS record describing @pid at time @t: the latest at or before
 * @t, else (a sample before the process was announced) the earliest.  NULL
 * when @pid has none.
 */
const struct profile_process *profile_process_at(const struct profile *p, pid_t pid, uint64_t t);

/* The name of @pid at @t: its comm, else its exe's basename; NULL if unknown. */
const char *profile_comm(const struct profile *p, pid_t pid, uint64_t t);

/*
 * The name of thread @tid at @t: the comm of its latest THREAD record at or
 * before @t, else (a sample before the thread was announced) of its
 * earliest.  NULL when @tid has no THREAD record with a non-empty comm.
 */
const char *profile_thread_comm(const struct profile *p, pid_t tid, uint64_t t);

/*
 * The mapping of @pid that covered @addr at time @t (rules in
 * doc/data-format.md, MAPPING): the latest covering mapping seen at or
 * before @t and not older than the exec generation @t falls in; failing
 * that the earliest seen later in the same generation; failing that, for a
 * forked process, the parent's mapping as of the fork.  NULL if none.
 */
const struct profile_mapping *profile_find_mapping(const struct profile *p, pid_t pid, uint64_t t,
						   uint64_t addr);

/*
 * A number that changes only when something that profile_find_mapping,
 * profile_comm or the JIT symbol valid at a time (JITSYM t, where a JIT
 * reused addresses) depends on changes for @pid: samples of one pid with
 * equal epochs resolve every address alike, so they can be grouped before
 * symbolizing.
 */
uint64_t profile_epoch(const struct profile *p, pid_t pid, uint64_t t);

/* The last STAT named @name: true and *@value set, or false. */
bool profile_stat(const struct profile *p, const char *name, uint64_t *value);
/* The last META value for @key, or NULL. */
const char *profile_meta(const struct profile *p, const char *key);

#endif
