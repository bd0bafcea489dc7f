/* SPDX-License-Identifier: MIT */
/*
 * Entry points of the subcommands, one file each in cmd/, and their option
 * structs, whose parse functions are pure (unit-tested with canned argv).
 * A cmd_* function returns the process exit status: 0, 1 (runtime failure),
 * 2 (usage), or for record the launched command's own status.
 */
#ifndef XPROF_CMD_CMD_H
#define XPROF_CMD_CMD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <stdio.h>

#include "opt.h"

int cmd_record(int argc, char **argv);
int cmd_attach(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_mark(int argc, char **argv);
int cmd_help(int argc, char **argv);

#define XP_DEFAULT_FREQ	       999
#define XP_MAX_FREQ	       10000
#define XP_DEFAULT_MAX_DEPTH   1024
#define XP_DEFAULT_RT_PRIORITY 1

struct record_opts {
	uint64_t freq_hz;
	const char *output;
	int quiet;
	int call_graph; /* enum unwind_mode */
	uint64_t max_depth;
	uint64_t duration_ns; /* 0: until the command exits */
	uint64_t flush_ns;    /* 0: SAMPLER_FLUSH_NS */
	int mode;	      /* enum sampler_mode */
	bool no_follow;
	bool no_interp; /* --no-interp: no interpreter (Python) frames */
	bool no_poll_idle;
	bool spin_idle;
	/* -1 (default) or 1 (--own-session): record from a session of its own where it
	 * helps (cmd/session.c); 0: --no-own-session */
	int own_session;
	bool any_cpu;		/* interrupt running threads from any CPU, not from their own */
	uint64_t rt_priority;	/* 0: normal priority */
	const char *delay_arg;	/* --delay as given */
	uint64_t delay_ns;	/* sampling starts this long after the start */
	const char *switch_arg; /* --switch-output as given */
	uint64_t switch_ns, switch_bytes; /* from it (0: no limit) */
	bool switch_signal;		  /* "signal": on SIGUSR2 */
	int switch_format;		  /* --switch-output-format: 0 data, 1 also pprof */
	bool start_disabled;		  /* --delay -1: sampling starts at --control's 'enable' */
	const char *control_arg;	  /* --control as given: fifo:CTL[,ACK] */
	char **argv;			  /* the command, NULL-terminated */
	int argc;
};
#define RECORD_OPTS_INIT                                                                           \
	{                                                                                          \
		.freq_hz = XP_DEFAULT_FREQ, .output = "xprof.data",                                \
		.max_depth = XP_DEFAULT_MAX_DEPTH, .rt_priority = XP_DEFAULT_RT_PRIORITY,          \
		.own_session = -1                                                                  \
	}

/* Returns 0, 2 after a usage error (printed), or XP_PARSE_HELP (help printed). */
int record_parse_args(int argc, char **argv, struct record_opts *opts);

#define XP_MAX_PIDS 64

struct attach_opts {
	struct record_opts rec; /* the shared options; argv unused */
	const char *pids;	/* -p as given */
	pid_t pid[XP_MAX_PIDS];
	unsigned int npids;
};

/* Same conventions as record_parse_args. */
int attach_parse_args(int argc, char **argv, struct attach_opts *opts);
enum report_format {
	REPORT_FLAT = 0,
	REPORT_FOLDED,
	REPORT_TREE,
	REPORT_FLAMEGRAPH,
	REPORT_PPROF,
	REPORT_SPEEDSCOPE,
};

#define REPORT_MAX_FILTER 64 /* values in each of --pid, --tid, --comm */

/* One end of --time: a time since the start of recording, or a percentage of the run. */
struct report_time {
	bool set; /* false: open (the start, or the end) */
	bool pct; /* @v is a percentage of the span from the first to the last sample */
	double v; /* ns, or percent */
};

struct report_opts {
	const char *input;  /* "-": standard input */
	const char *output; /* NULL or "-": standard output */
	int format;	    /* enum report_format */
	int sort;	    /* enum out_sort */
	uint64_t limit;	    /* 0: none */
	double min_percent;
	bool per_thread;
	bool value_samples; /* --value samples: sample counts instead of weights */
	/* Filters, as given and parsed; the names point into comm_buf. */
	const char *pid_arg, *tid_arg, *comm_arg;
	pid_t pids[REPORT_MAX_FILTER], tids[REPORT_MAX_FILTER];
	size_t nr_pids, nr_tids, nr_comms;
	const char *comms[REPORT_MAX_FILTER];
	char comm_buf[1024];
	const char *symfs;	      /* NULL, or a directory the recorded file paths are under */
	bool no_inline;		      /* fold inlined functions into their caller */
	bool no_demangle;	      /* keep symbol names mangled */
	bool header_only;	      /* print the recording's meta data and statistics only */
	struct xp_strlist debug_dirs; /* --debug-dir, each a colon-separated list */
	const char *time_arg;	      /* --time as given */
	const char *phase;	      /* --phase: the name of the phases to keep */
	const char *diff_base;	      /* --diff: the base data file, compared with -i */
	struct xp_strlist inputs;     /* every -i; input is the first */
	struct report_time time_from, time_to;
	int interp; /* --interp: enum agg_interp */
};
#define REPORT_OPTS_INIT                                                                           \
	{                                                                                          \
		.input = "xprof.data", .format = REPORT_FLAT                                       \
	}

/* Returns 0, 2 after a usage error (printed), or XP_PARSE_HELP (help printed). */
int report_parse_args(int argc, char **argv, struct report_opts *opts);

struct profile;
struct agg;
struct agg_opts;
/*
 * Aggregate the samples of @p that @ao keeps into @a (agg_init'ed), each
 * frame named as 'xprof report' with @opts names it (the format in @opts
 * decides whether source lines are loaded).  For the live view of top.
 */
void report_aggregate(const struct report_opts *opts, const struct profile *p,
		      const struct agg_opts *ao, struct agg *a);

struct dump_opts {
	const char *pid_arg; /* -p as given */
	pid_t pid;
	int call_graph; /* enum unwind_mode */
	uint64_t max_depth;
};
#define DUMP_OPTS_INIT                                                                             \
	{                                                                                          \
		.max_depth = XP_DEFAULT_MAX_DEPTH                                                  \
	}

/* Returns 0, 2 after a usage error (printed), or XP_PARSE_HELP (help printed). */
int dump_parse_args(int argc, char **argv, struct dump_opts *opts);

struct profile;
/*
 * Symbolize and aggregate the samples of @p and write them to @out in the
 * format of @opts.  0, or -1 after printing an error.  Checking @out for
 * write errors is the caller's job.
 */
int report_profile(const struct report_opts *opts, const struct profile *p, FILE *out);

/*
 * --header-only: the meta records, the number of samples, then the
 * recorder's statistics (the last record of each name), as perf report
 * --header-only prints its header: "# name : value" lines, bytes other than
 * printable ASCII written as \xNN.
 */
void report_write_header(const struct profile *p, FILE *out);

#endif
