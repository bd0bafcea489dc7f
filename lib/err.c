/* SPDX-License-Identifier: MIT */
/*
 * Implementation of the diagnostics in err.h, of the allocation helpers
 * that abort instead of returning NULL, and of the guarded open of files
 * named by untrusted input.  Nothing here exits with a code of its own
 * choosing except xp_die, which the caller gives a code.
 */
#include "err.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int xp_verbosity;
int xp_quiet;

static void XP_FMT(2, 0) vreport(const char *prefix, const char *fmt, va_list ap)
{
	char buf[4096], *p;

	vsnprintf(buf, sizeof(buf), fmt, ap);
	/*
	 * Subjects come from outside: paths and names read from a data file
	 * or /proc (a target chooses its own comm).  A newline would split
	 * the one-line message, an escape sequence would drive the terminal:
	 * no message has either on purpose, so print them as '?'.
	 */
	for (p = buf; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	/* One write per line keeps lines whole when interleaved with the target. */
	fprintf(stderr, "%s%s\n", prefix, buf);
}

/*
 * vreport(@prefix, @fmt, ...) from a variadic function whose last named
 * parameter is @fmt: va_start can only be called there.
 */
#define ERR_REPORT(prefix, fmt)                                                                    \
	do {                                                                                       \
		va_list ap;                                                                        \
		va_start(ap, fmt);                                                                 \
		vreport(prefix, fmt, ap);                                                          \
		va_end(ap);                                                                        \
	} while (0)

int xp_error(const char *fmt, ...)
{
	ERR_REPORT("xprof: error: ", fmt);
	return -1;
}

void xp_warn(const char *fmt, ...)
{
	ERR_REPORT("xprof: warning: ", fmt);
}

void xp_hint(const char *fmt, ...)
{
	ERR_REPORT("hint: ", fmt);
}

void xp_info(const char *fmt, ...)
{
	if (xp_quiet)
		return;
	ERR_REPORT("xprof: ", fmt);
}

void xp_debug(int level, const char *fmt, ...)
{
	if (xp_verbosity < level)
		return;
	ERR_REPORT("xprof: debug: ", fmt);
}

void xp_die(int code, const char *fmt, ...)
{
	ERR_REPORT("xprof: error: ", fmt);
	exit(code);
}

void xp_bug(const char *file, int line, const char *what)
{
	fprintf(stderr, "xprof: BUG: %s:%d: %s\n", file, line, what);
	abort();
}

#ifdef XPROF_TEST_HOOKS
/*
 * XPROF_TEST_FAIL_ALLOC=N: the Nth allocation through the functions below
 * fails as if memory had run out, for the tests of that path (t9006).
 * Only in builds with -DXPROF_TEST_HOOKS=ON (scripts/test.sh's): any other
 * build ignores the variable.
 */
static bool err_alloc_fails(void)
{
	static long left = -1;

	if (left < 0) {
		const char *e = getenv("XPROF_TEST_FAIL_ALLOC");

		left = e ? atol(e) : 0;
		if (left < 0)
			left = 0;
	}
	return left > 0 && --left == 0;
}
#else
static bool err_alloc_fails(void)
{
	return false;
}
#endif

/*
 * Out of memory is an error like another (exit 1), not a crash: exit()
 * lets the data file writer put what it flushed in place (datafile.h).
 */
static void *err_check(void *p)
{
	if (!p) {
		fputs("xprof: error: out of memory\n", stderr);
		exit(XP_EXIT_FAIL);
	}
	return p;
}

void *xp_malloc(unsigned long size)
{
	return err_check(err_alloc_fails() ? NULL : malloc(size ? size : 1));
}

void *xp_calloc(unsigned long nmemb, unsigned long size)
{
	return err_check(err_alloc_fails() ? NULL : calloc(nmemb ? nmemb : 1, size ? size : 1));
}

void *xp_realloc(void *p, unsigned long size)
{
	return err_check(err_alloc_fails() ? NULL : realloc(p, size ? size : 1));
}

void xp_free_n(void *const *ptrs, unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		free(ptrs[i]);
}

void xp_grow(void **p, unsigned long *alloc, unsigned long need, unsigned long elem)
{
	unsigned long n = *alloc;

	if (need <= n)
		return;
	if (n < 16)
		n = 16;
	while (n < need)
		n = n / 2 * 3 + 16;
	if (n > ((unsigned long)-1) / elem)
		XP_BUG("allocation size overflow");
	*p = xp_realloc(*p, n * elem);
	*alloc = n;
}

char *xp_strdup(const char *s)
{
	return err_check(err_alloc_fails() ? NULL : strdup(s ? s : ""));
}

int xp_open_regular(const char *path)
{
	struct stat st, st2;
	char proc[64];
	int pfd, fd, e;

	pfd = open(path, O_PATH | O_CLOEXEC);
	if (pfd < 0)
		return -1;
	if (fstat(pfd, &st)) {
		e = errno;
		close(pfd);
		errno = e;
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		close(pfd);
		errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
		return -1;
	}
	/* Reopen the inode just checked, not whatever the path names by now. */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	fd = open(proc, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		/* No /proc: open the path again, harmlessly, and check it is the same file. */
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
		if (fd >= 0 &&
		    (fstat(fd, &st2) || st2.st_dev != st.st_dev || st2.st_ino != st.st_ino)) {
			close(fd);
			fd = -1;
			errno = EINVAL;
		}
	}
	e = errno;
	close(pfd);
	errno = e;
	return fd;
}
