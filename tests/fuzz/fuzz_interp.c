/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the interpreter frame reader (interp/python.c) on
 * canned memory images (tests/unit/interp_image.h): the image's runtime
 * opened at its version (3.13 and 3.14 through the debug offsets it
 * holds), the frames of its thread copied as in a stop, decoded and
 * placed in a made-up native stack; and the whole input as a CPython
 * location table.  The reader trusts nothing in the image: whatever it
 * holds, every read stays inside it, every chain ends, and placed frames
 * point at native frames that exist.  Seeds: tests/data/fuzz/interp/.
 */
#include "interp.h"

#include "../unit/interp_image.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t sps[] = {0x7ff000, 0x7ff400, 0x7ff800, 0x7ffc00};
	struct interp_raw_frame rf[64];
	struct interp_raw raw = {rf, 0, 64, 0, 0};
	struct interp_frame f[64];
	struct interp_mem mem;
	uint32_t next = 1, at[64], i;
	struct interp *ip;
	struct img im;
	unsigned int n, round;

	(void)interp_py_line(data, size, 1, (uint32_t)size / 2);
	if (img_parse(data, size, &im))
		return 0;
	mem = (struct interp_mem){img_read, &im, im.stack_addr, img_at(&im, im.stack_addr, 0), 0};
	if (mem.stack && img_at(&im, im.stack_addr, im.stack_len))
		mem.stack_len = im.stack_len;
	ip = interp_python_open(&mem, im.runtime, im.version, 1, &next);
	if (!ip)
		return 0;
	/* Twice: the second time from the caches (threads, code objects). */
	for (round = 0; round < 2; round++) {
		if (interp_take(ip, (pid_t)im.tid, &mem, &raw))
			break;
		if (raw.nr > raw.cap)
			abort();
		n = interp_decode(ip, &raw, &mem, round, round, f, 64);
		for (i = 0; i < n; i++)
			if (f[i].code && !interp_code(ip, f[i].code))
				abort();
		if (!interp_place(f, n, sps, 4, at))
			for (i = 0; i < n; i++)
				if (at[i] > 4)
					abort();
	}
	interp_free(ip);
	return 0;
}
