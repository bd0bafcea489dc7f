/* SPDX-License-Identifier: MIT */
/* Triggers (trigger.h). */
#include "trigger.h"
#include "arch.h"
#include "clock.h"
#include "ctl.h"
#include "err.h"

#include <errno.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

static void futex_wait(_Atomic uint32_t *word, uint32_t val, uint64_t timeout_ns)
{
	struct timespec ts = xp_ns_timespec(timeout_ns);

	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, val, timeout_ns ? &ts : NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/*
 * Set @c's timer for @at (xp_now_ns, CLOCK_MONOTONIC), its expirations
 * reset.  Whether it is set.
 */
static bool set_timer(struct trigger_cpu *c, uint64_t at)
{
	c->timer_at = ctl_timerfd_at(c->timer_fd, at) ? 0 : at;
	return c->timer_at != 0;
}

/*
 * One request, its pause over, its wake @late ns after its timer: pause
 * again until a wake comes promptly, then hold the CPU until released,
 * with the timer set for the next request meanwhile.
 */
static void serve(struct trigger_cpu *c, uint64_t late)
{
	uint32_t armed = TRIGGER_ARMED;

	c->rep.late = ctl_settle(late, c->wake_mean, &c->rnd, c->span_ns, &c->rep.retries);
	if (!atomic_compare_exchange_strong(&c->state, &armed, TRIGGER_ARRIVED))
		return; /* released before it arrived: the controller gave up */
	futex_wake(&c->state);
	if (c->park_at && c->timer_fd >= 0)
		set_timer(c, c->park_at);
	while (atomic_load_explicit(&c->state, memory_order_acquire) == TRIGGER_ARRIVED)
		xp_arch_cpu_relax();
}

/*
 * Parked: sleep until the instant of the expected request, then serve it
 * if it came.  The controller arms a parked trigger without a wake; its
 * timer fires early only to stop (triggers_stop).
 */
static void park(struct trigger_cpu *c)
{
	uint64_t at = c->parked_at, n, now;
	uint32_t v = TRIGGER_PARKED;

	if (c->timer_at == at || set_timer(c, at)) {
		if (atomic_load(&c->tg->stop))
			return;
		while (read(c->timer_fd, &n, sizeof(n)) < 0 && errno == EINTR)
			;
	}
	c->timer_at = 0;
	if (atomic_load(&c->tg->stop))
		return;
	now = xp_now_ns();
	if (now < at)
		now = at + ctl_pause_ns(at - now);
	if (atomic_compare_exchange_strong(&c->state, &v, TRIGGER_IDLE)) {
		atomic_fetch_add_explicit(&c->idle_wakes, 1, memory_order_relaxed);
		return;
	}
	if (v == TRIGGER_ARMED)
		serve(c, now - at);
}

static void *run(void *arg)
{
	struct trigger_cpu *c = arg;
	struct triggers *tg = c->tg;

	/* As the controller: at once on its CPU when it wakes (ctl.c). */
	if (!tg->rt_prio || !ctl_raise_priority(tg->rt_prio))
		ctl_short_slice();
	ctl_min_timer_slack();
	while (!atomic_load(&tg->stop)) {
		uint32_t v = atomic_load_explicit(&c->state, memory_order_acquire);

		if (v == TRIGGER_IDLE) {
			futex_wait(&c->state, TRIGGER_IDLE, 0);
			continue;
		}
		if (v == TRIGGER_PARKED) {
			park(c);
			continue;
		}
		if (v == TRIGGER_ARMED)
			serve(c, ctl_pause_ns(c->pause_ns));
		/* Released (arrived or not): ready for the next request, parked if told when. */
		v = TRIGGER_RELEASED;
		c->parked_at = c->park_at;
		atomic_compare_exchange_strong(&c->state, &v,
					       c->timer_fd >= 0 && c->parked_at > xp_now_ns()
						   ? TRIGGER_PARKED
						   : TRIGGER_IDLE);
	}
	return NULL;
}

static int start(struct triggers *tg, int cpu)
{
	struct trigger_cpu *c = &tg->cpu[cpu];
	int e;

	c->failed = true;
	if (!CPU_ISSET(cpu, &tg->allowed))
		return -1;
	c->tg = tg;
	c->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	c->rnd = 0x9e3779b97f4a7c15ull * (uint64_t)(cpu + 1) ^ xp_now_ns();
	e = ctl_start_pinned(&c->thread, cpu, run, c);
	if (e) {
		xp_debug(1, "trigger on CPU %d: %s", cpu, strerror(e));
		if (c->timer_fd >= 0)
			close(c->timer_fd);
		c->timer_fd = -1;
		return -1;
	}
	c->failed = false;
	c->started = true;
	return 0;
}

void triggers_init(struct triggers *tg, int cpu_end, unsigned int rt_prio,
		   const cpu_set_t *allowed)
{
	memset(tg, 0, sizeof(*tg));
	tg->allowed = *allowed;
	tg->nr = cpu_end > 0 ? cpu_end : 0;
	tg->cpu = xp_calloc((size_t)tg->nr + 1, sizeof(*tg->cpu));
	tg->rt_prio = rt_prio;
}

int trigger_arm(struct triggers *tg, int cpu, uint64_t pause_ns, uint64_t span_ns,
		uint64_t wake_mean, uint64_t park_at, uint64_t *at)
{
	struct trigger_cpu *c;
	uint32_t v;

	if (cpu < 0 || cpu >= tg->nr)
		return -1;
	c = &tg->cpu[cpu];
	if (c->failed || (!c->started && start(tg, cpu)))
		return -1;
	v = atomic_load_explicit(&c->state, memory_order_acquire);
	if (v != TRIGGER_PARKED && v != TRIGGER_IDLE)
		return -1;
	c->span_ns = span_ns;
	c->wake_mean = wake_mean;
	c->park_at = park_at;
	/* Parked: its timer is set already, for the instant it was told. */
	if (v == TRIGGER_PARKED) {
		*at = c->parked_at;
		if (atomic_compare_exchange_strong(&c->state, &v, TRIGGER_ARMED))
			return 1;
	}
	if (v != TRIGGER_IDLE)
		return -1;
	c->pause_ns = pause_ns;
	*at = xp_now_ns() + pause_ns;
	atomic_store_explicit(&c->state, TRIGGER_ARMED, memory_order_release);
	futex_wake(&c->state);
	return 0;
}

int trigger_wait_arrived(struct triggers *tg, int cpu, uint64_t spin_from, uint64_t spin_to,
			 uint64_t until)
{
	struct trigger_cpu *c = &tg->cpu[cpu];
	uint64_t now;

	while (atomic_load_explicit(&c->state, memory_order_acquire) == TRIGGER_ARMED) {
		now = xp_now_ns();
		if (now >= until)
			return -ETIMEDOUT;
		if (now >= spin_from && now < spin_to)
			xp_arch_cpu_relax();
		else
			futex_wait(&c->state, TRIGGER_ARMED,
				   (now < spin_from ? spin_from : until) - now);
	}
	return 0;
}

bool trigger_release(struct triggers *tg, int cpu, struct trigger_report *rep)
{
	struct trigger_cpu *c = &tg->cpu[cpu];
	uint32_t v = atomic_exchange_explicit(&c->state, TRIGGER_RELEASED, memory_order_acq_rel);

	if (v != TRIGGER_ARRIVED)
		return false;
	*rep = c->rep;
	return true;
}

uint64_t triggers_idle_wakes(struct triggers *tg)
{
	uint64_t n = 0;
	int i;

	for (i = 0; i < tg->nr; i++)
		n += atomic_load_explicit(&tg->cpu[i].idle_wakes, memory_order_relaxed);
	return n;
}

void triggers_stop(struct triggers *tg)
{
	int i;

	if (!tg->cpu)
		return;
	atomic_store(&tg->stop, 1);
	for (i = 0; i < tg->nr; i++) {
		if (!tg->cpu[i].started)
			continue;
		atomic_store(&tg->cpu[i].state, TRIGGER_RELEASED);
		futex_wake(&tg->cpu[i].state);
		if (tg->cpu[i].timer_fd >= 0) /* a parked one wakes at once */
			ctl_timerfd_at(tg->cpu[i].timer_fd, 1);
		pthread_join(tg->cpu[i].thread, NULL);
		if (tg->cpu[i].timer_fd >= 0)
			close(tg->cpu[i].timer_fd);
	}
	free(tg->cpu);
	memset(tg, 0, sizeof(*tg));
}
