/* SPDX-License-Identifier: MIT */
/*
 * 'xprof report': option parsing on whole command lines, exit codes and
 * messages for missing, foreign and empty files, -o, and golden output for
 * profiles recorded on aarch64 and riscv64 (tests/data/canned-*.xprof),
 * whose files do not exist here, so frames come out as module+offset.
 */
#include "profile.h"
#include "opt.h"
#include "out.h"
#include "dataformat.h"
#include "../cmd/cmd.h"

#include "stderr_capture.h"
#include "t.h"

#include <unistd.h>

/* A command line: "report" followed by the arguments given. */
#define ARGS(...) ((const char *const[]){"report", __VA_ARGS__, NULL})

/* getopt wants char **: copy @args into a writable argv (freed by argv_free). */
static int argv_new(const char *const *args, char ***argv)
{
	int argc = 0, i;

	while (args[argc])
		argc++;
	*argv = calloc((size_t)argc + 1, sizeof(**argv));
	for (i = 0; i < argc; i++)
		(*argv)[i] = strdup(args[i]);
	return argc;
}

static void argv_free(char **argv)
{
	int i;

	for (i = 0; argv[i]; i++)
		free(argv[i]);
	free(argv);
}

/* The options point into argv: it lives until the next parse (or parse_done). */
static char **parse_argv;

static void parse_done(void)
{
	if (parse_argv)
		argv_free(parse_argv);
	parse_argv = NULL;
}

static int parse(struct report_opts *o, const char *const *args, const char **err)
{
	int argc, ret;

	parse_done();
	argc = argv_new(args, &parse_argv);
	*o = (struct report_opts)REPORT_OPTS_INIT;
	cap_begin();
	ret = report_parse_args(argc, parse_argv, o);
	*err = cap_end();
	return ret;
}

static int test_parse_args(void)
{
	struct report_opts o;
	const char *err;

	T_EQ_U64(parse(&o, (const char *const[]){"report", NULL}, &err), 0);
	T_EQ_STR(o.input, "xprof.data");
	T_ASSERT(!o.output);
	T_EQ_U64(o.format, REPORT_FLAT);

	T_EQ_U64(parse(&o, ARGS("-i", "a.data", "--folded", "-o", "out.txt"), &err), 0);
	T_EQ_STR(o.input, "a.data");
	T_EQ_STR(o.output, "out.txt");
	T_EQ_U64(o.format, REPORT_FOLDED);

	T_EQ_U64(parse(&o, ARGS("--input=b.data", "--flat"), &err), 0);
	T_EQ_STR(o.input, "b.data");
	T_EQ_U64(o.format, REPORT_FLAT);
	T_ASSERT(!o.symfs);

	T_EQ_U64(parse(&o, ARGS("--symfs", "golden/aarch64", "--folded"), &err), 0);
	T_EQ_STR(o.symfs, "golden/aarch64");

	/* --value, --time, --diff, several -i. */
	T_ASSERT(!o.value_samples);
	T_EQ_U64(parse(&o, ARGS("--folded", "--value", "samples"), &err), 0);
	T_ASSERT(o.value_samples);
	T_EQ_U64(parse(&o, ARGS("--time", "10%,1.5s"), &err), 0);
	T_ASSERT(o.time_from.set && o.time_from.pct && o.time_from.v == 10);
	T_ASSERT(o.time_to.set && !o.time_to.pct && o.time_to.v == 1.5e9);
	T_EQ_U64(parse(&o, ARGS("--time", ",200ms"), &err), 0);
	T_ASSERT(!o.time_from.set && o.time_to.set && o.time_to.v == 2e8);
	T_EQ_U64(parse(&o, ARGS("--time", "2,1"), &err), 2);
	T_ASSERT(strstr(err, "invalid value '2,1' for --time"));
	T_EQ_U64(parse(&o, ARGS("--diff", "old.data", "-i", "new.data", "--tree"), &err), 0);
	T_EQ_STR(o.diff_base, "old.data");
	T_EQ_STR(o.input, "new.data");
	T_EQ_U64(parse(&o, ARGS("--diff", "old.data", "--speedscope"), &err), 2);
	T_ASSERT(strstr(err, "option '--diff' applies only to"));
	T_EQ_U64(parse(&o, ARGS("-i", "a.data", "-i", "b.data"), &err), 0);
	T_EQ_U64(o.inputs.nr, 2);
	T_EQ_STR(o.input, "a.data");
	T_EQ_U64(parse(&o, ARGS("-i", "a.data", "-i", "b.data", "--pprof"), &err), 2);
	T_ASSERT(strstr(err, "several '-i' files apply only to"));

	T_EQ_U64(parse(&o, ARGS("--flat", "--folded"), &err), 2);
	T_ASSERT(strstr(err, "xprof: error: options '--folded' and '--flat' cannot be used "
			     "together\nusage: xprof report "));
	T_EQ_U64(parse(&o, ARGS("extra"), &err), 2);
	T_ASSERT(strstr(err, "unexpected argument 'extra'"));
	T_EQ_U64(parse(&o, ARGS("--trees"), &err), 2);
	T_ASSERT(strstr(err, "unknown option '--trees'"));
	T_EQ_U64(parse(&o, ARGS("-i"), &err), 2);
	T_ASSERT(strstr(err, "requires a value"));
	T_EQ_U64(parse(&o, ARGS("-i", ""), &err), 2);

	/* Symbolization options: off by default; --debug-dir repeats, in order. */
	T_EQ_U64(parse(&o, ARGS("--folded"), &err), 0);
	T_ASSERT(!o.no_inline && !o.no_demangle);
	T_EQ_U64(o.debug_dirs.nr, 0);
	T_EQ_U64(
	    parse(&o,
		  ARGS("--no-inline", "--no-demangle", "--debug-dir", "/a:/b", "--debug-dir=rel"),
		  &err),
	    0);
	T_ASSERT(o.no_inline && o.no_demangle);
	T_EQ_U64(o.debug_dirs.nr, 2);
	T_EQ_STR(o.debug_dirs.v[0], "/a:/b");
	T_EQ_STR(o.debug_dirs.v[1], "rel");
	T_EQ_U64(parse(&o, ARGS("--debug-dir", ""), &err), 2);
	T_ASSERT(strstr(err, "invalid value '' for --debug-dir"));
	T_EQ_U64(parse(&o,
		       ARGS("--debug-dir=1", "--debug-dir=2", "--debug-dir=3", "--debug-dir=4",
			    "--debug-dir=5", "--debug-dir=6", "--debug-dir=7", "--debug-dir=8",
			    "--debug-dir=9", "--debug-dir=10", "--debug-dir=11", "--debug-dir=12",
			    "--debug-dir=13", "--debug-dir=14", "--debug-dir=15", "--debug-dir=16",
			    "--debug-dir=17"),
		       &err),
		 2);
	T_ASSERT(strstr(err, "option '--debug-dir' given more than 16 times"));
	parse_done();
	return T_OK;
}

static int test_parse_formats_and_filters(void)
{
	struct report_opts o;
	const char *err;

	T_EQ_U64(parse(&o,
		       ARGS("--tree", "--sort", "self", "--limit", "5", "--min-percent", "2.5%"),
		       &err),
		 0);
	T_EQ_U64(o.format, REPORT_TREE);
	T_EQ_U64(o.sort, OUT_SORT_SELF);
	T_EQ_U64(o.limit, 5);
	T_ASSERT(o.min_percent == 2.5);
	T_EQ_U64(parse(&o, ARGS("--sort=total"), &err), 0);
	T_EQ_U64(o.format, REPORT_FLAT);
	T_EQ_U64(o.sort, OUT_SORT_TOTAL);
	T_EQ_U64(parse(&o, ARGS("--flamegraph", "-o", "x.html"), &err), 0);
	T_EQ_U64(o.format, REPORT_FLAMEGRAPH);
	T_EQ_U64(parse(&o, ARGS("--pprof"), &err), 0);
	T_EQ_U64(o.format, REPORT_PPROF);
	T_EQ_U64(parse(&o, ARGS("-f", "speedscope"), &err), 0);
	T_EQ_U64(o.format, REPORT_SPEEDSCOPE);
	T_EQ_U64(parse(&o, ARGS("--format=tree"), &err), 0);
	T_EQ_U64(o.format, REPORT_TREE);
	T_EQ_U64(parse(&o, ARGS("-f", "svg"), &err), 2);
	T_ASSERT(strstr(err, "xprof: error: invalid value 'svg' for -f, --format (expected "
			     "folded|flat|tree|flamegraph|pprof|speedscope)\n"));
	T_EQ_U64(parse(&o, ARGS("--tree", "-f", "pprof"), &err), 2);
	T_ASSERT(strstr(err, "options '--tree' and '--pprof' cannot be used together"));
	T_EQ_U64(parse(&o, ARGS("--pprof", "--sort", "self"), &err), 2);
	T_ASSERT(strstr(err, "options '--sort', '--limit' and '--min-percent' apply only to "
			     "--flat and --tree"));
	T_EQ_U64(parse(&o, ARGS("--folded", "--limit", "3"), &err), 2);
	T_EQ_U64(parse(&o, ARGS("--limit", "0"), &err), 2);
	T_EQ_U64(parse(&o, ARGS("--min-percent", "101"), &err), 2);
	T_EQ_U64(parse(&o, ARGS("--sort", "name"), &err), 2);

	T_EQ_U64(parse(&o,
		       ARGS("--pid", "12,34", "--tid=5", "--comm", "app,worker-1", "--per-thread"),
		       &err),
		 0);
	T_EQ_U64(o.nr_pids, 2);
	T_EQ_U64(o.pids[0], 12);
	T_EQ_U64(o.pids[1], 34);
	T_EQ_U64(o.nr_tids, 1);
	T_EQ_U64(o.tids[0], 5);
	T_EQ_U64(o.nr_comms, 2);
	T_EQ_STR(o.comms[0], "app");
	T_EQ_STR(o.comms[1], "worker-1");
	T_ASSERT(o.per_thread);
	T_EQ_U64(parse(&o, ARGS("--pid", "12,"), &err), 2);
	T_ASSERT(strstr(err, "invalid value '12,' for --pid (expected a list of ids)"));
	T_EQ_U64(parse(&o, ARGS("--tid", "1x"), &err), 2);
	T_ASSERT(strstr(err, "invalid value '1x' for --tid (expected an id)"));
	T_EQ_U64(parse(&o, ARGS("--comm", "a,,b"), &err), 2);
	T_ASSERT(strstr(err, "invalid value 'a,,b' for --comm"));
	parse_done();
	return T_OK;
}

static int test_help(void)
{
	char **argv, *text = NULL;
	int argc = argv_new(ARGS("--help"), &argv);
	size_t len = 0;
	FILE *saved = stdout;
	int ret;

	stdout = open_memstream(&text, &len);
	T_ASSERT(stdout);
	ret = cmd_report(argc, argv);
	argv_free(argv);
	fclose(stdout);
	stdout = saved;
	T_EQ_U64(ret, 0);
	T_ASSERT(strstr(text, "usage: xprof report [-i <file>] [-o <file>] [--flat | --tree] "));
	T_ASSERT(
	    strstr(text, "   or: xprof report [-i <file>] [-o <file>] --folded | --flamegraph "));
	T_ASSERT(strstr(text, "\nEXAMPLES\n"));
	free(text);
	return T_OK;
}

/* Run cmd_report on @args; return its exit code and what it printed on stderr. */
static int run(const char *const *args, const char **err)
{
	char **argv;
	int argc = argv_new(args, &argv), ret;

	cap_begin();
	ret = cmd_report(argc, argv);
	*err = cap_end();
	argv_free(argv);
	return ret;
}

static int test_exit_codes(void)
{
	char tmp[] = "/tmp/xprof-test-rep-XXXXXX", out[256];
	const char *err;
	FILE *f;
	int fd;

	/* Missing file: 1, with a hint. */
	T_EQ_U64(run(ARGS("-i", "/nonexistent/xprof.data"), &err), 1);
	T_EQ_STR(err, "xprof: error: cannot open '/nonexistent/xprof.data': No such file or "
		      "directory\nhint: run 'xprof record -- <command>' first\n");

	/* Not a data file: 1, one line. */
	fd = mkstemp(tmp);
	T_ASSERT(fd >= 0);
	T_EQ_U64(write(fd, "#!/bin/sh\necho hi\n", 18), 18);
	close(fd);
	T_EQ_U64(run(ARGS("-i", tmp), &err), 1);
	snprintf(out, sizeof(out), "xprof: error: '%s' is not an xprof data file\n", tmp);
	T_EQ_STR(err, out);

	/* A valid file without samples: 1, and it says so. */
	df_writer_close(df_writer_open(tmp, 62, 0));
	T_EQ_U64(run(ARGS("-i", tmp, "--folded"), &err), 1);
	snprintf(out, sizeof(out), "xprof: error: no samples in '%s'\n", tmp);
	T_ASSERT(!strncmp(err, out, strlen(out)));

	/* -o into a directory that does not exist: 1. */
	{
		struct df_writer *w = df_writer_open(tmp, 62, 0);
		const uint64_t pc = 0x10;
		const uint8_t fl = XP_FRAME_EXACT;

		T_ASSERT(w);
		df_write_stack(w, 1, &pc, &fl, 1);
		df_write_sample(w, 1, 5, 5, 1, 1);
		T_EQ_U64(df_writer_close(w), 0);
	}
	T_EQ_U64(run(ARGS("-i", tmp, "-o", "/nonexistent/out.txt"), &err), 1);
	T_ASSERT(strstr(err, "cannot create '/nonexistent/out.txt': No such file"));

	/* -o a file: 0, and the text is there. */
	snprintf(out, sizeof(out), "%s.out", tmp);
	T_EQ_U64(run(ARGS("-i", tmp, "--folded", "-o", out), &err), 0);
	T_EQ_STR(err, "");
	f = fopen(out, "r");
	T_ASSERT(f);
	{
		char line[128] = "";

		T_ASSERT(fgets(line, sizeof(line), f));
		T_EQ_STR(line, "pid-5;0x10 1\n");
	}
	fclose(f);
	unlink(out);
	unlink(tmp);
	return T_OK;
}

/*
 * How tests/data/canned-<arch>.xprof were made (XP_REGEN=1 ./test_report
 * rewrites them): a program and its libc at typical addresses of @arch,
 * two stacks, five samples.
 */
static int write_foreign(const char *path, uint16_t machine, const char *arch)
{
	static const uint8_t id[20] = {0x5a, 0x5a, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14};
	const uint64_t s1[] = {0xffff8002a1f0ull, 0x4006a4, 0x4005d8}, s2[] = {0x400700, 0x4005d8};
	const uint8_t f1[] = {XP_FRAME_EXACT, 0, 0}, f2[] = {XP_FRAME_EXACT, 0};
	struct df_writer *w = df_writer_open(path, machine, 1700000000000000000ull);
	char app[64], libc[64];
	uint64_t t;

	if (!w)
		return -1;
	snprintf(app, sizeof(app), "/nonexistent/%s/app", arch);
	snprintf(libc, sizeof(libc), "/nonexistent/%s/libc.so.6", arch);
	df_write_meta(w, "cmdline", "app");
	df_write_process(w, 0, 300, 1, DF_PROC_EXEC, "app", app);
	df_write_thread(w, 0, 300, 300, "app");
	df_write_mapping(w, 0, 300, 0x400000, 0x401000, 0, 5, app, id, sizeof(id));
	df_write_mapping(w, 0, 300, 0xffff80010000ull, 0xffff80100000ull, 0x10000, 5, libc, id,
			 sizeof(id));
	df_write_stack(w, 1, s1, f1, 3);
	df_write_stack(w, 2, s2, f2, 2);
	for (t = 1; t <= 5; t++)
		df_write_sample(w, t * 1000000, 300, 300, t <= 3 ? 1 : 2, 1);
	df_write_exit(w, 6000000, 300, 0, 0);
	return df_writer_close(w);
}

/* Reports of foreign-architecture files are the same on every host. */
static int golden(const char *file, const char *expect_folded, const char *expect_err)
{
	const char *dir = getenv("XP_DATA");
	struct report_opts o = REPORT_OPTS_INIT;
	char path[4096], *text = NULL;
	const char *err;
	size_t len = 0;
	struct profile p;
	FILE *f;
	int ret, p_machine;

	snprintf(path, sizeof(path), "%s/%s", dir ? dir : "tests/data", file);
	if (getenv("XP_REGEN")) {
		if (strstr(file, "aarch64"))
			T_EQ_U64(write_foreign(path, 183, "aarch64"), 0);
		else
			T_EQ_U64(write_foreign(path, 243, "riscv64"), 0);
	}
	o.format = REPORT_FOLDED;
	profile_init(&p);
	f = open_memstream(&text, &len);
	T_ASSERT(f);
	cap_begin();
	ret = profile_load(&p, path);
	if (!ret)
		ret = report_profile(&o, &p, f);
	err = cap_end();
	p_machine = p.e_machine;
	fclose(f);
	profile_release(&p);
	T_EQ_U64(ret, 0);
	T_EQ_U64(p_machine, strstr(file, "aarch64") ? 183 : 243);
	T_EQ_STR(text, expect_folded);
	T_EQ_STR(err, expect_err);
	free(text);
	return T_OK;
}

static int test_golden_aarch64(void)
{
	return golden("canned-aarch64.xprof",
		      "app;app+0x5d8;app+0x6a4;libc.so.6+0x2a1f0 3\n"
		      "app;app+0x5d8;app+0x700 2\n",
		      "xprof: warning: cannot open '/nonexistent/aarch64/app': No such file or "
		      "directory; its frames are shown as app+offset\n"
		      "xprof: warning: cannot open '/nonexistent/aarch64/libc.so.6': No such file "
		      "or directory; its frames are shown as libc.so.6+offset\n");
}

static int test_golden_riscv64(void)
{
	return golden("canned-riscv64.xprof",
		      "app;app+0x5d8;app+0x6a4;libc.so.6+0x2a1f0 3\n"
		      "app;app+0x5d8;app+0x700 2\n",
		      "xprof: warning: cannot open '/nonexistent/riscv64/app': No such file or "
		      "directory; its frames are shown as app+offset\n"
		      "xprof: warning: cannot open '/nonexistent/riscv64/libc.so.6': No such file "
		      "or directory; its frames are shown as libc.so.6+offset\n");
}

/*
 * "[syscall] N" frames are named with the table of the data file's arch,
 * not the host's: 101 is nanosleep on aarch64 and riscv64, ptrace on x86-64.
 */
static int test_syscall_names_by_machine(void)
{
	static const struct {
		uint16_t machine;
		const char *want;
	} cases[] = {
	    {183, "blocked;[syscall] nanosleep 1\n"},
	    {243, "blocked;[syscall] nanosleep 1\n"},
	    {62, "blocked;[syscall] ptrace 1\n"},
	    {2, "blocked;[syscall] 101 1\n"}, /* SPARC: no table, the number stays */
	};
	const uint64_t pcs[] = {101};
	const uint8_t flags[] = {XP_FRAME_SYSCALL};
	struct report_opts o = REPORT_OPTS_INIT;
	char path[] = "/tmp/xprof-test-sys-XXXXXX", *text;
	struct df_writer *w;
	struct profile p;
	size_t i, len;
	FILE *out;
	int fd;

	o.format = REPORT_FOLDED;
	o.value_samples = true;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		strcpy(path, "/tmp/xprof-test-sys-XXXXXX");
		fd = mkstemp(path);
		T_ASSERT(fd >= 0);
		close(fd);
		w = df_writer_open(path, cases[i].machine, 0);
		T_ASSERT(w);
		df_write_process(w, 0, 7, 1, DF_PROC_EXEC, "blocked", "/nonexistent/blocked");
		df_write_stack(w, 1, pcs, flags, 1);
		df_write_sample(w, 10, 7, 7, 1, 1000);
		T_EQ_U64(df_writer_close(w), 0);
		profile_init(&p);
		T_EQ_U64(profile_load(&p, path), 0);
		unlink(path);
		text = NULL;
		out = open_memstream(&text, &len);
		T_ASSERT(out);
		T_EQ_U64(report_profile(&o, &p, out), 0);
		fclose(out);
		profile_release(&p);
		T_EQ_STR(text, cases[i].want);
		free(text);
	}
	return T_OK;
}

T_MAIN(T_CASE(test_parse_args), T_CASE(test_parse_formats_and_filters), T_CASE(test_help),
       T_CASE(test_exit_codes), T_CASE(test_golden_aarch64), T_CASE(test_golden_riscv64),
       T_CASE(test_syscall_names_by_machine))
