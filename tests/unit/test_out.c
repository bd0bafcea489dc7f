/* SPDX-License-Identifier: MIT */
/*
 * Aggregation and the output writers on a canned profile
 * (tests/data/canned.xprof): exact folded, flat and tree text (with --sort,
 * --limit, --min-percent and --per-thread), filters, exact speedscope JSON,
 * the flame graph's embedded data and escaping, the pprof file decoded
 * field by field, merging of stacks whose names are equal, recursion
 * counted once per stack, weights versus counts, empty and truncated
 * stacks, and a million samples in one go.  Frames are named by a table
 * here, not by symbolization, so the expected text does not depend on the
 * host.  zlib is used here only to read back the pprof output.
 */
#include "aggregate.h"
#include "out.h"
#include "profile.h"
#include "symbolize/symbolize.h"
#include "version.h"

#include "stderr_capture.h"
#include "t.h"

#include <inttypes.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

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
	uint64_t pc = xp_lookup_pc(req->pc, req->flags);
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

/* The output of @ops with @opts (NULL: defaults); *@len its length (binary formats). */
static char *render_len(const struct out_ops *ops, const struct agg *a, const struct out_opts *opts,
			size_t *len)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, len);

	if (!f)
		return NULL;
	if (out_write_opts(ops, f, a, opts)) {
		fclose(f);
		free(text);
		return NULL;
	}
	fclose(f);
	return text;
}

static char *render_opts(const struct out_ops *ops, const struct agg *a,
			 const struct out_opts *opts)
{
	size_t len;

	return render_len(ops, a, opts, &len);
}

static char *render(const struct out_ops *ops, const struct agg *a)
{
	return render_opts(ops, a, NULL);
}

/* The canned profile aggregated with @ao (NULL: no options), rendered by @ops with @oo. */
static char *canned_with(const struct agg_opts *ao, const struct out_ops *ops,
			 const struct out_opts *oo)
{
	struct profile p;
	struct agg a;
	char *text;

	if (load_canned(&p))
		return NULL;
	agg_init(&a);
	agg_build_opts(&a, &p, ao, table_resolve, NULL);
	text = render_opts(ops, &a, oo);
	agg_release(&a);
	profile_release(&p);
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
	/* Weights by default, as every format: helper's two samples weigh 3 each. */
	T_EQ_STR(text, "app 1\n"
		       "app;0xdead 1\n"
		       "app;[truncated];run;work 1\n"
		       "app;main;rec;rec;rec 1\n"
		       "app;main;run;work 6\n"
		       "app;main;run;work;helper 6\n"
		       "worker;thread_start;work 2\n");
	free(text);
	/* --value samples: counts. */
	text = render_opts(&out_folded, &a, &(struct out_opts){.samples = true});
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

static int test_tree_canned(void)
{
	char *text = canned_with(NULL, &out_tree, NULL);

	/* Siblings by total weight, then name; the empty stack counts in the total only. */
	T_EQ_STR(text, "# Samples: 14, weight: 18\n"
		       "#\n"
		       "#  Total%     Self%   Samples  Call tree (callers above callees)\n"
		       "   72.22%     0.00%         9  main\n"
		       "   66.67%     0.00%         8  |- run\n"
		       "   66.67%    33.33%         8  |  `- work\n"
		       "   33.33%    33.33%         2  |     `- helper\n"
		       "    5.56%     0.00%         1  `- rec\n"
		       "    5.56%     0.00%         1     `- rec\n"
		       "    5.56%     5.56%         1        `- rec\n"
		       "   11.11%     0.00%         2  thread_start\n"
		       "   11.11%    11.11%         2  `- work\n"
		       "    5.56%     5.56%         1  0xdead\n"
		       "    5.56%     0.00%         1  [truncated]\n"
		       "    5.56%     0.00%         1  `- run\n"
		       "    5.56%     5.56%         1     `- work\n");
	free(text);
	return T_OK;
}

static int test_tree_options(void)
{
	struct out_opts by_self = {.sort = OUT_SORT_SELF};
	struct out_opts limit = {.limit = 1};
	struct out_opts min = {.min_percent = 10};
	char *text;

	text = canned_with(NULL, &out_tree, &by_self);
	T_EQ_STR(text, "# Samples: 14, weight: 18\n"
		       "#\n"
		       "#  Total%     Self%   Samples  Call tree (callers above callees)\n"
		       "    5.56%     5.56%         1  0xdead\n"
		       "    5.56%     0.00%         1  [truncated]\n"
		       "    5.56%     0.00%         1  `- run\n"
		       "    5.56%     5.56%         1     `- work\n"
		       "   72.22%     0.00%         9  main\n"
		       "    5.56%     0.00%         1  |- rec\n"
		       "    5.56%     0.00%         1  |  `- rec\n"
		       "    5.56%     5.56%         1  |     `- rec\n"
		       "   66.67%     0.00%         8  `- run\n"
		       "   66.67%    33.33%         8     `- work\n"
		       "   33.33%    33.33%         2        `- helper\n"
		       "   11.11%     0.00%         2  thread_start\n"
		       "   11.11%    11.11%         2  `- work\n");
	free(text);
	/* One entry under each node: main's rec, 3 other roots left out. */
	text = canned_with(NULL, &out_tree, &limit);
	T_EQ_STR(text, "# Samples: 14, weight: 18\n"
		       "#\n"
		       "#  Total%     Self%   Samples  Call tree (callers above callees)\n"
		       "   72.22%     0.00%         9  main\n"
		       "   66.67%     0.00%         8  `- run\n"
		       "   66.67%    33.33%         8     `- work\n"
		       "   33.33%    33.33%         2        `- helper\n"
		       "# 4 more entries below --min-percent or past --limit\n");
	free(text);
	/* Whole subtrees under 10% go: rec, 0xdead, [truncated]. */
	text = canned_with(NULL, &out_tree, &min);
	T_EQ_STR(text, "# Samples: 14, weight: 18\n"
		       "#\n"
		       "#  Total%     Self%   Samples  Call tree (callers above callees)\n"
		       "   72.22%     0.00%         9  main\n"
		       "   66.67%     0.00%         8  `- run\n"
		       "   66.67%    33.33%         8     `- work\n"
		       "   33.33%    33.33%         2        `- helper\n"
		       "   11.11%     0.00%         2  thread_start\n"
		       "   11.11%    11.11%         2  `- work\n"
		       "# 3 more entries below --min-percent or past --limit\n");
	free(text);
	return T_OK;
}

static int test_flat_options(void)
{
	struct out_opts by_total = {.sort = OUT_SORT_TOTAL};
	struct out_opts cut = {.sort = OUT_SORT_TOTAL, .limit = 3, .min_percent = 50};
	struct out_opts limit = {.limit = 2};
	char *text;

	text = canned_with(NULL, &out_flat, &by_total);
	T_EQ_STR(text, "# Samples: 14, weight: 18\n"
		       "#\n"
		       "#   Self%    Total%      Self     Total  Function\n"
		       "   50.00%    83.33%         9        11  work\n"
		       "    0.00%    72.22%         0         9  main\n"
		       "    0.00%    72.22%         0         9  run\n"
		       "   33.33%    33.33%         2         2  helper\n"
		       "    0.00%    11.11%         0         2  thread_start\n"
		       "    5.56%     5.56%         1         1  0xdead\n"
		       "    0.00%     5.56%         0         1  [truncated]\n"
		       "    5.56%     5.56%         1         1  rec\n");
	free(text);
	/* --min-percent applies to the sort key: Total% here. */
	text = canned_with(NULL, &out_flat, &cut);
	T_EQ_STR(text, "# Samples: 14, weight: 18\n"
		       "#\n"
		       "#   Self%    Total%      Self     Total  Function\n"
		       "   50.00%    83.33%         9        11  work\n"
		       "    0.00%    72.22%         0         9  main\n"
		       "    0.00%    72.22%         0         9  run\n"
		       "# 5 more functions below --min-percent or past --limit\n");
	free(text);
	text = canned_with(NULL, &out_flat, &limit);
	T_EQ_STR(text, "# Samples: 14, weight: 18\n"
		       "#\n"
		       "#   Self%    Total%      Self     Total  Function\n"
		       "   50.00%    83.33%         9        11  work\n"
		       "   33.33%    33.33%         2         2  helper\n"
		       "# 6 more functions below --min-percent or past --limit\n");
	free(text);
	return T_OK;
}

/* --per-thread: a comm/tid root (the process name here: the file has no THREAD records). */
static int test_per_thread(void)
{
	struct agg_opts ao = {.flags = AGG_THREAD_FRAME};
	char *text;

	text = canned_with(&ao, &out_folded, NULL);
	T_EQ_STR(text, "app/100 1\n"
		       "app/100;0xdead 1\n"
		       "app/100;[truncated];run;work 1\n"
		       "app/100;main;rec;rec;rec 1\n"
		       "app/100;main;run;work 6\n"
		       "app/100;main;run;work;helper 6\n"
		       "worker/200;thread_start;work 2\n");
	free(text);
	/* Left out: 0xdead, [truncated] and main's rec. */
	text = canned_with(&ao, &out_tree, &(struct out_opts){.min_percent = 10});
	T_EQ_STR(text, "# Samples: 14, weight: 18\n"
		       "#\n"
		       "#  Total%     Self%   Samples  Call tree (callers above callees)\n"
		       "   88.89%     5.56%        12  app/100\n"
		       "   72.22%     0.00%         9  `- main\n"
		       "   66.67%     0.00%         8     `- run\n"
		       "   66.67%    33.33%         8        `- work\n"
		       "   33.33%    33.33%         2           `- helper\n"
		       "   11.11%     0.00%         2  worker/200\n"
		       "   11.11%     0.00%         2  `- thread_start\n"
		       "   11.11%    11.11%         2     `- work\n"
		       "# 3 more entries below --min-percent or past --limit\n");
	free(text);
	return T_OK;
}

static int test_filters(void)
{
	const pid_t pid200[] = {200}, tid100[] = {100}, none[] = {4242};
	const char *const worker[] = {"nosuch", "worker"};
	struct agg_opts by_pid = {.pids = pid200, .nr_pids = 1};
	struct agg_opts by_comm = {.comms = worker, .nr_comms = 2};
	struct agg_opts by_tid = {.tids = tid100, .nr_tids = 1, .comms = worker, .nr_comms = 2};
	struct agg_opts nothing = {.pids = none, .nr_pids = 1};
	struct profile p;
	struct agg a;
	char *text;

	text = canned_with(&by_pid, &out_folded, NULL);
	T_EQ_STR(text, "worker;thread_start;work 2\n");
	free(text);
	text = canned_with(&by_comm, &out_flat, NULL);
	T_EQ_STR(text, "# Samples: 2, weight: 2\n"
		       "#\n"
		       "#   Self%    Total%      Self     Total  Function\n"
		       "  100.00%   100.00%         2         2  work\n"
		       "    0.00%   100.00%         0         2  thread_start\n");
	free(text);
	/* Every list must match: tid 100 is not named "worker". */
	T_EQ_U64(load_canned(&p), 0);
	agg_init(&a);
	agg_build_opts(&a, &p, &by_tid, table_resolve, NULL);
	T_EQ_U64(a.nr_stacks, 0);
	T_EQ_U64(a.filtered_count, 14);
	T_EQ_U64(a.filtered_weight, 18);
	agg_release(&a);
	agg_init(&a);
	agg_build_opts(&a, &p, &nothing, table_resolve, NULL);
	T_EQ_U64(a.total_count, 0);
	agg_release(&a);
	/* first_sample: the samples before it are neither kept nor counted as filtered. */
	agg_init(&a);
	agg_build_opts(&a, &p, &(struct agg_opts){.first_sample = 10}, table_resolve, NULL);
	T_EQ_U64(a.total_count, p.nr_samples - 10);
	T_EQ_U64(a.filtered_count, 0);
	agg_release(&a);
	agg_init(&a);
	agg_build_opts(&a, &p, &(struct agg_opts){.first_sample = p.nr_samples}, table_resolve,
		       NULL);
	T_EQ_U64(a.total_count + a.filtered_count + a.nr_stacks, 0);
	agg_release(&a);
	profile_release(&p);
	return T_OK;
}

/* A thread's name at a time: the latest THREAD record at or before it, else the first. */
static int test_thread_comm(void)
{
	char buf[32];
	const char *path = tmp_file(buf);
	struct df_writer *w = path ? df_writer_open(path, 62, 0) : NULL;
	struct profile p;

	T_ASSERT(w);
	df_write_thread(w, 100, 7, 8, "early");
	df_write_thread(w, 200, 7, 8, "renamed");
	df_write_thread(w, 50, 7, 9, "other");
	df_write_thread(w, 50, 7, 10, "");
	T_EQ_U64(df_writer_close(w), 0);
	profile_init(&p);
	T_EQ_U64(profile_load(&p, path), 0);
	unlink(path);
	T_EQ_STR(profile_thread_comm(&p, 8, 10), "early");
	T_EQ_STR(profile_thread_comm(&p, 8, 100), "early");
	T_EQ_STR(profile_thread_comm(&p, 8, 199), "early");
	T_EQ_STR(profile_thread_comm(&p, 8, 5000), "renamed");
	T_EQ_STR(profile_thread_comm(&p, 9, 0), "other");
	T_ASSERT(!profile_thread_comm(&p, 10, 60));
	T_ASSERT(!profile_thread_comm(&p, 11, 60));
	profile_release(&p);
	return T_OK;
}

static int test_speedscope_canned(void)
{
	struct out_opts oo = {.title = "canned.xprof"};
	struct agg_opts ao = {.flags = AGG_THREADS};
	char *text = canned_with(&ao, &out_speedscope, &oo);

	/* One profile per thread; frames shared; stacks from the root. */
	T_EQ_STR(text, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n"
		       "\"exporter\":\"xprof " XPROF_VERSION "\",\"name\":\"canned.xprof\","
		       "\"activeProfileIndex\":0,\n"
		       "\"shared\":{\"frames\":[\n"
		       "{\"name\":\"0xdead\"},\n{\"name\":\"[truncated]\"},\n{\"name\":\"run\"},\n"
		       "{\"name\":\"work\"},\n{\"name\":\"main\"},\n{\"name\":\"rec\"},\n"
		       "{\"name\":\"helper\"},\n{\"name\":\"thread_start\"}]},\n"
		       "\"profiles\":[\n"
		       "{\"type\":\"sampled\",\"name\":\"app/100\",\"unit\":\"nanoseconds\","
		       "\"startValue\":0,\"endValue\":16,\n"
		       "\"samples\":[\n[],\n[0],\n[1,2,3],\n[4,5,5,5],\n[4,2,3],\n[4,2,3,6]],\n"
		       "\"weights\":[1,1,1,1,6,6]},\n"
		       "{\"type\":\"sampled\",\"name\":\"worker/200\",\"unit\":\"nanoseconds\","
		       "\"startValue\":0,\"endValue\":2,\n"
		       "\"samples\":[\n[7,3]],\n"
		       "\"weights\":[2]}]}\n");
	free(text);
	return T_OK;
}

/* With a timeline: each thread's samples in time order, runs of one stack merged. */
static int test_speedscope_timeline(void)
{
	struct out_opts oo = {.title = "canned.xprof"};
	struct agg_opts ao = {.flags = AGG_THREADS | AGG_TIMELINE};
	char *text = canned_with(&ao, &out_speedscope, &oo);

	T_ASSERT(text);
	T_ASSERT(strstr(text,
			"{\"type\":\"sampled\",\"name\":\"app/100\",\"unit\":\"nanoseconds\","
			"\"startValue\":1000,\"endValue\":1016,\n"
			"\"samples\":[\n[4,2,3],\n[4,2,3,6],\n[4,5,5,5],\n[],\n[1,2,3],\n[0]],\n"
			"\"weights\":[6,6,1,1,1,1]},\n"));
	T_ASSERT(strstr(text,
			"{\"type\":\"sampled\",\"name\":\"worker/200\",\"unit\":\"nanoseconds\","
			"\"startValue\":12000,\"endValue\":12002,\n"
			"\"samples\":[\n[7,3]],\n"
			"\"weights\":[2]}]}\n"));
	free(text);
	return T_OK;
}

static int test_flamegraph_canned(void)
{
	struct out_opts oo = {.title = "canned <&> \"x\""};
	char *text = canned_with(NULL, &out_flamegraph, &oo);

	T_ASSERT(text);
	T_ASSERT(!strncmp(text, "<!DOCTYPE html>\n", 16));
	T_ASSERT(!strstr(text, "@XPROF_"));
	T_ASSERT(strstr(text, "default-src 'none'"));
	T_ASSERT(
	    strstr(text, "<title>xprof flame graph: canned &lt;&amp;&gt; &quot;x&quot;</title>"));
	/* The title again as a JSON string inside <script>: no raw < > &. */
	T_ASSERT(strstr(text, "{\"title\":\"canned \\u003c\\u0026\\u003e \\\"x\\\"\","
			      "\"unit\":\"ns\",\"wall\":false,\"diff\":false,\n"));
	/* Root (all: 18 weight, 1 self, 14 samples), then preorder, siblings by name. */
	T_ASSERT(strstr(text, "\"names\":[\"app\",\"main\",\"run\",\"work\",\"helper\",\"rec\","
			      "\"[truncated]\",\"worker\",\n\"thread_start\",\"0xdead\"],\n"
			      "\"interp\":[],\n"
			      "\"nodes\":[\n"
			      "-1,-1,18,1,14,\n"
			      "0,9,1,1,1,\n"  /* 0xdead */
			      "0,6,1,0,1,\n"  /* [truncated] */
			      "2,2,1,0,1,\n"  /* run */
			      "3,3,1,1,1,\n"  /* work */
			      "0,1,13,0,9,\n" /* main */
			      "5,5,1,0,1,\n"  /* rec */
			      "6,5,1,0,1,\n"  /* rec */
			      "7,5,1,1,1,\n"  /* rec */
			      "5,2,12,0,8,\n" /* run */
			      "9,3,12,6,8,\n" /* work */
			      "10,4,6,6,2,\n" /* helper */
			      "0,8,2,0,2,\n"  /* thread_start */
			      "12,3,2,2,2],\n"
			      "\"pruned\":{\"ppm\":100,\"frames\":0,\"value\":0}}</script>"));
	T_ASSERT(strstr(text, "</html>\n"));
	free(text);
	return T_OK;
}

static int test_json_strings(void)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	T_ASSERT(f);
	out_put_json_string(f, "plain");
	out_put_json_string(f, "q\"b\\s/\n\t\x01\x7f");
	out_put_json_string(f, "</script><!--&");
	/* é, € and U+1F600 pass; U+2028 is escaped; a lone \xff, an overlong '/' and a
	 * cut sequence become U+FFFD. */
	out_put_json_string(
	    f, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xe2\x80\xa8|\xff|\xc0\xaf|\xe2\x82");
	fclose(f);
	T_EQ_STR(text, "\"plain\""
		       "\"q\\\"b\\\\s/\\u000a\\u0009\\u0001\\u007f\""
		       "\"\\u003c/script\\u003e\\u003c!--\\u0026\""
		       "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\\u2028|\\ufffd|\\ufffd\\ufffd|"
		       "\\ufffd\\ufffd\"");
	free(text);
	return T_OK;
}

/* ---- a small protobuf reader for the pprof test -------------------------- */

struct pbr {
	const uint8_t *p, *end;
};

static int pbr_varint(struct pbr *r, uint64_t *v)
{
	unsigned int shift = 0;

	*v = 0;
	while (r->p < r->end && shift < 64) {
		uint8_t b = *r->p++;

		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return 0;
		shift += 7;
	}
	return -1;
}

/* Next field: its number, and either its varint value or its bytes in @sub. */
static int pbr_next(struct pbr *r, unsigned int *field, uint64_t *v, struct pbr *sub)
{
	uint64_t key, len;

	if (r->p >= r->end || pbr_varint(r, &key))
		return -1;
	*field = (unsigned int)(key >> 3);
	if ((key & 7) == 0)
		return pbr_varint(r, v);
	if ((key & 7) != 2 || pbr_varint(r, &len) || len > (uint64_t)(r->end - r->p))
		return -1;
	sub->p = r->p;
	sub->end = r->p + len;
	r->p += len;
	*v = len;
	return 0;
}

#define PP_MAX 64

struct pp {
	char strs[PP_MAX][64];
	size_t nr_strs;
	uint64_t sample_type[2][2], period_type[2], period, default_type;
	size_t nr_sample_types, nr_samples, nr_maps;
	uint64_t total[2];
	uint64_t loc_id[PP_MAX], loc_map[PP_MAX], loc_func[PP_MAX]; /* the first line's function */
	uint64_t loc_lines[PP_MAX][4], loc_nlines[PP_MAX];	    /* every line's function */
	size_t nr_locs;
	uint64_t func_id[PP_MAX], func_name[PP_MAX];
	size_t nr_funcs;
	uint64_t map_id[PP_MAX], map_file[PP_MAX];
	uint64_t cum[PP_MAX][2]; /* by function index: like pprof -cum, once per sample */
	uint64_t sample_locs[PP_MAX][PP_MAX], sample_nr[PP_MAX], sample_val[PP_MAX][2];
};

/* Decode the fields the test checks; -1 on anything malformed. */
static int pp_decode(struct pp *pp, const uint8_t *buf, size_t len)
{
	struct pbr r = {buf, buf + len}, sub, sub2, sub3;
	unsigned int field, f2, f3;
	uint64_t v, v2, v3;
	size_t n;

	memset(pp, 0, sizeof(*pp));
	while (r.p < r.end) {
		if (pbr_next(&r, &field, &v, &sub))
			return -1;
		switch (field) {
		case 1:	 /* sample_type */
		case 11: /* period_type */
			for (n = 0; sub.p < sub.end;) {
				if (pbr_next(&sub, &f2, &v2, &sub2) || f2 < 1 || f2 > 2)
					return -1;
				if (field == 1 && pp->nr_sample_types < 2)
					pp->sample_type[pp->nr_sample_types][f2 - 1] = v2;
				else if (field == 11)
					pp->period_type[f2 - 1] = v2;
				n++;
			}
			if (field == 1)
				pp->nr_sample_types++;
			break;
		case 2: /* sample */
			if (pp->nr_samples >= PP_MAX)
				return -1;
			while (sub.p < sub.end) {
				if (pbr_next(&sub, &f2, &v2, &sub2))
					return -1;
				for (n = 0; sub2.p < sub2.end; n++) {
					if (pbr_varint(&sub2, &v3) || n >= PP_MAX)
						return -1;
					if (f2 == 1)
						pp->sample_locs[pp->nr_samples][n] = v3;
					else if (f2 == 2 && n < 2)
						pp->sample_val[pp->nr_samples][n] = v3;
				}
				if (f2 == 1)
					pp->sample_nr[pp->nr_samples] = n;
			}
			pp->total[0] += pp->sample_val[pp->nr_samples][0];
			pp->total[1] += pp->sample_val[pp->nr_samples][1];
			pp->nr_samples++;
			break;
		case 3: /* mapping */
			if (pp->nr_maps >= PP_MAX)
				return -1;
			while (sub.p < sub.end) {
				if (pbr_next(&sub, &f2, &v2, &sub2))
					return -1;
				if (f2 == 1)
					pp->map_id[pp->nr_maps] = v2;
				else if (f2 == 5)
					pp->map_file[pp->nr_maps] = v2;
			}
			pp->nr_maps++;
			break;
		case 4: /* location */
			if (pp->nr_locs >= PP_MAX)
				return -1;
			while (sub.p < sub.end) {
				if (pbr_next(&sub, &f2, &v2, &sub2))
					return -1;
				if (f2 == 1)
					pp->loc_id[pp->nr_locs] = v2;
				else if (f2 == 2)
					pp->loc_map[pp->nr_locs] = v2;
				else if (f2 == 4 && pbr_next(&sub2, &f3, &v3, &sub3) == 0 &&
					 f3 == 1 && pp->loc_nlines[pp->nr_locs] < 4) {
					if (!pp->loc_nlines[pp->nr_locs])
						pp->loc_func[pp->nr_locs] = v3;
					pp->loc_lines[pp->nr_locs][pp->loc_nlines[pp->nr_locs]++] =
					    v3;
				}
			}
			pp->nr_locs++;
			break;
		case 5: /* function */
			if (pp->nr_funcs >= PP_MAX)
				return -1;
			while (sub.p < sub.end) {
				if (pbr_next(&sub, &f2, &v2, &sub2))
					return -1;
				if (f2 == 1)
					pp->func_id[pp->nr_funcs] = v2;
				else if (f2 == 2)
					pp->func_name[pp->nr_funcs] = v2;
			}
			pp->nr_funcs++;
			break;
		case 6: /* string_table */
			if (pp->nr_strs >= PP_MAX || v >= sizeof(pp->strs[0]))
				return -1;
			memcpy(pp->strs[pp->nr_strs], sub.p, v);
			pp->strs[pp->nr_strs++][v] = 0;
			break;
		case 12:
			pp->period = v;
			break;
		case 14:
			pp->default_type = v;
			break;
		default:
			break;
		}
	}
	return 0;
}

/* Index of the element of @ids[@n] equal to @id, or -1. */
static int pp_find(const uint64_t *ids, size_t n, uint64_t id)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (ids[i] == id)
			return (int)i;
	return -1;
}

/* Total (count, weight) of the samples with function @name anywhere, like pprof -cum. */
static int pp_cum(const struct pp *pp, const char *name, uint64_t out[2])
{
	size_t s, k;

	out[0] = out[1] = 0;
	for (s = 0; s < pp->nr_samples; s++) {
		for (k = 0; k < pp->sample_nr[s]; k++) {
			int l = pp_find(pp->loc_id, pp->nr_locs, pp->sample_locs[s][k]), fn;

			if (l < 0)
				return -1;
			fn = pp_find(pp->func_id, pp->nr_funcs, pp->loc_func[l]);
			if (fn < 0 || pp->func_name[fn] >= pp->nr_strs)
				return -1;
			if (!strcmp(pp->strs[pp->func_name[fn]], name)) {
				out[0] += pp->sample_val[s][0];
				out[1] += pp->sample_val[s][1];
				break;
			}
		}
	}
	return 0;
}

/* gunzip @gz (@len bytes) and decode it into @pp.  0 or -1. */
static int pp_load(struct pp *pp, const char *gz, size_t len)
{
	static uint8_t raw[1 << 16];
	z_stream z;
	int ret;

	memset(&z, 0, sizeof(z));
	if (len < 2 || (uint8_t)gz[0] != 0x1f || (uint8_t)gz[1] != 0x8b ||
	    inflateInit2(&z, 15 + 16) != Z_OK)
		return -1;
	z.next_in = (Bytef *)gz;
	z.avail_in = (uInt)len;
	z.next_out = raw;
	z.avail_out = sizeof(raw);
	ret = inflate(&z, Z_FINISH);
	inflateEnd(&z);
	if (ret != Z_STREAM_END)
		return -1;
	return pp_decode(pp, raw, sizeof(raw) - z.avail_out);
}

/* The name of function id @id. */
static const char *pp_func_name(const struct pp *pp, uint64_t id)
{
	int fn = pp_find(pp->func_id, pp->nr_funcs, id);

	return fn < 0 || pp->func_name[fn] >= pp->nr_strs ? "?" : pp->strs[pp->func_name[fn]];
}

/* The table's names, but a pc in helper() is inlined_leaf inlined into helper. */
static unsigned int inline_resolve(void *ctx, const struct agg_frame_req *req, const char **labels,
				   unsigned int max)
{
	uint64_t pc = xp_lookup_pc(req->pc, req->flags);

	if (pc >= 0x4000 && pc < 0x5000 && max >= 2) {
		labels[0] = "inlined_leaf"; /* innermost first */
		labels[1] = "helper";
		return 2;
	}
	return table_resolve(ctx, req, labels, max);
}

/* A pc that names several frames is one pprof Location with a Line for each. */
static int test_pprof_inline(void)
{
	struct agg_opts ao = {.flags = AGG_LOCATIONS};
	static struct pp pp;
	struct profile p;
	struct agg a;
	uint64_t cum[2];
	size_t l, s, found = 0;
	char *gz, *flat;
	size_t len;

	T_EQ_U64(load_canned(&p), 0);
	agg_init(&a);
	agg_build_opts(&a, &p, &ao, inline_resolve, NULL);
	flat = render(&out_flat, &a);
	gz = render_len(&out_pprof, &a, NULL, &len);
	agg_release(&a);
	profile_release(&p);
	T_ASSERT(gz);
	T_EQ_U64(pp_load(&pp, gz, len), 0);
	free(gz);
	/* Other writers see two frames: the inlined function is the leaf. */
	T_ASSERT(strstr(flat, "   33.33%    33.33%         2         2  inlined_leaf\n"));
	T_ASSERT(strstr(flat, "    0.00%    33.33%         0         2  helper\n"));
	free(flat);
	for (l = 0; l < pp.nr_locs; l++) {
		if (pp.loc_nlines[l] < 2)
			continue;
		found++;
		T_EQ_U64(pp.loc_nlines[l], 2);
		T_EQ_STR(pp_func_name(&pp, pp.loc_lines[l][0]), "inlined_leaf");
		T_EQ_STR(pp_func_name(&pp, pp.loc_lines[l][1]), "helper");
		/* The sample through it has 4 locations for its 5 frames, this one first. */
		for (s = 0; s < pp.nr_samples; s++) {
			if (pp.sample_locs[s][0] != pp.loc_id[l])
				continue;
			T_EQ_U64(pp.sample_nr[s], 4);
			T_EQ_U64(pp.sample_val[s][1], 6);
		}
	}
	T_EQ_U64(found, 1);
	T_EQ_U64(pp_cum(&pp, "work", cum), 0);
	T_EQ_U64(cum[1], 15);
	return T_OK;
}

static int test_pprof_canned(void)
{
	struct out_opts oo = {.period_ns = 1001001, .exe = "/nonexistent/app"};
	struct agg_opts ao = {.flags = AGG_LOCATIONS};
	static struct pp pp;
	struct profile p;
	struct agg a;
	uint64_t cum[2];
	char *gz;
	size_t len;
	int m;

	T_EQ_U64(load_canned(&p), 0);
	agg_init(&a);
	agg_build_opts(&a, &p, &ao, table_resolve, NULL);
	gz = render_len(&out_pprof, &a, &oo, &len);
	T_ASSERT(gz && len > 18);
	T_EQ_U64((uint8_t)gz[0], 0x1f); /* gzip magic */
	T_EQ_U64((uint8_t)gz[1], 0x8b);
	T_EQ_U64(pp_load(&pp, gz, len), 0);
	free(gz);
	T_EQ_STR(pp.strs[0], "");
	T_EQ_U64(pp.nr_sample_types, 2);
	T_EQ_STR(pp.strs[pp.sample_type[0][0]], "samples");
	T_EQ_STR(pp.strs[pp.sample_type[0][1]], "count");
	T_EQ_STR(pp.strs[pp.sample_type[1][0]], "cpu");
	T_EQ_STR(pp.strs[pp.sample_type[1][1]], "nanoseconds");
	T_EQ_STR(pp.strs[pp.period_type[0]], "cpu");
	T_EQ_STR(pp.strs[pp.default_type], "cpu");
	T_EQ_U64(pp.period, 1001001);
	/* Stacks 1 and 2 name alike but are other code: 8 stacks stay 8 samples. */
	T_EQ_U64(pp.nr_samples, 8);
	T_EQ_U64(pp.total[0], 14);
	T_EQ_U64(pp.total[1], 18);
	/* One Location per distinct (mapping, address): 0x1010 and 0x1018 are both in work. */
	T_EQ_U64(pp.nr_funcs, 8);
	T_EQ_U64(pp.nr_maps, 1);
	T_EQ_STR(pp.strs[pp.map_file[0]], "/nonexistent/app");
	m = pp_find(pp.loc_map, pp.nr_locs, pp.map_id[0]);
	T_ASSERT(m >= 0);
	/* Same shares as the flat report: work 15/18 = 83.33% total, main 13, rec 1. */
	T_EQ_U64(pp_cum(&pp, "work", cum), 0);
	T_EQ_U64(cum[0], 11);
	T_EQ_U64(cum[1], 15);
	T_EQ_U64(pp_cum(&pp, "main", cum), 0);
	T_EQ_U64(cum[1], 13);
	T_EQ_U64(pp_cum(&pp, "rec", cum), 0);
	T_EQ_U64(cum[1], 1);
	T_EQ_U64(pp_cum(&pp, "[truncated]", cum), 0);
	T_EQ_U64(cum[1], 1);
	agg_release(&a);
	profile_release(&p);
	return T_OK;
}

/*
 * A comparison: the canned profile (new) with its pid 200 alone (base),
 * and the other way round, where the base has stacks and names the new
 * profile lacks.
 */
static int test_diff_canned(void)
{
	static const pid_t worker[] = {200};
	struct agg_opts only_worker = {.pids = worker, .nr_pids = 1};
	struct profile p;
	struct agg a, b;
	char *text;

	T_EQ_U64(load_canned(&p), 0);
	agg_init(&a);
	agg_init(&b);
	agg_build(&a, &p, table_resolve, NULL);
	agg_build_opts(&b, &p, &only_worker, table_resolve, NULL);
	agg_add_base(&a, &b);
	T_EQ_U64(a.nr_stacks, 7);
	T_EQ_U64(a.total_weight, 18);
	T_EQ_U64(a.base_total_weight, 2);
	/* Base values scaled to the new whole: worker's 2 of 2 become 18 of 18. */
	text = render(&out_folded, &a);
	T_EQ_STR(text, "app 0 1\n"
		       "app;0xdead 0 1\n"
		       "app;[truncated];run;work 0 1\n"
		       "app;main;rec;rec;rec 0 1\n"
		       "app;main;run;work 0 6\n"
		       "app;main;run;work;helper 0 6\n"
		       "worker;thread_start;work 18 2\n");
	free(text);
	/* thread_start: 100% of the base, 11.11% of the new profile. */
	text = render_opts(&out_flat, &a, &(struct out_opts){.limit = 1, .sort = OUT_SORT_TOTAL});
	T_ASSERT(strstr(text, "\n   +0.00%     0.00%     0.00%   -88.89%   100.00%    11.11%  "
			      "thread_start\n"));
	free(text);
	agg_release(&a);
	agg_release(&b);
	/* The other way: names and stacks only the base has are added. */
	agg_init(&a);
	agg_init(&b);
	agg_build_opts(&a, &p, &only_worker, table_resolve, NULL);
	agg_build(&b, &p, table_resolve, NULL);
	agg_add_base(&a, &b);
	T_EQ_U64(a.nr_stacks, 7);
	T_EQ_U64(a.total_count, 2);
	T_EQ_U64(a.base_total_count, 14);
	text = render(&out_tree, &a);
	T_ASSERT(strstr(text, "\n  -72.22%    72.22%     0.00%    +0.00%  main\n"));
	T_ASSERT(strstr(text, "\n  +88.89%    11.11%   100.00%    +0.00%  thread_start\n"));
	free(text);
	agg_release(&a);
	agg_release(&b);
	profile_release(&p);
	return T_OK;
}

T_MAIN(T_CASE(test_aggregate_canned), T_CASE(test_diff_canned), T_CASE(test_folded_canned),
       T_CASE(test_flat_canned), T_CASE(test_tree_canned), T_CASE(test_tree_options),
       T_CASE(test_flat_options), T_CASE(test_per_thread), T_CASE(test_filters),
       T_CASE(test_thread_comm), T_CASE(test_speedscope_canned), T_CASE(test_speedscope_timeline),
       T_CASE(test_flamegraph_canned), T_CASE(test_json_strings), T_CASE(test_pprof_canned),
       T_CASE(test_pprof_inline), T_CASE(test_hex_labels_and_sanitizing),
       T_CASE(test_million_samples))
