/* SPDX-License-Identifier: MIT */
/* Placeholder for 'xprof report' until the command lands. */
#include "cmd.h"
#include "err.h"

int cmd_report(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return xp_error("'report' is not available in this build"), 1;
}
