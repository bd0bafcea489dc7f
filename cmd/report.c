/* SPDX-License-Identifier: MIT */
/*
 * 'xprof report': read a data file, symbolize, aggregate and print the
 * profile in one format (flat by default; tree, folded, flamegraph, pprof,
 * speedscope), optionally for some processes or threads only.  This file owns
 * the options, the messages a user sees and the exit codes, and the glue
 * that lets aggregation name frames through the symbolizer; the work is in
 * data/profile.c, report/aggregate.c, symbolize/ and the report/out_*.c writers.
 */
#include "cmd.h"
#include "aggregate.h"
#include "capture.h"
#include "clock.h"
#include "err.h"
#include "opt.h"
#include "out.h"
#include "profile.h"
#include "datafile.h"
#include "arch.h"
#include "symbolize.h"
#include "sorted.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct xp_cmd_help report_help = XP_CMD_HELP(
    "report",
    XP_USAGE(
	"xprof report [-i <file>] [-o <file>] [--flat | --tree] [--sort self|total] [--limit <n>]\n"
	"                    [--min-percent <p>] [<filters>]",
	"xprof report --diff <base> [-i <file>] [-o <file>] [--flat | --tree | --folded |\n"
	"                    --flamegraph] [<filters>]",
	"xprof report [-i <file>] [-o <file>] --folded | --flamegraph | --pprof | --speedscope\n"
	"                    [<filters>]"),
    "Resolve the symbols of a data file and print the profile in one format:\n"
    "flat (the default), tree, folded, flamegraph (HTML), pprof or speedscope.\n"
    "Filters: --pid, --tid, --comm (comma-separated lists), --per-thread.",
    "    xprof report                           # functions by self time, from "
    "xprof.data\n"
    "    xprof report --tree --min-percent 2    # call tree, entries of 2% and more\n"
    "    xprof report --flamegraph -o app.html  # open app.html in a browser\n"
    "    xprof report --pprof -o app.pb.gz      # then: go tool pprof -top app.pb.gz\n"
    "    xprof report --speedscope -o app.json  # open it at speedscope.app\n"
    "    xprof report --folded | flamegraph.pl > app.svg\n"
    "    xprof report --comm worker --per-thread --flat --limit 20\n"
    "    xprof report -i old.data --flat        # another data file\n"
    "    xprof report --header-only             # how the recording went (stop times, ...)\n"
    "    xprof report --phase load --folded     # from 'mark load' to the next mark\n"
    "    xprof report --debug-dir ~/debug       # debuginfo under ~/debug/.build-id\n");

/*
 * The formats, in the order the usage error names them; format_choices
 * follows the same order.  Each is also a flag (--folded, ...) with @help.
 */
static const struct {
	const char *name;
	enum report_format format;
	const struct out_ops *ops;
	const char *help;
} formats[] = {
    {"folded", REPORT_FOLDED, &out_folded, "folded stacks, one line per stack, for flame graphs"},
    {"flat", REPORT_FLAT, &out_flat, "functions with self and total share (the default)"},
    {"tree", REPORT_TREE, &out_tree, "call tree from the callers down, with total and self share"},
    {"flamegraph", REPORT_FLAMEGRAPH, &out_flamegraph,
     "interactive flame graph, one self-contained HTML file"},
    {"pprof", REPORT_PPROF, &out_pprof,
     "gzipped profile.proto for 'go tool pprof' (binary: use -o)"},
    {"speedscope", REPORT_SPEEDSCOPE, &out_speedscope,
     "JSON for speedscope (https://www.speedscope.app)"},
};

#define NR_FORMATS (sizeof(formats) / sizeof(formats[0]))

static const char *const format_choices[] = {"folded", "flat",	     "tree", "flamegraph",
					     "pprof",  "speedscope", NULL};
static const char *const sort_choices[] = {"self", "total", NULL};
static const char *const value_choices[] = {"weight", "samples", NULL};
/* In the order of enum agg_interp. */
static const char *const interp_choices[] = {"merge", "beside", "native", NULL};

static const struct out_ops *format_ops(int format)
{
	size_t i;

	for (i = 0; i < NR_FORMATS; i++)
		if ((int)formats[i].format == format)
			return formats[i].ops;
	return &out_flat;
}

/* "1,2,3" into @out (at most REPORT_MAX_FILTER).  0, or 2 after a usage error. */
static int parse_ids(const char *arg, const char *opt, pid_t *out, size_t *nr)
{
	const char *p = arg;

	*nr = 0;
	while (*p) {
		char num[24];
		size_t len = strcspn(p, ",");
		uint64_t v;

		if (!len || len >= sizeof(num) || *nr >= REPORT_MAX_FILTER)
			return xp_usage_error(&report_help,
					      "invalid value '%s' for %s (expected a list of at "
					      "most %d ids)",
					      arg, opt, REPORT_MAX_FILTER);
		memcpy(num, p, len);
		num[len] = 0;
		if (xp_parse_u64(num, 1, 0x3fffffff, &v))
			return xp_usage_error(
			    &report_help, "invalid value '%s' for %s (expected an id)", num, opt);
		out[(*nr)++] = (pid_t)v;
		p += len;
		if (*p == ',' && !*++p)
			return xp_usage_error(&report_help,
					      "invalid value '%s' for %s (expected a list of ids)",
					      arg, opt);
	}
	return 0;
}

/*
 * One end of --time: empty (open), "<n>%" or a time since the start of
 * recording, "<n>" in seconds or with a unit (ns, us, ms, s, m).  0 or -1.
 */
static int parse_time_point(const char *s, size_t len, struct report_time *t)
{
	static const struct {
		const char *suffix;
		double ns;
	} units[] = {{"", 1e9}, {"s", 1e9}, {"ms", 1e6}, {"us", 1e3}, {"ns", 1}, {"m", 60e9}};
	char buf[64], *end;
	size_t i;

	*t = (struct report_time){0};
	if (!len)
		return 0;
	if (len >= sizeof(buf) || !strchr("0123456789.", s[0]))
		return -1;
	memcpy(buf, s, len);
	buf[len] = 0;
	errno = 0;
	t->v = strtod(buf, &end);
	if (errno || end == buf || !(t->v >= 0 && t->v < 1e15))
		return -1;
	t->set = true;
	if (!strcmp(end, "%")) {
		t->pct = true;
		return t->v <= 100 ? 0 : -1;
	}
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(end, units[i].suffix)) {
			t->v *= units[i].ns;
			return 0;
		}
	}
	return -1;
}

/* --time FROM,TO into opts->time_from and time_to.  0, or 2 after a usage error. */
static int parse_time(struct report_opts *opts)
{
	const char *arg = opts->time_arg, *comma = strchr(arg, ',');
	struct report_time *from = &opts->time_from, *to = &opts->time_to;

	if (!comma || strchr(comma + 1, ',') ||
	    parse_time_point(arg, (size_t)(comma - arg), from) ||
	    parse_time_point(comma + 1, strlen(comma + 1), to) || (!from->set && !to->set) ||
	    (from->set && to->set && from->pct == to->pct && from->v > to->v))
		return xp_usage_error(
		    &report_help,
		    "invalid value '%s' for --time (expected FROM,TO: times since "
		    "the start like 1.5 or 200ms, or percentages of the run like "
		    "10%%, either may be empty)",
		    arg);
	return 0;
}

/* "a,b" into opts->comms, copied into opts->comm_buf.  0, or 2 after a usage error. */
static int parse_comms(struct report_opts *opts)
{
	const char *arg = opts->comm_arg;
	char *p;

	if (strlen(arg) >= sizeof(opts->comm_buf))
		return xp_usage_error(&report_help, "value of --comm is too long");
	strcpy(opts->comm_buf, arg);
	opts->nr_comms = 0;
	for (p = opts->comm_buf;;) {
		size_t len = strcspn(p, ",");

		if (!len || opts->nr_comms >= REPORT_MAX_FILTER)
			return xp_usage_error(&report_help,
					      "invalid value '%s' for --comm (expected a list of "
					      "at most %d names)",
					      arg, REPORT_MAX_FILTER);
		opts->comms[opts->nr_comms++] = p;
		if (!p[len])
			break;
		p[len] = 0;
		p += len + 1;
	}
	return 0;
}

/*
 * The choice options into @opts: opts->format from the format options
 * given (@chosen, indexed like formats[]; at most one), the index of
 * --sort (-1: not given) and of --value.  0, or 2 after a usage error.
 */
static int report_apply_choices(struct report_opts *opts, const bool *chosen, int sort, int value)
{
	const char *first = NULL;
	size_t i;

	for (i = 0; i < NR_FORMATS; i++) {
		if (!chosen[i])
			continue;
		if (first)
			return xp_usage_error(&report_help,
					      "options '--%s' and '--%s' cannot be used together",
					      first, formats[i].name);
		first = formats[i].name;
		opts->format = formats[i].format;
	}
	opts->value_samples = value == 1;
	if (sort >= 0)
		opts->sort = sort ? OUT_SORT_TOTAL : OUT_SORT_SELF;
	if ((sort >= 0 || opts->limit || opts->min_percent > 0) && opts->format != REPORT_FLAT &&
	    opts->format != REPORT_TREE)
		return xp_usage_error(&report_help,
				      "options '--sort', '--limit' and '--min-percent' apply only "
				      "to --flat and --tree");
	return 0;
}

/*
 * After the options are in @opts and the format is chosen: parse the
 * filters' values and refuse the combinations the format cannot do.
 * XP_EXIT_OK, or XP_EXIT_USAGE after a usage error.
 */
static int report_check_args(struct report_opts *opts)
{
	if (opts->pid_arg && parse_ids(opts->pid_arg, "--pid", opts->pids, &opts->nr_pids))
		return XP_EXIT_USAGE;
	if (opts->tid_arg && parse_ids(opts->tid_arg, "--tid", opts->tids, &opts->nr_tids))
		return XP_EXIT_USAGE;
	if (opts->comm_arg && parse_comms(opts))
		return XP_EXIT_USAGE;
	if (opts->time_arg && parse_time(opts))
		return XP_EXIT_USAGE;
	if (opts->inputs.nr)
		opts->input = opts->inputs.v[0];
	if (opts->inputs.nr > 1 &&
	    (format_ops(opts->format)->flags & (OUT_LOCATIONS | OUT_TIMELINE)))
		return xp_usage_error(
		    &report_help, "several '-i' files apply only to --flat, --tree, --folded and "
				  "--flamegraph");
	if (opts->inputs.nr > 1 && opts->header_only)
		return xp_usage_error(
		    &report_help,
		    "options '--header-only' and several '-i' cannot be used together");
	if (opts->diff_base && !(format_ops(opts->format)->flags & OUT_DIFF))
		return xp_usage_error(
		    &report_help, "option '--diff' applies only to --flat, --tree, --folded and "
				  "--flamegraph");
	if (opts->diff_base && opts->header_only)
		return xp_usage_error(
		    &report_help, "options '--diff' and '--header-only' cannot be used together");
	return XP_EXIT_OK;
}

int report_parse_args(int argc, char **argv, struct report_opts *opts)
{
	bool chosen[NR_FORMATS] = {false};
	int format = -1, sort = -1, value = 0;
	const struct xp_option options[] = {
	    XP_OPTION_STRING_LIST('i', "input", &opts->inputs, "<file>",
				  "data file to read ('-': standard input; default xprof.data); "
				  "repeated: the files' samples together"),
	    XP_OPTION_STRING('o', "output", &opts->output, "<file>",
			     "write the report to <file> instead of standard output"),
	    XP_OPTION_STRING(0, "symfs", &opts->symfs, "<dir>",
			     "look for the recorded files under <dir> (as perf's --symfs)"),
	/* --flat, --tree, --folded first, then the others in their order. */
#define FORMAT_FLAG(i) XP_OPTION_FLAG(0, formats[i].name, &chosen[i], formats[i].help)
	    FORMAT_FLAG(1),
	    FORMAT_FLAG(2),
	    FORMAT_FLAG(0),
	    FORMAT_FLAG(3),
	    FORMAT_FLAG(4),
	    FORMAT_FLAG(5),
#undef FORMAT_FLAG
	    XP_OPTION_CHOICE('f', "format", &format,
			     "<folded|flat|tree|flamegraph|pprof|speedscope>", format_choices,
			     "one of the formats above, by name"),
	    XP_OPTION_STRING(0, "diff", &opts->diff_base, "<base>",
			     "compare with the data file <base>: changes of each share (flat, "
			     "tree, folded, flamegraph)"),
	    XP_OPTION_CHOICE(0, "sort", &sort, "<self|total>", sort_choices,
			     "--flat, --tree: order by self or total share (default: self, total)"),
	    XP_OPTION_CHOICE(
		0, "value", &value, "<weight|samples>", value_choices,
		"what every format counts: CPU (or wall) time, the default, or samples"),
	    XP_OPTION_UINT(
		0, "limit", &opts->limit, "<n>", 1, 1000000000,
		"--flat: at most <n> rows; --tree: at most <n> callees under each entry"),
	    XP_OPTION_PERCENT(
		0, "min-percent", &opts->min_percent, "<p>",
		"--flat, --tree: leave out entries below <p> percent (tree: of total)"),
	    XP_OPTION_STRING(0, "pid", &opts->pid_arg, "<pid>[,<pid>...]",
			     "only samples of these processes"),
	    XP_OPTION_STRING(0, "tid", &opts->tid_arg, "<tid>[,<tid>...]",
			     "only samples of these threads"),
	    XP_OPTION_STRING(0, "comm", &opts->comm_arg, "<name>[,<name>...]",
			     "only samples of processes or threads with these names"),
	    XP_OPTION_STRING(0, "time", &opts->time_arg, "<from>,<to>",
			     "only samples in this window: times since the start (1.5, 200ms), or "
			     "% of the run"),
	    XP_OPTION_STRING(0, "phase", &opts->phase, "<name>",
			     "only samples of the phases named <name>: from each 'mark <name>' "
			     "sent to --control to the next mark"),
	    XP_OPTION_FLAG(0, "per-thread", &opts->per_thread,
			   "put a 'comm/tid' frame at the root of every stack"),
	    XP_OPTION_CHOICE(0, "interp", &opts->interp, "<merge|beside|native>", interp_choices,
			     "interpreter (Python) frames: in place of the native frame of the "
			     "loop that ran them (default), beside it, or left out"),
	    XP_OPTION_FLAG(0, "no-inline", &opts->no_inline,
			   "fold inlined functions into the function they were inlined into"),
	    XP_OPTION_FLAG(0, "no-demangle", &opts->no_demangle,
			   "show C++ and Rust names mangled, as the symbol table has them"),
	    XP_OPTION_FLAG(0, "header-only", &opts->header_only,
			   "only the recording's details and statistics (command, host, stop "
			   "times)"),
	    XP_OPTION_STRING_LIST(0, "debug-dir", &opts->debug_dirs, "<dir>",
				  "also look for separate debuginfo under <dir> (repeatable, or "
				  "a:b:c)"),
	    XP_OPTION_END(),
	};
	int ret = xp_parse_options_only(argc, argv, options, &report_help);

	if (ret)
		return ret;
	if (format >= 0)
		chosen[format] = true;
	if (report_apply_choices(opts, chosen, sort, value))
		return XP_EXIT_USAGE;
	return report_check_args(opts);
}

struct resolver {
	const struct profile *p;
	struct symbolizer *sym;
	const char *symfs;
	char label[64]; /* a frame's name made here (copied by the caller at once) */
};

/*
 * Name a frame: find its mapping as of the sample at its lookup address,
 * then symbolize; an address in inlined code names the inlined functions
 * first, then the function holding them.
 */
static unsigned int resolve_frame(void *ctx, const struct agg_frame_req *req, const char **labels,
				  unsigned int max)
{
	struct resolver *r = ctx;
	const struct profile_mapping *m = NULL;
	const struct sym_frame *f;
	const char *comm;
	struct sym_map sm;
	char path[PATH_MAX];
	unsigned int n = 0;

	/* Named after the thread it stands for, as it was last named. */
	if ((req->flags & XP_FRAME_EXITED) && max && req->pc <= INT_MAX &&
	    (comm = profile_thread_comm(r->p, (pid_t)req->pc, UINT64_MAX))) {
		snprintf(r->label, sizeof(r->label), "[exited before a sample: %s]", comm);
		labels[0] = r->label;
		return 1;
	}

	if (!(req->flags & XP_FRAME_MARKERS))
		m = profile_find_mapping(r->p, req->pid, req->t, req->addr);
	if (m)
		sm = (struct sym_map){m->start,	   m->end,	    m->offset,	m->path,
				      m->build_id, m->build_id_len, &m->file_id};
	if (m && r->symfs && m->path && m->path[0] == '/' &&
	    (size_t)snprintf(path, sizeof(path), "%s%s", r->symfs, m->path) < sizeof(path))
		sm.path = path;
	for (f = symbolize_pc_at(r->sym, req->pid, m ? &sm : NULL, req->pc, req->addr, req->flags,
				 req->t);
	     f && n < max; f = f->caller) {
		if (req->src)
			req->src[n] = (struct agg_src){f->file, f->line};
		labels[n++] = f->name;
	}
	return n;
}

/* A symbolizer for @p: the options, the data file's arch and the side data it carries. */
static struct symbolizer *new_symbolizer(const struct report_opts *opts, const struct profile *p)
{
	const struct xp_arch *arch = xp_arch_by_machine(p->e_machine);
	struct sym_opts so = {
	    /* Source lines only for the formats that show them (they load .debug_line). */
	    .lines = (format_ops(opts->format)->flags & OUT_LOCATIONS) != 0,
	    .no_inline = opts->no_inline,
	    .no_demangle = opts->no_demangle,
	    .debug_dirs = opts->debug_dirs.v,
	    .nr_debug_dirs = opts->debug_dirs.nr,
	    .syscall_name = arch ? arch->syscall.name : NULL,
	};
	char cache[PATH_MAX];
	struct symbolizer *s;
	size_t i;

	if (!capture_cache_dir(cache, sizeof(cache)))
		so.cache_dir = cache;
	s = symbolizer_new(&so);
	for (i = 0; i < p->nr_jitsyms; i++)
		symbolizer_add_jit(s, p->jitsyms[i].pid, p->jitsyms[i].start, p->jitsyms[i].size,
				   p->jitsyms[i].name, p->jitsyms[i].t);
	for (i = 0; i < p->nr_jitlines; i++)
		symbolizer_add_jit_line(s, p->jitlines[i].pid, p->jitlines[i].start,
					p->jitlines[i].end, p->jitlines[i].file,
					p->jitlines[i].line);
	for (i = 0; i < p->nr_vdsos; i++)
		symbolizer_add_vdso(s, p->vdsos[i].image, p->vdsos[i].len);
	return s;
}

void report_aggregate(const struct report_opts *opts, const struct profile *p,
		      const struct agg_opts *ao, struct agg *a)
{
	struct resolver r = {p, new_symbolizer(opts, p), NULL, ""};

	agg_build_opts(a, p, ao, resolve_frame, &r);
	symbolizer_free(r.sym);
}

/* What the writers are told about the profile besides its stacks. */
static void fill_out_opts(const struct report_opts *opts, const struct profile *p,
			  struct out_opts *oo)
{
	uint64_t v;
	size_t i;

	*oo = (struct out_opts){
	    .sort = (enum out_sort)opts->sort,
	    .limit = opts->limit,
	    .min_percent = opts->min_percent,
	    .title = p->name,
	    .start_ns = p->start_ns,
	    .samples = opts->value_samples,
	};
	for (i = 0; i < p->nr_procs && !oo->exe; i++)
		if (p->procs[i].exe[0])
			oo->exe = p->procs[i].exe;
	if (profile_stat(p, "duration_ns", &v))
		oo->duration_ns = v;
	if (profile_stat(p, "freq_hz", &v) && v)
		oo->period_ns = XP_NS_PER_SEC / v;
	if (profile_stat(p, "mode_wall", &v))
		oo->wall = v != 0;
}

/* One end of --time in ns since the start of recording; @first..@last is the run. */
static uint64_t time_point(const struct report_time *t, uint64_t first, uint64_t last,
			   uint64_t open)
{
	if (!t->set)
		return open;
	if (t->pct)
		return first + (uint64_t)((double)(last - first) * t->v / 100.0 + 0.5);
	return (uint64_t)t->v;
}

/* --time as a range of sample times of @p (the run: from its first sample to its last). */
static void time_range(const struct report_opts *opts, const struct profile *p, struct agg_opts *ao)
{
	uint64_t first = UINT64_MAX, last = 0;
	size_t i;

	if (!opts->time_from.set && !opts->time_to.set)
		return;
	for (i = 0; i < p->nr_samples; i++) {
		if (p->samples[i].t < first)
			first = p->samples[i].t;
		if (p->samples[i].t > last)
			last = p->samples[i].t;
	}
	if (first > last)
		first = last = 0;
	ao->time_range = true;
	ao->t_from = time_point(&opts->time_from, first, last, 0);
	ao->t_to = time_point(&opts->time_to, first, last, UINT64_MAX);
}

/* @s, bytes other than printable ASCII as \xNN, appended to @buf (of @size) at *@len. */
static void put_text_buf(const char *s, char *buf, size_t size, size_t *len)
{
	for (; *s && *len + 5 < size; s++) {
		if (*s >= 0x20 && *s < 0x7f && *s != '\\')
			buf[(*len)++] = *s;
		else
			*len +=
			    (size_t)snprintf(buf + *len, size - *len, "\\x%02x", (unsigned char)*s);
	}
	buf[*len] = 0;
}

/*
 * --phase: the spans of the phases of @p named opts->phase, each from its
 * mark to the next phase mark (or the end), into ao->spans (allocated, for
 * the caller to free).  0, or -1 after an error naming the known phases.
 */
static int phase_spans(const struct report_opts *opts, const struct profile *p, struct agg_opts *ao)
{
	struct agg_span *spans = xp_calloc(p->nr_marks + 1, sizeof(*spans));
	char known[512];
	size_t i, j, n = 0, len = 0;

	known[0] = 0;
	for (i = 0; i < p->nr_marks; i++) {
		const struct profile_mark *m = &p->marks[i];

		if (m->kind != DF_MARK_PHASE)
			continue;
		for (j = 0; j < i; j++)
			if (p->marks[j].kind == DF_MARK_PHASE && !strcmp(p->marks[j].name, m->name))
				break;
		if (j == i) {
			put_text_buf(len ? ", " : "", known, sizeof(known), &len);
			put_text_buf(m->name, known, sizeof(known), &len);
		}
		if (strcmp(m->name, opts->phase))
			continue;
		spans[n] = (struct agg_span){m->t, UINT64_MAX};
		for (j = i + 1; j < p->nr_marks; j++)
			if (p->marks[j].kind == DF_MARK_PHASE) {
				spans[n].to = p->marks[j].t;
				break;
			}
		n++;
	}
	if (!n) {
		free(spans);
		if (!len)
			return xp_error("no phase '%s' in '%s': it has no phases (name them with "
					"'mark <name>' on --control)",
					opts->phase, p->name);
		return xp_error("no phase '%s' in '%s' (its phases: %s)", opts->phase, p->name,
				known);
	}
	ao->spans = spans;
	ao->nr_spans = n;
	return 0;
}

/*
 * The most a report writes: 64 MiB, and 32 bytes per byte of the data file
 * (a recording's reports are a fraction of that).  Only a hostile file asks
 * for more, e.g. a 16 MiB JIT symbol name used by thousands of frames.
 */
#define REPORT_OUT_BASE	    (64ull << 20)
#define REPORT_OUT_PER_BYTE 32

/* A report between aggregation and writing. */
struct report_run {
	const char *name; /* of the data file */
	uint64_t max_out; /* bytes the report may write */
	char *symfs;	  /* --symfs made absolute, or NULL */
	char *base_title; /* --diff: the base file's name */
	const struct out_ops *ops;
	struct resolver r;
	struct out_opts oo;
	struct agg a;
	struct agg_span *spans; /* --phase */
};

/*
 * Symbolize and aggregate what @opts asks for.  0, or -1 after printing an
 * error (the filters left nothing).  Call report_done in both cases.
 */
static int report_prepare(const struct report_opts *opts, const struct profile *p,
			  struct report_run *run)
{
	struct agg_opts ao = {
	    .pids = opts->pids,
	    .nr_pids = opts->nr_pids,
	    .tids = opts->tids,
	    .nr_tids = opts->nr_tids,
	    .comms = opts->comms,
	    .nr_comms = opts->nr_comms,
	    .interp = (unsigned int)opts->interp,
	};

	run->symfs = NULL;
	run->spans = NULL;
	run->name = p->name;
	run->max_out = REPORT_OUT_BASE + REPORT_OUT_PER_BYTE * p->good_bytes;
	run->base_title = NULL;
	agg_init(&run->a);
	run->ops = format_ops(opts->format);
	run->r = (struct resolver){p, new_symbolizer(opts, p), NULL, ""};
	/* Absolute, so that the joined paths name files (the symbolizer reads only those). */
	if (opts->symfs) {
		run->symfs = realpath(opts->symfs, NULL);
		if (!run->symfs)
			return xp_error("cannot use --symfs '%s': %s", opts->symfs,
					strerror(errno));
		run->r.symfs = run->symfs;
	}
	if (run->ops->flags & OUT_THREADS)
		ao.flags |= AGG_THREADS;
	if (run->ops->flags & OUT_LOCATIONS)
		ao.flags |= AGG_LOCATIONS;
	if (run->ops->flags & OUT_TIMELINE)
		ao.flags |= AGG_TIMELINE;
	if (opts->per_thread)
		ao.flags |= AGG_THREAD_FRAME;
	fill_out_opts(opts, p, &run->oo);
	time_range(opts, p, &ao);
	if (opts->phase && phase_spans(opts, p, &ao))
		return -1;
	run->spans = (struct agg_span *)ao.spans;
	agg_build_opts(&run->a, p, &ao, resolve_frame, &run->r);
	if (run->a.cut_names)
		xp_warn("'%s': %llu frame names longer than %d bytes, which no program has; "
			"cut to that length",
			p->name, (unsigned long long)run->a.cut_names, AGG_NAME_MAX);
	if (!run->a.total_count && run->a.filtered_count) {
		xp_error("no samples in '%s' pass the filters (%llu left out)", p->name,
			 (unsigned long long)run->a.filtered_count);
		xp_hint("see the threads and processes with 'xprof report --per-thread --flat'");
		return -1;
	}
	return 0;
}

/* Passes what the writers write on to @to, up to @left bytes, then drops it. */
struct report_sink {
	FILE *to;
	const char *name;
	uint64_t max, left;
};

static ssize_t report_sink_write(void *cookie, const char *buf, size_t n)
{
	struct report_sink *s = cookie;
	size_t k = n;

	if (n > s->left) {
		/* Cut after the last whole line that fits (text formats stay well-formed). */
		for (k = (size_t)s->left; k && buf[k - 1] != '\n'; k--)
			;
		if (s->max)
			xp_warn("the report of '%s' stops after %llu MiB: the data file asks for "
				"more output than any recording makes",
				s->name, (unsigned long long)(s->max >> 20));
		s->max = 0;
	}
	if (k && fwrite(buf, 1, k, s->to) != k)
		return -1;
	s->left = n > s->left ? 0 : s->left - k;
	return (ssize_t)n;
}

/* 0, or -1 after printing an error.  Checking @out for write errors is the caller's job. */
static int report_write(struct report_run *run, FILE *out)
{
	struct report_sink s = {out, run->name, run->max_out, run->max_out};
	cookie_io_functions_t io = {.write = report_sink_write};
	FILE *f = fopencookie(&s, "w", io);
	int ret;

	if (!f)
		return xp_error("cannot write the %s report: %s", run->ops->name, strerror(errno));
	ret = out_write_opts(run->ops, f, &run->a, &run->oo);
	/* A write error of @out stays in @out's error flag, for the caller. */
	fclose(f);
	if (ret)
		return xp_error("cannot write the %s report", run->ops->name);
	return 0;
}

static void report_done(struct report_run *run)
{
	free(run->symfs);
	free(run->spans);
	free(run->base_title);
	agg_release(&run->a);
	symbolizer_free(run->r.sym);
}

int report_profile(const struct report_opts *opts, const struct profile *p, FILE *out)
{
	struct report_run run;
	int ret = report_prepare(opts, p, &run);

	if (!ret)
		ret = report_write(&run, out);
	report_done(&run);
	return ret;
}

/* @s with bytes other than printable ASCII as \xNN: the file comes from anywhere. */
static void put_text(const char *s, FILE *out)
{
	for (; *s; s++)
		if (*s >= 0x20 && *s < 0x7f && *s != '\\')
			putc(*s, out);
		else
			fprintf(out, "\\x%02x", (unsigned char)*s);
}

static const struct profile *stat_cmp_profile;

/* By name, then by position: the last of a run of equal names is the one that counts. */
static int stat_cmp(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int c = strcmp(stat_cmp_profile->stats[x].name, stat_cmp_profile->stats[y].name);

	return c ? c : (x > y) - (x < y);
}

void report_write_header(const struct profile *p, FILE *out)
{
	size_t i, *order = xp_calloc(p->nr_stats + 1, sizeof(*order));
	bool *keep = xp_calloc(p->nr_stats + 1, sizeof(*keep));

	fputs("# data file : ", out);
	put_text(p->name, out);
	for (i = 0; i < p->nr_metas; i++) {
		fputs("\n# ", out);
		put_text(p->metas[i].key, out);
		fputs(" : ", out);
		put_text(p->metas[i].value, out);
	}
	fprintf(out, "\n# samples : %zu\n", p->nr_samples);
	/* Phases and the switches of sampling, in the order they came. */
	for (i = 0; i < p->nr_marks; i++) {
		const struct profile_mark *m = &p->marks[i];

		if (m->kind == DF_MARK_PHASE) {
			fputs("# phase ", out);
			put_text(m->name, out);
		} else {
			fputs(m->kind == DF_MARK_ENABLE ? "# sampling enabled"
							: "# sampling disabled",
			      out);
		}
		fprintf(out, " : %llu.%09llu s\n", (unsigned long long)(m->t / XP_NS_PER_SEC),
			(unsigned long long)(m->t % XP_NS_PER_SEC));
	}
	/* Pids are the host's everywhere; say which a process knew itself by, when another. */
	for (i = 0; i < p->nr_procs; i++)
		if (p->procs[i].nspid && p->procs[i].nspid != p->procs[i].pid &&
		    (!i || p->procs[i - 1].pid != p->procs[i].pid ||
		     p->procs[i - 1].nspid != p->procs[i].nspid))
			fprintf(out, "# pid %d : pid %d in its own pid namespace\n",
				(int)p->procs[i].pid, (int)p->procs[i].nspid);
	for (i = 0; i < p->nr_procs; i++)
		if (p->procs[i].flags & DF_PROC_NO_MAPS)
			fprintf(out,
				"# pid %d : mappings not readable when recorded (/proc hid them)\n",
				(int)p->procs[i].pid);
	/* A later record of a name supersedes an earlier one; print in file order. */
	for (i = 0; i < p->nr_stats; i++)
		order[i] = i;
	stat_cmp_profile = p;
	xp_sort(order, p->nr_stats, sizeof(*order), stat_cmp);
	for (i = 0; i < p->nr_stats; i++)
		if (i + 1 == p->nr_stats ||
		    strcmp(p->stats[order[i]].name, p->stats[order[i + 1]].name))
			keep[order[i]] = true;
	for (i = 0; i < p->nr_stats; i++) {
		if (!keep[i])
			continue;
		fputs("# stat ", out);
		put_text(p->stats[i].name, out);
		fprintf(out, " : %llu\n", (unsigned long long)p->stats[i].value);
	}
	free(order);
	free(keep);
}

static int load(struct profile *p, const char *input, bool allow_empty);

/*
 * A profile in which the recorder could not read the mappings of some
 * processes (DF_PROC_NO_MAPS: /proc hid them) names none of their frames:
 * say so first, before any other word on the report.
 */
static void warn_no_maps(const struct profile *p)
{
	char list[160] = "";
	size_t i, n = 0, len = 0;

	for (i = 0; i < p->nr_procs; i++) {
		const struct profile_process *pr = &p->procs[i];

		if (!(pr->flags & DF_PROC_NO_MAPS))
			continue;
		if (n++ < 3 && len < sizeof(list))
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%d%s%s",
						n > 1 ? ", " : "", (int)pr->pid,
						pr->comm && pr->comm[0] ? " " : "",
						pr->comm ? pr->comm : "");
	}
	if (!n)
		return;
	xp_warn("'%s' was recorded without the mappings of %zu process%s (pid %s%s): /proc hid "
		"them, and their frames are addresses",
		p->name, n, n > 1 ? "es" : "", list, n > 3 ? ", ..." : "");
}

/*
 * --diff: load the base profile, aggregate it as @run's and add it to
 * @run as the base of a comparison.  0, or -1 after printing an error.
 */
static int add_base(const struct report_opts *opts, struct report_run *run)
{
	struct report_run base_run;
	struct profile base;
	int ret;

	memset(&base_run, 0, sizeof(base_run));
	profile_init(&base);
	ret = load(&base, opts->diff_base, false);
	if (!ret)
		ret = report_prepare(opts, &base, &base_run);
	if (!ret) {
		agg_add_base(&run->a, &base_run.a);
		/* The names are copied: the base's title must outlive its profile. */
		run->base_title = xp_strdup(base.name);
		run->oo.base_title = run->base_title;
	}
	report_done(&base_run);
	profile_release(&base);
	return ret;
}

/*
 * The data files after the first -i: load each, aggregate it as @run's and
 * merge it into @run.  0, or -1 after printing an error.
 */
static int add_inputs(const struct report_opts *opts, struct report_run *run)
{
	size_t i;
	int ret = 0;

	for (i = 1; i < opts->inputs.nr && !ret; i++) {
		struct report_run more;
		struct profile p;

		memset(&more, 0, sizeof(more));
		profile_init(&p);
		ret = load(&p, opts->inputs.v[i], true); /* a part of a run may have no samples */
		if (!ret)
			ret = report_prepare(opts, &p, &more);
		if (!ret) {
			agg_merge(&run->a, &more.a);
			run->oo.duration_ns += more.oo.duration_ns;
		}
		report_done(&more);
		profile_release(&p);
	}
	return ret;
}

static int load(struct profile *p, const char *input, bool allow_empty)
{
	bool is_stdin = !strcmp(input, "-");
	FILE *f = is_stdin ? stdin : fopen(input, "rb");
	int ret;

	if (!f) {
		xp_error("cannot open '%s': %s", input, strerror(errno));
		if (errno == ENOENT)
			xp_hint("run 'xprof record -- <command>' first");
		return -1;
	}
	ret = profile_read(p, f, is_stdin ? "standard input" : input);
	if (!is_stdin)
		fclose(f);
	if (ret)
		return ret;
	warn_no_maps(p);
	if (!p->nr_samples && !allow_empty) {
		xp_error("no samples in '%s'", p->name);
		xp_hint("the command may have ended before the first sample; "
			"try a higher frequency with 'xprof record -F'");
		return -1;
	}
	return 0;
}

int cmd_report(int argc, char **argv)
{
	struct report_opts opts = REPORT_OPTS_INIT;
	struct report_run run;
	bool to_stdout;
	struct profile p;
	FILE *out;
	int ret;

	ret = report_parse_args(argc, argv, &opts);
	if (ret)
		return xp_parse_status(ret);
	to_stdout = !opts.output || !strcmp(opts.output, "-");
	if (to_stdout && !opts.header_only && (format_ops(opts.format)->flags & OUT_BINARY) &&
	    isatty(STDOUT_FILENO)) {
		xp_error("refusing to write binary %s data to a terminal",
			 format_ops(opts.format)->name);
		xp_hint("use -o FILE, or redirect standard output");
		return XP_EXIT_USAGE;
	}
	profile_init(&p);
	if (load(&p, opts.input, opts.header_only)) {
		profile_release(&p);
		return XP_EXIT_FAIL;
	}
	if (opts.header_only) {
		memset(&run, 0, sizeof(run));
	} else if (report_prepare(&opts, &p, &run) || add_inputs(&opts, &run) ||
		   (opts.diff_base && add_base(&opts, &run))) {
		report_done(&run);
		profile_release(&p);
		return XP_EXIT_FAIL;
	}
	/* Only now: a failed report must not truncate an earlier output file. */
	out = to_stdout ? stdout : fopen(opts.output, "w");
	if (!out) {
		xp_error("cannot create '%s': %s", opts.output, strerror(errno));
		report_done(&run);
		profile_release(&p);
		return XP_EXIT_FAIL;
	}
	if (opts.header_only)
		report_write_header(&p, out);
	else
		ret = report_write(&run, out) ? XP_EXIT_FAIL : XP_EXIT_OK;
	report_done(&run);
	profile_release(&p);
	if (to_stdout)
		return ret; /* main checks standard output */
	/* errno may hold any earlier failure (a missing ELF file): only fclose's counts. */
	errno = 0;
	if ((ferror(out) | fclose(out)) && !ret) {
		xp_error("cannot write '%s': %s", opts.output, strerror(errno ? errno : EIO));
		ret = XP_EXIT_FAIL;
	}
	return ret;
}
