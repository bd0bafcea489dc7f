/* SPDX-License-Identifier: MIT */
/*
 * Aggregation: merges the samples of a profile into distinct symbolized
 * stacks with their sample counts and weight sums, ready for the output
 * writers.  Samples are first grouped by (pid, profile_epoch, stack), the
 * finest grain at which symbolization can differ, so each group is named
 * once however many samples it has; groups whose names come out equal are
 * then merged.  Naming a frame is delegated to a resolver callback, which
 * keeps this module free of any symbolizer (report passes one built on
 * symbolize.h).  Prints nothing.  Not thread-safe.
 */
#ifndef XPROF_REPORT_AGGREGATE_H
#define XPROF_REPORT_AGGREGATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct profile;
struct profile_mapping;

/* Where a label's code comes from: source file (NULL: unknown) and line (0: unknown). */
struct agg_src {
	const char *file;
	unsigned int line;
};

/* A frame to name. */
struct agg_frame_req {
	pid_t pid;
	uint64_t t;    /* time of a sample of the group; every sample in it resolves alike */
	uint64_t pc;   /* as recorded */
	uint64_t addr; /* where it is looked up: xp_lookup_pc(pc, flags), computed once */
	uint8_t flags; /* enum xp_frame_flags */
	/*
	 * NULL, or (AGG_LOCATIONS) parallel to the labels, all unknown on
	 * entry: the resolver may store each label's source line there (an
	 * inlined function's callers: the line of the call).
	 */
	struct agg_src *src;
};

/*
 * Longest frame label kept, in bytes: a longer one (only a hostile data
 * file names a function so) is cut to this and "...".  Counted in
 * agg.cut_names.
 */
#define AGG_NAME_MAX 4096

/* Most labels one pc may expand to (a chain of inlined calls). */
#define AGG_MAX_LABELS 32

/*
 * Name the frame @req: store 1..@max labels at @labels, innermost first (a
 * pc inside inlined code names the inlined function, then its callers up
 * to the real function), and return how many.  The strings need only live
 * until the callback returns.  0 is treated as one "[unknown]" label.
 */
typedef unsigned int (*agg_resolve_fn)(void *ctx, const struct agg_frame_req *req,
				       const char **labels, unsigned int max);

/* No name: agg_stack.thread when threads are not kept apart. */
#define AGG_NONE UINT32_MAX
/* In agg_stack.locs: this frame was inlined into the frame before it (same pc). */
#define AGG_LOC_INLINED (1u << 31)

/*
 * Where a frame came from (AGG_LOCATIONS): one recorded pc.  Equal
 * locations always name alike, so a location stands for the frames of one
 * pc (several when the pc is in inlined code).
 */
struct agg_loc {
	const struct profile_mapping *map; /* in the profile; NULL: none (marker, unmapped) */
	uint64_t addr; /* looked up (pc - 1 rule applied); 0 for a thread frame */
	uint8_t flags; /* enum xp_frame_flags as recorded */
	uint32_t name; /* name id of its outermost frame */
	/*
	 * The source lines of its frames, outermost first as in a stack: @nr
	 * entries of agg.lines from @first (the frames of a pc, the function
	 * holding the code first, then those inlined into it).
	 */
	uint32_t first_line, nr_lines;
};

/* A frame's source line: file as a name id (AGG_NONE: unknown), line (0: unknown). */
struct agg_line {
	uint32_t file;
	uint32_t line;
};

/* One distinct symbolized stack. */
struct agg_stack {
	uint32_t comm;		/* name id of the process name */
	uint32_t thread;	/* name id of "comm/tid" (AGG_THREADS), else AGG_NONE */
	uint32_t nr;		/* number of frames */
	const uint32_t *frames; /* name ids, root first; leaf is frames[nr - 1] */
	/*
	 * AGG_LOCATIONS: per frame, an index into agg.locs, with
	 * AGG_LOC_INLINED set on every frame but the outermost of a pc.
	 * NULL otherwise.
	 */
	const uint32_t *locs;
	uint64_t count;	 /* samples */
	uint64_t weight; /* sum of their weights */
	/* After agg_add_base: the samples and weight of this stack in the base profile. */
	uint64_t base_count, base_weight;
};

enum agg_flags {
	AGG_THREADS = 1 << 0, /* keep threads apart: agg_stack.thread names each */
	AGG_THREAD_FRAME =
	    1 << 1,		/* and put that name at the root as a frame (implies AGG_THREADS) */
	AGG_LOCATIONS = 1 << 2, /* fill agg.locs and agg_stack.locs */
	AGG_TIMELINE = 1 << 3,	/* fill agg.samples: every sample kept, in time order */
};

/* What becomes of interpreter frames (ISTACK): enum agg_interp. */
enum agg_interp {
	AGG_INTERP_MERGE = 0, /* in place of the native frame of the loop that ran them */
	AGG_INTERP_BESIDE,    /* called by that native frame, which stays */
	AGG_INTERP_NATIVE,    /* left out: the native stacks alone */
};

/*
 * An interpreter frame's name (agg.inames, by name id): its function's
 * bare name and source file (name ids), its line (0: unknown) and the
 * line its function starts at.  @func is AGG_NONE for other names.
 */
struct agg_iname {
	uint32_t func, file, line, first_line;
};

/* One sample kept (AGG_TIMELINE). */
struct agg_sample {
	uint64_t t; /* ns since the start of recording */
	uint64_t weight;
	uint32_t stack; /* index into agg.stacks */
	pid_t tid;
};

/*
 * Which samples to keep.  Each list is empty (no condition) or the values
 * one of which must match; a sample must pass every non-empty list.  A
 * name matches the process's name or the thread's (as profile_comm and
 * profile_thread_comm give them at the sample's time).  With @time_range,
 * a sample must also have its time (ns since the start of recording) in
 * [@t_from, @t_to]; with @nr_spans, in one of the @spans (report --phase).
 */
struct agg_span {
	uint64_t from, to; /* [from, to) */
};

struct agg_opts {
	unsigned int flags; /* enum agg_flags */
	const pid_t *pids;
	size_t nr_pids;
	const pid_t *tids;
	size_t nr_tids;
	const char *const *comms;
	size_t nr_comms;
	bool time_range;
	uint64_t t_from, t_to;
	/*
	 * Samples before this index of profile.samples (file order) are not
	 * looked at, nor counted as filtered: for a live view that reads a
	 * growing file again and wants what came since.
	 */
	size_t first_sample;
	const struct agg_span *spans;
	size_t nr_spans;
	unsigned int interp; /* enum agg_interp */
};

struct agg {
	/* Every label and process name, by id; equal strings have equal ids. */
	char **names;
	size_t nr_names;
	/* Sorted by comm, then frame names from the root: deterministic. */
	struct agg_stack *stacks;
	size_t nr_stacks;
	/* Of the samples kept (all of them without filters). */
	uint64_t total_count, total_weight;
	/* Samples left out by the filters, and their weight. */
	uint64_t filtered_count, filtered_weight;
	/* Labels longer than AGG_NAME_MAX, cut (once per frame of a group). */
	uint64_t cut_names;
	unsigned int flags;   /* enum agg_flags the stacks were built with */
	struct agg_loc *locs; /* AGG_LOCATIONS */
	size_t nr_locs;
	struct agg_line *lines; /* AGG_LOCATIONS: see agg_loc */
	size_t nr_lines;
	/*
	 * Interpreter frames' names (Python functions), by name id: entries
	 * from nr_inames on, and those with func AGG_NONE, are other names.
	 */
	struct agg_iname *inames;
	size_t nr_inames;
	struct agg_sample *samples; /* AGG_TIMELINE: by time (then file order) */
	size_t nr_samples;
	/* agg_add_base was called: the stacks carry a base profile's samples too. */
	bool has_base;
	uint64_t base_total_count, base_total_weight;

	unsigned long alloc_names, alloc_stacks, alloc_locs, alloc_lines, alloc_inames;
};

void agg_init(struct agg *a);
void agg_release(struct agg *a);

/*
 * Aggregate the samples of @p that pass @opts (NULL: all, no flags) into
 * @a (freshly initialised).  @resolve names frames; NULL labels each frame
 * with its pc in hex (tests).  Always succeeds; a profile without samples
 * (or none passing) gives no stacks.  The locations point into @p, which
 * must outlive @a's use.
 */
void agg_build_opts(struct agg *a, const struct profile *p, const struct agg_opts *opts,
		    agg_resolve_fn resolve, void *ctx);

/*
 * Make @a a comparison: add every stack of @base (aggregated with the same
 * flags, without AGG_LOCATIONS) as base_count and base_weight to the stack
 * of @a with the same names, or as a new stack that @a lacks (count and
 * weight 0).  Stacks are matched by names only (process name, thread
 * label, frames), since the two profiles come from different runs.  @a's
 * totals stay its own; @base's are in base_total_*.  Filtered counts are
 * @a's.
 */
void agg_add_base(struct agg *a, const struct agg *base);

/*
 * Add the samples of @b (another profile aggregated with the same flags,
 * without AGG_LOCATIONS or AGG_TIMELINE) to @a: its stacks to those of @a
 * with the same names, or as new ones, and its totals and filtered counts
 * to @a's.  For reports of several data files (the parts of one run).
 */
void agg_merge(struct agg *a, const struct agg *b);

/* The interpreter name of name id @name, or NULL when it is another name. */
const struct agg_iname *agg_iname(const struct agg *a, uint32_t name);

/*
 * The label of an interpreter frame: "@func (@file's last part:@line)",
 * the file's directory too when it is an __init__.py, the line left out
 * when 0, into @buf of @len bytes.
 */
void agg_interp_label(char *buf, size_t len, const char *func, const char *file, uint32_t line);

/* agg_build_opts without options. */
void agg_build(struct agg *a, const struct profile *p, agg_resolve_fn resolve, void *ctx);

#endif
