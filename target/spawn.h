/* SPDX-License-Identifier: MIT */
/*
 * Starting a command to be traced: a child forked and held until the
 * tracer is ready, so that it runs nothing before it is seized.  Tracing
 * it is tracer.c's.
 */
#ifndef XPROF_TARGET_SPAWN_H
#define XPROF_TARGET_SPAWN_H

#include <sys/types.h>

/*
 * Fork a child that waits for one byte on @go[0], then execs @argv (PATH
 * searched); if the exec fails it writes its errno to @err[1].  End of
 * file on @go instead (the parent gave up): it exits 127 without running
 * anything.  The child closes @go[1] and @err[0], empties its signal mask
 * and, with @ptracer, lets that process and its descendants trace it
 * under Yama's ptrace_scope 1.  The pipes are the caller's, O_CLOEXEC.
 * Returns the child's pid, or -1 with errno set.
 */
pid_t spawn_held(char **argv, const int go[2], const int err[2], pid_t ptracer);

#endif
