/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the parsers of a task's /proc files (target/procfs.c):
 * the whole input, as text, through the stat parsers (field 39, the CPU,
 * alone and with fields 10 and 12, the page faults), the schedstat
 * parser, the status parser (switches), the syscall parser, the loadavg
 * parser, the mountinfo parser (hidepid) and the children parser (process
 * ids).  Each must stay inside its text and return only what its
 * contract allows.
 */
#include "procfs.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	struct procfs_sched ss;
	uint64_t sp, pc, vol, invol, faults = 0;
	int64_t nr;
	long pgrp, tpgid, gid;
	char state;
	int cpu, hidepid, kid;
	pid_t *kids = NULL;
	size_t nkids = 0;
	unsigned long kids_alloc = 0;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (procfs_parse_job(text, &state, &pgrp, &tpgid) < -1)
		abort();
	cpu = procfs_parse_task_cpu(text);
	if (cpu < -1)
		abort();
	if (procfs_parse_task_cpu_faults(text, &faults) != cpu)
		abort();
	if (procfs_parse_schedstat(text, &ss) < -1)
		abort();
	if (procfs_parse_running(text) < -1)
		abort();
	if (procfs_parse_switches(text, &vol, &invol) < -1)
		abort();
	nr = procfs_parse_syscall(text, &sp, &pc);
	if (nr < PROCFS_GONE || nr > INT32_MAX)
		abort();
	if (procfs_parse_mountinfo(text, &hidepid, &gid) < -1 || hidepid < 0 || hidepid > 4)
		abort();
	kid = procfs_parse_children(text, &kids, &nkids, &kids_alloc);
	if (kid < -1 || nkids > size / 2 + 1)
		abort();
	while (nkids)
		if (kids[--nkids] <= 0)
			abort();
	free(kids);
	free(text);
	return 0;
}
