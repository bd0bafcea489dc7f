/* SPDX-License-Identifier: MIT */
/*
 * xprof attach: seize running processes (every thread), sample them for a
 * while, then detach and leave them running exactly as before.  Ends on
 * --duration, Ctrl-C, SIGTERM, SIGHUP, or when every target has exited.
 */
#include "cmd.h"
#include "common.h"
#include "control.h"
#include "output.h"
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
	struct attach_opts opts = {.rec = RECORD_OPTS_INIT};
	struct common_run r;
	char name[PATH_MAX];
	char what[64];
	uint64_t bytes;
	unsigned long refused;
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

	if (common_run_open(&r, &opts.rec, argc, argv))
		return XP_EXIT_FAIL;
	for (i = 0; i < opts.npids; i++) {
		e = tracer_attach(&r.t, opts.pid[i]);
		if (e) {
			snprintf(what, sizeof(what), "attach to pid %d", (int)opts.pid[i]);
			if (e == -EINVAL)
				xp_error("cannot attach to %d: it is a thread id, not a process id",
					 (int)opts.pid[i]);
			else
				common_explain_trace_error(-e, opts.pid[i], what);
			tracer_detach_all(&r.t);
			common_run_abort(&r);
			return XP_EXIT_FAIL;
		}
	}
	/* Following: the processes already forked below them too (a build's compilers). */
	if (tracer_attach_descendants(&r.t, &refused, &e))
		xp_warn("this kernel does not list a process's children (no CONFIG_PROC_CHILDREN): "
			"only the processes forked from now on are followed");
	if (refused)
		xp_warn(
		    "%lu process%s below the target%s could not be traced (%s): not in the profile",
		    refused, refused == 1 ? "" : "es", opts.npids == 1 ? "" : "s", strerror(e));
	ret = common_run_sample(&r, &opts.rec, SAMPLER_ATTACH);
	if (output_close(&r.out, name, sizeof(name), &bytes))
		ret = -1;
	if (r.st.end == SAMPLER_END_SIGNAL)
		xp_info("sampling stopped by %s", strsignal(r.st.end_signal));
	else if (r.st.end == SAMPLER_END_CONTROL)
		xp_info("sampling stopped by a 'stop' command of --control");
	else if (r.st.end == SAMPLER_END_ALL_EXITED)
		xp_info("every target process has exited");
	if (r.st.end == SAMPLER_END_WRITE_ERROR) {
		/* The error was printed when the write failed: no summary claiming a file. */
		xp_hint("sampling stopped at the error, after %.1f s, and the processes were left "
			"running; '%s' keeps what was written before it",
			(double)r.st.duration_ns / 1e9, opts.rec.output);
	} else {
		common_print_summary(&r.so, &r.st, &r.t, name, bytes);
	}
	tracer_release(&r.t);
	if (ret)
		return XP_EXIT_FAIL;
	if (!r.st.samples) {
		xp_error("no samples were collected");
		xp_hint("the targets may have been idle: try --mode wall");
		return XP_EXIT_FAIL;
	}
	return XP_EXIT_OK;
}
