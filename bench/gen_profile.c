/* SPDX-License-Identifier: MIT */
/*
 * gen_profile: write a large synthetic data file for the report-speed
 * benchmark (bench/run.sh), through the recorder's own writer
 * (data/datafile.h), so report reads exactly what record would write.
 *
 * The file describes this very process: its executable mappings come from
 * /proc/self/maps with their build-ids, as the sampler writes them, and
 * every pc lies inside one of those file-backed mappings (this program, the
 * xprof engine linked into it, libdw, libelf, libunwind, capstone, libc...),
 * so report really opens those ELF files and resolves symbols, lines and
 * inlines, as for a real profile.  The files stay on disk after the run.
 *
 * Shape (deterministic for a given seed): a pool of distinct pcs, a set of
 * distinct stacks that share root prefixes as real ones do, and samples
 * spread over threads whose choice of stack is skewed (a few hot stacks, a
 * long tail).  It does not try to produce a meaningful profile, only one
 * whose size and variety resemble a long recording.  Not a ctest test.
 *
 *   gen_profile [-n SAMPLES] [-s STACKS] [-p PCS] [-t THREADS] [-d DEPTH] OUT
 *
 * Defaults: 1000000 samples, 20000 stacks, 5000 pcs, 8 threads, stacks of
 * 8..56 frames (mean DEPTH 32).  Prints one line saying what it wrote.
 */
#include "addrspace.h"
#include "arch/arch.h"
#include "clock.h"
#include "datafile.h"
#include "module.h"
#include "unwind.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ROOTS	  16 /* distinct root chains (process start, thread start, ...) */
#define ROOT_LEN  5
#define MAX_DEPTH 512

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

/* xorshift64*: deterministic, and quality is no concern here. */
static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

/* Uniform in [0, n). */
static uint64_t rnd_below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

/* Uniform in [0, 1). */
static double rnd_unit(void)
{
	return (double)(rnd() >> 11) / 9007199254740992.0;
}

static unsigned long parse_num(const char *opt, const char *s, unsigned long max)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (end == s || *end || errno || !v || v > max) {
		fprintf(stderr, "gen_profile: invalid value '%s' for %s (expected 1..%lu)\n", s,
			opt, max);
		exit(2);
	}
	return v;
}

/* File-backed executable mappings of this process whose ELF file opened. */
static size_t code_maps(const struct addrspace *as, const struct xp_map **out)
{
	size_t i, n = 0;

	for (i = 0; i < as->nr; i++) {
		const struct xp_map *m = &as->maps[i];

		if (!(m->prot & XP_PROT_EXEC) || m->path[0] != '/' || !m->mod)
			continue;
		out[n++] = m;
	}
	return n;
}

/*
 * @n distinct pcs inside the code mappings.  Each mapping gets at least one
 * pc and otherwise a share that grows with the square root of its size, so
 * libc does not crowd out the small libraries.
 */
static uint64_t *make_pcs(const struct xp_map **maps, size_t nmaps, size_t n)
{
	uint64_t *pcs = calloc(n, sizeof(*pcs));
	double *w = calloc(nmaps, sizeof(*w)), total = 0, u;
	size_t i, k;

	if (!pcs || !w) {
		fprintf(stderr, "gen_profile: out of memory\n");
		exit(1);
	}
	for (k = 0; k < nmaps; k++) {
		w[k] = sqrt((double)(maps[k]->end - maps[k]->start));
		total += w[k];
	}
	for (i = 0; i < n; i++) {
		const struct xp_map *m;

		if (i < nmaps) {
			k = i;
		} else {
			u = rnd_unit() * total;
			for (k = 0; k + 1 < nmaps && u >= w[k]; k++)
				u -= w[k];
		}
		m = maps[k];
		pcs[i] = m->start + rnd_below(m->end - m->start);
	}
	free(w);
	return pcs;
}

/*
 * Stacks: a root chain, then frames from the pool, outermost first; stored
 * innermost first with the innermost pc exact, as the unwinder stores them.
 * Most stacks extend a prefix of one of the 64 stacks before them, so
 * callers are shared as in a real call tree.  Ids are 1..@nstacks.
 */
static int write_stacks(struct df_writer *w, const uint64_t *pool, size_t npcs, size_t nmaps,
			unsigned long nstacks, unsigned long depth)
{
	static uint64_t recent[64][MAX_DEPTH], outer[MAX_DEPTH], pcs[MAX_DEPTH];
	static uint8_t flags[MAX_DEPTH];
	uint32_t lens[64], nr, keep, j, from, slot;
	unsigned long i;

	for (i = 0; i < nstacks; i++) {
		nr = (uint32_t)(ROOT_LEN + 1 + rnd_below(2 * (depth - ROOT_LEN) - 1));
		if (i >= 64 && rnd_below(4)) {
			from = (uint32_t)rnd_below(64);
			keep = ROOT_LEN + (uint32_t)rnd_below(lens[from] - ROOT_LEN);
			memcpy(outer, recent[from], keep * sizeof(*outer));
		} else {
			/* one of ROOTS root chains, stored after the first nmaps pcs */
			keep = ROOT_LEN;
			memcpy(outer, pool + nmaps + rnd_below(ROOTS) * ROOT_LEN,
			       ROOT_LEN * sizeof(*outer));
		}
		for (j = keep; j < nr; j++)
			outer[j] = pool[rnd_below(npcs)];
		slot = (uint32_t)(i % 64);
		memcpy(recent[slot], outer, nr * sizeof(*outer));
		lens[slot] = nr;
		for (j = 0; j < nr; j++) {
			pcs[j] = outer[nr - 1 - j];
			flags[j] = j ? 0 : XP_FRAME_EXACT;
		}
		if (df_write_stack(w, i + 1, pcs, flags, nr))
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long nsamples = 1000000, nstacks = 20000, npcs = 5000, nthreads = 8, depth = 32;
	const struct xp_arch *arch = xp_arch_host();
	uint64_t *pool, t, i, bytes;
	const struct xp_map **maps;
	struct module_cache *mc;
	struct df_writer *w;
	struct addrspace as;
	struct timespec now;
	char exe[4096];
	size_t nmaps, k;
	pid_t pid = getpid();
	ssize_t len;
	int opt;

	const struct {
		int opt;
		unsigned long *v, max;
	} nums[] = {{'n', &nsamples, 1000000000ul},
		    {'s', &nstacks, 100000000ul},
		    {'p', &npcs, 10000000ul},
		    {'t', &nthreads, 100000ul},
		    {'d', &depth, MAX_DEPTH / 2}};

	while ((opt = getopt(argc, argv, "n:s:p:t:d:")) != -1) {
		char name[3] = {'-', (char)opt, 0};

		for (k = 0; k < sizeof(nums) / sizeof(nums[0]) && nums[k].opt != opt; k++)
			;
		if (k == sizeof(nums) / sizeof(nums[0]))
			goto usage;
		*nums[k].v = parse_num(name, optarg, nums[k].max);
	}
	if (optind != argc - 1) {
	usage:
		fprintf(stderr, "usage: gen_profile [-n SAMPLES] [-s STACKS] [-p PCS] "
				"[-t THREADS] [-d DEPTH] OUT\n");
		return 2;
	}
	if (depth <= ROOT_LEN + 1)
		depth = ROOT_LEN + 2;

	mc = module_cache_new();
	addrspace_init(&as, pid, mc);
	if (addrspace_load(&as)) {
		fprintf(stderr, "gen_profile: cannot read /proc/self/maps\n");
		return 1;
	}
	maps = calloc(as.nr ? as.nr : 1, sizeof(*maps));
	if (!maps)
		return 1;
	nmaps = code_maps(&as, maps);
	if (!nmaps) {
		fprintf(stderr, "gen_profile: no file-backed code mappings found\n");
		return 1;
	}
	if (npcs < nmaps + ROOTS * ROOT_LEN)
		npcs = nmaps + ROOTS * ROOT_LEN;
	pool = make_pcs(maps, nmaps, npcs);

	clock_gettime(CLOCK_REALTIME, &now);
	w = df_writer_open(argv[optind], arch->e_machine,
			   xp_timespec_ns(&now));
	if (!w)
		return 1;
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[len > 0 ? len : 0] = 0;
	df_write_meta(w, "cmdline", "gen_profile (synthetic)");
	df_write_process(w, 0, pid, getppid(), DF_PROC_EXEC, "gen_profile", exe);
	for (k = 0; k < as.nr; k++) {
		const struct xp_map *m = &as.maps[k];
		const uint8_t *id = NULL;
		size_t idlen = 0;

		if (!(m->prot & XP_PROT_EXEC))
			continue;
		if (m->mod)
			idlen = module_build_id(m->mod, &id);
		if (df_write_mapping(w, 0, pid, m->start, m->end, m->offset, m->prot, m->path, id,
				     idlen))
			return 1;
	}
	for (i = 0; i < nthreads; i++) {
		char comm[28]; /* "worker-" and up to 20 digits; -t keeps it under 16 */

		snprintf(comm, sizeof(comm), "worker-%lu", (unsigned long)i);
		df_write_thread(w, 0, pid, pid + (pid_t)i, i ? comm : "gen_profile");
	}

	if (write_stacks(w, pool, npcs, nmaps, nstacks, depth))
		return 1;

	/*
	 * Samples: 1 ms apart per thread, threads in turn; stack ids skewed
	 * towards the low ones (u^3), weight 1 ms of CPU time.
	 */
	t = 1000000;
	for (i = 0; i < nsamples; i++) {
		double u = rnd_unit();
		uint64_t id = 1 + (uint64_t)((double)nstacks * u * u * u);
		pid_t tid = pid + (pid_t)(i % nthreads);

		if (i % nthreads == 0)
			t += 1000000;
		if (df_write_sample(w, t, pid, tid, id, 1000000))
			return 1;
	}
	for (i = 1; i < nthreads; i++)
		df_write_exit(w, t, pid, pid + (pid_t)i, 0);
	df_write_exit(w, t, pid, 0, 0);
	df_write_stat(w, "samples", nsamples);
	df_write_stat(w, "synthetic", 1);
	if (df_writer_flush(w))
		return 1;
	bytes = df_writer_bytes(w);
	if (df_writer_close(w))
		return 1;
	printf("gen_profile: wrote '%s': %lu samples, %lu stacks, %lu pcs in %zu files, "
	       "%lu threads, %llu bytes\n",
	       argv[optind], nsamples, nstacks, npcs, nmaps, nthreads, (unsigned long long)bytes);
	addrspace_release(&as);
	module_cache_free(mc);
	free(maps);
	free(pool);
	return 0;
}
