/* SPDX-License-Identifier: MIT */
/*
 * The sampler: the event loop of a recording.  A timerfd ticks at the
 * requested rate, its phase wandering at random (so periodic work in the
 * target does not alias with the samples); each tick interrupts
 * the threads that are due (those that ran since their last sample, in
 * CPU mode), and each resulting stop is used at once: one register read,
 * one bulk copy of the stack (stackcopy.h), resume.  Every ptrace event
 * (clone, fork, exec, exit, signals, group-stops) is handled in the same
 * loop: a pending interrupt is consumed by whatever other ptrace stop
 * comes first, so waiting for "the" interrupt stop of one thread could
 * wait forever.
 *
 * Nothing is held while the books are kept.  A stop does only what needs
 * the stop (registers, the stack copy, the thread's counters); what an
 * event shows new (a process, a thread, an image, an exit) is work that
 * the loop does once no interrupt is outstanding (or once it is a period
 * old), then the copies are unwound, interned and written, each in the
 * image of its process it was taken in.  t5011 holds a busy process's
 * stops to this beside a fork/exec storm; each of these steps costs in
 * proportion to its own process, never to the length of the recording
 * (t9107).
 *
 * In CPU mode every CPU second of the traced tree is in the profile:
 * threads and processes are counted at their exit for what their samples
 * did not cover (record/sampler.c, account_exit; t5010).
 *
 * Prints only through err.h and the optional status line.  Not thread-safe.
 */
#ifndef XPROF_RECORD_SAMPLER_H
#define XPROF_RECORD_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture.h"
#include "clock.h"
#include "schedule.h"
#include "unwind.h"

struct tracer;
struct df_writer;
struct control;

enum sampler_mode {
	SAMPLER_CPU = 0, /* threads that ran since the last tick, weighted by CPU time */
	SAMPLER_WALL,	 /* every thread, weighted by elapsed time */
};

enum sampler_kind {
	SAMPLER_RECORD, /* the tracer launched the root command */
	SAMPLER_ATTACH, /* the tracer attached to running processes */
};

struct sampler_opts {
	uint64_t freq_hz;
	enum unwind_mode unwind;
	unsigned int max_depth;
	uint64_t duration_ns; /* 0: no limit; counts from the start of sampling */
	uint64_t delay_ns;    /* sampling starts this long after the recording (--delay) */
	uint64_t flush_ns;    /* write the data file out at least this often (> 0) */
	/*
	 * --switch-output: a part of the recording ends once it is switch_ns
	 * long or switch_bytes were written to it (0: no limit).  The sampler
	 * then writes what the part needs to be reported alone, and calls
	 * switch_fn, which must return the writer of the next part, the old
	 * one closed; or NULL after an error (printed), @old still open: the
	 * recording goes on in it, with no more switches.
	 */
	uint64_t switch_ns, switch_bytes;
	bool switch_signal; /* and when xprof gets SIGUSR2 (which it then takes) */
	struct df_writer *(*switch_fn)(void *ctx, struct df_writer *old);
	void *switch_ctx;
	bool start_disabled;  /* sampling starts at an 'enable' of @control (--delay -1) */
	struct control *control; /* commands from --control (control.h), NULL: none */
	enum sampler_mode mode;
	enum sampler_kind kind;
	size_t stack_bytes; /* most bytes copied from SP per sample */
	bool adaptive_copy; /* copy only what recent walks of the thread needed */
	bool status_line;   /* live status on stderr (a terminal) */
	bool (*foreground)(void); /* whether the status line may show now (NULL: always) */
	uint64_t spin_ns; /* poll for stops this long before sleeping (spin_for_stops); 0: never */
	bool poll_idle;	  /* keep idle CPUs polling while recording (cpu_dma_latency 0) */
	bool spin_idle;	  /* keep idle CPUs busy with SCHED_IDLE spinners (idlespin.h) */
	unsigned int rt_priority; /* SCHED_RR priority of the controller while sampling; 0: none */
	bool same_cpu; /* interrupt each running thread from its own CPU (no skid into calls) */
	bool no_interp; /* do not read interpreter frames (Python) */
};

#define SAMPLER_STACK_BYTES   (64 * 1024)
#define SAMPLER_SPIN_NS	      100000
#define SAMPLER_TRIGGER_WAIT_NS 1000000 /* a trigger later than two periods and this: none */
#define SAMPLER_TRIGGER_SPIN_NS 30000 /* wait for a trigger spinning from this before it is due */
#define SAMPLER_DRAIN_MAX     64    /* stops handled between two looks at the timer */
#define SAMPLER_FLUSH_NS      XP_NS_PER_SEC /* default sampler_opts.flush_ns */
#define SAMPLER_JIT_MAPS_NS   100000000	    /* maps re-read at most this often for JIT code */

enum sampler_end {
	SAMPLER_END_ROOT_EXITED,
	SAMPLER_END_ALL_EXITED,
	SAMPLER_END_DURATION,
	SAMPLER_END_SIGNAL,
	SAMPLER_END_CONTROL, /* a 'stop' command of --control */
	SAMPLER_END_WRITE_ERROR,
	SAMPLER_END_ERROR,
};

struct sampler_stats {
	uint64_t ticks, late_ticks, samples, failed, interrupts, vanished;
	uint64_t spin_timeouts;	  /* spins that ended without every stop */
	uint64_t collect_timeouts; /* moves on from a CPU before its stops came (interrupt.c) */
	uint64_t dropped_blocked; /* cpu mode: stops that found the thread blocked in a call */
	uint64_t
	    dropped_idle; /* cpu mode: stops of a thread that had run < period/8 since its last */
	uint64_t running_checks; /* cpu mode: status reads to tell a running thread from a waiting one */
	uint64_t running_found;	 /* ... that found it running */
	uint64_t quiet_skips;	 /* cpu mode: schedstat reads left out at ticks (quiet threads) */
	uint64_t quiet_sweeps;	 /* ... ticks that read a process's quiet threads all the same */
	uint64_t reused;  /* wall mode: samples of still-blocked threads taken without a stop */
	uint64_t waiting_stops; /* due threads sampled at a stop that waited to be collected */
	uint64_t duration_ns; /* how long sampling ran (pauses and --delay not included) */
	uint64_t weight_total;
	uint64_t exit_ns;     /* CPU time found at threads' exits that no sample had covered */
	uint64_t origins;     /* creators' stacks copied as they made a thread or process */
	uint64_t maps_reads;  /* /proc/PID/maps read (not at a fork: the parent's are copied) */
	uint64_t stat_reads;  /* threads' stat files read (their CPU and page faults: the path) */
	uint64_t tree_cpu_ns; /* CPU time the traced tree used while recording, 0: not known */
	uint64_t stacks;
	uint64_t stop_hist[SCHEDULE_HIST_SIZE]; /* interrupt -> resume (schedule.h) */
	uint64_t stop_ns_max;
	/*
	 * Stop seen -> resume: what xprof itself holds a stopped thread.  The
	 * rest of interrupt -> resume is the thread's way into the stop, which
	 * for a thread waiting for a CPU includes that wait.
	 */
	uint64_t held_hist[SCHEDULE_HIST_SIZE];
	uint64_t held_ns_max;
	/*
	 * Timer expiry -> the controller running on a due thread's CPU: how
	 * late the thread was preempted after the instant chosen for it.
	 */
	uint64_t wake_hist[SCHEDULE_HIST_SIZE];
	uint64_t wake_ns_max;
	uint64_t late_wakes; /* of those, retried from a fresh instant (interrupt.c) */
	/*
	 * Where sampling cost the target's threads time, summed over them: in
	 * the stops (interrupt -> resume), and waiting for a CPU while runnable
	 * (their schedstat's run-queue wait, from their first read on).
	 */
	uint64_t stop_ns_total, target_wait_ns;
	/*
	 * CPU time of xprof's own threads (controller, triggers) while
	 * sampling: with every CPU busy, the target's loss too.
	 */
	uint64_t xprof_cpu_ns;
	uint64_t stack_bytes_copied;
	uint64_t irq_same_cpu; /* interrupts of a thread held off its CPU there (trigger.h) */
	uint64_t cpu_moves;    /* moves of the controller off a due thread's CPU */
	uint64_t path_own;     /* moves of a thread to its own CPU's interrupt (due.c) */
	uint64_t path_any;     /* ... and back to the interrupt from any CPU */
	uint64_t path_late;    /* ... of those, because its own CPU's came after its runs */
	uint64_t
	    irq_path_any; /* interrupts sent from any CPU because the thread's path is (due.c) */
	uint64_t trigger_timeouts; /* triggers that did not hold their CPU in time */
	uint64_t trigger_parked;   /* requests that found their trigger parked (no wake) */
	uint64_t trigger_idle_wakes; /* parked triggers that woke and found no request */
	uint64_t unwind_checked, unwind_differ; /* -g check: stacks compared with libunwind */
	/*
	 * Interpreter frames: samples that got some, bytes copied for them in
	 * stops, samples whose runs could not be placed in the native stack,
	 * code objects named in stacks, stops of threads of an interpreter
	 * without any, chains cut at something that was no frame.
	 */
	uint64_t interp_samples, interp_bytes, interp_unplaced, interp_codes, interp_misses,
	    interp_broken;
	bool poll_idle;				/* idle CPUs were kept polling */
	unsigned int spin_idle;			/* idle spinners that ran */
	unsigned int rt_priority;     /* the real-time priority the controller ran at, 0: none */
	int end_signal;		      /* the signal that ended sampling, for SAMPLER_END_SIGNAL */
	struct capture_stats capture; /* the files kept for the report, at the end */
	enum sampler_end end;
};

/*
 * Run the loop until the end condition and write everything to @w.  The
 * tracer must already hold the launched or attached threads.  Detaches from
 * everything before returning.  0, or -1 after a printed error.
 */
int sampler_run(struct tracer *t, struct df_writer *w, const struct sampler_opts *o,
		struct sampler_stats *st);

#endif
