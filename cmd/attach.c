/* SPDX-License-Identifier: MIT */
/*
 * xprof attach: seize running processes (every thread), sample them for a
 * while, then detach and leave them running exactly as before.  Ends on
 * --duration, Ctrl-C, SIGTERM, SIGHUP, or when every target has exited.
 */
#include "cmd.h"
#include "common.h"
#include "control.h"
#include "datafile.h"
#include "err.h"
#include "opt.h"
#include "sampler.h"
#include "tracer.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const struct xp_cmd_help attach_help =
    XP_CMD_HELP("attach", XP_USAGE("xprof attach -p <pid>[,<pid>...] [<options>]"),
		"Profile running processes for a while, then detach and leave them running.",
		"    xprof attach -p 4242 -d 30s          # 30 s of pid 4242, all threads\n"
		"    xprof attach -p 4242,4243            # until Ctrl-C or both exit\n"
		"    xprof attach -p 4242 --mode wall     # blocked threads too\n"
		"    xprof report --flat                  # then look at the profile\n");

int attach_parse_args(int argc, char **argv, struct attach_opts *opts)
{
	struct xp_option o[COMMON_RECORD_OPTIONS + 4] = {
	    XP_OPTION_STRING('p', "pid", &opts->pids, "<pid>[,<pid>...]",
			     "processes to profile (every thread of each)"),
	};
	size_t n;
	int first;

	n = 1 +
	    common_record_options(o + 1, &opts->rec,
				  "stop after this long from the start of sampling (500ms, 30s, "
				  "2m, 1h; default: until Ctrl-C or the targets exit)");
	o[n] = (struct xp_option)XP_OPTION_END();
	first = xp_parse_options(argc, argv, o, &attach_help, 0);
	if (first == XP_PARSE_HELP)
		return XP_PARSE_HELP;
	if (first < 0)
		return XP_EXIT_USAGE;
	if (first < argc)
		return xp_usage_error(&attach_help,
				      "unexpected argument '%s' (use 'xprof record' to "
				      "run a command)",
				      argv[first]);
	if (common_record_check(&opts->rec, &attach_help))
		return XP_EXIT_USAGE;
	if (!opts->pids)
		return xp_usage_error(&attach_help, "no process given: use -p <pid>");
	return common_parse_pids(&attach_help, opts->pids, opts->pid, &opts->npids);
}

/* Whether a target runs in xprof's session (a script that started it, then attached). */
static bool shares_session(const struct attach_opts *o)
{
	unsigned int i;

	for (i = 0; i < o->npids; i++)
		if (getsid(o->pid[i]) == getsid(0))
			return true;
	return false;
}

int cmd_attach(int argc, char **argv)
{
	struct attach_opts opts = {.rec = {.freq_hz = XP_DEFAULT_FREQ,
					   .output = "xprof.data",
					   .max_depth = XP_DEFAULT_MAX_DEPTH,
					   .rt_priority = XP_DEFAULT_RT_PRIORITY}};
	struct sampler_opts so;
	struct sampler_stats st;
	struct common_parts parts;
	char name[PATH_MAX];
	struct control ctl;
	struct df_writer *w;
	struct tracer t;
	char what[64];
	uint64_t bytes;
	int ret, e;
	unsigned i;

	ret = attach_parse_args(argc, argv, &opts);
	if (ret)
		return xp_parse_status(ret);
	if (opts.rec.quiet)
		xp_quiet = 1;
	for (i = 0; i < opts.npids; i++)
		if (common_check_target(opts.pid[i], "attach to"))
			return XP_EXIT_FAIL;
	ret = common_split_session(&opts.rec, shares_session(&opts));
	if (ret >= 0)
		return ret;
	common_own_session();

	if (common_open_control(&opts.rec, &ctl))
		return XP_EXIT_FAIL;
	/* Before the output exists: who sees it may signal (SIGUSR2 with --switch-output signal).
	 */
	common_block_signals(&opts.rec);
	w = common_open_output(opts.rec.output, argc, argv);
	if (!w) {
		control_close(&ctl);
		return XP_EXIT_FAIL;
	}

	tracer_init(&t, opts.rec.no_follow ? 0 : TRACER_FOLLOW);
	for (i = 0; i < opts.npids; i++) {
		e = tracer_attach(&t, opts.pid[i]);
		if (e) {
			snprintf(what, sizeof(what), "attach to pid %d", (int)opts.pid[i]);
			if (e == -EINVAL)
				xp_error("cannot attach to %d: it is a thread id, not a process id",
					 (int)opts.pid[i]);
			else
				common_explain_trace_error(-e, opts.pid[i], what);
			tracer_detach_all(&t);
			tracer_release(&t);
			df_writer_discard(w); /* nothing recorded: an earlier output stays */
			control_close(&ctl);
			return XP_EXIT_FAIL;
		}
	}
	common_sampler_opts(&opts.rec, SAMPLER_ATTACH, &so);
	common_sampler_parts(&opts.rec, w, argc, argv, &parts, &so);
	so.control = opts.rec.control_arg ? &ctl : NULL;
	ret = sampler_run(&t, w, &so, &st);
	control_close(&ctl);
	if (common_parts_close(&parts, name, sizeof(name), &bytes))
		ret = -1;
	if (st.end == SAMPLER_END_SIGNAL)
		xp_info("sampling stopped by %s", strsignal(st.end_signal));
	else if (st.end == SAMPLER_END_CONTROL)
		xp_info("sampling stopped by a 'stop' command of --control");
	else if (st.end == SAMPLER_END_ALL_EXITED)
		xp_info("every target process has exited");
	if (st.end == SAMPLER_END_WRITE_ERROR) {
		/* The error was printed when the write failed: no summary claiming a file. */
		xp_hint("sampling stopped at the error, after %.1f s, and the processes were left "
			"running; '%s' keeps what was written before it",
			(double)st.duration_ns / 1e9, opts.rec.output);
	} else {
		common_print_summary(&so, &st, &t, name, bytes);
	}
	tracer_release(&t);
	if (ret)
		return XP_EXIT_FAIL;
	if (!st.samples) {
		xp_error("no samples were collected");
		xp_hint("the targets may have been idle: try --mode wall");
		return XP_EXIT_FAIL;
	}
	return XP_EXIT_OK;
}
