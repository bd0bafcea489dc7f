/* SPDX-License-Identifier: MIT */
/*
 * Hash helpers for xprof's open-addressing tables: FNV-1a to fold bytes
 * into 64 bits and a finalizer (MurmurHash3's fmix64 step) to spread them
 * over the low bits used as a table index.  Header-only, no state, so any
 * directory may use it.  Not for anything adversarial beyond table
 * placement: a hostile data file can at worst make lookups slower.
 */
#ifndef XPROF_LIB_HASH_H
#define XPROF_LIB_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define XP_FNV_INIT 0xcbf29ce484222325ull

/* Fold @n bytes at @p into FNV-1a state @h. */
static inline uint64_t xp_fnv1a(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n--)
		h = (h ^ *b++) * 0x100000001b3ull;
	return h;
}

/* Spread the bits of @v so that its low bits make a good table index. */
static inline uint64_t xp_mix64(uint64_t v)
{
	v ^= v >> 33;
	v *= 0xff51afd7ed558ccdull;
	v ^= v >> 33;
	return v;
}

/* A string's hash, for table placement. */
static inline uint64_t xp_hash_str(const char *s)
{
	return xp_mix64(xp_fnv1a(XP_FNV_INIT, s, strlen(s)));
}

#endif
