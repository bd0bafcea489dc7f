/* SPDX-License-Identifier: MIT */
/*
 * Inside the sampler, shared by its files: sampler.c (the loop and the
 * policy: ticks, the stops), due.c (which threads are due and what a
 * sample weighs), interrupt.c (from which CPU each due thread is
 * interrupted) and samples.c (the sampler's state per thread and process,
 * the records that describe them, and the way of a raw sample to the data
 * file).  Not for other files.
 */
#ifndef XPROF_RECORD_SAMPLER_INT_H
#define XPROF_RECORD_SAMPLER_INT_H

#include "sampler.h"
#include "addrspace.h"
#include "capture.h"
#include "clock.h"
#include "cputime.h"
#include "ctl.h"
#include "datafile.h"
#include "idlespin.h"
#include "stackcopy.h"
#include "stacktab.h"
#include "tracer.h"
#include "trigger.h"
#include "arch.h"

#include <time.h>

/* The sampler's state of one thread (xp_thread.priv). */
struct smp_thread {
	bool reported;	    /* its thread record is written */
	bool blocked_since; /* a tick found it blocked in a call since its last sample */
	uint8_t
	    name_checks; /* samples at which its name was re-read (threads name themselves early) */
	char comm[16];	 /* its name in that record */
	uint64_t irq_time;	 /* when the pending interrupt was issued */
	uint64_t pending_weight; /* weight of the sample asked for by that interrupt */
	int schedstat_fd;	 /* /proc/PID/task/TID/schedstat, -1 if unavailable, or */
#define SMP_FD_LAZY (-2)	 /* not opened yet: at its first use (most short threads never) */
	int syscall_fd;		 /* /proc/PID/task/TID/syscall, opened on first use, -1 */
	int64_t blocked_nr;	 /* system call it was blocked in when interrupted, -1: none */
	int64_t restart_nr;	 /* the call its restart_syscall continues, -1: not known */
	int64_t last_sys_nr;	 /* blocked_nr, sp and pc of its last sample, and its stack */
	uint64_t last_sys_sp, last_sys_pc, last_stack_id;
	struct cputime cpu;
	struct stackcopy_size copy;
	int stat_fd; /* /proc/PID/task/TID/stat, opened on first use, -1 */
	int status_fd; /* /proc/PID/task/TID/status, as schedstat_fd */
	bool blocks_seen;  /* a tick found it blocked in a call, once at least */
	bool vol_known;	   /* vol_seen holds its voluntary switches at the last look */
	uint64_t vol_seen; /* ... (off_cpu_state) */
	uint32_t stops_since; /* its ptrace stops since that look, each a voluntary switch */
	uint64_t wait_ns; /* run-queue wait in its schedstat at the last read, 0: none yet */
	bool off_blocked; /* cputime's off_cpu is a block in a call, not a wait (quiet) */
	uint64_t seen_at;   /* its last read, or the last tick that took them as unmoved */
	uint64_t skipped; /* the last tick that left it out */
};

/* A process's quiet threads are read at least this often (smp_find_due). */
#define SMP_QUIET_SWEEP_NS 50000000ull

/* Queued samples unwound per turn of the loop while stops are pending (and an eighth of the rest). */
#define SMP_DRAIN_SOME 8

/* A thread due at this tick: interrupted from @cpu (-1: from anywhere). */
struct smp_due {
	struct xp_thread *th;
	uint64_t weight;
	int cpu;
};

/* The sampler's state of one process (xp_process.priv). */
struct smp_proc {
	bool reported;		   /* its process record is written */
	uint32_t copy_hint;	   /* stack bytes the last sized copy of one of its threads took */
	uint64_t maps_loaded_at;   /* when /proc/PID/maps was last read (ns since start) */
	uint64_t maps_backoff;	   /* wait at least this long before reading it again (ns) */
	uint64_t stale_checked_at; /* last check for a file mapped over a known one */
	struct stackcopy_src mem;
	struct addrspace as;
	/*
	 * Whether its quiet threads' counters moved (smp_find_due): its CPU
	 * clock (the sum of its threads' counters, and of those that exited)
	 * against the counters known at this tick, read or taken as unmoved.
	 */
	int8_t clock_ok; /* 0: not opened yet, 1: clock is its CPU clock, -1: none */
	clockid_t clock;
	uint64_t tick;		/* the tick the fields below describe (stats.ticks) */
	uint64_t clock_ns;	/* its CPU clock before this tick's reads */
	uint64_t known_ns;	/* its threads' counters at this tick */
	bool unknown;		/* clock unread, or a counter unreadable: known_ns is not all */
	unsigned long nquiet;	/* its quiet threads at this tick ... */
	unsigned long nskipped; /* ... those left out */
	unsigned long nunread;	/* its threads not for this tick (not in known_ns ... */
	bool filled;		/* ... unless read for it all the same) */
	bool sweep;		/* this tick reads the quiet threads it left out */
	bool rest_known;	/* rest_ns holds its clock less its threads' counters */
	uint64_t rest_ns;	/* (the time of its exited threads), at the last tick */
	uint64_t swept_at;    /* when its quiet threads were last read */
};

/* A raw sample waiting to be unwound. */
struct raw_sample {
	struct xp_process *proc; /* kept alive by the tracer until tracer_release */
	pid_t tid;
	uint64_t t, weight;
	int64_t sys_nr, sys_sp, sys_pc; /* blocked in this system call (wall mode), or -1 */
	struct xp_regs regs;
	size_t len;
	uint8_t *copy;
};

/* One CPU the controller visits at a tick (interrupt.c). */
struct smp_visit {
	int cpu;
	bool done;   /* its threads are interrupted */
	uint64_t at; /* when its trigger should hold it (xp_now_ns) */
};

/* The loop's part (sampler.c): timer, signals, enabling, phases, the status line. */
struct smp_loop {
	uint64_t next_k, last_flush;
	uint64_t start_cpu; /* xp_cpu_ns at the start of sampling */
	uint64_t armed_at;  /* CLOCK_MONOTONIC ns the sampling timer is armed for (in a
			     * tick: that of the next, drawn before the tick's stops) */
	uint64_t woke_late; /* ns from armed_at to the controller's wake at its expiry */
	uint64_t rnd;	    /* the ticks' jitter */
	int sigfd, timerfd;
	uint64_t last_status;
	bool status_shown; /* the status line is on the terminal (not erased) */
	int nsigint;
	int qos_fd; /* the PM QoS request held while recording, -1: none */
	/*
	 * Sampling runs (ticks interrupt threads) only while enabled; every
	 * ptrace event is handled all the same.  Times since the start.
	 */
	bool enabled, was_enabled; /* now; at some time */
	uint64_t enable_at;	   /* --delay: enable at this time, 0: nothing pending */
	uint64_t enabled_at;	   /* when it was last enabled */
	uint64_t first_enabled;	   /* when it was first enabled: --duration counts from there */
	uint64_t sampled_ns;	   /* time enabled before enabled_at */
	char phase[DF_MARK_NAME_MAX + 1]; /* the phase under way ('mark NAME'), "": none */
	uint64_t phase_t;		  /* since when */
	struct idlespin spin;		  /* --spin-idle */
	unsigned long slack; /* the controller's timer slack before the recording (ns) */
};

/* due.c's part: the threads due at this tick, and what the tick read of the machine. */
struct smp_tick {
	struct smp_due *due; /* this tick's due threads */
	unsigned long ndue, due_alloc;
	long running;		   /* smp_others_running's count at this tick, -1: unreadable */
	uint64_t running_tick;	   /* ... read at this tick (stats.ticks), 0: never */
	unsigned long awake;	   /* this tick's threads that may run (smp_find_due) */
	struct xp_process **procs; /* ... their processes */
	unsigned long nprocs, procs_alloc;
	bool warned_nofile; /* out of open files, said so */
	int loadavg_fd;	    /* /proc/loadavg: is a CPU idle?  -1: unknown */
};

/* interrupt.c's part: where the controller runs and how it reaches each due thread. */
struct smp_irq {
	struct ctl_place place; /* where the controller runs */
	struct triggers trig;	/* per-CPU preempters (trigger.h) */
	uint64_t wake_mean;	/* running mean of prompt wakes' lateness */
	uint64_t rnd;		/* the pauses' random parts */
	bool stops_elsewhere; /* this tick's interrupted threads are all off the controller's CPU */
	bool collect;	      /* the loop collects a visited CPU's stops before the next visit */
	struct smp_visit *visits;			 /* this tick's CPUs to visit ... */
	unsigned long nvisits, next_visit, visits_alloc; /* ... and the next one */
};

/*
 * The sampler.  Its parts are each written by one file (the stats are
 * counters that several add to); the fields above them are set once by
 * sampler_run.
 */
struct sampler {
	struct tracer *tr;
	const struct sampler_opts *o;
	struct sampler_stats *st;
	const struct xp_arch *arch;
	uint64_t start_mono, period;
	struct smp_loop loop; /* sampler.c */
	struct smp_tick tick; /* due.c */
	struct smp_irq irq;   /* interrupt.c */
	struct df_writer *w;
	struct unwinder *unw;
	struct stacktab stacks;
	struct capture cap; /* files of sampled mappings, kept for the report */
	struct module_cache *mc;
	struct raw_sample *q; /* q[qhead..nq): taken, not unwound yet */
	unsigned long qhead, nq, qalloc;
	uint64_t *pcs;
	uint8_t *flags;
	bool stopping, write_failed;
	/* --switch-output (parts.c): the current part's start, parts ended so far. */
	uint64_t part_start;   /* recording time (for --switch-output TIME) */
	uint64_t part_sampled; /* smp_sampled_ns then (a part's duration_ns statistic) */
	unsigned int parts;
	bool switch_failed;
	bool switch_now; /* SIGUSR2 came (switch_signal) */
};

/* ns since the start of the recording. */
uint64_t smp_now(const struct sampler *s);
/* The sampler's state of @th / @p, created at first use. */
struct smp_thread *smp_thread_of(struct xp_thread *th);
struct smp_proc *smp_proc_of(const struct sampler *s, struct xp_process *p);
/* tracer_hooks: free that state (@ctx is the sampler). */
void smp_thread_free(void *ctx, struct xp_thread *th);
void smp_proc_free(void *ctx, struct xp_process *p);
/* @th's process exec'd: forget what was known of the old image. */
void smp_exec(struct sampler *s, struct xp_thread *th);

/* @ret of a data-file write: a failure ends the recording.  Returns @ret. */
int smp_check_write(struct sampler *s, int ret);
/* Write the record of @p (@flags: DF_PROC_*) and its mappings, at @t. */
void smp_report_process(struct sampler *s, struct xp_process *p, uint32_t flags, uint64_t t);
/* Write the record of @th, named @comm if known (else read), at @t. */
void smp_report_thread(struct sampler *s, struct xp_thread *th, uint64_t t, const char *comm);
/* A new record for every thread whose name changed since its last. */
void smp_refresh_names(struct sampler *s);

/* The next free slot of the queue (its copy buffer allocated); s->nq++ keeps it. */
struct raw_sample *smp_queue_slot(struct sampler *s);
/* Unwind, intern and write every queued sample; empty the queue. */
void smp_drain_queue(struct sampler *s);
/* The same for the @max oldest queued samples at most. */
void smp_drain_some(struct sampler *s, unsigned long max);
/* The same before @p's exec is handled, without reading anything of the new image. */
void smp_drain_old_image(struct sampler *s, struct xp_process *p);
/* Copy the JIT symbols of pid @pid's sampled pcs into the data file (jitmap.h). */
void smp_collect_jit(struct sampler *s, pid_t pid);
/* Time spent sampling (enabled) up to @now: the duration_ns statistic's measure. */
uint64_t smp_sampled_ns(const struct sampler *s, uint64_t now);
/*
 * The statistics a part needs to be reported alone: rate, mode, and its
 * sampling time, up to @sampled_ns of the recording's (smp_sampled_ns).
 */
void smp_write_part_stats(struct sampler *s, uint64_t sampled_ns);
/* The statistics records (smp_write_part_stats's among them). */
void smp_write_stats(struct sampler *s);

/* --switch-output: whether the current part should end now (at @now). */
bool smp_part_due(const struct sampler *s, uint64_t now);
/* End the current part and start the next (parts.c).  No thread may be stopped. */
void smp_switch_part(struct sampler *s, uint64_t now);

/*
 * interrupt.c.  smp_irq_init before the loop, smp_irq_start once sampling
 * starts (the triggers), smp_irq_stop at its end, smp_irq_release last.
 */
void smp_irq_init(struct sampler *s);
void smp_irq_start(struct sampler *s);
void smp_irq_stop(struct sampler *s);
void smp_irq_release(struct sampler *s);
/*
 * Interrupt this tick's due threads (s->tick) at @now, each running one
 * from its own CPU, as far as that can be done from where the controller
 * is: the threads interrupted on its own CPU go to @ths (at most
 * SAMPLER_COLLECT_MAX), their number is returned.  The CPUs still to visit
 * are planned: while smp_irq_more, the loop collects the stops of @ths
 * when s->irq.collect, then smp_irq_visit moves to the next CPU and
 * interrupts its threads, which it puts in @ths.
 */
unsigned long smp_interrupt_due(struct sampler *s, uint64_t now, struct xp_thread **ths);
bool smp_irq_more(const struct sampler *s);
unsigned long smp_irq_visit(struct sampler *s, uint64_t now, struct xp_thread **ths);

/*
 * due.c.  smp_tick_init before the loop, smp_tick_release after it.
 */
void smp_tick_init(struct sampler *s);
void smp_tick_release(struct sampler *s);
/*
 * The tasks running or runnable on the machine at this tick, the
 * controller aside (procfs_running counts it), read once per tick; -1
 * when unreadable.
 */
long smp_others_running(struct sampler *s);
/* Whether a CPU of the controller's is idle: fewer other tasks want to run than it has. */
bool smp_cpu_idle(struct sampler *s);
/* The threads a tick at @now should interrupt, with their weights, into s->tick.due. */
void smp_find_due(struct sampler *s, uint64_t now);
/*
 * CPU mode: whether the stop that gave @regs found @x's thread at a system
 * call that has nothing to do with where its CPU time went (no sample).
 */
bool smp_stop_in_call(struct sampler *s, struct smp_thread *x, const struct xp_regs *regs);
/*
 * CPU mode, just after resuming @th from the stop of sample @r (the last
 * queued) at @t: the exact weight, or the sample dropped if it hardly ran.
 */
void smp_settle_weight(struct sampler *s, struct xp_thread *th, struct raw_sample *r, uint64_t t);
/* Sampling starts again at @now after a pause: what ran meanwhile is not sampled. */
void smp_rebase_threads(struct sampler *s, uint64_t now);

#endif
