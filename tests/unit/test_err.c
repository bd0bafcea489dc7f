/* SPDX-License-Identifier: MIT */
/*
 * lib/err.c on hostile input: messages never carry a control character
 * (newline, escape) from their subject, and xp_open_regular opens regular
 * files only, without blocking on a FIFO or opening a device.
 */
#include "err.h"

#include "stderr_capture.h"
#include "t.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static int test_message_controls(void)
{
	const char *err;

	cap_begin();
	xp_warn("cannot open '%s'", "/tmp/a\nb\033[31mc\x7f");
	xp_error("bad '%s'", "\t");
	err = cap_end();
	T_EQ_STR(err, "xprof: warning: cannot open '/tmp/a?b?[31mc?'\nxprof: error: bad '?'\n");
	return T_OK;
}

static char dir[] = "/tmp/test_err.XXXXXX";

static int path_in(char *buf, size_t len, const char *name)
{
	return snprintf(buf, len, "%s/%s", dir, name) < (int)len;
}

static int test_open_regular(void)
{
	char file[128], fifo[128], sub[128], link_file[128], link_fifo[128], missing[128];
	int fd;

	T_ASSERT(mkdtemp(dir));
	T_ASSERT(path_in(file, sizeof(file), "file") && path_in(fifo, sizeof(fifo), "fifo") &&
		 path_in(sub, sizeof(sub), "dir") && path_in(link_file, sizeof(link_file), "lf") &&
		 path_in(link_fifo, sizeof(link_fifo), "lp") &&
		 path_in(missing, sizeof(missing), "missing"));
	fd = open(file, O_WRONLY | O_CREAT, 0600);
	T_ASSERT(fd >= 0 && write(fd, "x", 1) == 1 && !close(fd));
	T_ASSERT(!mkfifo(fifo, 0600));
	T_ASSERT(!mkdir(sub, 0700));
	T_ASSERT(!symlink(file, link_file) && !symlink(fifo, link_fifo));

	fd = xp_open_regular(file);
	T_ASSERT(fd >= 0);
	T_ASSERT(fcntl(fd, F_GETFL) >= 0 && (fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDONLY);
	T_ASSERT(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
	fd = xp_open_regular(link_file);
	T_ASSERT(fd >= 0);
	close(fd);
	/* A FIFO without a writer: refused at once, never opened (open would block). */
	errno = 0;
	T_EQ_U64(xp_open_regular(fifo), -1);
	T_EQ_U64(errno, EINVAL);
	T_EQ_U64(xp_open_regular(link_fifo), -1);
	T_EQ_U64(errno, EINVAL);
	T_EQ_U64(xp_open_regular("/dev/null"), -1);
	T_EQ_U64(errno, EINVAL);
	T_EQ_U64(xp_open_regular(sub), -1);
	T_EQ_U64(errno, EISDIR);
	T_EQ_U64(xp_open_regular(missing), -1);
	T_EQ_U64(errno, ENOENT);

	unlink(link_fifo);
	unlink(link_file);
	unlink(fifo);
	unlink(file);
	rmdir(sub);
	rmdir(dir);
	return T_OK;
}

/* Every pointer is freed, NULL ones between them too (the sanitizer build's
 * leak check is what sees a missed one). */
static int test_free_all(void)
{
	char *a = xp_strdup("a"), *b = NULL, *c = xp_malloc(3);
	const char *d = xp_strdup("d");

	XP_FREE_ALL(a, b, c, (char *)d);
	XP_FREE_ALL(NULL);
	return T_OK;
}

T_MAIN(T_CASE(test_message_controls), T_CASE(test_open_regular), T_CASE(test_free_all))
