/* SPDX-License-Identifier: MIT */
/*
 * Shared pieces of record, attach and dump: option choices, a recording's
 * run, the summary paragraph, the checks on a pid, and the one place that
 * turns a ptrace errno into an explanation with hints (as perf's
 * evsel__open_strerror does).
 */
#include "common.h"
#include "control.h"
#include "ctl.h"
#include "err.h"
#include "output.h"
#include "sampler.h"
#include "tracer.h"
#include "opt.h"
#include "procfs.h"
#include "cmd.h"

#include <errno.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

const char *const common_call_graph_choices[] = {"auto", "fp", "dwarf", "libunwind", "check", NULL};
const char *const common_switch_format_choices[] = {"data", "pprof", NULL};
const char *const common_mode_choices[] = {"cpu", "wall", NULL};

size_t common_record_options(struct xp_option *o, struct record_opts *ro, const char *duration_help)
{
	const struct xp_option table[COMMON_RECORD_OPTIONS] = {
	    XP_OPTION_UINT('F', "freq", &ro->freq_hz, "<hz>", 1, XP_MAX_FREQ,
			   "samples per second per thread (default 999)"),
	    XP_OPTION_STRING('o', "output", &ro->output, "<file>",
			     "write the data here (default xprof.data)"),
	    XP_OPTION_DURATION('d', "duration", &ro->duration_ns, "<time>", duration_help),
	    XP_OPTION_STRING('D', "delay", &ro->delay_arg, "<time>",
			     "start sampling this long after the start (500ms, 2s; -1: at "
			     "--control's 'enable'); --duration counts from then"),
	    XP_OPTION_STRING(0, "control", &ro->control_arg, "fifo:<ctl>[,<ack>]",
			     "take commands (enable, disable, mark <name>, stop, ping) from the "
			     "FIFO <ctl>; 'ack' each on <ack>"),
	    COMMON_OPTION_CALL_GRAPH(&ro->call_graph),
	    XP_OPTION_UINT(0, "max-depth", &ro->max_depth, "<n>", 1, XP_MAX_DEPTH,
			   "deepest stack kept, in frames (default 1024)"),
	    XP_OPTION_CHOICE(0, "mode", &ro->mode, "<cpu|wall>", common_mode_choices,
			     "cpu: threads on CPU, weighted by CPU time (default); wall: every "
			     "thread"),
	    XP_OPTION_FLAG(0, "no-follow", &ro->no_follow, "do not follow forked child processes"),
	    XP_OPTION_FLAG(0, "no-interp", &ro->no_interp,
			   "do not read interpreter frames (Python functions): native frames only"),
	    XP_OPTION_FLAG(0, "no-poll-idle", &ro->no_poll_idle,
			   "let idle CPUs sleep (default: keep them polling, shorter stops; needs "
			   "root)"),
	    XP_OPTION_FLAG(0, "spin-idle", &ro->spin_idle,
			   "keep idle CPUs busy with low-priority spinning threads while recording "
			   "(needs no privilege; costs their idle time)"),
	    XP_OPTION_SET_INT(0, "no-own-session", &ro->own_session, 0,
			      "stay in xprof's session (default without real-time priority, when "
			      "the target shares it: sample from a session of its own, which keeps "
			      "the rate beside busy threads)"),
	    XP_OPTION_SET_INT(0, "own-session", &ro->own_session, 1,
			      "sample from a session of its own where that helps (the default)"),
	    XP_OPTION_FLAG(0, "interrupt-from-any-cpu", &ro->any_cpu,
			   "do not move to a running thread's CPU to interrupt it (samples then "
			   "skid into system calls)"),
	    XP_OPTION_UINT('r', "realtime", &ro->rt_priority, "<prio>", 0, 99,
			   "sample at this SCHED_RR priority, 0: normal priority (default 1; needs "
			   "root)"),
	    XP_OPTION_DURATION(0, "flush", &ro->flush_ns, "<time>",
			       "write the data file out at least this often (default 1s), for a "
			       "reader of the growing file"),
	    XP_OPTION_STRING(
		0, "switch-output", &ro->switch_arg, "<signal|time|size>",
		"end the data file on SIGUSR2, every <time> (30s, 1h) or <size> (100M, "
		"1G) and start the next; each is named <output>.<timestamp>"),
	    XP_OPTION_CHOICE(0, "switch-output-format", &ro->switch_format, "<data|pprof>",
			     common_switch_format_choices,
			     "pprof: also write each part as <part>.pb.gz (default data)"),
	    XP_OPTION_SET_INT('q', "quiet", &ro->quiet, 1, "no status line or summary"),
	};

	memcpy(o, table, sizeof(table));
	return COMMON_RECORD_OPTIONS;
}

int common_parse_pids(const struct xp_cmd_help *help, const char *list, pid_t *pid,
		      unsigned int *npids)
{
	const char *p;

	*npids = 0;
	/* Every comma separates two pids: "1,,2" and "1," are refused too. */
	for (p = list;; p++) {
		char num[24];
		size_t len = strcspn(p, ",");
		uint64_t v;

		if (*npids >= XP_MAX_PIDS)
			return xp_usage_error(
			    help, "too many process ids for -p, --pid (at most %d)", XP_MAX_PIDS);
		if (len == 0 || len >= sizeof(num))
			return xp_usage_error(help,
					      "invalid value '%s' for -p, --pid (expected a list "
					      "of process ids)",
					      list);
		memcpy(num, p, len);
		num[len] = 0;
		if (xp_parse_u64(num, 1, 0x3fffffff, &v))
			return xp_usage_error(help,
					      "invalid value '%s' for -p, --pid (expected a "
					      "process id)",
					      num);
		pid[(*npids)++] = (pid_t)v;
		p += len;
		if (!*p)
			break;
	}
	return XP_EXIT_OK;
}

/* --switch-output: "<n>K", "<n>M", "<n>G", "<n>B" is a size, anything else a time. */
static int parse_switch(struct record_opts *ro)
{
	static const char units[] = "BKMG";
	const char *a = ro->switch_arg, *u;
	size_t len = strlen(a);
	char num[24];
	uint64_t v;

	u = len ? strchr(units, a[len - 1]) : NULL;
	if (!u || !*u)
		return xp_parse_duration_ns(a, &ro->switch_ns) || ro->switch_ns < 100000000ull ? -1
											       : 0;
	if (len - 1 >= sizeof(num))
		return -1;
	memcpy(num, a, len - 1);
	num[len - 1] = 0;
	if (xp_parse_u64(num, 1, UINT64_MAX >> (10 * (u - units) + 1), &v))
		return -1;
	ro->switch_bytes = v << (10 * (u - units));
	return ro->switch_bytes < 1024 ? -1 : 0;
}

int common_record_check(struct record_opts *ro, const struct xp_cmd_help *help)
{
	struct control_spec spec;

	if (ro->control_arg && control_spec_parse(ro->control_arg, &spec))
		return xp_usage_error(help,
				      "invalid value '%s' for --control (expected fifo:<ctl> or "
				      "fifo:<ctl>,<ack>)",
				      ro->control_arg);
	ro->start_disabled = ro->delay_arg && !strcmp(ro->delay_arg, "-1");
	if (ro->start_disabled && !ro->control_arg)
		return xp_usage_error(help, "option '--delay -1' needs '--control': sampling "
					    "starts at its 'enable' command");
	if (ro->delay_arg && strcmp(ro->delay_arg, "0") && !ro->start_disabled &&
	    xp_parse_duration_ns(ro->delay_arg, &ro->delay_ns))
		return xp_usage_error(help,
				      "invalid value '%s' for -D, --delay (expected 0, -1 or a "
				      "duration from 1ms to 7 days, like 500ms, 30s, 2m, 1h)",
				      ro->delay_arg);
	if (ro->switch_arg && !strcmp(ro->switch_arg, "signal"))
		ro->switch_signal = true;
	else if (ro->switch_arg && parse_switch(ro))
		return xp_usage_error(help,
				      "invalid value '%s' for --switch-output (expected 'signal', "
				      "a time from 100ms, like 30s or 1h, or a size from 1K, like "
				      "100M or 1G)",
				      ro->switch_arg);
	if (ro->switch_arg && (!strcmp(ro->output, "-") || !strncmp(ro->output, "/dev/", 5)))
		return xp_usage_error(help, "--switch-output needs a file for -o, not '%s'",
				      ro->output);
	if (ro->switch_format && !ro->switch_arg)
		return xp_usage_error(help, "--switch-output-format needs --switch-output");
	/* common_split_session says why. */
	if (ro->own_session == 1 && ro->spin_idle)
		return xp_usage_error(help, "--own-session cannot be used with --spin-idle: its "
					    "spinners would take the CPUs from the target");
	return 0;
}

int common_open_control(const struct record_opts *ro, struct control *c)
{
	struct control_spec spec;

	control_init(c);
	if (!ro->control_arg)
		return 0;
	if (control_spec_parse(ro->control_arg, &spec))
		return xp_error("invalid value '%s' for --control", ro->control_arg);
	return control_open(c, &spec);
}

void common_block_signals(const struct record_opts *ro)
{
	sigset_t set;

	ctl_signal_set(&set, true);
	if (ro->switch_signal)
		sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

void common_sampler_opts(const struct record_opts *ro, int kind, struct sampler_opts *so)
{
	*so = (struct sampler_opts){
	    .freq_hz = ro->freq_hz,
	    .unwind = (enum unwind_mode)ro->call_graph,
	    .max_depth = (unsigned int)ro->max_depth,
	    .duration_ns = ro->duration_ns,
	    .flush_ns = ro->flush_ns ? ro->flush_ns : SAMPLER_FLUSH_NS,
	    .delay_ns = ro->delay_ns,
	    .start_disabled = ro->start_disabled,
	    .mode = (enum sampler_mode)ro->mode,
	    .kind = (enum sampler_kind)kind,
	    .stack_bytes = SAMPLER_STACK_BYTES,
	    .adaptive_copy = true,
	    .spin_ns = SAMPLER_SPIN_NS,
	    .poll_idle = !ro->no_poll_idle,
	    .spin_idle = ro->spin_idle,
	    .same_cpu = !ro->any_cpu,
	    .no_interp = ro->no_interp,
	    .rt_priority = (unsigned int)ro->rt_priority,
	    .status_line = isatty(STDERR_FILENO) && !ro->quiet,
	    .foreground = common_foreground,
	    .switch_ns = ro->switch_ns,
	    .switch_bytes = ro->switch_bytes,
	    .switch_signal = ro->switch_signal,
	};
	/* A part ends at a flush: flush at least as often as parts end. */
	if (ro->switch_ns && ro->switch_ns < so->flush_ns)
		so->flush_ns = ro->switch_ns;
}

static const char *human_bytes(uint64_t b, char *buf, size_t len)
{
	if (b >= 10ull << 20)
		snprintf(buf, len, "%.1f MiB", (double)b / (1 << 20));
	else if (b >= 10ull << 10)
		snprintf(buf, len, "%.1f KiB", (double)b / 1024);
	else
		snprintf(buf, len, "%llu bytes", (unsigned long long)b);
	return buf;
}

/*
 * What keeping the sampled files for the report cost (capture.h), as the
 * end of the summary line.
 */
static const char *capture_summary(const struct capture_stats *c, char *buf, size_t len)
{
	char size[32];

	if (c->disabled) {
		snprintf(buf, len, "; sampled files not kept (XPROF_CACHE_DIR=off)");
		return buf;
	}
	snprintf(buf, len, "; kept %llu new of %llu sampled files (%s) in %.1f ms%s%s",
		 (unsigned long long)c->saved, (unsigned long long)c->modules,
		 human_bytes(c->bytes, size, sizeof(size)), (double)c->ns / 1e6,
		 c->no_id ? ", not those it could not identify" : "",
		 c->over ? ", not those over the size limit" : "");
	return buf;
}

void common_print_summary(const struct sampler_opts *o, const struct sampler_stats *st,
			  const struct tracer *t, const char *output, uint64_t bytes)
{
	double secs = (double)st->duration_ns / 1e9;
	char size[32], capture[160], cpu[96] = "";

	if (xp_quiet)
		return;
	/* What the profile accounts for beside what the traced tree used (sampler.h). */
	if (o->mode == SAMPLER_CPU && st->tree_cpu_ns)
		snprintf(cpu, sizeof(cpu), "; %.2f s of CPU in the profile, the %s used %.2f s",
			 (double)st->weight_total / 1e9,
			 t->flags & TRACER_FOLLOW ? "tree" : "process",
			 (double)st->tree_cpu_ns / 1e9);
	else if (o->mode == SAMPLER_CPU)
		snprintf(cpu, sizeof(cpu), "; %.2f s of CPU in the profile",
			 (double)st->weight_total / 1e9);
	fprintf(stderr,
		"xprof: %llu samples in %.2f s (%.1f/s, %llu Hz requested per thread, "
		"%llu late ticks), %llu failed, %llu threads in %llu processes%s; "
		"stop p50 %.1f us, p99 %.1f us (held %.1f / %.1f us); wrote '%s' (%s)%s\n",
		(unsigned long long)st->samples, secs, secs > 0 ? (double)st->samples / secs : 0.0,
		(unsigned long long)o->freq_hz, (unsigned long long)st->late_ticks,
		(unsigned long long)st->failed, (unsigned long long)t->threads_seen,
		(unsigned long long)t->procs_seen, cpu,
		(double)schedule_hist_percentile(st->stop_hist, st->stop_ns_max, 50) / 1e3,
		(double)schedule_hist_percentile(st->stop_hist, st->stop_ns_max, 99) / 1e3,
		(double)schedule_hist_percentile(st->held_hist, st->held_ns_max, 50) / 1e3,
		(double)schedule_hist_percentile(st->held_hist, st->held_ns_max, 99) / 1e3, output,
		human_bytes(bytes, size, sizeof(size)),
		capture_summary(&st->capture, capture, sizeof(capture)));
	if (st->unwind_checked)
		fprintf(
		    stderr,
		    "xprof: unwind check: libunwind disagreed on %llu of %llu stacks (%.1f%%)\n",
		    (unsigned long long)st->unwind_differ, (unsigned long long)st->unwind_checked,
		    100.0 * (double)st->unwind_differ / (double)st->unwind_checked);
}

static int read_int_file(const char *path, int *out)
{
	FILE *f = fopen(path, "re");
	int ok;

	if (!f)
		return -1;
	ok = fscanf(f, "%d", out) == 1;
	fclose(f);
	return ok ? 0 : -1;
}

static void comm_of(pid_t pid, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	buf[0] = 0;
	f = fopen(path, "re");
	if (!f)
		return;
	if (!fgets(buf, (int)len, f))
		buf[0] = 0;
	buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

/*
 * Whether xprof runs in the initial pid namespace, where pid 1 is the
 * system's init (in a container's namespace, pid 1 is usually the program
 * to profile).  The initial namespace's inode is fixed: PROC_PID_INIT_INO,
 * include/linux/proc_ns.h.
 */
static bool in_initial_pid_ns(void)
{
	struct stat st;

	return !stat("/proc/self/ns/pid", &st) && st.st_ino == 0xEFFFFFFCu;
}

int common_check_proc(void)
{
	struct procfs_mount m;

	procfs_mount_state(&m);
	if (m.mounted)
		return 0;
	xp_error("cannot read the processes' mappings, threads and names in '/proc': no proc "
		 "file system is mounted there");
	xp_hint("mount it ('mount -t proc proc /proc', as root), or run xprof where /proc is "
		"mounted");
	return -1;
}

int common_check_target(pid_t pid, const char *what)
{
	char path[64], buf[512], *rp;
	unsigned long flags = 0;
	FILE *f;
	int i, e;

	if (common_check_proc())
		return -1;
	if (pid == getpid())
		return xp_error("cannot %s pid %d: it is xprof itself", what, (int)pid);
	/*
	 * Refused before any ptrace call: init reaps every orphan and must
	 * never stay stopped, and a tracer that dies at the wrong moment, or a
	 * bug of ours, would stall the whole system.
	 */
	if (pid == 1 && in_initial_pid_ns()) {
		xp_error("cannot %s pid 1: it is the system's init process", what);
		xp_hint("stopping init, even briefly, can stall the whole system; "
			"profile the programs it runs instead");
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f) {
		e = errno;
		/* It exists, but /proc does not show it to xprof (hidepid). */
		if (procfs_explain_hidden(pid, e, buf, sizeof(buf)) && buf[0]) {
			xp_error("cannot %s pid %d: /proc does not show it to xprof (%s)", what,
				 (int)pid, strerror(e));
			xp_hint("%s", buf);
			return -1;
		}
		snprintf(buf, sizeof(buf), "%s pid %d", what, (int)pid);
		return common_explain_trace_error(ESRCH, pid, buf);
	}
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	/* Field 9 (flags) follows the last ')' of the comm field (proc(5)). */
	rp = strrchr(buf, ')');
	if (rp) {
		for (i = 0, rp++; i < 6 && rp; i++)
			rp = strchr(rp + 1, ' ');
		if (rp)
			flags = strtoul(rp + 1, NULL, 10);
	}
	if (flags & 0x00200000) /* PF_KTHREAD */
		return xp_error("cannot %s pid %d: it is a kernel thread", what, (int)pid);
	return 0;
}

/* The value of field @name ("Seccomp:") of /proc/self/status, or -1. */
static long long self_status(const char *name, int base)
{
	char line[256];
	long long v = -1;
	size_t len = strlen(name);
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, len)) {
			v = strtoll(line + len, NULL, base);
			break;
		}
	fclose(f);
	return v;
}

/*
 * Hints for a ptrace refused by what confines xprof itself, as a container
 * does: a seccomp filter (Docker's default profile without CAP_SYS_PTRACE),
 * or a user namespace, whose capabilities reach only its own processes.
 * Whether one was given.
 */
static bool explain_container(void)
{
	long long cap = self_status("CapEff:", 16);
	bool has_ptrace_cap = cap >= 0 && (cap >> 19 & 1); /* CAP_SYS_PTRACE */
	unsigned long inner, outer, count;
	FILE *f;
	int n = 0;

	if (self_status("Seccomp:", 10) == 2 && (has_ptrace_cap || geteuid() != 0)) {
		xp_hint("a seccomp filter confines xprof (Seccomp: 2 in /proc/self/status) and "
			"may deny ptrace: in a container, allow ptrace and process_vm_readv in its "
			"seccomp profile (docker run --cap-add=SYS_PTRACE, or "
			"--security-opt seccomp=<profile>)");
		return true;
	}
	f = fopen("/proc/self/uid_map", "re");
	if (f) {
		n = fscanf(f, "%lu %lu %lu", &inner, &outer, &count);
		fclose(f);
	}
	if (n == 3 && !(inner == 0 && outer == 0 && count == 4294967295ul) && has_ptrace_cap) {
		xp_hint("xprof runs in a user namespace (uid %lu is %lu outside): its capabilities "
			"reach only the processes of that namespace; run xprof where the target "
			"was started, or on the host",
			inner, outer);
		return true;
	}
	return false;
}

int common_explain_trace_error(int err, pid_t pid, const char *what)
{
	char comm[64];
	pid_t tracer;
	int scope;

	xp_error("cannot %s: %s", what, strerror(err));
	if (err == ESRCH) {
		xp_hint("no process with pid %d exists (or it has just exited)", (int)pid);
		return -1;
	}
	if (err != EPERM)
		return -1;
	tracer = pid ? procfs_tracer(pid) : 0;
	if (tracer) {
		comm_of(tracer, comm, sizeof(comm));
		xp_hint("pid %d is already traced by pid %d (%s); only one tracer is allowed",
			(int)pid, (int)tracer, comm[0] ? comm : "?");
		return -1;
	}
	if (!read_int_file("/proc/sys/kernel/yama/ptrace_scope", &scope) && scope > 0) {
		xp_hint("kernel.yama.ptrace_scope is %d: %s", scope,
			scope == 1   ? "only descendants can be traced"
			: scope == 2 ? "only processes with CAP_SYS_PTRACE can trace"
				     : "ptrace is disabled");
		xp_hint("use 'xprof record -- <command>', run as root, or grant CAP_SYS_PTRACE");
		return -1;
	}
	if (explain_container())
		return -1;
	if (geteuid() == 0)
		xp_hint("root without CAP_SYS_PTRACE: in a container, add it "
			"(docker run --cap-add=SYS_PTRACE ...)");
	else
		xp_hint("the process may belong to another user: run as that user or as root");
	return -1;
}

int common_exit_status(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return XP_EXIT_FAIL;
}

int common_run_open(struct common_run *r, const struct record_opts *ro, int argc, char **argv)
{
	if (common_open_control(ro, &r->ctl))
		return -1;
	/* Before the output exists: who sees it may signal (SIGUSR2 with --switch-output signal).
	 */
	common_block_signals(ro);
	if (output_open(&r->out, ro->output, argc, argv)) {
		control_close(&r->ctl);
		return -1;
	}
	/* CPU mode counts the CPU time of threads at their exit (sampler.h, exit_ns). */
	tracer_init(&r->t, (ro->no_follow ? 0 : TRACER_FOLLOW) |
			       (ro->mode == SAMPLER_CPU ? TRACER_EXIT_STOPS : 0));
	return 0;
}

void common_run_abort(struct common_run *r)
{
	tracer_release(&r->t);
	output_discard(&r->out); /* nothing recorded: an earlier output stays */
	control_close(&r->ctl);
}

int common_run_sample(struct common_run *r, const struct record_opts *ro, int kind)
{
	int ret;

	common_sampler_opts(ro, kind, &r->so);
	output_parts(&r->out, ro->switch_format == 1, &r->so);
	r->so.control = ro->control_arg ? &r->ctl : NULL;
	ret = sampler_run(&r->t, r->out.w, &r->so, &r->st);
	control_close(&r->ctl);
	return ret;
}
