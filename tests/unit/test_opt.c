/* SPDX-License-Identifier: MIT */
/*
 * The strict value parsers of cmd/opt.c (numbers, durations, percentages)
 * and the messages of option parsing for hostile command lines: each
 * accepted form, each refused one, and one readable error line (no
 * control characters) for "--flag=value" and unknown options.
 */
#include "opt.h"
#include "../cmd/cmd.h"
#include "err.h"

#include "stderr_capture.h"
#include "t.h"

#include <errno.h>

static int test_u64(void)
{
	uint64_t v = 0;

	T_EQ_U64(xp_parse_u64("0", 0, 10, &v), 0);
	T_EQ_U64(v, 0);
	T_EQ_U64(xp_parse_u64("0010", 0, 10, &v), 0);
	T_EQ_U64(v, 10);
	T_EQ_U64(xp_parse_u64("18446744073709551615", 0, UINT64_MAX, &v), 0);
	T_EQ_U64(v, UINT64_MAX);
	T_EQ_U64(xp_parse_u64("18446744073709551616", 0, UINT64_MAX, &v), -ERANGE);
	T_EQ_U64(xp_parse_u64("11", 0, 10, &v), -ERANGE);
	T_EQ_U64(xp_parse_u64("0", 1, 10, &v), -ERANGE);
	v = 7;
	T_EQ_U64(xp_parse_u64("", 0, 10, &v), -EINVAL);
	T_EQ_U64(xp_parse_u64("-1", 0, 10, &v), -EINVAL);
	T_EQ_U64(xp_parse_u64("+1", 0, 10, &v), -EINVAL);
	T_EQ_U64(xp_parse_u64(" 1", 0, 10, &v), -EINVAL);
	T_EQ_U64(xp_parse_u64("1 ", 0, 10, &v), -EINVAL);
	T_EQ_U64(xp_parse_u64("1O0", 0, 1000, &v), -EINVAL);
	T_EQ_U64(xp_parse_u64("0x10", 0, 1000, &v), -EINVAL);
	T_EQ_U64(xp_parse_u64(NULL, 0, 1000, &v), -EINVAL);
	T_EQ_U64(v, 7); /* untouched by failures */
	return T_OK;
}

static int test_duration(void)
{
	static const struct {
		const char *s;
		uint64_t ns;
	} good[] = {
	    {"2", 2000000000ull},      {"2.5", 2500000000ull},	 {".5", 500000000ull},
	    {"2.", 2000000000ull},     {"500ms", 500000000ull},	 {"1ms", 1000000ull},
	    {"1000us", 1000000ull},    {"30s", 30000000000ull},	 {"2m", 120000000000ull},
	    {"2min", 120000000000ull}, {"1h", 3600000000000ull}, {"168h", 604800000000000ull},
	};
	/* Hex floats, exponents, signs, spaces, inf/nan: strtod would take them all. */
	static const char *const bad[] = {
	    "",	    ".",    "s",     "ms",  "-1s", "+1s", " 1s", "1s ",	 "1 s",	  "1e3", "1e3ms",
	    "0x10", "0x.8", "0x1p3", "inf", "nan", "1d",  "1S",	 "1sec", "1.2.3", "1..", "..5",
	};
	uint64_t v;
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		v = 0;
		if (xp_parse_duration_ns(good[i].s, &v) || v != good[i].ns) {
			fprintf(stderr, "duration '%s': got %" PRIu64 "\n", good[i].s, v);
			return T_FAIL;
		}
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (xp_parse_duration_ns(bad[i], &v) != -EINVAL) {
			fprintf(stderr, "duration '%s' was not refused as invalid\n", bad[i]);
			return T_FAIL;
		}
	}
	/* Out of range: below 1 ms, above 7 days. */
	T_EQ_U64(xp_parse_duration_ns("0", &v), -ERANGE);
	T_EQ_U64(xp_parse_duration_ns("999us", &v), -ERANGE);
	T_EQ_U64(xp_parse_duration_ns("169h", &v), -ERANGE);
	T_EQ_U64(xp_parse_duration_ns("99999999999999999999999999", &v), -ERANGE);
	return T_OK;
}

static int test_percent(void)
{
	double d = -1;

	T_EQ_U64(xp_parse_percent("0", &d), 0);
	T_ASSERT(d == 0);
	T_EQ_U64(xp_parse_percent("99.5%", &d), 0);
	T_ASSERT(d == 99.5);
	T_EQ_U64(xp_parse_percent("100", &d), 0);
	T_ASSERT(d == 100);
	T_EQ_U64(xp_parse_percent("100.1", &d), -ERANGE);
	T_EQ_U64(xp_parse_percent("1e1", &d), -EINVAL);
	T_EQ_U64(xp_parse_percent("0x10", &d), -EINVAL);
	T_EQ_U64(xp_parse_percent("5%%", &d), -EINVAL);
	T_EQ_U64(xp_parse_percent("-5", &d), -EINVAL);
	T_EQ_U64(xp_parse_percent("%", &d), -EINVAL);
	return T_OK;
}

/* Parse @args after "record" and return what was printed on stderr. */
static int record(const char *const *args, const char **err)
{
	char *argv[16];
	struct record_opts o = {.freq_hz = XP_DEFAULT_FREQ, .output = "xprof.data"};
	int argc = 0, ret;

	argv[argc++] = (char *)"record";
	while (*args && argc < 15)
		argv[argc++] = (char *)*args++;
	argv[argc] = NULL;
	cap_begin();
	ret = record_parse_args(argc, argv, &o);
	*err = cap_end();
	return ret;
}

/* Whether @s holds a control character other than newline. */
static int has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 && *s != '\n')
			return 1;
	return 0;
}

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

static int test_messages(void)
{
	const char *err;

	/* getopt_long reports "--flag=value" with optopt = the long option's val (>= 256). */
	T_EQ_U64(record(ARGS("--no-follow=1", "--", "true"), &err), 2);
	T_ASSERT(!has_control(err));
	T_ASSERT(strstr(err, "xprof: error: option '--no-follow' takes no value\n") == err);
	T_EQ_U64(record(ARGS("--quiet=", "--", "true"), &err), 2);
	T_ASSERT(strstr(err, "option '--quiet' takes no value"));
	T_EQ_U64(record(ARGS("--help=x"), &err), 2);
	T_ASSERT(strstr(err, "option '--help' takes no value"));
	/* A short option after a long one is still named as itself. */
	T_EQ_U64(record(ARGS("--no-follow", "-zq", "--", "true"), &err), 2);
	T_ASSERT(strstr(err, "xprof: error: unknown option '-z'\n") == err);
	T_EQ_U64(record(ARGS("--frobnicate", "--", "true"), &err), 2);
	T_ASSERT(strstr(err, "xprof: error: unknown option '--frobnicate'\n") == err);
	T_EQ_U64(record(ARGS("-d", "0x10", "--", "true"), &err), 2);
	T_ASSERT(strstr(err, "invalid value '0x10' for -d, --duration"));
	T_EQ_U64(record(ARGS("-F", "99999999999999999999999", "--", "true"), &err), 2);
	T_ASSERT(strstr(err, "invalid value '99999999999999999999999' for -F, --freq"));
	T_EQ_U64(cap_lines(err), 3); /* error, usage, see 'xprof help record' */
	T_EQ_U64(record(ARGS("-D", "-1s", "--", "true"), &err), 2);
	T_ASSERT(strstr(err, "xprof: error: invalid value '-1s' for -D, --delay") == err);
	return T_OK;
}

static int test_delay(void)
{
	char *argv[] = {(char *)"record", (char *)"-D", NULL, (char *)"true", NULL};
	static const struct {
		const char *arg;
		uint64_t ns;
	} good[] = {{"0", 0}, {"500ms", 500000000}, {"2", 2000000000}, {"1.5s", 1500000000}};
	struct record_opts o;
	size_t i;
	int ret;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		o = (struct record_opts){.freq_hz = XP_DEFAULT_FREQ, .output = "xprof.data"};
		argv[2] = (char *)good[i].arg;
		cap_begin();
		ret = record_parse_args(4, argv, &o);
		cap_end();
		T_EQ_U64(ret, 0);
		T_EQ_U64(o.delay_ns, good[i].ns);
	}
	return T_OK;
}

static int attach(const char *pids, struct attach_opts *o)
{
	char *argv[] = {(char *)"attach", (char *)"-p", (char *)pids, NULL};
	int ret;

	*o = (struct attach_opts){.rec = {.freq_hz = XP_DEFAULT_FREQ, .output = "xprof.data"}};
	cap_begin();
	ret = attach_parse_args(3, argv, o);
	cap_end();
	return ret;
}

static int test_pid_lists(void)
{
	static const char *const bad[] = {
	    "0",    "-1",  "+1",  "1,",		",1",
	    "1,,2", "abc", "1 2", "1073741824", "99999999999999999999",
	    "0x10"};
	struct attach_opts o;
	size_t i;

	T_EQ_U64(attach("1", &o), 0);
	T_EQ_U64(o.npids, 1);
	T_EQ_U64(attach("7,8,1073741823", &o), 0);
	T_EQ_U64(o.npids, 3);
	T_EQ_U64(o.pid[2], 1073741823);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (attach(bad[i], &o) != 2) {
			fprintf(stderr, "-p '%s' was not refused\n", bad[i]);
			return T_FAIL;
		}
	}
	return T_OK;
}

/*
 * A session of its own where it helps by default (-1); --no-own-session
 * and --own-session, the last one wins; --own-session with --spin-idle is
 * refused.
 */
static int test_own_session(void)
{
	const char *const none[] = {"--", "true", NULL},
			  *off[] = {"--no-own-session", "--", "true", NULL},
			  *on_off[] = {"--own-session", "--no-own-session", "--", "true", NULL},
			  *off_on[] = {"--no-own-session", "--own-session", "--", "true", NULL};
	const char *const *cases[] = {none, off, on_off, off_on};
	const int want[] = {-1, 0, 0, 1};
	unsigned int i, j;

	for (i = 0; i < 4; i++) {
		struct record_opts o = RECORD_OPTS_INIT;
		char *argv[8];
		int argc = 0;

		argv[argc++] = (char *)"record";
		for (j = 0; cases[i][j]; j++)
			argv[argc++] = (char *)cases[i][j];
		argv[argc] = NULL;
		T_EQ_U64(record_parse_args(argc, argv, &o), 0);
		T_EQ_U64(o.own_session, want[i]);
	}
	{
		struct record_opts o = RECORD_OPTS_INIT;
		char a0[] = "record", a1[] = "--spin-idle", a2[] = "--own-session", a3[] = "--",
		     a4[] = "true", b2[] = "--no-own-session";
		char *spin[] = {a0, a1, a2, a3, a4, NULL}, *spin_off[] = {a0, a1, b2, a3, a4, NULL};

		T_ASSERT(record_parse_args(5, spin, &o) != 0);
		o = (struct record_opts)RECORD_OPTS_INIT;
		T_EQ_U64(record_parse_args(5, spin_off, &o), 0);
	}
	return T_OK;
}

/*
 * -v, --verbose after any command counts as before it ('xprof report -v'
 * is 'xprof -v report'); a record's command keeps its own -v.
 */
static int test_verbose(void)
{
	char a0[] = "record", v[] = "-v", vv[] = "-vv", lv[] = "--verbose", dd[] = "--",
	     cmd[] = "true", r0[] = "report", bad[] = "--verbose=2";
	char *rec[] = {a0, v, lv, dd, cmd, v, NULL}, *rep[] = {r0, vv, NULL},
	     *rep_bad[] = {r0, bad, NULL};
	int saved = xp_verbosity;
	struct record_opts o = RECORD_OPTS_INIT;
	struct report_opts ro = REPORT_OPTS_INIT;
	const char *err;

	xp_verbosity = 0;
	T_EQ_U64(record_parse_args(6, rec, &o), 0);
	T_EQ_U64(xp_verbosity, 2);
	T_EQ_U64(o.argc, 2);
	T_EQ_STR(o.argv[1], "-v");
	xp_verbosity = 0;
	T_EQ_U64(report_parse_args(2, rep, &ro), 0);
	T_EQ_U64(xp_verbosity, 2);
	cap_begin();
	T_EQ_U64(report_parse_args(2, rep_bad, &ro), 2);
	err = cap_end();
	T_ASSERT(strstr(err, "xprof: error: option '--verbose' takes no value\n") == err);
	xp_verbosity = saved;
	return T_OK;
}

T_MAIN(T_CASE(test_u64), T_CASE(test_duration), T_CASE(test_percent), T_CASE(test_messages),
       T_CASE(test_pid_lists), T_CASE(test_delay), T_CASE(test_own_session), T_CASE(test_verbose))
