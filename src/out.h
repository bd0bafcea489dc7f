/* SPDX-License-Identifier: MIT */
/*
 * Output writers: each turns aggregated stacks into one report format
 * behind the same small ops table (the C version of py-spy's Recorder):
 * begin, add once per distinct stack, end.  A writer prints only to the
 * FILE it is given (report passes stdout or the -o file); it never opens
 * files or prints diagnostics, and leaves checking the stream for write
 * errors to its caller.  Not thread-safe.
 */
#ifndef XPROF_SRC_OUT_H
#define XPROF_SRC_OUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct agg;
struct agg_stack;

/* What a writer may need besides the stacks. */
struct out_info {
	const char *const *names; /* labels by id (agg.names) */
	size_t nr_names;
	uint64_t total_count;  /* samples */
	uint64_t total_weight; /* their weight: percentages are shares of this */
};

struct out {
	const struct out_ops *ops;
	FILE *f;
	struct out_info info;
	void *priv; /* the writer's state between begin and end */
};

struct out_ops {
	const char *name; /* the format's name, as on the command line */
	/* 0 or -1.  Sets up o->priv. */
	int (*begin)(struct out *o);
	/* One distinct stack with its sample count and weight sum.  0 or -1. */
	int (*add)(struct out *o, const struct agg_stack *s, uint64_t count, uint64_t weight);
	/* Print what is left and free o->priv, even after an error.  0 or -1. */
	int (*end)(struct out *o);
};

extern const struct out_ops out_folded; /* Brendan Gregg's folded stacks */
extern const struct out_ops out_flat;	/* functions by self and total share */

/*
 * Print a frame or process name, each control character as '?': names can
 * come from the data file, which must not be able to drive the terminal.
 */
void out_put_name(FILE *f, const char *name);

/*
 * Write every stack of @a to @f in the format of @ops.  0, or -1 when a
 * writer failed (nothing printed: the caller checks @f for I/O errors).
 */
int out_write(const struct out_ops *ops, FILE *f, const struct agg *a);

#endif
