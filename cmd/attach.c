/* SPDX-License-Identifier: MIT */
/* Placeholder for 'xprof attach' until the command lands. */
#include "cmd.h"
#include "err.h"

int cmd_attach(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return xp_error("'attach' is not available in this build"), 1;
}
