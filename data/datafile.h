/* SPDX-License-Identifier: MIT */
/*
 * The xprof data file, version 1: the contract between record and report.
 * A fixed header (magic, version, endianness, e_machine) followed by an
 * append-only stream of length-prefixed records.  All integers are
 * little-endian on disk.  The format is documented in doc/data-format.md and
 * xprof-data(5); what a frame's flags mean, the deepest stack and the pc-1
 * rule are in lib/dataformat.h, included here, which other folders share.
 *
 * Writer: buffers records in memory and write(2)s them out on
 * df_writer_flush (the sampler flushes at least once a second), so a killed
 * recorder loses at most the unflushed tail.  Writer functions print their
 * own error (naming the file) and return -1; after the first write error
 * every call fails fast.  Not thread-safe.
 */
#ifndef XPROF_DATA_DATAFILE_H
#define XPROF_DATA_DATAFILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "dataformat.h"
#include "fileid.h"

#define DF_MAGIC	 "XPROFDAT"
#define DF_MAGIC_LEN	 8
#define DF_VERSION	 1
#define DF_ENDIAN_LITTLE 1
#define DF_MAX_RECORD	 (16u << 20) /* a record larger than this is corruption */
#define DF_HEADER_LEN	 24	     /* bytes of the version-1 file header */
#define DF_REC_HDR_LEN	 8	     /* u32 type, u32 payload length */
#define DF_BUILD_ID_MAX	 64	     /* longest build-id a mapping record may carry */
/*
 * A process forked without exec runs its parent's mappings as they were at
 * the fork, without MAPPING records of its own for them; a reader looks an
 * address up through at most this many forks (doc/data-format.md), and a
 * writer writes a child's mappings out rather than go deeper.
 */
#define DF_FORK_HOPS_MAX 8

/*
 * Record types, one X(NAME, name, number) each: the enum below makes
 * DF_REC_NAME of them, and the reader (data/profile.c) its table of
 * parse_name functions.  0 is never valid; types a reader does not know
 * are skipped.
 */
#define DF_REC_TYPES(X)                                                                            \
	X(PROCESS, process, 1)	/* a process appears (start, fork, attach) or execs */             \
	X(THREAD, thread, 2)	/* a thread appears or is renamed */                               \
	X(MAPPING, mapping, 3)	/* an executable mapping */                                        \
	X(STACK, stack, 4)	/* an interned stack */                                            \
	X(SAMPLE, sample, 5)	/* one sample */                                                   \
	X(EXIT, exit, 6)	/* a thread or process ended */                                    \
	X(STAT, stat, 7)	/* a named counter of the recorder (summary) */                    \
	X(JITSYM, jitsym, 8)	/* a JIT symbol copied from a perf map or jitdump */               \
	X(META, meta, 9)	/* a key/value string: command line, hostname, ... */              \
	X(SAMPLES, samples, 10) /* samples of one thread, varint-delta encoded */                  \
	X(JITLINE, jitline, 11) /* the source line of a range of JIT code (from a jitdump) */      \
	X(VDSO, vdso, 12)	/* an image of the kernel's [vdso], to name its functions */       \
	X(MARK, mark, 13)	/* a named phase starts, or sampling is enabled or disabled */     \
	X(ICODE, icode, 14)	/* an interpreter's code object: name, file, first line */         \
	X(ISTACK, istack, 15)	/* the interpreter frames of a stack */

#define DF_REC_ENUM_(NAME, name, number) DF_REC_##NAME = number,
enum df_rec_type { DF_REC_TYPES(DF_REC_ENUM_) };
#undef DF_REC_ENUM_

#define DF_VDSO_MAX	 (1u << 20) /* a larger [vdso] image is not one */
#define DF_ISTACK_ENTRY	 16	    /* bytes of an ISTACK entry: at, code, line */
#define DF_ICODE_STR_MAX 4096	    /* a longer ICODE name or file is corruption */

enum df_mark_kind {
	DF_MARK_PHASE = 0,   /* the phase named in the record starts ('mark NAME') */
	DF_MARK_ENABLE = 1,  /* sampling starts or resumes */
	DF_MARK_DISABLE = 2, /* sampling pauses */
};
#define DF_MARK_NAME_MAX 128 /* a longer phase name is corruption */

enum df_process_flags {
	DF_PROC_EXEC = 1 << 0,	   /* this record starts a new image (exec): forget old mappings */
	DF_PROC_ATTACHED = 1 << 1, /* was running before xprof attached */
	/* its mappings could not be read (/proc hid them): its frames are addresses */
	DF_PROC_NO_MAPS = 1 << 2,
};

struct df_writer;

/*
 * Start a data file on @fd, which the writer owns from now on (closed by
 * df_writer_close or df_writer_discard, or here on failure), and write its
 * header at once.  @name names the file in messages.  @start_ns is the
 * wall-clock start (CLOCK_REALTIME ns).  Returns NULL after printing an
 * error.  Records go to @fd as they are flushed, so a recorder killed
 * outright leaves what it flushed; should the process exit() with the
 * writer open (out of memory), the buffered records are written out
 * first.  Which file @fd is, and what becomes of an earlier one, is the
 * caller's (cmd/output.c for a recording).
 */
struct df_writer *df_writer_fdopen(int fd, const char *name, uint16_t e_machine, uint64_t start_ns);
/* The same on @path, created or truncated, mode 0600 (tools and tests). */
struct df_writer *df_writer_open(const char *path, uint16_t e_machine, uint64_t start_ns);

/* Times (@t) are ns since the start of recording, CLOCK_MONOTONIC based. */
int df_write_process(struct df_writer *w, uint64_t t, pid_t pid, pid_t ppid, uint32_t flags,
		     const char *comm, const char *exe);
/*
 * The same, with the pid the process sees for itself in its own pid
 * namespace (@nspid; 0: unknown).  df_write_process writes 0.
 */
int df_write_process_ns(struct df_writer *w, uint64_t t, pid_t pid, pid_t ppid, uint32_t flags,
			const char *comm, const char *exe, pid_t nspid);
int df_write_thread(struct df_writer *w, uint64_t t, pid_t pid, pid_t tid, const char *comm);
/* @end > @start; @build_id_len <= DF_BUILD_ID_MAX (0: none known).  @prot is XP_PROT_*. */
int df_write_mapping(struct df_writer *w, uint64_t t, pid_t pid, uint64_t start, uint64_t end,
		     uint64_t offset, uint32_t prot, const char *path, const uint8_t *build_id,
		     size_t build_id_len);
/*
 * The same with the identity of a file that has no GNU build-id
 * (@file_id: its Go build ID or its SHA-256, lib/fileid.h), NULL or of no
 * length for none.  An identity of kind XP_FILE_ID_GNU is written as none
 * (the build-id field holds it).
 */
int df_write_mapping_id(struct df_writer *w, uint64_t t, pid_t pid, uint64_t start, uint64_t end,
			uint64_t offset, uint32_t prot, const char *path, const uint8_t *build_id,
			size_t build_id_len, const struct xp_file_id *file_id);
/*
 * pcs[0] innermost; flags[] are enum xp_frame_flags; @nr may be 0.
 * Interpreter frames (XP_FRAME_INTERP, inside the native frame they ran
 * in) are written apart, as an ISTACK record after the STACK of the
 * native frames, and their codes must have been offered first
 * (df_write_icode).  Each
 * distinct stack is stored once: offering an id already written does
 * nothing and returns 0, so the recorder may call this before every sample
 * that uses the stack (it must be written before the first such sample).
 * The same id with other frames is an error (printed, -1).
 */
int df_write_stack(struct df_writer *w, uint64_t id, const uint64_t *pcs, const uint8_t *flags,
		   uint32_t nr);
int df_write_sample(struct df_writer *w, uint64_t t, pid_t pid, pid_t tid, uint64_t stack_id,
		    uint64_t weight);
/*
 * Exactly one SAMPLE record (df_write_sample batches the samples of a
 * thread into SAMPLES records; a tid 0 sample goes here).  For tests.
 */
int df_write_sample_record(struct df_writer *w, uint64_t t, pid_t pid, pid_t tid, uint64_t stack_id,
			   uint64_t weight);
/*
 * @status: wait status as from waitpid (exit code or signal).  @tid is the
 * thread that ended; 0 when the record is about the whole process.
 */
int df_write_exit(struct df_writer *w, uint64_t t, pid_t pid, pid_t tid, int status);
int df_write_stat(struct df_writer *w, const char *name, uint64_t value);
/*
 * A JIT symbol of @pid named at @t (recording time: when the recorder
 * first saw the JIT announce it, or the jitdump's timestamp; 0 when
 * unknown).  A report names a sample after the entry valid at its time.
 */
int df_write_jitsym(struct df_writer *w, pid_t pid, uint64_t start, uint64_t size, const char *name,
		    uint64_t t);
int df_write_meta(struct df_writer *w, const char *key, const char *value);
/* Code of @pid in [@start, @end) (@end > @start) comes from line @line of @file. */
int df_write_jitline(struct df_writer *w, pid_t pid, uint64_t start, uint64_t end, const char *file,
		     uint32_t line);
/*
 * An image of the [vdso] (@len bytes, 0 < @len <= DF_VDSO_MAX) as the
 * recorded processes had it mapped.  Each distinct image is written once:
 * offering one already written does nothing and returns 0.
 */
int df_write_vdso(struct df_writer *w, const void *image, size_t len);

/*
 * At @t, a mark of @kind (enum df_mark_kind); @name is the phase's for
 * DF_MARK_PHASE (1 to DF_MARK_NAME_MAX bytes), "" otherwise.
 */
int df_write_mark(struct df_writer *w, uint64_t t, uint32_t kind, const char *name);

/*
 * Interpreter code object @id (>= 1, unique in the file) of runtime @kind
 * (enum interp_kind: 1 Python): its qualified @name, source @file and the
 * line its function starts at (0: unknown).  Each id is written once:
 * offering one already written does nothing and returns 0, so the
 * recorder may offer the codes of every stack it writes.
 */
int df_write_icode(struct df_writer *w, uint64_t id, uint32_t kind, uint32_t first_line,
		   const char *name, const char *file);

/* write(2) what is buffered.  0 or -1 (printed). */
int df_writer_flush(struct df_writer *w);
/*
 * Flush, fsync-free close, free.  0 or -1 (printed); after a write error
 * the file is kept all the same (it holds every record written before the
 * error).  NULL is fine.
 */
int df_writer_close(struct df_writer *w);
/*
 * For a recording that never took place: close without writing what is
 * buffered, and free.  The file stays as it is (its header at least).
 * NULL is fine.
 */
void df_writer_discard(struct df_writer *w);
/* Bytes written to the file so far (header included; buffered records are not). */
uint64_t df_writer_bytes(const struct df_writer *w);

#endif
