/* SPDX-License-Identifier: MIT */
/*
 * Files as a traced process sees them (targetfs.h): its root directory,
 * shared between the processes that have the same one, map_files, and
 * NSpid.  Nothing here parses more than one /proc line; ELF is module.c's.
 */
#include "targetfs.h"
#include "err.h"
#include "maps.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

struct targetfs {
	struct targetfs_root *roots;
	size_t nr;
	unsigned long alloc;
	bool have_self;
	uint64_t self_mntns, self_dev, self_ino;
};

struct targetfs *targetfs_new(void)
{
	return xp_calloc(1, sizeof(struct targetfs));
}

void targetfs_free(struct targetfs *fs)
{
	size_t i;

	if (!fs)
		return;
	for (i = 0; i < fs->nr; i++)
		close(fs->roots[i].fd);
	free(fs->roots);
	free(fs);
}

/* Mount namespace and root of /proc/@who: 0 or -errno. */
static int root_id(const char *who, uint64_t *mntns, uint64_t *dev, uint64_t *ino)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%s/ns/mnt", who);
	if (stat(path, &st))
		return -errno;
	*mntns = (uint64_t)st.st_ino;
	snprintf(path, sizeof(path), "/proc/%s/root/", who);
	if (stat(path, &st))
		return -errno;
	*dev = (uint64_t)st.st_dev;
	*ino = (uint64_t)st.st_ino;
	return 0;
}

const struct targetfs_root *targetfs_root_of(struct targetfs *fs, pid_t pid)
{
	uint64_t mntns, dev, ino;
	char who[24], path[64];
	size_t i;
	int fd;

	if (!fs || pid <= 0)
		return NULL;
	if (!fs->have_self && !root_id("self", &fs->self_mntns, &fs->self_dev, &fs->self_ino))
		fs->have_self = true;
	snprintf(who, sizeof(who), "%d", (int)pid);
	if (root_id(who, &mntns, &dev, &ino))
		return NULL;
	if (fs->have_self && mntns == fs->self_mntns && dev == fs->self_dev && ino == fs->self_ino)
		return NULL;
	for (i = 0; i < fs->nr; i++)
		if (fs->roots[i].mntns == mntns && fs->roots[i].dev == dev &&
		    fs->roots[i].ino == ino)
			return &fs->roots[i];
	snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	xp_grow((void **)&fs->roots, &fs->alloc, fs->nr + 1, sizeof(*fs->roots));
	fs->roots[fs->nr] = (struct targetfs_root){mntns, dev, ino, fd};
	return &fs->roots[fs->nr++];
}

pid_t targetfs_nspid(pid_t pid)
{
	char path[64], line[256];
	pid_t last = pid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *p = line + 6, *end;
		long v;

		if (strncmp(line, "NSpid:", 6))
			continue;
		/* "NSpid:\t4242\t7\t1": outermost first, the innermost last. */
		for (;;) {
			v = strtol(p, &end, 10);
			if (end == p)
				break;
			if (v > 0 && v <= INT32_MAX)
				last = (pid_t)v;
			p = end;
		}
		break;
	}
	fclose(f);
	return last;
}

int targetfs_open(const struct targetfs_root *root, const char *path, int flags)
{
	struct open_how how = {.flags = (uint64_t)(flags | O_CLOEXEC | O_NOCTTY | O_NONBLOCK),
			       .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
	long fd;

	if (!root) {
		fd = open(path, (int)how.flags);
		return fd < 0 ? -errno : (int)fd;
	}
	if (path[0] != '/')
		return -EINVAL;
	fd = syscall(SYS_openat2, root->fd, path + 1, &how, sizeof(how));
	if (fd < 0 && errno == ENOSYS) {
		/*
		 * Before Linux 5.6: absolute symbolic links would leave the
		 * root, so accept none.
		 */
		how.flags |= O_NOFOLLOW;
		fd = openat(root->fd, path + 1, (int)how.flags);
	}
	return fd < 0 ? -errno : (int)fd;
}

static bool is_deleted(const char *path)
{
	static const char suffix[] = " (deleted)";
	size_t len = strlen(path);

	return len >= sizeof(suffix) - 1 && !strcmp(path + len - (sizeof(suffix) - 1), suffix);
}

/* @fd, if it is a regular file (and the inode mapped, when @m names one); else closed. */
static int check_file(int fd, const struct xp_map *m, bool check_inode)
{
	struct stat st;

	if (fd < 0)
		return fd;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -ENODEV;
	}
	/*
	 * The device number is not compared: on overlayfs (the usual
	 * container root) /proc/PID/maps shows the underlying file's device,
	 * stat the overlay's, while the inode number is kept.
	 */
	if (check_inode && m->inode && (uint64_t)st.st_ino != m->inode) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

int targetfs_open_mapped(pid_t pid, const struct targetfs_root *root, const struct xp_map *m,
			 const char **how)
{
	char file[96];
	int fd = -ENOENT;

	if (pid > 0) {
		snprintf(file, sizeof(file), "/proc/%d/map_files/%llx-%llx", (int)pid,
			 (unsigned long long)m->start, (unsigned long long)m->end);
		fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
		fd = fd < 0 ? -errno : check_file(fd, m, false);
		if (fd >= 0) {
			if (how)
				*how = "map_files";
			return fd;
		}
	}
	if (m->path[0] != '/' || is_deleted(m->path))
		return fd;
	fd = check_file(targetfs_open(root, m->path, O_RDONLY), m, pid > 0);
	if (fd >= 0 && how)
		*how = root ? "root" : "path";
	return fd;
}
