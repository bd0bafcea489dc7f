/* SPDX-License-Identifier: MIT */
/*
 * faultmix: a known answer for where the CPU time goes between user code and
 * page faults, the kernel entry that no system call shows.  main -> run ->
 * {compute, touch}: compute() burns about BURST microseconds of CPU time (3
 * by default), touch() writes one byte to a page not touched before, which
 * the kernel allocates and zeroes in the fault, and run() alternates them
 * until SECONDS of its thread's CPU time (3).  The pages come from a 16 MiB
 * region without huge pages; once all are touched, touch() gives them back
 * (madvise MADV_DONTNEED, inside touch()) and starts over.
 *
 * It measures its own split as sysmix does (CLOCK_MONOTONIC, read in the
 * vDSO: no kernel entry of its own): a turn much longer than the usual one
 * was interrupted and is left out, except for the time of the madvise,
 * which is counted in touch() always.  The truth printed is the share of
 * the kept time spent in touch(); a sampling profiler should find that share
 * of its samples in touch() (the faulting store, or the kernel below it).
 * It also prints the page faults its thread took per touch (getrusage), 1
 * when every touch entered the kernel.
 *
 * Usage: faultmix [-u BURST_US] [SECONDS]
 * Prints one line at the end:
 *   faultmix: fault_share=<percent> burst_us=<measured> touches=<n> left_out=<n>
 *   faults_per_touch=<ratio> mismatches=0
 * and exits 0, or 1 if a unit computed a different value or a page read back
 * other than written.  Readiness: one line, role "work", once the
 * alternation starts.
 */
#include "target.h"

#include <sys/mman.h>
#include <sys/resource.h>

#define FAULTMIX_REGION (16ul << 20)
#define FAULTMIX_PAGE	4096ul

static uint64_t ref;
static unsigned long mismatches;
static unsigned int iters = 100;
static unsigned char *region;
static unsigned long next_page;
static double recycle_ns; /* time touch() spent giving the pages back, for run() */

TGT_NOINLINE uint64_t compute(uint64_t seed);
TGT_NOINLINE void touch(uint64_t v);
TGT_NOINLINE double run(double seconds, unsigned long *touches, unsigned long *left_out);

uint64_t compute(uint64_t seed)
{
	TGT_MIX(seed, iters);
	return seed;
}

static double mono_ns(void)
{
	return tgt_clock(CLOCK_MONOTONIC) * 1e9;
}

/* One store to a fresh page: the time in touch() is the time in its fault. */
void touch(uint64_t v)
{
	unsigned char *p;

	if (next_page == FAULTMIX_REGION / FAULTMIX_PAGE) {
		double t0 = mono_ns();

		if (madvise(region, FAULTMIX_REGION, MADV_DONTNEED))
			tgt_die("faultmix", "madvise MADV_DONTNEED failed");
		next_page = 0;
		recycle_ns += mono_ns() - t0;
	}
	p = region + next_page++ * FAULTMIX_PAGE;
	*(volatile unsigned char *)p = (unsigned char)(v | 1);
	if (*(volatile unsigned char *)p != (unsigned char)(v | 1) || p[FAULTMIX_PAGE - 1])
		mismatches++;
}

static double thread_ns(void)
{
	return tgt_clock(CLOCK_THREAD_CPUTIME_ID) * 1e9;
}

static long thread_faults(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		tgt_die("faultmix", "getrusage failed");
	return ru.ru_minflt + ru.ru_majflt;
}

/* Iterations of compute() that take about @us microseconds of CPU time. */
static void calibrate(double us)
{
	double t0, t1;
	unsigned int i;

	iters = 1000;
	t0 = thread_ns();
	for (i = 0; i < 200; i++)
		TGT_CHECK(&ref, compute(0x5eed), mismatches);
	t1 = thread_ns();
	iters = (unsigned int)(us * 1000.0 / ((t1 - t0) / 200.0 / 1000.0));
	if (!iters)
		iters = 1;
	ref = 0;
}

/*
 * Alternate until @seconds of this thread's CPU time (checked every 1024
 * turns); the number of turns in *@touches, of those left out in
 * *@left_out.  A turn is kept if, its madvise aside, it took at most
 * FAULTMIX_SLACK_NS more than the usual turn (as sysmix's run()).  Returns
 * the share of the kept time spent in touch(), in percent.
 */
#define FAULTMIX_SLACK_NS 15000.0
double run(double seconds, unsigned long *touches, unsigned long *left_out)
{
	double cpu0 = thread_ns(), usual = 0, in_touch = 0, all = 0, t0, t1, t2, rec;
	unsigned long n = 0, out = 0, streak = 0;

	t0 = mono_ns();
	for (;;) {
		TGT_CHECK(&ref, compute(0x5eed), mismatches);
		t1 = mono_ns();
		recycle_ns = 0;
		touch(n);
		t2 = mono_ns();
		rec = recycle_ns;
		in_touch += rec;
		all += rec;
		if (n < 256 || t2 - t0 - rec <= usual + FAULTMIX_SLACK_NS || streak >= 64) {
			in_touch += t2 - t1 - rec;
			all += t2 - t0 - rec;
			usual =
			    n < 256 ? all / (double)(n + 1) : usual + (t2 - t0 - rec - usual) / 64;
			streak = 0;
		} else {
			out++;
			streak++;
		}
		t0 = t2;
		if ((++n & 1023) == 0 && thread_ns() - cpu0 >= seconds * 1e9)
			break;
	}
	*touches = n;
	*left_out = out;
	return all > 0 ? 100.0 * in_touch / all : 0;
}

int main(int argc, char **argv)
{
	double seconds = 3, burst = 3, share, b0, b1;
	unsigned long touches = 0, left_out = 0;
	long f0;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-u") && i + 1 < argc)
			burst = (double)tgt_long_arg("faultmix", argv[++i], 1, 1000000);
		else if (i == argc - 1)
			seconds = tgt_seconds_arg("faultmix", argv[i]);
		else
			tgt_die("faultmix", "usage: faultmix [-u BURST_US] [SECONDS]");
	}
	region =
	    mmap(NULL, FAULTMIX_REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED)
		tgt_die("faultmix", "cannot map 16 MiB");
	/* One fault per page, not one per 2 MiB. */
	(void)madvise(region, FAULTMIX_REGION, MADV_NOHUGEPAGE);
	calibrate(burst);
	b0 = thread_ns();
	TGT_CHECK(&ref, compute(0x5eed), mismatches);
	b1 = thread_ns();
	tgt_ready("faultmix", "work");
	f0 = thread_faults();
	share = run(seconds, &touches, &left_out);
	printf("faultmix: fault_share=%.1f burst_us=%.1f touches=%lu left_out=%lu "
	       "faults_per_touch=%.2f mismatches=%lu\n",
	       share, (b1 - b0) / 1000.0, touches, left_out,
	       touches ? (double)(thread_faults() - f0) / (double)touches : 0, mismatches);
	return mismatches ? 1 : 0;
}
