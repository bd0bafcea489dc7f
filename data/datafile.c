/* SPDX-License-Identifier: MIT */
/*
 * The data file writer: encodes records little-endian into an in-memory
 * buffer and write(2)s the buffer out only in df_writer_flush and
 * df_writer_close, so the sampling loop never blocks on the disk between
 * flushes.  It also remembers which stack ids it has written, so each
 * distinct stack is stored once however often the recorder offers it.
 * Payload layouts are in doc/data-format.md; the reader is profile.c.  This
 * file does not decide when to flush (the recorder does).
 */
#include "datafile.h"
#include "err.h"
#include "hash.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * Samples of one thread waiting to be written as one SAMPLES record:
 * varint deltas, so a steady profile costs ~7 bytes per sample instead of
 * 40 (a SAMPLE record).
 */
struct df_batch {
	pid_t pid, tid;	 /* tid 0: empty slot */
	uint64_t t_base; /* time of the first sample */
	uint64_t t_prev; /* time of the last sample */
	uint8_t *buf;
	size_t len;
	unsigned long alloc;
};

/*
 * Entries after which a batch becomes a record at once: small enough that a
 * file cut inside a record loses ~120 samples, large enough that the
 * 24-byte record framing stays ~2%.
 */
#define DF_BATCH_FLUSH 1024

struct df_writer {
	char *path; /* as the user named it, for messages */
	int fd;
	struct df_writer *next; /* in df_open_writers */
	bool failed;		/* a write failed: every later call returns -1 quietly */
	uint8_t *buf;		/* records not yet written */
	size_t len;
	unsigned long alloc;
	uint64_t bytes;		  /* written to the file so far */
	struct df_batch *batches; /* by tid, open addressing */
	unsigned long nbatches, used_batches;
	/*
	 * Stack ids already written (open addressing, 0 = empty slot, id 0
	 * tracked by zero_sum), with a checksum of the frames to catch an id
	 * reused for a different stack.
	 */
	struct df_seen {
		uint64_t id, sum;
	} * seen;
	size_t nr_seen, cap_seen;
	bool zero_seen;
	uint64_t zero_sum;
	/* Checksums of the [vdso] images written (a kernel has one or two). */
	uint64_t *vdso_sums;
	size_t nr_vdso;
	unsigned long alloc_vdso;
	/* ICODE ids already written (open addressing, 0 = empty slot). */
	uint64_t *codes;
	size_t nr_codes, cap_codes;
};

static void put_u8(uint8_t **p, uint8_t v)
{
	*(*p)++ = v;
}

/* Write the low @n bytes of @v, little-endian. */
static void put_le(uint8_t **p, uint64_t v, size_t n)
{
	for (; n; n--, v >>= 8)
		put_u8(p, (uint8_t)v);
}

static void put_u16(uint8_t **p, uint16_t v)
{
	put_le(p, v, 2);
}

static void put_u32(uint8_t **p, uint32_t v)
{
	put_le(p, v, 4);
}

static void put_u64(uint8_t **p, uint64_t v)
{
	put_le(p, v, 8);
}

static void put_bytes(uint8_t **p, const void *s, size_t len)
{
	if (len)
		memcpy(*p, s, len);
	*p += len;
}

static size_t str_len(const char *s)
{
	return s ? strlen(s) : 0;
}

/* Write all of @len bytes at @buf; 0 or -errno. */
static int write_all(int fd, const uint8_t *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The fields of a SAMPLES record before the batch's entries: pid, tid, t_base. */
#define DF_BATCH_PREFIX (4 + 4 + 8)

static void batch_prefix(uint8_t **p, const struct df_batch *b)
{
	put_u32(p, (uint32_t)b->pid);
	put_u32(p, (uint32_t)b->tid);
	put_u64(p, b->t_base);
}

static int write_failed(struct df_writer *w, int err)
{
	w->failed = true;
	w->len = 0;
	return xp_error("cannot write '%s': %s", w->path, strerror(-err));
}

/* Writers not yet closed or discarded, for datafile_at_exit. */
static struct df_writer *df_open_writers;

static void datafile_unlink_writer(struct df_writer *w)
{
	struct df_writer **pp;

	for (pp = &df_open_writers; *pp; pp = &(*pp)->next) {
		if (*pp == w) {
			*pp = w->next;
			return;
		}
	}
}

/*
 * exit() while recording (out of memory, xp_die): the buffer and the
 * batches hold whole entries only (each is complete before anything else
 * is allocated), so they are written out without allocating -- the
 * batches as SAMPLES records after the stacks they use -- and the file
 * is kept.
 */
static void datafile_at_exit(void)
{
	while (df_open_writers) {
		struct df_writer *w = df_open_writers;
		unsigned long i;

		df_open_writers = w->next;
		if (!w->failed && w->len)
			write_all(w->fd, w->buf, w->len);
		for (i = 0; i < w->nbatches && !w->failed; i++) {
			const struct df_batch *b = &w->batches[i];
			uint8_t hdr[DF_REC_HDR_LEN + DF_BATCH_PREFIX], *p = hdr;

			if (!b->tid || !b->len)
				continue;
			put_u32(&p, DF_REC_SAMPLES);
			put_u32(&p, (uint32_t)(DF_BATCH_PREFIX + b->len));
			batch_prefix(&p, b);
			if (write_all(w->fd, hdr, sizeof(hdr)) || write_all(w->fd, b->buf, b->len))
				break;
		}
		close(w->fd);
	}
}

static void datafile_free(struct df_writer *w)
{
	unsigned long i;

	for (i = 0; i < w->nbatches; i++)
		free(w->batches[i].buf);
	XP_FREE_ALL(w->batches, w->buf, w->seen, w->vdso_sums, w->codes, w->path, w);
}

struct df_writer *df_writer_open(const char *path, uint16_t e_machine, uint64_t start_ns)
{
	/* 0600 as perf does: the file names the programs and arguments that ran. */
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0) {
		xp_error("cannot create '%s': %s", path, strerror(errno));
		return NULL;
	}
	return df_writer_fdopen(fd, path, e_machine, start_ns);
}

struct df_writer *df_writer_fdopen(int fd, const char *name, uint16_t e_machine, uint64_t start_ns)
{
	static bool registered;
	uint8_t hdr[DF_HEADER_LEN], *p = hdr;
	struct df_writer *w;
	int err;

	put_bytes(&p, DF_MAGIC, DF_MAGIC_LEN);
	put_u16(&p, DF_VERSION);
	put_u8(&p, DF_ENDIAN_LITTLE);
	put_u8(&p, 0);
	put_u16(&p, e_machine);
	put_u16(&p, DF_HEADER_LEN);
	put_u64(&p, start_ns);
	/*
	 * The header goes out at once, before anything is allocated: a
	 * recorder killed or out of memory from now on leaves a valid, empty
	 * profile.
	 */
	err = write_all(fd, hdr, sizeof(hdr));
	if (err) {
		xp_error("cannot write '%s': %s", name, strerror(-err));
		close(fd);
		return NULL;
	}
	w = xp_calloc(1, sizeof(*w));
	w->path = xp_strdup(name);
	w->fd = fd;
	w->bytes = sizeof(hdr);
	if (!registered)
		registered = !atexit(datafile_at_exit);
	w->next = df_open_writers;
	df_open_writers = w;
	return w;
}

/*
 * Start a record of @type with a payload of @payload_len bytes at the end of
 * the buffer and return where the payload goes; NULL, printing nothing, if
 * the writer has failed already, or NULL after printing an error (record
 * too large).  The caller fills exactly @payload_len bytes.
 */
static uint8_t *rec_begin(struct df_writer *w, uint32_t type, uint64_t payload_len)
{
	uint8_t *p;

	if (w->failed)
		return NULL;
	if (payload_len > DF_MAX_RECORD) {
		xp_error("cannot write '%s': a record of type %u would be %llu bytes (limit %u)",
			 w->path, type, (unsigned long long)payload_len, DF_MAX_RECORD);
		return NULL;
	}
	xp_grow((void **)&w->buf, &w->alloc, w->len + DF_REC_HDR_LEN + payload_len, 1);
	p = w->buf + w->len;
	put_u32(&p, type);
	put_u32(&p, (uint32_t)payload_len);
	w->len += DF_REC_HDR_LEN + (size_t)payload_len;
	return p;
}

/*
 * Put the fields @fmt lists at *@p and advance it, or only count their
 * bytes when @p is NULL; returns the byte count.  Each field takes the next
 * argument (two for 'b'):
 *
 *   '1' u8 (an int)    '4' u32 (uint32_t)    '8' u64 (uint64_t)
 *   'p' pid (pid_t)    'i' u32 from an int
 *   's' str (const char *, NULL for an empty one)
 *   'b' raw bytes, no length of their own (const void *, then size_t)
 */
static uint64_t put_fields(uint8_t **p, const char *fmt, va_list ap)
{
	uint64_t len = 0;

	for (; *fmt; fmt++) {
		const void *bytes = NULL;
		size_t n, nbytes = 0; /* the integer's width, then the bytes after it */
		uint64_t v;

		switch (*fmt) {
		case '1':
			n = 1;
			v = (uint8_t)va_arg(ap, int);
			break;
		case '4':
			n = 4;
			v = va_arg(ap, uint32_t);
			break;
		case '8':
			n = 8;
			v = va_arg(ap, uint64_t);
			break;
		case 'p':
		case 'i':
			n = 4;
			v = (uint32_t)va_arg(ap, int);
			break;
		case 's':
			bytes = va_arg(ap, const char *);
			n = 4;
			v = nbytes = str_len(bytes);
			break;
		case 'b':
			bytes = va_arg(ap, const void *);
			nbytes = va_arg(ap, size_t);
			n = v = 0;
			break;
		default:
			XP_BUG("unknown field type");
		}
		len += n + nbytes;
		if (p) {
			put_le(p, v, n);
			put_bytes(p, bytes, nbytes);
		}
	}
	return len;
}

/*
 * Append a record of @type whose payload is the fields @fmt lists, from
 * the arguments that follow (see put_fields): 0, or -1 as rec_begin.
 */
static int rec_put(struct df_writer *w, uint32_t type, const char *fmt, ...)
{
	va_list ap;
	uint64_t len;
	uint8_t *p;

	va_start(ap, fmt);
	len = put_fields(NULL, fmt, ap);
	va_end(ap);
	p = rec_begin(w, type, len);
	if (!p)
		return -1;
	va_start(ap, fmt);
	put_fields(&p, fmt, ap);
	va_end(ap);
	return 0;
}

int df_write_process(struct df_writer *w, uint64_t t, pid_t pid, pid_t ppid, uint32_t flags,
		     const char *comm, const char *exe)
{
	return df_write_process_ns(w, t, pid, ppid, flags, comm, exe, 0);
}

int df_write_process_ns(struct df_writer *w, uint64_t t, pid_t pid, pid_t ppid, uint32_t flags,
			const char *comm, const char *exe, pid_t nspid)
{
	return rec_put(w, DF_REC_PROCESS, "8pp4ssp", t, pid, ppid, flags, comm, exe, nspid);
}

int df_write_thread(struct df_writer *w, uint64_t t, pid_t pid, pid_t tid, const char *comm)
{
	return rec_put(w, DF_REC_THREAD, "8pps", t, pid, tid, comm);
}

/* 0, or -1 after an error if the range [@start, @end) of @pid, @what, is empty. */
static int check_range(const struct df_writer *w, const char *what, pid_t pid, uint64_t start,
		       uint64_t end)
{
	if (end > start)
		return 0;
	return xp_error("cannot write '%s': %s %#llx-%#llx of pid %d is empty", w->path, what,
			(unsigned long long)start, (unsigned long long)end, (int)pid);
}

int df_write_mapping_id(struct df_writer *w, uint64_t t, pid_t pid, uint64_t start, uint64_t end,
			uint64_t offset, uint32_t prot, const char *path, const uint8_t *build_id,
			size_t build_id_len, const struct xp_file_id *file_id)
{
	struct xp_file_id none = {0};

	if (w->failed || check_range(w, "mapping", pid, start, end))
		return -1;
	if (build_id_len > DF_BUILD_ID_MAX || (build_id_len && !build_id))
		return xp_error("cannot write '%s': build-id of %zu bytes for '%s'", w->path,
				build_id_len, path ? path : "");
	if (!file_id || file_id->kind == XP_FILE_ID_GNU || file_id->len > XP_FILE_ID_MAX)
		file_id = &none;
	return rec_put(w, DF_REC_MAPPING, "8p4888s1b11b", t, pid, prot, start, end, offset, path,
		       (int)build_id_len, build_id, build_id_len, (int)file_id->kind,
		       (int)file_id->len, file_id->bytes, (size_t)file_id->len);
}

int df_write_mapping(struct df_writer *w, uint64_t t, pid_t pid, uint64_t start, uint64_t end,
		     uint64_t offset, uint32_t prot, const char *path, const uint8_t *build_id,
		     size_t build_id_len)
{
	return df_write_mapping_id(w, t, pid, start, end, offset, prot, path, build_id,
				   build_id_len, NULL);
}

/* A checksum of the frames: only to tell two stacks given the same id apart. */
static uint64_t stack_sum(const uint64_t *pcs, const uint8_t *flags, uint32_t nr)
{
	uint64_t h = xp_fnv1a(XP_FNV_INIT, &nr, sizeof(nr));

	if (nr)
		h = xp_fnv1a(xp_fnv1a(h, pcs, nr * sizeof(*pcs)), flags, nr);
	return h;
}

static size_t id_slot(uint64_t id, size_t cap)
{
	return (size_t)xp_mix64(id) & (cap - 1);
}

/* The entry for @id, or the empty slot where it belongs.  @id != 0. */
static struct df_seen *seen_find(struct df_writer *w, uint64_t id)
{
	size_t i = id_slot(id, w->cap_seen);

	while (w->seen[i].id && w->seen[i].id != id)
		i = (i + 1) & (w->cap_seen - 1);
	return &w->seen[i];
}

static void seen_grow(struct df_writer *w)
{
	struct df_seen *old = w->seen;
	size_t i, oldcap = w->cap_seen;

	w->cap_seen = oldcap ? oldcap * 2 : 1024;
	w->seen = xp_calloc(w->cap_seen, sizeof(*w->seen));
	for (i = 0; i < oldcap; i++)
		if (old[i].id)
			*seen_find(w, old[i].id) = old[i];
	free(old);
}

/*
 * The STACK record of the native frames of @pcs (@nr entries, @ninterp of
 * them interpreter frames) and, when there are any, the ISTACK record of
 * the interpreter frames, each with the index of the native frame it
 * goes in place of: that of the next native frame (the interpreter's
 * loop), or the number of native frames when none follows.
 */
static int write_stack_records(struct df_writer *w, uint64_t id, const uint64_t *pcs,
			       const uint8_t *flags, uint32_t nr, uint32_t ninterp)
{
	uint32_t nnative = nr - ninterp, i, k;
	uint8_t *p = rec_begin(w, DF_REC_STACK, 8 + 4 + (uint64_t)nnative * 9);

	if (!p)
		return -1;
	put_u64(&p, id);
	put_u32(&p, nnative);
	for (i = 0; i < nr; i++)
		if (!(flags[i] & XP_FRAME_INTERP))
			put_u64(&p, pcs[i]);
	for (i = 0; i < nr; i++)
		if (!(flags[i] & XP_FRAME_INTERP))
			put_u8(&p, flags[i]);
	if (!ninterp)
		return 0;
	p = rec_begin(w, DF_REC_ISTACK, 8 + 4 + (uint64_t)ninterp * DF_ISTACK_ENTRY);
	if (!p)
		return -1;
	put_u64(&p, id);
	put_u32(&p, ninterp);
	for (i = 0, k = 0; i < nr; i++) {
		if (!(flags[i] & XP_FRAME_INTERP)) {
			k++;
			continue;
		}
		put_u32(&p, k);
		put_u64(&p, pcs[i] >> 32);
		put_u32(&p, (uint32_t)pcs[i]);
	}
	return 0;
}

int df_write_stack(struct df_writer *w, uint64_t id, const uint64_t *pcs, const uint8_t *flags,
		   uint32_t nr)
{
	uint64_t sum = stack_sum(pcs, flags, nr), *known = NULL;
	struct df_seen *s = NULL;
	uint32_t i, ninterp = 0;

	if (w->failed)
		return -1;
	if (id == 0) {
		if (w->zero_seen)
			known = &w->zero_sum;
	} else {
		if ((w->nr_seen + 1) * 4 > w->cap_seen * 3)
			seen_grow(w);
		s = seen_find(w, id);
		if (s->id)
			known = &s->sum;
	}
	if (known) {
		if (*known != sum)
			return xp_error("cannot write '%s': stack id %llu reused for another stack",
					w->path, (unsigned long long)id);
		return 0;
	}
	for (i = 0; i < nr; i++)
		ninterp += (flags[i] & XP_FRAME_INTERP) != 0;
	if (write_stack_records(w, id, pcs, flags, nr, ninterp))
		return -1;
	if (s) {
		s->id = id;
		s->sum = sum;
		w->nr_seen++;
	} else {
		w->zero_seen = true;
		w->zero_sum = sum;
	}
	return 0;
}

int df_write_icode(struct df_writer *w, uint64_t id, uint32_t kind, uint32_t first_line,
		   const char *name, const char *file)
{
	size_t i, j, cap;
	uint64_t *old;

	if (w->failed)
		return -1;
	if (!id)
		return xp_error("cannot write '%s': code id 0", w->path);
	if ((w->nr_codes + 1) * 2 > w->cap_codes) {
		old = w->codes;
		cap = w->cap_codes;
		w->cap_codes = cap ? cap * 2 : 256;
		w->codes = xp_calloc(w->cap_codes, sizeof(*w->codes));
		for (i = 0; i < cap; i++) {
			if (!old[i])
				continue;
			for (j = id_slot(old[i], w->cap_codes); w->codes[j];
			     j = (j + 1) & (w->cap_codes - 1))
				;
			w->codes[j] = old[i];
		}
		free(old);
	}
	for (j = id_slot(id, w->cap_codes); w->codes[j]; j = (j + 1) & (w->cap_codes - 1))
		if (w->codes[j] == id)
			return 0;
	if (strlen(name) > DF_ICODE_STR_MAX || strlen(file) > DF_ICODE_STR_MAX)
		return xp_error("cannot write '%s': a code name or file over %d bytes", w->path,
				DF_ICODE_STR_MAX);
	if (rec_put(w, DF_REC_ICODE, "844ss", id, kind, first_line, name, file))
		return -1;
	w->codes[j] = id;
	w->nr_codes++;
	return 0;
}

static void put_varint(uint8_t **p, uint64_t v)
{
	while (v >= 0x80) {
		*(*p)++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*(*p)++ = (uint8_t)v;
}

/* Move the batch's entries into the record buffer as one SAMPLES record. */
static int batch_emit(struct df_writer *w, struct df_batch *b)
{
	uint8_t *p;

	if (!b->len)
		return 0;
	p = rec_begin(w, DF_REC_SAMPLES, DF_BATCH_PREFIX + (uint64_t)b->len);
	if (!p)
		return -1;
	batch_prefix(&p, b);
	memcpy(p, b->buf, b->len);
	b->len = 0;
	return 0;
}

static int batches_emit(struct df_writer *w)
{
	unsigned long i;

	for (i = 0; i < w->nbatches; i++)
		if (w->batches[i].tid && batch_emit(w, &w->batches[i]))
			return -1;
	return 0;
}

static struct df_batch *batch_get(struct df_writer *w, pid_t pid, pid_t tid)
{
	unsigned long i, n;
	struct df_batch *old;

	if ((w->used_batches + 1) * 2 > w->nbatches) {
		/* Emit everything, then rehash the (now empty) slots into a larger table. */
		if (batches_emit(w))
			return NULL;
		old = w->batches;
		n = w->nbatches;
		w->nbatches = n ? n * 2 : 64;
		w->batches = xp_calloc(w->nbatches, sizeof(*w->batches));
		w->used_batches = 0;
		for (i = 0; i < n; i++)
			free(old[i].buf);
		free(old);
	}
	for (i = ((uint32_t)tid * 2654435761u) & (w->nbatches - 1);;
	     i = (i + 1) & (w->nbatches - 1)) {
		struct df_batch *b = &w->batches[i];

		if (b->tid == tid && b->pid == pid)
			return b;
		if (!b->tid) {
			b->tid = tid;
			b->pid = pid;
			w->used_batches++;
			return b;
		}
	}
}

int df_write_sample(struct df_writer *w, uint64_t t, pid_t pid, pid_t tid, uint64_t stack_id,
		    uint64_t weight)
{
	struct df_batch *b;
	uint8_t *p;

	if (w->failed)
		return -1;
	if (tid > 0) {
		b = batch_get(w, pid, tid);
		if (!b)
			return -1;
		/* Deltas are unsigned: a sample older than the last starts a new record. */
		if (b->len && t < b->t_prev && batch_emit(w, b))
			return -1;
		if (!b->len)
			b->t_base = b->t_prev = t;
		xp_grow((void **)&b->buf, &b->alloc, b->len + 30, 1);
		p = b->buf + b->len;
		put_varint(&p, t - b->t_prev);
		put_varint(&p, stack_id);
		put_varint(&p, weight);
		b->len = (size_t)(p - b->buf);
		b->t_prev = t;
		if (b->len >= DF_BATCH_FLUSH)
			return batch_emit(w, b);
		return 0;
	}
	return df_write_sample_record(w, t, pid, tid, stack_id, weight);
}

int df_write_sample_record(struct df_writer *w, uint64_t t, pid_t pid, pid_t tid, uint64_t stack_id,
			   uint64_t weight)
{
	return rec_put(w, DF_REC_SAMPLE, "8pp88", t, pid, tid, stack_id, weight);
}

int df_write_exit(struct df_writer *w, uint64_t t, pid_t pid, pid_t tid, int status)
{
	return rec_put(w, DF_REC_EXIT, "8ppi", t, pid, tid, status);
}

int df_write_stat(struct df_writer *w, const char *name, uint64_t value)
{
	return rec_put(w, DF_REC_STAT, "s8", name, value);
}

int df_write_jitsym(struct df_writer *w, pid_t pid, uint64_t start, uint64_t size, const char *name,
		    uint64_t t)
{
	/* t was appended in a minor revision: older readers stop before it. */
	return rec_put(w, DF_REC_JITSYM, "p88s8", pid, start, size, name, t);
}

int df_write_meta(struct df_writer *w, const char *key, const char *value)
{
	return rec_put(w, DF_REC_META, "ss", key, value);
}

int df_write_mark(struct df_writer *w, uint64_t t, uint32_t kind, const char *name)
{
	size_t ln = str_len(name);

	if (w->failed)
		return -1;
	if (ln > DF_MARK_NAME_MAX)
		return xp_error("cannot write '%s': a phase name of %zu bytes", w->path, ln);
	return rec_put(w, DF_REC_MARK, "84s", t, kind, name);
}

int df_write_jitline(struct df_writer *w, pid_t pid, uint64_t start, uint64_t end, const char *file,
		     uint32_t line)
{
	if (w->failed || check_range(w, "JIT line range", pid, start, end))
		return -1;
	return rec_put(w, DF_REC_JITLINE, "p884s", pid, start, end, line, file);
}

int df_write_vdso(struct df_writer *w, const void *image, size_t len)
{
	uint64_t sum;
	size_t i;

	if (w->failed)
		return -1;
	if (!len || len > DF_VDSO_MAX)
		return xp_error("cannot write '%s': a [vdso] image of %zu bytes", w->path, len);
	sum = xp_mix64(xp_fnv1a(XP_FNV_INIT, image, len) ^ len);
	for (i = 0; i < w->nr_vdso; i++)
		if (w->vdso_sums[i] == sum)
			return 0;
	if (rec_put(w, DF_REC_VDSO, "4b", (uint32_t)len, image, len))
		return -1;
	xp_grow((void **)&w->vdso_sums, &w->alloc_vdso, w->nr_vdso + 1, sizeof(*w->vdso_sums));
	w->vdso_sums[w->nr_vdso++] = sum;
	return 0;
}

int df_writer_flush(struct df_writer *w)
{
	int err;

	if (w->failed)
		return -1;
	if (batches_emit(w))
		return -1;
	if (!w->len)
		return 0;
	err = write_all(w->fd, w->buf, w->len);
	if (err)
		return write_failed(w, err);
	w->bytes += w->len;
	w->len = 0;
	return 0;
}

int df_writer_close(struct df_writer *w)
{
	int ret;

	if (!w)
		return 0;
	datafile_unlink_writer(w);
	ret = df_writer_flush(w);
	/* close(2) can be where NFS reports a failed write. */
	if (close(w->fd) && !ret && !w->failed)
		ret = write_failed(w, -errno);
	datafile_free(w);
	return ret;
}

void df_writer_discard(struct df_writer *w)
{
	if (!w)
		return;
	datafile_unlink_writer(w);
	close(w->fd);
	datafile_free(w);
}

uint64_t df_writer_bytes(const struct df_writer *w)
{
	return w->bytes;
}
