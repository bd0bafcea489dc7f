/* SPDX-License-Identifier: MIT */
/*
 * Diagnostics shared by every part of xprof: errors, warnings, debug output
 * gated by -v, and XP_BUG for broken invariants.  Messages go to stderr with
 * the "xprof: " prefix because a launched command shares that stream.  This
 * file names the exit codes but does not decide them; only cmd/ and main.c
 * do, and running out of memory (exit 1).
 */
#ifndef XPROF_LIB_ERR_H
#define XPROF_LIB_ERR_H

#include <stdarg.h>

/* xprof's exit statuses (record also passes on the command's own). */
enum xp_exit {
	XP_EXIT_OK = 0,
	XP_EXIT_FAIL = 1,     /* an error, said in one "xprof: error:" line */
	XP_EXIT_USAGE = 2,    /* a bad command line */
	XP_EXIT_NOEXEC = 127, /* record: the command could not be run */
};

#define XP_FMT(a, b) __attribute__((format(printf, a, b)))

/* -v count and -q; set by main.c before a command runs. */
extern int xp_verbosity;
extern int xp_quiet;

/* "xprof: error: ..." on stderr; always returns -1 so "return xp_error()" works. */
int xp_error(const char *fmt, ...) XP_FMT(1, 2);
/* "xprof: warning: ..." on stderr (suppressed by nothing: warnings matter). */
void xp_warn(const char *fmt, ...) XP_FMT(1, 2);
/* "hint: ..." line following an error. */
void xp_hint(const char *fmt, ...) XP_FMT(1, 2);
/* Plain "xprof: ..." informational line, suppressed by -q. */
void xp_info(const char *fmt, ...) XP_FMT(1, 2);
/* Debug line printed when -v was given at least @level times. */
void xp_debug(int level, const char *fmt, ...) XP_FMT(2, 3);
/* Error, then exit(@code).  Only for cmd/ and main.c, never while attached. */
__attribute__((noreturn)) void xp_die(int code, const char *fmt, ...) XP_FMT(2, 3);

__attribute__((noreturn)) void xp_bug(const char *file, int line, const char *what);
#define XP_BUG(what) xp_bug(__FILE__, __LINE__, (what))

/*
 * Allocation that never returns NULL: out of memory prints one error line
 * and exits 1 (exit(), so atexit handlers run: the data file writer's puts
 * what was flushed in place).
 */
void *xp_malloc(unsigned long size);
void *xp_calloc(unsigned long nmemb, unsigned long size);
void *xp_realloc(void *p, unsigned long size);
/* Grow *@p (element size @elem) so that it holds at least @need elements. */
void xp_grow(void **p, unsigned long *alloc, unsigned long need, unsigned long elem);
char *xp_strdup(const char *s);
/*
 * free() each pointer given, NULL ones included: the tail of a destructor
 * that owns many plain buffers, in one statement.  Const pointers need a
 * cast, as they would for free().
 */
void xp_free_n(void *const *ptrs, unsigned long n);
#define XP_FREE_ALL(...)                                                                           \
	xp_free_n((void *const[]){__VA_ARGS__}, sizeof((void *const[]){__VA_ARGS__}) / sizeof(void *))

/*
 * open(@path, O_RDONLY | O_CLOEXEC), but only if it is a regular file, and
 * without ever blocking or opening anything else: paths read from a data
 * file or from /proc may name a FIFO (open would wait for a writer
 * forever), a terminal, or a device whose open has side effects.  The path
 * is looked up once (O_PATH), checked, and that same inode reopened, so it
 * cannot be swapped in between.  Returns the descriptor, or -1 with errno
 * set (EISDIR, or EINVAL for any other kind of file).  Prints nothing.
 */
int xp_open_regular(const char *path);

#endif
