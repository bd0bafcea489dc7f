/* SPDX-License-Identifier: MIT */
/* Idle spinners (idlespin.h). */
#include "idlespin.h"
#include "arch.h"
#include "ctl.h"
#include "err.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

static void *spin(void *arg)
{
	struct idlespin *is = arg;
	struct sched_param sp = {.sched_priority = 0};

	/* Before the first spin: never a moment at normal priority. */
	if (sched_setscheduler(0, SCHED_IDLE, &sp))
		return NULL;
	while (!atomic_load_explicit(&is->stop, memory_order_relaxed))
		xp_arch_cpu_relax();
	return NULL;
}

unsigned int idlespin_start(struct idlespin *is)
{
	cpu_set_t mine;
	int cpu, e;

	memset(is, 0, sizeof(*is));
	if (sched_getaffinity(0, sizeof(mine), &mine))
		return 0;
	is->threads = calloc((size_t)CPU_COUNT(&mine), sizeof(*is->threads));
	if (!is->threads)
		return 0;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &mine))
			continue;
		e = ctl_start_pinned(&is->threads[is->nr], cpu, spin, is);
		if (e) {
			xp_debug(1, "idle spinner on CPU %d: %s", cpu, strerror(e));
			continue;
		}
		is->nr++;
	}
	return is->nr;
}

void idlespin_stop(struct idlespin *is)
{
	unsigned int i;

	atomic_store(&is->stop, 1);
	for (i = 0; i < is->nr; i++)
		pthread_join(is->threads[i], NULL);
	free(is->threads);
	memset(is, 0, sizeof(*is));
}
