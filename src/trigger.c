/* SPDX-License-Identifier: MIT */
/* Triggers (trigger.h). */
#include "trigger.h"
#include "arch.h"
#include "ctl.h"
#include "err.h"

#include <errno.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static void futex_wait(_Atomic uint32_t *word, uint32_t val, uint64_t timeout_ns)
{
	struct timespec ts = {.tv_sec = (time_t)(timeout_ns / 1000000000u),
			      .tv_nsec = (long)(timeout_ns % 1000000000u)};

	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, val, timeout_ns ? &ts : NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* One request: pause until a wake comes promptly, then hold the CPU until released. */
static void serve(struct trigger_cpu *c)
{
	uint32_t armed = TRIGGER_ARMED;

	c->rep.late = ctl_settle(ctl_pause_ns(c->pause_ns), c->wake_mean, &c->rnd, c->span_ns,
				 &c->rep.retries);
	if (!atomic_compare_exchange_strong(&c->state, &armed, TRIGGER_ARRIVED))
		return; /* released before it arrived: the controller gave up */
	futex_wake(&c->state);
	while (atomic_load_explicit(&c->state, memory_order_acquire) == TRIGGER_ARRIVED)
		xp_arch_cpu_relax();
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
		if (v == TRIGGER_ARMED)
			serve(c);
		/* Released (arrived or not): ready for the next request. */
		v = TRIGGER_RELEASED;
		atomic_compare_exchange_strong(&c->state, &v, TRIGGER_IDLE);
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
	c->rnd = 0x9e3779b97f4a7c15ull * (uint64_t)(cpu + 1) ^ ctl_now_ns();
	e = ctl_start_pinned(&c->thread, cpu, run, c);
	if (e) {
		xp_debug(1, "trigger on CPU %d: %s", cpu, strerror(e));
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
		uint64_t wake_mean)
{
	struct trigger_cpu *c;

	if (cpu < 0 || cpu >= tg->nr)
		return -1;
	c = &tg->cpu[cpu];
	if (c->failed || (!c->started && start(tg, cpu)))
		return -1;
	if (atomic_load_explicit(&c->state, memory_order_acquire) != TRIGGER_IDLE)
		return -1;
	c->pause_ns = pause_ns;
	c->span_ns = span_ns;
	c->wake_mean = wake_mean;
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
		now = ctl_now_ns();
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
		pthread_join(tg->cpu[i].thread, NULL);
	}
	free(tg->cpu);
	memset(tg, 0, sizeof(*tg));
}
