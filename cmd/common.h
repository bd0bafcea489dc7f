/* SPDX-License-Identifier: MIT */
/*
 * What record, attach and dump share: the option entries they take (defined
 * once), a recording's run (its output is output.h's), the end-of-run
 * summary, the checks on a pid before attaching, and the explanation of
 * ptrace errors.
 */
#ifndef XPROF_CMD_COMMON_H
#define XPROF_CMD_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "control.h"
#include "output.h"
#include "sampler.h"
#include "tracer.h"

extern const char *const common_call_graph_choices[];	 /* indexed by enum unwind_mode */
extern const char *const common_mode_choices[];		 /* indexed by enum sampler_mode */
extern const char *const common_switch_format_choices[]; /* --switch-output-format */

struct record_opts;
struct xp_option;

/* -g, --call-graph into the int at @v (an enum unwind_mode), for record, attach and dump (opt.h).
 */
#define COMMON_OPTION_CALL_GRAPH(v)                                                                \
	XP_OPTION_CHOICE('g', "call-graph", (v), "<auto|fp|dwarf|libunwind|check>",                \
			 common_call_graph_choices,                                                \
			 "how to walk stacks (default auto: frame pointers, CFI where missing)")

/*
 * Fill @o with the options record and attach share, bound to @ro: all of
 * record's (xprof-record(1)), from -F to -q, as the table in common.c
 * lists them.  @duration_help says what -d means for the command.
 * Returns how many entries were written (COMMON_RECORD_OPTIONS); the
 * caller adds the terminator.
 */
#define COMMON_RECORD_OPTIONS 20
size_t common_record_options(struct xp_option *o, struct record_opts *ro,
			     const char *duration_help);

/*
 * After parsing: the values of @ro's options that the table leaves as
 * strings (--delay, --control).  0, or 2 after a usage error (printed
 * with @help).
 */
struct xp_cmd_help;
int common_record_check(struct record_opts *ro, const struct xp_cmd_help *help);

/*
 * Block the signals the sampler takes through a signalfd (SIGUSR2 too
 * with --switch-output signal), before any child is started so that none
 * is lost (a launched command unblocks them).
 */
void common_block_signals(const struct record_opts *ro);

/*
 * Open the FIFOs of --control, if given, into @c (control.h).  0, or -1
 * after an error (exit 1): call it before starting or attaching to anything.
 */
struct control;
int common_open_control(const struct record_opts *ro, struct control *c);

/* The sampler settings from the shared record/attach options (--switch-output's included). */
void common_sampler_opts(const struct record_opts *ro, int kind, struct sampler_opts *so);

/*
 * What a recording of record or attach holds while it runs.  The command
 * calls common_run_open, launches or attaches with @t, then
 * common_run_sample and output_close(&out); after a failed launch or
 * attach, common_run_abort.
 */
struct common_run {
	struct control ctl;
	struct output out;
	struct tracer t;
	struct sampler_opts so;
	struct sampler_stats st;
};

/*
 * Open --control's FIFOs, block the signals the sampler takes, create the
 * output (its meta records from @argc/@argv) and initialise the tracer
 * (TRACER_FOLLOW unless --no-follow).  0, or -1 after a printed error with
 * nothing left open.
 */
int common_run_open(struct common_run *r, const struct record_opts *ro, int argc, char **argv);
/* Undo common_run_open: release the tracer, drop the output (an earlier file stays), close. */
void common_run_abort(struct common_run *r);
/*
 * Sample the traced targets as @kind (enum sampler_kind) until the
 * recording ends, into r->so and r->st, then close --control; the output
 * is left for output_close.  Returns sampler_run's result.
 */
int common_run_sample(struct common_run *r, const struct record_opts *ro, int kind);

/* The one-paragraph summary on stderr (unless -q). */
void common_print_summary(const struct sampler_opts *o, const struct sampler_stats *st,
			  const struct tracer *t, const char *output, uint64_t bytes);

struct xp_cmd_help;
/*
 * Parse a -p list ("4242" or "4242,4243"; at most XP_MAX_PIDS, each in
 * 1..2^30-1, no empty element) into @pid[] and *@npids.  0, or 2 after a
 * usage error of @help's command (printed).
 */
int common_parse_pids(const struct xp_cmd_help *help, const char *list, pid_t *pid,
		      unsigned int *npids);

/*
 * 0 when a proc file system is mounted at /proc, else -1 after an error
 * saying so and how to mount it: without it no target can be named.
 */
int common_check_proc(void);

/*
 * 0 when @pid looks traceable, else -1 after an error: /proc is not
 * mounted (common_check_proc), it is xprof itself, a kernel thread, does
 * not exist, or /proc hides it (hidepid: the hint says what to do).
 * @what is the action, as in "cannot <what> pid N" ("attach to", "dump").
 */
int common_check_target(pid_t pid, const char *what);

/*
 * Print why tracing @pid failed with -@err, with hints (Yama ptrace_scope, an
 * existing tracer, capabilities).  Returns -1.
 */
int common_explain_trace_error(int err, pid_t pid, const char *what);

/*
 * Unless --no-own-session, run the recording in a session of its own
 * (cmd/session.c says why) when a target would share xprof's (@shared),
 * unless it will run at real-time priority or the scheduler does not group
 * by session, or --spin-idle's spinners are to stay in the target's
 * session.  Returns -1 in the process that goes on (call
 * common_own_session once the command runs), and in the process the shell
 * started, which only passes signals on, the exit status to end with.
 */
int common_split_session(const struct record_opts *ro, bool shared);
/* Move to a new session, when common_split_session decided so (else nothing). */
void common_own_session(void);
/*
 * Whether the job the shell started (xprof, or the process that stayed in
 * the terminal's process group) is in its terminal's foreground: where the
 * status line may show.
 */
bool common_foreground(void);

/* A command's exit status as a shell gives it: its code, or 128 + the signal. */
int common_exit_status(int status);

#endif
