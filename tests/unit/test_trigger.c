/* SPDX-License-Identifier: MIT */
/*
 * A trigger's requests on a real thread: it arrives no earlier than its
 * pause after the request, holds its CPU until released, takes no new
 * request before it is back to IDLE, and a request released before it
 * arrives ends without an arrival.  Asked to, it parks once released for
 * the next request's instant, and serves a request made before it there.
 * A CPU it may not run on has none.
 */
#include "clock.h"
#include "t.h"

#include "ctl.h"
#include "trigger.h"

#include <errno.h>
#include <sched.h>
#include <time.h>

static struct triggers tg;
static int cpu = -1;

/*
 * Start triggers for the first CPU this process may use, and move this
 * thread (the controller) to another one: a trigger holds its CPU.
 * T_SKIP with a single CPU.
 */
static int setup(void)
{
	cpu_set_t allowed, other;
	int i, second = -1;

	if (cpu >= 0)
		return T_OK;
	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		return T_FAIL;
	for (i = 0; i < CPU_SETSIZE && second < 0; i++)
		if (CPU_ISSET(i, &allowed)) {
			if (cpu < 0)
				cpu = i;
			else
				second = i;
		}
	if (second < 0) {
		cpu = -1;
		return T_SKIP;
	}
	CPU_ZERO(&other);
	CPU_SET(second, &other);
	if (sched_setaffinity(0, sizeof(other), &other))
		return T_FAIL;
	triggers_init(&tg, cpu + 1, 0, &allowed);
	return T_OK;
}

#define SETUP()                                                                                    \
	do {                                                                                       \
		int r_ = setup();                                                                  \
		if (r_ != T_OK)                                                                    \
			return r_;                                                                 \
	} while (0)

static uint32_t state(void)
{
	return atomic_load(&tg.cpu[cpu].state);
}

/* Wait until the trigger is back to IDLE: at most 1 s. */
static int wait_idle(void)
{
	uint64_t until = xp_now_ns() + XP_NS_PER_SEC;

	while (state() != TRIGGER_IDLE && xp_now_ns() <= until)
		ctl_pause_ns(100000);
	return state() == TRIGGER_IDLE ? 0 : -1;
}

static int test_arm_arrive_release(void)
{
	struct trigger_report rep;
	uint64_t armed, at;

	SETUP();
	armed = xp_now_ns();
	T_ASSERT(!trigger_arm(&tg, cpu, 2000000, 0, 0, 0, &at));
	/* One request at a time. */
	T_ASSERT(trigger_arm(&tg, cpu, 2000000, 0, 0, 0, &at) == -1);
	T_ASSERT(!trigger_wait_arrived(&tg, cpu, 0, 0, armed + 2000000000ull));
	T_ASSERT(xp_now_ns() >= armed + 2000000);
	T_EQ_U64(state(), TRIGGER_ARRIVED);
	/* It holds the CPU until released. */
	ctl_pause_ns(1000000);
	T_EQ_U64(state(), TRIGGER_ARRIVED);
	T_ASSERT(trigger_release(&tg, cpu, &rep));
	T_ASSERT(!wait_idle());
	return T_OK;
}

static int test_release_before_arrival(void)
{
	struct trigger_report rep;
	uint64_t at;

	SETUP();
	T_ASSERT(!wait_idle());
	T_ASSERT(!trigger_arm(&tg, cpu, 20000000, 0, 0, 0, &at));
	ctl_pause_ns(1000000);
	T_ASSERT(!trigger_release(&tg, cpu, &rep));
	/* Back to IDLE once its pause is over, without arriving. */
	T_ASSERT(!wait_idle());
	T_ASSERT(!trigger_arm(&tg, cpu, 1000000, 0, 0, 0, &at));
	T_ASSERT(!trigger_wait_arrived(&tg, cpu, 0, 0, xp_now_ns() + 2000000000ull));
	T_ASSERT(trigger_release(&tg, cpu, &rep));
	T_ASSERT(!wait_idle());
	return T_OK;
}

static int test_cpu_not_allowed(void)
{
	struct triggers none;
	cpu_set_t empty;
	uint64_t at;

	CPU_ZERO(&empty);
	triggers_init(&none, 2, 0, &empty);
	T_ASSERT(trigger_arm(&none, 0, 1000, 0, 0, 0, &at) == -1);
	T_ASSERT(trigger_arm(&none, 2, 1000, 0, 0, 0, &at) == -1); /* past the CPUs it knows */
	T_ASSERT(trigger_arm(&none, -1, 1000, 0, 0, 0, &at) == -1);
	triggers_stop(&none);
	return T_OK;
}

/*
 * Asked to park until the instant of the next request, it does once
 * released: a request before that instant needs no wake and is served
 * there; a parked trigger that no request reaches goes back to IDLE at its
 * instant.
 */
static int test_parked(void)
{
	struct trigger_report rep;
	uint64_t park, at;

	SETUP();
	T_ASSERT(!wait_idle());
	park = xp_now_ns() + 200000000;
	T_ASSERT(!trigger_arm(&tg, cpu, 1000000, 0, 0, park, &at));
	T_ASSERT(!trigger_wait_arrived(&tg, cpu, 0, 0, xp_now_ns() + 2000000000ull));
	T_ASSERT(trigger_release(&tg, cpu, &rep));
	while (state() != TRIGGER_PARKED && xp_now_ns() < park)
		ctl_pause_ns(100000);
	T_EQ_U64(state(), TRIGGER_PARKED);
	T_EQ_U64(trigger_arm(&tg, cpu, 1000000, 0, 0, 0, &at), 1);
	T_EQ_U64(at, park);
	T_ASSERT(!trigger_wait_arrived(&tg, cpu, 0, 0, park + 2000000000ull));
	T_ASSERT(xp_now_ns() >= park);
	T_EQ_U64(state(), TRIGGER_ARRIVED);
	/* Not asked to park this time: idle once released. */
	T_ASSERT(trigger_release(&tg, cpu, &rep));
	T_ASSERT(!wait_idle());
	/* Parked again, but no request comes: idle at its instant. */
	park = xp_now_ns() + 200000000;
	T_ASSERT(!trigger_arm(&tg, cpu, 1000000, 0, 0, park, &at));
	T_ASSERT(!trigger_wait_arrived(&tg, cpu, 0, 0, xp_now_ns() + 2000000000ull));
	T_ASSERT(trigger_release(&tg, cpu, &rep));
	while (state() == TRIGGER_RELEASED && xp_now_ns() < park)
		ctl_pause_ns(100000);
	T_EQ_U64(state(), TRIGGER_PARKED);
	T_ASSERT(!wait_idle());
	T_ASSERT(xp_now_ns() >= park);
	/* The trigger counts its idle wake just after it goes IDLE. */
	while (triggers_idle_wakes(&tg) == 0 && xp_now_ns() < park + XP_NS_PER_SEC)
		ctl_pause_ns(100000);
	T_EQ_U64(triggers_idle_wakes(&tg), 1);
	return T_OK;
}

/* Stopping joins every trigger at once, a parked one before its instant too. */
static int test_stop(void)
{
	struct trigger_report rep;
	uint64_t park, at;

	SETUP();
	T_ASSERT(!wait_idle());
	park = xp_now_ns() + 10000000000ull;
	T_ASSERT(!trigger_arm(&tg, cpu, 1000000, 0, 0, park, &at));
	T_ASSERT(!trigger_wait_arrived(&tg, cpu, 0, 0, xp_now_ns() + 2000000000ull));
	T_ASSERT(trigger_release(&tg, cpu, &rep));
	while (state() != TRIGGER_PARKED)
		ctl_pause_ns(100000);
	triggers_stop(&tg);
	T_ASSERT(xp_now_ns() < park);
	T_ASSERT(tg.cpu == NULL);
	cpu = -1;
	return T_OK;
}

/*
 * CPU numbers need not be dense (SMT off, a CPU offline, a cpuset): the
 * controller may use one CPU, its highest, and the triggers must reach it.
 */
static int test_place_last_cpu(void)
{
	cpu_set_t saved, last;
	struct ctl_place pl;
	int i, hi = -1;

	if (sched_getaffinity(0, sizeof(saved), &saved))
		return T_FAIL;
	for (i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &saved))
			hi = i;
	if (hi < 1)
		return T_SKIP;
	CPU_ZERO(&last);
	CPU_SET(hi, &last);
	if (sched_setaffinity(0, sizeof(last), &last))
		return T_FAIL;
	ctl_place_init(&pl);
	sched_setaffinity(0, sizeof(saved), &saved);
	T_EQ_U64(pl.nr_cpus, 1);
	T_EQ_U64(pl.cpu_end, hi + 1);
	return T_OK;
}

T_MAIN(T_CASE(test_arm_arrive_release), T_CASE(test_release_before_arrival),
       T_CASE(test_cpu_not_allowed), T_CASE(test_parked), T_CASE(test_stop),
       T_CASE(test_place_last_cpu))
