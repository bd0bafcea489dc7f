/* SPDX-License-Identifier: MIT */
/*
 * cxxnames: a real C++ program, so that the names a report demangles are
 * the ones g++ itself mangles (tests/targets/inlines.c only borrows two
 * mangled names through asm labels).  main runs rounds of ten units of
 * work in the order A B A C A B A C A B, where
 *   A = geo::Circle::area() const, called through a geo::Shape&  (50%)
 *   B = calc::Sum<unsigned long>::add(unsigned long)             (30%)
 *   C = (anonymous namespace)::spin(int)                         (20%)
 * each the leaf of its stacks (main -> round_of_ten -> X), so over any window longer than
 * a round (~0.1 ms) the three get 50%, 30% and 20% of the CPU time.
 * Built only when CMake finds a C++ compiler (scripts/deps.sh --test
 * installs g++).
 *
 * Usage: cxxnames [SECONDS]   run until SECONDS of process CPU time (1)
 * Prints one line that does not depend on the duration:
 *   cxxnames: area=<hex> add=<hex> spin=<hex> mismatches=0
 * and exits 0, or 1 if any unit computed a different value (corruption).
 * Readiness: one line, role "work", when the first round starts.
 */
#include "target.h"

#include <inttypes.h>

static uint64_t ref_area, ref_add, ref_spin;
static unsigned long mismatches;

namespace geo
{
struct Shape {
	virtual ~Shape() = default;
	virtual uint64_t area() const = 0;
};

struct Circle : Shape {
	uint64_t seed;
	explicit Circle(uint64_t s) : seed(s)
	{
	}
	TGT_NOINLINE uint64_t area() const override;
};

uint64_t Circle::area() const
{
	uint64_t x = seed;

	TGT_MIX(x, TGT_UNIT_ITERS);
	return x;
}
} /* namespace geo */

namespace calc
{
template <typename T> struct Sum {
	T total;
	TGT_NOINLINE T add(T v)
	{
		T x = v;

		TGT_MIX(x, TGT_UNIT_ITERS);
		total = x;
		return x;
	}
};
template struct Sum<unsigned long>;
} /* namespace calc */

namespace
{
TGT_NOINLINE uint64_t spin(int seed)
{
	uint64_t x = (uint64_t)seed;

	TGT_MIX(x, TGT_UNIT_ITERS);
	return x;
}
} /* namespace */

/* A reference, so that the call is virtual as far as the compiler knows. */
TGT_NOINLINE static void round_of_ten(const geo::Shape &shape, calc::Sum<unsigned long> &sum)
{
	static const char order[] = "ABACABACAB";

	for (const char *p = order; *p; p++) {
		switch (*p) {
		case 'A':
			TGT_CHECK(&ref_area, shape.area(), mismatches);
			break;
		case 'B':
			TGT_CHECK(&ref_add, sum.add(7), mismatches);
			break;
		default:
			TGT_CHECK(&ref_spin, spin(11), mismatches);
			break;
		}
	}
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? tgt_seconds_arg("cxxnames", argv[1]) : 1.0;
	geo::Circle circle(3);
	calc::Sum<unsigned long> sum{0};
	bool ready = false;

	if (argc > 2)
		tgt_die("cxxnames", "usage: cxxnames [SECONDS]");
	do {
		round_of_ten(circle, sum);
		if (!ready) {
			tgt_ready("cxxnames", "work");
			ready = true;
		}
	} while (tgt_clock(CLOCK_PROCESS_CPUTIME_ID) < secs);
	printf("cxxnames: area=%" PRIx64 " add=%" PRIx64 " spin=%" PRIx64 " mismatches=%lu\n",
	       ref_area, ref_add, ref_spin, mismatches);
	return mismatches ? 1 : 0;
}
