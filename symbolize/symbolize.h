/* SPDX-License-Identifier: MIT */
/*
 * Symbolization: turns a code address of a recorded mapping into a frame
 * label (function name, or module+offset when the function cannot be
 * known) with its source file and line.  Files are opened after the run,
 * once per (path, build-id), and checked against the recorded build-id so
 * a rebuilt binary never yields wrong names.  Results are cached per
 * (module, address).
 *
 * Which mapping an address falls in (exec generations, time) is the
 * caller's business (profile_find_mapping); this module only knows files.
 * It prints warnings (once per module: a changed or unreadable file) and
 * nothing else.  Not thread-safe.  The backend is libdwfl (dwfl.c); no
 * libdwfl type appears here.
 */
#ifndef XPROF_SYMBOLIZE_SYMBOLIZE_H
#define XPROF_SYMBOLIZE_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind.h"

/*
 * The pc-1 rule.  A frame that is not exact holds a return address: the
 * instruction after the call.  That may be the first byte of the next
 * function or line (a call to a noreturn function ends its caller), so the
 * call is looked up at pc - 1, inside the call instruction (eu-stack's
 * pc_adjusted; DWARF 5, section 6.4.4).  Use it for every lookup of a
 * frame: the mapping as well as the symbol.
 */
static inline uint64_t sym_lookup_pc(uint64_t pc, unsigned int frame_flags)
{
	return (frame_flags & XP_FRAME_EXACT) || pc == 0 ? pc : pc - 1;
}

struct sym_opts {
	bool lines; /* also look up DWARF file:line (loads .debug_line) */
	/*
	 * Where separate debuginfo is searched for (by build-id, then
	 * .gnu_debuglink), in libdwfl's syntax; NULL: its default,
	 * ":.debug:/usr/lib/debug".
	 */
	const char *debuginfo_path;
};

/* The mapping an address fell in, as recorded (the fields of a MAPPING record). */
struct sym_map {
	uint64_t start, end, offset;
	const char *path;
	const uint8_t *build_id;
	size_t build_id_len; /* 0: unknown, not checked */
};

enum sym_kind {
	SYM_FUNC,	   /* a symbol was found: name is the function */
	SYM_MODULE_OFFSET, /* in a known mapping, no symbol: "module+0xOFF" (file offset) */
	SYM_ADDRESS,	   /* outside every mapping: "0xADDR" */
	SYM_MARKER,	   /* "[truncated]", "[syscall] N" */
};

/* One symbolized address.  Owned by the symbolizer; valid until symbolizer_free. */
struct sym_frame {
	enum sym_kind kind;
	const char *name;   /* the label to print; never NULL */
	const char *module; /* basename of the mapped file; NULL for SYM_ADDRESS and markers */
	uint64_t offset;    /* SYM_FUNC: looked-up address minus the symbol's start */
	const char *file;   /* source file, or NULL (no DWARF, or sym_opts.lines off) */
	unsigned int line;  /* 0 when unknown */
};

struct symbolizer;

/* Never NULL.  @opts may be NULL (defaults: no lines). */
struct symbolizer *symbolizer_new(const struct sym_opts *opts);
void symbolizer_free(struct symbolizer *s);

/*
 * Symbolize frame @pc (as recorded) with frame flags @frame_flags (enum
 * xp_frame_flags; the pc-1 rule is applied here) that fell in @map (NULL:
 * no mapping).  Never fails: an address that cannot be named gets a
 * module+offset or 0x label.  May print a warning the first time a module
 * is used.
 */
const struct sym_frame *symbolize_pc(struct symbolizer *s, const struct sym_map *map, uint64_t pc,
				     unsigned int frame_flags);

#endif
