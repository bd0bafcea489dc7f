/* SPDX-License-Identifier: MIT */
/*
 * The tracer: owns the ptrace relationship with every traced thread and
 * process, and nothing else (what a caller keeps per thread or process
 * hangs from their priv pointers, see tracer_hooks).  It launches a
 * command under PTRACE_SEIZE (no SIGSTOP of ours is ever injected), seizes
 * running processes thread by thread, decodes every wait status into an
 * event (new thread, fork, exec, exit, signal, group stop, our interrupt),
 * re-injects signals on resume, and detaches cleanly.
 *
 * It never waits for one particular thread: stops are collected with
 * waitpid(-1, __WALL) and routed by tid.  A pending PTRACE_INTERRUPT is
 * consumed by any other ptrace stop that comes first (clone, exec, a
 * signal), and a thread-group leader's exit is reported only after its
 * other threads are reaped: a wait for one tid can block forever.
 * Functions return 0 or -errno and print nothing, unless said otherwise.
 * Not thread-safe.
 */
#ifndef XPROF_TARGET_TRACER_H
#define XPROF_TARGET_TRACER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

enum thread_state {
	THREAD_NEW,	  /* seen, its first stop not yet handled */
	THREAD_RUNNING,	  /* resumed by us */
	THREAD_STOPPED,	  /* in a ptrace-stop we have not resumed yet */
	THREAD_LISTENING, /* in a group-stop, resumed with PTRACE_LISTEN */
	THREAD_GONE,	  /* reaped */
};

struct xp_process;

struct xp_thread {
	pid_t tid;
	enum thread_state state;
	struct xp_process *proc;
	/*
	 * PTRACE_INTERRUPT issued and not consumed yet: the next stop of any
	 * kind consumes it (tracer_event.interrupt), and so does the thread's
	 * exit.  tracer.interrupts_pending counts the threads for which it is set.
	 */
	bool interrupt_pending;
	/*
	 * Resumed from its exit stop (TRACER_EXIT_STOPS): it runs only the
	 * kernel's end of its exit and never stops again.  Cleared when a
	 * non-leader's exec takes its tid (the leader's exit stop comes first).
	 */
	bool exiting;
	bool detaching;
	int comm_fd; /* its comm file while kept open (tracer_comm_open), or -1 */
	void *priv; /* the caller's state for it (the sampler's), see tracer_hooks */
};

struct xp_process {
	pid_t pid, ppid;
	bool execed; /* has run an image of its own (not a copy of xprof) */
	bool exited;
	unsigned nr_threads;
	unsigned threads_seen; /* threads it has had while traced, these included */
	char comm[17];
	void *priv; /* the caller's state for it, see tracer_hooks */
};

/*
 * What the tracer tells the owner of the priv pointers: a thread is about
 * to be freed (reaped, detached, or gone in another thread's exec), a
 * process is about to be freed (tracer_release).  Either may be NULL.
 */
struct tracer_hooks {
	void *ctx;
	void (*thread_free)(void *ctx, struct xp_thread *th);
	void (*proc_free)(void *ctx, struct xp_process *p);
};

enum tracer_flags {
	TRACER_FOLLOW = 1 << 0,	    /* follow fork/vfork/clone children */
	TRACER_EXIT_STOPS = 1 << 1, /* stop each thread as it exits (PTRACE_O_TRACEEXIT) */
};

struct tracer {
	unsigned int flags;
	pid_t root;	 /* the launched command, or 0 */
	int root_status; /* its wait status once reaped */
	bool root_done;
	struct xp_thread **threads; /* sorted by tid */
	unsigned long nslots, nthreads;
	struct xp_process **procs;
	unsigned long nprocs, procs_alloc;
	struct tracer_hooks hooks;
	uint64_t threads_seen, procs_seen, vanished;
	unsigned long interrupts_pending; /* threads whose interrupt_pending is set */
	int exec_err_fd; /* read end of the launch error pipe */
};

enum tracer_event_kind {
	TEV_NONE,
	TEV_STOP, /* a thread is in a ptrace-stop and must be resumed by the caller */
	TEV_EXIT, /* thread reaped; @status holds its wait status */
};

void tracer_init(struct tracer *t, unsigned int flags);
/* Frees every thread and process (the hooks are called for each). */
void tracer_release(struct tracer *t);

/*
 * Fork and exec @argv under PTRACE_SEIZE.  On success the child is running
 * toward its exec.  A command that cannot be run is reported later as the
 * root exiting with status 127 (see tracer_exec_error).  0 or -errno.
 */
int tracer_launch(struct tracer *t, char **argv);
/* After the root exited with 127: the errno of its failed exec, or 0. */
int tracer_exec_error(struct tracer *t);

/*
 * Seize every thread of running process @pid, rescanning /proc/PID/task
 * until no new thread appears.  0 or -errno (nothing left attached then).
 */
int tracer_attach(struct tracer *t, pid_t pid);
/*
 * Following (TRACER_FOLLOW), after the attaches: seize the processes that
 * descend from those traced, their threads too, down the tree, xprof and
 * its ancestors aside.  A child forked once its parent was seized is
 * traced by its fork; one forked as it was seized is in a later reading
 * of the parent's list.  One that cannot be traced (another user's, a
 * set-user-ID program, traced by another tracer) is left out and counted
 * in *@refused, with the errno of the first such in *@err; one that ends
 * first is just gone.  Returns -1 when the kernel does not list a
 * process's children (no CONFIG_PROC_CHILDREN): only what is forked from
 * now on is followed then; else 0.
 */
int tracer_attach_descendants(struct tracer *t, unsigned long *refused, int *err);

struct xp_thread *tracer_find(const struct tracer *t, pid_t tid);

/*
 * Whether @status of @tid is the first stop of a task not known yet: a
 * new thread or process whose creator's event has not been handled.
 * Handled as is, its ids and name are read from /proc (tracer_handle_status).
 */
bool tracer_unknown_birth(const struct tracer *t, pid_t tid, int status);

/* PTRACE_INTERRUPT; the thread's interrupt_pending set.  -ESRCH when it is gone (counted). */
int tracer_interrupt(struct tracer *t, struct xp_thread *th);

/* Resume a stopped thread, delivering @sig (0 for none). */
int tracer_resume(struct tracer *t, struct xp_thread *th, int sig);

/*
 * What one wait status means.  @th is NULL for TEV_NONE.  For TEV_STOP the
 * thread is stopped; @sig is the signal to deliver when it is resumed (0 for
 * none), @listen says to resume it with PTRACE_LISTEN instead, @exec that the
 * process just exec'd (its other threads are gone; what the caller keeps
 * about the old image is stale), @fresh that this is a new process or
 * thread's first stop, @interrupt that this stop (or, for TEV_EXIT, the
 * thread's exit) consumed the interrupt pending for the thread, @exiting
 * that the thread is on its way out (TRACER_EXIT_STOPS): its registers,
 * memory and /proc files are still there, its exit comes once resumed.
 */
struct tracer_event {
	enum tracer_event_kind kind;
	struct xp_thread *th;
	int sig;
	int status;
	bool listen, exec, fresh, interrupt, exiting;
	struct xp_thread *child; /* for a clone/fork event: the new thread */
	struct xp_process *proc; /* for TEV_EXIT: its process, NULL if unknown */
	pid_t pid, tid;		 /* for TEV_EXIT */
};

/*
 * Decode the status of @tid returned by waitpid and update the tables.
 * Returns 0 and fills @ev.
 */
int tracer_handle_status(struct tracer *t, pid_t tid, int status, struct tracer_event *ev);

/*
 * The same for a caller that has looked the thread up already: @th is
 * tracer_find(t, tid), NULL for a tid not traced, and the table has not
 * changed since.
 */
int tracer_handle_status_of(struct tracer *t, struct xp_thread *th, pid_t tid, int status,
			    struct tracer_event *ev);

/* Resume the thread of a TEV_STOP event as the event requires (signal re-injected). */
int tracer_finish_stop(struct tracer *t, const struct tracer_event *ev);

/*
 * Detach from every thread: interrupt the running ones, wait for each stop
 * (re-injecting any signal that arrives meanwhile) and PTRACE_DETACH.  Leaves
 * group-stopped threads group-stopped.  Bounded in time.  Returns the number
 * of threads that could not be detached cleanly.
 */
int tracer_detach_all(struct tracer *t);

/* Number of live (not reaped) threads. */
unsigned long tracer_live_threads(const struct tracer *t);

/* Iterate: for (i = 0; (th = tracer_thread_at(t, &i)); ) */
struct xp_thread *tracer_thread_at(const struct tracer *t, unsigned long *i);

/*
 * @th's name now, read through its comm file where that is kept open, else
 * by an open of its own; "" when unreadable.
 */
void tracer_comm(const struct xp_thread *th, char *out, size_t len);

/*
 * Keep @th's comm file open for the reads to come (an open of a task's file
 * costs ~4 us, ~9 on a new pid, a read ~1): its first samples' name checks,
 * the forks it makes.  Closed by tracer_comm_close, its exec or its end.
 */
void tracer_comm_open(struct xp_thread *th);
void tracer_comm_close(struct xp_thread *th);

#endif
