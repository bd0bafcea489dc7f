/* SPDX-License-Identifier: MIT */
/* The strict parser of /proc/PID/maps lines (see maps.h). */
#include "maps.h"

#include <errno.h>
#include <string.h>

/* Parse 1..@max hex digits at *@p.  Advances *@p. */
static int parse_hex(const char **p, unsigned int max, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	unsigned int n = 0;

	for (;; s++, n++) {
		unsigned int d;

		if (*s >= '0' && *s <= '9')
			d = (unsigned int)(*s - '0');
		else if (*s >= 'a' && *s <= 'f')
			d = (unsigned int)(*s - 'a' + 10);
		else if (*s >= 'A' && *s <= 'F')
			d = (unsigned int)(*s - 'A' + 10);
		else
			break;
		if (n == max)
			return -EINVAL;
		v = v << 4 | d;
	}
	if (!n)
		return -EINVAL;
	*p = s;
	*out = v;
	return 0;
}

static int parse_dec(const char **p, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		uint64_t d = (uint64_t)(*s - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	*p = s;
	*out = v;
	return 0;
}

static int expect(const char **p, char c)
{
	if (**p != c)
		return -EINVAL;
	(*p)++;
	return 0;
}

int procmaps_parse_line(const char *line, struct xp_map *out, char *pathbuf, size_t pathlen)
{
	const char *p = line, *path, *eol;
	uint64_t major, minor;
	size_t len;

	if (!line || !pathbuf || !pathlen)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	/* "start-end perms offset major:minor inode [path]" (proc(5)) */
	if (parse_hex(&p, 16, &out->start) || expect(&p, '-') || parse_hex(&p, 16, &out->end) ||
	    expect(&p, ' '))
		return -EINVAL;
	if (out->start >= out->end || (out->start | out->end) & 0xfff)
		return -EINVAL;
	if ((p[0] != 'r' && p[0] != '-') || (p[1] != 'w' && p[1] != '-') ||
	    (p[2] != 'x' && p[2] != '-') || (p[3] != 'p' && p[3] != 's'))
		return -EINVAL;
	out->prot = (p[0] == 'r' ? XP_PROT_READ : 0) | (p[1] == 'w' ? XP_PROT_WRITE : 0) |
		    (p[2] == 'x' ? XP_PROT_EXEC : 0);
	p += 4;
	if (expect(&p, ' ') || parse_hex(&p, 16, &out->offset) || expect(&p, ' ') ||
	    parse_hex(&p, 8, &major) || expect(&p, ':') || parse_hex(&p, 8, &minor) ||
	    expect(&p, ' ') || parse_dec(&p, &out->inode))
		return -EINVAL;
	out->dev_major = (uint32_t)major;
	out->dev_minor = (uint32_t)minor;
	/* The path, after padding; it may contain spaces and ends at the newline. */
	eol = strchr(p, '\n');
	if (eol && eol[1])
		return -EINVAL; /* more than one line */
	if (!eol)
		eol = p + strlen(p);
	if (p < eol && *p != ' ')
		return -EINVAL; /* garbage glued to the inode */
	path = p;
	while (path < eol && *path == ' ')
		path++;
	len = (size_t)(eol - path);
	if (len > pathlen - 1)
		len = pathlen - 1;
	memcpy(pathbuf, path, len);
	pathbuf[len] = '\0';
	out->path = pathbuf;
	return 0;
}
