/* SPDX-License-Identifier: MIT */
/*
 * JIT side-files (see jitmap.h): the strict parsers, then the collector.
 * The collector streams each file (a perf map line by line through a
 * fixed buffer, a jitdump record by record with pread, skipping code
 * bytes), keeps every entry in file order, then decides which entry names
 * each sampled pc, latest first, and writes only those.  Everything read
 * is capped: line and record lengths, names, entries per file, the debug
 * information kept in memory.
 */
#include "jitmap.h"
#include "addrspace.h"
#include "clock.h"
#include "err.h"
#include "targetfs.h"
#include "hash.h"
#include "sorted.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- perf map ------------------------------------------------------------ */

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A hex number of 1 to 16 digits (after an optional 0x) at *@i, then a blank. */
static int parse_hex_field(const char *s, size_t len, size_t *i, uint64_t *out)
{
	size_t digits = 0;
	uint64_t v = 0;
	int d;

	if (*i + 2 <= len && s[*i] == '0' && (s[*i + 1] == 'x' || s[*i + 1] == 'X'))
		*i += 2;
	while (*i < len && (d = hex_digit(s[*i])) >= 0) {
		if (++digits > 16)
			return -EINVAL;
		v = v << 4 | (uint64_t)d;
		(*i)++;
	}
	if (!digits || *i >= len || !is_blank(s[*i]))
		return -EINVAL;
	while (*i < len && is_blank(s[*i]))
		(*i)++;
	*out = v;
	return 0;
}

int perfmap_parse_line(const char *line, size_t len, struct jitmap_sym *out)
{
	size_t i = 0, j;

	if (len && line[len - 1] == '\r')
		len--;
	if (parse_hex_field(line, len, &i, &out->start) ||
	    parse_hex_field(line, len, &i, &out->size))
		return -EINVAL;
	for (j = i; j < len; j++)
		if (!line[j] || line[j] == '\n')
			return -EINVAL; /* a NUL or a stray newline is not part of a name */
	while (len > i && is_blank(line[len - 1]))
		len--;
	if (i >= len)
		return -EINVAL;
	out->name = line + i;
	out->name_len = len - i;
	if (!out->size || out->start + out->size < out->start)
		return -ERANGE;
	return 0;
}

/* ---- jitdump ------------------------------------------------------------- */

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

int jitdump_parse_header(const uint8_t *buf, size_t len, struct jitdump_header *h)
{
	uint32_t magic;

	if (len < JITDUMP_HEADER_LEN)
		return -EINVAL;
	magic = le32(buf);
	/* Written in the JIT's byte order: a swapped magic is a foreign-endian file. */
	if (magic == __builtin_bswap32(JITDUMP_MAGIC))
		return -EPROTONOSUPPORT;
	if (magic != JITDUMP_MAGIC)
		return -EINVAL;
	h->version = le32(buf + 4);
	h->total_size = le32(buf + 8);
	h->elf_mach = le32(buf + 12);
	h->pid = le32(buf + 20);
	h->timestamp = le64(buf + 24);
	h->flags = le64(buf + 32);
	if (h->version != 1)
		return -EPROTONOSUPPORT;
	if (h->total_size < JITDUMP_HEADER_LEN || h->total_size > JITDUMP_MAX_RECORD)
		return -EINVAL;
	return 0;
}

int jitdump_parse_prefix(const uint8_t *buf, size_t len, uint32_t *id, uint32_t *total_size)
{
	if (len < JITDUMP_PREFIX_LEN)
		return -EINVAL;
	*id = le32(buf);
	*total_size = le32(buf + 4);
	return *total_size < JITDUMP_PREFIX_LEN ? -EINVAL : 0;
}

/*
 * The fields JIT_CODE_LOAD and JIT_CODE_MOVE share: pid, tid and vma after
 * the prefix, then the code's address, size and index from offset @code
 * (a move has the old address before them).  The caller has checked that
 * @buf holds them.  0, or -EINVAL for empty code or code that wraps.
 */
static int parse_code_fields(const uint8_t *buf, size_t code, struct jitdump_record *r)
{
	r->pid = le32(buf + 16);
	r->tid = le32(buf + 20);
	r->vma = le64(buf + 24);
	r->code_addr = le64(buf + code);
	r->code_size = le64(buf + code + 8);
	r->code_index = le64(buf + code + 16);
	return !r->code_size || r->code_addr + r->code_size < r->code_addr ? -EINVAL : 0;
}

int jitdump_parse_record(const uint8_t *buf, size_t len, struct jitdump_record *r)
{
	const uint8_t *nul;
	int ret;

	memset(r, 0, sizeof(*r));
	ret = jitdump_parse_prefix(buf, len, &r->id, &r->total_size);
	if (ret)
		return ret == -EINVAL && len < JITDUMP_PREFIX_LEN ? -ENODATA : ret;
	r->timestamp = le64(buf + 8);
	if (len > r->total_size)
		len = r->total_size;
	switch (r->id) {
	case JITDUMP_CODE_LOAD:
		if (r->total_size < JITDUMP_LOAD_FIXED + 1)
			return -EINVAL;
		if (len < JITDUMP_LOAD_FIXED)
			return -ENODATA;
		if (parse_code_fields(buf, 32, r) ||
		    r->code_size > r->total_size - JITDUMP_LOAD_FIXED - 1)
			return -EINVAL;
		nul = memchr(buf + JITDUMP_LOAD_FIXED, 0, len - JITDUMP_LOAD_FIXED);
		if (!nul)
			return len == r->total_size ? -EINVAL : -ENODATA;
		r->name = (const char *)buf + JITDUMP_LOAD_FIXED;
		r->name_len = (size_t)(nul - (buf + JITDUMP_LOAD_FIXED));
		/* The code follows the name: the record must have room for it. */
		if (!r->name_len ||
		    r->code_size > r->total_size - JITDUMP_LOAD_FIXED - r->name_len - 1)
			return -EINVAL;
		return 0;
	case JITDUMP_CODE_MOVE:
		if (r->total_size < JITDUMP_MOVE_LEN)
			return -EINVAL;
		if (len < JITDUMP_MOVE_LEN)
			return -ENODATA;
		r->old_code_addr = le64(buf + 32);
		return parse_code_fields(buf, 40, r);
	case JITDUMP_CODE_DEBUG_INFO:
		if (r->total_size < JITDUMP_DEBUG_FIXED)
			return -EINVAL;
		if (len < r->total_size)
			return -ENODATA;
		r->code_addr = le64(buf + 16);
		r->nr_entries = le64(buf + 24);
		r->entries = buf + JITDUMP_DEBUG_FIXED;
		r->entries_len = r->total_size - JITDUMP_DEBUG_FIXED;
		/* Each entry takes at least 17 bytes (addr, line, discrim, NUL). */
		if (r->nr_entries > r->entries_len / 17)
			return -EINVAL;
		return 0;
	default:
		return 0;
	}
}

int jitdump_next_debug_entry(const uint8_t **p, const uint8_t *end, struct jitdump_debug_entry *e)
{
	const uint8_t *s = *p, *nul;

	if (end - s < 17)
		return -EINVAL;
	e->addr = le64(s);
	e->line = (int32_t)le32(s + 8);
	e->discrim = (int32_t)le32(s + 12);
	nul = memchr(s + 16, 0, (size_t)(end - (s + 16)));
	if (!nul)
		return -EINVAL;
	e->file = (const char *)s + 16;
	e->file_len = (size_t)(nul - (s + 16));
	if (e->file_len == 1 && (uint8_t)e->file[0] == 0xff) {
		e->file = NULL;
		e->file_len = 0;
	}
	*p = nul + 1;
	return 0;
}

/* ---- the collector: entries in file order -------------------------------- */

struct jit_entry {
	uint64_t start, end;
	uint64_t code_index;
	char *name;
	size_t dbg; /* index + 1 into collect.dbgs, 0: no line information */
	uint64_t t; /* when the JIT named it, in recording time; 0: unknown */
};

/* The raw entries of one JIT_CODE_DEBUG_INFO record. */
struct jit_dbg {
	uint64_t code_addr, nr;
	uint8_t *raw;
	size_t len;
};

struct collect {
	pid_t pid;
	uid_t target_uid;
	const struct targetfs_root *root; /* the process's root (targetfs.h); NULL: ours */
	uint64_t start_mono; /* CLOCK_MONOTONIC at the start of recording: jitdump times */
	const struct jit_chunk *chunks; /* of the perf map, by end */
	size_t nr_chunks;
	uint64_t tail_t; /* the time of perf-map lines past the last chunk */
	uint64_t t;	 /* the time of the entry being added */
	struct jit_entry *e;
	size_t nr;
	unsigned long alloc;
	struct jit_dbg *dbgs;
	size_t nr_dbgs;
	unsigned long alloc_dbgs;
	size_t dbg_bytes;
	bool full; /* JITMAP_MAX_ENTRIES reached */
};

#define MAX_DEBUG_BYTES	  (64u << 20) /* line information kept, over all files */
#define MAX_PENDING_DEBUG 64	      /* debug records waiting for their code load */

static char *name_dup(const char *name, size_t len)
{
	char *s;

	if (len > JITMAP_MAX_NAME)
		len = JITMAP_MAX_NAME;
	s = xp_malloc(len + 1);
	memcpy(s, name, len);
	s[len] = 0;
	return s;
}

static bool add_entry(struct collect *c, uint64_t start, uint64_t size, uint64_t index,
		      const char *name, size_t name_len, size_t dbg)
{
	if (c->nr >= JITMAP_MAX_ENTRIES) {
		c->full = true;
		return false;
	}
	xp_grow((void **)&c->e, &c->alloc, c->nr + 1, sizeof(*c->e));
	c->e[c->nr++] =
	    (struct jit_entry){start, start + size, index, name_dup(name, name_len), dbg, c->t};
	return true;
}

/* The time of the perf-map line that starts at byte @off. */
static uint64_t perfmap_time(const struct collect *c, uint64_t off)
{
	size_t lo = XP_PARTITION_POINT(0, c->nr_chunks, i, c->chunks[i].end <= off);

	return lo < c->nr_chunks ? c->chunks[lo].t : c->tail_t;
}

/*
 * Open @path for reading if it may be used: a regular file owned by root
 * or the target's user.  -1 when it does not exist (quietly) or may not be
 * used (with one warning).
 */
static int open_side_file(const struct collect *c, const char *path)
{
	struct stat st;
	int fd;

	/* As the process sees it; O_NONBLOCK: a FIFO planted under the name must not block us. */
	fd = targetfs_open(c->root, path, O_RDONLY | O_NOFOLLOW);
	if (fd < 0) {
		errno = -fd;
		if (errno == ELOOP)
			xp_warn("ignoring '%s': it is a symbolic link", path);
		else if (errno != ENOENT)
			xp_warn("cannot read '%s': %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st)) {
		xp_warn("cannot read '%s': %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		xp_warn("ignoring '%s': not a regular file", path);
		close(fd);
		return -1;
	}
	/* perf's rule (tools/perf/util/symbol.c): anyone could write /tmp/perf-PID.map. */
	if (st.st_uid != 0 && st.st_uid != geteuid() && st.st_uid != c->target_uid) {
		xp_warn("ignoring '%s': owned by uid %u, neither root nor the profiled user", path,
			(unsigned int)st.st_uid);
		close(fd);
		return -1;
	}
	return fd;
}

static void read_perfmap(struct collect *c, const char *path)
{
	char *buf;
	size_t have = 0, lineno = 0, bad = 0, first_bad = 0, i, start;
	uint64_t base = 0;     /* the file offset of buf[0] */
	bool skipping = false; /* inside a line longer than PERFMAP_MAX_LINE */
	struct jitmap_sym sym;
	ssize_t n;
	int fd = open_side_file(c, path);

	if (fd < 0)
		return;
	buf = xp_malloc(PERFMAP_MAX_LINE + 1);
	while (!c->full) {
		n = read(fd, buf + have, PERFMAP_MAX_LINE + 1 - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			xp_warn("cannot read '%s': %s", path, strerror(errno));
			break;
		}
		if (n == 0) {
			/* A last line without its newline still counts. */
			if (have && !skipping) {
				lineno++;
				c->t = perfmap_time(c, base);
				if (!perfmap_parse_line(buf, have, &sym))
					add_entry(c, sym.start, sym.size, 0, sym.name, sym.name_len,
						  0);
				else if (!bad++)
					first_bad = lineno;
			}
			break;
		}
		have += (size_t)n;
		for (start = 0, i = 0; i < have; i++) {
			if (buf[i] != '\n')
				continue;
			lineno++;
			c->t = perfmap_time(c, base + start);
			if (skipping)
				skipping = false; /* the end of the long line: drop it */
			else if (i > start && !perfmap_parse_line(buf + start, i - start, &sym))
				add_entry(c, sym.start, sym.size, 0, sym.name, sym.name_len, 0);
			else if (i > start && !bad++)
				first_bad = lineno;
			start = i + 1;
		}
		memmove(buf, buf + start, have - start);
		have -= start;
		base += start;
		if (have > PERFMAP_MAX_LINE) {
			/* No newline in a full buffer: a line longer than any name needs. */
			if (!skipping && !bad++)
				first_bad = lineno + 1;
			skipping = true;
			base += have;
			have = 0;
		}
	}
	if (bad)
		xp_warn("'%s': ignored %zu malformed line%s (the first is line %zu)", path, bad,
			bad == 1 ? "" : "s", first_bad);
	if (c->full)
		xp_warn("'%s': more than %u entries; ignoring the rest", path, JITMAP_MAX_ENTRIES);
	close(fd);
	free(buf);
}

/* Read exactly @len bytes at @off; false at EOF or on error. */
static bool read_at(int fd, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, (uint8_t *)buf + done, len - done, (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		done += (size_t)n;
	}
	return true;
}

/* Keep the line information of a DEBUG_INFO record for the code load that follows it. */
static void keep_debug(struct collect *c, const struct jitdump_record *r, size_t *pending,
		       size_t *nr_pending)
{
	struct jit_dbg *d;

	if (c->dbg_bytes + r->entries_len > MAX_DEBUG_BYTES)
		return;
	xp_grow((void **)&c->dbgs, &c->alloc_dbgs, c->nr_dbgs + 1, sizeof(*c->dbgs));
	d = &c->dbgs[c->nr_dbgs++];
	d->code_addr = r->code_addr;
	d->nr = r->nr_entries;
	d->len = r->entries_len;
	d->raw = xp_malloc(d->len ? d->len : 1);
	memcpy(d->raw, r->entries, d->len);
	c->dbg_bytes += d->len;
	if (*nr_pending == MAX_PENDING_DEBUG) {
		memmove(pending, pending + 1, (MAX_PENDING_DEBUG - 1) * sizeof(*pending));
		(*nr_pending)--;
	}
	pending[(*nr_pending)++] = c->nr_dbgs;
}

/* The pending debug record for code at @addr (taken out of the list), or 0. */
static size_t take_debug(struct collect *c, uint64_t addr, size_t *pending, size_t *nr_pending)
{
	size_t i, dbg;

	for (i = *nr_pending; i-- > 0;) {
		if (c->dbgs[pending[i] - 1].code_addr != addr)
			continue;
		dbg = pending[i];
		memmove(pending + i, pending + i + 1, (*nr_pending - i - 1) * sizeof(*pending));
		(*nr_pending)--;
		return dbg;
	}
	return 0;
}

/* The latest entry loaded with @index (for JIT_CODE_MOVE), or NULL. */
static const struct jit_entry *entry_by_index(const struct collect *c, size_t from, uint64_t index)
{
	size_t i;

	for (i = c->nr; i-- > from;)
		if (c->e[i].code_index == index)
			return &c->e[i];
	return NULL;
}

/*
 * How much of a record with @id and @total size read_jitdump reads: a
 * load's fields and name (not its code, and a name cut at JITMAP_MAX_NAME),
 * a whole move, a whole debug-info record up to JITDUMP_MAX_DEBUG, never
 * more than @total.  0: a record not needed, skipped whole.
 */
static size_t jitdump_want(uint32_t id, uint32_t total)
{
	size_t want;

	if (id == JITDUMP_CODE_LOAD)
		want = JITDUMP_LOAD_FIXED + JITMAP_MAX_NAME + 1;
	else if (id == JITDUMP_CODE_MOVE)
		want = JITDUMP_MOVE_LEN;
	else if (id == JITDUMP_CODE_DEBUG_INFO && total <= JITDUMP_MAX_DEBUG)
		want = total;
	else
		return 0;
	return want < total ? want : total;
}

/*
 * Take the well-formed record @r into @c: a load adds an entry (with the
 * debug info pending for its address), a move adds the entry it moves
 * (loaded since @first, the start of this file's entries) at its new
 * address, a debug-info record waits in @pending for its load.
 */
static void apply_record(struct collect *c, const struct jitdump_record *r, size_t first,
			 size_t *pending, size_t *nr_pending)
{
	const struct jit_entry *old;
	size_t dbg;

	switch (r->id) {
	case JITDUMP_CODE_LOAD:
		dbg = take_debug(c, r->code_addr, pending, nr_pending);
		add_entry(c, r->code_addr, r->code_size, r->code_index, r->name, r->name_len, dbg);
		break;
	case JITDUMP_CODE_MOVE:
		old = entry_by_index(c, first, r->code_index);
		if (old)
			add_entry(c, r->code_addr, r->code_size, r->code_index, old->name,
				  strlen(old->name), 0);
		break;
	case JITDUMP_CODE_DEBUG_INFO:
		keep_debug(c, r, pending, nr_pending);
		break;
	default:
		break;
	}
}

static void read_jitdump(struct collect *c, const char *path)
{
	uint8_t hdr[JITDUMP_HEADER_LEN], *rec = xp_malloc(JITDUMP_LOAD_FIXED + JITMAP_MAX_NAME + 1);
	size_t pending[MAX_PENDING_DEBUG], nr_pending = 0, first = c->nr, bad = 0;
	struct jitdump_header h;
	struct jitdump_record r;
	uint64_t off;
	uint32_t id, total;
	const char *why = NULL;
	int fd = open_side_file(c, path), e;

	if (fd < 0) {
		free(rec);
		return;
	}
	if (!read_at(fd, hdr, sizeof(hdr), 0) || (e = jitdump_parse_header(hdr, sizeof(hdr), &h))) {
		xp_warn("ignoring '%s': not a jitdump file this xprof reads", path);
		goto out;
	}
	for (off = h.total_size; !c->full; off += total) {
		uint8_t *big = NULL, *p = rec;
		size_t want;

		if (!read_at(fd, rec, JITDUMP_PREFIX_LEN, off))
			break; /* the end, or a record cut short by a JIT that died */
		if (jitdump_parse_prefix(rec, JITDUMP_PREFIX_LEN, &id, &total) ||
		    total > JITDUMP_MAX_RECORD) {
			why = "a record of an impossible size";
			break;
		}
		want = jitdump_want(id, total);
		if (!want)
			continue; /* not needed: skip it whole */
		if (id == JITDUMP_CODE_DEBUG_INFO)
			p = big = xp_malloc(want);
		if (!read_at(fd, p, want, off)) {
			free(big);
			break;
		}
		e = jitdump_parse_record(p, want, &r);
		if (e == -ENODATA && id == JITDUMP_CODE_LOAD) {
			/* A name longer than JITMAP_MAX_NAME: keep its start. */
			e = 0;
			r.name = (const char *)p + JITDUMP_LOAD_FIXED;
			r.name_len = want - JITDUMP_LOAD_FIXED;
		}
		/*
		 * Timestamps are CLOCK_MONOTONIC unless the header says they are
		 * the CPU's counter (perf record -k mono; flag bit 0), which we
		 * cannot convert: unknown then.
		 */
		c->t = !e && !(h.flags & 1) && r.timestamp > c->start_mono
			   ? r.timestamp - c->start_mono
			   : 0;
		if (e)
			bad++;
		else
			apply_record(c, &r, first, pending, &nr_pending);
		free(big);
	}
	if (why)
		xp_warn("'%s': %s at offset %llu; using the records before it", path, why,
			(unsigned long long)off);
	if (bad)
		xp_warn("'%s': ignored %zu malformed record%s", path, bad, bad == 1 ? "" : "s");
	if (c->full)
		xp_warn("'%s': more than %u entries; ignoring the rest", path, JITMAP_MAX_ENTRIES);
out:
	close(fd);
	free(rec);
}

/* ---- the collector: which entries name sampled pcs ----------------------- */

/* Index of the first of the sorted @pcs that is >= @addr (@nr if none). */
static size_t lower_bound(const uint64_t *pcs, size_t nr, uint64_t addr)
{
	return XP_PARTITION_POINT(0, nr, i, pcs[i] < addr);
}

/* Union-find "next unassigned pc at or after i" (with path halving). */
static size_t next_free(size_t *next, size_t i)
{
	while (next[i] != i) {
		next[i] = next[next[i]];
		i = next[i];
	}
	return i;
}

struct line_range {
	uint64_t start, end;
	uint32_t line;
	const char *file;
	size_t file_len;
};

/*
 * The source line of @pc inside entry @e from its debug record: the last
 * debug entry at or below @pc, up to the next one (or the entry's end).
 */
static bool line_of(const struct jit_entry *e, const struct jit_dbg *d, uint64_t pc,
		    struct line_range *out)
{
	const uint8_t *p = d->raw, *end = d->raw + d->len;
	struct jitdump_debug_entry de;
	const char *file = NULL;
	size_t file_len = 0;
	uint64_t i, next = e->end;
	bool found = false;

	for (i = 0; i < d->nr && !jitdump_next_debug_entry(&p, end, &de); i++) {
		if (de.file) {
			file = de.file;
			file_len = de.file_len;
		}
		if (!file || de.addr < e->start)
			continue;
		if (de.addr > pc) {
			if (de.addr < next)
				next = de.addr;
		} else if (!found || de.addr >= out->start) {
			*out = (struct line_range){de.addr, 0, de.line > 0 ? (uint32_t)de.line : 0,
						   file, file_len};
			found = true;
		}
	}
	if (found)
		out->end = next;
	return found;
}

static int write_entries(struct collect *c, const struct jitmap_sink *sink, const uint64_t *pcs,
			 size_t nr_pcs)
{
	size_t i, j, *next, *owner, written = 0;
	bool *wins;
	int ret = 0;

	next = xp_malloc((nr_pcs + 1) * sizeof(*next));
	owner = xp_malloc((nr_pcs + 1) * sizeof(*owner));
	wins = xp_calloc(c->nr ? c->nr : 1, sizeof(*wins));
	for (i = 0; i <= nr_pcs; i++)
		next[i] = i;
	/*
	 * Every entry that covers a sampled pc is written, with its time: a
	 * report names each sample after the entry valid when it was taken.
	 * Line ranges come from the latest entry of each pc.
	 */
	for (i = c->nr; i-- > 0;) {
		const struct jit_entry *e = &c->e[i];

		j = lower_bound(pcs, nr_pcs, e->start);
		wins[i] = j < nr_pcs && pcs[j] < e->end;
		for (j = next_free(next, j); j < nr_pcs && pcs[j] < e->end;
		     j = next_free(next, j)) {
			owner[j] = i;
			next[j] = j + 1;
		}
	}
	/* Write in file order, so that overlaps named at one time resolve as here. */
	for (i = 0; i < c->nr && !ret; i++) {
		const struct jit_entry *e = &c->e[i];

		if (!wins[i])
			continue;
		ret = sink->sym(sink->ctx, c->pid, e->start, e->end - e->start, e->name, e->t);
		written++;
		if (!e->dbg)
			continue;
		/* One JITLINE per distinct line range holding a pc of this entry. */
		for (j = lower_bound(pcs, nr_pcs, e->start); j < nr_pcs && pcs[j] < e->end && !ret;
		     j++) {
			struct line_range lr;
			char *file;

			if (owner[j] != i || !line_of(e, &c->dbgs[e->dbg - 1], pcs[j], &lr))
				continue;
			file = name_dup(lr.file, lr.file_len);
			ret = sink->line(sink->ctx, c->pid, lr.start, lr.end, file, lr.line);
			free(file);
			/* Skip the pcs of the same range. */
			while (j + 1 < nr_pcs && pcs[j + 1] < lr.end)
				j++;
		}
	}
	free(wins);
	free(owner);
	free(next);
	return ret ? -1 : (int)written;
}

static void collect_release(struct collect *c)
{
	size_t i;

	for (i = 0; i < c->nr; i++)
		free(c->e[i].name);
	for (i = 0; i < c->nr_dbgs; i++)
		free(c->dbgs[i].raw);
	free(c->e);
	free(c->dbgs);
}

/* ---- watching the perf map while recording ------------------------------ */

/* Recording time now, for a recording that started at CLOCK_MONOTONIC @start_mono. */
static uint64_t rec_now(uint64_t start_mono)
{
	uint64_t now = xp_now_ns();

	return now > start_mono ? now - start_mono : 0;
}

/*
 * When the lines a file gained since recording time @since were written:
 * its last modification (the kernel's coarse clock: a few ms), taken from
 * the wall clock to recording time, within [@since, @now].
 */
static uint64_t written_at(const struct stat *st, uint64_t now, uint64_t since)
{
	struct timespec ts;
	uint64_t real, mtime, t;

	clock_gettime(CLOCK_REALTIME, &ts);
	real = xp_timespec_ns(&ts);
	mtime = xp_timespec_ns(&st->st_mtim);
	t = mtime >= real ? now : real - mtime > now ? 0 : now - (real - mtime);
	return t < since ? since : t > now ? now : t;
}

/*
 * stat(2) of @path as the process sees it (under @root, NULL: ours),
 * without following a last symbolic link (lstat's answer, which
 * open_side_file then refuses).  0 or -1.
 */
static int side_stat(const struct targetfs_root *root, const char *path, struct stat *st)
{
	int fd = targetfs_open(root, path, O_RDONLY | O_NOFOLLOW);
	int ret;

	if (fd < 0)
		return -1;
	ret = fstat(fd, st);
	close(fd);
	return ret;
}

/* The perf map of @pid as it sees itself: /tmp/perf-<its pid>.map under its root. */
static void perfmap_path(char *buf, size_t len, pid_t pid, const struct addrspace *as)
{
	snprintf(buf, len, "/tmp/perf-%d.map", (int)(as && as->nspid > 0 ? as->nspid : pid));
}

void jitmap_poll(struct jit_watch *w, pid_t pid, const struct addrspace *as, uint64_t start_mono)
{
	uint64_t now = rec_now(start_mono);
	char path[64];
	struct stat st;

	if (w->polled_at && now - w->polled_at < JITMAP_POLL_NS)
		return;
	perfmap_path(path, sizeof(path), pid, as);
	/* The checks of open_side_file come when the file is read. */
	if (!side_stat(as ? as->root : NULL, path, &st) && S_ISREG(st.st_mode) &&
	    (uint64_t)st.st_size != w->size) {
		if ((uint64_t)st.st_size < w->size)
			w->nr = 0; /* rewritten from the start: what we knew is void */
		xp_grow((void **)&w->chunks, &w->alloc, w->nr + 1, sizeof(*w->chunks));
		w->chunks[w->nr++] =
		    (struct jit_chunk){(uint64_t)st.st_size, written_at(&st, now, w->polled_at)};
		w->size = (uint64_t)st.st_size;
	}
	w->polled_at = now ? now : 1;
}

void jitmap_watch_release(struct jit_watch *w)
{
	free(w->chunks);
	memset(w, 0, sizeof(*w));
}

/* jitmap_collect_files, with the files under @root (NULL: ours). */
static int collect_files(const struct jitmap_sink *sink, struct jit_watch *watch, pid_t pid,
			 const struct targetfs_root *root, const char *perfmap,
			 const char *const *dumps, size_t nr_dumps, const uint64_t *pcs,
			 size_t nr_pcs, uint64_t start_mono)
{
	struct collect c = {
	    .pid = pid, .target_uid = geteuid(), .root = root, .start_mono = start_mono};
	uint64_t now = rec_now(start_mono);
	char proc[32];
	struct stat st;
	size_t i;
	int ret;

	snprintf(proc, sizeof(proc), "/proc/%d", (int)pid);
	if (!stat(proc, &st))
		c.target_uid = st.st_uid;
	c.chunks = watch->chunks;
	c.nr_chunks = watch->nr;
	c.tail_t = watch->polled_at;
	if (perfmap && !side_stat(root, perfmap, &st))
		c.tail_t = written_at(&st, now, watch->polled_at);
	if (perfmap)
		read_perfmap(&c, perfmap);
	for (i = 0; i < nr_dumps; i++)
		if (dumps[i])
			read_jitdump(&c, dumps[i]);
	ret = c.nr ? write_entries(&c, sink, pcs, nr_pcs) : 0;
	xp_debug(1, "pid %d: %zu JIT entries read (%zu times seen while recording), %d written",
		 (int)pid, c.nr, watch->nr, ret);
	collect_release(&c);
	jitmap_watch_release(watch);
	return ret;
}

int jitmap_collect_files(const struct jitmap_sink *sink, struct jit_watch *watch, pid_t pid,
			 const char *perfmap, const char *const *dumps, size_t nr_dumps,
			 const uint64_t *pcs, size_t nr_pcs, uint64_t start_mono)
{
	return collect_files(sink, watch, pid, NULL, perfmap, dumps, nr_dumps, pcs, nr_pcs,
			     start_mono);
}

/* Whether mapped file @path is this process's jitdump: ".../jit-<pid>.dump". */
static bool is_jitdump(const char *path, pid_t pid)
{
	const char *base = strrchr(path, '/');
	char want[32];

	snprintf(want, sizeof(want), "jit-%d.dump", (int)pid);
	return base && !strcmp(base + 1, want);
}

int jitmap_collect(const struct jitmap_sink *sink, struct jit_watch *watch, pid_t pid,
		   const struct addrspace *as, const uint64_t *pcs, size_t nr_pcs,
		   uint64_t start_mono)
{
	const char **dumps = xp_calloc(as->nr ? as->nr : 1, sizeof(*dumps));
	/* The JIT names its files with the pid it sees, in its own pid namespace. */
	pid_t own = as->nspid > 0 ? as->nspid : pid;
	char perfmap[64];
	size_t i, j, n = 0;
	int ret;

	perfmap_path(perfmap, sizeof(perfmap), pid, as);
	/* A JIT maps its dump once, but a mapping may show up split in pieces. */
	for (i = 0; i < as->nr; i++) {
		if (!is_jitdump(as->maps[i].path, own))
			continue;
		for (j = 0; j < n && strcmp(dumps[j], as->maps[i].path); j++)
			;
		if (j == n)
			dumps[n++] = as->maps[i].path;
	}
	if (own != pid || as->root)
		xp_debug(1, "pid %d: JIT files as pid %d sees them, under %s", (int)pid, (int)own,
			 as->root ? "its own root" : "our root");
	ret = collect_files(sink, watch, pid, as->root, perfmap, dumps, n, pcs, nr_pcs, start_mono);
	free(dumps);
	return ret;
}
