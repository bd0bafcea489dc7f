/* SPDX-License-Identifier: MIT */
/*
 * The tracer: owns the ptrace relationship with every traced thread and
 * process.  It launches a command under PTRACE_SEIZE (no SIGSTOP of ours is
 * ever injected), seizes running processes thread by thread, decodes every
 * wait status into an event (new thread, fork, exec, exit, signal, group
 * stop, our interrupt), re-injects signals on resume, and detaches cleanly.
 *
 * It never waits for one particular thread: stops are collected with
 * waitpid(-1, __WALL) and routed by tid (PTRACE-NOTES traps 1 and 2).
 * Functions return 0 or -errno and print nothing, unless said otherwise.
 * Not thread-safe.
 */
#ifndef XPROF_SRC_TRACER_H
#define XPROF_SRC_TRACER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "addrspace.h"

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
	bool interrupt_pending; /* PTRACE_INTERRUPT issued, stop not seen yet */
	bool sample_wanted;	/* take a sample at the next stop of any kind */
	bool detaching;
	bool reported;	     /* the sampler wrote its thread record */
	char comm[16];	     /* its name in that record */
	uint8_t name_checks; /* samples at which its name was re-read (threads name themselves early) */
	bool cpu_init;	     /* cpu_ns_sampled / wall_sampled hold a baseline */
	uint64_t irq_time;   /* when the pending interrupt was issued */
	int schedstat_fd;    /* /proc/PID/task/TID/schedstat, -1 if unavailable, or */
#define TRACER_FD_LAZY (-2) /* not opened yet: at its first use (most short threads never) */
	int syscall_fd;	     /* /proc/PID/task/TID/syscall, opened on first use, -1 */
	int64_t blocked_nr;  /* system call it was blocked in when interrupted, -1: none */
	int64_t last_sys_nr; /* blocked_nr, sp and pc of its last sample, and its stack */
	uint64_t last_sys_sp, last_sys_pc, last_stack_id;
	uint64_t sched_count;	 /* times it was scheduled in, at the last check */
	uint64_t cpu_ns_sampled; /* on-CPU time at the last sample (read just after it) */
	uint64_t wall_sampled;	 /* time of the last sample (ns since start) */
	uint32_t copy_bytes;	 /* stack bytes to copy at its next sample (0: the default) */
	uint32_t copy_need;	 /* stack bytes its last walk read */
	uint64_t pending_weight; /* weight of the sample asked for by the last interrupt */
	int64_t cpu_carry;	 /* CPU time its samples over- or under-covered so far (ns) */
	bool blocked_since;	 /* a tick found it blocked in a call since its last sample */
	bool on_cpu;		 /* the last check found it never switched out since its resume */
	bool resume_known;	 /* the resume_ fields describe its last resume from a stop */
	bool resume_ran;	 /* it was back on a CPU when resume_count was read */
	uint64_t resume_count;	 /* sched_count read just after that resume */
	uint64_t resume_cpu_ns;	 /* its on-CPU time then */
	uint64_t resume_time;	 /* when it was resumed (ns since start) */
};

struct xp_process {
	pid_t pid, ppid;
	bool execed; /* has run an image of its own (not a copy of xprof) */
	bool exited;
	bool reported; /* the sampler wrote its process record */
	unsigned nr_threads;
	uint64_t maps_loaded_at; /* when /proc/PID/maps was last read (ns since start) */
	uint64_t maps_backoff;	 /* wait at least this long before reading it again (ns) */
	uint64_t stale_checked_at; /* last check for a file mapped over a known one */
	int mem_fd;		   /* /proc/PID/mem of the current image, -1: not open yet */
	uint32_t copy_hint;	   /* stack bytes the last sized copy of one of its threads took */
	bool mem_failed;	   /* it could not be opened: use process_vm_readv */
	char comm[17];
	struct addrspace as;
};

enum tracer_flags {
	TRACER_FOLLOW = 1 << 0, /* follow fork/vfork/clone children */
};

struct tracer {
	unsigned int flags;
	pid_t root;	 /* the launched command, or 0 */
	int root_status; /* its wait status once reaped */
	bool root_done;
	struct xp_thread **threads; /* hash by tid, open addressing */
	unsigned long nslots, nthreads;
	struct xp_process **procs;
	unsigned long nprocs, procs_alloc;
	struct module_cache *mc;
	uint64_t threads_seen, procs_seen, vanished;
	int exec_err_fd; /* read end of the launch error pipe */
};

enum tracer_event_kind {
	TEV_NONE,
	TEV_STOP,	/* a thread is in a ptrace-stop and must be resumed by the caller */
	TEV_NEW_THREAD, /* informational: thread added (already resumed or waiting) */
	TEV_EXIT,	/* thread reaped; @status holds its wait status */
};

void tracer_init(struct tracer *t, unsigned int flags);
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

struct xp_thread *tracer_find(const struct tracer *t, pid_t tid);

/* PTRACE_INTERRUPT.  -ESRCH when the thread is gone (counted). */
int tracer_interrupt(struct tracer *t, struct xp_thread *th);

/* Resume a stopped thread, delivering @sig (0 for none). */
int tracer_resume(struct tracer *t, struct xp_thread *th, int sig);

/*
 * What one wait status means.  @th is NULL for TEV_NONE.  For TEV_STOP the
 * thread is stopped; @sig is the signal to deliver when it is resumed (0 for
 * none), @listen says to resume it with PTRACE_LISTEN instead, @exec that the
 * process just exec'd (its address space was reset), @fresh that this is a
 * new process or thread's first stop.
 */
struct tracer_event {
	enum tracer_event_kind kind;
	struct xp_thread *th;
	int sig;
	int status;
	bool listen, exec, fresh, interrupt;
	struct xp_thread *child; /* for a clone/fork event: the new thread */
	pid_t pid, tid;		 /* for TEV_EXIT */
};

/*
 * Decode the status of @tid returned by waitpid and update the tables.
 * Returns 0 and fills @ev.
 */
int tracer_handle_status(struct tracer *t, pid_t tid, int status, struct tracer_event *ev);

/*
 * Whether wait status @status is a PTRACE_EVENT_EXEC stop, before
 * tracer_handle_status forgets the old image's mappings.  Pure.
 */
bool tracer_status_is_exec(int status);

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

#endif
