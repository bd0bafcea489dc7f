/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the target programs in tests/targets/: the readiness
 * line, strict argument parsing, clocks, and the unit of CPU work whose
 * result is known, so a target can both burn a measurable amount of time and
 * prove at the end that every unit computed the same value (a profiler that
 * corrupted a register or a stack slot shows up as a mismatch).
 *
 * Readiness protocol: when the environment variable XP_READY_FIFO names a
 * path (normally a FIFO that the test holds open read-write), a target
 * writes one line "ready <pid> <program> <role>\n" to it, in a single
 * write(2) shorter than PIPE_BUF, once its workload has started.  Tests wait
 * for that line, never for a sleep.  A process that forks or execs may write
 * more than one line (one per process); each target's header says how many.
 *
 * Everything here is static inline so each target stays one file with no
 * link-time dependencies; nothing here is part of xprof.
 */
#ifndef XPROF_TESTS_TARGETS_TARGET_H
#define XPROF_TESTS_TARGETS_TARGET_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/*
 * Functions the tests name in their assertions must keep their names and
 * their frames: no inlining, no cloning (foo.isra.0, foo.constprop.0), no
 * identical-code folding (a, b and c would become one function), no
 * IPA-derived "const" that would let GCC merge repeated calls.
 */
#define TGT_NOINLINE __attribute__((noinline, noipa))

/*
 * Iterations of the mixing loop in one unit of work: about 5-10 us on the
 * 2-vCPU build machine, short against the 1 ms sampling interval so that
 * the share of a function holds over any window of samples.
 */
#define TGT_UNIT_ITERS 2000u

static inline void tgt_die(const char *prog, const char *msg)
{
	fprintf(stderr, "%s: %s\n", prog, msg);
	exit(2);
}

/* Seconds of @clock (CLOCK_PROCESS_CPUTIME_ID, CLOCK_MONOTONIC, ...). */
static inline double tgt_clock(clockid_t clock)
{
	struct timespec ts;

	if (clock_gettime(clock, &ts))
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A positive number of seconds up to one hour; anything else is a usage error. */
static inline double tgt_seconds_arg(const char *prog, const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end || errno || !(v >= 0) || v > 3600)
		tgt_die(prog, "expected a number of seconds from 0 to 3600");
	return v;
}

/* A decimal integer in [@min, @max]; anything else is a usage error. */
static inline long tgt_long_arg(const char *prog, const char *s, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (end == s || *end || errno || v < min || v > max) {
		fprintf(stderr, "%s: expected an integer from %ld to %ld, got '%s'\n", prog, min,
			max, s);
		exit(2);
	}
	return v;
}

/*
 * Tell the test that the workload has started (see the protocol above).
 * Without XP_READY_FIFO this does nothing.  A FIFO with no reader would
 * block here: the test opens it read-write before starting the target.
 */
static inline void tgt_ready(const char *prog, const char *role)
{
	const char *path = getenv("XP_READY_FIFO");
	char line[256];
	ssize_t n;
	int fd, len;

	if (!path || !*path)
		return;
	fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		fprintf(stderr, "%s: cannot open XP_READY_FIFO '%s': %s\n", prog, path,
			strerror(errno));
		return;
	}
	len = snprintf(line, sizeof(line), "ready %ld %s %s\n", (long)getpid(), prog, role);
	do
		n = write(fd, line, (size_t)len);
	while (n < 0 && errno == EINTR);
	close(fd);
}

/*
 * The arithmetic of one unit of work: a multiply/xorshift chain that the
 * compiler cannot shorten, updating @x in place.  A macro, not an inline
 * function, on purpose: an inlined function gets a DWARF inlined-subroutine
 * entry, and a symbolizer that shows inline frames would then put
 * "tgt_mix" on top of every stack instead of the function a test names.
 */
#define TGT_MIX(x, iters)                                                                          \
	do {                                                                                       \
		unsigned int tgt_i_;                                                               \
		for (tgt_i_ = 0; tgt_i_ < (iters); tgt_i_++) {                                     \
			(x) = (x)*6364136223846793005ull + 1442695040888963407ull;                 \
			(x) ^= (x) >> 29;                                                          \
		}                                                                                  \
	} while (0)

/*
 * Record the result @r of a unit: the first one becomes the reference
 * *@ref, any later one that differs is counted in @bad.  Targets print the
 * reference and the count, which do not depend on how many units ran.  A
 * macro for the same reason as TGT_MIX.
 */
#define TGT_CHECK(ref, r, bad)                                                                     \
	do {                                                                                       \
		uint64_t tgt_r_ = (r);                                                             \
		if (!*(ref))                                                                       \
			*(ref) = tgt_r_;                                                           \
		else if (*(ref) != tgt_r_)                                                         \
			(bad)++;                                                                   \
	} while (0)

#endif
