/* SPDX-License-Identifier: MIT */
/*
 * Interpreter frames, read from outside the process: the seam between the
 * sampler and the readers of each runtime (Python first, python.c).  A
 * reader does three things, each at its own time:
 *
 *  - find the runtime in a process (interp_probe: its symbols, version and
 *    layout, checked once, when the process starts, execs or maps more);
 *  - in the stop, copy what holds a thread's frames into a compact raw
 *    form (interp_take: the chain of frames as pairs of code object and
 *    instruction addresses, with the C-stack address of each entry into
 *    the interpreter's loop), reading the target as little as it can;
 *  - after the resume, name what was copied (interp_decode: code objects
 *    read once, cached by address and checked to be still the same
 *    object, lines from their line tables), and say which native frame
 *    each run of interpreter frames ran in (interp_place, from the native
 *    walk's stack pointers: no symbol of the eval loop is needed).
 *
 * Code objects get ids, unique in the recording, and the facts a report
 * needs of them (interp_code): the sampler writes those to the data file;
 * nothing here touches it.  Memory is read through struct interp_mem, so
 * that the readers work on canned images too (tests, fuzzing).  A runtime
 * that is recognised but cannot be read (an unknown version, offsets that
 * do not hold, a free-threaded build) gives one warning and no reader:
 * the process is profiled with native frames only.  Functions print only
 * those warnings (and xp_debug); not thread-safe.
 */
#ifndef XPROF_INTERP_INTERP_H
#define XPROF_INTERP_INTERP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct addrspace;

/* How a reader reads the target: live (in the stop, or after) and the native stack copy. */
struct interp_mem {
	/* Read @len bytes at @addr into @buf; bytes read (short at an unreadable page), or -1. */
	long (*read)(void *ctx, uint64_t addr, void *buf, size_t len);
	void *ctx;
	/* The stack copy of this stop (may be empty): @stack_len bytes from @stack_addr. */
	uint64_t stack_addr;
	const uint8_t *stack;
	size_t stack_len;
};

/*
 * One entry of a thread's frames as copied in the stop, innermost first:
 * an interpreter frame (@code: its code object's address, @ip: the
 * instruction it was at), or with @code 0 the end of the run of frames
 * that one call of the interpreter's loop executed, @ip then the address
 * on the C stack of what that call keeps there (0: unknown).
 */
struct interp_raw_frame {
	uint64_t code, ip;
};

enum interp_raw_flags {
	INTERP_RAW_TRUNCATED = 1 << 0, /* more frames than were copied */
	INTERP_RAW_BROKEN = 1 << 1,    /* the chain held something that is no frame: cut there */
};

/* A thread's frames copied in the stop.  The caller owns @f (@cap entries). */
struct interp_raw {
	struct interp_raw_frame *f;
	uint32_t nr, cap;
	uint32_t flags; /* enum interp_raw_flags */
	uint32_t bytes; /* bytes read to take it (statistics) */
};

/*
 * A decoded entry: an interpreter frame (@code, an id of interp_code, and
 * its @line, 0: unknown) or, with @code 0, the end of a run of frames
 * that one call of the loop executed, whose C-stack address is @marker.
 */
struct interp_frame {
	uint32_t code;
	uint32_t line;
	uint64_t marker;
};

/* What a report needs of a code object.  Strings owned by the reader. */
struct interp_code {
	uint32_t id;	     /* >= 1, unique in the recording */
	uint32_t first_line; /* where its function starts, 0: unknown */
	const char *name;    /* qualified name */
	const char *file;    /* source file as the runtime names it */
};

/* The runtime kinds a data file names (ICODE's kind). */
enum interp_kind {
	INTERP_PYTHON = 1,
};

/* Counters of one reader, summed by the caller for its statistics. */
struct interp_stats {
	uint64_t takes;	 /* stops that found the thread's frames */
	uint64_t misses; /* stops of a thread with no frames (not yet, or not a runtime thread) */
	uint64_t broken; /* chains cut at something that was no frame */
	uint64_t codes;	 /* code objects named */
	uint64_t bad_codes;   /* addresses in a chain that held no code object */
	uint64_t revalidated; /* cached code objects checked again */
};

struct interp;

/*
 * The runtime mapped in @as, read through @mem, or NULL.  *@settled says
 * whether to stop asking for this image: true once a runtime was found
 * (usable or not: a warning naming @pid and @comm was printed then), false
 * when none is mapped yet (a launcher maps libpython later: ask again when
 * the maps change).  @next_id numbers the code objects of every reader of
 * a recording (shared, starts at 1).
 */
struct interp *interp_probe(const struct addrspace *as, const struct interp_mem *mem, pid_t pid,
			    const char *comm, uint32_t *next_id, bool *settled);
/*
 * The CPython reader on a runtime known to be at @runtime, of Py_Version
 * @version, without looking for it in files: for canned memory images
 * (tests, fuzzing).  NULL after the warning when it cannot be read.
 */
struct interp *interp_python_open(const struct interp_mem *mem, uint64_t runtime, uint32_t version,
				  pid_t pid, uint32_t *next_id);
void interp_free(struct interp *ip);
/* "python 3.11.2": the runtime and version found, for messages. */
const char *interp_describe(const struct interp *ip);
/* enum interp_kind of the reader. */
unsigned int interp_kind_of(const struct interp *ip);

/*
 * In the stop of thread @tid: copy its frames into @raw (emptied first).
 * 0 (raw->nr may be 0: no frames), or -errno when they could not be read.
 * Reads a few hundred bytes of the thread's state and one bulk copy of
 * the memory that holds its frames, more only for frames outside it.
 */
int interp_take(struct interp *ip, pid_t tid, const struct interp_mem *mem, struct interp_raw *raw);

/*
 * After the resume: name the @raw frames of a stop taken at @t (a time of
 * the caller's clock; a code object last read or checked before @t is
 * checked again against the target through @mem, and noted as checked at
 * @now, the time of the call).  Writes up to @max entries to
 * @out, innermost first, boundaries included, and returns how many;
 * frames whose code cannot be read are left out.
 */
unsigned int interp_decode(struct interp *ip, const struct interp_raw *raw,
			   const struct interp_mem *mem, uint64_t t, uint64_t now,
			   struct interp_frame *out, unsigned int max);

/* The code object with @id, or NULL. */
const struct interp_code *interp_code(const struct interp *ip, uint32_t id);

const struct interp_stats *interp_stats(const struct interp *ip);

/*
 * Where the runs of interpreter frames of @f (@nf decoded entries) go in a
 * native stack of @nn frames whose stack pointers are @sps (innermost
 * first; frame i's locals lie in [sps[i], sps[i + 1])): each run is put in
 * place of the native frame that holds its boundary's marker, the
 * interpreter's loop that ran it.  Sets @at[k] for every entry k of @f (a
 * native frame's index, or @nn: beyond the outermost walked frame) and
 * returns 0; -EINVAL when the markers contradict the native walk (a run
 * below the innermost frame, runs out of order), in which case no frame
 * should be shown.  A run without a marker goes with the next run's
 * frame.  Pure.
 */
int interp_place(const struct interp_frame *f, unsigned int nf, const uint64_t *sps,
		 unsigned int nn, uint32_t *at);

/*
 * The line of code unit @unit in a CPython 3.11+ location table (@table,
 * @len bytes, PEP 626 / Objects/locations.md) of a code object starting at
 * @first_line: > 0, or 0 when the table says none or is malformed.  Pure;
 * the table is untrusted.
 */
uint32_t interp_py_line(const uint8_t *table, size_t len, uint32_t first_line, uint32_t unit);

#endif
