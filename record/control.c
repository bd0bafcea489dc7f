/* SPDX-License-Identifier: MIT */
/* The --control FIFO: its syntax, opening it, lines and commands (see control.h). */
#include "control.h"
#include "err.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool is_blank(char ch)
{
	return ch == ' ' || ch == '\t';
}

/* Whether @s[0..@len) has a control character (tab included) or DEL. */
static bool has_control_char(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return true;
	return false;
}

/* @cmd is not a command (@why); its .name shows the line, cut and made printable. */
static enum control_kind invalid(struct control_cmd *cmd, const char *line, size_t len,
				 const char *why)
{
	size_t i;

	if (len > CONTROL_NAME_MAX)
		len = CONTROL_NAME_MAX;
	for (i = 0; i < len; i++)
		cmd->name[i] = (unsigned char)line[i] < 0x20 || line[i] == 0x7f ? '?' : line[i];
	cmd->name[len] = 0;
	cmd->why = why;
	return cmd->kind = CONTROL_INVALID;
}

static const struct {
	const char *word;
	enum control_kind kind;
} words[] = {
    {"enable", CONTROL_ENABLE}, {"disable", CONTROL_DISABLE}, {"mark", CONTROL_MARK},
    {"stop", CONTROL_STOP},	{"ping", CONTROL_PING},
};

const char *control_kind_name(enum control_kind kind)
{
	size_t i;

	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (words[i].kind == kind)
			return words[i].word;
	return "";
}

enum control_kind control_parse_line(const char *line, size_t len, struct control_cmd *cmd)
{
	size_t i, wl = 0, at;

	memset(cmd, 0, sizeof(*cmd));
	if (len && line[len - 1] == '\r')
		len--;
	while (len && is_blank(line[0]))
		line++, len--;
	while (len && is_blank(line[len - 1]))
		len--;
	if (!len)
		return cmd->kind = CONTROL_NONE;
	while (wl < len && !is_blank(line[wl]))
		wl++;
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strlen(words[i].word) == wl && !memcmp(line, words[i].word, wl))
			break;
	if (i == sizeof(words) / sizeof(words[0]))
		return invalid(cmd, line, len,
			       "unknown command (known: enable, disable, mark NAME, stop, ping)");
	for (at = wl; at < len && is_blank(line[at]);)
		at++;
	if (words[i].kind == CONTROL_MARK) {
		if (at == len)
			return invalid(cmd, line, len, "'mark' needs the name of the phase");
		if (len - at > CONTROL_NAME_MAX)
			return invalid(cmd, line, len, "a phase name has at most 128 bytes");
		if (has_control_char(line + at, len - at))
			return invalid(cmd, line, len, "a phase name has no control characters");
		memcpy(cmd->name, line + at, len - at);
		cmd->name[len - at] = 0;
	} else if (at < len) {
		/* perf's 'enable NAME' names one of its events: a recording of xprof has none. */
		return invalid(cmd, line, len, "this command takes no argument");
	}
	return cmd->kind = words[i].kind;
}

int control_spec_parse(const char *arg, struct control_spec *spec)
{
	const char *p, *comma;
	size_t lc, la;

	if (strncmp(arg, "fifo:", 5))
		return -1;
	p = arg + 5;
	comma = strchr(p, ',');
	lc = comma ? (size_t)(comma - p) : strlen(p);
	la = comma ? strlen(comma + 1) : 0;
	if (!lc || lc >= sizeof(spec->ctl) || (comma && (!la || la >= sizeof(spec->ack))))
		return -1;
	memcpy(spec->ctl, p, lc);
	spec->ctl[lc] = 0;
	memcpy(spec->ack, comma ? comma + 1 : "", la);
	spec->ack[la] = 0;
	return 0;
}

void control_init(struct control *c)
{
	c->fd = c->ack_fd = -1;
	c->len = 0;
	c->skipping = false;
}

/* Open @path, which must be a FIFO, read-write and non-blocking.  The fd, or -1 (printed). */
static int open_fifo(const char *path)
{
	struct stat st;
	int fd;

	if (stat(path, &st) == 0 && !S_ISFIFO(st.st_mode)) {
		xp_error("cannot use '%s' for --control: not a FIFO", path);
		xp_hint("make one with 'mkfifo %s', or name another file", path);
		return -1;
	}
	fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		xp_error("cannot open the --control FIFO '%s': %s", path, strerror(errno));
		if (errno == ENOENT)
			xp_hint("make it first: mkfifo %s", path);
		return -1;
	}
	/* Replaced by something else since the stat: refuse it all the same. */
	if (fstat(fd, &st) || !S_ISFIFO(st.st_mode)) {
		close(fd);
		return xp_error("cannot use '%s' for --control: not a FIFO", path);
	}
	return fd;
}

int control_open(struct control *c, const struct control_spec *spec)
{
	control_init(c);
	c->fd = open_fifo(spec->ctl);
	if (c->fd < 0)
		return -1;
	if (spec->ack[0]) {
		c->ack_fd = open_fifo(spec->ack);
		if (c->ack_fd < 0) {
			control_close(c);
			return -1;
		}
	}
	return 0;
}

void control_close(struct control *c)
{
	if (c->fd >= 0)
		close(c->fd);
	if (c->ack_fd >= 0)
		close(c->ack_fd);
	control_init(c);
}

size_t control_feed(struct control *c, const char *data, size_t n)
{
	size_t room = sizeof(c->buf) - c->len;

	if (n > room)
		n = room;
	memcpy(c->buf + c->len, data, n);
	c->len += n;
	return n;
}

bool control_next(struct control *c, struct control_cmd *cmd)
{
	char *nl = memchr(c->buf, '\n', c->len);
	size_t n;

	if (!nl) {
		/* A full buffer without a newline: the line is too long; drop it. */
		if (c->len == sizeof(c->buf)) {
			c->skipping = true;
			c->len = 0;
		}
		return false;
	}
	n = (size_t)(nl - c->buf);
	if (c->skipping) {
		c->skipping = false;
		memset(cmd, 0, sizeof(*cmd));
		invalid(cmd, c->buf, 0, "a command line has at most 255 bytes");
	} else {
		control_parse_line(c->buf, n, cmd);
	}
	memmove(c->buf, nl + 1, c->len - n - 1);
	c->len -= n + 1;
	return true;
}

bool control_poll(struct control *c, struct control_cmd *cmd)
{
	ssize_t n;

	for (;;) {
		while (control_next(c, cmd))
			if (cmd->kind != CONTROL_NONE)
				return true;
		if (c->fd < 0)
			return false;
		n = read(c->fd, c->buf + c->len, sizeof(c->buf) - c->len);
		if (n > 0)
			c->len += (size_t)n;
		else if (!(n < 0 && errno == EINTR))
			return false;
	}
}

void control_ack(struct control *c)
{
	ssize_t n;

	if (c->ack_fd < 0)
		return;
	do
		n = write(c->ack_fd, CONTROL_ACK, strlen(CONTROL_ACK));
	while (n < 0 && errno == EINTR);
}
