/* SPDX-License-Identifier: MIT */
/*
 * Which thread runs on each CPU, told by a target for free: with
 * XP_TARGET_ONCPU=FD in its environment, FD is a shared file of
 * ONCPU_SLOTS slots, one per CPU, where tests/targets/threads writes each
 * worker's thread id after each unit of work.  bench/ptrace_floor makes
 * the file and reads it, so that it needs no /proc read to know which
 * threads run (and clears each slot it has read).  A slot is a cache line
 * of its own: each CPU writes only its own.
 */
#ifndef XPROF_TESTS_TARGETS_ONCPU_H
#define XPROF_TESTS_TARGETS_ONCPU_H

#include <stdint.h>

#define ONCPU_ENV   "XP_TARGET_ONCPU"
#define ONCPU_SLOTS 256

struct oncpu_slot {
	volatile int32_t tid; /* 0: none written since the reader cleared it */
	char pad[60];
};

#endif
