/* SPDX-License-Identifier: MIT */
/*
 * What the record side reads from /proc about a task, in one place: its
 * name, ids and state, its scheduler counters (schedstat), the system call
 * it is blocked in (syscall), its executable.  Files read on every tick are
 * opened once by the caller (procfs_open_task) and read with pread.  The
 * parsers take the text and are unit-tested on canned data.  Nothing here
 * prints; a thread that is gone reads as unreadable.
 */
#ifndef XPROF_TARGET_PROCFS_H
#define XPROF_TARGET_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* /proc/@pid/task/@tid/comm without its newline into @out; "" when unreadable. */
void procfs_comm(pid_t pid, pid_t tid, char *out, size_t len);

/* The same from @fd, that file kept open (procfs_open_task); "" when unreadable. */
void procfs_comm_fd(int fd, char *out, size_t len);

/* Tgid and PPid of @tid from /proc/@tid/status.  0, or -errno (-EINVAL if missing). */
int procfs_status_ids(pid_t tid, pid_t *tgid, pid_t *ppid);

/* TracerPid of @pid from /proc/@pid/status: its tracer, 0 if none or unreadable. */
pid_t procfs_tracer(pid_t pid);

/* The target of /proc/@pid/exe into @out; "" when unreadable. */
void procfs_exe(pid_t pid, char *out, size_t len);

/*
 * /proc/@pid/task/@tid/stat: its state letter (R, S, D, T, t, Z...), '?'
 * when unreadable.
 */
char procfs_task_state(pid_t pid, pid_t tid);

/*
 * From /proc/@pid/stat (parse: from a line of it): the state letter into
 * *@state, the process group (field 5) into *@pgrp and the foreground
 * process group of its controlling terminal (field 8, -1 without one) into
 * *@tpgid.  0, or -1 when unreadable or not such a line.
 */
int procfs_job(pid_t pid, char *state, long *pgrp, long *tpgid);
int procfs_parse_job(const char *stat, char *state, long *pgrp, long *tpgid);

/*
 * The child processes of task @tid of process @pid, from
 * /proc/@pid/task/@tid/children (space-separated process ids; the kernel
 * option CONFIG_PROC_CHILDREN), appended to *@out, which holds *@nr of
 * *@alloc (xp_grow).  0, or -1 when unreadable or not such a list.
 */
int procfs_children(pid_t pid, pid_t tid, pid_t **out, size_t *nr, unsigned long *alloc);
int procfs_parse_children(const char *text, pid_t **out, size_t *nr, unsigned long *alloc);

/* The CPU the task runs or waits on (stat field 39, "processor"), -1 when unreadable. */
int procfs_task_cpu(int stat_fd);
int procfs_parse_task_cpu(const char *stat);

/*
 * The same read with the page faults the task has taken, minor and major
 * (stat fields 10 and 12, minflt and majflt), summed into *@faults.  The
 * CPU, or -1 when unreadable (then *@faults is unchanged).
 */
int procfs_task_cpu_faults(int stat_fd, uint64_t *faults);
int procfs_parse_task_cpu_faults(const char *stat, uint64_t *faults);

/*
 * The tasks running or runnable on the machine right now, the caller
 * among them (/proc/loadavg's fourth field, "RUNNING/TOTAL"), from the
 * file open on @fd; -1 when unreadable.
 */
long procfs_running(int loadavg_fd);
long procfs_parse_running(const char *loadavg);

/* open(/proc/@pid/task/@tid/@file, O_RDONLY | O_CLOEXEC): a descriptor or -1. */
int procfs_open_task(pid_t pid, pid_t tid, const char *file);

/* A task's schedstat: "on-CPU ns, run-queue wait ns, times scheduled in". */
struct procfs_sched {
	uint64_t cpu_ns, wait_ns, count;
};

/*
 * schedstat from the descriptor @fd (pread at 0), or parsed from the text
 * @buf.  0, or -1 when unreadable or malformed.
 */
int procfs_schedstat(int fd, struct procfs_sched *ss);
int procfs_parse_schedstat(const char *buf, struct procfs_sched *ss);

/*
 * From a task's status file (@fd, or the text @buf): the times it left a
 * CPU, voluntarily (blocked, stopped: voluntary_ctxt_switches, into
 * *@vol) or not (preempted: nonvoluntary_ctxt_switches, *@invol).  With
 * schedstat's count of times it got one, it runs now exactly when that
 * count is one more than their sum.  0, or -1 when unreadable or
 * malformed.
 */
int procfs_switches(int fd, uint64_t *vol, uint64_t *invol);
int procfs_parse_switches(const char *buf, uint64_t *vol, uint64_t *invol);

#define PROCFS_GONE (-2) /* the thread has exited and waits to be reaped */

/*
 * syscall: "NR args... SP PC" for a task blocked in a system call,
 * "running" for one on a CPU, "-1 SP PC" outside a call (a ptrace-stopped
 * thread), "-1 0x0 0x0" once it has exited.  Returns the call's number
 * (with @sp and @pc), -1 when not blocked or unreadable, PROCFS_GONE.
 */
int64_t procfs_syscall(int fd, uint64_t *sp, uint64_t *pc);
int64_t procfs_parse_syscall(const char *buf, uint64_t *sp, uint64_t *pc);

/*
 * What the system lets xprof see in /proc.  Without a proc file system
 * at /proc (a chroot or a container that has none) nothing of a target
 * can be named; with hidepid (proc(5), "Mount options"), /proc shows
 * xprof only the processes it may trace (hidepid=ptraceable, 4) or those
 * of its own user, unless it is in the mount's gid group or has
 * CAP_SYS_PTRACE.
 */
struct procfs_mount {
	int mounted; /* 1: a proc file system at /proc that shows this process */
	int hidepid; /* 0 off, 1 noaccess, 2 invisible, 4 ptraceable */
	long gid;    /* gid= of the mount, -1 when none */
};

/* The state of /proc into @m (statfs, /proc/self/mountinfo). */
void procfs_mount_state(struct procfs_mount *m);

/*
 * From the text of a mountinfo file (proc(5)): hidepid= and gid= of what
 * is mounted at /proc, its last line (the mount on top).  hidepid is a
 * number or a name (off, noaccess, invisible, ptraceable); *@hidepid 0
 * and *@gid -1 when absent.  0, or -1 when nothing, or no proc file
 * system, is mounted on top at /proc.
 */
int procfs_parse_mountinfo(const char *text, int *hidepid, long *gid);

/* Whether this process has capability @cap in its effective set (CapEff of its status). */
bool procfs_self_has_cap(int cap);

/*
 * What process @pid's executable would have raised that its exec did not
 * (a set-user-ID or set-group-ID file, or file capabilities), or
 * PROCFS_PRIV_NONE.  The kernel runs such a program with the caller's own
 * credentials when the tracer lacks CAP_SYS_PTRACE over it.  The file's
 * owner and mode (stat of /proc/@pid/exe) against the process's effective
 * ids: the owner of /proc/@pid, which such an exec leaves dumpable.
 */
enum procfs_priv {
	PROCFS_PRIV_NONE,
	PROCFS_PRIV_SETUID,
	PROCFS_PRIV_SETGID,
	PROCFS_PRIV_CAPS,
};
enum procfs_priv procfs_exe_privilege_lost(pid_t pid);

/*
 * Why the /proc files of process @pid failed to open or read with -@err,
 * and what to do, as one hint line into @buf (without "hint: "): /proc
 * not mounted, hidepid, no CAP_SYS_PTRACE for a process of another user
 * or one that made itself non-dumpable.  Returns false, with @buf empty,
 * when the process is simply gone (its pid no longer exists).
 */
bool procfs_explain_hidden(pid_t pid, int err, char *buf, size_t len);

#endif
