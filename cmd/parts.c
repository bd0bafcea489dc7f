/* SPDX-License-Identifier: MIT */
/*
 * The files of --switch-output (common.h): naming each ended part, opening
 * the next, and the pprof beside each part on request.
 */
#include "common.h"
#include "cmd.h"
#include "datafile.h"
#include "err.h"
#include "sampler.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/close_range.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void common_sampler_parts(const struct record_opts *ro, struct df_writer *w, int argc, char **argv,
			  struct common_parts *cp, struct sampler_opts *so)
{
	*cp = (struct common_parts){.output = ro->output,
				    .argc = argc,
				    .argv = argv,
				    .pprof = ro->switch_format == 1,
				    .w = w};
	if (!ro->switch_arg)
		return;
	cp->on = true;
	so->switch_ns = ro->switch_ns;
	so->switch_bytes = ro->switch_bytes;
	so->switch_signal = ro->switch_signal;
	so->switch_fn = common_switch_output;
	so->switch_ctx = cp;
	/* A part ends at a flush: flush at least as often as parts end. */
	if (ro->switch_ns && ro->switch_ns < so->flush_ns)
		so->flush_ns = ro->switch_ns;
}

/* "<output>.YYYYmmddHHMMSScc", or with "-N" after it if that exists. */
static int part_name(const struct common_parts *cp, char *name, size_t len)
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
		int n = i == 1 ? snprintf(name, len, "%s.%s%02ld", cp->output, stamp,
					  now.tv_nsec / 10000000)
			       : snprintf(name, len, "%s.%s%02ld-%d", cp->output, stamp,
					  now.tv_nsec / 10000000, i);

		if (n < 0 || (size_t)n >= len)
			return xp_error("cannot name a part of '%s': the name is too long",
					cp->output);
		if (lstat(name, &st) && errno == ENOENT)
			return 0;
	}
	return xp_error("cannot name a part of '%s': too many parts at %s", cp->output, stamp);
}

/*
 * 'xprof report --pprof' of @part into "<part>.pb.gz", written under a
 * temporary name and renamed when complete, so that a service that picks
 * up new files never reads half of one.  In the background unless @wait:
 * a grandchild does it (the recorder's wait for its targets must not see
 * it), and the recording goes on meanwhile.
 */
static void write_pprof(const char *part, bool wait)
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

/* The part at cp->output ended: give it its name.  0 or -1 (printed). */
static int name_part(struct common_parts *cp, char *name, size_t len)
{
	if (part_name(cp, name, len))
		return -1;
	if (rename(cp->output, name))
		return xp_error("cannot rename '%s' to '%s': %s", cp->output, name,
				strerror(errno));
	return 0;
}

struct df_writer *common_switch_output(void *ctx, struct df_writer *old)
{
	struct common_parts *cp = ctx;
	uint64_t bytes = df_writer_bytes(old);
	char name[PATH_MAX];
	struct df_writer *w;

	/* The old writer writes on into the renamed file: its descriptor stays. */
	if (name_part(cp, name, sizeof(name)))
		return NULL;
	w = common_open_output(cp->output, cp->argc, cp->argv);
	if (!w) {
		rename(name, cp->output);
		xp_warn("going on in '%s' without more parts", cp->output);
		return NULL;
	}
	if (df_writer_close(old))
		xp_warn("'%s' may lack its last records", name);
	cp->w = w;
	cp->nr++;
	cp->bytes += bytes;
	xp_info("wrote part %u, '%s' (%llu bytes)", cp->nr, name, (unsigned long long)bytes);
	if (cp->pprof)
		write_pprof(name, false);
	return w;
}

int common_parts_close(struct common_parts *cp, char *name, size_t len, uint64_t *bytes)
{
	int ret;

	*bytes = cp->bytes + df_writer_bytes(cp->w);
	ret = df_writer_close(cp->w);
	cp->w = NULL;
	snprintf(name, len, "%s", cp->output);
	if (!cp->on)
		return ret;
	if (name_part(cp, name, len)) {
		snprintf(name, len, "%s", cp->output);
		return -1;
	}
	xp_info("wrote part %u, '%s' (%llu bytes)", cp->nr + 1, name,
		(unsigned long long)(*bytes - cp->bytes));
	if (cp->pprof)
		write_pprof(name, true);
	return ret;
}
