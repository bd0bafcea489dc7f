/* SPDX-License-Identifier: MIT */
/*
 * Option tables and value parsers.  A command describes its options once in
 * an array of struct xp_option; the table yields both the getopt_long array
 * and the --help text (as git's parse-options does).  Parsing is pure: no I/O
 * except the diagnostics for a bad command line, so it is unit-tested with
 * canned argv.  Numbers and durations go through one strict parser each.
 */
#ifndef XPROF_CMD_OPT_H
#define XPROF_CMD_OPT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum xp_opt_type {
	XP_OPT_END = 0,
	XP_OPT_FLAG,	 /* bool *value = true */
	XP_OPT_SET_INT,	 /* int *value = .intval */
	XP_OPT_COUNT,	 /* int *value += 1 */
	XP_OPT_STRING,	 /* const char **value = optarg */
	XP_OPT_UINT,	 /* uint64_t *value, checked against [min, max] */
	XP_OPT_DURATION, /* uint64_t *value in ns: "500ms", "30s", "2m", "1h", "2.5" (seconds) */
	XP_OPT_CHOICE,	 /* int *value = index of optarg in .choices */
	XP_OPT_PERCENT,	 /* double *value in [0, 100] */
	/* struct xp_strlist *value: each occurrence appended, in order */
	XP_OPT_STRING_LIST,
};

/* The values of a repeatable string option (pointers into argv). */
#define XP_STRLIST_MAX 16
struct xp_strlist {
	const char *v[XP_STRLIST_MAX];
	unsigned int nr;
};

struct xp_option {
	int short_name; /* 0: long only */
	const char *long_name;
	enum xp_opt_type type;
	void *value;
	const char *argh; /* argument name in help, e.g. "<hz>" */
	const char *help;
	uint64_t min, max;	    /* XP_OPT_UINT */
	int intval;		    /* XP_OPT_SET_INT */
	const char *const *choices; /* XP_OPT_CHOICE, NULL-terminated */
};

/*
 * One line per option in a table (git's OPT_STRING and friends): each
 * macro is the initializer of one struct xp_option of its type.  @s is the
 * short name (0: long only), @l the long name, @v the variable the type
 * above says, @a the argument's name in the help ("<file>"), @h the help line.
 */
#define XP_OPTION_FLAG(s, l, v, h)                                                                 \
	{                                                                                          \
		.short_name = (s), .long_name = (l), .type = XP_OPT_FLAG, .value = (v),            \
		.help = (h)                                                                        \
	}
#define XP_OPTION_SET_INT(s, l, v, i, h)                                                           \
	{                                                                                          \
		.short_name = (s), .long_name = (l), .type = XP_OPT_SET_INT, .value = (v),         \
		.help = (h), .intval = (i)                                                         \
	}
#define XP_OPTION_COUNT(s, l, v, h)                                                                \
	{                                                                                          \
		.short_name = (s), .long_name = (l), .type = XP_OPT_COUNT, .value = (v),           \
		.help = (h)                                                                        \
	}
#define XP_OPTION_STRING(s, l, v, a, h)	     XP_OPTION_ARG_(XP_OPT_STRING, s, l, v, a, h)
#define XP_OPTION_DURATION(s, l, v, a, h)    XP_OPTION_ARG_(XP_OPT_DURATION, s, l, v, a, h)
#define XP_OPTION_PERCENT(s, l, v, a, h)     XP_OPTION_ARG_(XP_OPT_PERCENT, s, l, v, a, h)
#define XP_OPTION_STRING_LIST(s, l, v, a, h) XP_OPTION_ARG_(XP_OPT_STRING_LIST, s, l, v, a, h)
/* A number in [@lo, @hi]. */
#define XP_OPTION_UINT(s, l, v, a, lo, hi, h)                                                      \
	{                                                                                          \
		.short_name = (s), .long_name = (l), .type = XP_OPT_UINT, .value = (v),            \
		.argh = (a), .help = (h), .min = (lo), .max = (hi)                                 \
	}
/* One of the NULL-terminated choices @c. */
#define XP_OPTION_CHOICE(s, l, v, a, c, h)                                                         \
	{                                                                                          \
		.short_name = (s), .long_name = (l), .type = XP_OPT_CHOICE, .value = (v),          \
		.argh = (a), .help = (h), .choices = (c)                                           \
	}
#define XP_OPTION_END()                                                                            \
	{                                                                                          \
		.type = XP_OPT_END                                                                 \
	}
/* The shape of the types that take an argument and nothing else. */
#define XP_OPTION_ARG_(t, s, l, v, a, h)                                                           \
	{                                                                                          \
		.short_name = (s), .long_name = (l), .type = (t), .value = (v), .argh = (a),       \
		.help = (h)                                                                        \
	}

struct xp_cmd_help {
	const char *name;	  /* "record" */
	const char *const *usage; /* synopsis lines, NULL-terminated */
	const char *description;  /* one line */
	const char *examples;	  /* text block printed under EXAMPLES */
};

/*
 * The initializer of a command's struct xp_cmd_help, in the order help
 * prints it: XP_CMD_HELP("top", XP_USAGE("xprof top ...", "xprof top ..."),
 * "Show ...", "    xprof top -p 4242 ...\n").  XP_USAGE adds the NULL.
 */
#define XP_USAGE(...) ((const char *const[]){__VA_ARGS__, NULL})
#define XP_CMD_HELP(nm, use, desc, ex)                                                             \
	{                                                                                          \
		.name = (nm), .usage = (use), .description = (desc), .examples = (ex)              \
	}

enum xp_parse_flags {
	/* Stop at the first non-option (for "record -- cmd args"). */
	XP_PARSE_STOP_AT_NON_OPTION = 1 << 0,
};

#define XP_PARSE_HELP (-3)

/*
 * The exit status of a command whose parse function returned @ret (not 0):
 * 0 after help was printed, else @ret (2 after a usage error).
 */
static inline int xp_parse_status(int ret)
{
	return ret == XP_PARSE_HELP ? 0 : ret;
}

/*
 * Parse @argv (argv[0] is the command name) against @opts.  Returns the index
 * of the first operand (>= 1) on success, XP_PARSE_HELP after printing help
 * to stdout for -h/--help, or -2 after printing a usage error to stderr.
 */
int xp_parse_options(int argc, char **argv, const struct xp_option *opts,
		     const struct xp_cmd_help *help, int flags);

/*
 * xp_parse_options for a command that takes no operand.  XP_EXIT_OK,
 * XP_PARSE_HELP after printing help, or XP_EXIT_USAGE after printing a
 * usage error (an operand is one).
 */
int xp_parse_options_only(int argc, char **argv, const struct xp_option *opts,
			  const struct xp_cmd_help *help);

/* Print the synopsis and the option list (and examples if @full). */
void xp_print_help(FILE *f, const struct xp_option *opts, const struct xp_cmd_help *help,
		   bool full);

/* Print "usage: ..." lines and "see 'xprof help <cmd>'" to stderr; returns 2. */
int xp_usage_error(const struct xp_cmd_help *help, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Strict parsers: no trailing garbage, no sign, range checked.  0 or -EINVAL/-ERANGE. */
int xp_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
int xp_parse_duration_ns(const char *s, uint64_t *out);
int xp_parse_percent(const char *s, double *out);

#endif
