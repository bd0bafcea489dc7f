/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the whole report path with the real symbolizer: a
 * data file from anywhere names files (opened only if regular), carries
 * [vdso] images (parsed by libelf from memory), JIT symbols and lines,
 * syscall numbers and an e_machine, all of which reach symbolize/ through
 * report_profile; --header-only's printing of its meta and statistics
 * records, of the pids processes knew themselves by (PROCESS nspid) and of
 * the phases (MARK) too, and --phase with the name of the file's first
 * mark.  Output goes to /dev/null; warnings too.
 */
#include "profile.h"
#include "../cmd/cmd.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	devnull = fopen("/dev/null", "w");
	/* Warnings go to stderr; sanitizer reports use fd 2 and still get through. */
	if (devnull)
		stderr = devnull;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct report_opts o = REPORT_OPTS_INIT;
	struct profile p;

	profile_init(&p);
	if (devnull && !profile_load_mem(&p, data, size, "fuzz")) {
		if (size & 8)
			report_write_header(&p, devnull);
		if (p.nr_samples) {
			o.format = size & 1 ? REPORT_FOLDED : REPORT_FLAT;
			o.no_inline = size & 2;
			o.no_demangle = size & 4;
			if ((size & 16) && p.nr_marks)
				o.phase = p.marks[0].name;
			report_profile(&o, &p, devnull);
		}
	}
	profile_release(&p);
	return 0;
}
