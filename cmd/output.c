/* SPDX-License-Identifier: MIT */
/*
 * The data file of a recording and its parts (output.h).  What goes into
 * the file is data/datafile.c's; where it goes, what becomes of the file
 * that was there, and the names of the parts are decided here.
 */
#include "output.h"
#include "arch.h"
#include "clock.h"
#include "datafile.h"
#include "err.h"
#include "sampler.h"
#include "version.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/close_range.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The output being written, for output_at_exit. */
static struct output *output_live;

static int output_write_meta(struct df_writer *w, int argc, char **argv)
{
	char host[256] = "", cmdline[4096] = "";
	size_t len = 0;
	int i;

	for (i = 0; i < argc && len + 2 < sizeof(cmdline); i++) {
		int n =
		    snprintf(cmdline + len, sizeof(cmdline) - len, "%s%s", i ? " " : "", argv[i]);

		if (n < 0)
			break;
		len += (size_t)n;
	}
	if (len >= sizeof(cmdline))
		cmdline[sizeof(cmdline) - 1] = 0;
	gethostname(host, sizeof(host) - 1);
	if (df_write_meta(w, "cmdline", cmdline) || df_write_meta(w, "hostname", host) ||
	    df_write_meta(w, "xprof_version", XPROF_VERSION))
		return -1;
	return 0;
}

/* The recording is kept: so is the earlier file, unless it was empty. */
static void output_drop_old(struct output *o)
{
	if (o->old && o->old_empty)
		unlink(o->old);
	free(o->old);
	o->old = NULL;
}

/* exit() while recording (out of memory): datafile.c writes the file out; the .old as at a close.
 */
static void output_at_exit(void)
{
	if (output_live)
		output_drop_old(output_live);
}

/*
 * Open @o->path for writing: a regular file there (through a symbolic
 * link) is first renamed to "<dest>.old", replacing an earlier one; what
 * is not a regular file (/dev/null, a FIFO) is written as it is (a
 * directory fails).  The descriptor, or -1 with errno set and the earlier
 * file back in place.
 */
static int output_create(struct output *o)
{
	char real[PATH_MAX];
	struct stat st;
	int fd, err;

	free(o->dest);
	o->dest = NULL;
	if (!stat(o->path, &st) && !S_ISREG(st.st_mode))
		return open(o->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	o->dest = xp_strdup(!lstat(o->path, &st) && S_ISLNK(st.st_mode) && realpath(o->path, real)
				? real
				: o->path);
	if (!stat(o->dest, &st)) {
		output_drop_old(o);
		o->old = xp_malloc(strlen(o->dest) + 5);
		strcpy(stpcpy(o->old, o->dest), ".old");
		o->old_empty = !st.st_size;
		if (rename(o->dest, o->old)) {
			err = errno;
			free(o->old);
			o->old = NULL;
			errno = err;
			return -1;
		}
	}
	/* 0600 as perf does: the file names the programs and arguments that ran. */
	fd = open(o->dest, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 && o->old) {
		err = errno;
		rename(o->old, o->dest);
		free(o->old);
		o->old = NULL;
		errno = err;
	}
	return fd;
}

/* Undo output_create after a failure to write the file it made. */
static void output_put_back(struct output *o)
{
	if (o->dest) {
		unlink(o->dest);
		if (o->old)
			rename(o->old, o->dest);
	}
	free(o->old);
	o->old = NULL;
}

/* A writer on a new file at @o->path with the header and meta records, or NULL (printed). */
static struct df_writer *output_start(struct output *o)
{
	struct df_writer *w;
	struct timespec now;
	int fd = output_create(o);

	if (fd < 0) {
		xp_error("cannot create '%s': %s", o->path, strerror(errno));
		return NULL;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	w = df_writer_fdopen(fd, o->path, xp_arch_host()->e_machine, xp_timespec_ns(&now));
	if (w && output_write_meta(w, o->argc, o->argv)) {
		df_writer_discard(w);
		w = NULL;
	}
	if (!w)
		output_put_back(o);
	return w;
}

int output_open(struct output *o, const char *path, int argc, char **argv)
{
	static bool registered;

	*o = (struct output){.path = path, .argc = argc, .argv = argv};
	if (!registered)
		registered = !atexit(output_at_exit);
	output_live = o;
	o->w = output_start(o);
	if (!o->w) {
		free(o->dest);
		o->dest = NULL;
		output_live = NULL;
		return -1;
	}
	return 0;
}

void output_discard(struct output *o)
{
	df_writer_discard(o->w);
	o->w = NULL;
	output_put_back(o);
	free(o->dest);
	o->dest = NULL;
	output_live = NULL;
}

/* "<output>.YYYYmmddHHMMSScc", or with "-N" after it if that exists. */
static int output_part_name(const struct output *o, char *name, size_t len)
{
	struct timespec now;
	struct tm tm;
	char stamp[32];
	struct stat st;
	int i;

	clock_gettime(CLOCK_REALTIME, &now);
	localtime_r(&now.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d%H%M%S", &tm);
	for (i = 1; i < 1000; i++) {
		int n = i == 1 ? snprintf(name, len, "%s.%s%02ld", o->path, stamp,
					  now.tv_nsec / 10000000)
			       : snprintf(name, len, "%s.%s%02ld-%d", o->path, stamp,
					  now.tv_nsec / 10000000, i);

		if (n < 0 || (size_t)n >= len)
			return xp_error("cannot name a part of '%s': the name is too long",
					o->path);
		if (lstat(name, &st) && errno == ENOENT)
			return 0;
	}
	return xp_error("cannot name a part of '%s': too many parts at %s", o->path, stamp);
}

/*
 * 'xprof report --pprof' of @part into "<part>.pb.gz", written under a
 * temporary name and renamed when complete, so that a service that picks
 * up new files never reads half of one.  In the background unless @wait:
 * a grandchild does it (the recorder's wait for its targets must not see
 * it), and the recording goes on meanwhile.
 */
static void output_write_pprof(const char *part, bool wait)
{
	char out[PATH_MAX], tmp[PATH_MAX + 8];
	pid_t pid, conv;
	int status = 0;

	if ((size_t)snprintf(out, sizeof(out), "%s.pb.gz", part) >= sizeof(out) ||
	    (size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", out) >= sizeof(tmp))
		return;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		xp_warn("cannot write '%s': %s", out, strerror(errno));
		return;
	}
	if (pid > 0) {
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		return;
	}
	/* The child: in the background, it goes on as a grandchild and exits at once. */
	if (!wait && fork() != 0)
		_exit(XP_EXIT_OK);
	/* What the recorder holds open (the PM QoS request above all) is not ours to keep. */
	close_range(3, ~0u, 0);
	conv = fork();
	if (conv == 0) {
		execl("/proc/self/exe", "xprof", "-q", "report", "--pprof", "-i", part, "-o", tmp,
		      (char *)NULL);
		_exit(XP_EXIT_NOEXEC);
	}
	while (conv > 0 && waitpid(conv, &status, 0) < 0 && errno == EINTR)
		;
	if (conv > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 && !rename(tmp, out))
		_exit(XP_EXIT_OK);
	unlink(tmp);
	_exit(XP_EXIT_FAIL);
}

/* The part at o->path ended: give it its name.  0 or -1 (printed). */
static int output_name_part(struct output *o, char *name, size_t len)
{
	if (output_part_name(o, name, len))
		return -1;
	if (rename(o->path, name))
		return xp_error("cannot rename '%s' to '%s': %s", o->path, name, strerror(errno));
	return 0;
}

/* sampler_opts.switch_fn: the writer of the next part, or NULL to go on in @old. */
static struct df_writer *output_switch(void *ctx, struct df_writer *old)
{
	struct output *o = ctx;
	uint64_t bytes = df_writer_bytes(old);
	char name[PATH_MAX];
	struct df_writer *w;

	/* The old writer writes on into the renamed file: its descriptor stays. */
	if (output_name_part(o, name, sizeof(name)))
		return NULL;
	output_drop_old(o);
	w = output_start(o);
	if (!w) {
		rename(name, o->path);
		xp_warn("going on in '%s' without more parts", o->path);
		return NULL;
	}
	if (df_writer_close(old))
		xp_warn("'%s' may lack its last records", name);
	o->w = w;
	o->nr++;
	o->bytes += bytes;
	xp_info("wrote part %u, '%s' (%llu bytes)", o->nr, name, (unsigned long long)bytes);
	if (o->pprof)
		output_write_pprof(name, false);
	return w;
}

void output_parts(struct output *o, bool pprof, struct sampler_opts *so)
{
	o->pprof = pprof;
	if (!so->switch_ns && !so->switch_bytes && !so->switch_signal)
		return;
	o->parts = true;
	so->switch_fn = output_switch;
	so->switch_ctx = o;
}

int output_close(struct output *o, char *name, size_t len, uint64_t *bytes)
{
	int ret;

	*bytes = o->bytes + df_writer_bytes(o->w);
	ret = df_writer_close(o->w);
	o->w = NULL;
	output_drop_old(o);
	free(o->dest);
	o->dest = NULL;
	output_live = NULL;
	snprintf(name, len, "%s", o->path);
	if (!o->parts)
		return ret;
	if (output_name_part(o, name, len)) {
		snprintf(name, len, "%s", o->path);
		return -1;
	}
	xp_info("wrote part %u, '%s' (%llu bytes)", o->nr + 1, name,
		(unsigned long long)(*bytes - o->bytes));
	if (o->pprof)
		output_write_pprof(name, true);
	return ret;
}
