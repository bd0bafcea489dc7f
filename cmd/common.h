/* SPDX-License-Identifier: MIT */
/*
 * What record, attach and dump share: the option entries they take (defined
 * once), opening the output, the end-of-run summary, the checks on a pid
 * before attaching, and the explanation of ptrace errors.
 */
#ifndef XPROF_CMD_COMMON_H
#define XPROF_CMD_COMMON_H

#include <stdint.h>
#include <sys/types.h>

struct sampler_stats;
struct sampler_opts;
struct tracer;
struct df_writer;

extern const char *const common_call_graph_choices[]; /* indexed by enum unwind_mode */
extern const char *const common_mode_choices[];	      /* indexed by enum sampler_mode */

/* Write the meta records that describe this run (command line, host, version). */
int common_write_meta(struct df_writer *w, int argc, char **argv);

/* The one-paragraph summary on stderr (unless -q). */
void common_print_summary(const struct sampler_opts *o, const struct sampler_stats *st,
			  const struct tracer *t, const char *output, uint64_t bytes);

/*
 * 0 when @pid looks traceable, else -1 after an error: it is xprof itself,
 * a kernel thread, or does not exist.  @what is the action, as in "cannot
 * <what> pid N" ("attach to", "dump").
 */
int common_check_target(pid_t pid, const char *what);

/*
 * Print why tracing @pid failed with -@err, with hints (Yama ptrace_scope, an
 * existing tracer, capabilities).  Returns -1.
 */
int common_explain_trace_error(int err, pid_t pid, const char *what);

#endif
