/* SPDX-License-Identifier: MIT */
/*
 * Test helper: capture what the code under test prints on stderr, to check
 * that a diagnostic is printed once and says what it should.  Single
 * capture at a time; not thread-safe.
 */
#ifndef XPROF_TESTS_UNIT_STDERR_CAPTURE_H
#define XPROF_TESTS_UNIT_STDERR_CAPTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cap_saved_fd = -1;
static FILE *cap_file;
static char cap_buf[16384];

/* Start sending stderr to a temporary file. */
static inline void cap_begin(void)
{
	fflush(stderr);
	cap_file = tmpfile();
	if (!cap_file)
		abort();
	cap_saved_fd = dup(2);
	dup2(fileno(cap_file), 2);
}

/* Restore stderr; return what was printed (NUL-terminated, possibly cut). */
static inline const char *cap_end(void)
{
	size_t n;

	fflush(stderr);
	dup2(cap_saved_fd, 2);
	close(cap_saved_fd);
	rewind(cap_file);
	n = fread(cap_buf, 1, sizeof(cap_buf) - 1, cap_file);
	cap_buf[n] = 0;
	fclose(cap_file);
	return cap_buf;
}

static inline unsigned int cap_lines(const char *s)
{
	unsigned int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

#endif
