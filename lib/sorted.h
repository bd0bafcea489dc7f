/* SPDX-License-Identifier: MIT */
/*
 * Sorted arrays, as every index of xprof keeps them (maps by start,
 * symbols by address, threads by tid, ...): sorting that takes an empty
 * array as it comes, and the one binary search they all use.
 */
#ifndef XPROF_LIB_SORTED_H
#define XPROF_LIB_SORTED_H

#include <stddef.h>
#include <stdlib.h>

/*
 * qsort that takes an empty array as it may be, NULL: glibc declares
 * qsort's array nonnull, and UBSan aborts on qsort(NULL, 0, ...).
 */
static inline void xp_sort(void *base, size_t n, size_t size,
			   int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

/* The same for qsort_r (@arg passed to every @cmp). */
static inline void xp_sort_r(void *base, size_t n, size_t size,
			     int (*cmp)(const void *, const void *, void *), void *arg)
{
	if (n > 1)
		qsort_r(base, n, size, cmp, arg);
}

/*
 * The partition point of the index range [@from, @to): the first index
 * @i for which the condition @before (an expression of @i: "element @i
 * comes before what is looked for") is false, @to if none.  @before must
 * hold for a prefix of the range and fail for the rest, as it does on an
 * array sorted for it.  With "a[i].start <= addr" it is one past the last
 * element starting at or before addr; with "a[i].key < key", the first
 * element not below key (C++'s lower_bound).
 */
#define XP_PARTITION_POINT(from, to, i, before)                                                    \
	({                                                                                         \
		size_t xp_lo_ = (from), xp_hi_ = (to);                                             \
		while (xp_lo_ < xp_hi_) {                                                          \
			size_t i = xp_lo_ + (xp_hi_ - xp_lo_) / 2;                                 \
			if (before)                                                                \
				xp_lo_ = i + 1;                                                    \
			else                                                                       \
				xp_hi_ = i;                                                        \
		}                                                                                  \
		xp_lo_;                                                                            \
	})

#endif
