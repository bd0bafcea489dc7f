/* SPDX-License-Identifier: MIT */
/*
 * ptrace bookkeeping for every traced thread and process: launch under
 * PTRACE_SEIZE, seize running processes, decode wait statuses into events,
 * resume with the right signal, and detach.  Sampling decisions belong to
 * the sampler; this file only knows the ptrace state machine (see strace's
 * README-linux-ptrace and ptrace(2), "Group-stop" and "PTRACE_EVENT stops").
 */
#include "tracer.h"
#include "clock.h"
#include "err.h"
#include "procfs.h"
#include "sorted.h"
#include "spawn.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef PTRACE_EVENT_STOP
#define PTRACE_EVENT_STOP 128
#endif

static unsigned long seize_options(const struct tracer *t)
{
	unsigned long o = PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC;

	if (t->flags & TRACER_FOLLOW)
		o |= PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK;
	if (t->flags & TRACER_EXIT_STOPS)
		o |= PTRACE_O_TRACEEXIT;
	return o;
}

void tracer_init(struct tracer *t, unsigned int flags)
{
	memset(t, 0, sizeof(*t));
	t->flags = flags;
	t->exec_err_fd = -1;
}

static void free_thread(struct tracer *t, struct xp_thread *th)
{
	if (t->hooks.thread_free)
		t->hooks.thread_free(t->hooks.ctx, th);
	tracer_comm_close(th);
	free(th);
}

void tracer_comm(const struct xp_thread *th, char *out, size_t len)
{
	if (th->comm_fd >= 0)
		procfs_comm_fd(th->comm_fd, out, len);
	else
		procfs_comm(th->proc->pid, th->tid, out, len);
}

void tracer_comm_open(struct xp_thread *th)
{
	if (th->comm_fd < 0)
		th->comm_fd = procfs_open_task(th->proc->pid, th->tid, "comm");
}

void tracer_comm_close(struct xp_thread *th)
{
	if (th->comm_fd >= 0)
		close(th->comm_fd);
	th->comm_fd = -1;
}

void tracer_release(struct tracer *t)
{
	unsigned long i;

	for (i = 0; i < t->nthreads; i++)
		free_thread(t, t->threads[i]);
	for (i = 0; i < t->nprocs; i++) {
		if (t->hooks.proc_free)
			t->hooks.proc_free(t->hooks.ctx, t->procs[i]);
		free(t->procs[i]);
	}
	free(t->threads);
	free(t->procs);
	if (t->exec_err_fd >= 0)
		close(t->exec_err_fd);
	memset(t, 0, sizeof(*t));
	t->exec_err_fd = -1;
}

/* Threads are kept sorted by tid: lookups by bisection, iteration in order. */
static unsigned long thread_pos(const struct tracer *t, pid_t tid, bool *found)
{
	unsigned long lo = XP_PARTITION_POINT(0, t->nthreads, i, t->threads[i]->tid < tid);

	*found = lo < t->nthreads && t->threads[lo]->tid == tid;
	return lo;
}

struct xp_thread *tracer_find(const struct tracer *t, pid_t tid)
{
	bool found;
	unsigned long i = thread_pos(t, tid, &found);

	return found ? t->threads[i] : NULL;
}

bool tracer_unknown_birth(const struct tracer *t, pid_t tid, int status)
{
	return WIFSTOPPED(status) && (unsigned)status >> 16 == PTRACE_EVENT_STOP &&
	       !tracer_find(t, tid);
}

struct xp_thread *tracer_thread_at(const struct tracer *t, unsigned long *i)
{
	return *i < t->nthreads ? t->threads[(*i)++] : NULL;
}

unsigned long tracer_live_threads(const struct tracer *t)
{
	return t->nthreads;
}

/*
 * The live process @pid, found through its threads: its leader by
 * bisection, or (a leader gone before its threads) a pass over the live
 * threads.  Never a pass over every process seen, which a fork storm
 * would make quadratic.
 */
static struct xp_process *find_proc(const struct tracer *t, pid_t pid)
{
	struct xp_thread *th = tracer_find(t, pid);
	unsigned long i;

	if (th && th->proc->pid == pid && !th->proc->exited)
		return th->proc;
	for (i = 0; i < t->nthreads; i++)
		if (t->threads[i]->proc->pid == pid && !t->threads[i]->proc->exited)
			return t->threads[i]->proc;
	return NULL;
}

/* A process seen now, named @comm, or (NULL or "") as /proc names it. */
static struct xp_process *add_proc(struct tracer *t, pid_t pid, pid_t ppid, const char *comm)
{
	struct xp_process *p = xp_calloc(1, sizeof(*p));

	p->pid = pid;
	p->ppid = ppid;
	if (comm && comm[0])
		snprintf(p->comm, sizeof(p->comm), "%s", comm);
	else
		procfs_comm(pid, pid, p->comm, sizeof(p->comm));
	xp_grow((void **)&t->procs, &t->procs_alloc, t->nprocs + 1, sizeof(*t->procs));
	t->procs[t->nprocs++] = p;
	t->procs_seen++;
	return p;
}

static struct xp_thread *add_thread(struct tracer *t, struct xp_process *p, pid_t tid,
				    enum thread_state state)
{
	struct xp_thread *th;
	unsigned long alloc = t->nslots;
	bool found;
	unsigned long i = thread_pos(t, tid, &found);

	if (found)
		return t->threads[i];
	th = xp_calloc(1, sizeof(*th));
	th->comm_fd = -1;
	th->tid = tid;
	th->state = state;
	th->proc = p;
	xp_grow((void **)&t->threads, &alloc, t->nthreads + 1, sizeof(*t->threads));
	t->nslots = alloc;
	memmove(t->threads + i + 1, t->threads + i, (t->nthreads - i) * sizeof(*t->threads));
	t->threads[i] = th;
	t->nthreads++;
	p->nr_threads++;
	p->threads_seen++;
	t->threads_seen++;
	return th;
}

static void remove_thread(struct tracer *t, struct xp_thread *th)
{
	bool found;
	unsigned long i = thread_pos(t, th->tid, &found);

	if (!found || t->threads[i] != th)
		XP_BUG("removing an unknown thread");
	memmove(t->threads + i, t->threads + i + 1, (t->nthreads - i - 1) * sizeof(*t->threads));
	t->nthreads--;
	th->proc->nr_threads--;
	if (th->interrupt_pending)
		t->interrupts_pending--;
	free_thread(t, th);
}

/* A thread we have not heard of: a new thread or process whose creator's event is still queued. */
static struct xp_thread *adopt(struct tracer *t, pid_t tid, pid_t hint_tgid, pid_t hint_ppid)
{
	pid_t tgid = hint_tgid, ppid = hint_ppid;
	struct xp_process *p;

	if (procfs_status_ids(tid, &tgid, &ppid) && !tgid)
		tgid = tid;
	p = find_proc(t, tgid);
	if (!p) {
		p = add_proc(t, tgid, ppid, NULL);
		p->execed = true; /* a fork child runs its parent's image */
	}
	return add_thread(t, p, tid, THREAD_NEW);
}

/*
 * The child of @creator's fork or vfork, seen at the creator's event stop:
 * a process of its own whose ids the event gives (no /proc status read).
 * Its name is the creator's, the forking thread's (not always the
 * process's): the creator cannot rename itself in its stop, and the child
 * has not run.  It is read from the creator's comm file, kept open for its
 * next forks: an open, read and close of the new task's file cost ~9 us,
 * the most of a short process's own opens.
 */
static struct xp_thread *adopt_forked(struct tracer *t, pid_t pid, struct xp_thread *creator)
{
	struct xp_process *p;
	char comm[sizeof(p->comm)] = "";

	tracer_comm_open(creator);
	tracer_comm(creator, comm, sizeof(comm));
	p = add_proc(t, pid, creator->proc->pid, comm);

	p->execed = true; /* it runs its parent's image */
	return add_thread(t, p, pid, THREAD_NEW);
}

int tracer_launch(struct tracer *t, char **argv)
{
	int go[2], err[2], e;
	struct xp_process *p;
	pid_t pid;
	char c = 'g';

	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(err, O_CLOEXEC)) {
		e = -errno;
		close(go[0]);
		close(go[1]);
		return e;
	}
	/* The child waits until we have seized it, then execs. */
	pid = spawn_held(argv, go, err, 0);
	if (pid < 0) {
		e = -errno;
		close(go[0]);
		close(go[1]);
		close(err[0]);
		close(err[1]);
		return e;
	}
	close(go[0]);
	close(err[1]);
	if (ptrace(PTRACE_SEIZE, pid, 0, seize_options(t)) < 0) {
		e = -errno;
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		close(go[1]);
		close(err[0]);
		return e;
	}
	p = add_proc(t, pid, getpid(), NULL);
	add_thread(t, p, pid, THREAD_RUNNING);
	t->root = pid;
	t->exec_err_fd = err[0];
	if (write(go[1], &c, 1) != 1)
		e = -errno;
	else
		e = 0;
	close(go[1]);
	return e;
}

int tracer_exec_error(struct tracer *t)
{
	int e = 0;

	if (t->exec_err_fd < 0)
		return 0;
	if (read(t->exec_err_fd, &e, sizeof(e)) != sizeof(e))
		e = 0;
	return e;
}

static int seize_thread(struct tracer *t, struct xp_process *p, pid_t tid)
{
	if (tracer_find(t, tid))
		return 0;
	if (ptrace(PTRACE_SEIZE, tid, 0, seize_options(t)) < 0)
		return -errno;
	add_thread(t, p, tid, THREAD_RUNNING);
	return 0;
}

/*
 * Seize process @pid and its threads; with @parent, only while it is that
 * process's child: a child listed, then gone, may have left its pid to
 * another process, which is let go at once.
 */
static int seize_process(struct tracer *t, pid_t pid, pid_t parent)
{
	struct xp_process *p;
	pid_t tgid = 0, ppid = 0;
	char path[64];
	int e, rounds, added;

	if ((e = procfs_status_ids(pid, &tgid, &ppid)))
		return e == -ENOENT ? -ESRCH : e;
	if (tgid != pid)
		return -EINVAL; /* a thread id, not a process id */
	if (parent && ppid != parent)
		return -ESRCH;
	if (ptrace(PTRACE_SEIZE, pid, 0, seize_options(t)) < 0)
		return -errno;
	if (parent && (procfs_status_ids(pid, &tgid, &ppid) || ppid != parent)) {
		ptrace(PTRACE_DETACH, pid, 0, 0);
		return -ESRCH;
	}
	p = add_proc(t, pid, ppid, NULL);
	p->execed = true;
	add_thread(t, p, pid, THREAD_RUNNING);
	/*
	 * Threads created while we scan are either in the listing of a later
	 * pass or auto-attached through PTRACE_O_TRACECLONE by an already
	 * seized thread; rescan until a pass adds nothing.
	 */
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	for (rounds = 0; rounds < 100; rounds++) {
		struct dirent *de;
		DIR *d = opendir(path);

		if (!d)
			break;
		added = 0;
		while ((de = readdir(d))) {
			char *end;
			long tid = strtol(de->d_name, &end, 10);

			if (*end || tid <= 0 || tracer_find(t, (pid_t)tid))
				continue;
			if (!seize_thread(t, p, (pid_t)tid))
				added++;
		}
		closedir(d);
		if (!added)
			break;
	}
	return 0;
}

int tracer_attach(struct tracer *t, pid_t pid)
{
	return seize_process(t, pid, 0);
}

/* A walk down the traced tree (tracer_attach_descendants). */
struct descent {
	pid_t *kids; /* the children of the process looked into */
	size_t nkids;
	unsigned long kids_alloc;
	pid_t skip[64]; /* xprof and its ancestors */
	unsigned int nskip;
	pid_t *refused; /* children that could not be seized, once each */
	size_t nrefused;
	unsigned long refused_alloc;
	int err; /* the errno of the first refusal */
};

/* The children of every thread of traced process @p into d->kids. */
static void list_children(const struct xp_process *p, struct descent *d)
{
	char path[64];
	struct dirent *de;
	DIR *dir;

	d->nkids = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)p->pid);
	dir = opendir(path);
	if (!dir)
		return; /* gone */
	while ((de = readdir(dir))) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);

		if (!*end && tid > 0)
			procfs_children(p->pid, (pid_t)tid, &d->kids, &d->nkids, &d->kids_alloc);
	}
	closedir(dir);
}

/*
 * This process and its ancestors into d->skip: a shell that ran xprof
 * attach on itself has them below it, and they are not to be seized.
 */
static void own_line(struct descent *d)
{
	pid_t pid = getpid(), tgid, ppid;

	while (pid > 1 && d->nskip < sizeof(d->skip) / sizeof(d->skip[0])) {
		d->skip[d->nskip++] = pid;
		if (procfs_status_ids(pid, &tgid, &ppid))
			break;
		pid = ppid;
	}
}

static bool in_list(const pid_t *list, size_t n, pid_t pid)
{
	while (n--)
		if (list[n] == pid)
			return true;
	return false;
}

/*
 * Seize the children of traced process @p in d->kids not seized yet, but
 * those in d->skip; the refused ones go into d->refused.  How many were
 * seized.  A child that exited (a zombie its parent has not reaped yet:
 * the kernel refuses to seize it) is gone, not refused; so is one traced
 * by us already, through its parent's fork since.
 */
static unsigned long seize_children(struct tracer *t, const struct xp_process *p, struct descent *d)
{
	unsigned long seized = 0;
	size_t k;
	char st;
	int e;

	for (k = 0; k < d->nkids; k++) {
		pid_t kid = d->kids[k];

		if (tracer_find(t, kid) || in_list(d->skip, d->nskip, kid) ||
		    in_list(d->refused, d->nrefused, kid))
			continue;
		e = seize_process(t, kid, p->pid);
		if (!e) {
			seized++;
			continue;
		}
		st = procfs_task_state(kid, kid);
		if (e == -ESRCH || e == -ENOENT || st == 'Z' || st == 'X' || st == '?' ||
		    (e == -EPERM && procfs_tracer(kid) == getpid()))
			continue;
		if (!d->nrefused)
			d->err = -e;
		xp_grow((void **)&d->refused, &d->refused_alloc, d->nrefused + 1,
			sizeof(*d->refused));
		d->refused[d->nrefused++] = kid;
	}
	return seized;
}

int tracer_attach_descendants(struct tracer *t, unsigned long *nrefused, int *err)
{
	struct descent d = {0};
	unsigned int rounds;
	char path[64];
	unsigned long i;

	*nrefused = 0;
	*err = 0;
	if (!(t->flags & TRACER_FOLLOW))
		return 0;
	snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int)getpid());
	if (access(path, F_OK))
		return -1;
	own_line(&d);
	/*
	 * t->procs grows as children are seized: each is looked into in turn,
	 * its list read again until a pass seizes nothing (a child whose fork
	 * was under way as its parent was seized, listed only after).
	 */
	for (i = 0; i < t->nprocs; i++) {
		if (t->procs[i]->exited)
			continue;
		for (rounds = 0; rounds < 100; rounds++) {
			list_children(t->procs[i], &d);
			if (!seize_children(t, t->procs[i], &d))
				break;
		}
	}
	*nrefused = d.nrefused;
	*err = d.err;
	free(d.kids);
	free(d.refused);
	return 0;
}

int tracer_interrupt(struct tracer *t, struct xp_thread *th)
{
	if (ptrace(PTRACE_INTERRUPT, th->tid, 0, 0) < 0) {
		if (errno == ESRCH)
			t->vanished++;
		return -errno;
	}
	if (!th->interrupt_pending)
		t->interrupts_pending++;
	th->interrupt_pending = true;
	return 0;
}

int tracer_resume(struct tracer *t, struct xp_thread *th, int sig)
{
	(void)t;
	if (ptrace(PTRACE_CONT, th->tid, 0, (long)sig) < 0)
		return -errno;
	th->state = THREAD_RUNNING;
	return 0;
}

int tracer_finish_stop(struct tracer *t, const struct tracer_event *ev)
{
	struct xp_thread *th = ev->th;

	if (ev->kind != TEV_STOP || !th)
		return 0;
	if (ev->listen) {
		if (ptrace(PTRACE_LISTEN, th->tid, 0, 0) < 0)
			return -errno;
		th->state = THREAD_LISTENING;
		return 0;
	}
	return tracer_resume(t, th, ev->sig);
}

static bool is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

static void handle_exec(struct tracer *t, struct xp_thread *th)
{
	struct xp_process *p = th->proc;
	unsigned long former = 0, i;

	/*
	 * ptrace(2) "execve(2) under ptrace": every other thread is gone; a
	 * non-leader that exec'd now has the leader's tid and its old tid is
	 * never reported again.
	 */
	if (ptrace(PTRACE_GETEVENTMSG, th->tid, 0, &former) == 0 && (pid_t)former != th->tid) {
		struct xp_thread *old = tracer_find(t, (pid_t)former);

		if (old && old != th)
			remove_thread(t, old);
	}
	for (i = 0; i < t->nthreads;) {
		struct xp_thread *o = t->threads[i];

		if (o->proc == p && o != th)
			remove_thread(t, o);
		else
			i++;
	}
	p->execed = true;
	th->exiting = false;   /* a non-leader's exec: its tid was the leader's */
	tracer_comm_close(th); /* the leader's task's file, which may be gone */
	procfs_comm(p->pid, p->pid, p->comm, sizeof(p->comm));
}

static void handle_new_child(struct tracer *t, struct xp_thread *parent, int event,
			     struct tracer_event *ev)
{
	unsigned long msg = 0;
	struct xp_thread *child;
	pid_t tgid, ppid;

	if (ptrace(PTRACE_GETEVENTMSG, parent->tid, 0, &msg) < 0 || !msg)
		return;
	child = tracer_find(t, (pid_t)msg);
	if (child) {
		ev->child = child;
		return;
	}
	if (event == PTRACE_EVENT_CLONE) {
		/* A thread, unless clone() made a process: ask /proc. */
		tgid = parent->proc->pid;
		ppid = parent->proc->ppid;
		child = adopt(t, (pid_t)msg, tgid, ppid);
	} else {
		child = adopt_forked(t, (pid_t)msg, parent);
	}
	ev->child = child;
}

int tracer_handle_status(struct tracer *t, pid_t tid, int status, struct tracer_event *ev)
{
	return tracer_handle_status_of(t, tracer_find(t, tid), tid, status, ev);
}

int tracer_handle_status_of(struct tracer *t, struct xp_thread *th, pid_t tid, int status,
			    struct tracer_event *ev)
{
	int sig, event;
	bool pending;

	memset(ev, 0, sizeof(*ev));
	ev->tid = tid;
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		ev->kind = TEV_EXIT;
		ev->status = status;
		if (tid == t->root) {
			t->root_done = true;
			t->root_status = status;
		}
		if (!th) {
			ev->pid = tid;
			return 0;
		}
		ev->pid = th->proc->pid;
		ev->proc = th->proc;
		ev->interrupt = th->interrupt_pending;
		if (tid == th->proc->pid)
			th->proc->exited = true;
		remove_thread(t, th);
		return 0;
	}
	if (!WIFSTOPPED(status))
		return 0;
	sig = WSTOPSIG(status);
	event = (unsigned)status >> 16;
	if (!th)
		th = adopt(t, tid, 0, 0);
	pending = th->interrupt_pending;
	if (pending)
		t->interrupts_pending--;
	th->interrupt_pending = false;
	ev->interrupt = pending;
	ev->fresh = th->state == THREAD_NEW;
	th->state = THREAD_STOPPED;
	ev->kind = TEV_STOP;
	ev->th = th;
	ev->pid = th->proc->pid;
	switch (event) {
	case PTRACE_EVENT_STOP:
		if (is_stop_signal(sig))
			ev->listen = true; /* group-stop: keep job control working */
		break;
	case PTRACE_EVENT_CLONE:
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
		handle_new_child(t, th, event, ev);
		break;
	case PTRACE_EVENT_EXEC:
		handle_exec(t, th);
		ev->exec = true;
		break;
	case PTRACE_EVENT_EXIT:
		ev->exiting = true;
		th->exiting = true;
		break;
	case 0:
		ev->sig = sig; /* signal-delivery-stop: deliver it on resume */
		break;
	default:
		break;
	}
	return 0;
}

int tracer_detach_all(struct tracer *t)
{
	uint64_t deadline = xp_now_ns() + 3000000000ull;
	unsigned long i;
	int failed = 0;

	for (i = 0; i < t->nthreads; i++) {
		struct xp_thread *th = t->threads[i];

		th->detaching = true;
		if (th->state == THREAD_STOPPED) {
			ptrace(PTRACE_DETACH, th->tid, 0, 0);
			th->state = THREAD_GONE;
		} else if (th->state == THREAD_RUNNING || th->state == THREAD_LISTENING) {
			if (ptrace(PTRACE_INTERRUPT, th->tid, 0, 0) < 0 && errno != ESRCH)
				failed++;
		}
	}
	/* Drop what is already detached. */
	for (i = 0; i < t->nthreads;) {
		if (t->threads[i]->state == THREAD_GONE)
			remove_thread(t, t->threads[i]);
		else
			i++;
	}
	while (t->nthreads && xp_now_ns() < deadline) {
		struct tracer_event ev;
		int status;
		pid_t tid = waitpid(-1, &status, __WALL | WNOHANG);

		if (tid < 0) {
			if (errno == EINTR)
				continue;
			break; /* ECHILD: nothing left */
		}
		if (tid == 0) {
			struct timespec ts = {0, 200000};

			nanosleep(&ts, NULL);
			continue;
		}
		tracer_handle_status(t, tid, status, &ev);
		if (ev.kind != TEV_STOP)
			continue;
		if (ev.child && !ev.child->detaching) {
			/* Born during detach: it starts stopped; detach at its first stop. */
			ev.child->detaching = true;
		}
		if (ev.fresh && !ev.th->detaching)
			ev.th->detaching = true;
		if (ptrace(PTRACE_DETACH, tid, 0, (long)ev.sig) < 0 && errno != ESRCH)
			failed++;
		remove_thread(t, ev.th);
	}
	/*
	 * A thread made at the very end of its process (its clone event seen,
	 * its first stop never) can be gone without its exit reaching us: no
	 * child of ours by that tid is left to detach.
	 */
	for (i = 0; i < t->nthreads;) {
		int status;

		if (t->threads[i]->state == THREAD_NEW &&
		    waitpid(t->threads[i]->tid, &status, __WALL | WNOHANG) < 0 && errno == ECHILD)
			remove_thread(t, t->threads[i]);
		else
			i++;
	}
	failed += (int)t->nthreads;
	return failed;
}
