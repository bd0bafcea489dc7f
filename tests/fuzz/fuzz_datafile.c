/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the data file reader, the untrusted input of
 * 'xprof report' (files come from other machines).  Each input is loaded
 * from memory; when it loads, every sample is aggregated with the mapping
 * lookup of each frame, and every writer runs (with threads, locations and
 * the per-thread root frame for the second round: what pprof, speedscope
 * and --per-thread ask of aggregation), so the whole report path short of
 * opening ELF files is covered.  Seeds: the .xprof files of
 * tests/data.  The library must be instrumented too, or libFuzzer sees no
 * coverage of the parser, hence the extra C flags:
 *
 *   cmake -S . -B build-fuzz -DXPROF_FUZZ=ON -DCMAKE_C_COMPILER=clang \
 *         -DCMAKE_C_FLAGS=-fsanitize=fuzzer-no-link,address,undefined
 *   cmake --build build-fuzz --target fuzz_datafile
 *   mkdir -p corpus && build-fuzz/tests/fuzz_datafile -max_total_time=60 corpus tests/data
 */
#include "aggregate.h"
#include "out.h"
#include "profile.h"

#include <inttypes.h>
#include <stdio.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	devnull = fopen("/dev/null", "w");
	/*
	 * Silence xprof's warnings about the (mostly broken) inputs: they go to
	 * the stderr FILE, which libFuzzer captured before this runs, and
	 * sanitizer reports use file descriptor 2, so both still get through.
	 */
	if (devnull)
		stderr = devnull;
	return 0;
}

/* Label frames with their mapping's start, exercising profile_find_mapping. */
static unsigned int resolve(void *ctx, const struct agg_frame_req *req, const char **labels,
			    unsigned int max)
{
	const struct profile *p = ctx;
	const struct profile_mapping *m = profile_find_mapping(p, req->pid, req->t, req->pc);
	static char buf[64];

	(void)max;
	snprintf(buf, sizeof(buf), "%" PRIx64 "@%" PRIx64, req->pc, m ? m->start : 0);
	labels[0] = buf;
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct out_ops *const writers[] = {
	    &out_folded, &out_flat, &out_tree, &out_flamegraph, &out_pprof, &out_speedscope,
	};
	const struct agg_opts opts[] = {
	    {0},
	    {.flags = AGG_THREAD_FRAME | AGG_LOCATIONS},
	};
	const struct out_opts oo = {.limit = 3, .min_percent = 1};
	struct profile p;
	struct agg a;
	size_t i, k;

	profile_init(&p);
	if (!profile_load_mem(&p, data, size, "fuzz")) {
		for (k = 0; k < sizeof(opts) / sizeof(opts[0]); k++) {
			agg_init(&a);
			agg_build_opts(&a, &p, &opts[k], resolve, &p);
			for (i = 0; devnull && i < sizeof(writers) / sizeof(writers[0]); i++)
				out_write_opts(writers[i], devnull, &a, k ? &oo : NULL);
			agg_release(&a);
		}
	}
	profile_release(&p);
	return 0;
}
