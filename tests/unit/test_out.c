/* SPDX-License-Identifier: MIT */
/*
 * Aggregation and the output writers on a canned profile
 * (tests/data/canned.xprof): exact folded and flat text, merging of stacks
 * whose names are equal, recursion counted once per stack, weights versus
 * counts, empty and truncated stacks, and a million samples in one go.
 * Frames are named by a table here, not by symbolization, so the expected
 * text does not depend on the host.
 */
#include "aggregate.h"
#include "out.h"
#include "profile.h"
#include "symbolize/symbolize.h"

#include "stderr_capture.h"
#include "t.h"

#include <inttypes.h>
#include <time.h>
#include <unistd.h>

/* Address ranges of the canned program's functions. */
static const struct {
	uint64_t lo, hi;
	const char *name;
} funcs[] = {
    {0x1000, 0x2000, "work"},	{0x2000, 0x3000, "run"}, {0x3000, 0x4000, "main"},
    {0x4000, 0x5000, "helper"}, {0x5000, 0x6000, "rec"}, {0x6000, 0x7000, "thread_start"},
};

static unsigned int table_resolve(void *ctx, const struct agg_frame_req *req, const char **labels,
				  unsigned int max)
{
	uint64_t pc = sym_lookup_pc(req->pc, req->flags);
	static char hex[32];
	size_t i;

	(void)ctx;
	(void)max;
	if (req->flags & XP_FRAME_TRUNCATED) {
		labels[0] = "[truncated]";
		return 1;
	}
	for (i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++) {
		if (pc >= funcs[i].lo && pc < funcs[i].hi) {
			labels[0] = funcs[i].name;
			return 1;
		}
	}
	snprintf(hex, sizeof(hex), "%#" PRIx64, req->pc);
	labels[0] = hex;
	return 1;
}

#define E XP_FRAME_EXACT

/* How tests/data/canned.xprof was made (XP_REGEN=1 ./test_out rewrites it). */
static int write_canned(const char *path)
{
	static const struct {
		uint64_t id;
		uint32_t nr;
		uint64_t pcs[4];
		uint8_t flags[4];
	} stacks[] = {
	    {1, 3, {0x1010, 0x2020, 0x3030}, {E, 0, 0}},
	    {2, 3, {0x1018, 0x2020, 0x3030}, {E, 0, 0}}, /* names equal to stack 1 */
	    {3, 4, {0x4010, 0x1040, 0x2020, 0x3030}, {E, 0, 0, 0}},
	    {4, 4, {0x5010, 0x5020, 0x5020, 0x3030}, {E, 0, 0, 0}}, /* recursion */
	    {5, 0, {0}, {0}},
	    {6, 3, {0x1010, 0x2020, 0}, {E, 0, XP_FRAME_TRUNCATED}},
	    {7, 2, {0x1010, 0x6010}, {E, 0}},
	    {8, 1, {0xdead}, {E}},
	};
	static const struct {
		pid_t pid;
		uint64_t stack, n, weight;
	} samples[] = {
	    {100, 1, 4, 1}, {100, 2, 2, 1}, {100, 3, 2, 3}, {100, 4, 1, 1},
	    {100, 5, 1, 1}, {100, 6, 1, 1}, {200, 7, 2, 1}, {100, 8, 1, 1},
	};
	struct df_writer *w = df_writer_open(path, 62, 1700000000000000000ull);
	uint64_t t = 1000, k;
	size_t i;

	if (!w)
		return -1;
	df_write_meta(w, "cmdline", "app");
	df_write_process(w, 0, 100, 1, DF_PROC_EXEC, "app", "/nonexistent/app");
	df_write_process(w, 10, 200, 100, 0, "worker", "/nonexistent/app");
	df_write_mapping(w, 0, 100, 0x1000, 0x7000, 0x1000, 5, "/nonexistent/app", NULL, 0);
	for (i = 0; i < sizeof(stacks) / sizeof(stacks[0]); i++)
		df_write_stack(w, stacks[i].id, stacks[i].pcs, stacks[i].flags, stacks[i].nr);
	for (i = 0; i < sizeof(samples) / sizeof(samples[0]); i++)
		for (k = 0; k < samples[i].n; k++, t += 1000)
			df_write_sample(w, t, samples[i].pid, samples[i].pid, samples[i].stack,
					samples[i].weight);
	df_write_stat(w, "samples", 14);
	return df_writer_close(w);
}

static int load_canned(struct profile *p)
{
	const char *dir = getenv("XP_DATA");
	char path[4096];

	if (!dir)
		dir = "tests/data";
	snprintf(path, sizeof(path), "%s/canned.xprof", dir);
	if (getenv("XP_REGEN") && write_canned(path))
		return -1;
	profile_init(p);
	return profile_load(p, path);
}

static const char *tmp_file(char *buf)
{
	int fd;

	strcpy(buf, "/tmp/xprof-test-out-XXXXXX");
	fd = mkstemp(buf);
	if (fd < 0)
		return NULL;
	close(fd);
	return buf;
}

static char *render(const struct out_ops *ops, const struct agg *a)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	if (out_write(ops, f, a)) {
		fclose(f);
		free(text);
		return NULL;
	}
	fclose(f);
	return text;
}

static int test_aggregate_canned(void)
{
	struct profile p;
	struct agg a;

	T_EQ_U64(load_canned(&p), 0);
	agg_init(&a);
	agg_build(&a, &p, table_resolve, NULL);
	T_EQ_U64(a.total_count, 14);
	T_EQ_U64(a.total_weight, 18);
	/* Stacks 1 and 2 name alike and merge: 8 sample stacks make 7. */
	T_EQ_U64(a.nr_stacks, 7);
	T_EQ_STR(a.names[a.stacks[0].comm], "app");
	T_EQ_U64(a.stacks[0].nr, 0);
	agg_release(&a);
	profile_release(&p);
	return T_OK;
}

static int test_folded_canned(void)
{
	struct profile p;
	struct agg a;
	char *text;

	T_EQ_U64(load_canned(&p), 0);
	agg_init(&a);
	agg_build(&a, &p, table_resolve, NULL);
	text = render(&out_folded, &a);
	agg_release(&a);
	profile_release(&p);
	T_EQ_STR(text, "app 1\n"
		       "app;0xdead 1\n"
		       "app;[truncated];run;work 1\n"
		       "app;main;rec;rec;rec 1\n"
		       "app;main;run;work 6\n"
		       "app;main;run;work;helper 2\n"
		       "worker;thread_start;work 2\n");
	free(text);
	return T_OK;
}

static int test_flat_canned(void)
{
	struct profile p;
	struct agg a;
	char *text;

	T_EQ_U64(load_canned(&p), 0);
	agg_init(&a);
	agg_build(&a, &p, table_resolve, NULL);
	text = render(&out_flat, &a);
	agg_release(&a);
	profile_release(&p);
	T_EQ_STR(text, "# Samples: 14, weight: 18\n"
		       "#\n"
		       "#   Self%    Total%      Self     Total  Function\n"
		       "   50.00%    83.33%         9        11  work\n"
		       "   33.33%    33.33%         2         2  helper\n"
		       "    5.56%     5.56%         1         1  0xdead\n"
		       "    5.56%     5.56%         1         1  rec\n"
		       "    0.00%     5.56%         0         1  [truncated]\n"
		       "    0.00%    72.22%         0         9  main\n"
		       "    0.00%    72.22%         0         9  run\n"
		       "    0.00%    11.11%         0         2  thread_start\n");
	free(text);
	return T_OK;
}

/* Without a resolver frames are their pcs; names are sanitized in both writers. */
static int test_hex_labels_and_sanitizing(void)
{
	char buf[32];
	const char *path = tmp_file(buf);
	const uint64_t pcs[] = {0x10, 0x20};
	const uint8_t flags[] = {E, 0};
	struct df_writer *w = path ? df_writer_open(path, 62, 0) : NULL;
	struct profile p;
	struct agg a;
	char *folded, *flat;

	T_ASSERT(w);
	df_write_process(w, 0, 7, 1, 0, "evil;na\x1b[2Jme", "");
	df_write_stack(w, 1, pcs, flags, 2);
	df_write_sample(w, 5, 7, 7, 1, 0);
	df_write_sample(w, 6, 7, 7, 1, 0);
	T_EQ_U64(df_writer_close(w), 0);
	profile_init(&p);
	T_EQ_U64(profile_load(&p, path), 0);
	unlink(path);
	agg_init(&a);
	agg_build(&a, &p, NULL, NULL);
	folded = render(&out_folded, &a);
	flat = render(&out_flat, &a);
	agg_release(&a);
	profile_release(&p);
	T_EQ_STR(folded, "evil:na?[2Jme;0x20;0x10 2\n");
	/* Zero weights: shares fall back to counts. */
	T_EQ_STR(flat, "# Samples: 2, weight: 0\n"
		       "#\n"
		       "#   Self%    Total%      Self     Total  Function\n"
		       "  100.00%   100.00%         2         2  0x10\n"
		       "    0.00%   100.00%         0         2  0x20\n");
	free(folded);
	free(flat);
	return T_OK;
}

/* A million samples over a thousand stacks aggregate correctly and quickly. */
static int test_million_samples(void)
{
	char buf[32];
	const char *path = tmp_file(buf);
	struct df_writer *w = path ? df_writer_open(path, 62, 0) : NULL;
	uint64_t pcs[16], i;
	uint8_t flags[16] = {E};
	struct timespec t0, t1;
	struct profile p;
	struct agg a;
	double secs;

	T_ASSERT(w);
	df_write_process(w, 0, 1, 0, DF_PROC_EXEC, "big", "/nonexistent/big");
	df_write_mapping(w, 0, 1, 0x1000, 0x7000, 0, 5, "/nonexistent/big", NULL, 0);
	for (i = 0; i < 1000; i++) {
		unsigned int d;

		for (d = 0; d < 16; d++)
			pcs[d] = 0x1000 + ((i * 7 + d * 131) % 0x6000);
		df_write_stack(w, i, pcs, flags, 16);
	}
	for (i = 0; i < 1000000; i++) {
		df_write_sample(w, i, 1, 1, (i * 2654435761u) % 1000, 1);
		if (i % 65536 == 0)
			T_EQ_U64(df_writer_flush(w), 0);
	}
	T_EQ_U64(df_writer_close(w), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	profile_init(&p);
	T_EQ_U64(profile_load(&p, path), 0);
	unlink(path);
	agg_init(&a);
	agg_build(&a, &p, table_resolve, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	T_EQ_U64(a.total_count, 1000000);
	T_EQ_U64(p.nr_samples, 1000000);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("# 1M samples loaded and aggregated in %.2f s\n", secs);
	agg_release(&a);
	profile_release(&p);
	return T_OK;
}

T_MAIN(T_CASE(test_aggregate_canned), T_CASE(test_folded_canned), T_CASE(test_flat_canned),
       T_CASE(test_hex_labels_and_sanitizing), T_CASE(test_million_samples))
