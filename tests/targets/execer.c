/* SPDX-License-Identifier: MIT */
/*
 * execer: a chain of execs in one process, for following images.
 *
 * "execer [-d DIR] N [SECONDS]": the process runs N + 1 images one after
 * the other, all of this program, without forking.  An image with N > 0
 * computes for HOP_MS (50) ms of its own CPU time, in odd_work when N is odd
 * and in even_work when N is even, then execs the next image with N - 1.
 * The image with N == 0 computes for SECONDS (default 1) in final_work and
 * prints the result.  With -d, the next image is DIR/step-<NN> (NN = N - 1,
 * two digits), which the test makes a symbolic link to this program, so
 * every image has a comm of its own ("step-07", the name the kernel takes
 * from the executed path); without -d, it is this program again (through
 * /proc/self/exe), and every image is "execer".
 * Truth: the samples of the image started as step-<K> are all in odd_work
 * (K odd) or even_work (K even), or in final_work for step-00, apart from
 * the few of its start-up (the dynamic loader, libc's init); a sample of one
 * image put under another image's name is in the wrong function.
 *
 * Each image checks every unit it computes against the reference value of
 * the first image, passed down the chain in argv, so a register or memory
 * corruption anywhere in the chain shows up in the last line.
 *
 * Usage: execer [-d DIR] N [SECONDS]        N from 0 to 99
 * Output, from the last image only:
 *   execer: hops=<N> unit=<hex> mismatches=0
 * Exit status 0, or 1 if a unit computed a different value, 127 if an
 * exec failed.
 * Readiness: one line, role "final", when the last image starts its work.
 */
#include "target.h"

#include <inttypes.h>
#include <limits.h>

#define HOP_SECONDS 0.050
#define MAX_HOPS    99

static unsigned long mismatches;
static uint64_t ref;

TGT_NOINLINE void odd_work(double seconds);
TGT_NOINLINE void even_work(double seconds);
TGT_NOINLINE void final_work(double seconds);

#define COMPUTE(seconds)                                                                           \
	do {                                                                                       \
		double end_ = tgt_clock(CLOCK_PROCESS_CPUTIME_ID) + (seconds);                     \
		unsigned int n_ = 0;                                                               \
		uint64_t x;                                                                        \
		for (;;) {                                                                         \
			x = 0xec;                                                                  \
			TGT_MIX(x, TGT_UNIT_ITERS);                                                \
			TGT_CHECK(&ref, x, mismatches);                                            \
			if ((++n_ & 15) == 0 && tgt_clock(CLOCK_PROCESS_CPUTIME_ID) >= end_)       \
				break;                                                             \
		}                                                                                  \
	} while (0)

void odd_work(double seconds)
{
	COMPUTE(seconds);
}

void even_work(double seconds)
{
	COMPUTE(seconds);
}

void final_work(double seconds)
{
	COMPUTE(seconds);
}

static void usage(void)
{
	tgt_die("execer", "usage: execer [-d DIR] N [SECONDS]");
}

int main(int argc, char **argv)
{
	char next[PATH_MAX], n_arg[16], ref_arg[32], bad_arg[32], total_arg[16], *nargv[12];
	const char *dir = NULL, *seconds_arg = "1";
	long n, total, i = 1, k = 0;
	ssize_t len;

	if (i + 1 < argc && !strcmp(argv[i], "-d")) {
		dir = argv[i + 1];
		i += 2;
	}
	if (i >= argc)
		usage();
	n = tgt_long_arg("execer", argv[i++], 0, MAX_HOPS);
	total = n;
	if (i < argc && strcmp(argv[i], "--chain"))
		seconds_arg = argv[i++];
	/* Internal, from the previous image: --chain TOTAL REF MISMATCHES. */
	if (i < argc) {
		if (argc - i != 4 || strcmp(argv[i], "--chain"))
			usage();
		total = tgt_long_arg("execer", argv[i + 1], n, MAX_HOPS);
		ref = strtoull(argv[i + 2], NULL, 16);
		mismatches = strtoul(argv[i + 3], NULL, 10);
	}
	tgt_seconds_arg("execer", seconds_arg);

	if (n == 0) {
		tgt_ready("execer", "final");
		final_work(tgt_seconds_arg("execer", seconds_arg));
		printf("execer: hops=%ld unit=%016" PRIx64 " mismatches=%lu\n", total, ref,
		       mismatches);
		return mismatches ? 1 : 0;
	}
	if (n & 1)
		odd_work(HOP_SECONDS);
	else
		even_work(HOP_SECONDS);

	if (dir) {
		snprintf(next, sizeof(next), "%s/step-%02ld", dir, n - 1);
	} else {
		len = readlink("/proc/self/exe", next, sizeof(next) - 1);
		if (len < 0) {
			fprintf(stderr, "execer: readlink /proc/self/exe: %s\n", strerror(errno));
			return 127;
		}
		next[len] = 0;
	}
	snprintf(n_arg, sizeof(n_arg), "%ld", n - 1);
	snprintf(total_arg, sizeof(total_arg), "%ld", total);
	snprintf(ref_arg, sizeof(ref_arg), "%016" PRIx64, ref);
	snprintf(bad_arg, sizeof(bad_arg), "%lu", mismatches);
	nargv[k++] = next;
	if (dir) {
		nargv[k++] = "-d";
		nargv[k++] = (char *)dir;
	}
	nargv[k++] = n_arg;
	nargv[k++] = (char *)seconds_arg;
	nargv[k++] = "--chain";
	nargv[k++] = total_arg;
	nargv[k++] = ref_arg;
	nargv[k++] = bad_arg;
	nargv[k] = NULL;
	fflush(NULL);
	execv(next, nargv);
	fprintf(stderr, "execer: cannot exec '%s': %s\n", next, strerror(errno));
	return 127;
}
