/* SPDX-License-Identifier: MIT */
/* File identities (fileid.h): their names, and SHA-256 after FIPS 180-4. */
#include "fileid.h"

#include <stdio.h>
#include <string.h>

static void put_hex(char *buf, size_t len, const char *prefix, const uint8_t *b, size_t n)
{
	size_t i, at = (size_t)snprintf(buf, len, "%s", prefix);

	for (i = 0; i < n && at + 2 < len; i++, at += 2)
		snprintf(buf + at, 3, "%02x", b[i]);
}

void xp_file_id_name(const struct xp_file_id *id, char *buf, size_t len)
{
	static const char *const prefix[] = {"", "go-", "sha256-"};

	if (!len)
		return;
	buf[0] = 0;
	if (!id->len || id->kind >= sizeof(prefix) / sizeof(prefix[0]))
		return;
	put_hex(buf, len, prefix[id->kind], id->bytes, id->len);
}

void xp_file_id_describe(const struct xp_file_id *id, char *buf, size_t len)
{
	size_t i, at;

	if (!len)
		return;
	buf[0] = 0;
	if (!id->len)
		return;
	switch (id->kind) {
	case XP_FILE_ID_GNU:
		put_hex(buf, len, "GNU build-id ", id->bytes, id->len);
		break;
	case XP_FILE_ID_GO:
		at = (size_t)snprintf(buf, len, "Go build ID ");
		for (i = 0; i < id->len && at + 1 < len; i++)
			buf[at++] =
			    id->bytes[i] >= 0x20 && id->bytes[i] < 0x7f ? (char)id->bytes[i] : '?';
		if (at < len)
			buf[at] = 0;
		break;
	case XP_FILE_ID_SHA256:
		put_hex(buf, len, "SHA-256 ", id->bytes, id->len);
		break;
	}
}

int xp_file_id_equal(const struct xp_file_id *a, const struct xp_file_id *b)
{
	return a->len && a->kind == b->kind && a->len == b->len &&
	       !memcmp(a->bytes, b->bytes, a->len);
}

/* ---- SHA-256 (FIPS 180-4, section 6.2) ---------------------------------- */

static const uint32_t sha256_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static inline uint32_t ror32(uint32_t x, unsigned int n)
{
	return (x >> n) | (x << (32 - n));
}

/* One 64-byte block @p into the state @h. */
static void sha256_block(uint32_t h[8], const uint8_t *p)
{
	uint32_t w[64], a, b, c, d, e, f, g, k, t1, t2;
	unsigned int i;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (i = 16; i < 64; i++)
		w[i] = (ror32(w[i - 2], 17) ^ ror32(w[i - 2], 19) ^ (w[i - 2] >> 10)) + w[i - 7] +
		       (ror32(w[i - 15], 7) ^ ror32(w[i - 15], 18) ^ (w[i - 15] >> 3)) + w[i - 16];
	a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
	for (i = 0; i < 64; i++) {
		t1 = k + (ror32(e, 6) ^ ror32(e, 11) ^ ror32(e, 25)) + ((e & f) ^ (~e & g)) +
		     sha256_k[i] + w[i];
		t2 = (ror32(a, 2) ^ ror32(a, 13) ^ ror32(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
		k = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
	}
	h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += k;
}

void xp_sha256(const void *data, size_t len, uint8_t out[XP_SHA256_LEN])
{
	uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
			 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
	const uint8_t *p = data;
	uint64_t bits = (uint64_t)len * 8;
	uint8_t tail[128];
	size_t rest, n, i;

	for (n = len; n >= 64; n -= 64, p += 64)
		sha256_block(h, p);
	/* The last bytes, a 1 bit, zeros, and the length in bits (big-endian). */
	rest = n;
	memcpy(tail, p, rest);
	tail[rest++] = 0x80;
	n = rest <= 56 ? 64 : 128;
	memset(tail + rest, 0, n - rest);
	for (i = 0; i < 8; i++)
		tail[n - 1 - i] = (uint8_t)(bits >> (8 * i));
	for (i = 0; i < n; i += 64)
		sha256_block(h, tail + i);
	for (i = 0; i < 8; i++) {
		out[4 * i] = (uint8_t)(h[i] >> 24);
		out[4 * i + 1] = (uint8_t)(h[i] >> 16);
		out[4 * i + 2] = (uint8_t)(h[i] >> 8);
		out[4 * i + 3] = (uint8_t)h[i];
	}
}
