/* SPDX-License-Identifier: MIT */
/*
 * xprof mark: name the phase a recording is in, from a script.  Sends
 * "mark NAME" to the --control FIFO of a running record or attach (which
 * holds it open, so a FIFO nobody reads means no recording), and with an
 * ACK FIFO waits until the recorder has acted on it.  What 'echo "mark
 * NAME" > CTL' does, with the checks: the name is one a recorder accepts,
 * a recording is there, and it has taken the mark.
 */
#include "cmd.h"
#include "clock.h"
#include "control.h"
#include "err.h"
#include "opt.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const struct xp_cmd_help mark_help =
    XP_CMD_HELP("mark", XP_USAGE("xprof mark --control fifo:<ctl>[,<ack>] <name>"),
		"Start a named phase of a recording that takes --control commands.",
		"    mkfifo ctl ack\n"
		"    xprof record --control fifo:ctl,ack -- ./server &\n"
		"    xprof mark --control fifo:ctl,ack warm-up   # then: report --phase warm-up\n");

/* 0 once "ack\n" came from @fd within @timeout_ns, else -1 (printed). */
static int wait_ack(int fd, const char *path, uint64_t timeout_ns)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	char buf[64];
	size_t have = 0;
	uint64_t t0 = xp_now_ns();

	for (;;) {
		uint64_t spent;
		ssize_t n;

		spent = xp_now_ns() - t0;
		if (spent >= timeout_ns)
			break;
		if (poll(&pfd, 1, (int)((timeout_ns - spent) / 1000000 + 1)) <= 0)
			continue;
		n = read(fd, buf + have, sizeof(buf) - 1 - have);
		if (n <= 0)
			continue;
		have += (size_t)n;
		buf[have] = 0;
		if (strstr(buf, CONTROL_ACK))
			return 0;
		if (have > sizeof(buf) / 2) { /* not ours: keep the tail */
			memmove(buf, buf + have - 4, 4);
			have = 4;
		}
	}
	return xp_error("no acknowledgement on '%s' within %.1f s", path, (double)timeout_ns / 1e9);
}

int cmd_mark(int argc, char **argv)
{
	const char *arg = NULL;
	uint64_t timeout_ns = 5000000000ull;
	const struct xp_option options[] = {
	    XP_OPTION_STRING(0, "control", &arg, "fifo:<ctl>[,<ack>]",
			     "the --control value of the recording"),
	    XP_OPTION_DURATION(0, "timeout", &timeout_ns, "<time>",
			       "how long to wait for the acknowledgement (default 5s)"),
	    XP_OPTION_END(),
	};
	struct control_spec spec;
	struct control_cmd cmd;
	char line[CONTROL_LINE_MAX + 1];
	int first, fd, ack = -1, ret;
	size_t len;

	first = xp_parse_options(argc, argv, options, &mark_help, 0);
	if (first == XP_PARSE_HELP)
		return XP_EXIT_OK;
	if (first < 0)
		return XP_EXIT_USAGE;
	if (!arg || control_spec_parse(arg, &spec))
		return xp_usage_error(&mark_help,
				      "give the recording's --control fifo:<ctl>[,<ack>]");
	if (first != argc - 1)
		return xp_usage_error(&mark_help, "give one phase name");
	len = (size_t)snprintf(line, sizeof(line), "mark %s", argv[first]);
	if (len >= sizeof(line) - 1 || control_parse_line(line, len, &cmd) != CONTROL_MARK ||
	    strcmp(cmd.name, argv[first]))
		return xp_usage_error(&mark_help,
				      "invalid phase name '%s' (1 to %d bytes, no control "
				      "characters or blanks around it)",
				      argv[first], CONTROL_NAME_MAX);
	/* First the ACK FIFO: what the recorder writes waits there for us. */
	if (*spec.ack && (ack = open(spec.ack, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0)
		return xp_error("cannot open '%s': %s", spec.ack, strerror(errno)), XP_EXIT_FAIL;
	fd = open(spec.ctl, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENXIO)
			xp_error("no recording reads '%s'", spec.ctl);
		else
			xp_error("cannot open '%s': %s", spec.ctl, strerror(errno));
		if (ack >= 0)
			close(ack);
		return XP_EXIT_FAIL;
	}
	line[len++] = '\n';
	ret = write(fd, line, len) == (ssize_t)len
		  ? 0
		  : xp_error("cannot write to '%s': %s", spec.ctl, strerror(errno));
	close(fd);
	if (!ret && ack >= 0)
		ret = wait_ack(ack, spec.ack, timeout_ns);
	if (ack >= 0)
		close(ack);
	return ret ? XP_EXIT_FAIL : XP_EXIT_OK;
}
