/* SPDX-License-Identifier: MIT */
/*
 * Canned memory images of a process, for the interpreter readers' unit
 * test (test_interp.c) and fuzz target (fuzz_interp.c): a few regions of
 * bytes at target addresses, the runtime's address and version, the
 * thread to read and where its stack copy lies.  On disk (tests/data/
 * interp/NAME.img, the fuzzer's seeds): "XPIMG1\0\0", u32 version, u32 tid,
 * u64 runtime, u64 stack address, u32 stack length, then regions, each
 * u64 address, u32 length and the bytes; little-endian.  Parsing is
 * bounds-checked: the fuzzer feeds it anything.
 */
#ifndef XPROF_TESTS_UNIT_INTERP_IMAGE_H
#define XPROF_TESTS_UNIT_INTERP_IMAGE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#define IMG_REGIONS 64

struct img_region {
	uint64_t addr;
	uint32_t len;
	uint8_t *b;
	int owned;
};

struct img {
	uint32_t version;
	uint32_t tid;
	uint64_t runtime, stack_addr;
	uint32_t stack_len;
	struct img_region r[IMG_REGIONS];
	unsigned int n;
};

/* interp_mem's read: what the regions hold at @addr, short at a region's end. */
static inline long img_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct img *im = ctx;
	unsigned int i;

	for (i = 0; i < im->n; i++) {
		const struct img_region *r = &im->r[i];
		uint64_t off = addr - r->addr;

		if (addr >= r->addr && off < r->len) {
			size_t n = r->len - off < len ? (size_t)(r->len - off) : len;

			memcpy(buf, r->b + off, n);
			return (long)n;
		}
	}
	return -1;
}

/* The region holding @addr, or NULL. */
static inline uint8_t *img_at(struct img *im, uint64_t addr, size_t len)
{
	unsigned int i;

	for (i = 0; i < im->n; i++) {
		struct img_region *r = &im->r[i];

		if (addr >= r->addr && addr - r->addr <= r->len && r->len - (addr - r->addr) >= len)
			return r->b + (addr - r->addr);
	}
	return NULL;
}

/* A new zeroed region of @len bytes at @addr. */
static inline void img_region(struct img *im, uint64_t addr, uint32_t len)
{
	if (im->n == IMG_REGIONS)
		abort();
	im->r[im->n++] = (struct img_region){addr, len, calloc(1, len + 1), 1};
}

static inline void img_put(struct img *im, uint64_t addr, const void *v, size_t len)
{
	uint8_t *p = img_at(im, addr, len);

	if (!p)
		abort();
	memcpy(p, v, len);
}

static inline void img_put64(struct img *im, uint64_t addr, uint64_t v)
{
	img_put(im, addr, &v, 8);
}

static inline void img_put32(struct img *im, uint64_t addr, uint32_t v)
{
	img_put(im, addr, &v, 4);
}

static inline void img_free(struct img *im)
{
	unsigned int i;

	for (i = 0; i < im->n; i++)
		if (im->r[i].owned)
			free(im->r[i].b);
	im->n = 0;
}

static inline uint64_t img_le(const uint8_t *p, unsigned int n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

/* Parse @len bytes at @data; the regions point into @data.  0, or -1. */
static inline int img_parse(const uint8_t *data, size_t len, struct img *im)
{
	size_t off = 36;

	memset(im, 0, sizeof(*im));
	if (len < off || memcmp(data, "XPIMG1\0\0", 8))
		return -1;
	im->version = (uint32_t)img_le(data + 8, 4);
	im->tid = (uint32_t)img_le(data + 12, 4);
	im->runtime = img_le(data + 16, 8);
	im->stack_addr = img_le(data + 24, 8);
	im->stack_len = (uint32_t)img_le(data + 32, 4);
	while (len - off >= 12 && im->n < IMG_REGIONS) {
		uint64_t addr = img_le(data + off, 8);
		uint32_t n = (uint32_t)img_le(data + off + 8, 4);

		off += 12;
		if (n > len - off)
			return -1;
		im->r[im->n++] = (struct img_region){addr, n, (uint8_t *)data + off, 0};
		off += n;
	}
	return 0;
}

static inline void img_le_put(FILE *f, uint64_t v, unsigned int n)
{
	while (n--) {
		putc((int)(v & 0xff), f);
		v >>= 8;
	}
}

static inline void img_write(const struct img *im, FILE *f)
{
	unsigned int i;

	fwrite("XPIMG1\0\0", 1, 8, f);
	img_le_put(f, im->version, 4);
	img_le_put(f, im->tid, 4);
	img_le_put(f, im->runtime, 8);
	img_le_put(f, im->stack_addr, 8);
	img_le_put(f, im->stack_len, 4);
	for (i = 0; i < im->n; i++) {
		img_le_put(f, im->r[i].addr, 8);
		img_le_put(f, im->r[i].len, 4);
		fwrite(im->r[i].b, 1, im->r[i].len, f);
	}
}

#endif
