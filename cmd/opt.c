/* SPDX-License-Identifier: MIT */
/*
 * Option-table parsing on top of getopt_long, help generation, and the
 * strict number, duration and percentage parsers.  Prints only diagnostics
 * for a bad command line (to stderr) and help (to stdout).
 */
#include "opt.h"
#include "err.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define MAX_OPTS 64
/*
 * getopt_long's vals for --help and --verbose, which every command takes:
 * above those of the table's long options (256 + index).
 */
#define HELP_VAL    (256 + MAX_OPTS)
#define VERBOSE_VAL (HELP_VAL + 1)

static size_t count_opts(const struct xp_option *opts)
{
	size_t n = 0;

	while (opts[n].type != XP_OPT_END)
		n++;
	return n;
}

int xp_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end)
		return -EINVAL;
	if (errno == ERANGE || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

/*
 * A plain decimal number, digits with an optional fraction ("2", "2.5",
 * ".5", "2."), then whatever follows in *@rest.  strtod alone would also
 * take "0x10", "0x1p3" and "1e3", which no one means as a duration.
 */
static int parse_decimal(const char *s, const char **rest, double *out)
{
	static const char digits[] = "0123456789";
	size_t whole, frac = 0, len;
	char *end;
	double v;

	if (!s)
		return -EINVAL;
	whole = strspn(s, digits);
	len = whole;
	if (s[len] == '.') {
		frac = strspn(s + len + 1, digits);
		len += 1 + frac;
	}
	if (!whole && !frac)
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (end != s + len || errno || !isfinite(v) || v < 0)
		return -EINVAL;
	*rest = end;
	*out = v;
	return 0;
}

int xp_parse_duration_ns(const char *s, uint64_t *out)
{
	static const struct {
		const char *suffix;
		double ns;
	} units[] = {
	    {"", 1e9},	 {"s", 1e9},	{"ms", 1e6},   {"us", 1e3},
	    {"m", 60e9}, {"min", 60e9}, {"h", 3600e9},
	};
	const char *rest;
	double v;
	size_t i;

	if (parse_decimal(s, &rest, &v))
		return -EINVAL;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(rest, units[i].suffix))
			continue;
		v *= units[i].ns;
		if (v < 1e6 || v > 7 * 24 * 3600e9)
			return -ERANGE;
		*out = (uint64_t)v;
		return 0;
	}
	return -EINVAL;
}

int xp_parse_percent(const char *s, double *out)
{
	const char *rest;
	double v;

	if (parse_decimal(s, &rest, &v))
		return -EINVAL;
	if (!strcmp(rest, "%"))
		rest++;
	if (*rest)
		return -EINVAL;
	if (v > 100)
		return -ERANGE;
	*out = v;
	return 0;
}

static void print_synopsis(FILE *f, const struct xp_cmd_help *help, const char *first)
{
	const char *const *u;

	for (u = help->usage; *u; u++)
		fprintf(f, "%s%s\n", u == help->usage ? first : "   or: ", *u);
}

int xp_usage_error(const struct xp_cmd_help *help, const char *fmt, ...)
{
	va_list ap;

	fputs("xprof: error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	print_synopsis(stderr, help, "usage: ");
	fprintf(stderr, "see 'xprof help %s'\n", help->name);
	return XP_EXIT_USAGE;
}

static const char *opt_display(const struct xp_option *o, char *buf, size_t len)
{
	if (o->short_name && o->long_name)
		snprintf(buf, len, "-%c, --%s", o->short_name, o->long_name);
	else if (o->long_name)
		snprintf(buf, len, "--%s", o->long_name);
	else
		snprintf(buf, len, "-%c", o->short_name);
	return buf;
}

static bool takes_arg(const struct xp_option *o)
{
	return o->type == XP_OPT_STRING || o->type == XP_OPT_UINT || o->type == XP_OPT_DURATION ||
	       o->type == XP_OPT_CHOICE || o->type == XP_OPT_PERCENT ||
	       o->type == XP_OPT_STRING_LIST;
}

void xp_print_help(FILE *f, const struct xp_option *opts, const struct xp_cmd_help *help, bool full)
{
	const struct xp_option *o;
	char name[128], line[256];

	print_synopsis(f, help, "usage: ");
	if (help->description)
		fprintf(f, "\n%s\n", help->description);
	fputc('\n', f);
	for (o = opts; o->type != XP_OPT_END; o++) {
		opt_display(o, name, sizeof(name));
		if (takes_arg(o))
			snprintf(line, sizeof(line), "%s%s %s", o->short_name ? "" : "    ", name,
				 o->argh ? o->argh : "<value>");
		else
			snprintf(line, sizeof(line), "%s%s", o->short_name ? "" : "    ", name);
		if (strlen(line) > 24)
			fprintf(f, "    %s\n    %-24s  %s\n", line, "", o->help);
		else
			fprintf(f, "    %-24s  %s\n", line, o->help);
	}
	fprintf(f, "    %-24s  %s\n", "-v, --verbose",
		"more diagnostics (repeatable, as 'xprof -v')");
	fprintf(f, "    %-24s  %s\n", "-h, --help", "show this help");
	if (full && help->examples)
		fprintf(f, "\nEXAMPLES\n%s", help->examples);
}

static int bad_value(const struct xp_cmd_help *help, const struct xp_option *o, const char *arg,
		     const char *expected)
{
	char name[128];

	return xp_usage_error(help, "invalid value '%s' for %s (expected %s)", arg,
			      opt_display(o, name, sizeof(name)), expected);
}

static int apply(const struct xp_option *o, const char *arg, const struct xp_cmd_help *help)
{
	char expect[96];
	size_t i;

	switch (o->type) {
	case XP_OPT_FLAG:
		*(bool *)o->value = true;
		return 0;
	case XP_OPT_SET_INT:
		*(int *)o->value = o->intval;
		return 0;
	case XP_OPT_COUNT:
		(*(int *)o->value)++;
		return 0;
	case XP_OPT_STRING:
		if (!*arg)
			return bad_value(help, o, arg, "a non-empty string");
		*(const char **)o->value = arg;
		return 0;
	case XP_OPT_STRING_LIST: {
		struct xp_strlist *l = o->value;

		if (!*arg)
			return bad_value(help, o, arg, "a non-empty string");
		if (l->nr >= XP_STRLIST_MAX)
			return xp_usage_error(help, "option '--%s' given more than %d times",
					      o->long_name ? o->long_name : "?", XP_STRLIST_MAX);
		l->v[l->nr++] = arg;
		return 0;
	}
	case XP_OPT_UINT:
		if (xp_parse_u64(arg, o->min, o->max, (uint64_t *)o->value)) {
			snprintf(expect, sizeof(expect), "%llu..%llu", (unsigned long long)o->min,
				 (unsigned long long)o->max);
			return bad_value(help, o, arg, expect);
		}
		return 0;
	case XP_OPT_DURATION:
		if (xp_parse_duration_ns(arg, (uint64_t *)o->value))
			return bad_value(help, o, arg,
					 "a duration from 1ms to 7 days, like 500ms, 30s, 2m, 1h");
		return 0;
	case XP_OPT_PERCENT:
		if (xp_parse_percent(arg, (double *)o->value))
			return bad_value(help, o, arg, "a percentage from 0 to 100");
		return 0;
	case XP_OPT_CHOICE:
		for (i = 0; o->choices[i]; i++) {
			if (!strcmp(arg, o->choices[i])) {
				*(int *)o->value = (int)i;
				return 0;
			}
		}
		expect[0] = 0;
		for (i = 0; o->choices[i]; i++) {
			if (i)
				strncat(expect, "|", sizeof(expect) - strlen(expect) - 1);
			strncat(expect, o->choices[i], sizeof(expect) - strlen(expect) - 1);
		}
		return bad_value(help, o, arg, expect);
	case XP_OPT_END:
		break;
	}
	return 0;
}

int xp_parse_options(int argc, char **argv, const struct xp_option *opts,
		     const struct xp_cmd_help *help, int flags)
{
	struct option lopts[MAX_OPTS + 3];
	char sopts[MAX_OPTS * 2 + 8];
	size_t n = count_opts(opts), i, ns = 0, nl = 0;
	int c, idx;

	if (n > MAX_OPTS)
		n = MAX_OPTS;
	if (flags & XP_PARSE_STOP_AT_NON_OPTION)
		sopts[ns++] = '+';
	sopts[ns++] = ':';
	for (i = 0; i < n; i++) {
		if (opts[i].short_name) {
			sopts[ns++] = (char)opts[i].short_name;
			if (takes_arg(&opts[i]))
				sopts[ns++] = ':';
		}
		if (opts[i].long_name) {
			lopts[nl].name = opts[i].long_name;
			lopts[nl].has_arg = takes_arg(&opts[i]) ? required_argument : no_argument;
			lopts[nl].flag = NULL;
			lopts[nl].val = 256 + (int)i;
			nl++;
		}
	}
	sopts[ns++] = 'h';
	sopts[ns++] = 'v';
	sopts[ns] = 0;
	lopts[nl++] = (struct option){"help", no_argument, NULL, HELP_VAL};
	lopts[nl++] = (struct option){"verbose", no_argument, NULL, VERBOSE_VAL};
	lopts[nl] = (struct option){NULL, 0, NULL, 0};

	optind = 0; /* GNU: full re-initialisation, so tests may parse repeatedly */
	opterr = 0;
	while ((c = getopt_long(argc, argv, sopts, lopts, &idx)) != -1) {
		const struct xp_option *o = NULL;

		if (c == 'h' || c == HELP_VAL) {
			xp_print_help(stdout, opts, help, true);
			return XP_PARSE_HELP;
		}
		/* The global option, also after the command: 'xprof report -v'. */
		if (c == 'v' || c == VERBOSE_VAL) {
			xp_verbosity++;
			continue;
		}
		if (c == '?') {
			/*
			 * "--no-follow=1": getopt_long sets optopt to the long
			 * option's val, >= 256 for every one of ours, which is no
			 * character to print.
			 */
			if (optopt >= 256)
				return -xp_usage_error(help, "option '--%s' takes no value",
						       optopt == HELP_VAL ? "help"
						       : optopt == VERBOSE_VAL
							   ? "verbose"
							   : opts[optopt - 256].long_name);
			if (optopt)
				return -xp_usage_error(help, "unknown option '-%c'", optopt);
			return -xp_usage_error(help, "unknown option '%s'", argv[optind - 1]);
		}
		if (c == ':') {
			if (optopt && optopt < 256)
				return -xp_usage_error(help, "option '-%c' requires a value",
						       optopt);
			return -xp_usage_error(help, "option '%s' requires a value",
					       argv[optind - 1]);
		}
		if (c >= 256)
			o = &opts[c - 256];
		else
			for (i = 0; i < n && !o; i++)
				if (opts[i].short_name == c)
					o = &opts[i];
		if (!o)
			return -xp_usage_error(help, "unknown option");
		if (apply(o, optarg, help))
			return -2;
	}
	return optind;
}

int xp_parse_options_only(int argc, char **argv, const struct xp_option *opts,
			  const struct xp_cmd_help *help)
{
	int first = xp_parse_options(argc, argv, opts, help, 0);

	if (first == XP_PARSE_HELP)
		return XP_PARSE_HELP;
	if (first < 0)
		return XP_EXIT_USAGE;
	if (first < argc)
		return xp_usage_error(help, "unexpected argument '%s'", argv[first]);
	return XP_EXIT_OK;
}
