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
#ifndef XPROF_SRC_AGGREGATE_H
#define XPROF_SRC_AGGREGATE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct profile;

/* A frame to name. */
struct agg_frame_req {
	pid_t pid;
	uint64_t t;    /* time of a sample of the group; every sample in it resolves alike */
	uint64_t pc;   /* as recorded */
	uint8_t flags; /* enum xp_frame_flags */
};

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

/* One distinct symbolized stack. */
struct agg_stack {
	uint32_t comm;		/* name id of the process name */
	uint32_t nr;		/* number of frames */
	const uint32_t *frames; /* name ids, root first; leaf is frames[nr - 1] */
	uint64_t count;		/* samples */
	uint64_t weight;	/* sum of their weights */
};

struct agg {
	/* Every label and process name, by id; equal strings have equal ids. */
	char **names;
	size_t nr_names;
	/* Sorted by comm, then frame names from the root: deterministic. */
	struct agg_stack *stacks;
	size_t nr_stacks;
	uint64_t total_count, total_weight;

	unsigned long alloc_names, alloc_stacks;
};

void agg_init(struct agg *a);
void agg_release(struct agg *a);

/*
 * Aggregate every sample of @p into @a (freshly initialised).  @resolve
 * names frames; NULL labels each frame with its pc in hex (tests).  Always
 * succeeds; a profile without samples gives no stacks.
 */
void agg_build(struct agg *a, const struct profile *p, agg_resolve_fn resolve, void *ctx);

#endif
