/* SPDX-License-Identifier: MIT */
/*
 * 'xprof dump': option parsing on whole command lines (the dump itself
 * needs a live process: tests/integration/t2100-dump-threads.sh).
 */
#include "unwind.h"
#include "../cmd/cmd.h"

#include "stderr_capture.h"
#include "t.h"

/* Parse "dump" followed by @args (NULL-terminated); return the code and stderr. */
static int parse(struct dump_opts *o, const char *const *args, const char **err)
{
	static char *argv[16];
	static char storage[16][64];
	int argc = 0, ret;

	argv[argc++] = strcpy(storage[0], "dump");
	for (; args[argc - 1] && argc < 15; argc++)
		argv[argc] = strcpy(storage[argc], args[argc - 1]);
	argv[argc] = NULL;
	*o = (struct dump_opts)DUMP_OPTS_INIT;
	cap_begin();
	ret = dump_parse_args(argc, argv, o);
	*err = cap_end();
	return ret;
}

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

static int test_parse(void)
{
	struct dump_opts o;
	const char *err;

	T_EQ_U64(parse(&o, ARGS("-p", "4242"), &err), 0);
	T_EQ_U64(o.pid, 4242);
	T_EQ_U64(o.call_graph, UNWIND_AUTO);
	T_EQ_U64(o.max_depth, XP_DEFAULT_MAX_DEPTH);
	T_EQ_STR(err, "");
	T_EQ_U64(parse(&o, ARGS("--pid=7", "-g", "dwarf", "--max-depth", "64"), &err), 0);
	T_EQ_U64(o.pid, 7);
	T_EQ_U64(o.call_graph, UNWIND_DWARF);
	T_EQ_U64(o.max_depth, 64);

	T_EQ_U64(parse(&o, (const char *const[]){NULL}, &err), 2);
	T_EQ_STR(err, "xprof: error: no process given: use -p <pid>\n"
		      "usage: xprof dump -p <pid> [-g auto|fp|dwarf|libunwind|check] [--max-depth <n>]\n"
		      "see 'xprof help dump'\n");
	T_EQ_U64(parse(&o, ARGS("-p", "12x"), &err), 2);
	T_ASSERT(strstr(err, "invalid value '12x' for -p, --pid (expected a process id)"));
	T_EQ_U64(parse(&o, ARGS("-p", "0"), &err), 2);
	T_EQ_U64(parse(&o, ARGS("-p", "1,2"), &err), 2);
	T_EQ_U64(parse(&o, ARGS("-p", "1", "extra"), &err), 2);
	T_ASSERT(strstr(err, "unexpected argument 'extra'"));
	T_EQ_U64(parse(&o, ARGS("-p", "1", "-g", "lbr"), &err), 2);
	T_EQ_U64(parse(&o, ARGS("-p", "1", "--max-depth", "0"), &err), 2);
	T_EQ_U64(parse(&o, ARGS("-d", "1s"), &err), 2);
	T_ASSERT(strstr(err, "unknown option '-d'"));
	return T_OK;
}

T_MAIN(T_CASE(test_parse))
