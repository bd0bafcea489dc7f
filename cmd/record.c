/* SPDX-License-Identifier: MIT */
/*
 * xprof record: run a command under ptrace, sample it until it exits (or
 * for --duration), write the data file, and exit with the command's own
 * status, as perf record and time(1) do.
 *
 * Once the command runs, its status is what record exits with, whatever
 * happens to the profile: a write error (a full disk) stops sampling with
 * one error line and a hint, detaches, lets the command finish unprofiled
 * and keeps what was written (the reader takes the cut file with a
 * warning).  Scripts see the command's status, which nothing else can give
 * them; 1 is only for failures before the command starts.
 */
#include "cmd.h"
#include "common.h"
#include "control.h"
#include "ctl.h"
#include "output.h"
#include "err.h"
#include "opt.h"
#include "sampler.h"
#include "tracer.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const struct xp_cmd_help record_help =
    XP_CMD_HELP("record", XP_USAGE("xprof record [<options>] [--] <command> [<args>...]"),
		"Run a command and sample its call stacks until it exits.",
		"    xprof record -- ./app --input big.txt    # profile until ./app exits\n"
		"    xprof record -F 4999 -o app.data -- ./app # higher rate, other file\n"
		"    xprof record -d 10s -- ./server           # sample the first 10 s only\n"
		"    xprof record -D 2s -- ./server            # all but the first 2 s (start-up)\n"
		"    mkfifo ctl; xprof record -D -1 --control fifo:ctl -- ./app &\n"
		"    echo enable > ctl; ...; echo 'mark load' > ctl; ...; echo disable > ctl\n"
		"    xprof record -g dwarf -- ./app            # CFI for every frame\n"
		"    xprof report --folded > app.folded        # then look at the profile\n");

int record_parse_args(int argc, char **argv, struct record_opts *opts)
{
	struct xp_option o[COMMON_RECORD_OPTIONS + 4];
	size_t n;
	int first;

	n = common_record_options(o, opts,
				  "stop sampling after this long (500ms, 30s, 2m, 1h) from its "
				  "start; the command runs on");
	o[n] = (struct xp_option)XP_OPTION_END();
	first = xp_parse_options(argc, argv, o, &record_help, XP_PARSE_STOP_AT_NON_OPTION);
	if (first == XP_PARSE_HELP)
		return XP_PARSE_HELP;
	if (first < 0)
		return XP_EXIT_USAGE;
	if (common_record_check(opts, &record_help))
		return XP_EXIT_USAGE;
	if (first >= argc)
		return xp_usage_error(&record_help, "no command given to record");
	opts->argv = argv + first;
	opts->argc = argc - first;
	return XP_EXIT_OK;
}

/*
 * Wait for the command once sampling has ended (after --duration it runs
 * on), passing on the signals xprof gets meanwhile, as the sampler does:
 * SIGINT, SIGTERM and SIGHUP have been blocked since the launch, so a
 * 'kill -INT' of xprof would otherwise be lost and a plain 'kill' would do
 * nothing until the command ended by itself.  A SIGINT from the terminal
 * (SI_KERNEL) has reached the command's process group already.
 */
static int wait_root(struct tracer *t)
{
	sigset_t set;
	siginfo_t si;
	int status;

	ctl_signal_set(&set, true);
	while (!t->root_done) {
		pid_t r = waitpid(t->root, &status, __WALL | WNOHANG);

		if (r == t->root) {
			t->root_done = true;
			t->root_status = status;
		} else if (r < 0 && errno != EINTR) {
			return -1;
		} else if (r == 0 && sigwaitinfo(&set, &si) > 0 && si.si_signo != SIGCHLD &&
			   !(si.si_signo == SIGINT &&
			     ctl_sigint_from_tty(si.si_code, si.si_value.sival_int))) {
			kill(t->root, si.si_signo);
		}
	}
	return 0;
}

int cmd_record(int argc, char **argv)
{
	struct record_opts opts = RECORD_OPTS_INIT;
	struct common_run r;
	char name[PATH_MAX];
	uint64_t bytes;
	int ret, e, code;

	ret = record_parse_args(argc, argv, &opts);
	if (ret)
		return xp_parse_status(ret);
	if (opts.quiet)
		xp_quiet = 1;
	if (common_check_proc())
		return XP_EXIT_FAIL;

	ret = common_split_session(&opts, true);
	if (ret >= 0)
		return ret;
	if (common_run_open(&r, &opts, opts.argc, opts.argv))
		return XP_EXIT_FAIL;
	e = tracer_launch(&r.t, opts.argv);
	if (e) {
		common_explain_trace_error(-e, 0, "trace the command");
		common_run_abort(&r);
		return XP_EXIT_FAIL;
	}
	common_own_session(); /* the command stays in the terminal's process group */
	ret = common_run_sample(&r, &opts, SAMPLER_RECORD);
	if (wait_root(&r.t))
		xp_warn("lost track of the command: %s", strerror(errno));
	code = common_exit_status(r.t.root_status);
	if (code == XP_EXIT_NOEXEC && WIFEXITED(r.t.root_status) && (e = tracer_exec_error(&r.t))) {
		xp_error("cannot run '%s': %s", opts.argv[0], strerror(e));
		output_discard(&r.out); /* nothing ran: an earlier output stays */
		tracer_release(&r.t);
		return XP_EXIT_NOEXEC;
	}
	if (r.st.end == SAMPLER_END_SIGNAL && !xp_quiet)
		xp_info("sampling stopped by %s", strsignal(r.st.end_signal));
	if (r.st.end == SAMPLER_END_CONTROL && !xp_quiet)
		xp_info("sampling stopped by a 'stop' command of --control");
	/*
	 * A shell says "Segmentation fault (core dumped)" about its own
	 * children; ours sees only 139, so say it here.
	 */
	if (WIFSIGNALED(r.t.root_status))
		xp_info("'%s' was killed by signal %d (%s)%s", opts.argv[0],
			WTERMSIG(r.t.root_status), strsignal(WTERMSIG(r.t.root_status)),
			WCOREDUMP(r.t.root_status) ? ", core dumped" : "");
	if (output_close(&r.out, name, sizeof(name), &bytes))
		ret = -1;
	if (!r.st.samples && !ret)
		xp_warn("no samples were collected (sampling ran for %.3f s)",
			(double)r.st.duration_ns / 1e9);
	if (r.st.end == SAMPLER_END_WRITE_ERROR) {
		/* The error itself was printed when the write failed. */
		xp_hint("sampling stopped at the error, after %.1f s, and the command was left to "
			"finish; '%s' keeps what was written before it",
			(double)r.st.duration_ns / 1e9, opts.output);
	} else if (ret == 0 || r.st.samples) {
		common_print_summary(&r.so, &r.st, &r.t, name, bytes);
	}
	tracer_release(&r.t);
	return code;
}
