/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the --control command reader (record/control.c): the
 * input, fed to the line buffer in chunks whose sizes come from the input
 * itself (as reads of a FIFO would split it), through control_next, and as
 * a string through control_spec_parse.  Besides not crashing, every
 * command must obey the parser's contract: a known kind; a phase name of 1
 * to CONTROL_NAME_MAX bytes without control characters or surrounding
 * blanks; a reason for what is refused; the buffer never over-full.  A
 * violation abort()s, which the fuzzer reports as a crash.
 *
 * Seeds: tests/data/fuzz/control/.  Run with scripts/fuzz.sh; ctest
 * replays the seeds and tests/data/regress/control/ (replay_control).
 */
#include "control.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_cmd(const struct control_cmd *cmd)
{
	size_t n = strlen(cmd->name), i;

	if (cmd->kind > CONTROL_INVALID || n > CONTROL_NAME_MAX)
		abort();
	if (cmd->kind == CONTROL_INVALID && !cmd->why)
		abort();
	if (cmd->kind != CONTROL_MARK)
		return;
	if (!n || cmd->name[0] == ' ' || cmd->name[n - 1] == ' ')
		abort();
	for (i = 0; i < n; i++)
		if ((unsigned char)cmd->name[i] < 0x20 || cmd->name[i] == 0x7f)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct control c;
	struct control_cmd cmd;
	struct control_spec spec;
	size_t at = 0, chunk = size ? data[0] % 37 + 1 : 1;
	char *text;

	control_init(&c);
	while (at < size) {
		size_t n = size - at < chunk ? size - at : chunk;

		at += control_feed(&c, (const char *)data + at, n);
		if (c.len > sizeof(c.buf))
			abort();
		while (control_next(&c, &cmd))
			check_cmd(&cmd);
	}
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	if (control_spec_parse(text, &spec) == 0 &&
	    (strncmp(text, "fifo:", 5) || !spec.ctl[0] || strchr(spec.ctl, ',') ||
	     strlen(spec.ctl) + (spec.ack[0] ? strlen(spec.ack) + 1 : 0) + 5 != strlen(text)))
		abort();
	free(text);
	return 0;
}
