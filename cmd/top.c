/* SPDX-License-Identifier: MIT */
/*
 * xprof top: a live view of where running processes spend their time, as
 * 'py-spy top' and 'perf top' show it.  The sampling is attach's: top runs
 * 'xprof attach' on the targets (for a command, on a child it starts and
 * then lets exec the command), writing to a data file in a private
 * temporary directory; every interval it reads the samples written since
 * the last one, names them as report does, and shows the functions by self
 * and total share over that interval and since the start.  On a terminal
 * it is a full-screen view with keys; otherwise one block of plain text per
 * interval.  Quitting ends the attach, which detaches: the processes run
 * on, a command to its end, which top waits for (its exit status is top's).
 */
#include "aggregate.h"
#include "clock.h"
#include "cmd.h"
#include "common.h"
#include "err.h"
#include "opt.h"
#include "procfs.h"
#include "profile.h"
#include "hash.h"
#include "sorted.h"
#include "spawn.h"
#include "table.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

struct top_opts {
	const char *pids;	/* -p as given (passed on to attach); NULL: a command */
	pid_t pid[XP_MAX_PIDS]; /* parsed from it */
	unsigned int npids;
	uint64_t freq_hz;
	uint64_t interval_ns;
	uint64_t iterations; /* 0: until q, Ctrl-C or the targets end */
	uint64_t limit;	     /* rows of the text output */
	int sort;	     /* 0 self, 1 total */
	bool per_thread;
	char **argv; /* the command, NULL-terminated */
};

static const char *const top_sort_choices[] = {"self", "total", NULL};

static const struct xp_cmd_help top_help =
    XP_CMD_HELP("top",
		XP_USAGE("xprof top -p <pid>[,<pid>...] [<options>]",
			 "xprof top [<options>] [--] <command> [<args>...]"),
		"Show the hottest functions of running processes, refreshed every second.",
		"    xprof top -p 4242                    # until q; pid 4242 runs on\n"
		"    xprof top -- ./app --port 8080       # ./app runs on to its end after q\n"
		"    xprof top -p 4242 -n 5 | tail -25    # plain text, 5 intervals\n"
		"\nKEYS (on a terminal)\n"
		"    s, t      sort by self or by total share\n"
		"    a         sort by the last interval or by everything since the start\n"
		"    p         functions per thread, or all threads together\n"
		"    q         quit (also Ctrl-C)\n");

static int top_parse_args(int argc, char **argv, struct top_opts *o)
{
	const struct xp_option options[] = {
	    XP_OPTION_STRING('p', "pid", &o->pids, "<pid>[,<pid>...]",
			     "processes to watch (every thread of each)"),
	    XP_OPTION_UINT('F', "freq", &o->freq_hz, "<hz>", 1, XP_MAX_FREQ,
			   "samples per second per thread (default 999)"),
	    XP_OPTION_DURATION('s', "interval", &o->interval_ns, "<time>",
			       "refresh this often (default 1s)"),
	    XP_OPTION_UINT('n', "iterations", &o->iterations, "<n>", 1, UINT32_MAX,
			   "quit after <n> refreshes (default: until q)"),
	    XP_OPTION_UINT(0, "limit", &o->limit, "<n>", 1, 100000,
			   "functions shown per refresh when not on a terminal (default 20)"),
	    XP_OPTION_CHOICE(0, "sort", &o->sort, "<self|total>", top_sort_choices,
			     "the share functions are sorted by (default self)"),
	    XP_OPTION_FLAG(0, "per-thread", &o->per_thread,
			   "functions per thread (default: all threads together)"),
	    XP_OPTION_END(),
	};
	int first = xp_parse_options(argc, argv, options, &top_help, XP_PARSE_STOP_AT_NON_OPTION);

	if (first == XP_PARSE_HELP)
		return XP_PARSE_HELP;
	if (first < 0)
		return XP_EXIT_USAGE;
	if (o->pids && first < argc)
		return xp_usage_error(&top_help, "give either -p or a command, not both");
	if (!o->pids && first >= argc)
		return xp_usage_error(&top_help, "nothing to watch: give -p <pid> or a command");
	if (o->interval_ns < 100000000ull)
		return xp_usage_error(&top_help, "--interval must be at least 100ms");
	o->argv = argv + first;
	return o->pids ? common_parse_pids(&top_help, o->pids, o->pid, &o->npids) : XP_EXIT_OK;
}

/* ---- the numbers ---------------------------------------------------------- */

/* One function (of one thread with --per-thread): weights of the interval and since the start. */
struct top_row {
	uint32_t thread, func; /* ids in top.names; thread 0: "" */
	uint64_t self, total, all_self, all_total;
};

struct top {
	struct top_opts *o;
	bool tty;
	char dir[PATH_MAX], data[PATH_MAX + 16], log[PATH_MAX + 16];
	pid_t recorder, child; /* child: the command's process, 0 with -p */
	int child_status;
	bool child_done, recorder_done;
	int recorder_status;

	/* Names, interned: id i is names[i]; 0 is "". */
	char **names;
	size_t nr_names;
	unsigned long alloc_names;
	struct xp_table name_table;
	uint32_t *seen_at; /* per name id: the stack that counted it last (total, once a stack) */

	struct top_row *rows;
	size_t nr_rows;
	unsigned long alloc_rows;
	struct xp_table row_table;

	size_t seen_samples; /* samples of the data file taken so far */
	uint64_t weight, all_weight, samples, all_samples;
	unsigned int threads, refreshes;
	uint64_t start_ns, last_ns, interval_real_ns;
	char what[128]; /* "pid 4242 (app)" */
	bool sort_all;	/* sort by since-the-start shares */
	struct termios saved;
};

static uint64_t name_hash_of(const void *ctx, size_t i)
{
	return xp_hash_str(((const struct top *)ctx)->names[i]);
}

static uint32_t intern(struct top *t, const char *s)
{
	struct xp_table *tb = &t->name_table;
	size_t j;

	xp_table_reserve(tb, t->nr_names, name_hash_of, t);
	for (j = xp_hash_str(s) & (tb->cap - 1); tb->slots[j]; j = (j + 1) & (tb->cap - 1))
		if (!strcmp(t->names[tb->slots[j] - 1], s))
			return (uint32_t)(tb->slots[j] - 1);
	xp_grow((void **)&t->names, &t->alloc_names, t->nr_names + 1, sizeof(*t->names));
	t->seen_at = xp_realloc(t->seen_at, t->alloc_names * sizeof(*t->seen_at));
	t->seen_at[t->nr_names] = UINT32_MAX;
	t->names[t->nr_names] = xp_strdup(s);
	tb->slots[j] = ++t->nr_names;
	return (uint32_t)(t->nr_names - 1);
}

static uint64_t row_hash(uint32_t thread, uint32_t func)
{
	return xp_mix64((uint64_t)thread << 32 | func);
}

static uint64_t row_hash_of(const void *ctx, size_t i)
{
	const struct top_row *r = &((const struct top *)ctx)->rows[i];

	return row_hash(r->thread, r->func);
}

static struct top_row *row_of(struct top *t, uint32_t thread, uint32_t func)
{
	struct xp_table *tb = &t->row_table;
	size_t j;

	xp_table_reserve(tb, t->nr_rows, row_hash_of, t);
	for (j = row_hash(thread, func) & (tb->cap - 1); tb->slots[j];
	     j = (j + 1) & (tb->cap - 1)) {
		struct top_row *r = &t->rows[tb->slots[j] - 1];

		if (r->thread == thread && r->func == func)
			return r;
	}
	xp_grow((void **)&t->rows, &t->alloc_rows, t->nr_rows + 1, sizeof(*t->rows));
	t->rows[t->nr_rows] = (struct top_row){.thread = thread, .func = func};
	tb->slots[j] = ++t->nr_rows;
	return &t->rows[t->nr_rows - 1];
}

/* Count one aggregated stack (@id: its number in this refresh) into the rows. */
static void count_stack(struct top *t, const struct agg *a, const struct agg_stack *st, uint32_t id)
{
	uint32_t thread = intern(t, st->thread == AGG_NONE ? "" : a->names[st->thread]);
	uint32_t i, f;

	for (i = 0; i < st->nr; i++) {
		struct top_row *r;

		f = intern(t, a->names[st->frames[i]]);
		r = row_of(t, thread, f);
		if (t->seen_at[f] != id) { /* recursion: a function's total counts a stack once */
			t->seen_at[f] = id;
			r->total += st->weight;
			r->all_total += st->weight;
		}
		if (i + 1 == st->nr) {
			r->self += st->weight;
			r->all_self += st->weight;
		}
	}
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/* Distinct threads among the samples of @p from @first on. */
static unsigned int count_threads(const struct profile *p, size_t first)
{
	pid_t *tids = xp_calloc(p->nr_samples - first + 1, sizeof(*tids));
	unsigned int nr = 0;
	size_t i, n = 0;

	for (i = first; i < p->nr_samples; i++)
		tids[n++] = p->samples[i].tid;
	xp_sort(tids, n, sizeof(*tids), cmp_pid);
	for (i = 0; i < n; i++)
		nr += !i || tids[i] != tids[i - 1];
	free(tids);
	return nr;
}

/*
 * Read the data file as written so far and count the samples added since
 * the last refresh.  A file not yet started (or unreadable) counts nothing.
 */
static void take_samples(struct top *t)
{
	struct report_opts ro = REPORT_OPTS_INIT;
	struct agg_opts ao = {.flags = AGG_THREADS};
	struct profile p;
	struct stat sb;
	struct agg a;
	size_t i;

	for (i = 0; i < t->nr_rows; i++)
		t->rows[i].self = t->rows[i].total = 0;
	t->weight = t->samples = 0;
	t->threads = 0;
	if (stat(t->data, &sb) || sb.st_size < DF_HEADER_LEN)
		return;
	profile_init(&p);
	p.live = true;
	if (profile_load(&p, t->data)) {
		profile_release(&p);
		return;
	}
	if (p.nr_samples > t->seen_samples) {
		ao.first_sample = t->seen_samples;
		agg_init(&a);
		report_aggregate(&ro, &p, &ao, &a);
		for (i = 0; i < t->nr_names; i++)
			t->seen_at[i] = UINT32_MAX;
		for (i = 0; i < a.nr_stacks; i++)
			count_stack(t, &a, &a.stacks[i], (uint32_t)i);
		t->weight = a.total_weight;
		t->samples = a.total_count;
		t->all_weight += a.total_weight;
		t->all_samples += a.total_count;
		agg_release(&a);
	}
	t->threads = count_threads(&p, t->seen_samples);
	t->seen_samples = p.nr_samples;
	profile_release(&p);
}

/* ---- the view ------------------------------------------------------------- */

static uint64_t sort_key(const struct top *t, const struct top_row *r)
{
	if (t->sort_all)
		return t->o->sort ? r->all_total : r->all_self;
	return t->o->sort ? r->total : r->self;
}

static const struct top *sort_top;

/* By the sort key, largest first, then by name: a stable order between refreshes. */
static int cmp_rows(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;
	uint64_t kx = sort_key(sort_top, x), ky = sort_key(sort_top, y);
	int c;

	if (kx != ky)
		return kx < ky ? 1 : -1;
	kx = sort_top->sort_all ? x->all_self + x->all_total : x->self + x->total;
	ky = sort_top->sort_all ? y->all_self + y->all_total : y->self + y->total;
	if (kx != ky)
		return kx < ky ? 1 : -1;
	c = strcmp(sort_top->names[x->func], sort_top->names[y->func]);
	return c ? c : strcmp(sort_top->names[x->thread], sort_top->names[y->thread]);
}

static int cmp_func(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;

	return (x->func > y->func) - (x->func < y->func);
}

/* The rows to show, sorted: per thread, or summed over threads.  *@nr of them. */
static struct top_row *view_rows(const struct top *t, size_t *nr)
{
	struct top_row *v = xp_calloc(t->nr_rows + 1, sizeof(*v));
	size_t i, n = 0;

	if (t->nr_rows) /* no rows yet: t->rows is NULL, which memcpy may not take */
		memcpy(v, t->rows, t->nr_rows * sizeof(*v));
	if (!t->o->per_thread) {
		xp_sort(v, t->nr_rows, sizeof(*v), cmp_func);
		for (i = 0; i < t->nr_rows; i++) {
			if (n && v[n - 1].func == v[i].func) {
				v[n - 1].self += v[i].self;
				v[n - 1].total += v[i].total;
				v[n - 1].all_self += v[i].all_self;
				v[n - 1].all_total += v[i].all_total;
				continue;
			}
			v[n] = v[i];
			v[n++].thread = 0;
		}
	} else {
		n = t->nr_rows;
	}
	/* Keep what has weight where it is sorted (a function idle now sorts last or goes). */
	for (i = 0, *nr = 0; i < n; i++)
		if (t->sort_all ? v[i].all_total : v[i].total)
			v[(*nr)++] = v[i];
	sort_top = t;
	xp_sort(v, *nr, sizeof(*v), cmp_rows);
	return v;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* One line of the view, cut to @width columns (0: no limit), ended by "\033[K" on a terminal. */
static void put_line(const struct top *t, FILE *out, unsigned int width, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void put_line(const struct top *t, FILE *out, unsigned int width, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (width && strlen(buf) > width)
		buf[width] = 0;
	fputs(buf, out);
	fputs(t->tty ? "\033[K\n" : "\n", out);
}

static void render(struct top *t, FILE *out)
{
	struct winsize ws = {.ws_row = 0, .ws_col = 0};
	unsigned int width = 0, height = 0, shown = 0;
	double secs = (double)(t->last_ns - t->start_ns) / 1e9;
	double ival = (double)t->interval_real_ns / 1e9;
	struct top_row *v;
	char last[32];
	size_t nr, i, limit = t->o->limit ? t->o->limit : 20;

	if (t->tty && !ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws)) {
		width = ws.ws_col;
		height = ws.ws_row;
		limit = height > 7 ? height - 6 : 1;
	}
	if (t->tty)
		fputs("\033[H", out);
	else if (t->refreshes > 1)
		fputc('\n', out);
	put_line(t, out, width, "xprof top: %s  %.1fs  %.0f samples/s  %u thread%s", t->what, secs,
		 ival > 0 ? (double)t->samples / ival : 0.0, t->threads,
		 t->threads == 1 ? "" : "s");
	put_line(t, out, width, "sorted by %s share %s%s", t->o->sort ? "total" : "self",
		 t->sort_all ? "since the start" : "in the last interval",
		 t->tty ? "    keys: s t a p q" : "");
	put_line(t, out, width, "%s", "");
	snprintf(last, sizeof(last), "LAST %.1fs", ival);
	put_line(t, out, width, "  %-15s  SINCE START", last);
	put_line(t, out, width, "  %6s %6s   %6s %6s  %sFUNCTION", "SELF", "TOTAL", "SELF", "TOTAL",
		 t->o->per_thread ? "THREAD  " : "");
	v = view_rows(t, &nr);
	for (i = 0; i < nr && shown < limit; i++, shown++)
		put_line(t, out, width, "  %5.1f%% %5.1f%%   %5.1f%% %5.1f%%  %s%s%s",
			 pct(v[i].self, t->weight), pct(v[i].total, t->weight),
			 pct(v[i].all_self, t->all_weight), pct(v[i].all_total, t->all_weight),
			 t->names[v[i].thread], t->o->per_thread ? "  " : "", t->names[v[i].func]);
	if (!nr)
		put_line(t, out, width, "  %s",
			 t->all_samples ? "(no samples in this interval)" : "(no samples yet)");
	free(v);
	if (t->tty)
		fputs("\033[J", out);
	fflush(out);
}

/* ---- the processes -------------------------------------------------------- */

static volatile sig_atomic_t top_quit, top_resized;

static void on_signal(int sig)
{
	if (sig == SIGWINCH)
		top_resized = 1;
	else
		top_quit = 1;
}

/* 'xprof attach' on @pids, writing t->data, its messages to t->log. */
static pid_t start_recorder(struct top *t, const char *pids)
{
	char hz[24], flush[32];
	pid_t pid;
	int fd;

	snprintf(hz, sizeof(hz), "%llu", (unsigned long long)t->o->freq_hz);
	pid = fork();
	if (pid < 0)
		xp_error("cannot fork: %s", strerror(errno));
	if (pid)
		return pid;
	/* Its own process group: Ctrl-C is top's to handle; gone with top. */
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
	fd = open(t->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0) {
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
	}
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		dup2(fd, STDIN_FILENO);
	/* Written out 10 times an interval: what a refresh reads is at most that old. */
	snprintf(
	    flush, sizeof(flush), "%llums",
	    (unsigned long long)(t->o->interval_ns / 10000000 ? t->o->interval_ns / 10000000 : 1));
	execl("/proc/self/exe", "xprof", "attach", "-q", "-p", pids, "-F", hz, "--flush", flush,
	      "-o", t->data, (char *)NULL);
	xp_error("cannot run xprof attach: %s", strerror(errno));
	_exit(XP_EXIT_FAIL);
}

/* Whether the recorder has ended (reaped: its status in t). */
static bool recorder_ended(struct top *t)
{
	if (!t->recorder_done && waitpid(t->recorder, &t->recorder_status, WNOHANG) == t->recorder)
		t->recorder_done = true;
	return t->recorder_done;
}

/* End the recorder (if running) and reap it. */
static void stop_recorder(struct top *t)
{
	if (t->recorder <= 0 || recorder_ended(t))
		return;
	kill(t->recorder, SIGINT);
	while (waitpid(t->recorder, &t->recorder_status, 0) < 0 && errno == EINTR)
		;
	t->recorder_done = true;
}

/*
 * Once the recorder traces the command's process, let it exec the
 * command.  0; or the exit status after an error (printed, except the
 * recorder's own, which is in its log): the recorder has then ended.
 */
static int start_command(struct top *t, int go, int err)
{
	int i, e = 0;

	/* The command starts once traced, so its first instructions are profiled too. */
	for (i = 0; i < 1000 && !procfs_tracer(t->child) && !recorder_ended(t); i++)
		usleep(10000);
	if (!t->recorder_done && procfs_tracer(t->child)) {
		if (write(go, "x", 1) != 1 || read(err, &e, sizeof(e)) != sizeof(e))
			e = 0; /* EOF: the exec took place */
		if (!e)
			return 0;
		xp_error("cannot run '%s': %s", t->o->argv[0], strerror(e));
		if (e == ENOENT && !strchr(t->o->argv[0], '/'))
			xp_hint("no '%s' in PATH", t->o->argv[0]);
		stop_recorder(t);
		unlink(t->log); /* its "no samples" says nothing more */
		return XP_EXIT_NOEXEC;
	}
	stop_recorder(t);
	return XP_EXIT_FAIL;
}

/* Start the command under the recorder.  0, or the exit status after an error (printed). */
static int launch(struct top *t)
{
	char pid[24];
	int go[2], err[2], ret;

	if (pipe2(go, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
		return xp_error("cannot create a pipe: %s", strerror(errno)), XP_EXIT_FAIL;
	/*
	 * The recorder is a child of top, so a descendant of the command's
	 * designated tracer under Yama; the command starts once traced.
	 */
	t->child = spawn_held(t->o->argv, go, err, getpid());
	close(go[0]);
	close(err[1]);
	if (t->child < 0) {
		close(go[1]);
		close(err[0]);
		return xp_error("cannot fork: %s", strerror(errno)), XP_EXIT_FAIL;
	}
	snprintf(pid, sizeof(pid), "%d", (int)t->child);
	t->recorder = start_recorder(t, pid);
	ret = t->recorder < 0 ? XP_EXIT_FAIL : start_command(t, go[1], err[0]);
	close(go[1]); /* without the byte: the child exits without running the command */
	close(err[0]);
	if (ret) {
		waitpid(t->child, &t->child_status, 0);
		t->child_done = true;
	}
	return ret;
}

/* Copy the recorder's messages to stderr (after the view is gone). */
static void show_log(const struct top *t)
{
	char buf[4096];
	size_t n;
	FILE *f = fopen(t->log, "re");

	if (!f)
		return;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, stderr);
	fclose(f);
}

static void tty_enter(struct top *t)
{
	struct termios raw;

	if (tcgetattr(STDIN_FILENO, &t->saved)) {
		t->tty = false;
		return;
	}
	raw = t->saved;
	raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	raw.c_cc[VMIN] = 0;
	raw.c_cc[VTIME] = 0;
	tcsetattr(STDIN_FILENO, TCSANOW, &raw);
	fputs("\033[?1049h\033[?25l\033[H\033[2J", stdout); /* the other screen, no cursor */
	fflush(stdout);
}

static void tty_leave(struct top *t)
{
	if (!t->tty)
		return;
	fputs("\033[?25h\033[?1049l", stdout);
	fflush(stdout);
	tcsetattr(STDIN_FILENO, TCSANOW, &t->saved);
}

/* A key pressed: true when it asks to quit. */
static bool handle_key(struct top *t, char c)
{
	switch (c) {
	case 'q':
	case 'Q':
		return true;
	case 's':
		t->o->sort = 0;
		break;
	case 't':
		t->o->sort = 1;
		break;
	case 'a':
		t->sort_all = !t->sort_all;
		break;
	case 'p':
		t->o->per_thread = !t->o->per_thread;
		break;
	}
	return false;
}

static void refresh(struct top *t)
{
	uint64_t now = xp_now_ns();

	t->interval_real_ns = now - t->last_ns;
	t->last_ns = now;
	take_samples(t);
	t->refreshes++;
	render(t, stdout);
}

/* Refresh every interval until q, a signal, -n or the recorder's end. */
static void watch(struct top *t)
{
	uint64_t next = t->start_ns + t->o->interval_ns;
	struct pollfd pfd = {.fd = STDIN_FILENO, .events = POLLIN};

	while (!top_quit) {
		uint64_t now = xp_now_ns();
		int ms = next > now ? (int)((next - now + 999999) / 1000000) : 0;
		char keys[16];
		ssize_t n, i;
		bool quit = false;

		if (ms > 100)
			ms = 100; /* notice the recorder's end soon */
		if (poll(&pfd, t->tty ? 1 : 0, ms) > 0 && (pfd.revents & POLLIN)) {
			n = read(STDIN_FILENO, keys, sizeof(keys));
			for (i = 0; i < n; i++)
				quit |= handle_key(t, keys[i]);
			if (quit)
				break;
			if (n > 0)
				render(t, stdout);
		}
		if (top_resized) {
			top_resized = 0;
			if (t->tty)
				render(t, stdout);
		}
		if (recorder_ended(t)) {
			if (!access(t->data, F_OK))
				refresh(t); /* what it wrote last (none: it could not attach) */
			break;
		}
		if (xp_now_ns() >= next) {
			refresh(t);
			if (t->o->iterations && t->refreshes >= t->o->iterations)
				break;
			next += t->o->interval_ns;
			if (next < xp_now_ns())
				next = xp_now_ns() + t->o->interval_ns;
		}
	}
}

/* "pid 4242 (app)", "3 processes", "'./app' (pid 4242)". */
static void describe(struct top *t)
{
	char comm[32] = "";

	if (!t->o->pids) {
		snprintf(t->what, sizeof(t->what), "'%s' (pid %d)", t->o->argv[0], (int)t->child);
		return;
	}
	if (t->o->npids > 1) {
		snprintf(t->what, sizeof(t->what), "pids %s", t->o->pids);
		return;
	}
	procfs_comm(t->o->pid[0], t->o->pid[0], comm, sizeof(comm));
	snprintf(t->what, sizeof(t->what), "pid %s%s%s%s", t->o->pids, *comm ? " (" : "", comm,
		 *comm ? ")" : "");
}

static void top_release(struct top *t)
{
	size_t i;

	unlink(t->data);
	unlink(t->log);
	if (*t->dir)
		rmdir(t->dir);
	for (i = 0; i < t->nr_names; i++)
		free(t->names[i]);
	free(t->names);
	xp_table_release(&t->name_table);
	free(t->seen_at);
	free(t->rows);
	xp_table_release(&t->row_table);
}

static int make_dir(struct top *t)
{
	const char *tmp = getenv("TMPDIR");

	if (!tmp || !*tmp)
		tmp = "/tmp";
	if ((size_t)snprintf(t->dir, sizeof(t->dir), "%s/xprof-top.XXXXXX", tmp) >=
		sizeof(t->dir) ||
	    !mkdtemp(t->dir)) {
		xp_error("cannot create a directory in '%s': %s", tmp, strerror(errno));
		*t->dir = 0;
		return -1;
	}
	snprintf(t->data, sizeof(t->data), "%s/top.data", t->dir);
	snprintf(t->log, sizeof(t->log), "%s/attach.log", t->dir);
	return 0;
}

/* After the view: end the recorder, then (a command) wait for the command. */
static int finish(struct top *t)
{
	int ret;

	stop_recorder(t);
	tty_leave(t);
	show_log(t);
	/*
	 * A recorder that could not attach left no data file (its error is in
	 * the log); one that did but found nothing to sample ("no samples", as
	 * from an idle target) did the view no harm.
	 */
	ret = WIFEXITED(t->recorder_status) &&
		      (WEXITSTATUS(t->recorder_status) == 0 ||
		       (WEXITSTATUS(t->recorder_status) == XP_EXIT_FAIL && !access(t->data, F_OK)))
		  ? XP_EXIT_OK
		  : XP_EXIT_FAIL;
	if (WIFEXITED(t->recorder_status) && WEXITSTATUS(t->recorder_status) == XP_EXIT_USAGE)
		ret = XP_EXIT_USAGE; /* a bad -p list */
	if (!t->child)
		return ret;
	if (!t->child_done && waitpid(t->child, &t->child_status, WNOHANG) == t->child)
		t->child_done = true;
	if (!t->child_done) {
		xp_info("stopped profiling; '%s' (pid %d) runs on to its end", t->o->argv[0],
			(int)t->child);
		while (waitpid(t->child, &t->child_status, 0) < 0 && errno == EINTR)
			;
	}
	return common_exit_status(t->child_status);
}

int cmd_top(int argc, char **argv)
{
	struct top_opts o = {.freq_hz = XP_DEFAULT_FREQ, .interval_ns = XP_NS_PER_SEC};
	struct sigaction sa = {.sa_handler = on_signal};
	struct top t = {.o = &o};
	int ret;

	ret = top_parse_args(argc, argv, &o);
	if (ret)
		return xp_parse_status(ret);
	/* The recorder runs as /proc/self/exe: say what is missing before trying. */
	if (common_check_proc())
		return XP_EXIT_FAIL;
	if (make_dir(&t))
		return XP_EXIT_FAIL;
	intern(&t, ""); /* id 0: no thread */
	t.start_ns = t.last_ns = xp_now_ns();
	if (o.pids) {
		t.recorder = start_recorder(&t, o.pids);
		ret = t.recorder < 0 ? XP_EXIT_FAIL : 0;
	} else {
		ret = launch(&t);
	}
	if (ret || t.recorder < 0) {
		show_log(&t);
		top_release(&t);
		return ret ? ret : XP_EXIT_FAIL;
	}
	describe(&t);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGWINCH, &sa, NULL);
	t.tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	if (t.tty)
		tty_enter(&t);
	watch(&t);
	ret = finish(&t);
	top_release(&t);
	return ret;
}
