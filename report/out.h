/* SPDX-License-Identifier: MIT */
/*
 * Output writers: each turns aggregated stacks into one report format
 * behind the same small ops table (the C version of py-spy's Recorder):
 * begin, add once per distinct stack, end.  A writer prints only to the
 * FILE it is given (report passes stdout or the -o file); it never opens
 * files or prints diagnostics, and leaves checking the stream for write
 * errors to its caller.  A writer states in its flags what it needs from
 * aggregation (threads kept apart, code locations) and whether its output
 * is binary.  Not thread-safe.
 */
#ifndef XPROF_REPORT_OUT_H
#define XPROF_REPORT_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct agg;
struct agg_stack;

enum out_sort {
	OUT_SORT_DEFAULT = 0, /* the writer's own: self for flat, total for tree */
	OUT_SORT_SELF,
	OUT_SORT_TOTAL,
};

/* Choices of the report command line and facts about the profile. */
struct out_opts {
	enum out_sort sort;	/* flat, tree */
	uint64_t limit;		/* flat: rows; tree: entries under each node; 0: no limit */
	double min_percent;	/* flat: rows, tree: entries whose share is below are left out */
	const char *title;	/* flamegraph, speedscope, pprof comment: NULL for none */
	const char *base_title; /* a comparison's base profile (flat, tree, flamegraph) */
	const char *exe;	/* path of the main program (pprof lists its mapping first) */
	uint64_t start_ns;	/* wall clock at the start of recording, ns since the epoch */
	uint64_t duration_ns;
	uint64_t period_ns; /* sampling period asked for; 0: unknown */
	bool wall;	    /* weights are elapsed time (--mode wall), not CPU time */
	bool samples;	    /* --value samples: every value is a sample count, not a weight */
};

/* What a writer may need besides the stacks. */
struct out_info {
	const char *const *names; /* labels by id (agg.names) */
	size_t nr_names;
	uint64_t total_count;  /* samples */
	uint64_t total_weight; /* their weight */
	/*
	 * Every writer's values are weights (CPU or elapsed ns), or sample
	 * counts when this is set: --value samples, or a profile without
	 * weights.  Percentages are shares of @total, the same in every format.
	 */
	bool by_count;
	uint64_t total;
	/*
	 * A comparison (agg_add_base): the stacks carry the base profile's
	 * samples too, and @base_total is the base's whole in the same unit.
	 * Only writers with OUT_DIFF get one.
	 */
	bool diff;
	uint64_t base_total;
	const struct agg *agg;	     /* everything, for the writers that need more */
	const struct out_opts *opts; /* never NULL */
};

struct out {
	const struct out_ops *ops;
	FILE *f;
	struct out_info info;
	void *priv; /* the writer's state between begin and end */
};

enum out_flags {
	OUT_BINARY = 1 << 0,	/* never written to a terminal */
	OUT_THREADS = 1 << 1,	/* wants stacks built with AGG_THREADS */
	OUT_LOCATIONS = 1 << 2, /* wants stacks built with AGG_LOCATIONS */
	OUT_DIFF = 1 << 3,	/* can show a comparison of two profiles (out_info.diff) */
	OUT_TIMELINE = 1 << 4,	/* wants stacks built with AGG_TIMELINE */
};

struct out_ops {
	const char *name;   /* the format's name, as on the command line */
	unsigned int flags; /* enum out_flags */
	/* 0 or -1.  Sets up o->priv. */
	int (*begin)(struct out *o);
	/* One distinct stack with its sample count and weight sum.  0 or -1. */
	int (*add)(struct out *o, const struct agg_stack *s, uint64_t count, uint64_t weight);
	/* Print what is left and free o->priv, even after an error.  0 or -1. */
	int (*end)(struct out *o);
};

/*
 * Define the ops table out_<fmt> of the writer called <fmt> on the command
 * line, with its flags and hooks.  The name is spelled once, so the symbol
 * and the name the user types cannot drift apart.
 */
#define OUT_WRITER(fmt, flags_, begin_, add_, end_)                                                \
	const struct out_ops out_##fmt = {                                                         \
	    .name = #fmt,                                                                          \
	    .flags = (flags_),                                                                     \
	    .begin = (begin_),                                                                     \
	    .add = (add_),                                                                         \
	    .end = (end_),                                                                         \
	}

extern const struct out_ops out_folded;	    /* Brendan Gregg's folded stacks */
extern const struct out_ops out_flat;	    /* functions by self and total share */
extern const struct out_ops out_tree;	    /* call tree from the roots, with shares */
extern const struct out_ops out_flamegraph; /* interactive flame graph, one HTML file */
extern const struct out_ops out_pprof;	    /* gzipped profile.proto for pprof */
extern const struct out_ops out_speedscope; /* speedscope JSON */

/*
 * Print a frame or process name, each control character as '?': names can
 * come from the data file, which must not be able to drive the terminal.
 */
void out_put_name(FILE *f, const char *name);

/*
 * Print @s as a JSON string literal, quotes included.  Invalid UTF-8 bytes
 * become U+FFFD; '<', '>' and '&' are escaped too, so the literal can sit
 * inside an HTML <script> element.
 */
void out_put_json_string(FILE *f, const char *s);

/* Share of @part in @whole, in percent; 0 when @whole is 0. */
double out_share(uint64_t part, uint64_t whole);

/* A change of share in points, @now - @before, 0 when it rounds to 0.00 (never "-0.00"). */
double out_points(double now, double before);

/* The value a writer shows for @count samples of weight @weight (see out_info.by_count). */
static inline uint64_t out_value(const struct out *o, uint64_t count, uint64_t weight)
{
	return o->info.by_count ? count : weight;
}

/*
 * The value a writer shows for the self samples of @row, or for its total
 * samples if @total: out_value of its counts and weights.  @row points to
 * anything with self_count, self_weight, total_count and total_weight (a
 * flat profile's function, a call-tree node); it is evaluated twice.
 */
#define OUT_ROW_VALUE(o, row, total)                                                               \
	((total) ? out_value(o, (row)->total_count, (row)->total_weight)                           \
		 : out_value(o, (row)->self_count, (row)->self_weight))

/*
 * The first lines of a comparison's text report: which files, what the
 * shares are of, and both sample counts, as "#" comment lines.
 */
void out_put_diff_header(struct out *o);

/* The base profile's value of @s in a comparison (0 otherwise). */
uint64_t out_base_value(const struct out *o, const struct agg_stack *s);

/*
 * begin and add of the writers that draw a call tree (tree, flamegraph):
 * o->priv is a struct calltree (calltree.h) of every stack added, with
 * the base profile's values in a comparison.  The writer's end draws it
 * and then calls out_calltree_free.
 */
int out_calltree_begin(struct out *o);
int out_calltree_add(struct out *o, const struct agg_stack *s, uint64_t count, uint64_t weight);
/* Release and free the call tree of out_calltree_begin; o->priv is NULL after. */
void out_calltree_free(struct out *o);

/*
 * @base_value (of the base profile) scaled to the new profile's whole, so
 * that it compares with the new profile's values (difffolded.pl -n).
 */
uint64_t out_scale_base(const struct out *o, uint64_t base_value);

/*
 * Write every stack of @a to @f in the format of @ops, with @opts (NULL:
 * defaults).  0, or -1 when a writer failed (nothing printed: the caller
 * checks @f for I/O errors).
 */
int out_write_opts(const struct out_ops *ops, FILE *f, const struct agg *a,
		   const struct out_opts *opts);
/* out_write_opts with the defaults. */
int out_write(const struct out_ops *ops, FILE *f, const struct agg *a);

#endif
