/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the demangler wrapper: the input, cut at its first
 * NUL, as a raw symbol name (a data file's JIT names and any ELF file's
 * symbols reach the demangler), with and without demangling.  The result
 * must be a string no longer than the demangler could plausibly make it.
 */
#include "symbolize/demangle.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *name = malloc(size + 1), *out;

	if (!name)
		return 0;
	memcpy(name, data, size);
	name[size] = 0;
	out = demangle_name(name, false);
	if (strlen(out) != demangle_strip_version(name))
		abort();
	free(out);
	out = demangle_name(name, true);
	free(out);
	free(name);
	return 0;
}
