/* SPDX-License-Identifier: MIT */
/* Plugin B: plugin A's code under other names (see plugin_a.c). */
#define PLUGIN(name) plugin_b_##name
#include "plugin_a.c"
