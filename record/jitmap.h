/* SPDX-License-Identifier: MIT */
/*
 * JIT side-files, copied into the data file when a process exits or the
 * recording stops, because a JIT may delete them on exit:
 *
 *  - the perf map, /tmp/perf-PID.map: one "START SIZE name" line per
 *    function, START and SIZE in hexadecimal
 *    (tools/perf/Documentation/jit-interface.txt);
 *  - the jitdump, jit-PID.dump: a binary header, then records, of which
 *    JIT_CODE_LOAD (name and address of new code), JIT_CODE_MOVE and
 *    JIT_CODE_DEBUG_INFO (source lines of the next load at that address)
 *    matter here (tools/perf/Documentation/jitdump-specification.txt).  A
 *    JIT announces it by mmapping it, so, as perf does, it is found among
 *    the process's mappings.
 *
 * Only the entries that cover a pc the recorder sampled are kept (into a
 * sink: the emitter writes them as JITSYM, JITLINE records), in the order
 * the JIT wrote them, each symbol with the time the JIT named it, so that
 * a report names each sample after the entry valid when it was taken (a
 * JIT that frees code and puts another function at the same addresses
 * names the range twice).  A jitdump record carries its time
 * (CLOCK_MONOTONIC); a perf map line does not, so the recorder looks at
 * the file while recording (jitmap_poll, into the process's jit_watch)
 * and gives the lines it gained the time the file was last modified then.
 *
 * The parsers are pure functions on buffers, strict about what they
 * accept: no allocation, nothing printed (unit tests on canned data, fuzz
 * targets).  jitmap_collect reads the files and prints one warning per
 * file it ignores or finds damaged.
 */
#ifndef XPROF_RECORD_JITMAP_H
#define XPROF_RECORD_JITMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct addrspace;

#define PERFMAP_MAX_LINE    (64 * 1024) /* a longer perf-map line is skipped */
#define JITMAP_MAX_NAME	    4096	/* longer names are cut to this many bytes */
#define JITMAP_MAX_ENTRIES  (4u << 20)	/* entries read from one file, at most */
#define JITDUMP_MAX_RECORD  (64u << 20) /* a larger jitdump record ends the file */
#define JITDUMP_MAX_DEBUG   (16u << 20) /* a larger JIT_CODE_DEBUG_INFO is skipped */
#define JITDUMP_MAGIC	    0x4A695444u /* "JiTD" as a little-endian u32 */
#define JITDUMP_HEADER_LEN  40
#define JITDUMP_PREFIX_LEN  16 /* id, total_size, timestamp */
#define JITDUMP_LOAD_FIXED  56 /* prefix + pid, tid, vma, code_addr, code_size, code_index */
#define JITDUMP_MOVE_LEN    64 /* prefix + pid, tid, vma, old, new, code_size, code_index */
#define JITDUMP_DEBUG_FIXED 32 /* prefix + code_addr, nr_entry */
#define JITMAP_POLL_NS	    100000000ull /* jitmap_poll looks at most this often per process */

/* One function: [start, start + size), size > 0, no wrap past 2^64. */
struct jitmap_sym {
	uint64_t start, size;
	const char *name; /* points into the parsed buffer; not NUL-terminated */
	size_t name_len;  /* >= 1 */
};

/*
 * Parse one perf-map line of @len bytes, without its newline (a trailing
 * '\r' is dropped): "START SIZE NAME" with START and SIZE in hexadecimal
 * (1 to 16 digits, an optional 0x), separated by blanks, NAME the rest of
 * the line (it may hold blanks; leading blanks are not part of it).  0, or
 * -EINVAL for a malformed line, -ERANGE for a size of 0 or a range past
 * 2^64.  @out->name points into @line.
 */
int perfmap_parse_line(const char *line, size_t len, struct jitmap_sym *out);

enum jitdump_rec_id {
	JITDUMP_CODE_LOAD = 0,
	JITDUMP_CODE_MOVE = 1,
	JITDUMP_CODE_DEBUG_INFO = 2,
	JITDUMP_CODE_CLOSE = 3,
	JITDUMP_CODE_UNWINDING_INFO = 4,
};

struct jitdump_header {
	uint32_t version, total_size, elf_mach, pid;
	uint64_t timestamp, flags;
};

/*
 * Parse a jitdump header from the first @len bytes of a file.  0; -EINVAL
 * when it is not a jitdump or its size field is impossible;
 * -EPROTONOSUPPORT for a byte-swapped (foreign-endian) file or a version
 * other than 1.
 */
int jitdump_parse_header(const uint8_t *buf, size_t len, struct jitdump_header *h);

/* One record.  Fields are set for the record kinds named beside them. */
struct jitdump_record {
	uint32_t id, total_size; /* total_size counts the prefix too, >= 16 */
	uint64_t timestamp;
	uint32_t pid, tid;				/* LOAD, MOVE */
	uint64_t vma, code_addr, code_size, code_index; /* LOAD, MOVE (code_addr: the new one) */
	uint64_t old_code_addr;				/* MOVE */
	const char *name;	/* LOAD: in the buffer, not NUL-terminated */
	size_t name_len;	/* LOAD */
	uint64_t nr_entries;	/* DEBUG_INFO (also code_addr) */
	const uint8_t *entries; /* DEBUG_INFO: entries_len bytes */
	size_t entries_len;
};

/*
 * The id and total size of the record at @buf (@len >= 16 bytes, else
 * -EINVAL).  0, or -EINVAL when total_size is below 16.
 */
int jitdump_parse_prefix(const uint8_t *buf, size_t len, uint32_t *id, uint32_t *total_size);

/*
 * Parse the record at @buf, of which @len bytes are available: all of it
 * (up to total_size; more is ignored), except that a CODE_LOAD needs only
 * its name, not the code that follows.  Records of other ids get only the
 * prefix fields.  0, -EINVAL when the record is malformed (a name without
 * its NUL, a size that contradicts the fields), -ENODATA when @len is too
 * short for what must be parsed (for a CODE_LOAD whose name is cut short,
 * every other field is set and checked).
 */
int jitdump_parse_record(const uint8_t *buf, size_t len, struct jitdump_record *r);

struct jitdump_debug_entry {
	uint64_t addr;
	int32_t line, discrim;
	const char *file; /* in the buffer, not NUL-terminated; NULL: same as the previous entry */
	size_t file_len;
};

/*
 * Parse the debug entry at *@p (entries of a DEBUG_INFO record end at
 * @end) and advance *@p past it.  A file name of "\xff" means "the
 * previous entry's" (file NULL).  0, or -EINVAL.
 */
int jitdump_next_debug_entry(const uint8_t **p, const uint8_t *end, struct jitdump_debug_entry *e);

/* The perf map had grown to @end bytes by recording time @t (jitmap_poll). */
struct jit_chunk {
	uint64_t end, t;
};

/*
 * The growth of one process's perf map while recording, as jitmap_poll
 * saw it: only sizes and times; the lines are read once, by
 * jitmap_collect, and each gets the time of the chunk it lies in.  Zeroed
 * at first; part of the process's state.
 */
struct jit_watch {
	uint64_t polled_at; /* recording time of the last look; 0: never */
	uint64_t size;	    /* the file's size then */
	struct jit_chunk *chunks;
	size_t nr;
	unsigned long alloc;
};

/* What jitmap_collect keeps goes to these; each returns 0, or -1 to stop (a write error). */
struct jitmap_sink {
	void *ctx;
	int (*sym)(void *ctx, pid_t pid, uint64_t start, uint64_t size, const char *name,
		   uint64_t t);
	int (*line)(void *ctx, pid_t pid, uint64_t start, uint64_t end, const char *file,
		    uint32_t line);
};

/*
 * Give @sink the JIT symbols (and jitdump source lines) of process @pid
 * that cover one of the @nr_pcs sorted addresses @pcs (sampled pcs, the
 * pc-1 rule applied).  Reads /tmp/perf-N.map and each jit-N.dump found
 * among the mappings of @as (the process's last known address space: it
 * may have exited), N being the pid the process sees (@as->nspid, else
 * @pid), as the process sees them: under its root (@as->root, kept open,
 * so a process gone still has its files found while its mount namespace
 * lives on).  A file that is not a regular file, or is owned by neither
 * root nor the target's user (xprof's own, or the owner of /proc/@pid
 * while it exists: ptrace needs them to be the same unless xprof is
 * privileged), is ignored with one warning, as perf does.  Malformed lines
 * and records are skipped, with one warning per file.  Times are
 * recording times of a recording that started at CLOCK_MONOTONIC
 * @start_mono; perf-map lines get those @watch noted (it is emptied),
 * lines it never saw the time the file was last modified.  Returns the
 * number of symbols kept, or -1 when the sink failed.  May run while the
 * target runs.
 */
int jitmap_collect(const struct jitmap_sink *sink, struct jit_watch *watch, pid_t pid,
		   const struct addrspace *as, const uint64_t *pcs, size_t nr_pcs,
		   uint64_t start_mono);

/* The same with explicit files (tests): a perf map and @nr_dumps jitdumps, any may be NULL. */
int jitmap_collect_files(const struct jitmap_sink *sink, struct jit_watch *watch, pid_t pid,
			 const char *perfmap, const char *const *dumps, size_t nr_dumps,
			 const uint64_t *pcs, size_t nr_pcs, uint64_t start_mono);

/*
 * Note in @w whether the perf map of @pid grew, and when it was written
 * (its mtime), while recording: call it when a sample of @pid lands in JIT
 * code.  The file is the one jitmap_collect reads: /tmp/perf-N.map as the
 * process sees it, under @as->root, N its own pid (@as->nspid; @as may be
 * NULL: ours, @pid).  It looks at most every JITMAP_POLL_NS (one open and
 * fstat) and reads nothing; jitmap_collect reads the lines and dates each
 * by the first look that saw the file hold it.
 */
void jitmap_poll(struct jit_watch *w, pid_t pid, const struct addrspace *as, uint64_t start_mono);

/* Free what @w holds (zeroed). */
void jitmap_watch_release(struct jit_watch *w);

#endif
