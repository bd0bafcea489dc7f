/* SPDX-License-Identifier: MIT */
/*
 * 'xprof report': read a data file, symbolize, aggregate and print the
 * profile in one format (flat by default, or folded stacks).  This file owns
 * the options, the messages a user sees and the exit codes, and the glue
 * that lets aggregation name frames through the symbolizer; the work is in
 * src/profile.c, src/aggregate.c, symbolize/ and the src/out_*.c writers.
 */
#include "cmd.h"
#include "aggregate.h"
#include "err.h"
#include "opt.h"
#include "out.h"
#include "profile.h"
#include "arch/arch.h"
#include "symbolize/symbolize.h"

#include <errno.h>
#include <string.h>

static const char *const report_usage[] = {
    "xprof report [-i <file>] [--folded | --flat] [-o <file>]",
    NULL,
};

static const struct xp_cmd_help report_help = {
    .name = "report",
    .usage = report_usage,
    .description = "Resolve the symbols of a data file and print the profile.",
    .examples = "    xprof report                           # functions by self time, from "
		"xprof.data\n"
		"    xprof report --folded -o app.folded    # folded stacks for flame graphs\n"
		"    xprof report --folded | flamegraph.pl > app.svg\n"
		"    xprof report -i old.data --flat        # another data file\n"
		"    xprof report --debug-dir ~/debug       # debuginfo under ~/debug/.build-id\n",
};

int report_parse_args(int argc, char **argv, struct report_opts *opts)
{
	bool folded = false, flat = false;
	const struct xp_option options[] = {
	    {.short_name = 'i',
	     .long_name = "input",
	     .type = XP_OPT_STRING,
	     .value = &opts->input,
	     .argh = "<file>",
	     .help = "data file to read ('-': standard input; default xprof.data)"},
	    {.short_name = 'o',
	     .long_name = "output",
	     .type = XP_OPT_STRING,
	     .value = &opts->output,
	     .argh = "<file>",
	     .help = "write the report to <file> instead of standard output"},
	    {.long_name = "flat",
	     .type = XP_OPT_FLAG,
	     .value = &flat,
	     .help = "functions with self and total share (the default)"},
	    {.long_name = "folded",
	     .type = XP_OPT_FLAG,
	     .value = &folded,
	     .help = "folded stacks, one line per stack, for flame graphs"},
	    {.long_name = "no-inline",
	     .type = XP_OPT_FLAG,
	     .value = &opts->no_inline,
	     .help = "fold inlined functions into the function they were inlined into"},
	    {.long_name = "no-demangle",
	     .type = XP_OPT_FLAG,
	     .value = &opts->no_demangle,
	     .help = "show C++ and Rust names mangled, as the symbol table has them"},
	    {.long_name = "debug-dir",
	     .type = XP_OPT_STRING_LIST,
	     .value = &opts->debug_dirs,
	     .argh = "<dir>",
	     .help = "also look for separate debuginfo under <dir> (repeatable, or a:b:c)"},
	    {.type = XP_OPT_END},
	};
	int ret = xp_parse_options(argc, argv, options, &report_help, 0);

	if (ret == XP_PARSE_HELP)
		return ret;
	if (ret < 0)
		return 2;
	if (ret < argc)
		return xp_usage_error(&report_help, "unexpected argument '%s'", argv[ret]);
	if (folded && flat)
		return xp_usage_error(&report_help,
				      "options '--folded' and '--flat' cannot be used together");
	if (folded)
		opts->format = REPORT_FOLDED;
	else if (flat)
		opts->format = REPORT_FLAT;
	return 0;
}

struct resolver {
	const struct profile *p;
	struct symbolizer *sym;
};

/*
 * Name a frame: find its mapping as of the sample (pc-1 rule included),
 * then symbolize; an address in inlined code names the inlined functions
 * first, then the function holding them.
 */
static unsigned int resolve_frame(void *ctx, const struct agg_frame_req *req, const char **labels,
				  unsigned int max)
{
	const struct resolver *r = ctx;
	const struct profile_mapping *m = NULL;
	const struct sym_frame *f;
	struct sym_map sm;
	unsigned int n = 0;

	if (!(req->flags & (XP_FRAME_SYSCALL | XP_FRAME_TRUNCATED)))
		m = profile_find_mapping(r->p, req->pid, req->t,
					 sym_lookup_pc(req->pc, req->flags));
	if (m)
		sm = (struct sym_map){m->start, m->end,	     m->offset,
				      m->path,	m->build_id, m->build_id_len};
	for (f = symbolize_pc(r->sym, req->pid, m ? &sm : NULL, req->pc, req->flags); f && n < max;
	     f = f->caller)
		labels[n++] = f->name;
	return n;
}

/* A symbolizer for @p: the options, the data file's arch and the side data it carries. */
static struct symbolizer *new_symbolizer(const struct report_opts *opts, const struct profile *p)
{
	const struct xp_arch *arch = xp_arch_by_machine(p->e_machine);
	struct sym_opts so = {
	    .no_inline = opts->no_inline,
	    .no_demangle = opts->no_demangle,
	    .debug_dirs = opts->debug_dirs.v,
	    .nr_debug_dirs = opts->debug_dirs.nr,
	    .syscall_name = arch ? arch->syscall_name : NULL,
	};
	struct symbolizer *s = symbolizer_new(&so);
	size_t i;

	for (i = 0; i < p->nr_jitsyms; i++)
		symbolizer_add_jit(s, p->jitsyms[i].pid, p->jitsyms[i].start, p->jitsyms[i].size,
				   p->jitsyms[i].name);
	for (i = 0; i < p->nr_jitlines; i++)
		symbolizer_add_jit_line(s, p->jitlines[i].pid, p->jitlines[i].start,
					p->jitlines[i].end, p->jitlines[i].file,
					p->jitlines[i].line);
	for (i = 0; i < p->nr_vdsos; i++)
		symbolizer_add_vdso(s, p->vdsos[i].image, p->vdsos[i].len);
	return s;
}

int report_profile(const struct report_opts *opts, const struct profile *p, FILE *out)
{
	const struct out_ops *ops = opts->format == REPORT_FOLDED ? &out_folded : &out_flat;
	struct resolver r = {p, new_symbolizer(opts, p)};
	struct agg a;
	int ret;

	agg_init(&a);
	agg_build(&a, p, resolve_frame, &r);
	ret = out_write(ops, out, &a);
	if (ret)
		xp_error("cannot write the %s report", ops->name);
	agg_release(&a);
	symbolizer_free(r.sym);
	return ret;
}

static int load(struct profile *p, const char *input)
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
	if (!p->nr_samples) {
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
	bool to_stdout;
	struct profile p;
	FILE *out;
	int ret;

	ret = report_parse_args(argc, argv, &opts);
	if (ret == XP_PARSE_HELP)
		return 0;
	if (ret)
		return ret;
	profile_init(&p);
	if (load(&p, opts.input)) {
		profile_release(&p);
		return 1;
	}
	/* Only now: a failed report must not truncate an earlier output file. */
	to_stdout = !opts.output || !strcmp(opts.output, "-");
	out = to_stdout ? stdout : fopen(opts.output, "w");
	if (!out) {
		xp_error("cannot create '%s': %s", opts.output, strerror(errno));
		profile_release(&p);
		return 1;
	}
	ret = report_profile(&opts, &p, out) ? 1 : 0;
	profile_release(&p);
	if (to_stdout)
		return ret; /* main checks standard output */
	/* errno may hold any earlier failure (a missing ELF file): only fclose's counts. */
	errno = 0;
	if ((ferror(out) | fclose(out)) && !ret) {
		xp_error("cannot write '%s': %s", opts.output, strerror(errno ? errno : EIO));
		ret = 1;
	}
	return ret;
}
