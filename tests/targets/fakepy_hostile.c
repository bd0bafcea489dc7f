/* SPDX-License-Identifier: MIT */
/* fakepy (fakepy.c) with debug offsets that fake the cookie and hold nonsense. */
#define FAKEPY_HOSTILE 1
#include "fakepy.c"
