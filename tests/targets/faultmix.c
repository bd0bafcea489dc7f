/* SPDX-License-Identifier: MIT */
/*
 * faultmix: a known answer for where the CPU time goes between user code and
 * page faults, the kernel entry that no system call shows.  main -> run ->
 * {compute, touch} (mix.h): compute() burns about BURST microseconds of
 * CPU time (3 by default), touch() writes one byte to a page not touched
 * before, which the kernel allocates and zeroes in the fault, and run()
 * alternates them until SECONDS of its thread's CPU time (3).  The pages
 * come from a 16 MiB region without huge pages; once all are touched,
 * touch() gives them back (madvise MADV_DONTNEED, inside touch()) and
 * starts over.
 *
 * The truth printed is the share of the kept time spent in touch(), the
 * time of the madvise counted always; a sampling profiler should find
 * that share of its samples in touch() (the faulting store, or the kernel
 * below it).  It also prints the page faults its thread took per touch
 * (getrusage), 1 when every touch entered the kernel.
 *
 * Usage: faultmix [-u BURST_US] [SECONDS]
 * Prints one line at the end:
 *   faultmix: fault_share=<percent> burst_us=<measured> touches=<n> left_out=<n>
 *   faults_per_touch=<ratio> mismatches=0
 * and exits 0, or 1 if a unit computed a different value or a page read back
 * other than written.  Readiness: one line, role "work", once the
 * alternation starts.
 */
#include "mix.h"

#include <sys/mman.h>
#include <sys/resource.h>

#define FAULTMIX_REGION (16ul << 20)
#define FAULTMIX_PAGE	4096ul

static unsigned char *region;
static unsigned long next_page;

TGT_NOINLINE double touch(uint64_t v);

/*
 * One store to a fresh page: the time in touch() is the time in its fault.
 * Returns the time spent giving the pages back, if it did.
 */
double touch(uint64_t v)
{
	double recycle = 0;
	unsigned char *p;

	if (next_page == FAULTMIX_REGION / FAULTMIX_PAGE) {
		double t0 = mix_mono_ns();

		if (madvise(region, FAULTMIX_REGION, MADV_DONTNEED))
			tgt_die("faultmix", "madvise MADV_DONTNEED failed");
		next_page = 0;
		recycle = mix_mono_ns() - t0;
	}
	p = region + next_page++ * FAULTMIX_PAGE;
	*(volatile unsigned char *)p = (unsigned char)(v | 1);
	if (*(volatile unsigned char *)p != (unsigned char)(v | 1) || p[FAULTMIX_PAGE - 1])
		mix_mismatches++;
	return recycle;
}

static long thread_faults(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		tgt_die("faultmix", "getrusage failed");
	return ru.ru_minflt + ru.ru_majflt;
}

int main(int argc, char **argv)
{
	double seconds, burst, share, burst_us;
	unsigned long touches = 0, left_out = 0;
	long f0;

	mix_args("faultmix", argc, argv, &burst, &seconds);
	region =
	    mmap(NULL, FAULTMIX_REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED)
		tgt_die("faultmix", "cannot map 16 MiB");
	/* One fault per page, not one per 2 MiB. */
	(void)madvise(region, FAULTMIX_REGION, MADV_NOHUGEPAGE);
	burst_us = mix_prepare("faultmix", burst);
	f0 = thread_faults();
	share = run(seconds, touch, &touches, &left_out);
	printf("faultmix: fault_share=%.1f burst_us=%.1f touches=%lu left_out=%lu "
	       "faults_per_touch=%.2f mismatches=%lu\n",
	       share, burst_us, touches, left_out,
	       touches ? (double)(thread_faults() - f0) / (double)touches : 0, mix_mismatches);
	return mix_mismatches ? 1 : 0;
}
