/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for perf maps (any JIT writes them, and so may anyone
 * who can write /tmp): every line of the input through perfmap_parse_line,
 * checking what it accepts, then the whole input as a file through the
 * collector's streaming reader, with a few sampled pcs taken from the input
 * so that entries get written.
 */
#include "jitmap.h"
#include "datafile.h"
#include "stacktab.h"
#include "dataformat.h"
#include "../unit/jitsink.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_lines(const char *text, size_t size)
{
	size_t start = 0, i;
	struct jitmap_sym s;

	for (i = 0; i <= size; i++) {
		if (i < size && text[i] != '\n')
			continue;
		if (!perfmap_parse_line(text + start, i - start, &s)) {
			if (!s.size || s.start + s.size < s.start || !s.name_len ||
			    s.name < text + start || s.name + s.name_len > text + i ||
			    memchr(s.name, 0, s.name_len))
				abort();
		}
		start = i + 1;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char map[] = "/tmp/xprof-fuzz-perfmap-XXXXXX", out[] = "/tmp/xprof-fuzz-out-XXXXXX";
	uint64_t pcs[4] = {0x1000, 0x7f0000001004ull, 0, 0};
	uint8_t flags[4] = {XP_FRAME_EXACT, 0, XP_FRAME_EXACT, 0};
	struct stacktab t;
	struct df_writer *w;
	bool is_new;
	int fd;

	check_lines((const char *)data, size);
	if (size >= 16)
		memcpy(&pcs[2], data, 16);
	fd = mkstemp(map);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		unlink(map);
		return 0;
	}
	close(fd);
	fd = mkstemp(out);
	if (fd >= 0)
		close(fd);
	w = fd >= 0 ? df_writer_open(out, 62, 0) : NULL;
	stacktab_init(&t);
	stacktab_intern(&t, pcs, flags, 4, &is_new);
	if (w) {
		jitsink_collect_files(w, NULL, 4999999, map, NULL, 0, &t, 0);
		df_writer_close(w);
	}
	stacktab_release(&t);
	unlink(map);
	unlink(out);
	return 0;
}
