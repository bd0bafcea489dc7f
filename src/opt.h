/* SPDX-License-Identifier: MIT */
/*
 * Option tables and value parsers.  A command describes its options once in
 * an array of struct xp_option; the table yields both the getopt_long array
 * and the --help text (as git's parse-options does).  Parsing is pure: no I/O
 * except the diagnostics for a bad command line, so it is unit-tested with
 * canned argv.  Numbers and durations go through one strict parser each.
 */
#ifndef XPROF_SRC_OPT_H
#define XPROF_SRC_OPT_H

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
	XP_OPT_CHOICE,   /* int *value = index of optarg in .choices */
	XP_OPT_PERCENT,  /* double *value in [0, 100] */
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

struct xp_cmd_help {
	const char *name;	  /* "record" */
	const char *const *usage; /* synopsis lines, NULL-terminated */
	const char *description;  /* one line */
	const char *examples;	  /* text block printed under EXAMPLES */
};

enum xp_parse_flags {
	/* Stop at the first non-option (for "record -- cmd args"). */
	XP_PARSE_STOP_AT_NON_OPTION = 1 << 0,
};

#define XP_PARSE_HELP (-3)

/*
 * Parse @argv (argv[0] is the command name) against @opts.  Returns the index
 * of the first operand (>= 1) on success, XP_PARSE_HELP after printing help
 * to stdout for -h/--help, or -2 after printing a usage error to stderr.
 */
int xp_parse_options(int argc, char **argv, const struct xp_option *opts,
		     const struct xp_cmd_help *help, int flags);

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
