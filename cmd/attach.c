/* SPDX-License-Identifier: MIT */
/*
 * xprof attach: seize running processes (every thread), sample them for a
 * while, then detach and leave them running exactly as before.  Ends on
 * --duration, Ctrl-C, SIGTERM, SIGHUP, or when every target has exited.
 */
#include "cmd.h"
#include "common.h"
#include "datafile.h"
#include "err.h"
#include "opt.h"
#include "sampler.h"
#include "tracer.h"
#include "arch/arch.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *const attach_usage[] = {
	"xprof attach -p <pid>[,<pid>...] [<options>]",
	NULL,
};

static const struct xp_cmd_help attach_help = {
	.name = "attach",
	.usage = attach_usage,
	.description = "Profile running processes for a while, then detach and leave them running.",
	.examples = "    xprof attach -p 4242 -d 30s          # 30 s of pid 4242, all threads\n"
		    "    xprof attach -p 4242,4243            # until Ctrl-C or both exit\n"
		    "    xprof attach -p 4242 --mode wall     # blocked threads too\n"
		    "    xprof report --flat                  # then look at the profile\n",
};

int attach_parse_args(int argc, char **argv, struct attach_opts *opts)
{
	const struct xp_option o[] = {
		{'p', "pid", XP_OPT_STRING, &opts->pids, "<pid>[,<pid>...]",
		 "processes to profile (every thread of each)", 0, 0, 0, NULL},
		{'d', "duration", XP_OPT_DURATION, &opts->rec.duration_ns, "<time>",
		 "stop after this long (500ms, 30s, 2m, 1h; default: until Ctrl-C)", 0, 0, 0,
		 NULL},
		{'F', "freq", XP_OPT_UINT, &opts->rec.freq_hz, "<hz>",
		 "samples per second per thread (default 999)", 1, XP_MAX_FREQ, 0, NULL},
		{'o', "output", XP_OPT_STRING, &opts->rec.output, "<file>",
		 "write the data here (default xprof.data)", 0, 0, 0, NULL},
		{'g', "call-graph", XP_OPT_CHOICE, &opts->rec.call_graph, "<auto|fp|dwarf>",
		 "how to walk stacks (default auto: frame pointers, CFI where missing)", 0, 0, 0,
		 common_call_graph_choices},
		{0, "max-depth", XP_OPT_UINT, &opts->rec.max_depth, "<n>",
		 "deepest stack kept, in frames (default 1024)", 1, 65536, 0, NULL},
		{0, "mode", XP_OPT_CHOICE, &opts->rec.mode, "<cpu|wall>",
		 "cpu: threads on CPU, weighted by CPU time (default); wall: every thread", 0, 0,
		 0, common_mode_choices},
		{0, "no-follow", XP_OPT_FLAG, &opts->rec.no_follow, NULL,
		 "do not follow processes they fork", 0, 0, 0, NULL},
		{'q', "quiet", XP_OPT_SET_INT, &opts->rec.quiet, NULL, "no status line or summary",
		 0, 0, 1, NULL},
		{0},
	};
	const char *p;
	int first;

	first = xp_parse_options(argc, argv, o, &attach_help, 0);
	if (first == XP_PARSE_HELP)
		return XP_PARSE_HELP;
	if (first < 0)
		return 2;
	if (first < argc)
		return xp_usage_error(&attach_help, "unexpected argument '%s' (use 'xprof record' to "
				      "run a command)", argv[first]);
	if (!opts->pids)
		return xp_usage_error(&attach_help, "no process given: use -p <pid>");
	opts->npids = 0;
	/* Every comma separates two pids: "1,,2" and "1," are refused too. */
	for (p = opts->pids;; p++) {
		char num[24];
		size_t len = strcspn(p, ",");
		uint64_t v;

		if (opts->npids >= XP_MAX_PIDS)
			return xp_usage_error(&attach_help,
					      "too many process ids for -p, --pid "
					      "(at most %d)",
					      XP_MAX_PIDS);
		if (len == 0 || len >= sizeof(num))
			return xp_usage_error(&attach_help, "invalid value '%s' for -p, --pid "
					      "(expected a list of process ids)", opts->pids);
		memcpy(num, p, len);
		num[len] = 0;
		if (xp_parse_u64(num, 1, 0x3fffffff, &v))
			return xp_usage_error(&attach_help, "invalid value '%s' for -p, --pid "
					      "(expected a process id)", num);
		opts->pid[opts->npids++] = (pid_t)v;
		p += len;
		if (!*p)
			break;
	}
	return 0;
}

/* 0 when @pid looks traceable, else a printed error. */
static int check_target(pid_t pid)
{
	char path[64], buf[512], *rp;
	unsigned long flags = 0;
	FILE *f;
	int i;

	if (pid == getpid())
		return xp_error("cannot attach to pid %d: it is xprof itself", (int)pid);
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f) {
		snprintf(path, sizeof(path), "attach to pid %d", (int)pid);
		return common_explain_trace_error(ESRCH, pid, path);
	}
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	/* Field 9 (flags) follows the last ')' of the comm field. */
	rp = strrchr(buf, ')');
	if (rp) {
		for (i = 0, rp++; i < 6 && rp; i++)
			rp = strchr(rp + 1, ' ');
		if (rp)
			flags = strtoul(rp + 1, NULL, 10);
	}
	if (flags & 0x00200000) /* PF_KTHREAD */
		return xp_error("cannot attach to pid %d: it is a kernel thread", (int)pid);
	return 0;
}

int cmd_attach(int argc, char **argv)
{
	struct attach_opts opts = {.rec = {.freq_hz = XP_DEFAULT_FREQ,
					   .output = "xprof.data",
					   .max_depth = XP_DEFAULT_MAX_DEPTH}};
	struct sampler_opts so;
	struct sampler_stats st;
	struct df_writer *w;
	struct tracer t;
	struct timespec now;
	char what[64];
	sigset_t set;
	uint64_t bytes;
	int ret, e;
	unsigned i;

	ret = attach_parse_args(argc, argv, &opts);
	if (ret == XP_PARSE_HELP)
		return 0;
	if (ret)
		return ret;
	if (opts.rec.quiet)
		xp_quiet = 1;
	for (i = 0; i < opts.npids; i++)
		if (check_target(opts.pid[i]))
			return 1;

	clock_gettime(CLOCK_REALTIME, &now);
	w = df_writer_open(opts.rec.output, xp_arch_host()->e_machine,
			   (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec);
	if (!w)
		return 1;
	if (common_write_meta(w, argc, argv)) {
		df_writer_close(w);
		return 1;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);

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
			df_writer_close(w);
			return 1;
		}
	}
	so = (struct sampler_opts){
		.freq_hz = opts.rec.freq_hz,
		.unwind = (enum unwind_mode)opts.rec.call_graph,
		.max_depth = (unsigned int)opts.rec.max_depth,
		.duration_ns = opts.rec.duration_ns,
		.mode = (enum sampler_mode)opts.rec.mode,
		.kind = SAMPLER_ATTACH,
		.stack_bytes = SAMPLER_STACK_BYTES,
		.adaptive_copy = true,
		.spin_ns = SAMPLER_SPIN_NS,
		.status_line = isatty(STDERR_FILENO),
	};
	ret = sampler_run(&t, w, &so, &st);
	bytes = df_writer_bytes(w);
	if (df_writer_close(w))
		ret = -1;
	if (st.end == SAMPLER_END_SIGNAL)
		xp_info("sampling stopped by %s", strsignal(st.end_signal));
	else if (st.end == SAMPLER_END_ALL_EXITED)
		xp_info("every target process has exited");
	if (st.end == SAMPLER_END_WRITE_ERROR) {
		/* The error was printed when the write failed: no summary claiming a file. */
		xp_hint("sampling stopped at the error, after %.1f s, and the processes were left "
			"running; '%s' keeps what was written before it",
			(double)st.duration_ns / 1e9, opts.rec.output);
	} else {
		common_print_summary(&so, &st, &t, opts.rec.output, bytes);
	}
	tracer_release(&t);
	if (ret)
		return 1;
	if (!st.samples) {
		xp_error("no samples were collected");
		xp_hint("the targets may have been idle: try --mode wall");
		return 1;
	}
	return 0;
}
