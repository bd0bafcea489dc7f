/* SPDX-License-Identifier: MIT */
/*
 * The --control command parser (control.h) on canned lines: the commands
 * perf record's --control takes (enable, disable, stop, ping) and xprof's
 * mark NAME, blanks and a '\r' around them, what is refused (unknown words,
 * arguments, names too long or with control characters); the option's
 * syntax fifo:CTL[,ACK]; and lines split across reads, several in one
 * read, an over-long line dropped to its end.
 */
#include "t.h"

#include "control.h"

#include <string.h>

static enum control_kind parse(const char *line, struct control_cmd *cmd)
{
	return control_parse_line(line, strlen(line), cmd);
}

static int test_commands(void)
{
	struct control_cmd cmd;

	T_EQ_U64(parse("enable", &cmd), CONTROL_ENABLE);
	T_EQ_U64(parse("disable", &cmd), CONTROL_DISABLE);
	T_EQ_U64(parse("stop", &cmd), CONTROL_STOP);
	T_EQ_U64(parse("ping", &cmd), CONTROL_PING);
	T_EQ_U64(parse("  enable \t\r", &cmd), CONTROL_ENABLE);
	T_EQ_U64(parse("", &cmd), CONTROL_NONE);
	T_EQ_U64(parse(" \r", &cmd), CONTROL_NONE);
	T_EQ_U64(parse("mark load", &cmd), CONTROL_MARK);
	T_EQ_STR(cmd.name, "load");
	T_EQ_U64(parse("mark\t  warm up  \r", &cmd), CONTROL_MARK);
	T_EQ_STR(cmd.name, "warm up");
	T_EQ_STR(control_kind_name(CONTROL_DISABLE), "disable");
	return T_OK;
}

static int test_refused(void)
{
	static const char *const bad[] = {
	    "enabled", "Enable",   "enable cycles", "disable x",  "stop now", "mark",
	    "mark   ", "snapshot", "mark a\tb",	    "mark a\x01", "ping\x7f", "evlist",
	};
	char name[200];
	struct control_cmd cmd;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (parse(bad[i], &cmd) != CONTROL_INVALID || !cmd.why) {
			fprintf(stderr, "'%s' was not refused\n", bad[i]);
			return T_FAIL;
		}
	}
	/* The message shows the line, made printable. */
	T_EQ_U64(parse("mark a\x01", &cmd), CONTROL_INVALID);
	T_EQ_STR(cmd.name, "mark a?");
	/* 128 bytes of name are fine, 129 are not. */
	memset(name, 'n', sizeof(name));
	memcpy(name, "mark ", 5);
	name[5 + 128] = 0;
	T_EQ_U64(parse(name, &cmd), CONTROL_MARK);
	T_EQ_U64(strlen(cmd.name), 128);
	name[5 + 128] = 'n';
	name[5 + 129] = 0;
	T_EQ_U64(parse(name, &cmd), CONTROL_INVALID);
	return T_OK;
}

static int test_spec(void)
{
	struct control_spec spec;

	T_EQ_U64(control_spec_parse("fifo:ctl", &spec), 0);
	T_EQ_STR(spec.ctl, "ctl");
	T_EQ_STR(spec.ack, "");
	T_EQ_U64(control_spec_parse("fifo:/tmp/c,/tmp/a", &spec), 0);
	T_EQ_STR(spec.ctl, "/tmp/c");
	T_EQ_STR(spec.ack, "/tmp/a");
	T_EQ_U64(control_spec_parse("fifo:", &spec), -1);
	T_EQ_U64(control_spec_parse("fifo:,a", &spec), -1);
	T_EQ_U64(control_spec_parse("fifo:c,", &spec), -1);
	T_EQ_U64(control_spec_parse("fd:3,4", &spec), -1);
	T_EQ_U64(control_spec_parse("ctl", &spec), -1);
	return T_OK;
}

static int test_lines(void)
{
	static const char in[] = "ena";
	struct control c;
	struct control_cmd cmd;
	char big[CONTROL_LINE_MAX + 40];

	control_init(&c);
	T_ASSERT(!control_poll(&c, &cmd)); /* no descriptor, nothing buffered */
	T_EQ_U64(control_feed(&c, in, 3), 3);
	T_ASSERT(!control_next(&c, &cmd));
	control_feed(&c, "ble\nmark a\n\nping\nsto", 20);
	T_ASSERT(control_next(&c, &cmd));
	T_EQ_U64(cmd.kind, CONTROL_ENABLE);
	T_ASSERT(control_next(&c, &cmd));
	T_EQ_U64(cmd.kind, CONTROL_MARK);
	T_EQ_STR(cmd.name, "a");
	/* control_poll skips the empty line. */
	T_ASSERT(control_poll(&c, &cmd));
	T_EQ_U64(cmd.kind, CONTROL_PING);
	T_ASSERT(!control_poll(&c, &cmd));
	control_feed(&c, "p\n", 2);
	T_ASSERT(control_poll(&c, &cmd));
	T_EQ_U64(cmd.kind, CONTROL_STOP);
	/* An over-long line is one invalid command, and the next line is whole. */
	memset(big, 'x', sizeof(big));
	T_EQ_U64(control_feed(&c, big, sizeof(big)), CONTROL_LINE_MAX);
	T_ASSERT(!control_next(&c, &cmd));
	T_EQ_U64(control_feed(&c, big, 40), 40);
	T_ASSERT(!control_next(&c, &cmd));
	control_feed(&c, "x\ndisable\n", 10);
	T_ASSERT(control_next(&c, &cmd));
	T_EQ_U64(cmd.kind, CONTROL_INVALID);
	T_ASSERT(control_next(&c, &cmd));
	T_EQ_U64(cmd.kind, CONTROL_DISABLE);
	T_ASSERT(!control_next(&c, &cmd));
	return T_OK;
}

T_MAIN(T_CASE(test_commands), T_CASE(test_refused), T_CASE(test_spec), T_CASE(test_lines))
