/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for jitdump files: the header and every record of the
 * input through the pure parsers (debug entries too), checking that what
 * they return lies inside the input, then the input as a file through the
 * collector (pread-based reading, the code-load / debug-info pairing,
 * moves, line ranges), with sampled pcs taken from the input.
 */
#include "jitmap.h"
#include "datafile.h"
#include "stacktab.h"
#include "dataformat.h"
#include "../unit/jitsink.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void walk(const uint8_t *data, size_t size)
{
	struct jitdump_header h;
	struct jitdump_record r;
	struct jitdump_debug_entry e;
	const uint8_t *p, *end;
	size_t off;
	uint64_t i;

	if (jitdump_parse_header(data, size, &h))
		return;
	for (off = h.total_size; off < size; off += r.total_size) {
		if (jitdump_parse_record(data + off, size - off, &r))
			return;
		if (r.name && (r.name < (const char *)data ||
			       r.name + r.name_len > (const char *)data + size))
			abort();
		if (r.id != JITDUMP_CODE_DEBUG_INFO)
			continue;
		p = r.entries;
		end = r.entries + r.entries_len;
		if (end > data + size)
			abort();
		for (i = 0; i < r.nr_entries && !jitdump_next_debug_entry(&p, end, &e); i++)
			if (p > end || (e.file && e.file + e.file_len > (const char *)end))
				abort();
		if (r.total_size > size - off)
			return;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char dump[] = "/tmp/xprof-fuzz-jitdump-XXXXXX", out[] = "/tmp/xprof-fuzz-out-XXXXXX";
	const char *dumps[1] = {dump};
	uint64_t pcs[4] = {0x7f0000010004ull, 0x1000, 0, 0};
	uint8_t flags[4] = {XP_FRAME_EXACT, 0, XP_FRAME_EXACT, 0};
	struct stacktab t;
	struct df_writer *w;
	bool is_new;
	int fd;

	walk(data, size);
	if (size >= 72) {
		memcpy(&pcs[2], data + 32, 8); /* where a first load's code_addr would be */
		memcpy(&pcs[3], data + 56, 8);
	}
	fd = mkstemp(dump);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		unlink(dump);
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
		jitsink_collect_files(w, NULL, 4999999, NULL, dumps, 1, &t, 0);
		df_writer_close(w);
	}
	stacktab_release(&t);
	unlink(dump);
	unlink(out);
	return 0;
}
