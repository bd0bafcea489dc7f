/* SPDX-License-Identifier: MIT */
/*
 * Inside the sampler, shared by its files: sampler.c (the loop and the
 * policy: ticks, the stops, the work that events leave), due.c (which
 * threads are due and what a sample weighs), interrupt.c (from which CPU
 * each due thread is interrupted), samples.c (the sampler's state per
 * thread and process, and the queue of raw samples on their way to the
 * data file), image.c (each image a process runs: its address space as
 * the samples taken in it need it, and what was sampled in it) and emit.c
 * (the one writer of the data file, and every "already written" mark).
 * Not for other files.
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
#include "interp.h"
#include "jitmap.h"
#include "stackcopy.h"
#include "stacktab.h"
#include "tracer.h"
#include "trigger.h"
#include "u64set.h"
#include "arch.h"

#include <sys/resource.h>
#include <time.h>

/* What the emitter (emit.c) keeps of a thread: written by emit.c alone. */
struct emit_thread {
	bool described;	     /* its thread record is written */
	uint8_t name_checks; /* samples at which its name was read again (threads name themselves
				early) */
	char comm[16];	     /* its name in that record */
};

/* What the emitter keeps of a process. */
struct emit_proc {
	bool described; /* its process record is written */
};

/*
 * From where a thread is interrupted (due.c, "the path"): from any CPU
 * while its samples show that it enters the kernel too seldom for a
 * sample to skid there, from its own CPU otherwise.  Written by due.c.
 */
struct smp_path {
	bool skid_free;	      /* interrupted from its own CPU */
	uint32_t score;	      /* skid evidence beyond the allowed share (SMP_PATH_UNIT a sample) */
	uint32_t cheap;	      /* its samples from any CPU since it last took that path */
	uint32_t hold;	      /* its samples from its own CPU left before it tries any CPU again */
	uint32_t spell;	      /* the hold its next move to its own CPU starts */
	uint32_t late;	      /* its own CPU's interrupts that came after its run, beyond half */
	uint32_t late_hold;   /* its samples from any CPU left before skids may move it again */
	uint32_t late_spell;  /* the hold its next move back for lateness starts */
	bool faults_known;    /* the fields below hold a read of its page faults */
	uint64_t faults;      /* its page faults at that read ... */
	uint64_t faults_cpu;  /* ... and its CPU time (cputime.sampled_ns) then */
	uint32_t fault_share; /* the share of samples its faults may skid (SMP_PATH_UNIT: all) */
};

/* The sampler's state of one thread (xp_thread.priv). */
struct smp_thread {
	struct emit_thread em;
	struct smp_path path;
	bool describe_queued;	 /* the work that describes it is queued (sampler.c) */
	bool blocked_since;	 /* a tick found it blocked in a call since its last sample */
	int64_t blocked_call;	 /* the call it was last found blocked in, -1: not known */
	bool irq_held;		 /* the pending interrupt found it held off its CPU (interrupt.c) */
	uint64_t irq_time;	 /* when the pending interrupt was issued */
	uint64_t pending_weight; /* weight of the sample asked for by that interrupt */
	bool at_waiting_stop;	 /* ... or by a tick, at a stop that waited (due.c) */
	int schedstat_fd;	 /* /proc/PID/task/TID/schedstat, -1 if unavailable, or */
#define SMP_FD_LAZY (-2)	 /* not opened yet: at its first use (most short threads never) */
	int syscall_fd;		 /* /proc/PID/task/TID/syscall, opened on first use, -1 */
	int64_t blocked_nr;	 /* system call it was blocked in when interrupted, -1: none */
	int64_t restart_nr;	 /* the call its restart_syscall continues, -1: not known */
	int64_t last_sys_nr;	 /* blocked_nr, sp and pc of its last sample, and its stack */
	uint64_t last_sys_sp, last_sys_pc, last_stack_id;
	unsigned int last_stack_part; /* the part (emitter.parts) whose file has that stack */
	struct cputime cpu;
	struct stackcopy_size copy;
	/*
	 * Where it came from, for CPU time that no sample of its own covers
	 * (smp_exit_note): created while recording (its CPU time counts
	 * from 0), by thread @origin_tid of @origin_proc, whose stack then is
	 * copy @origin_seq (0: not known); its own last sample is copy
	 * @last_seq (0: none).
	 */
	bool born;
	uint32_t origin_seq, last_seq;
	uint32_t last_walked_seq; /* of its last sample unwound, whose stack is ... */
	uint64_t last_walked_id;  /* ... this */
	struct xp_process *origin_proc;
	pid_t origin_tid;
	/* As a creator: the registers and origin of its last copy (smp_take_origin). */
	uint64_t made_pc, made_sp, made_fp;
	uint32_t made_seq;
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

/*
 * Raw samples with a copy are numbered (@seq), and the stacks of the last
 * SMP_SEEN of them are kept by number once unwound (smp_queue.seen), for
 * those that refer to them.
 */
enum smp_raw_kind {
	SMP_RAW_SAMPLE, /* a sample */
	SMP_RAW_ORIGIN, /* a creator's stack as it made a thread or process */
	SMP_RAW_TAIL,	/* no copy: the CPU time of a thread since its last sample (@seq),
			 * at its exit */
	SMP_RAW_EXITED, /* no copy: the CPU time of @exited_tid, which no sample of its own
			 * covered, under its origin (@seq; 0: none) */
};

/* Where CPU time found at an exit goes (smp_exit_note): a raw sample to queue. */
struct smp_exit_note {
	bool pending;
	enum smp_raw_kind kind; /* SMP_RAW_TAIL or SMP_RAW_EXITED */
	uint32_t seq;
	uint64_t stack_id; /* TAIL: the stack of copy @seq when it is unwound already */
	struct xp_process *proc;
	pid_t tid, exited_pid, exited_tid;
	char exited_comm[16];
	uint64_t weight, t;
};

/* The sampler's state of one process (xp_process.priv). */
struct smp_proc {
	struct emit_proc em;
	bool describe_queued; /* the work that describes it is queued (sampler.c) */
	uint32_t copy_hint;   /* stack bytes the last sized copy of one of its threads took */
	struct stackcopy_src mem;
	struct smp_image *img; /* the image it runs (a reference of its own) */
	/*
	 * JIT code: the sampled addresses (pc-1 rule applied) in none of its
	 * ELF modules, over all its images, and what jitmap_poll saw of its
	 * perf map.  Its JIT side-files are read only when it has some.
	 */
	uint64_t *code_pcs;
	size_t ncode;
	unsigned long code_alloc;
	struct jit_watch jit;
	/*
	 * CPU mode, a process made while recording (or launched): the CPU time
	 * its threads' samples and exits stood for (sampler.c), and its CPU
	 * clock at the last exit stop of one of them (due.c), whose difference
	 * at its end is what no thread's stop saw (the kernel's work past
	 * their exit stops).
	 */
	bool born;
	uint64_t accounted_ns, clock_at_exit;
	uint64_t children_ns; /* the CPU time of its child processes that ended (due.c) */
	/*
	 * attach: traced from the start, and its CPU clock then, which the
	 * tree's CPU time leaves out (smp_tree_cpu_ns).
	 */
	bool found;
	uint64_t start_clock_ns;
	struct smp_exit_note leader_exit; /* its leader's, queued at its end with that rest */
	/*
	 * Whether its quiet threads' counters moved (smp_find_due): its CPU
	 * clock (the sum of its threads' counters, and of those that exited)
	 * against the counters known at this tick, read or taken as unmoved.
	 */
	bool clock_read;	/* its CPU clock was read at a tick or an exit stop (proc_clock) */
	uint64_t tick;		/* the tick the fields below describe (stats.ticks) */
	uint64_t clock_ns;	/* its CPU clock before this tick's reads */
	uint64_t known_ns;	/* its threads' counters at this tick */
	bool unknown;		/* clock unread, or a counter unreadable: known_ns is not all */
	unsigned long nquiet;	/* its quiet threads at this tick ... */
	unsigned long nskipped; /* ... those left out */
	unsigned long nread;	/* its threads' counters read at this tick */
	unsigned long nunread;	/* its threads not for this tick (not in known_ns ... */
	bool filled;		/* ... unless read for it all the same) */
	bool sweep;		/* this tick reads the quiet threads it left out */
	bool rest_known;	/* rest_ns holds its clock less its threads' counters */
	uint64_t rest_ns;	/* (the time of its exited threads), at the last tick */
	uint64_t swept_at;    /* when its quiet threads were last read */
};

/*
 * One image of a traced process, from its exec (or the attach, or the
 * fork that copied its parent's) to the next exec or its exit: its
 * address space as the samples taken in it need it.  Reading the maps
 * again (smp_image_load) makes a new generation of it (as.loads counts
 * them), whose new mappings the emitter writes; an exec starts a new
 * image, and the old one stays, retired, for the samples queued in it.
 * Nothing is read from the process for a retired image.
 */
struct smp_image {
	unsigned int refs; /* its process while it runs it, and each queued sample taken in it */
	bool retired;
	struct addrspace as;
	uint64_t maps_loaded_at;   /* when /proc/PID/maps was last read (ns since start) */
	uint64_t maps_backoff;	   /* wait at least this long before reading it again (ns) */
	uint64_t stale_checked_at; /* last check for a file mapped over a known one */
	struct xp_u64set stacks;   /* ids of the stacks sampled in it */
	bool maps_hidden;	   /* /proc hid its maps (its process is DF_PROC_NO_MAPS) */
	bool execed;		   /* made by an exec (not its process's first image) */
	bool forked;		   /* its maps are a copy of the parent's (smp_image_fork) */
	unsigned int fork_hops;	   /* forks up to an image whose MAPPING records were written */
	char *exe;		   /* its executable, for its PROCESS record (NULL: not known) */
	/*
	 * Its interpreter's reader (interp.h), NULL: none.  Looked for at each
	 * read of its maps, and at their copy from a fork's parent, until
	 * @interp_settled (found, usable or not: a launcher maps libpython
	 * after its exec).
	 */
	struct interp *interp;
	bool interp_settled;
};

/* A raw sample waiting to be unwound. */
struct raw_sample {
	enum smp_raw_kind kind;
	uint32_t seq, prev_seq;	      /* SAMPLE: its thread's last sample before it */
	uint64_t stack_id;	      /* TAIL: the stack of copy @seq, 0: in smp_queue.seen */
	pid_t exited_pid, exited_tid; /* EXITED: the thread ... */
	char exited_comm[16];	      /* ... and its name */
	struct xp_process *proc;      /* kept alive by the tracer until tracer_release */
	struct smp_image *img;	      /* the image it was taken in (a reference) */
	pid_t tid;
	uint64_t t, weight;
	int64_t sys_nr, sys_sp, sys_pc; /* blocked in this system call (wall mode), or -1 */
	struct xp_regs regs;
	size_t len;
	uint8_t *copy;
	struct interp_raw interp; /* its interpreter frames, copied in the stop (f: lazily) */
};

/*
 * Work an event left for the loop (sampler.c): describing a new process,
 * thread or image, an exit.  Done once no interrupt is outstanding, so
 * that no stopped thread waits for it.
 */
enum smp_work_kind {
	SMP_WORK_PROCESS, /* describe @proc (@flags: DF_PROC_*) and load the maps of @img */
	SMP_WORK_THREAD,  /* describe thread @tid of @proc (@flags: SMP_WORK_*) */
	SMP_WORK_EXIT,	  /* write the exit of @tid (@pid, whole process when equal) */
};

#define SMP_WORK_RENAME	    1 /* THREAD: a new record even if it has one (its exec) */
#define SMP_WORK_AS_CREATOR 2 /* THREAD: named as thread @from, which created it */

struct smp_work {
	enum smp_work_kind kind;
	struct xp_process *proc; /* PROCESS, THREAD; EXIT: NULL when unknown */
	struct smp_image *img;	 /* PROCESS: the image it ran then (a reference) */
	struct smp_image *parent; /* PROCESS, born traced: its parent's image then (a reference) */
	pid_t pid, tid, from;
	uint32_t flags;
	int status; /* EXIT: the wait status */
	uint64_t t;
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
	uint64_t tick_off;  /* the last tick's offset in its period (schedule_tick_offset) */
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
	unsigned long slack;   /* the controller's timer slack before the recording (ns) */
	bool stopping;	       /* the loop ends at its next turn */
	bool tree_unknown;     /* tree_cpu_ns unknown: sampling off a while, a clock unread */
	/*
	 * CPU time of the processes that ended, each its own: of those born
	 * traced, and (attach) of those found at the start since then.
	 */
	uint64_t ended_cpu_ns;
	bool switch_now;       /* SIGUSR2 came (--switch-output signal) */
	bool ptrace_cap;       /* xprof has CAP_SYS_PTRACE: traced execs keep their privileges */
	bool priv_warned;      /* an exec that lost them was warned about */
	struct smp_work *work; /* work[work_head..nwork): left by events, not done yet */
	unsigned long work_head, nwork, work_alloc;
};

/* due.c's part: the threads due at this tick, and what the tick read of the machine. */
struct smp_tick {
	/*
	 * From an interrupt sent from any CPU to its stop being seen: the
	 * running mean over such samples (ns), the longest a kernel entry
	 * could have come in between and taken the sample (due.c).
	 */
	uint64_t window_ns;
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
	/*
	 * The tids whose stops are asked for (interrupted, or to be sampled at
	 * a stop that waits) and may not be seen yet: every such thread is
	 * here, and some whose stop was seen since (dropped as they are met).
	 */
	pid_t *sent;
	unsigned long nsent, sent_alloc;
};

/* The stack of copy @seq, once unwound (samples.c keeps the last SMP_SEEN). */
struct smp_seen {
	uint32_t seq;
	uint64_t stack_id;
};

#define SMP_SEEN 4096

/*
 * The marker stack of the threads named @comm that ended unsampled under
 * origin stack @origin: one stack, its marker naming the first of them
 * (@tid), stands for all (samples.c).
 */
struct smp_marker {
	uint64_t origin, stack_id; /* stack_id 0: a free slot */
	pid_t tid;
	char comm[16];
};

/* samples.c's part: the queue of raw samples and what unwinding them needs. */
struct smp_queue {
	struct smp_seen seen[SMP_SEEN]; /* copy seq at [seq % SMP_SEEN] */
	uint32_t seq;			/* the last copy's */
	struct smp_marker *markers;	/* open addressing on (origin, comm) */
	size_t markers_cap, markers_nr;
	struct raw_sample *q; /* q[head..nq): taken, not unwound yet */
	unsigned long head, nq, alloc;
	struct unwinder *unw;
	struct module_cache *mc;
	struct stacktab stacks;
	uint64_t *pcs; /* one walk's frames, with room for interpreter frames */
	uint8_t *flags;
	uint64_t *sps; /* the stack pointer of each walked frame */
	/* The interpreter frames of a sample, where each goes, and the merged stack. */
	struct interp_frame *iframes;
	uint32_t *iat;
	uint64_t *mpcs;
	uint8_t *mflags;
};

/* Interpreter frames of a sample, at most (room for them in smp_queue.pcs). */
#define SMP_INTERP_MAX 4096u

/* image.c's part: what the images' samples ask to keep. */
struct smp_images {
	struct capture cap; /* files holding sampled addresses, kept for the report */
	bool maps_warned;   /* the warning that /proc hid a process's maps was printed */
	uint32_t interp_next_id; /* code-object ids of every interpreter reader (interp.h) */
};

/* CPU time the emitter gathers into one sample per period (emit_accrue). */
struct emit_accrual {
	pid_t pid;	       /* of the key: -1 for all (pid 0: a free slot) */
	pid_t sample_pid, tid; /* of the sample: the last that added to it */
	uint64_t stack_id, t, weight;
};

/* What an ICODE record says of a code object (emit_code): kept for every part's file. */
struct emit_code {
	uint32_t kind, first_line; /* kind 0: an id not known (a free slot) */
	char *name, *file;
};

/* emit.c's part: the data file and the parts of a --switch-output recording. */
struct emitter {
	struct df_writer *w;
	struct xp_u64set stacks; /* ids of the stacks this file (part) has */
	/* The [vdso] image this file (part) has: every process maps the same one. */
	const uint8_t *vdso_written;
	struct emit_code *codes; /* by code id: interpreter code objects in stacks */
	unsigned long codes_alloc;
	struct emit_accrual *acc; /* open addressing on (pid, stack_id); pid 0: free */
	size_t acc_cap, acc_nr;
	bool failed;	       /* a write failed: the recording ends (the loop looks) */
	uint64_t part_start;   /* --switch-output: the current part's start (recording time) */
	uint64_t part_sampled; /* smp_sampled_ns then (a part's duration_ns statistic) */
	unsigned int parts;    /* parts ended so far */
	bool switch_failed;
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
	struct smp_loop loop;	  /* sampler.c */
	struct smp_tick tick;	  /* due.c */
	struct smp_irq irq;	  /* interrupt.c */
	struct smp_queue queue;	  /* samples.c */
	struct smp_images images; /* image.c */
	struct emitter emit;	  /* emit.c */
};

/* ns since the start of the recording. */
uint64_t smp_now(const struct sampler *s);
/* Time spent sampling (enabled) up to @now: the duration_ns statistic's measure (sampler.c). */
uint64_t smp_sampled_ns(const struct sampler *s, uint64_t now);

/*
 * samples.c.  The sampler's state of @th / @p, created at first use (a
 * process's with its first image).
 */
struct smp_thread *smp_thread_of(struct xp_thread *th);
struct smp_proc *smp_proc_of(struct sampler *s, struct xp_process *p);
/* tracer_hooks: free that state (@ctx is the sampler). */
void smp_thread_free(void *ctx, struct xp_thread *th);
void smp_proc_free(void *ctx, struct xp_process *p);
/* @th's process exec'd: a new image, what was known of the old one is stale. */
void smp_exec(struct sampler *s, struct xp_thread *th);
void smp_queue_init(struct sampler *s);
void smp_queue_release(struct sampler *s);
/*
 * In a stop of @th: its registers and stack into a new queued sample of
 * @weight, taken at @t.  NULL when none was taken (registers unreadable,
 * or a stop that found it in a call: smp_stop_in_call).
 */
struct raw_sample *smp_take_sample(struct sampler *s, struct xp_thread *th, uint64_t weight,
				   uint64_t t);
/*
 * In the stop of @creator at the event that made @child: the creator's
 * stack, the child's origin (a copy, unless the creator's last one was
 * taken where it is now).
 */
void smp_take_origin(struct sampler *s, struct xp_thread *creator, struct xp_thread *child);
/*
 * In the exit stop of @th at @t: into @n, where its @weight of CPU time
 * that no sample of its own covered goes.  For a thread sampled before
 * (the rest of its run), with its last sample's stack: the time between
 * two samples is spent like the time around them, not in the exit path.
 * For one never sampled, under the stack of its creator where it was made
 * (its origin), with a marker naming it; under itself when that is not
 * known.  smp_queue_note queues it (then, or later with more weight).
 */
void smp_exit_note(struct sampler *s, struct xp_thread *th, uint64_t weight, uint64_t t,
		   struct smp_exit_note *n);
/* The same for process @p as a whole, under itself. */
void smp_exit_note_of(struct xp_process *p, uint64_t weight, uint64_t t, struct smp_exit_note *n);
void smp_queue_note(struct sampler *s, struct smp_exit_note *n);
/* Forget @r, the sample taken last (smp_settle_weight dropped it). */
void smp_drop_last(struct sampler *s, struct raw_sample *r);
/* Whether samples wait to be unwound; the time of the oldest. */
bool smp_queued(const struct sampler *s, uint64_t *oldest);
/* Unwind, intern and write every queued sample; empty the queue. */
void smp_drain_queue(struct sampler *s);
/* The same for the @max oldest queued samples at most. */
void smp_drain_some(struct sampler *s, unsigned long max);

/*
 * image.c.  A new image of process @pid (one reference: the caller's),
 * another reference, one given back (the last frees it).
 */
struct smp_image *smp_image_new(struct sampler *s, pid_t pid, bool execed);
struct smp_image *smp_image_get(struct smp_image *img);
void smp_image_put(struct smp_image *img);
/*
 * @img, the first image of process @p forked from one running @parent,
 * starts as a copy of @parent's maps (addrspace_fork): no /proc read at a
 * fork; its interpreter is looked for in @p as at a read of its maps.
 * Nothing if @img was read already or came from an exec.
 */
void smp_image_fork(struct sampler *s, struct xp_process *p, struct smp_image *img,
		    const struct smp_image *parent);
/*
 * Read @p's maps again for its current image, at @t: a new generation,
 * whose new mappings go to the data file.  Nothing for a retired image.
 */
void smp_image_load(struct sampler *s, struct xp_process *p, struct smp_image *img, uint64_t t);
/*
 * The same without writing them: 0, or -errno when they cannot be read.
 * When /proc hides them from a process that is still there, img->maps_hidden
 * is set and, the first time in the recording, a warning says why and what
 * to do.  For a new process's first read, before its PROCESS record.
 */
int smp_image_read(struct sampler *s, struct xp_process *p, struct smp_image *img);
/*
 * Before walking sample @r: read the maps again if its pc shows they are
 * out of date (image.c says when), and date the growth of a JIT's perf map.
 */
void smp_image_check_pc(struct sampler *s, const struct raw_sample *r);
/*
 * How interp/ reads the memory of @p, whose image is @img: live unless the
 * image is retired (exec, exit), and from the stack copy of @r if any.
 */
struct interp_mem smp_interp_mem(struct sampler *s, struct xp_process *p,
				 const struct smp_image *img, const struct raw_sample *r);
/* Whether the maps of @r's image may be read again for it (image.c's rule). */
bool smp_image_maps_due(struct sampler *s, const struct raw_sample *r);
/* After such a reload for @r: whether it helped, for the back-off. */
void smp_image_reloaded(struct smp_image *img, bool helped);
/*
 * Stack @id (@nr frames) was sampled in @img of @p: the first time, note
 * the files its frames lie in for the capture, and its JIT code.
 */
void smp_image_note_stack(struct sampler *s, struct xp_process *p, struct smp_image *img,
			  uint64_t id, const uint64_t *pcs, const uint8_t *flags, uint32_t nr);
/* The JIT code @p sampled (pc-1 rule applied): sorted, each address once; *@nr of them. */
const uint64_t *smp_image_code_pcs(struct sampler *s, struct xp_process *p, size_t *nr);
/* Copy the files noted for the capture into the cache (after detaching), into @st. */
void smp_images_init(struct sampler *s);
void smp_images_save(struct sampler *s, struct capture_stats *st);
void smp_images_release(struct sampler *s);

/*
 * emit.c: everything the recorder writes to the data file.  A failed write
 * sets s->emit.failed (the loop ends the recording); later writes do
 * nothing.
 */
void emit_init(struct sampler *s, struct df_writer *w);
void emit_release(struct sampler *s);
/* The record of @p (@flags: DF_PROC_*) at @t; its mappings come with its image's loads. */
void emit_process(struct sampler *s, struct xp_process *p, uint32_t flags, uint64_t t);
/* The record of @th, named @comm if known (else read), at @t. */
void emit_thread(struct sampler *s, struct xp_thread *th, uint64_t t, const char *comm);
/* The record of thread @tid of @pid, gone since, named @comm, at @t. */
void emit_thread_gone(struct sampler *s, pid_t pid, pid_t tid, uint64_t t, const char *comm);
/* A new record for @th if its name changed, at its first few samples (at @t). */
void emit_check_name(struct sampler *s, struct xp_thread *th, uint64_t t);
/* A new record for every thread whose name changed since its last. */
void emit_thread_names(struct sampler *s);
/* The executable mappings of @img of @pid that its last load found new, at @t. */
void emit_new_maps(struct sampler *s, pid_t pid, const struct smp_image *img, uint64_t t);
/*
 * Keep what an ICODE record says of code object @c of an interpreter of
 * @kind (enum interp_kind), once per id: before the first stack that
 * names it goes to emit_stack.
 */
void emit_code(struct sampler *s, unsigned int kind, const struct interp_code *c);
/* Stack @id, unless this file has it already; first the ICODE of each code it names. */
void emit_stack(struct sampler *s, uint64_t id, const uint64_t *pcs, const uint8_t *flags,
		uint32_t nr);
/*
 * CPU time that no sample stood for (a thread's last, one that exited
 * unsampled): gathered per (@pid, @stack_id), or per @stack_id with
 * @any_pid (a stack with no address to name in the process: a marker
 * alone), into a sample at @t of @tid and @pid (the last to add to it)
 * once it makes a period, so that such bits do not outnumber the samples
 * they add to.
 */
void emit_accrue(struct sampler *s, uint64_t t, pid_t pid, pid_t tid, uint64_t stack_id,
		 bool any_pid, uint64_t weight);
/* Write what emit_accrue gathered and has not written yet. */
void emit_accrued(struct sampler *s);
/* A sample (counted in the statistics). */
void emit_sample(struct sampler *s, uint64_t t, pid_t pid, pid_t tid, uint64_t stack_id,
		 uint64_t weight);
void emit_exit(struct sampler *s, uint64_t t, pid_t pid, pid_t tid, int status);
void emit_mark(struct sampler *s, uint64_t t, uint32_t kind, const char *name);
/* The JIT symbols of @p that name its sampled JIT code (jitmap.h). */
void emit_jit(struct sampler *s, struct xp_process *p);
/* Flush what is buffered. */
void emit_flush(struct sampler *s);
/* The statistics records, at the end. */
void emit_stats(struct sampler *s);
/* --switch-output: whether the current part should end now (at @now). */
bool emit_part_due(const struct sampler *s, uint64_t now);
/*
 * End the current part and start the next.  Samples must be unwound and
 * no thread stopped.
 */
void emit_switch_part(struct sampler *s, uint64_t now);

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
/* Note @tid in s->irq.sent: a stop of it is asked for. */
void smp_irq_note_sent(struct sampler *s, pid_t tid);
/*
 * Keep of s->irq.sent only the tids whose stops are still to be seen, for
 * which @keep (when not NULL) says true; it may handle their stops.
 */
void smp_irq_sent_filter(struct sampler *s, bool (*keep)(struct sampler *, pid_t));
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
 * A stop that smp_stop_in_call dropped: one that found the thread asleep
 * again after its own CPU's interrupt counts against that path (due.c).
 */
void smp_stop_dropped(struct sampler *s, struct smp_thread *x, const struct xp_regs *regs);
/* @x's thread was born while traced: its path's first fault measure is known (due.c). */
void smp_path_born(struct smp_thread *x);
/*
 * CPU mode, in the stop of sample @r of @th, which is resumed at about
 * @t: the exact weight into @r; false when @r is not worth keeping (the
 * thread hardly ran: the caller drops it).
 */
bool smp_settle_weight(struct sampler *s, struct xp_thread *th, struct raw_sample *r, uint64_t t);
/*
 * CPU mode, in the exit stop of @th: its CPU time that its samples have
 * not covered; 0 when none, or not known (a thread found by an attach and
 * not read yet).  Notes its process's CPU clock (smp_proc.clock_at_exit).
 */
uint64_t smp_exit_unaccounted(struct sampler *s, struct xp_thread *th);
/*
 * CPU mode, as the end of process @p is seen, its wait status reaped with
 * @ru: its CPU time in all (smp_proc.children_ns added to its parent's).
 */
uint64_t smp_proc_cpu_at_end(struct sampler *s, struct xp_process *p, const struct rusage *ru);
/* attach, at the start: @p's CPU clock now, which the tree's time leaves out. */
void smp_proc_start_clock(struct sampler *s, struct xp_process *p);
/*
 * attach: the CPU time the traced processes used since the start, those
 * that ended and those alive now; 0 when not known.
 */
uint64_t smp_tree_cpu_ns(struct sampler *s);
/* Sampling starts again at @now after a pause: what ran meanwhile is not sampled. */
void smp_rebase_threads(struct sampler *s, uint64_t now);

#endif
