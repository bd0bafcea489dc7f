/* SPDX-License-Identifier: MIT */
/*
 * Files as a traced process sees them.  A target may run in other mount and
 * pid namespaces (a container): the paths in its /proc/PID/maps name files
 * of its root, not ours, and the pid it writes into the names of its JIT
 * side-files (/tmp/perf-PID.map) is the one its own pid namespace gave it.
 * This is the one place of the record side that opens a target's files:
 *
 *  - a mapped file through /proc/PID/map_files/START-END, which is the very
 *    inode mapped, even deleted or replaced since (opening it needs
 *    CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE: fs/proc/base.c,
 *    proc_map_files_get_link), else by its path under the target's root,
 *    checked to be the mapped inode;
 *  - any other file by its path under the target's root, with symbolic
 *    links resolved inside that root (openat2 RESOLVE_IN_ROOT, Linux 5.6),
 *    so a file planted in a container cannot make us read one of the host;
 *  - the innermost NSpid of /proc/PID/status (Linux 4.1), the pid the
 *    process knows itself by.
 *
 * Roots are shared: processes with the same root directory in the same
 * mount namespace share one descriptor, so a storm of forks in one
 * container holds one.  A process whose root is ours gets NULL, and its
 * files are opened by their plain paths, as any other program would.
 *
 * Functions return a descriptor or 0, or -errno, and print nothing.  Not
 * thread-safe.  May be called while the target runs.
 */
#ifndef XPROF_TARGET_TARGETFS_H
#define XPROF_TARGET_TARGETFS_H

#include <stdint.h>
#include <sys/types.h>

struct xp_map;

/* The root directory of one or more traced processes, when it is not ours. */
struct targetfs_root {
	uint64_t mntns, dev, ino; /* mount namespace, device and inode of the root */
	int fd;			  /* O_PATH descriptor of the root directory */
};

struct targetfs;

struct targetfs *targetfs_new(void);
/* Closes every root's descriptor.  NULL is fine. */
void targetfs_free(struct targetfs *fs);

/*
 * The root of process @pid, opened through /proc/@pid/root while the
 * process lives and kept until targetfs_free.  NULL when it is our own
 * root, or when it cannot be read (then plain paths are the best guess).
 */
const struct targetfs_root *targetfs_root_of(struct targetfs *fs, pid_t pid);

/*
 * The innermost pid of @pid (the last NSpid field of /proc/@pid/status):
 * the pid the process sees for itself.  @pid when the kernel shows no
 * NSpid, 0 when the status cannot be read (the process is gone).
 */
pid_t targetfs_nspid(pid_t pid);

/*
 * Open @path (absolute, as the process sees it) under @root (NULL: ours)
 * with open(2) @flags plus O_CLOEXEC, O_NOCTTY and O_NONBLOCK (a FIFO
 * planted under the name must not block us).  Symbolic links resolve
 * inside @root.  A descriptor, or -errno.
 */
int targetfs_open(const struct targetfs_root *root, const char *path, int flags);

/*
 * Open, read-only, the regular file mapped by @m in process @pid (0: no
 * process, only the path): its map_files entry, else its path under @root
 * when that still names the mapped inode.  *@how, when not NULL, says
 * which ("map_files", "root", "path").  A descriptor, or -errno (-ESTALE:
 * the path names another file now).
 */
int targetfs_open_mapped(pid_t pid, const struct targetfs_root *root, const struct xp_map *m,
			 const char **how);

#endif
