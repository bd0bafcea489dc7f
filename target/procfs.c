/* SPDX-License-Identifier: MIT */
/* Task facts from /proc (see procfs.h). */
#include "procfs.h"
#include "err.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <sys/xattr.h>
#include <unistd.h>

/* Up to @len - 1 bytes of @path, NUL-terminated ("" when unreadable); the length read. */
static size_t procfs_read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, len - 1) : -1;

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = 0;
	return n > 0 ? (size_t)n : 0;
}

void procfs_comm(pid_t pid, pid_t tid, char *out, size_t len)
{
	int fd = procfs_open_task(pid, tid, "comm");

	procfs_comm_fd(fd, out, len);
	if (fd >= 0)
		close(fd);
}

void procfs_comm_fd(int fd, char *out, size_t len)
{
	ssize_t n = fd >= 0 ? pread(fd, out, len - 1, 0) : -1;

	out[n > 0 ? n : 0] = 0;
	out[strcspn(out, "\n")] = 0;
}

pid_t procfs_tracer(pid_t pid)
{
	char path[64], line[256];
	pid_t tracer = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "TracerPid:", 10))
			tracer = (pid_t)strtol(line + 10, NULL, 10);
	fclose(f);
	return tracer;
}

int procfs_status_ids(pid_t tid, pid_t *tgid, pid_t *ppid)
{
	char path[64], line[256];
	FILE *f;
	int got = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f) && got < 2) {
		if (!strncmp(line, "Tgid:", 5)) {
			*tgid = (pid_t)strtol(line + 5, NULL, 10);
			got++;
		} else if (!strncmp(line, "PPid:", 5)) {
			*ppid = (pid_t)strtol(line + 5, NULL, 10);
			got++;
		}
	}
	fclose(f);
	return got == 2 ? 0 : -EINVAL;
}

void procfs_exe(pid_t pid, char *out, size_t len)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, out, len - 1);
	out[n > 0 ? n : 0] = 0;
}

char procfs_task_state(pid_t pid, pid_t tid)
{
	char path[80], buf[512], *rp;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	procfs_read_small(path, buf, sizeof(buf));
	/* The state follows the last ')' of the comm field (proc(5)). */
	rp = strrchr(buf, ')');
	return rp && rp[1] == ' ' && rp[2] ? rp[2] : '?';
}

int procfs_job(pid_t pid, char *state, long *pgrp, long *tpgid)
{
	char path[64], buf[512];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	procfs_read_small(path, buf, sizeof(buf));
	return procfs_parse_job(buf, state, pgrp, tpgid);
}

int procfs_parse_job(const char *stat, char *state, long *pgrp, long *tpgid)
{
	const char *p = strrchr(stat, ')');
	char st;
	long g, t;

	/* After the comm: state ppid pgrp session tty_nr tpgid. */
	if (!p || sscanf(p + 1, " %c %*d %ld %*d %*d %ld", &st, &g, &t) != 3)
		return -1;
	*state = st;
	*pgrp = g;
	*tpgid = t;
	return 0;
}

int procfs_parse_children(const char *text, pid_t **out, size_t *nr, unsigned long *alloc)
{
	const char *p = text;
	size_t was = *nr;
	char *end;
	long v;

	for (;;) {
		while (*p == ' ' || *p == '\n')
			p++;
		if (!*p)
			return 0;
		errno = 0;
		v = *p >= '0' && *p <= '9' ? strtol(p, &end, 10) : -1;
		if (v <= 0 || errno || v > 0x3fffffff || (*end && *end != ' ' && *end != '\n')) {
			*nr = was; /* nothing of a list that is not one */
			return -1;
		}
		xp_grow((void **)out, alloc, *nr + 1, sizeof(**out));
		(*out)[(*nr)++] = (pid_t)v;
		p = end;
	}
}

/* At most this much of a children file: 4 MiB, over 500,000 children. */
#define PROCFS_CHILDREN_MAX (4u << 20)

int procfs_children(pid_t pid, pid_t tid, pid_t **out, size_t *nr, unsigned long *alloc)
{
	int fd = procfs_open_task(pid, tid, "children"), e;
	/*
	 * The kernel makes the list afresh at each read, from the position
	 * reached: children that end between two reads shift it.  One read
	 * takes ~9,000 children.
	 */
	size_t len = 0, cap = 64 << 10;
	char *buf = NULL;
	ssize_t n;

	if (fd < 0)
		return -1;
	buf = xp_malloc(cap);
	for (;;) {
		if (len + 1 == cap) {
			if (cap >= PROCFS_CHILDREN_MAX) {
				n = -1;
				break;
			}
			cap *= 2;
			buf = xp_realloc(buf, cap);
		}
		n = read(fd, buf + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = 0;
	e = n < 0 ? -1 : procfs_parse_children(buf, out, nr, alloc);
	free(buf);
	return e;
}

int procfs_parse_task_cpu(const char *stat)
{
	uint64_t faults;

	return procfs_parse_task_cpu_faults(stat, &faults);
}

/* The unsigned decimal that starts at @p into *@v; false when there is none. */
static bool stat_u64(const char *p, uint64_t *v)
{
	char *end;

	if (*p < '0' || *p > '9')
		return false;
	errno = 0;
	*v = strtoull(p, &end, 10);
	return errno == 0 && (*end == ' ' || *end == '\n' || *end == '\0');
}

int procfs_parse_task_cpu_faults(const char *stat, uint64_t *faults)
{
	const char *p = strrchr(stat, ')'), *minflt = NULL, *majflt = NULL;
	uint64_t mn, mj;
	char *end;
	long v;
	int field;

	/* The fields after the comm start with the state, field 3. */
	for (field = 2; p && field < 39; field++) {
		p = strchr(p + 1, ' ');
		if (p && field + 1 == 10)
			minflt = p + 1;
		else if (p && field + 1 == 12)
			majflt = p + 1;
	}
	if (!p || !stat_u64(minflt, &mn) || !stat_u64(majflt, &mj) || mn + mj < mn)
		return -1;
	v = strtol(p + 1, &end, 10);
	if (end == p + 1 || v < 0 || v > 0x7fffffff)
		return -1;
	*faults = mn + mj;
	return (int)v;
}

long procfs_parse_running(const char *loadavg)
{
	const char *p = loadavg;
	char *end;
	long v;
	int field;

	/* "0.52 0.58 0.59 3/250 4242": three averages, then RUNNING/TOTAL. */
	for (field = 1; p && field < 4; field++) {
		p = strchr(p, ' ');
		p = p ? p + 1 : NULL;
	}
	if (!p || *p < '0' || *p > '9')
		return -1;
	v = strtol(p, &end, 10);
	return *end != '/' || v < 0 || v > 0x7fffffff ? -1 : v;
}

int procfs_open_task(pid_t pid, pid_t tid, const char *file)
{
	char path[96];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/%s", (int)pid, (int)tid, file);
	return open(path, O_RDONLY | O_CLOEXEC);
}

/* pread of the whole small file @fd at 0, NUL-terminated.  The length, or -1. */
static ssize_t procfs_pread(int fd, char *buf, size_t len)
{
	ssize_t n;

	if (fd < 0)
		return -1;
	n = pread(fd, buf, len - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return n;
}

int procfs_parse_schedstat(const char *buf, struct procfs_sched *ss)
{
	char *end;
	uint64_t v[3];
	int i;

	for (i = 0; i < 3; i++, buf = end) {
		v[i] = strtoull(buf, &end, 10);
		if (end == buf)
			return -1;
	}
	ss->cpu_ns = v[0];
	ss->wait_ns = v[1];
	ss->count = v[2];
	return 0;
}

int procfs_schedstat(int fd, struct procfs_sched *ss)
{
	char buf[96];

	if (procfs_pread(fd, buf, sizeof(buf)) < 0)
		return -1;
	return procfs_parse_schedstat(buf, ss);
}

/* The value of the status line "@name:\t123", or -1. */
static int64_t status_value(const char *buf, const char *name)
{
	size_t len = strlen(name);
	const char *p = buf;
	unsigned long long v;
	char *end;

	for (; (p = strstr(p, name)); p += len)
		if ((p == buf || p[-1] == '\n') && p[len] == ':')
			break;
	if (!p)
		return -1;
	p += len + 1;
	p += strspn(p, " \t");
	if (*p < '0' || *p > '9')
		return -1;
	errno = 0;
	v = strtoull(p, &end, 10);
	if (errno || (*end && *end != '\n') || v > INT64_MAX / 2)
		return -1;
	return (int64_t)v;
}

int procfs_parse_switches(const char *buf, uint64_t *vol, uint64_t *invol)
{
	int64_t v = status_value(buf, "voluntary_ctxt_switches");
	int64_t i = status_value(buf, "nonvoluntary_ctxt_switches");

	if (v < 0 || i < 0)
		return -1;
	*vol = (uint64_t)v;
	*invol = (uint64_t)i;
	return 0;
}

int procfs_switches(int fd, uint64_t *vol, uint64_t *invol)
{
	char buf[8192]; /* ~1.4 KiB; more with long CPU and node lists */

	if (procfs_pread(fd, buf, sizeof(buf)) < 0)
		return -1;
	return procfs_parse_switches(buf, vol, invol);
}

int64_t procfs_parse_syscall(const char *buf, uint64_t *sp, uint64_t *pc)
{
	unsigned long long v[8];
	char *p, *end;
	long long nr;
	int i;

	nr = strtoll(buf, &end, 10);
	if (end == buf || nr > INT32_MAX)
		return -1;
	if (nr < 0) {
		/* "-1 SP PC" outside a call; "-1 0x0 0x0": it has exited, not reaped yet. */
		v[0] = strtoull(end, &p, 16);
		v[1] = strtoull(p, &end, 16);
		return end != p && !v[0] && !v[1] ? PROCFS_GONE : -1;
	}
	for (i = 0, p = end; i < 8; i++, p = end) {
		v[i] = strtoull(p, &end, 16);
		if (end == p)
			return -1;
	}
	*sp = v[6];
	*pc = v[7];
	return nr;
}

int procfs_task_cpu(int stat_fd)
{
	uint64_t faults;

	return procfs_task_cpu_faults(stat_fd, &faults);
}

int procfs_task_cpu_faults(int stat_fd, uint64_t *faults)
{
	char buf[1024];

	if (procfs_pread(stat_fd, buf, sizeof(buf)) < 0)
		return -1;
	return procfs_parse_task_cpu_faults(buf, faults);
}

long procfs_running(int loadavg_fd)
{
	char buf[128];

	if (procfs_pread(loadavg_fd, buf, sizeof(buf)) < 0)
		return -1;
	return procfs_parse_running(buf);
}

int64_t procfs_syscall(int fd, uint64_t *sp, uint64_t *pc)
{
	char buf[256];

	if (procfs_pread(fd, buf, sizeof(buf)) < 0)
		return -1;
	return procfs_parse_syscall(buf, sp, pc);
}

/* One space-separated field of a mountinfo line: its start and length, from *@p on. */
static bool mountinfo_field(const char **p, const char *end, const char **f, size_t *flen)
{
	while (*p < end && **p == ' ')
		(*p)++;
	if (*p >= end)
		return false;
	*f = *p;
	while (*p < end && **p != ' ')
		(*p)++;
	*flen = (size_t)(*p - *f);
	return true;
}

static bool field_is(const char *f, size_t flen, const char *s)
{
	return flen == strlen(s) && !memcmp(f, s, flen);
}

/* The value of "hidepid=" in the super options @o (@olen bytes), 0 when absent. */
static int parse_hidepid(const char *o, size_t olen, long *gid)
{
	static const struct {
		const char *name;
		int level;
	} names[] = {{"off", 0}, {"noaccess", 1}, {"invisible", 2}, {"ptraceable", 4}};
	char opt[64];
	int level = 0;
	size_t i, n;

	*gid = -1;
	while (olen) {
		n = 0;
		while (n < olen && o[n] != ',')
			n++;
		if (n < sizeof(opt)) {
			memcpy(opt, o, n);
			opt[n] = 0;
			if (!strncmp(opt, "gid=", 4) && opt[4] >= '0' && opt[4] <= '9')
				*gid = strtol(opt + 4, NULL, 10);
			if (!strncmp(opt, "hidepid=", 8)) {
				if (opt[8] >= '0' && opt[8] <= '9')
					level = (int)strtol(opt + 8, NULL, 10);
				for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
					if (!strcmp(opt + 8, names[i].name))
						level = names[i].level;
			}
		}
		o += n;
		olen -= n;
		if (olen) {
			o++;
			olen--;
		}
	}
	return level < 0 || level > 4 ? 0 : level;
}

int procfs_parse_mountinfo(const char *text, int *hidepid, long *gid)
{
	const char *line = text, *end, *p, *f, *mnt = NULL;
	size_t flen, mlen = 0;
	int found = -1, i;

	*hidepid = 0;
	*gid = -1;
	for (; *line; line = *end ? end + 1 : end) {
		end = line + strcspn(line, "\n");
		p = line;
		/* ID, parent, major:minor, root, mount point. */
		for (i = 0; i < 5 && mountinfo_field(&p, end, &f, &flen); i++)
			if (i == 4) {
				mnt = f;
				mlen = flen;
			}
		if (i < 5 || !field_is(mnt, mlen, "/proc"))
			continue;
		/* The mount on top so far: a later one at /proc hides it. */
		found = -1;
		*hidepid = 0;
		*gid = -1;
		/* Options, optional fields up to "-", then type, source, super options. */
		while (mountinfo_field(&p, end, &f, &flen) && !field_is(f, flen, "-"))
			;
		if (!mountinfo_field(&p, end, &f, &flen) || !field_is(f, flen, "proc") ||
		    !mountinfo_field(&p, end, &f, &flen))
			continue;
		if (!mountinfo_field(&p, end, &f, &flen))
			flen = 0;
		*hidepid = parse_hidepid(f, flen, gid);
		found = 0;
	}
	return found;
}

void procfs_mount_state(struct procfs_mount *m)
{
	char *buf = malloc(1 << 20);
	struct statfs sf;
	ssize_t n = -1;
	int fd;

	*m = (struct procfs_mount){.gid = -1};
	m->mounted = !statfs("/proc", &sf) && sf.f_type == PROC_SUPER_MAGIC &&
		     !access("/proc/self/stat", R_OK);
	if (!m->mounted || !buf) {
		free(buf);
		return;
	}
	fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		size_t len = 0;

		while (len < (1 << 20) - 1 && (n = read(fd, buf + len, (1 << 20) - 1 - len)) > 0)
			len += (size_t)n;
		buf[len] = 0;
		close(fd);
		procfs_parse_mountinfo(buf, &m->hidepid, &m->gid);
	}
	free(buf);
}

bool procfs_self_has_cap(int cap)
{
	char buf[4096];
	const char *p;

	procfs_read_small("/proc/self/status", buf, sizeof(buf));
	p = strstr(buf, "\nCapEff:");
	return p && (strtoull(p + 8, NULL, 16) >> cap & 1);
}

enum procfs_priv procfs_exe_privilege_lost(pid_t pid)
{
	char exe[64], dir[32];
	struct statvfs v;
	struct stat f, p;

	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	snprintf(dir, sizeof(dir), "/proc/%d", (int)pid);
	if (stat(exe, &f) || stat(dir, &p))
		return PROCFS_PRIV_NONE;
	/*
	 * Not one that would have raised them anyway: on a nosuid mount, or
	 * a process that made itself non-dumpable (its /proc directory is
	 * root's then, not its ids).
	 */
	if ((!statvfs(exe, &v) && (v.f_flag & ST_NOSUID)) || (!p.st_uid && !p.st_gid && geteuid()))
		return PROCFS_PRIV_NONE;
	if ((f.st_mode & S_ISUID) && f.st_uid != p.st_uid)
		return PROCFS_PRIV_SETUID;
	if ((f.st_mode & S_ISGID) && (f.st_mode & S_IXGRP) && f.st_gid != p.st_gid)
		return PROCFS_PRIV_SETGID;
	/* Root's processes hold every capability a file could give. */
	if (p.st_uid && getxattr(exe, "security.capability", NULL, 0) > 0)
		return PROCFS_PRIV_CAPS;
	return PROCFS_PRIV_NONE;
}

bool procfs_explain_hidden(pid_t pid, int err, char *buf, size_t len)
{
	struct procfs_mount m;
	bool root = geteuid() == 0, cap;

	buf[0] = 0;
	procfs_mount_state(&m);
	if (!m.mounted) {
		snprintf(buf, len,
			 "/proc is not mounted here: mount it ('mount -t proc proc /proc', as "
			 "root), or run xprof where it is");
		return true;
	}
	/* Gone, not hidden: no pid to signal (EPERM: it exists, another user's). */
	if (kill(pid, 0) && errno == ESRCH)
		return false;
	cap = procfs_self_has_cap(CAP_SYS_PTRACE);
	if (m.hidepid && !cap && root)
		snprintf(buf, len,
			 "/proc is mounted with hidepid=%d and xprof lacks CAP_SYS_PTRACE, so it "
			 "shows xprof only root's processes: give xprof that capability (in a "
			 "container: --cap-add SYS_PTRACE)",
			 m.hidepid);
	else if (m.hidepid && !cap)
		snprintf(buf, len,
			 "/proc is mounted with hidepid=%d, so it shows xprof only its own user's "
			 "processes: run xprof as the process's user or as root, or remount /proc "
			 "with gid= a group of xprof's user ('mount -o remount,gid=GROUP /proc')",
			 m.hidepid);
	else if ((err == EACCES || err == EPERM) && !cap)
		snprintf(
		    buf, len,
		    "the process runs as another user or made itself non-dumpable, and reading "
		    "its /proc files then takes CAP_SYS_PTRACE: run xprof as root with it (in "
		    "a container: --cap-add SYS_PTRACE)");
	return true;
}
