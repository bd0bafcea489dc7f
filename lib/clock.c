/* SPDX-License-Identifier: MIT */
/* The clocks xprof reads (see clock.h). */
#include "clock.h"

int xp_clock_read(clockid_t id, uint64_t *ns)
{
	struct timespec ts;

	if (clock_gettime(id, &ts))
		return -1;
	*ns = xp_timespec_ns(&ts);
	return 0;
}

clockid_t xp_process_clock(pid_t pid)
{
	return (clockid_t)((~(unsigned int)pid << 3) | 2u);
}

static uint64_t clock_ns(clockid_t id)
{
	uint64_t ns = 0;

	xp_clock_read(id, &ns);
	return ns;
}

uint64_t xp_now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

uint64_t xp_cpu_ns(void)
{
	return clock_ns(CLOCK_PROCESS_CPUTIME_ID);
}
