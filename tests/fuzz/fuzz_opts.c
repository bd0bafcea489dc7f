/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for everything that parses the command line: the
 * strict value parsers (xp_parse_u64, xp_parse_duration_ns,
 * xp_parse_percent) and whole command lines through record_parse_args,
 * attach_parse_args and report_parse_args.
 *
 * Input: NUL-separated strings (at most 32).  The first string goes to the
 * three value parsers (xp_parse_u64 with bounds taken from the input's
 * length, so both ends of the range are reached); all of them, as
 * arguments after "record", "attach" and "report", go to the three command
 * parsers.  Besides not crashing, every accepted value must obey the
 * parser's contract (range, no trailing garbage), and every parse must
 * return 0, 2 or XP_PARSE_HELP with its struct within its documented
 * ranges: a violation abort()s, which the fuzzer reports as a crash.
 *
 * Seeds: tests/data/fuzz/opts/ (one command line per file).  Run with
 * scripts/fuzz.sh; regression inputs live in tests/data/regress/opts/ and
 * are replayed by ctest (replay_opts).
 */
#include "opt.h"
#include "out.h"
#include "cmd/cmd.h"
#include "cmd/common.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_ARGS 32
#define NS_MIN	 1000000ull
#define NS_MAX	 (7ull * 24 * 3600 * 1000000000ull)

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	FILE *devnull = fopen("/dev/null", "w");

	(void)argc;
	(void)argv;
	/*
	 * Usage errors go to stderr and help to stdout: silence both (the
	 * sanitizers write to file descriptor 2, so their reports still show).
	 */
	if (devnull) {
		stderr = devnull;
		stdout = devnull;
	}
	return 0;
}

/* Whether @s is decimal digits only, as xp_parse_u64 must require. */
static int all_digits(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

/*
 * Whether @s is a plain decimal ("2", "2.5", ".5", "2.") followed by one of
 * @suffixes (NULL-terminated; "" for none): the only forms the duration and
 * percentage parsers may accept (no sign, exponent, hex, inf or nan).
 */
static int plain_number_then(const char *s, const char *const *suffixes)
{
	size_t whole = strspn(s, "0123456789"), frac = 0, len = whole;

	if (s[len] == '.') {
		frac = strspn(s + len + 1, "0123456789");
		len += 1 + frac;
	}
	if (!whole && !frac)
		return 0;
	for (; *suffixes; suffixes++)
		if (!strcmp(s + len, *suffixes))
			return 1;
	return 0;
}

static void check_values(const char *s, size_t size)
{
	uint64_t v = 0xdeadbeef, min = size % 7, max = size % 3 ? UINT64_MAX : 10000 + size;
	double d;
	int r;

	r = xp_parse_u64(s, min, max, &v);
	if (r != 0 && r != -EINVAL && r != -ERANGE)
		abort();
	if (r == 0 && (v < min || v > max || !all_digits(s) || strtoull(s, NULL, 10) != v))
		abort();
	if (r != 0 && v != 0xdeadbeef)
		abort(); /* a failed parse must not touch the output */

	r = xp_parse_duration_ns(s, &v);
	if (r != 0 && r != -EINVAL && r != -ERANGE)
		abort();
	if (r == 0 && (v < NS_MIN || v > NS_MAX ||
		       !plain_number_then(
			   s, (const char *const[]){"", "s", "ms", "us", "m", "min", "h", NULL})))
		abort();

	r = xp_parse_percent(s, &d);
	if (r != 0 && r != -EINVAL && r != -ERANGE)
		abort();
	if (r == 0 &&
	    (!(d >= 0 && d <= 100) || !plain_number_then(s, (const char *const[]){"", "%", NULL})))
		abort();
}

static int parse_result_ok(int r)
{
	return r == 0 || r == 2 || r == XP_PARSE_HELP;
}

/* How many words a NULL-terminated choice table holds: its values are 0..n-1. */
static int nchoices(const char *const *choices)
{
	int n = 0;

	while (choices[n])
		n++;
	return n;
}

static void check_record(int argc, char **argv)
{
	struct record_opts o = {
	    .freq_hz = XP_DEFAULT_FREQ, .output = "xprof.data", .max_depth = XP_DEFAULT_MAX_DEPTH};
	int r = record_parse_args(argc, argv, &o), i;

	if (!parse_result_ok(r))
		abort();
	if (r)
		return;
	if (o.freq_hz < 1 || o.freq_hz > XP_MAX_FREQ || o.max_depth < 1 || o.max_depth > 65536 ||
	    o.call_graph < 0 || o.call_graph >= nchoices(common_call_graph_choices) || o.mode < 0 ||
	    o.mode >= nchoices(common_mode_choices) || !o.output || !*o.output ||
	    (o.duration_ns && (o.duration_ns < NS_MIN || o.duration_ns > NS_MAX)) ||
	    (o.delay_ns && (o.delay_ns < NS_MIN || o.delay_ns > NS_MAX)) ||
	    (o.delay_ns && !o.delay_arg) || (o.start_disabled && (o.delay_ns || !o.control_arg)) ||
	    (o.control_arg && strncmp(o.control_arg, "fifo:", 5)))
		abort();
	/* --switch-output: exactly one limit, in range; never with standard output. */
	if (o.switch_arg &&
	    ((!o.switch_signal && !(o.switch_ns ? !o.switch_bytes : o.switch_bytes >= 1024)) ||
	     (o.switch_ns && o.switch_ns < 100000000ull) || !strcmp(o.output, "-")))
		abort();
	if (o.switch_signal && (o.switch_ns || o.switch_bytes || strcmp(o.switch_arg, "signal")))
		abort();
	if (!o.switch_arg && (o.switch_ns || o.switch_bytes || o.switch_format || o.switch_signal))
		abort();
	/* The command: at least one word, inside argv, NULL-terminated. */
	if (o.argc < 1 || o.argc >= argc || o.argv != argv + (argc - o.argc) || o.argv[o.argc])
		abort();
	for (i = 0; i < o.argc; i++)
		if (!o.argv[i])
			abort();
}

static void check_attach(int argc, char **argv)
{
	struct attach_opts o = {.rec = {.freq_hz = XP_DEFAULT_FREQ,
					.output = "xprof.data",
					.max_depth = XP_DEFAULT_MAX_DEPTH}};
	int r = attach_parse_args(argc, argv, &o);
	unsigned int i;

	if (!parse_result_ok(r))
		abort();
	if (r)
		return;
	if (o.npids < 1 || o.npids > XP_MAX_PIDS || o.rec.freq_hz < 1 ||
	    o.rec.freq_hz > XP_MAX_FREQ || o.rec.call_graph < 0 ||
	    o.rec.call_graph >= nchoices(common_call_graph_choices) || o.rec.mode < 0 ||
	    o.rec.mode >= nchoices(common_mode_choices) ||
	    (o.rec.delay_ns && (o.rec.delay_ns < NS_MIN || o.rec.delay_ns > NS_MAX)) ||
	    (o.rec.start_disabled && (o.rec.delay_ns || !o.rec.control_arg)))
		abort();
	/* A list of numbers: no empty element, so nothing to guess about. */
	if (!o.pids || o.pids[0] == ',' || strstr(o.pids, ",,") ||
	    o.pids[strlen(o.pids) - 1] == ',' || strspn(o.pids, "0123456789,") != strlen(o.pids))
		abort();
	for (i = 0; i < o.npids; i++)
		if (o.pid[i] < 1 || o.pid[i] > 0x3fffffff)
			abort();
}

static void check_report(int argc, char **argv)
{
	struct report_opts o = REPORT_OPTS_INIT;
	int r = report_parse_args(argc, argv, &o);

	if (!parse_result_ok(r))
		abort();
	if (r)
		return;
	if (o.format < REPORT_FLAT || o.format > REPORT_SPEEDSCOPE || !o.input || !*o.input ||
	    (o.output && !*o.output) || o.sort < OUT_SORT_DEFAULT || o.sort > OUT_SORT_TOTAL ||
	    o.min_percent < 0 || o.min_percent > 100)
		abort();
	/* --time: both ends known values, percentages within 0..100, FROM <= TO when alike. */
	if (o.time_arg &&
	    ((!o.time_from.set && !o.time_to.set) || !(o.time_from.v >= 0) || !(o.time_to.v >= 0) ||
	     (o.time_from.pct && o.time_from.v > 100) || (o.time_to.pct && o.time_to.v > 100) ||
	     (o.time_from.set && o.time_to.set && o.time_from.pct == o.time_to.pct &&
	      o.time_from.v > o.time_to.v)))
		abort();
	if (o.inputs.nr && strcmp(o.input, o.inputs.v[0]))
		abort();
	if (o.phase && !*o.phase)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const cmds[] = {"record", "attach", "report"};
	char *text = malloc(size + 1), *argv[MAX_ARGS + 2], *args[MAX_ARGS];
	size_t i, n = 0, start = 0;
	unsigned int c;
	int argc;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	check_values(text, size);
	for (i = 0; i <= size && n < MAX_ARGS; i++) {
		if (text[i])
			continue;
		args[n++] = text + start;
		start = i + 1;
	}
	for (c = 0; c < 3; c++) {
		/* getopt permutes argv: give each parser a fresh copy. */
		argv[0] = (char *)cmds[c];
		memcpy(argv + 1, args, n * sizeof(*args));
		argv[n + 1] = NULL;
		argc = (int)n + 1;
		if (c == 0)
			check_record(argc, argv);
		else if (c == 1)
			check_attach(argc, argv);
		else
			check_report(argc, argv);
	}
	free(text);
	return 0;
}
