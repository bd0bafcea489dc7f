/* SPDX-License-Identifier: MIT */
/*
 * Display names for raw symbol names: the ELF symbol version is dropped
 * ("__libc_start_main@@GLIBC_2.34" -> "__libc_start_main") and mangled
 * names are demangled: C++ (Itanium ABI) and Rust, both the legacy scheme
 * (whose trailing "::h<16 hex digits>" hash is dropped, as perf and rustfilt
 * do) and v0 ("_R...").  The work is done by a maintained demangler, never
 * by hand: libiberty's cplus_demangle when it was found at build time, else
 * libstdc++'s __cxa_demangle (C++ only; Rust names are then left as they
 * are).  demangle.c is the only file that includes a demangler's header.
 * A build may have no demangler at all, but only by choice
 * (-DXPROF_DEMANGLER=none; configuring fails when none is found).
 * Thread-safe; nothing is printed but the one warning of demangle_name.
 */
#ifndef XPROF_SYMBOLIZE_DEMANGLE_H
#define XPROF_SYMBOLIZE_DEMANGLE_H

#include <stdbool.h>
#include <stddef.h>

/* Longest raw name handed to the demangler; longer names are shown as they are. */
#define DEMANGLE_MAX_INPUT 16384

/*
 * Length of @name without its ELF symbol version ("@VER" or "@@VER").
 * "@plt" is not a version and is kept.  Names starting with '@' are kept.
 */
size_t demangle_strip_version(const char *name);

/*
 * The name to show for raw symbol name @name: its version stripped and,
 * when @demangle is set and it is a mangled name the demangler accepts,
 * demangled.  Anything else is returned unchanged.  Always a new string,
 * owned by the caller (free()); never NULL.  The first time @demangle is set
 * and @name is mangled in a scheme this build has no demangler for (any,
 * without one; Rust with libstdc++'s), one warning says so, with a hint,
 * once per process.
 */
char *demangle_name(const char *name, bool demangle);

/*
 * Whether this build has a demangler for the scheme of mangled name @name
 * ("_Z...": C++ and legacy Rust, "_R...": Rust v0).  False for a name that
 * is not mangled.
 */
bool demangle_has_scheme(const char *name);

#endif
