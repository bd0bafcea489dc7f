/* SPDX-License-Identifier: MIT */
/*
 * Which threads a tick samples, and what each sample weighs (see
 * sampler_int.h): the due rule of cputime.h applied to a live thread's
 * /proc counters (schedstat, syscall), the blocked thread counted without
 * a stop in wall mode, and the stop that found a thread at a system call
 * its CPU time has nothing to do with.  The loop that acts on these is
 * sampler.c's; the CPU each due thread is interrupted from is
 * interrupt.c's.
 */
#include "sampler_int.h"
#include "clock.h"
#include "procfs.h"
#include "err.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/*
 * CPU mode: whether the stop found @th at a system call that has nothing to
 * do with where its CPU time went; such a stop gives no sample.
 */
bool smp_stop_in_call(struct sampler *s, struct smp_thread *x, const struct xp_regs *regs)
{
	if (s->o->mode != SAMPLER_CPU)
		return false;
	/*
	 * It blocked in a system call between the tick and the stop.  Its CPU
	 * time was spent before, elsewhere: keep it for the next sample that
	 * finds it running, as the tick does for a thread already blocked.
	 */
	if (regs->flags & XP_REGS_SYSCALL_RESTART)
		return true;
	/*
	 * The same once it is woken, but stopped before it ran any code of its
	 * own: it is at the call's exit, not where its CPU time went (256
	 * threads woken from a barrier, stopped while they waited for a CPU,
	 * put a quarter of the samples at the barrier).  A call that did not
	 * block (one that uses CPU in the kernel) is sampled where it is: the
	 * exit of another call than the one it was found blocked in is one,
	 * reached through code of its own since (restart_syscall is not: it
	 * continues a call our stop interrupted).  A forking server's
	 * postmaster, found in select() at most ticks, spends its CPU in
	 * fork(); its samples at fork's exit were all taken for the wake from
	 * select, and 113 of its 128 interrupts in 2 s gave no sample: 14
	 * samples for 0.22 s of CPU.
	 */
	if ((regs->flags & XP_REGS_SYSCALL_EXIT) && x->blocked_since) {
		x->blocked_since = false;
		return x->blocked_call < 0 || regs->sys_nr == (uint64_t)x->blocked_call ||
		       regs->sys_nr == s->arch->syscall.nr_restart;
	}
	return false;
}

static void path_late(struct sampler *s, struct smp_thread *x, bool late);

void smp_stop_dropped(struct sampler *s, struct smp_thread *x, const struct xp_regs *regs)
{
	/*
	 * Asleep in a call the stop interrupts: it blocked again before the
	 * interrupt came.  Not a call that held it without sleeping so (an
	 * mmap waiting for the address space's lock, where mapmix's thread is
	 * found at every other tick): its stop at the exit is not late.
	 */
	if (regs->flags & XP_REGS_SYSCALL_RESTART)
		path_late(s, x, true);
}

/*
 * schedstat of @th (procfs.h), opened at its first use, into @ss; the
 * growth of its run-queue wait since the last read is added to the
 * statistics.  0, or -1 if unreadable.
 */
static int read_schedstat(struct sampler *s, struct xp_thread *th, struct procfs_sched *ss)
{
	struct smp_thread *x = smp_thread_of(th);

	if (x->schedstat_fd == SMP_FD_LAZY) {
		x->schedstat_fd = procfs_open_task(th->proc->pid, th->tid, "schedstat");
		/*
		 * Without it the thread is sampled at every tick, weighing a
		 * period (thread_due): wall-clock samples in a CPU profile.  The
		 * soft limit is raised to the hard one already (ctl_raise_nofile).
		 */
		if (x->schedstat_fd < 0 && (errno == EMFILE || errno == ENFILE) &&
		    !s->tick.warned_nofile) {
			s->tick.warned_nofile = true;
			xp_warn("out of open files at %lu threads: the threads beyond are "
				"sampled at every tick, as in wall mode (raise the hard limit, "
				"ulimit -Hn)",
				(unsigned long)s->tr->threads_seen);
		}
	}
	if (procfs_schedstat(x->schedstat_fd, ss))
		return -1;
	if (x->wait_ns && ss->wait_ns > x->wait_ns)
		s->st->target_wait_ns += ss->wait_ns - x->wait_ns;
	x->wait_ns = ss->wait_ns ? ss->wait_ns : 1;
	return 0;
}

/* Where a thread is when it is not known to be on a CPU (off_cpu_state). */
enum off_cpu {
	OFF_UNKNOWN,   /* its status is unreadable */
	OFF_RUNNING,   /* on a CPU after all */
	OFF_PREEMPTED, /* waits for a CPU, preempted since it last blocked */
	OFF_WOKEN,     /* waits for a CPU after a block since the last look */
};

/*
 * Whether @th, not blocked, runs now or waits for a CPU, from its status
 * (procfs_switches): it runs exactly when it got a CPU (@count times,
 * schedstat read just before) once more than it left one.  A wait after
 * a voluntary switch beyond the stops of ours since the last look is a
 * wait after a block; so is any wait at the first look (it is asked only
 * of threads seen blocked: with 1000 threads in a 2 s run, taking them
 * as preempted put 38% of the samples in the sleep, 12% this way).  A switch
 * between the two reads makes a running thread look as if it waited.
 * The file costs ~7 us to read, against ~0.5 us for schedstat.
 */
static enum off_cpu off_cpu_state(struct sampler *s, struct xp_thread *th, uint64_t count)
{
	struct smp_thread *x = smp_thread_of(th);
	uint64_t vol, invol;
	bool woken;

	if (x->status_fd == SMP_FD_LAZY)
		x->status_fd = procfs_open_task(th->proc->pid, th->tid, "status");
	if (procfs_switches(x->status_fd, &vol, &invol))
		return OFF_UNKNOWN;
	s->st->running_checks++;
	woken = !x->vol_known || vol > x->vol_seen + x->stops_since;
	x->vol_known = true;
	x->vol_seen = vol;
	x->stops_since = 0;
	if (count == vol + invol + 1) {
		s->st->running_found++;
		return OFF_RUNNING;
	}
	return woken ? OFF_WOKEN : OFF_PREEMPTED;
}

/*
 * Weight of a sample of @th taken now, and whether it is due at all
 * (cputime.h); with *@unsure, only if it runs now.  CPU mode: @ss its
 * counters read at this tick, NULL when unreadable.
 */
static bool thread_due(struct sampler *s, struct xp_thread *th, uint64_t now,
		       const struct procfs_sched *ss, uint64_t *weight, bool *unsure)
{
	struct smp_thread *x = smp_thread_of(th);

	*unsure = false;
	if (s->o->mode == SAMPLER_WALL) {
		*weight = cputime_wall_weight(&x->cpu, now, s->period);
		return true;
	}
	x->cpu.on_cpu = false;
	if (!ss) {
		x->off_blocked = false;
		*weight = s->period;
		return x->schedstat_fd < 0;
	}
	x->seen_at = now;
	/* Threads made while recording count from 0, those found by an attach from now. */
	if (cputime_due(&x->cpu, ss, now, s->period, s->o->kind == SAMPLER_ATTACH && !x->born,
			weight))
		return true;
	*unsure = cputime_due_if_running(&x->cpu, s->period, weight);
	return *unsure;
}

static void path_note(struct sampler *s, struct smp_thread *x, const struct xp_regs *regs,
		      uint64_t window);

/*
 * CPU mode, in the stop of sample @r of @th, which is resumed at about @t:
 * the exact weight, or no sample for a thread that hardly ran
 * (cputime_settle).
 */
bool smp_settle_weight(struct sampler *s, struct xp_thread *th, struct raw_sample *r, uint64_t t)
{
	struct smp_thread *x = smp_thread_of(th);
	struct procfs_sched ss;

	x->cpu.resume_known = false;
	if (read_schedstat(s, th, &ss))
		return true;
	if (!cputime_settle(&x->cpu, &ss, s->period, t, &r->weight)) {
		s->st->dropped_idle++;
		return false;
	}
	x->blocked_since = false;
	path_note(s, x, &r->regs, t > r->t ? t - r->t : 0);
	return true;
}

/*
 * Is @th blocked in a system call?  Its syscall file (procfs.h) cannot be
 * read usefully once we have stopped the thread.  The call's number, -1 if
 * not blocked, PROCFS_GONE if the thread has exited.
 */
static int64_t read_blocked(struct xp_thread *th, uint64_t *sp, uint64_t *pc)
{
	struct smp_thread *x = smp_thread_of(th);

	if (x->syscall_fd < 0) {
		x->syscall_fd = procfs_open_task(th->proc->pid, th->tid, "syscall");
		if (x->syscall_fd < 0)
			return -1;
	}
	return procfs_syscall(x->syscall_fd, sp, pc);
}

/*
 * A thread still blocked in the same system call at the same SP and PC as at
 * its last sample has the same stack: count it without stopping it.
 */
static bool sample_blocked(struct sampler *s, struct xp_thread *th, uint64_t now, uint64_t w)
{
	struct smp_thread *x = smp_thread_of(th);
	uint64_t sp = 0, pc = 0;
	int64_t nr = read_blocked(th, &sp, &pc);

	if (nr == PROCFS_GONE)
		return true; /* its exit waits to be handled: nothing to sample */
	/*
	 * Our own earlier stop turned the sleep into restart_syscall: it is
	 * the call that stop interrupted (which the tick may not have seen
	 * blocked: one entered between the tick and the stop), or the same
	 * block as the last sample's.
	 */
	if (nr == s->arch->syscall.nr_restart && x->restart_nr >= 0)
		nr = x->restart_nr;
	else if (nr == s->arch->syscall.nr_restart && x->last_sys_nr >= 0 && sp == x->last_sys_sp &&
		 pc == x->last_sys_pc)
		nr = x->last_sys_nr;
	x->blocked_nr = nr;
	if (nr < 0 || !x->last_stack_id || x->last_stack_part != s->emit.parts ||
	    nr != x->last_sys_nr || sp != x->last_sys_sp || pc != x->last_sys_pc) {
		x->last_sys_sp = sp;
		x->last_sys_pc = pc;
		return false;
	}
	x->cpu.wall_sampled = now;
	emit_sample(s, now, th->proc->pid, th->tid, x->last_stack_id, w);
	s->st->reused++;
	return true;
}

/*
 * Whether a stop of @th waits for the controller to collect it.  Such a
 * thread is in a ptrace-stop, not blocked, though its syscall file reads
 * the same (the call it stopped in: the clone event of a thread that
 * starts others): a target that starts thousands of threads a second has
 * its creator stopped there at most ticks, and taking that for a block
 * kept its CPU time out of every sample (12 ms of its 317 went into 4).
 * The look does not consume the stop (WNOWAIT).
 */
static bool stop_waiting(struct xp_thread *th)
{
	siginfo_t si = {0};

	return !waitid(P_PID, (id_t)th->tid, &si,
		       WEXITED | WSTOPPED | WNOHANG | WNOWAIT | __WALL) &&
	       si.si_pid == th->tid;
}

/*
 * @th, due at @now for @w, is in a stop that waits to be collected (a
 * thread that starts others, at its clone event): that stop gives its
 * sample when the loop collects it (sampler.c), no interrupt needed.  Its
 * CPU time went into the call it stopped in, making the thread.  Left
 * for a tick that finds it running, a creator that the controller keeps
 * waiting at nearly every clone event got none: on 'churn threads 2 8'
 * at 9999 Hz with a busy controller, 19 samples for 208 ms of CPU, the
 * rest in one sample at its exit.
 */
static void sample_waiting_stop(struct sampler *s, struct xp_thread *th, uint64_t now, uint64_t w)
{
	struct smp_thread *x = smp_thread_of(th);

	x->at_waiting_stop = true;
	x->irq_time = smp_now(s);
	x->cpu.wall_sampled = now;
	x->pending_weight = w;
	smp_irq_note_sent(s, th->tid);
	s->st->waiting_stops++;
}

/*
 * A tick found @x's thread blocked in a call: the CPU time it ran since its
 * last sample was spent elsewhere, not in the call it sits in now.  Keep
 * the time for the next sample that finds it running.  Until its counters
 * move it is quiet (smp_find_due).
 */
static void note_blocked(struct smp_thread *x, int64_t nr)
{
	x->blocked_call = nr;
	x->blocked_since = true;
	x->blocks_seen = true;
	cputime_not_running(&x->cpu);
	x->off_blocked = true;
}

/*
 * Found blocked in a call, its counters unmoved since (cputime's off_cpu
 * holds until they move): its schedstat is not read at each tick
 * (smp_find_due).
 */
static bool quiet(const struct smp_thread *x)
{
	return x->cpu.off_cpu && x->off_blocked;
}

/*
 * Not for a tick: stopped, interrupted already (or to be sampled at the
 * stop it is in), a copy of xprof before its exec, or past its exit stop:
 * it runs only the kernel's end of its exit (a process's memory unmapped:
 * ~0.3 ms a backend of a forking server), which its exit accounts for,
 * and an interrupt there would never stop it.
 */
static bool not_for_tick(struct xp_thread *th)
{
	return th->state != THREAD_RUNNING || th->interrupt_pending ||
	       smp_thread_of(th)->at_waiting_stop || !th->proc->execed || th->exiting;
}

/*
 * Whether a tick at @now should interrupt @th, with the sample's weight;
 * its counters go into @p's sum (smp_find_due).
 */
static bool want_sample(struct sampler *s, struct xp_thread *th, struct smp_proc *p, uint64_t now,
			uint64_t *w)
{
	struct smp_thread *x = smp_thread_of(th);
	struct procfs_sched ss = {0};
	uint64_t sp, pc;
	enum off_cpu where = OFF_UNKNOWN;
	bool unsure, read = false, due;
	int64_t nr;

	if (not_for_tick(th)) {
		p->nunread++; /* into the sum only if needed (smp_find_due) */
		return false;
	}
	if (s->o->mode == SAMPLER_CPU) {
		p->nread++;
		read = !read_schedstat(s, th, &ss);
		if (read)
			p->known_ns += ss.cpu_ns;
		else
			p->unknown = true;
	}
	due = thread_due(s, th, now, read ? &ss : NULL, w, &unsure);
	/*
	 * Not due, its counters unmoved at two reads in a row, not known to run
	 * (which would move them within a kernel tick) nor to wait: if it is
	 * blocked, it is quiet from now on.  Asked once per such stretch.
	 */
	if (!due && read && x->cpu.unmoved_reads == 2 && !x->cpu.off_cpu && !x->cpu.on_cpu) {
		nr = read_blocked(th, &sp, &pc);
		if (nr >= 0 && !stop_waiting(th))
			note_blocked(x, nr);
		return false;
	}
	if (!due)
		return false;
	if (s->o->mode == SAMPLER_WALL && sample_blocked(s, th, now, *w))
		return false;
	/* Blocking switches a thread out: one never switched out is not blocked. */
	nr = s->o->mode == SAMPLER_CPU && !x->cpu.on_cpu ? read_blocked(th, &sp, &pc) : -1;
	/*
	 * It has exited: its exit is among the stops not handled yet (a target
	 * that ends thousands of threads a second): an interrupt would only
	 * fail.
	 */
	if (nr == PROCFS_GONE)
		return false;
	if (nr >= 0) {
		if (stop_waiting(th))
			sample_waiting_stop(s, th, now, *w);
		else
			note_blocked(x, nr);
		return false;
	}
	/*
	 * Not blocked, not known to be on a CPU: it may wait for one.  A wait
	 * after a block ends at the call's exit, where an interrupt would stop
	 * it, not where its CPU time went: 1000 threads that run ~100 us
	 * between 1 ms sleeps, on 2 CPUs, put 93% of their samples in
	 * clock_nanosleep.  Its time waits for a tick that finds it running.
	 * A wait after a preemption stops where it was preempted, as good a
	 * place as any.  The status read is only for threads seen blocked
	 * before, where tasks outnumber CPUs (with idle ones, a woken thread
	 * gets a CPU at once), and for those whose progress is known only if
	 * they run (cputime_due_if_running).
	 */
	if (unsure || (s->o->mode == SAMPLER_CPU && !x->cpu.on_cpu && x->blocks_seen &&
		       smp_others_running(s) > s->irq.place.nr_cpus))
		where = off_cpu_state(s, th, read ? ss.count : 0);
	if (where == OFF_WOKEN || (unsure && where != OFF_RUNNING && where != OFF_UNKNOWN)) {
		if (where == OFF_WOKEN) {
			x->blocked_since = true;
			x->blocked_call = -1; /* woken from a call not seen */
		}
		cputime_not_running(&x->cpu);
		x->off_blocked = false;
		return false;
	}
	if (where == OFF_RUNNING)
		x->cpu.on_cpu = true;
	return true;
}

/*
 * Its CPU clock (the sum of its threads' counters) into @ns; false when
 * unknown.  The id is made, not asked for: clock_getcpuclockid spends a
 * system call per process to check what the read checks as well.
 */
static bool proc_clock(struct smp_proc *p, pid_t pid, uint64_t *ns)
{
	p->clock_read = true;
	return !xp_clock_read(xp_process_clock(pid), ns);
}

/*
 * @proc's state at this tick, started at the first of its threads: its
 * clock is read there if at its last tick it had quiet threads, more than
 * those not for a tick (which its sum needs then: smp_find_due).  The
 * clock sums all its threads in the kernel, ~7.5 ns each: 64 busy threads
 * beside a blocked main read it at every tick for nothing.
 */
static struct smp_proc *tick_proc(struct sampler *s, struct xp_process *proc)
{
	struct smp_proc *p = smp_proc_of(s, proc);
	bool had_quiet = p->nquiet > p->nunread;

	if (p->tick == s->st->ticks)
		return p;
	xp_grow((void **)&s->tick.procs, &s->tick.procs_alloc, s->tick.nprocs + 1,
		sizeof(*s->tick.procs));
	s->tick.procs[s->tick.nprocs++] = proc;
	p->tick = s->st->ticks;
	p->known_ns = 0;
	p->nquiet = p->nskipped = p->nread = p->nunread = 0;
	p->filled = p->sweep = false;
	p->unknown =
	    s->o->mode != SAMPLER_CPU || !had_quiet || !proc_clock(p, proc->pid, &p->clock_ns);
	return p;
}

/*
 * Quiet, and left out at this tick unless its process is swept
 * (smp_find_due).  Not while the process's sum is unknown since its last
 * tick: it would be swept all the same.
 */
static bool left_out(struct xp_thread *th, struct smp_proc *p)
{
	return quiet(smp_thread_of(th)) && p->rest_known && th->state == THREAD_RUNNING;
}

/*
 * The CPU @th runs or waits on: field 39 of its stat file, read with its
 * page faults (path_faults).  -1 if unknown.
 * Not the cpu_id of its rseq area, which is cheaper to read (1.5 us against
 * 3.7) but is read from the thread's memory: process_vm_readv takes the
 * lock of the process's address space, and waits, before the interrupt
 * is sent, for any thread that holds it: a thread making 16 MiB mmap
 * (MAP_POPULATE) calls while another called mprotect was interrupted only
 * once back in its own code, and its calls read 30-43% of its CPU time
 * for a truth of 72% (perf: 67%, stat: 71-72%).
 */
static int thread_cpu(struct sampler *s, struct xp_thread *th, uint64_t *faults)
{
	struct smp_thread *x = smp_thread_of(th);

	if (x->stat_fd < 0)
		x->stat_fd = procfs_open_task(th->proc->pid, th->tid, "stat");
	s->st->stat_reads++;
	return procfs_task_cpu_faults(x->stat_fd, faults);
}

/*
 * The path.  A sample is where the thread was when the interrupt was
 * sent, unless the thread entered the kernel before the interrupt reached
 * it: it then stops on its way back, at the system call's exit or at the
 * faulting instruction.  Sent from the thread's own CPU while the thread
 * is held off it (interrupt.c) the interrupt cannot miss; sent from any
 * CPU it costs the thread what perf's interrupt does (split: 0.02-0.03
 * against 0.05-0.15, doc/benchmarks.md), and it is right as long as the
 * thread rarely enters the kernel, which its samples show:
 *   - a stop at a system call's exit shows in the registers
 *     (XP_REGS_SYSCALL_EXIT): every sample skidded into a call is one, so
 *     their share bounds the share skidded into calls;
 *   - a page fault does not show; its count does (stat, path_faults).  A
 *     sample can skid into a fault only if one begins between the
 *     interrupt and its arrival, which is shorter than the wait for the
 *     stop (tick.window_ns): with F faults per second of the thread's CPU
 *     time, at most F x window_ns of its samples.
 * A thread starts from any CPU.  Each sample taken from there adds that
 * evidence (1 for a stop at a call's exit, the faults' share), less the
 * share allowed (SMP_PATH_ALLOW); past SMP_PATH_LIMIT the thread moves to
 * its own CPU (a CUSUM test: sysmix, 85% of its stops at a call's exit,
 * moves within 3 samples; a thread at the allowed share drifts back to
 * 0).  There the calls no longer show, so it tries any CPU again after a
 * hold (SMP_PATH_SPELL_MIN samples, doubled each time it comes back within
 * a spell, up to SMP_PATH_SPELL_MAX), and only while its faults are few:
 * a thread that keeps entering the kernel spends a few samples in 4096
 * from any CPU.
 * The interrupt from its own CPU comes later (the trigger's wake and its
 * random pause: ~20-270 us at 999 Hz) than one from any CPU (~10-30 us).
 * A thread that runs in short bursts between blocks (an event loop that
 * makes calls as it serves) has often blocked again when it comes: the
 * stop interrupts the call it sleeps in and gives no sample
 * (smp_stop_dropped), and the bursts it does reach are the long ones,
 * which then carry the short ones' time (t5013: 300 samples per
 * CPU-second, the short bursts 0.015-0.05 of the time for a truth of
 * 0.49).  So each own-CPU stop that comes after the run adds half a unit,
 * each on time takes a unit away: past SMP_PATH_LATE_LIMIT (6 late stops
 * more than twice the timely ones, which a thread late at one stop in
 * three reaches about never) the thread goes back to any CPU, where skids
 * do not move it again for a hold (the spell, doubled at each such move up
 * to SMP_PATH_SPELL_MAX samples, back to its least once a hold on its own
 * CPU ends on time).  Only in CPU mode, and where the registers tell a
 * call's exit (x86-64); elsewhere every thread is interrupted from its own
 * CPU.
 */
#define SMP_PATH_UNIT	    1024u
#define SMP_PATH_ALLOW	    (SMP_PATH_UNIT / 64)
#define SMP_PATH_LIMIT	    (2 * SMP_PATH_UNIT)
#define SMP_PATH_SPELL_MIN  64u
#define SMP_PATH_SPELL_MAX  4096u
#define SMP_PATH_LATE_LIMIT (3 * SMP_PATH_UNIT)
/* CPU time between two reads of a thread's faults on the cheap path (and the least span). */
#define SMP_PATH_FAULT_SPAN (16 * 1000 * 1000ull)
/* tick.window_ns before the first measure: longer than any seen here. */
#define SMP_PATH_WINDOW_NS 50000ull

/* Whether threads may be interrupted from any CPU while their samples allow it. */
static bool path_adaptive(const struct sampler *s)
{
	return s->o->same_cpu && s->o->mode == SAMPLER_CPU && s->arch->prstatus_syscall;
}

/*
 * @x's page faults read now (@faults, -1 cast: unreadable): once its CPU
 * time grew by SMP_PATH_FAULT_SPAN since the last read, the share of its
 * samples they may have skidded since (the path).
 */
static void path_faults(struct sampler *s, struct smp_thread *x, uint64_t faults)
{
	struct smp_path *pa = &x->path;
	uint64_t cpu = x->cpu.sampled_ns, share;

	if (pa->faults_known && (cpu < pa->faults_cpu || faults < pa->faults))
		pa->faults_known = false; /* an exec's new counters */
	if (!pa->faults_known) {
		pa->faults_known = true;
		pa->faults = faults;
		pa->faults_cpu = cpu;
		return;
	}
	if (cpu - pa->faults_cpu < SMP_PATH_FAULT_SPAN)
		return;
	share = (faults - pa->faults) * s->tick.window_ns * SMP_PATH_UNIT / (cpu - pa->faults_cpu);
	pa->fault_share = share > SMP_PATH_UNIT ? SMP_PATH_UNIT : (uint32_t)share;
	pa->faults = faults;
	pa->faults_cpu = cpu;
}

/*
 * The kernel starts a new task's fault counters at 0, at its CPU time of
 * 0: that is the first measure, with no read of its stat file, and a
 * process that lives less CPU time than the measure's span (a forking
 * server's backend) is never read for it.
 */
void smp_path_born(struct smp_thread *x)
{
	x->path.faults_known = true;
	x->path.faults = 0;
	x->path.faults_cpu = 0;
}

/*
 * The CPU to interrupt due thread @th from: its own, or -1 for any.  Its
 * faults are read with its CPU on its own CPU's path, by a read of their
 * own once per SMP_PATH_FAULT_SPAN of CPU time on the other.
 */
static int path_cpu(struct sampler *s, struct xp_thread *th)
{
	struct smp_thread *x = smp_thread_of(th);
	struct smp_path *pa = &x->path;
	uint64_t faults = 0;
	int cpu;

	if (!s->o->same_cpu)
		return -1;
	if (!path_adaptive(s))
		return thread_cpu(s, th, &faults);
	if (pa->skid_free) {
		cpu = thread_cpu(s, th, &faults);
		if (cpu >= 0)
			path_faults(s, x, faults);
		return cpu;
	}
	if (!pa->faults_known || x->cpu.sampled_ns - pa->faults_cpu >= SMP_PATH_FAULT_SPAN) {
		if (thread_cpu(s, th, &faults) >= 0)
			path_faults(s, x, faults);
	}
	s->st->irq_path_any++;
	return -1;
}

/* @pa's thread goes back to the interrupt from any CPU, its evidence of skids anew. */
static void path_to_any(struct sampler *s, struct smp_path *pa)
{
	pa->skid_free = false;
	pa->score = 0;
	pa->cheap = 0;
	s->st->path_any++;
}

/*
 * In the stop of a sample of @x that is kept (CPU mode), @window ns after
 * its interrupt: the evidence of a sample from any CPU, and the path of
 * its next ones.
 */
static void path_note(struct sampler *s, struct smp_thread *x, const struct xp_regs *regs,
		      uint64_t window)
{
	struct smp_path *pa = &x->path;
	uint32_t add;

	/* A stop no interrupt asked for says nothing of the interrupt's path. */
	if (!path_adaptive(s) || x->at_waiting_stop)
		return;
	/*
	 * A thread that waited for a CPU stops long after its interrupt, but
	 * where it was preempted, not in a kernel entry: its wait is not a
	 * window, and counts as the longest one.
	 */
	if (!x->irq_held) {
		if (window > SMP_PATH_WINDOW_NS)
			window = SMP_PATH_WINDOW_NS;
		s->tick.window_ns += ((int64_t)window - (int64_t)s->tick.window_ns) / 16;
	}
	if (pa->skid_free) {
		path_late(s, x, false);
		if (pa->hold)
			pa->hold--;
		if (pa->hold || pa->fault_share >= SMP_PATH_ALLOW / 2)
			return;
		pa->late_spell = 0; /* its hold ended with its stops on time */
		path_to_any(s, pa);
		return;
	}
	if (x->irq_held)
		return;
	pa->cheap++;
	add = pa->fault_share + (regs->flags & XP_REGS_SYSCALL_EXIT ? SMP_PATH_UNIT : 0);
	pa->score = pa->score + add > SMP_PATH_ALLOW ? pa->score + add - SMP_PATH_ALLOW : 0;
	if (pa->late_hold) {
		pa->late_hold--;
		pa->score = 0;
		return;
	}
	if (pa->score < SMP_PATH_LIMIT)
		return;
	if (!pa->spell)
		pa->spell = SMP_PATH_SPELL_MIN;
	else if (pa->cheap < pa->spell && pa->spell < SMP_PATH_SPELL_MAX)
		pa->spell *= 2;
	else if (pa->cheap >= pa->spell)
		pa->spell = SMP_PATH_SPELL_MIN;
	pa->skid_free = true;
	pa->hold = pa->spell;
	pa->late = 0;
	s->st->path_own++;
}

/*
 * An outcome of @x's interrupt from its own CPU: its stop came after its
 * run (@late: in the call it blocked in since) or not.  Past
 * SMP_PATH_LATE_LIMIT it goes back to any CPU for a hold (the path).
 */
static void path_late(struct sampler *s, struct smp_thread *x, bool late)
{
	struct smp_path *pa = &x->path;

	if (!path_adaptive(s) || !pa->skid_free || !x->irq_held || x->at_waiting_stop)
		return;
	if (late)
		pa->late += SMP_PATH_UNIT / 2;
	else
		pa->late = pa->late > SMP_PATH_UNIT ? pa->late - SMP_PATH_UNIT : 0;
	if (pa->late < SMP_PATH_LATE_LIMIT)
		return;
	if (!pa->late_spell)
		pa->late_spell = SMP_PATH_SPELL_MIN;
	else if (pa->late_spell < SMP_PATH_SPELL_MAX)
		pa->late_spell *= 2;
	pa->late_hold = pa->late_spell;
	pa->late = 0;
	path_to_any(s, pa);
	s->st->path_late++;
}

static void add_due(struct sampler *s, struct xp_thread *th, uint64_t w)
{
	int cpu = path_cpu(s, th);

	xp_grow((void **)&s->tick.due, &s->tick.due_alloc, s->tick.ndue + 1, sizeof(*s->tick.due));
	s->tick.due[s->tick.ndue++] = (struct smp_due){.th = th, .weight = w, .cpu = cpu};
}

/* Whether @p's known_ns holds all its threads' counters. */
static bool known_all(const struct smp_proc *p)
{
	return !p->unknown && (!p->nunread || p->filled);
}

/*
 * Whether @p's clock less its threads' counters known is exactly its
 * exited threads' time: every counter known, and the clock unmoved during
 * the reads.
 */
static bool rest_exact(struct smp_proc *p, pid_t pid)
{
	uint64_t t;

	return known_all(p) && proc_clock(p, pid, &t) && t == p->clock_ns;
}

/*
 * After the threads that are not quiet were read: whether @p's quiet ones
 * left out must be read too.  Its clock less the counters known (those
 * read, and the quiet ones' as they were) is its exited threads' time: if
 * that changed, a quiet thread's counter moved.  A quiet thread woken
 * since may run without moving it yet (until the kernel's tick or a
 * switch); more tasks runnable on the machine than threads of ours that
 * may run may be such a one.  And at least every SMP_QUIET_SWEEP_NS.
 * With none of its counters read at this tick (a make or a shell waiting
 * for its children), the clock read at its start is the snapshot: a
 * second read would only see a move that the next tick sees (a build
 * read its processes' clocks 6 times per sample, about half of them so).
 */
static void check_quiet(struct sampler *s, struct smp_proc *p, pid_t pid, uint64_t now)
{
	uint64_t rest = p->clock_ns - p->known_ns;
	bool exact = p->nread ? rest_exact(p, pid) : known_all(p);
	long others;

	if (p->nskipped) {
		p->sweep = !exact || rest != p->rest_ns || now - p->swept_at >= SMP_QUIET_SWEEP_NS;
		if (!p->sweep) {
			others = smp_others_running(s);
			p->sweep = others < 0 || others > (long)s->tick.awake;
		}
		if (p->sweep)
			return;
	}
	p->rest_known = exact;
	p->rest_ns = rest;
}

/* After the sweep of @p: its counters are all read now. */
static void swept(struct sampler *s, struct smp_proc *p, pid_t pid, uint64_t now)
{
	p->rest_known = rest_exact(p, pid);
	p->rest_ns = p->clock_ns - p->known_ns;
	p->swept_at = now;
	s->st->quiet_sweeps++;
}

/*
 * Every thread's counters were read at every tick: with 200 threads
 * blocked beside 2 busy ones on 2 CPUs, 200 reads a tick took a third of
 * a CPU at 3999 Hz and made the busy threads' work 2.4 times longer.  A
 * thread found blocked in a call, its counters unmoved since, is quiet:
 * it cannot run again without getting a CPU, and it is read only when a
 * counter of its process moved unseen, or a task may run unseen
 * (check_quiet).  Its counters are taken as unmoved meanwhile.
 */
void smp_find_due(struct sampler *s, uint64_t now)
{
	struct xp_thread *th;
	struct smp_proc *p;
	unsigned long i = 0, k;
	bool fill = false, any = false;
	uint64_t w;

	s->tick.ndue = 0;
	s->tick.awake = 0;
	s->tick.nprocs = 0;
	while ((th = tracer_thread_at(s->tr, &i))) {
		struct smp_thread *x = smp_thread_of(th);

		p = tick_proc(s, th->proc);
		if (left_out(th, p)) {
			x->skipped = s->st->ticks;
			p->known_ns += x->cpu.last_cpu_ns;
			p->nquiet++;
			p->nskipped++;
			x->cpu.last_time = x->seen_at;
			x->seen_at = now;
			s->st->quiet_skips++;
			continue;
		}
		if (want_sample(s, th, p, now, &w))
			add_due(s, th, w);
		if (th->state == THREAD_RUNNING && quiet(x))
			p->nquiet++;
		else if (th->state == THREAD_RUNNING)
			s->tick.awake++;
	}
	if (s->o->mode != SAMPLER_CPU)
		return;
	/*
	 * The counters of the threads not for this tick count in the sum too,
	 * read when they are fewer than the quiet threads they spare (64 busy
	 * threads, a third of them interrupted and waiting for a CPU at each
	 * tick, beside one blocked: 16 us a sample more when they were read).
	 */
	for (k = 0; k < s->tick.nprocs; k++) {
		p = smp_proc_of(s, s->tick.procs[k]);
		if (!p->unknown && p->nunread && p->nunread < p->nquiet)
			fill = p->filled = true;
	}
	for (i = 0; fill && (th = tracer_thread_at(s->tr, &i));) {
		struct procfs_sched ss;

		p = tick_proc(s, th->proc);
		if (!p->filled || !not_for_tick(th))
			continue;
		p->nread++;
		if (!read_schedstat(s, th, &ss))
			p->known_ns += ss.cpu_ns;
		else
			p->unknown = true;
	}
	for (k = 0; k < s->tick.nprocs; k++) {
		p = smp_proc_of(s, s->tick.procs[k]);
		check_quiet(s, p, s->tick.procs[k]->pid, now);
		any |= p->sweep;
	}
	if (!any)
		return;
	for (i = 0; (th = tracer_thread_at(s->tr, &i));) {
		struct smp_thread *x = smp_thread_of(th);

		p = tick_proc(s, th->proc);
		if (!p->sweep || x->skipped != s->st->ticks)
			continue;
		p->known_ns -= x->cpu.last_cpu_ns;
		s->st->quiet_skips--;
		if (want_sample(s, th, p, now, &w))
			add_due(s, th, w);
	}
	for (k = 0; k < s->tick.nprocs; k++) {
		p = smp_proc_of(s, s->tick.procs[k]);
		if (p->sweep)
			swept(s, p, s->tick.procs[k]->pid, now);
	}
}

uint64_t smp_exit_unaccounted(struct sampler *s, struct xp_thread *th)
{
	struct smp_thread *x = smp_thread_of(th);
	struct procfs_sched ss;
	struct smp_proc *p;

	if (s->o->mode != SAMPLER_CPU)
		return 0;
	p = smp_proc_of(s, th->proc);
	/*
	 * A process found by an attach: its clock at each exit stop, its time
	 * at its end if the clock is gone by then (smp_proc_cpu_at_end).
	 */
	if (p->found)
		proc_clock(p, th->proc->pid, &p->clock_at_exit);
	if (!s->loop.enabled)
		return 0;
	/* A thread found by an attach counts from its first read (cputime_due). */
	if (!x->born && s->o->kind == SAMPLER_ATTACH && !x->cpu.init)
		return 0;
	/*
	 * The only thread a process followed from its start ever had: its
	 * clock is that thread's counter, and no file need be opened for it
	 * (a /bin/true of a fork storm: open, read and close of a new task's
	 * schedstat, ~10 us, against ~1 for the clock).
	 */
	if (p->born && th->proc->threads_seen == 1 && x->schedstat_fd == SMP_FD_LAZY &&
	    proc_clock(p, th->proc->pid, &p->clock_at_exit))
		ss.cpu_ns = p->clock_at_exit;
	else if (read_schedstat(s, th, &ss))
		return 0;
	else if (p->born)
		proc_clock(p, th->proc->pid, &p->clock_at_exit);
	return ss.cpu_ns > x->cpu.sampled_ns ? ss.cpu_ns - x->cpu.sampled_ns : 0;
}

uint64_t smp_proc_cpu_at_end(struct sampler *s, struct xp_process *p, const struct rusage *ru)
{
	struct smp_proc *x = smp_proc_of(s, p);
	struct xp_thread *parent = tracer_find(s->tr, p->ppid);
	uint64_t ns = 0, all;

	/*
	 * Its exit stops come before the kernel's work of its exit (its memory
	 * unmapped, its files closed: ~40 us a /bin/true).  A process that its
	 * parent has not waited for yet still has its clock, all of it.  Else
	 * the rusage of its reaping has it, with the children it waited for,
	 * which are known here when traced (all of them, as parents wait for
	 * their children): without them.  Children not followed
	 * (--no-follow), and those of a process found by an attach that
	 * ended before it, are in that rusage too, and nothing here knows
	 * their time: its clock at its last exit stop, where one was read, is
	 * its time then.
	 */
	if (!x->clock_read || xp_clock_read(xp_process_clock(p->pid), &ns) ||
	    ns < x->clock_at_exit) {
		all = ru ? xp_timeval_ns(&ru->ru_utime) + xp_timeval_ns(&ru->ru_stime) : 0;
		ns = all > x->children_ns ? all - x->children_ns : 0;
		if (ns < x->clock_at_exit ||
		    ((!(s->tr->flags & TRACER_FOLLOW) || x->found) && x->clock_at_exit))
			ns = x->clock_at_exit;
	}
	if (parent && parent->tid == p->ppid)
		smp_proc_of(s, parent->proc)->children_ns += ns + x->children_ns;
	return ns;
}

void smp_proc_start_clock(struct sampler *s, struct xp_process *p)
{
	struct smp_proc *x = smp_proc_of(s, p);

	x->found = true;
	if (!proc_clock(x, p->pid, &x->start_clock_ns))
		s->loop.tree_unknown = true;
}

/*
 * A process's clock sums its threads' counters, those of the threads
 * that exited included: read now, less what it was at the start, it is
 * what the process ran while traced, whichever of its threads ran it.
 * Its children's time is theirs, each process counted once (a process
 * found by the attach that reaped children since would count their whole
 * lives in its children's times, and leaves out those still running).
 */
uint64_t smp_tree_cpu_ns(struct sampler *s)
{
	uint64_t all = s->loop.ended_cpu_ns, ns;
	unsigned long i;

	if (s->loop.tree_unknown)
		return 0;
	for (i = 0; i < s->tr->nprocs; i++) {
		struct xp_process *p = s->tr->procs[i];
		struct smp_proc *x = smp_proc_of(s, p);

		if (p->exited || xp_clock_read(xp_process_clock(p->pid), &ns))
			continue;
		all += ns > x->start_clock_ns ? ns - x->start_clock_ns : 0;
	}
	return all;
}

/*
 * Sampling starts again after a pause: what each thread ran meanwhile is
 * not in its next sample (cputime_rebase).
 */
void smp_rebase_threads(struct sampler *s, uint64_t now)
{
	struct xp_thread *th;
	unsigned long i = 0;
	struct procfs_sched ss = {0};

	while ((th = tracer_thread_at(s->tr, &i))) {
		struct smp_thread *x = smp_thread_of(th);

		if (s->o->mode == SAMPLER_CPU && read_schedstat(s, th, &ss))
			continue; /* unreadable: sampled at every tick anyway (thread_due) */
		cputime_rebase(&x->cpu, ss.cpu_ns, now, s->period);
	}
}

void smp_tick_init(struct sampler *s)
{
	s->tick.loadavg_fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
	s->tick.window_ns = SMP_PATH_WINDOW_NS;
}

void smp_tick_release(struct sampler *s)
{
	if (s->tick.loadavg_fd >= 0)
		close(s->tick.loadavg_fd);
	XP_FREE_ALL(s->tick.due, s->tick.procs);
}

long smp_others_running(struct sampler *s)
{
	struct smp_tick *tk = &s->tick;

	if (tk->running_tick != s->st->ticks || !tk->running_tick) {
		long running = procfs_running(tk->loadavg_fd);

		tk->running = running > 0 ? running - 1 : -1;
		tk->running_tick = s->st->ticks;
	}
	return tk->running;
}

bool smp_cpu_idle(struct sampler *s)
{
	long others = smp_others_running(s);

	return others >= 0 && others < s->irq.place.nr_cpus;
}
