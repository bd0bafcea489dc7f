/* SPDX-License-Identifier: MIT */
/* Placeholder for 'xprof record' until the command lands. */
#include "cmd.h"
#include "err.h"

int cmd_record(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return xp_error("'record' is not available in this build"), 1;
}

int record_parse_args(int argc, char **argv, struct record_opts *opts)
{
	(void)argc;
	(void)argv;
	(void)opts;
	return 2;
}
