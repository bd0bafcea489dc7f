/* SPDX-License-Identifier: MIT */
/*
 * procfs: the stat, schedstat, status (switches) and syscall parsers on canned text (every form the
 * kernel writes, and malformed input), then the readers on this process, and a
 * child's CPU clock made from its pid.
 */
#include "t.h"

#include "clock.h"
#include "procfs.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int test_parse_schedstat(void)
{
	struct procfs_sched ss = {0};

	T_EQ_U64(procfs_parse_schedstat("123456789 2000 37\n", &ss), 0);
	T_EQ_U64(ss.cpu_ns, 123456789);
	T_EQ_U64(ss.wait_ns, 2000);
	T_EQ_U64(ss.count, 37);
	T_ASSERT(procfs_parse_schedstat("", &ss) < 0);
	T_ASSERT(procfs_parse_schedstat("12 34\n", &ss) < 0);
	T_ASSERT(procfs_parse_schedstat("x y z", &ss) < 0);
	return T_OK;
}

/* procfs_parse_switches into @v, @i: its result, -1 or 0. */
static int switches(const char *text, uint64_t *v, uint64_t *i)
{
	return procfs_parse_switches(text, v, i);
}

static int test_parse_switches(void)
{
	/* The end of a thread's status file, as 6.1 to 6.18 write it. */
	static const char status[] = "Name:\tthreads\nUmask:\t0022\nState:\tR (running)\n"
				     "Tgid:\t4242\nPid:\t4245\n"
				     "Mems_allowed_list:\t0\n"
				     "voluntary_ctxt_switches:\t12\n"
				     "nonvoluntary_ctxt_switches:\t30007\n";
	uint64_t v = 0, i = 0;

	T_EQ_U64(switches(status, &v, &i), 0);
	T_EQ_U64(v, 12);
	T_EQ_U64(i, 30007);
	/* Either line missing, cut short, or not a number: unreadable. */
	T_ASSERT(switches("nonvoluntary_ctxt_switches:\t5\n", &v, &i) < 0);
	T_ASSERT(switches("voluntary_ctxt_switches:\t5\n", &v, &i) < 0);
	T_ASSERT(switches("voluntary_ctxt_switches:\t5\nnonvoluntary_ctxt_switches:\t", &v, &i) <
		 0);
	T_ASSERT(
	    switches("voluntary_ctxt_switches:\t-5\nnonvoluntary_ctxt_switches:\t1\n", &v, &i) < 0);
	T_ASSERT(
	    switches("voluntary_ctxt_switches:\t5x\nnonvoluntary_ctxt_switches:\t1\n", &v, &i) < 0);
	T_ASSERT(switches("voluntary_ctxt_switches:\t99999999999999999999\n"
			  "nonvoluntary_ctxt_switches:\t1\n",
			  &v, &i) < 0);
	/* A name inside another line's value is not the line. */
	T_ASSERT(switches("Name:\tvoluntary_ctxt_switches:\t5\nnonvoluntary_ctxt_switches:\t1\n",
			  &v, &i) < 0);
	T_EQ_U64(switches("voluntary_ctxt_switches: 7\nnonvoluntary_ctxt_switches:\t1", &v, &i), 0);
	T_EQ_U64(v, 7);
	T_EQ_U64(i, 1);
	T_ASSERT(switches("", &v, &i) < 0);
	return T_OK;
}

static int test_parse_syscall(void)
{
	uint64_t sp = 0, pc = 0;

	/* Blocked in read(2): NR, six arguments, SP, PC. */
	T_EQ_U64(procfs_parse_syscall(
		     "0 0x3 0x7ffd1000 0x1000 0x0 0x0 0x0 0x7ffd0ff0 0x7f12345678\n", &sp, &pc),
		 0);
	T_EQ_U64(sp, 0x7ffd0ff0);
	T_EQ_U64(pc, 0x7f12345678);
	T_EQ_U64(procfs_parse_syscall("230 0x1 0x0 0x7ffc 0x0 0x0 0x0 0x10 0x20", &sp, &pc), 230);
	T_ASSERT(procfs_parse_syscall("running\n", &sp, &pc) == -1);
	T_ASSERT(procfs_parse_syscall("-1 0x7ffd0ff0 0x401000\n", &sp, &pc) == -1);
	T_ASSERT(procfs_parse_syscall("-1 0x0 0x0\n", &sp, &pc) == PROCFS_GONE);
	T_ASSERT(procfs_parse_syscall("-1\n", &sp, &pc) == -1);
	T_ASSERT(procfs_parse_syscall("7 0x1 0x2\n", &sp, &pc) == -1); /* truncated */
	T_ASSERT(procfs_parse_syscall("", &sp, &pc) == -1);
	/* No call has a number past 2^31: not a call. */
	T_ASSERT(procfs_parse_syscall("99999999999 0 0 0 0 0 0 0x10 0x20", &sp, &pc) == -1);
	return T_OK;
}

static int test_parse_running(void)
{
	T_EQ_U64(procfs_parse_running("0.52 0.58 0.59 3/250 4242\n"), 3);
	T_EQ_U64(procfs_parse_running("12.00 9.10 7.05 117/1830 99\n"), 117);
	T_ASSERT(procfs_parse_running("0.52 0.58 0.59 3 250\n") == -1);	 /* no '/' */
	T_ASSERT(procfs_parse_running("0.52 0.58 0.59 -3/250\n") == -1); /* negative */
	T_ASSERT(procfs_parse_running("0.52 0.58 0.59 99999999999/1\n") == -1);
	T_ASSERT(procfs_parse_running("0.52 0.58\n") == -1); /* too short */
	T_ASSERT(procfs_parse_running("") == -1);
	return T_OK;
}

/* A task's children file: space-separated process ids, a space after the last. */
static int test_parse_children(void)
{
	pid_t *kids = NULL, self = getpid();
	unsigned long alloc = 0;
	size_t nr = 0, i;
	bool found = false;
	pid_t child;
	int st;

	T_ASSERT(procfs_parse_children("4242 17 99999 ", &kids, &nr, &alloc) == 0);
	T_EQ_U64(nr, 3);
	T_EQ_U64(kids[0], 4242);
	T_EQ_U64(kids[2], 99999);
	/* Appended to what is there; an empty list adds nothing. */
	T_ASSERT(procfs_parse_children("7\n", &kids, &nr, &alloc) == 0);
	T_ASSERT(procfs_parse_children("", &kids, &nr, &alloc) == 0);
	T_EQ_U64(nr, 4);
	T_EQ_U64(kids[3], 7);
	T_ASSERT(procfs_parse_children("12 x 13 ", &kids, &nr, &alloc) == -1);
	T_ASSERT(procfs_parse_children("12-13 ", &kids, &nr, &alloc) == -1);
	T_ASSERT(procfs_parse_children("0 ", &kids, &nr, &alloc) == -1);
	T_ASSERT(procfs_parse_children("-5 ", &kids, &nr, &alloc) == -1);
	T_ASSERT(procfs_parse_children("99999999999999999999 ", &kids, &nr, &alloc) == -1);
	/* Nothing of a list that is not one is kept. */
	T_ASSERT(procfs_parse_children("8 9 x", &kids, &nr, &alloc) == -1);
	T_EQ_U64(nr, 4);
	/* A child of this process's is in its thread's file. */
	child = fork();
	T_ASSERT(child >= 0);
	if (!child) {
		pause();
		_exit(0);
	}
	nr = 0;
	st = procfs_children(self, self, &kids, &nr, &alloc);
	for (i = 0; i < nr; i++)
		found |= kids[i] == child;
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	free(kids);
	T_ASSERT(st == 0);
	T_ASSERT(found);
	return T_OK;
}

static int test_parse_task_cpu(void)
{
	/* A comm with spaces and ')' in it: fields count from the last ')'. */
	const char *stat =
	    "4242 (a) b (c)) R 1 4242 4242 0 -1 4194560 100 0 0 0 50 10 0 0 20 0 1 0 123 "
	    "1000000 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 "
	    "0 0 0\n";

	T_EQ_U64(procfs_parse_task_cpu(stat), 1);
	T_ASSERT(procfs_parse_task_cpu("4242 (a) R 1 2 3\n") == -1); /* too short */
	T_ASSERT(procfs_parse_task_cpu("garbage") == -1);
	T_ASSERT(procfs_parse_task_cpu("") == -1);
	return T_OK;
}

static int test_parse_task_cpu_faults(void)
{
	/* minflt 100 (field 10), majflt 7 (field 12), processor 1 (field 39). */
	const char *stat =
	    "4242 (a) b (c)) R 1 4242 4242 0 -1 4194560 100 3 7 0 50 10 0 0 20 0 1 0 123 "
	    "1000000 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 "
	    "0 0 0\n";
	/* The same with minflt out of range, then negative. */
	const char *big =
	    "4242 (a) R 1 4242 4242 0 -1 4194560 99999999999999999999999 3 7 0 50 10 0 0 20 0 "
	    "1 0 123 1000000 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0\n";
	const char *neg =
	    "4242 (a) R 1 4242 4242 0 -1 4194560 -5 3 7 0 50 10 0 0 20 0 "
	    "1 0 123 1000000 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0\n";
	uint64_t faults = 42;

	T_EQ_U64(procfs_parse_task_cpu_faults(stat, &faults), 1);
	T_EQ_U64(faults, 107);
	faults = 42;
	T_ASSERT(procfs_parse_task_cpu_faults(big, &faults) == -1);
	T_ASSERT(procfs_parse_task_cpu_faults(neg, &faults) == -1);
	T_ASSERT(procfs_parse_task_cpu_faults("4242 (a) R 1 2 3 4 5 6 7 8 9\n", &faults) == -1);
	T_ASSERT(procfs_parse_task_cpu_faults("", &faults) == -1);
	T_EQ_U64(faults, 42); /* unchanged on failure */
	return T_OK;
}

static int test_parse_job(void)
{
	char st = 0;
	long g = 0, t = 0;

	T_ASSERT(procfs_parse_job("4242 (a) b (c)) T 1 4240 4000 34817 4240 4194560 100\n", &st, &g,
				  &t) == 0);
	T_ASSERT(st == 'T');
	T_EQ_U64(g, 4240);
	T_EQ_U64(t, 4240);
	/* No controlling terminal: tty_nr 0, tpgid -1. */
	T_ASSERT(procfs_parse_job("7 (sh) S 1 7 7 0 -1 4194560\n", &st, &g, &t) == 0);
	T_ASSERT(st == 'S' && g == 7 && t == -1);
	T_ASSERT(procfs_parse_job("4242 (a) R 1 2 3\n", &st, &g, &t) == -1); /* too short */
	T_ASSERT(procfs_parse_job("4242 (a) R x 2 3 4 5\n", &st, &g, &t) == -1);
	T_ASSERT(procfs_parse_job("garbage", &st, &g, &t) == -1);
	T_ASSERT(procfs_parse_job("", &st, &g, &t) == -1);
	return T_OK;
}

/* tests/data/mountinfo/NAME, read whole, NUL-terminated; NULL if unreadable. */
static char *mountinfo_text(const char *name)
{
	const char *dir = getenv("XP_DATA");
	char path[4096], *buf = NULL;
	size_t len = 0, n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/mountinfo/%s", dir ? dir : "tests/data", name);
	f = fopen(path, "re");
	if (!f)
		return NULL;
	buf = malloc(1 << 16);
	if (buf) {
		n = fread(buf, 1, (1 << 16) - 1, f);
		len = n;
		buf[len] = 0;
	}
	fclose(f);
	return buf;
}

/*
 * The mount on top at /proc, from mountinfo files as the kernel writes
 * them (tests/data/mountinfo/README): plain, hidepid by name and by
 * number with gid=, a proc mount elsewhere that does not count, a tmpfs
 * over /proc; and lines the parser must not trip on.
 */
static int test_parse_mountinfo(void)
{
	static const struct {
		const char *file;
		int ret, hidepid;
		long gid;
	} files[] = {
	    {"host.mountinfo", 0, 0, -1},
	    {"hidepid.mountinfo", 0, 2, 4},
	    {"numeric.mountinfo", 0, 2, 4},
	    {"noproc.mountinfo", -1, 0, -1},
	};
	int hidepid;
	long gid;
	size_t i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *text = mountinfo_text(files[i].file);

		T_ASSERT(text != NULL);
		hidepid = 7;
		gid = 7;
		T_EQ_U64(procfs_parse_mountinfo(text, &hidepid, &gid), files[i].ret);
		T_EQ_U64(hidepid, files[i].hidepid);
		T_EQ_U64(gid, files[i].gid);
		free(text);
	}
	T_EQ_U64(procfs_parse_mountinfo("22 1 0:5 / /proc rw - proc proc rw,hidepid=ptraceable\n",
					&hidepid, &gid),
		 0);
	T_EQ_U64(hidepid, 4);
	/* Out of range, unknown, cut lines, no super options, an empty text. */
	T_EQ_U64(procfs_parse_mountinfo("1 1 0:5 / /proc rw - proc proc hidepid=99,gid=x", &hidepid,
					&gid),
		 0);
	T_EQ_U64(hidepid, 0);
	T_EQ_U64(gid, -1);
	T_EQ_U64(
	    procfs_parse_mountinfo("1 1 0:5 / /proc rw - proc proc hidepid=bogus", &hidepid, &gid),
	    0);
	T_EQ_U64(hidepid, 0);
	T_EQ_U64(procfs_parse_mountinfo("1 1 0:5 / /proc rw - proc proc", &hidepid, &gid), 0);
	T_EQ_U64(procfs_parse_mountinfo("1 1 0:5 / /proc rw - proc", &hidepid, &gid), -1);
	T_EQ_U64(procfs_parse_mountinfo("1 1 0:5 / /proc rw", &hidepid, &gid), -1);
	T_EQ_U64(
	    procfs_parse_mountinfo("1 1 0:5 / /procfs rw - proc proc hidepid=2", &hidepid, &gid),
	    -1);
	T_EQ_U64(procfs_parse_mountinfo("", &hidepid, &gid), -1);
	return T_OK;
}

/* This process's /proc: mounted here, with whatever hidepid the machine has. */
static int test_mount_state(void)
{
	struct procfs_mount m;
	char hint[512];

	procfs_mount_state(&m);
	T_EQ_U64(m.mounted, 1);
	T_ASSERT(m.hidepid >= 0 && m.hidepid <= 4);
	/* A pid that does not exist is gone, not hidden. */
	T_ASSERT(!procfs_explain_hidden(0x3fffffff, ENOENT, hint, sizeof(hint)));
	T_EQ_STR(hint, "");
	return T_OK;
}

/* Use @ms of this thread's CPU time. */
static void burn_cpu_ms(long ms)
{
	struct timespec ts;

	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	while (ts.tv_sec == 0 && ts.tv_nsec < ms * 1000000);
}

/* Touch @n pages never touched before (each a page fault), and let them go. */
static void touch_fresh_pages(size_t n)
{
	long page = sysconf(_SC_PAGESIZE);
	volatile char *p = mmap(NULL, n * (size_t)page, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t i;

	if (p == MAP_FAILED)
		return;
	for (i = 0; i < n; i++)
		p[i * (size_t)page] = 1;
	munmap((void *)p, n * (size_t)page);
}

static int test_self(void)
{
	pid_t pid = getpid(), tgid = 0, ppid = 0;
	struct procfs_sched ss = {0};
	uint64_t sp, pc, faults = 0, faults2 = 0;
	char comm[16], exe[4096];
	int fd;

	procfs_comm(pid, pid, comm, sizeof(comm));
	T_EQ_STR(comm, "test_procfs");
	/* Not set-user-ID nor set-group-ID: nothing its exec could have raised. */
	T_ASSERT(procfs_exe_privilege_lost(pid) == PROCFS_PRIV_NONE);
	T_ASSERT(procfs_exe_privilege_lost(0x3fffffff) == PROCFS_PRIV_NONE); /* no such pid */
	/* The file kept open reads the name in force at each read. */
	fd = procfs_open_task(pid, pid, "comm");
	T_ASSERT(fd >= 0);
	procfs_comm_fd(fd, comm, sizeof(comm));
	T_EQ_STR(comm, "test_procfs");
	T_EQ_U64(prctl(PR_SET_NAME, "renamed"), 0);
	procfs_comm_fd(fd, comm, sizeof(comm));
	T_EQ_STR(comm, "renamed");
	T_EQ_U64(prctl(PR_SET_NAME, "test_procfs"), 0);
	close(fd);
	procfs_comm_fd(-1, comm, sizeof(comm));
	T_EQ_STR(comm, "");
	T_EQ_U64(procfs_status_ids(pid, &tgid, &ppid), 0);
	T_EQ_U64(tgid, pid);
	T_EQ_U64(ppid, getppid());
	procfs_exe(pid, exe, sizeof(exe));
	T_ASSERT(strstr(exe, "test_procfs") != NULL);
	T_ASSERT(procfs_task_state(pid, pid) == 'R');
	fd = procfs_open_task(pid, pid, "stat");
	T_ASSERT(fd >= 0);
	/* Not compared with sched_getcpu(): the thread may move in between. */
	T_ASSERT(procfs_task_cpu(fd) >= 0 && procfs_task_cpu(fd) < sysconf(_SC_NPROCESSORS_CONF));
	/* Touching fresh pages is counted in the thread's own faults. */
	T_ASSERT(procfs_task_cpu_faults(fd, &faults) >= 0);
	touch_fresh_pages(64);
	T_ASSERT(procfs_task_cpu_faults(fd, &faults2) >= 0);
	T_ASSERT(faults2 >= faults + 64);
	close(fd);
	/*
	 * The kernel shows the run time as of the task's last tick or switch:
	 * a process younger than a tick may show 0.  Run a little, then yield.
	 */
	burn_cpu_ms(3);
	sched_yield();
	fd = procfs_open_task(pid, pid, "schedstat");
	T_ASSERT(fd >= 0);
	T_EQ_U64(procfs_schedstat(fd, &ss), 0);
	T_ASSERT(ss.cpu_ns > 0 && ss.count > 0);
	close(fd);
	fd = procfs_open_task(pid, pid, "syscall");
	if (fd >= 0) {
		/* Read by this thread itself: it is in the pread64 that reads it. */
		T_EQ_U64(procfs_syscall(fd, &sp, &pc), SYS_pread64);
		T_ASSERT(sp != 0 && pc != 0);
		close(fd);
	}
	/*
	 * This thread runs while it reads: it got a CPU once more than it left
	 * one.  A preemption between the two reads breaks that once in a while.
	 */
	{
		int sfd = procfs_open_task(pid, pid, "status"), tries, held = 0;
		uint64_t vol = 0, invol = 0;

		fd = procfs_open_task(pid, pid, "schedstat");
		T_ASSERT(sfd >= 0 && fd >= 0);
		for (tries = 0; tries < 20 && !held; tries++) {
			T_EQ_U64(procfs_schedstat(fd, &ss), 0);
			T_EQ_U64(procfs_switches(sfd, &vol, &invol), 0);
			held = ss.count == vol + invol + 1;
		}
		T_ASSERT(held);
		close(sfd);
		close(fd);
	}
	/* Gone or never there: unreadable, not a crash. */
	procfs_comm(pid, 0x3fffffff, comm, sizeof(comm));
	T_EQ_STR(comm, "");
	T_ASSERT(procfs_task_state(pid, 0x3fffffff) == '?');
	T_ASSERT(procfs_schedstat(-1, &ss) < 0);
	{
		uint64_t vol, invol;

		T_ASSERT(procfs_switches(-1, &vol, &invol) < 0);
	}
	return T_OK;
}

/*
 * xp_process_clock: the id clock_getcpuclockid gives, for this process and
 * a child; the child's clock reads its CPU time while it lives (a zombie
 * keeps it), and fails once it is reaped.
 */
static int test_process_clock(void)
{
	clockid_t id;
	uint64_t ns = 0, again = 0;
	pid_t child;
	int status;

	T_EQ_U64(clock_getcpuclockid(getpid(), &id), 0);
	T_EQ_U64((uint64_t)xp_process_clock(getpid()), (uint64_t)id);
	child = fork();
	T_ASSERT(child >= 0);
	if (!child) {
		struct timespec t0, t;

		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
		do
			clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
		while ((t.tv_sec - t0.tv_sec) * 1000000000L + t.tv_nsec - t0.tv_nsec < 20000000L);
		_exit(0);
	}
	T_EQ_U64(clock_getcpuclockid(child, &id), 0);
	T_EQ_U64((uint64_t)xp_process_clock(child), (uint64_t)id);
	T_EQ_U64(waitid(P_PID, (id_t)child, NULL, WEXITED | WNOWAIT), 0);
	T_EQ_U64(xp_clock_read(xp_process_clock(child), &ns), 0);
	T_ASSERT(ns >= 20000000ull);
	T_EQ_U64(waitpid(child, &status, 0), (uint64_t)child);
	T_ASSERT(xp_clock_read(xp_process_clock(child), &again) < 0);
	return T_OK;
}

T_MAIN(T_CASE(test_parse_schedstat), T_CASE(test_parse_switches), T_CASE(test_parse_syscall),
       T_CASE(test_parse_task_cpu), T_CASE(test_parse_task_cpu_faults), T_CASE(test_parse_job),
       T_CASE(test_parse_running), T_CASE(test_parse_children), T_CASE(test_parse_mountinfo),
       T_CASE(test_mount_state), T_CASE(test_self), T_CASE(test_process_clock))
