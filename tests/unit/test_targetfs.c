/* SPDX-License-Identifier: MIT */
/*
 * Files as a traced process sees them (target/targetfs.c), on this process
 * and on a directory made to look like a container's root: NSpid, our own
 * root being no root of another, a file opened under a root, an absolute
 * symbolic link planted there that resolves inside the root (never to the
 * host's file), a FIFO that does not block, and a mapped file opened
 * through map_files or checked by inode.
 */
#include "t.h"

#include "addrspace.h"
#include "targetfs.h"

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

static char dir[64];

static int make_root(void)
{
	char path[128];
	FILE *f;

	snprintf(dir, sizeof(dir), "/tmp/xprof-targetfs.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/tmp", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/tmp/perf-7.map", dir);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs("1000 10 inside\n", f);
	fclose(f);
	/* Absolute links: inside the root they name the root's files. */
	snprintf(path, sizeof(path), "%s/tmp/link.map", dir);
	if (symlink("/tmp/perf-7.map", path))
		return -1;
	snprintf(path, sizeof(path), "%s/tmp/passwd", dir);
	if (symlink("/etc/passwd", path))
		return -1;
	snprintf(path, sizeof(path), "%s/tmp/fifo", dir);
	return mkfifo(path, 0600);
}

static void remove_root(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
}

static int test_nspid_and_own_root(void)
{
	struct targetfs *fs = targetfs_new();

	/* Not in another pid namespace than /proc's: the same pid. */
	T_EQ_U64(targetfs_nspid(getpid()), getpid());
	T_EQ_U64(targetfs_nspid(-1), 0);
	/* Our own root is no other root: files are opened by their paths. */
	T_ASSERT(targetfs_root_of(fs, getpid()) == NULL);
	targetfs_free(fs);
	return T_OK;
}

/* Whether this kernel (or emulator) has openat2: the other probe is ENOSYS. */
static bool have_openat2(void)
{
	struct open_how how = {.flags = O_RDONLY | O_CLOEXEC};
	long fd = syscall(SYS_openat2, AT_FDCWD, "/", &how, sizeof(how));

	if (fd >= 0)
		close((int)fd);
	return fd >= 0 || errno != ENOSYS;
}

static int test_open_under_root(void)
{
	struct targetfs_root root = {0};
	char buf[64];
	ssize_t n;
	int fd;

	T_ASSERT(!make_root());
	root.fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	T_ASSERT(root.fd >= 0);
	fd = targetfs_open(&root, "/tmp/perf-7.map", O_RDONLY);
	T_ASSERT(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	T_ASSERT(n > 0);
	buf[n] = 0;
	T_EQ_STR(buf, "1000 10 inside\n");
	/*
	 * An absolute link resolves inside the root; without openat2 (Linux
	 * before 5.6, qemu-user) no absolute link is followed at all.
	 */
	fd = targetfs_open(&root, "/tmp/link.map", O_RDONLY);
	if (have_openat2()) {
		T_ASSERT(fd >= 0);
		close(fd);
	} else {
		T_EQ_U64(fd, -ELOOP);
	}
	/* ... so /etc/passwd of the host is out of reach. */
	T_EQ_U64(targetfs_open(&root, "/tmp/passwd", O_RDONLY), have_openat2() ? -ENOENT : -ELOOP);
	T_EQ_U64(targetfs_open(&root, "/tmp/link.map", O_RDONLY | O_NOFOLLOW), -ELOOP);
	T_EQ_U64(targetfs_open(&root, "tmp/perf-7.map", O_RDONLY), -EINVAL);
	/* A FIFO opens without blocking (the caller then refuses it). */
	fd = targetfs_open(&root, "/tmp/fifo", O_RDONLY);
	T_ASSERT(fd >= 0);
	close(fd);
	close(root.fd);
	remove_root();
	return T_OK;
}

/* A mapping of this test binary: opened by map_files (root) or path, checked by inode. */
static int test_open_mapped(void)
{
	struct xp_map m = {0};
	const char *how = NULL;
	char line[512], path[256];
	struct stat st;
	FILE *f = fopen("/proc/self/maps", "re");
	int fd;

	T_ASSERT(f);
	while (fgets(line, sizeof(line), f))
		if (!procmaps_parse_line(line, &m, path, sizeof(path)) && m.path[0] == '/' &&
		    (m.prot & XP_PROT_EXEC))
			break;
	fclose(f);
	T_ASSERT(m.path && m.path[0] == '/');
	fd = targetfs_open_mapped(getpid(), NULL, &m, &how);
	T_ASSERT(fd >= 0);
	T_ASSERT(!fstat(fd, &st));
	T_EQ_U64(st.st_ino, m.inode);
	close(fd);
	T_ASSERT(how && (!strcmp(how, "map_files") || !strcmp(how, "path")));
	/* Another inode under the path now: refused. */
	m.inode++;
	m.start = m.end = 0; /* no such map_files entry */
	T_EQ_U64(targetfs_open_mapped(getpid(), NULL, &m, NULL), -ESTALE);
	return T_OK;
}

T_MAIN(T_CASE(test_nspid_and_own_root), T_CASE(test_open_under_root), T_CASE(test_open_mapped))
