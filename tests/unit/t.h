/* SPDX-License-Identifier: MIT */
/*
 * A tiny unit-test harness: assertions that print file:line and the failing
 * expression, and a runner that ends with "N passed, N failed".  A test is a
 * function returning T_OK, T_FAIL or T_SKIP; the first failing assertion
 * returns T_FAIL from it.
 */
#ifndef XPROF_TESTS_UNIT_T_H
#define XPROF_TESTS_UNIT_T_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T_OK   0
#define T_FAIL 1
#define T_SKIP 77

#define T_ASSERT(cond)                                                                             \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: assertion failed: %s\n", __FILE__, __LINE__,       \
				#cond);                                                            \
			return T_FAIL;                                                             \
		}                                                                                  \
	} while (0)

#define T_EQ_U64(a, b)                                                                             \
	do {                                                                                       \
		uint64_t t_a_ = (uint64_t)(a), t_b_ = (uint64_t)(b);                               \
		if (t_a_ != t_b_) {                                                                \
			fprintf(stderr, "%s:%d: %s == %s failed: 0x%" PRIx64 " (%" PRIu64          \
					") != 0x%" PRIx64 " (%" PRIu64 ")\n",                      \
				__FILE__, __LINE__, #a, #b, t_a_, t_a_, t_b_, t_b_);               \
			return T_FAIL;                                                             \
		}                                                                                  \
	} while (0)

#define T_EQ_STR(a, b)                                                                             \
	do {                                                                                       \
		const char *t_a_ = (a), *t_b_ = (b);                                               \
		if (!t_a_ || !t_b_ || strcmp(t_a_, t_b_)) {                                        \
			fprintf(stderr, "%s:%d: %s == %s failed:\n  got:      \"%s\"\n  expected: " \
					"\"%s\"\n",                                                \
				__FILE__, __LINE__, #a, #b, t_a_ ? t_a_ : "(null)",                \
				t_b_ ? t_b_ : "(null)");                                           \
			return T_FAIL;                                                             \
		}                                                                                  \
	} while (0)

struct t_case {
	const char *name;
	int (*fn)(void);
};

#define T_CASE(f) {#f, f}

/*
 * Runs every case.  Exit status: 1 if any failed; 77, which ctest reports
 * as skipped (SKIP_RETURN_CODE), if every case skipped, so a binary that
 * checked nothing never reads as passed; else 0.
 */
static inline int t_run(const struct t_case *cases, size_t n)
{
	size_t i, passed = 0, failed = 0, skipped = 0;

	for (i = 0; i < n; i++) {
		int r = cases[i].fn();

		if (r == T_OK) {
			passed++;
			printf("ok - %s\n", cases[i].name);
		} else if (r == T_SKIP) {
			skipped++;
			printf("skip - %s\n", cases[i].name);
		} else {
			failed++;
			printf("FAIL - %s\n", cases[i].name);
		}
	}
	printf("%zu passed, %zu failed, %zu skipped\n", passed, failed, skipped);
	if (failed)
		return 1;
	return passed ? 0 : T_SKIP;
}

#define T_MAIN(...)                                                                                \
	int main(void)                                                                             \
	{                                                                                          \
		static const struct t_case cases_[] = {__VA_ARGS__};                               \
		return t_run(cases_, sizeof(cases_) / sizeof(cases_[0]));                          \
	}

#endif
