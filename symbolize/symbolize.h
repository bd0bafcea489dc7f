/* SPDX-License-Identifier: MIT */
/*
 * Symbolization: turns a code address of a recorded mapping into frame
 * labels (function name, or module+offset when the function cannot be
 * known) with source file and line.  An address inside inlined code gives
 * a chain of frames, the inlined function innermost, up to the function
 * that holds the code (as eu-addr2line -i prints them).  Names are
 * demangled (demangle.h).  Files are opened after the run, once per (path,
 * build-id), and checked against the recorded build-id so a rebuilt binary
 * never yields wrong names; separate debuginfo is found by build-id
 * (<dir>/.build-id/xx/rest.debug) and .gnu_debuglink under the debug
 * directories, and when the file itself is gone or changed, the debuginfo
 * of the recorded build-id stands in for it, after the copy the recorder
 * kept in its build-id cache.  With -v, each module says where its symbols
 * came from.  Addresses outside file
 * mappings are looked up in the JIT symbols and [vdso] images the data
 * file carries.  Results are cached per (module, address).
 *
 * Which mapping an address falls in (exec generations, time) is the
 * caller's business (profile_find_mapping); this module only knows files.
 * It prints warnings (once per module: a changed or unreadable file) and
 * nothing else.  Not thread-safe.  The backend is libdwfl (dwfl.c); no
 * libdwfl type appears here.  debuginfod is never contacted unless the
 * user set DEBUGINFOD_URLS: libdw loads its client library in any case
 * (0.188 does, from a constructor), but the client asks no server without
 * URLs (t4004 checks with strace).
 */
#ifndef XPROF_SYMBOLIZE_SYMBOLIZE_H
#define XPROF_SYMBOLIZE_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "dataformat.h"

struct sym_opts {
	bool lines;	  /* also look up DWARF file:line (loads .debug_line) */
	bool no_inline;	  /* fold inlined frames into the function that holds the code */
	bool no_demangle; /* show symbol names as the symbol table has them */
	/*
	 * More directories to search for separate debuginfo, before
	 * /usr/lib/debug: by build-id (<dir>/.build-id/xx/rest.debug), then by
	 * .gnu_debuglink (<dir>/<the file's directory>/<link>).  Each string
	 * may be a colon-separated list; relative directories are taken from
	 * the current directory.
	 */
	const char *const *debug_dirs;
	size_t nr_debug_dirs;
	/*
	 * The recorder's build-id cache (record/capture.h), or NULL: where a
	 * file that is missing, or is not the recorded one, is found as
	 * <cache_dir>/buildid/<hex>/elf, and separate debuginfo that no
	 * debug directory holds as <cache_dir>/buildid/<hex>/debug.
	 */
	const char *cache_dir;
	/*
	 * The name of system call @nr of the recorded architecture, or NULL
	 * when unknown.  NULL: "[syscall] N" frames keep their number.
	 */
	const char *(*syscall_name)(unsigned int nr);
};

/* The mapping an address fell in, as recorded (the fields of a MAPPING record). */
struct sym_map {
	uint64_t start, end, offset;
	const char *path;
	const uint8_t *build_id;
	size_t build_id_len; /* 0: unknown, not checked */
	/* Without a build-id: the file's Go build ID or SHA-256 (lib/fileid.h); NULL: none */
	const struct xp_file_id *file_id;
};

enum sym_kind {
	SYM_FUNC,	   /* a symbol was found: name is the function */
	SYM_JIT,	   /* a JIT symbol of the data file: name is the function */
	SYM_MODULE_OFFSET, /* in a known mapping, no symbol: "module+0xOFF" (file offset) */
	SYM_ADDRESS,	   /* outside every file mapping and JIT symbol: "0xADDR" */
	SYM_MARKER,	   /* "[truncated]", "[syscall] N" */
};

/*
 * One symbolized address, or one level of a chain of inlined calls.
 * Owned by the symbolizer; valid until symbolizer_free.
 */
struct sym_frame {
	enum sym_kind kind;
	const char *name;   /* the label to print; never NULL */
	const char *module; /* basename of the mapped file; NULL for JIT, addresses, markers */
	/*
	 * SYM_FUNC: looked-up address minus the start of the symbol holding
	 * it (for an inlined frame too); SYM_JIT: minus the JIT symbol's start.
	 */
	uint64_t offset;
	const char *file;  /* source file, or NULL (no DWARF, or sym_opts.lines off) */
	unsigned int line; /* 0 when unknown; for an inlined frame's callers, the call's line */
	/*
	 * The frame whose code this frame's was inlined into (one level
	 * outward), or NULL for the function that holds the code.  Only
	 * SYM_FUNC frames have one, and never with sym_opts.no_inline.
	 */
	const struct sym_frame *caller;
};

struct symbolizer;

/* Never NULL.  @opts may be NULL (defaults: no lines). */
struct symbolizer *symbolizer_new(const struct sym_opts *opts);
void symbolizer_free(struct symbolizer *s);

/*
 * JIT symbols of process @pid, from the data file (JITSYM, JITLINE).  They
 * name addresses with no mapping or in anonymous memory.  Where ranges
 * overlap (a JIT reused memory), a lookup at time t takes the one named
 * last at or before t (@t: JITSYM's time; among equal times, the one added
 * last), or the earliest if none was named yet.  Add them all before
 * symbolizing.
 */
void symbolizer_add_jit(struct symbolizer *s, pid_t pid, uint64_t start, uint64_t size,
			const char *name, uint64_t t);
void symbolizer_add_jit_line(struct symbolizer *s, pid_t pid, uint64_t start, uint64_t end,
			     const char *file, unsigned int line);
/*
 * An image of the [vdso] the recorded processes had (VDSO record; copied).
 * A [vdso] mapping is symbolized from the image of its size.
 */
void symbolizer_add_vdso(struct symbolizer *s, const void *image, size_t len);

/*
 * Symbolize frame @pc (as recorded) of process @pid with frame flags
 * @frame_flags (enum xp_frame_flags) that fell in @map (NULL: no mapping).
 * @addr is where it is looked up, xp_lookup_pc(@pc, @frame_flags), which
 * the caller computed once to find @map.  Returns the innermost frame;
 * follow ->caller for the functions it was inlined into.  Never fails: an
 * address that cannot be named gets a module+offset or 0x label.  May
 * print a warning the first time a module is used.
 */
const struct sym_frame *symbolize_pc(struct symbolizer *s, pid_t pid, const struct sym_map *map,
				     uint64_t pc, uint64_t addr, unsigned int frame_flags);
/*
 * The same for a sample taken at @t (recording time): JIT code is named
 * after the symbol valid then.  symbolize_pc looks at the end of the
 * recording.
 */
const struct sym_frame *symbolize_pc_at(struct symbolizer *s, pid_t pid, const struct sym_map *map,
					uint64_t pc, uint64_t addr, unsigned int frame_flags,
					uint64_t t);

#endif
