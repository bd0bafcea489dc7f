/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the /proc/PID/maps parser: one line through
 * procmaps_parse_line (with a tiny path buffer, to exercise truncation),
 * then the whole input as maps text into an address space (sorting,
 * overlap removal, lookups).  No module cache: no file is opened.
 */
#include "addrspace.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), path[8];
	struct addrspace as;
	struct xp_map m;
	size_t i;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (!procmaps_parse_line(text, &m, path, sizeof(path))) {
		if (m.start >= m.end || strlen(m.path) >= sizeof(path))
			abort();
	}
	addrspace_init(&as, 0, NULL);
	addrspace_load_text(&as, text);
	for (i = 0; i < as.nr; i++) {
		if (as.maps[i].start >= as.maps[i].end ||
		    (i && as.maps[i - 1].end > as.maps[i].start))
			abort();
		if (addrspace_find(&as, as.maps[i].start) != &as.maps[i] ||
		    addrspace_find(&as, as.maps[i].end - 1) != &as.maps[i])
			abort();
	}
	addrspace_release(&as);
	free(text);
	return 0;
}
