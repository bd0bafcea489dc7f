/* SPDX-License-Identifier: MIT */
/*
 * The data file reader: decodes the header and the record stream of
 * doc/data-format.md into a struct profile, then builds the lookup tables
 * (stack ids, per-pid processes and mappings).  Every field is decoded byte
 * by byte from a bounds-checked cursor, so a hostile file can make the load
 * fail but never read or allocate out of bounds: no allocation is larger
 * than the record (at most DF_MAX_RECORD) it comes from.  Symbolization
 * and aggregation are elsewhere; this file only knows the format.
 */
#include "profile.h"
#include "err.h"
#include "hash.h"
#include "sorted.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Lookup tables of one pid. */
struct pid_index {
	pid_t pid;
	size_t *procs, nr_procs; /* indices into profile.procs, by (t, seq) */
	size_t *maps, nr_maps;	 /* indices into profile.maps, by start */
	uint64_t *max_end;	 /* max_end[i]: largest end among maps[0..i] */
	uint64_t *times; /* t of every PROCESS and MAPPING, and of reused JIT symbols, sorted */
	size_t nr_times;
	size_t nr_jit; /* JIT symbol times in times[] */
};

struct profile_index {
	size_t *stack_slots; /* open addressing: index + 1 into profile.stacks, 0 empty */
	size_t stack_cap;
	struct pid_index *pids; /* open addressing on pid; nr_procs + nr_maps == 0: empty */
	size_t pid_cap;
	size_t *threads;    /* indices into profile.threads, by (tid, t, file order) */
	size_t *code_slots; /* open addressing: index + 1 into profile.codes, 0 empty */
	size_t code_cap;
};

void profile_init(struct profile *p)
{
	memset(p, 0, sizeof(*p));
}

static void index_free(struct profile_index *idx)
{
	size_t i;

	if (!idx)
		return;
	for (i = 0; i < idx->pid_cap; i++)
		XP_FREE_ALL(idx->pids[i].procs, idx->pids[i].maps, idx->pids[i].max_end,
			    idx->pids[i].times);
	XP_FREE_ALL(idx->pids, idx->stack_slots, idx->threads, idx->code_slots, idx);
}

/* free() member @m of each element of the profile's array @arr. */
#define FREE_EACH(p, arr, m)                                                                       \
	for (size_t i_ = 0; i_ < (p)->nr_##arr; i_++)                                              \
	free((p)->arr[i_].m)

/* free() members @m1 and @m2 of each element of the profile's array @arr. */
#define FREE_EACH2(p, arr, m1, m2)                                                                 \
	for (size_t i_ = 0; i_ < (p)->nr_##arr; i_++)                                              \
	XP_FREE_ALL((p)->arr[i_].m1, (p)->arr[i_].m2)

void profile_release(struct profile *p)
{
	FREE_EACH2(p, procs, comm, exe);
	FREE_EACH(p, threads, comm);
	FREE_EACH(p, maps, path);
	FREE_EACH2(p, stacks, pcs, flags);
	FREE_EACH(p, stats, name);
	FREE_EACH2(p, metas, key, value);
	FREE_EACH(p, jitsyms, name);
	FREE_EACH(p, jitlines, file);
	FREE_EACH(p, vdsos, image);
	FREE_EACH(p, marks, name);
	FREE_EACH(p, stacks, interp);
	FREE_EACH2(p, codes, name, file);
	FREE_EACH(p, istacks, f);
	XP_FREE_ALL(p->procs, p->threads, p->maps, p->stacks, p->samples, p->exits, p->stats,
		    p->metas, p->jitsyms, p->jitlines, p->vdsos, p->marks, p->codes, p->istacks,
		    p->name);
	index_free(p->idx);
	memset(p, 0, sizeof(*p));
}

/* ---- decoding ------------------------------------------------------------ */

/* A bounds-checked view of one payload.  Reading past the end sets @bad. */
struct cur {
	const uint8_t *p, *end;
	bool bad;
};

static bool cur_take(struct cur *c, size_t n, const uint8_t **out)
{
	if (c->bad || (size_t)(c->end - c->p) < n) {
		c->bad = true;
		return false;
	}
	*out = c->p;
	c->p += n;
	return true;
}

static size_t cur_left(const struct cur *c)
{
	return (size_t)(c->end - c->p);
}

static uint64_t get_le(struct cur *c, size_t n)
{
	const uint8_t *b;
	uint64_t v = 0;

	if (!cur_take(c, n, &b))
		return 0;
	while (n--)
		v = v << 8 | b[n];
	return v;
}

static uint8_t get_u8(struct cur *c)
{
	return (uint8_t)get_le(c, 1);
}

static uint16_t get_u16(struct cur *c)
{
	return (uint16_t)get_le(c, 2);
}

static uint32_t get_u32(struct cur *c)
{
	return (uint32_t)get_le(c, 4);
}

static uint64_t get_u64(struct cur *c)
{
	return get_le(c, 8);
}

static pid_t get_pid(struct cur *c)
{
	return (pid_t)get_u32(c);
}

/* A str field as an owned C string; NULL (and @bad set) if it overruns. */
static char *get_str(struct cur *c)
{
	uint32_t len = get_u32(c);
	const uint8_t *b;
	char *s;

	if (!cur_take(c, len, &b))
		return NULL;
	s = xp_malloc((size_t)len + 1);
	memcpy(s, b, len);
	s[len] = 0;
	return s;
}

/* The size of a fixed-size field of get_fields(). */
static size_t field_size(char type)
{
	return type == '1' ? 1 : type == '8' ? 8 : 4;
}

/*
 * Decode the fields @fmt lists, in payload order, each into the object the
 * next argument points to:
 *
 *   '1' u8 (uint8_t *)    '4' u32 (uint32_t *)    '8' u64 (uint64_t *)
 *   'p' pid (pid_t *)     'i' u32 taken as signed (int32_t *)
 *   's' str (char **: an owned C string, as get_str)
 *
 * The fixed-size fields after a '|' were appended by later minor revisions
 * of the format: each is decoded only if the payload still holds it, else
 * left as it was (an older file ends before it).  0; or -1 when a field
 * overruns the payload, with @c->bad set and the strings decoded so far
 * freed and set to NULL.
 */
static int get_fields(struct cur *c, const char *fmt, ...)
{
	char **strs[4];
	size_t nr_strs = 0;
	bool appended = false;
	va_list ap;

	va_start(ap, fmt);
	for (; *fmt && !c->bad; fmt++) {
		if (*fmt == '|') {
			appended = true;
			continue;
		}
		if (appended && cur_left(c) < field_size(*fmt))
			break;
		switch (*fmt) {
		case '1':
			*va_arg(ap, uint8_t *) = get_u8(c);
			break;
		case '4':
			*va_arg(ap, uint32_t *) = get_u32(c);
			break;
		case '8':
			*va_arg(ap, uint64_t *) = get_u64(c);
			break;
		case 'p':
			*va_arg(ap, pid_t *) = get_pid(c);
			break;
		case 'i':
			*va_arg(ap, int32_t *) = (int32_t)get_u32(c);
			break;
		case 's':
			if (nr_strs == sizeof(strs) / sizeof(strs[0]))
				XP_BUG("too many str fields");
			strs[nr_strs] = va_arg(ap, char **);
			*strs[nr_strs++] = get_str(c);
			break;
		default:
			XP_BUG("unknown field type");
		}
	}
	va_end(ap);
	if (!c->bad)
		return 0;
	while (nr_strs--) {
		free(*strs[nr_strs]);
		*strs[nr_strs] = NULL;
	}
	return -1;
}

/* Reader state while loading. */
struct rd {
	struct profile *p;
	FILE *f;
	uint64_t off; /* offset of the next byte of the file */
	uint8_t *buf; /* the payload being decoded */
	unsigned long alloc;
	const char *why; /* why the current record is corrupt */
};

#define GROW(p, arr)                                                                               \
	xp_grow((void **)&(p)->arr, &(p)->alloc_##arr, (p)->nr_##arr + 1, sizeof(*(p)->arr))

/* Append @elem to the profile's array @arr.  An expression: 0, the parsers' success. */
#define KEEP(p, arr, elem) (GROW(p, arr), (p)->arr[(p)->nr_##arr++] = (elem), 0)

/*
 * Decode the fields @fmt lists into the members of @elem that the
 * arguments after it point to (see get_fields), then append @elem to the
 * profile's array @arr: the whole of a record that is only fields.  0, or
 * -1 when a field overruns the payload.
 */
#define READ_ELEM(r, c, arr, elem, fmt, ...)                                                       \
	(get_fields(c, fmt, __VA_ARGS__) ? -1 : KEEP((r)->p, arr, elem))

/*
 * The record is corrupt because of @why (NULL: a field overran the
 * payload): free @s, the string decoded from it, and fail.
 */
static int rd_reject(struct rd *r, char *s, const char *why)
{
	free(s);
	r->why = why;
	return -1;
}

static int parse_process(struct rd *r, struct cur *c)
{
	struct profile_process pr = {.seq = r->p->records};

	/* nspid was added in a minor revision: older files end before it (unknown). */
	return READ_ELEM(r, c, procs, pr, "8pp4ss|p", &pr.t, &pr.pid, &pr.ppid, &pr.flags, &pr.comm,
			 &pr.exe, &pr.nspid);
}

static int parse_thread(struct rd *r, struct cur *c)
{
	struct profile_thread th = {0};

	return READ_ELEM(r, c, threads, th, "8pps", &th.t, &th.pid, &th.tid, &th.comm);
}

static int parse_mapping(struct rd *r, struct cur *c)
{
	struct profile_mapping m = {.seq = r->p->records};
	const uint8_t *id;

	if (get_fields(c, "8p4888s1", &m.t, &m.pid, &m.prot, &m.start, &m.end, &m.offset, &m.path,
		       &m.build_id_len))
		return -1;
	if (m.build_id_len > DF_BUILD_ID_MAX)
		return rd_reject(r, m.path, "build-id longer than 64 bytes");
	if (!cur_take(c, m.build_id_len, &id))
		return rd_reject(r, m.path, NULL);
	memcpy(m.build_id, id, m.build_id_len);
	/* Appended by a minor revision: the identity of a file without a build-id. */
	if (cur_left(c) >= 2) {
		uint8_t kind = get_u8(c), len = get_u8(c);

		if (!cur_take(c, len, &id))
			return rd_reject(r, m.path, NULL);
		/* A kind this reader does not know (or GNU: the build-id field) is none. */
		if ((kind == XP_FILE_ID_GO || kind == XP_FILE_ID_SHA256) && len <= XP_FILE_ID_MAX) {
			m.file_id.kind = kind;
			m.file_id.len = len;
			memcpy(m.file_id.bytes, id, len);
		}
	}
	if (m.end <= m.start)
		return rd_reject(r, m.path, "mapping ends before it starts");
	return KEEP(r->p, maps, m);
}

static int parse_stack(struct rd *r, struct cur *c)
{
	struct profile_stack st = {0};
	const uint8_t *fl = NULL;
	uint32_t i;

	if (get_fields(c, "84", &st.id, &st.nr))
		return -1;
	/* 9 bytes a frame; compared in 64 bits so nothing overflows. */
	if ((uint64_t)st.nr * 9 > (uint64_t)(c->end - c->p)) {
		r->why = "more frames than the payload holds";
		return -1;
	}
	st.pcs = xp_malloc((size_t)st.nr * sizeof(*st.pcs));
	st.flags = xp_malloc(st.nr);
	for (i = 0; i < st.nr; i++)
		st.pcs[i] = get_u64(c);
	if (cur_take(c, st.nr, &fl))
		memcpy(st.flags, fl, st.nr);
	return KEEP(r->p, stacks, st);
}

static int parse_sample(struct rd *r, struct cur *c)
{
	struct profile_sample s = {0};

	/* .stack is set once every stack is indexed (resolve_samples). */
	return READ_ELEM(r, c, samples, s, "8pp88", &s.t, &s.pid, &s.tid, &s.stack_id, &s.weight);
}

/* An unsigned LEB128 value of at most 64 bits. */
static uint64_t get_varint(struct cur *c)
{
	uint64_t v = 0;
	unsigned int shift;
	const uint8_t *b;

	for (shift = 0; shift < 64; shift += 7) {
		if (!cur_take(c, 1, &b))
			return 0;
		if (shift == 63 && *b > 1)
			break; /* more than 64 bits */
		v |= (uint64_t)(*b & 0x7f) << shift;
		if (!(*b & 0x80))
			return v;
	}
	c->bad = true;
	return 0;
}

static int parse_samples(struct rd *r, struct cur *c)
{
	struct profile *p = r->p;
	struct profile_sample s = {0};
	uint64_t t, dt;

	if (get_fields(c, "pp8", &s.pid, &s.tid, &t))
		return -1;
	while (c->p < c->end) {
		dt = get_varint(c);
		s.stack_id = get_varint(c);
		s.weight = get_varint(c);
		if (c->bad || t + dt < t)
			return -1;
		t += dt;
		s.t = t;
		GROW(p, samples);
		p->samples[p->nr_samples++] = s;
	}
	return 0;
}

static int parse_exit(struct rd *r, struct cur *c)
{
	struct profile_exit e = {0};

	return READ_ELEM(r, c, exits, e, "8ppi", &e.t, &e.pid, &e.tid, &e.status);
}

static int parse_stat(struct rd *r, struct cur *c)
{
	struct profile_stat s = {0};

	return READ_ELEM(r, c, stats, s, "s8", &s.name, &s.value);
}

static int parse_jitsym(struct rd *r, struct cur *c)
{
	struct profile_jitsym j = {0};

	/* The time it was named at, appended later: files without it have 0. */
	return READ_ELEM(r, c, jitsyms, j, "p88s|8", &j.pid, &j.start, &j.size, &j.name, &j.t);
}

static int parse_meta(struct rd *r, struct cur *c)
{
	struct profile_meta m = {0};

	return READ_ELEM(r, c, metas, m, "ss", &m.key, &m.value);
}

static int parse_jitline(struct rd *r, struct cur *c)
{
	struct profile_jitline j = {0};

	if (get_fields(c, "p884s", &j.pid, &j.start, &j.end, &j.line, &j.file))
		return -1;
	if (j.end <= j.start)
		return rd_reject(r, j.file, "JIT line range ends before it starts");
	return KEEP(r->p, jitlines, j);
}

static int parse_vdso(struct rd *r, struct cur *c)
{
	struct profile_vdso v = {0};
	const uint8_t *b;

	v.len = get_u32(c);
	if (!cur_take(c, v.len, &b))
		return -1;
	if (!v.len || v.len > DF_VDSO_MAX) {
		r->why = "[vdso] image of an impossible size";
		return -1;
	}
	v.image = xp_malloc(v.len);
	memcpy(v.image, b, v.len);
	return KEEP(r->p, vdsos, v);
}

static int parse_mark(struct rd *r, struct cur *c)
{
	struct profile_mark m = {0};

	if (get_fields(c, "84s", &m.t, &m.kind, &m.name))
		return -1;
	if (strlen(m.name) > DF_MARK_NAME_MAX || (m.kind == DF_MARK_PHASE && !m.name[0]))
		return rd_reject(r, m.name, "phase mark with an empty or over-long name");
	/* A kind of a later revision: skipped, as a record of an unknown type. */
	if (m.kind > DF_MARK_DISABLE) {
		free(m.name);
		return 0;
	}
	return KEEP(r->p, marks, m);
}

static int parse_icode(struct rd *r, struct cur *c)
{
	struct profile_code k = {0};

	if (get_fields(c, "844ss", &k.id, &k.kind, &k.first_line, &k.name, &k.file))
		return -1;
	if (!k.id || strlen(k.name) > DF_ICODE_STR_MAX || strlen(k.file) > DF_ICODE_STR_MAX) {
		free(k.file);
		return rd_reject(r, k.name, "code record with id 0 or an over-long name");
	}
	return KEEP(r->p, codes, k);
}

static int parse_istack(struct rd *r, struct cur *c)
{
	struct profile_istack st = {0};
	uint32_t i;

	if (get_fields(c, "84", &st.stack_id, &st.nr))
		return -1;
	if ((uint64_t)st.nr * DF_ISTACK_ENTRY > (uint64_t)(c->end - c->p)) {
		r->why = "more interpreter frames than the payload holds";
		return -1;
	}
	if (st.nr > XP_MAX_DEPTH) {
		r->why = "more interpreter frames than a stack holds";
		return -1;
	}
	st.f = xp_malloc(((size_t)st.nr + 1) * sizeof(*st.f));
	for (i = 0; i < st.nr; i++) {
		st.f[i].at = get_u32(c);
		st.f[i].code = get_u64(c);
		st.f[i].line = get_u32(c);
		if (i && st.f[i].at < st.f[i - 1].at) {
			free(st.f);
			r->why = "interpreter frames out of order";
			return -1;
		}
	}
	return KEEP(r->p, istacks, st);
}

/* The parser of each record type, indexed by type (datafile.h's list). */
static const struct {
	const char *name;
	int (*parse)(struct rd *r, struct cur *c);
} rec_types[] = {
#define REC_ROW(NAME, name, number) [DF_REC_##NAME] = {#NAME, parse_##name},
    DF_REC_TYPES(REC_ROW)
#undef REC_ROW
};

#define NR_REC_TYPES (sizeof(rec_types) / sizeof(rec_types[0]))

/* ---- the record stream --------------------------------------------------- */

/* Read up to @len bytes; returns how many (short only at EOF or on error). */
static size_t rd_read(struct rd *r, void *buf, size_t len)
{
	size_t n = len ? fread(buf, 1, len, r->f) : 0;

	r->off += n;
	return n;
}

static int rd_io_error(struct rd *r)
{
	return xp_error("cannot read '%s': %s", r->p->name, strerror(errno ? errno : EIO));
}

/* Whether everything from the current position to EOF is zero bytes (or nothing). */
static bool rest_is_zero(struct rd *r)
{
	uint8_t buf[4096];
	size_t n, i;

	while ((n = rd_read(r, buf, sizeof(buf))) > 0)
		for (i = 0; i < n; i++)
			if (buf[i])
				return false;
	return !ferror(r->f);
}

static void tail_cut(struct rd *r, uint64_t rec_off, const char *what)
{
	r->p->truncated = true;
	if (r->p->live)
		return;
	xp_warn("'%s' is truncated at offset %llu (%s); using the %llu records before it",
		r->p->name, (unsigned long long)rec_off, what, (unsigned long long)r->p->records);
}

/*
 * The record at @rec_off is corrupt.  At the tail (nothing or only zero
 * bytes follow) that is what a killed or crashed recorder leaves: warn and
 * stop.  In the middle the file is damaged: error.
 */
static int bad_record(struct rd *r, uint64_t rec_off, const char *why)
{
	if (rest_is_zero(r)) {
		r->p->truncated = true;
		xp_warn("'%s': ignoring a corrupt record at offset %llu at the end of the file "
			"(%s); using the %llu records before it",
			r->p->name, (unsigned long long)rec_off, why,
			(unsigned long long)r->p->records);
		return 0;
	}
	if (ferror(r->f))
		return rd_io_error(r);
	return xp_error("'%s' is corrupt at offset %llu: %s", r->p->name,
			(unsigned long long)rec_off, why);
}

static int read_header(struct rd *r)
{
	struct profile *p = r->p;
	uint8_t hdr[DF_HEADER_LEN], skip[256];
	struct cur c = {hdr, hdr, false};
	uint16_t hlen;
	size_t n;

	n = rd_read(r, hdr, sizeof(hdr));
	if (ferror(r->f))
		return rd_io_error(r);
	c.end = hdr + n;
	if (n < DF_MAGIC_LEN || memcmp(hdr, DF_MAGIC, DF_MAGIC_LEN))
		return xp_error("'%s' is not an xprof data file", p->name);
	if (n < sizeof(hdr))
		return xp_error("'%s' is truncated: the header ends at offset %zu", p->name, n);
	c.p += DF_MAGIC_LEN;
	p->version = get_u16(&c);
	if (p->version > DF_VERSION) {
		xp_error("'%s' is data format version %u, but this xprof reads version %u", p->name,
			 p->version, DF_VERSION);
		xp_hint("upgrade xprof to report on it");
		return -1;
	}
	if (p->version < 1)
		return xp_error("'%s' is corrupt at offset 8: invalid version 0", p->name);
	if (get_u8(&c) != DF_ENDIAN_LITTLE)
		return xp_error("'%s' is corrupt at offset 10: unknown byte order %u", p->name,
				hdr[10]);
	get_u8(&c);
	p->e_machine = get_u16(&c);
	hlen = get_u16(&c);
	p->start_ns = get_u64(&c);
	if (hlen < DF_HEADER_LEN)
		return xp_error("'%s' is corrupt at offset 14: header length %u", p->name, hlen);
	/* A later revision may extend the header: skip what we do not know. */
	while (r->off < hlen) {
		size_t want = hlen - r->off < sizeof(skip) ? (size_t)(hlen - r->off) : sizeof(skip);

		if (rd_read(r, skip, want) != want) {
			if (ferror(r->f))
				return rd_io_error(r);
			return xp_error("'%s' is truncated: the header ends at offset %llu",
					p->name, (unsigned long long)r->off);
		}
	}
	p->good_bytes = r->off;
	return 0;
}

static int read_records(struct rd *r)
{
	struct profile *p = r->p;
	uint8_t hdr[DF_REC_HDR_LEN];
	struct cur c;
	uint32_t type, len;
	uint64_t rec_off;
	size_t n;

	for (;;) {
		rec_off = r->off;
		n = rd_read(r, hdr, sizeof(hdr));
		if (ferror(r->f))
			return rd_io_error(r);
		if (n == 0)
			return 0;
		if (n < sizeof(hdr)) {
			tail_cut(r, rec_off, "incomplete record header");
			return 0;
		}
		c = (struct cur){hdr, hdr + sizeof(hdr), false};
		type = get_u32(&c);
		len = get_u32(&c);
		if (type == 0)
			return bad_record(r, rec_off, "record of type 0");
		if (len > DF_MAX_RECORD) {
			char why[96];

			snprintf(why, sizeof(why), "record of type %u claims %u bytes (limit %u)",
				 type, len, DF_MAX_RECORD);
			return bad_record(r, rec_off, why);
		}
		/* Never a NULL buffer, even for an empty payload: memcpy(dst, NULL, 0) is UB. */
		xp_grow((void **)&r->buf, &r->alloc, len ? len : 1, 1);
		n = rd_read(r, r->buf, len);
		if (ferror(r->f))
			return rd_io_error(r);
		if (n < len) {
			char what[96];

			snprintf(what, sizeof(what), "record of type %u needs %u bytes, %zu left",
				 type, len, n);
			tail_cut(r, rec_off, what);
			return 0;
		}
		if (type < NR_REC_TYPES && rec_types[type].parse) {
			c = (struct cur){r->buf, r->buf + len, false};
			r->why = NULL;
			if (rec_types[type].parse(r, &c)) {
				char why[128];

				snprintf(why, sizeof(why), "%s record of %u bytes: %s",
					 rec_types[type].name, len,
					 r->why ? r->why : "fields overrun the payload");
				return bad_record(r, rec_off, why);
			}
		} else {
			p->unknown++;
		}
		p->records++;
		p->good_bytes = r->off;
	}
}

/* ---- indexes ------------------------------------------------------------- */

static size_t hash_u64(uint64_t v, size_t cap)
{
	return (size_t)xp_mix64(v) & (cap - 1);
}

static size_t pow2_above(size_t n)
{
	size_t cap = 16;

	while (cap < n * 2)
		cap *= 2;
	return cap;
}

static bool stacks_equal(const struct profile_stack *a, const struct profile_stack *b)
{
	return a->nr == b->nr && !memcmp(a->pcs, b->pcs, a->nr * sizeof(*a->pcs)) &&
	       !memcmp(a->flags, b->flags, a->nr);
}

static void index_stacks(struct profile *p)
{
	struct profile_index *idx = p->idx;
	size_t i, j, kept = 0;
	bool warned = false, deep = false;

	idx->stack_cap = pow2_above(p->nr_stacks);
	idx->stack_slots = xp_calloc(idx->stack_cap, sizeof(*idx->stack_slots));
	for (i = 0; i < p->nr_stacks; i++) {
		struct profile_stack *st = &p->stacks[i];

		j = hash_u64(st->id, idx->stack_cap);
		while (idx->stack_slots[j] && p->stacks[idx->stack_slots[j] - 1].id != st->id)
			j = (j + 1) & (idx->stack_cap - 1);
		if (idx->stack_slots[j]) {
			/* A repeated id: keep the first, as doc/data-format.md says. */
			if (!warned && !stacks_equal(&p->stacks[idx->stack_slots[j] - 1], st)) {
				xp_warn("'%s': stack id %llu is defined twice with different "
					"frames; using the first",
					p->name, (unsigned long long)st->id);
				warned = true;
			}
			p->dup_stacks++;
			free(st->pcs);
			free(st->flags);
			continue;
		}
		if (st->nr > XP_MAX_DEPTH + 1) {
			/* Deeper than any recording: the innermost frames and a marker. */
			if (!deep)
				xp_warn("'%s': stack id %llu has %u frames, more than xprof ever "
					"records; cutting it and any like it to %u",
					p->name, (unsigned long long)st->id, st->nr, XP_MAX_DEPTH);
			deep = true;
			p->deep_stacks++;
			st->nr = XP_MAX_DEPTH + 1;
			st->pcs[XP_MAX_DEPTH] = 0;
			st->flags[XP_MAX_DEPTH] = XP_FRAME_TRUNCATED;
		}
		p->stacks[kept] = *st;
		idx->stack_slots[j] = ++kept;
	}
	p->nr_stacks = kept;
}

const struct profile_stack *profile_stack_by_id(const struct profile *p, uint64_t id)
{
	const struct profile_index *idx = p->idx;
	size_t j;

	if (!idx || !idx->stack_cap)
		return NULL;
	j = hash_u64(id, idx->stack_cap);
	while (idx->stack_slots[j]) {
		if (p->stacks[idx->stack_slots[j] - 1].id == id)
			return &p->stacks[idx->stack_slots[j] - 1];
		j = (j + 1) & (idx->stack_cap - 1);
	}
	return NULL;
}

/*
 * Give each ISTACK's frames to its stack: the first record of a stack id
 * that has none; frames beyond a stack's outermost frame (which a cut to
 * XP_MAX_DEPTH may have left) go beyond it.
 */
static void index_istacks(struct profile *p)
{
	size_t i;
	uint32_t k;

	for (i = 0; i < p->nr_istacks; i++) {
		struct profile_istack *is = &p->istacks[i];
		struct profile_stack *st =
		    (struct profile_stack *)profile_stack_by_id(p, is->stack_id);

		if (!st || st->interp) {
			p->bad_istacks++;
			free(is->f);
			continue;
		}
		for (k = 0; k < is->nr; k++)
			if (is->f[k].at > st->nr)
				is->f[k].at = st->nr;
		st->interp = is->f;
		st->nr_interp = is->nr;
	}
	p->nr_istacks = 0;
}

static void index_codes(struct profile *p)
{
	struct profile_index *idx = p->idx;
	size_t i, j;

	idx->code_cap = pow2_above(p->nr_codes);
	idx->code_slots = xp_calloc(idx->code_cap, sizeof(*idx->code_slots));
	for (i = 0; i < p->nr_codes; i++) {
		j = hash_u64(p->codes[i].id, idx->code_cap);
		while (idx->code_slots[j] && p->codes[idx->code_slots[j] - 1].id != p->codes[i].id)
			j = (j + 1) & (idx->code_cap - 1);
		if (!idx->code_slots[j])
			idx->code_slots[j] = i + 1;
	}
}

const struct profile_code *profile_code_by_id(const struct profile *p, uint64_t id)
{
	const struct profile_index *idx = p->idx;
	size_t j;

	if (!idx || !idx->code_cap)
		return NULL;
	for (j = hash_u64(id, idx->code_cap); idx->code_slots[j]; j = (j + 1) & (idx->code_cap - 1))
		if (p->codes[idx->code_slots[j] - 1].id == id)
			return &p->codes[idx->code_slots[j] - 1];
	return NULL;
}

/* Replace each sample's stack id by the stack's index; drop samples of unknown stacks. */
static void resolve_samples(struct profile *p)
{
	size_t i, kept = 0;

	for (i = 0; i < p->nr_samples; i++) {
		struct profile_sample *s = &p->samples[i];
		const struct profile_stack *st = profile_stack_by_id(p, s->stack_id);

		if (!st) {
			p->orphan_samples++;
			continue;
		}
		s->stack = (size_t)(st - p->stacks);
		p->total_weight += s->weight;
		p->samples[kept++] = *s;
	}
	p->nr_samples = kept;
	if (p->orphan_samples)
		xp_warn("'%s': %llu samples name a stack the file does not hold; ignoring them",
			p->name, (unsigned long long)p->orphan_samples);
}

static struct pid_index *pid_slot(const struct profile_index *idx, pid_t pid)
{
	size_t j;

	if (!idx->pid_cap)
		return NULL;
	j = hash_u64((uint64_t)(uint32_t)pid, idx->pid_cap);
	while ((idx->pids[j].nr_procs || idx->pids[j].nr_maps) && idx->pids[j].pid != pid)
		j = (j + 1) & (idx->pid_cap - 1);
	return &idx->pids[j];
}

static const struct pid_index *pid_find(const struct profile *p, pid_t pid)
{
	const struct pid_index *pi;

	if (!p->idx)
		return NULL;
	pi = pid_slot(p->idx, pid);
	return pi && (pi->nr_procs || pi->nr_maps) ? pi : NULL;
}

/* -1, 0 or 1 as @x is below, equal to or above @y (any two integers of one type). */
#define CMP(x, y) (((x) > (y)) - ((x) < (y)))

/* The element of profile @arg's array @arr whose index the sort passes at @pi. */
#define ELEM_AT(arg, arr, pi) (&((const struct profile *)(arg))->arr[*(const size_t *)(pi)])

static int cmp_u64(const void *a, const void *b)
{
	return CMP(*(const uint64_t *)a, *(const uint64_t *)b);
}

static int cmp_proc_idx(const void *a, const void *b, void *arg)
{
	const struct profile_process *x = ELEM_AT(arg, procs, a), *y = ELEM_AT(arg, procs, b);

	return x->t != y->t ? CMP(x->t, y->t) : CMP(x->seq, y->seq);
}

static int cmp_map_idx(const void *a, const void *b, void *arg)
{
	const struct profile_mapping *x = ELEM_AT(arg, maps, a), *y = ELEM_AT(arg, maps, b);

	return x->start != y->start ? CMP(x->start, y->start) : CMP(x->seq, y->seq);
}

static int cmp_jit_idx(const void *a, const void *b, void *arg)
{
	const struct profile_jitsym *x = ELEM_AT(arg, jitsyms, a), *y = ELEM_AT(arg, jitsyms, b);

	return x->pid != y->pid ? CMP(x->pid, y->pid) : CMP(x->start, y->start);
}

/*
 * Add to the epochs of each pid the times of its JIT symbols that share
 * addresses with another (a JIT that reused memory): a sample's name there
 * depends on its time.  Symbols alone at their addresses name every
 * sample alike and add nothing.
 */
static void index_jit_times(struct profile *p)
{
	size_t *ord = xp_malloc((p->nr_jitsyms ? p->nr_jitsyms : 1) * sizeof(*ord));
	bool *reused = xp_calloc(p->nr_jitsyms ? p->nr_jitsyms : 1, sizeof(*reused));
	size_t i, holder = 0;
	uint64_t max_end = 0;

	for (i = 0; i < p->nr_jitsyms; i++)
		ord[i] = i;
	xp_sort_r(ord, p->nr_jitsyms, sizeof(*ord), cmp_jit_idx, p);
	for (i = 0; i < p->nr_jitsyms; i++) {
		const struct profile_jitsym *j = &p->jitsyms[ord[i]];
		uint64_t end = j->start + j->size < j->start ? UINT64_MAX : j->start + j->size;

		if (i && p->jitsyms[ord[i - 1]].pid != j->pid)
			max_end = 0;
		if (j->start < max_end)
			reused[ord[i]] = reused[holder] = true;
		if (end > max_end) {
			max_end = end;
			holder = ord[i];
		}
	}
	for (i = 0; i < p->nr_jitsyms; i++) {
		struct pid_index *pi;

		if (!reused[i] || !p->jitsyms[i].t)
			continue;
		pi = pid_slot(p->idx, p->jitsyms[i].pid);
		if (!pi->nr_procs && !pi->nr_maps)
			continue;
		pi->times = xp_realloc(pi->times, (pi->nr_procs + pi->nr_maps + pi->nr_jit + 1) *
						      sizeof(*pi->times));
		pi->times[pi->nr_procs + pi->nr_maps + pi->nr_jit++] = p->jitsyms[i].t;
	}
	free(reused);
	free(ord);
}

static void index_pids(struct profile *p)
{
	struct profile_index *idx = p->idx;
	struct pid_index *pi;
	size_t i, j;

	idx->pid_cap = pow2_above(p->nr_procs + p->nr_maps);
	idx->pids = xp_calloc(idx->pid_cap, sizeof(*idx->pids));
	/* First count, so each array is allocated once. */
	for (i = 0; i < p->nr_procs; i++) {
		pi = pid_slot(idx, p->procs[i].pid);
		pi->pid = p->procs[i].pid;
		pi->nr_procs++;
	}
	for (i = 0; i < p->nr_maps; i++) {
		pi = pid_slot(idx, p->maps[i].pid);
		pi->pid = p->maps[i].pid;
		pi->nr_maps++;
	}
	for (j = 0; j < idx->pid_cap; j++) {
		pi = &idx->pids[j];
		if (!pi->nr_procs && !pi->nr_maps)
			continue;
		pi->procs = xp_malloc(pi->nr_procs * sizeof(*pi->procs));
		pi->maps = xp_malloc(pi->nr_maps * sizeof(*pi->maps));
		pi->max_end = xp_malloc(pi->nr_maps * sizeof(*pi->max_end));
		pi->times = xp_malloc((pi->nr_procs + pi->nr_maps) * sizeof(*pi->times));
		pi->nr_procs = pi->nr_maps = 0;
	}
	/* Fill: pid_slot still finds each pid because its slot stays occupied. */
	for (i = 0; i < p->nr_procs; i++) {
		pi = pid_slot(idx, p->procs[i].pid);
		pi->procs[pi->nr_procs] = i;
		pi->times[pi->nr_procs + pi->nr_maps] = p->procs[i].t;
		pi->nr_procs++;
	}
	for (i = 0; i < p->nr_maps; i++) {
		pi = pid_slot(idx, p->maps[i].pid);
		pi->maps[pi->nr_maps] = i;
		pi->times[pi->nr_procs + pi->nr_maps] = p->maps[i].t;
		pi->nr_maps++;
	}
	index_jit_times(p);
	for (j = 0; j < idx->pid_cap; j++) {
		pi = &idx->pids[j];
		if (!pi->nr_procs && !pi->nr_maps)
			continue;
		xp_sort_r(pi->procs, pi->nr_procs, sizeof(*pi->procs), cmp_proc_idx, p);
		xp_sort_r(pi->maps, pi->nr_maps, sizeof(*pi->maps), cmp_map_idx, p);
		pi->nr_times = pi->nr_procs + pi->nr_maps + pi->nr_jit;
		xp_sort(pi->times, pi->nr_times, sizeof(*pi->times), cmp_u64);
		for (i = 0; i < pi->nr_maps; i++) {
			uint64_t end = p->maps[pi->maps[i]].end;

			pi->max_end[i] = i && pi->max_end[i - 1] > end ? pi->max_end[i - 1] : end;
		}
	}
}

static int cmp_thread_idx(const void *a, const void *b, void *arg)
{
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	const struct profile_thread *x = &((const struct profile *)arg)->threads[i];
	const struct profile_thread *y = &((const struct profile *)arg)->threads[j];

	if (x->tid != y->tid)
		return CMP(x->tid, y->tid);
	return x->t != y->t ? CMP(x->t, y->t) : CMP(i, j);
}

static void index_threads(struct profile *p)
{
	size_t i;

	p->idx->threads = xp_malloc((p->nr_threads + 1) * sizeof(*p->idx->threads));
	for (i = 0; i < p->nr_threads; i++)
		p->idx->threads[i] = i;
	xp_sort_r(p->idx->threads, p->nr_threads, sizeof(*p->idx->threads), cmp_thread_idx, p);
}

static void build_index(struct profile *p)
{
	p->idx = xp_calloc(1, sizeof(*p->idx));
	index_stacks(p);
	index_istacks(p);
	index_codes(p);
	resolve_samples(p);
	index_pids(p);
	index_threads(p);
}

/* ---- loading ------------------------------------------------------------- */

int profile_read(struct profile *p, FILE *f, const char *name)
{
	struct rd r = {.p = p, .f = f};
	int ret;

	p->name = xp_strdup(name);
	errno = 0;
	ret = read_header(&r);
	if (!ret)
		ret = read_records(&r);
	free(r.buf);
	if (ret)
		return ret;
	build_index(p);
	xp_debug(1, "'%s': %llu records (%llu of unknown types), %zu samples, %zu stacks", p->name,
		 (unsigned long long)p->records, (unsigned long long)p->unknown, p->nr_samples,
		 p->nr_stacks);
	return 0;
}

int profile_load(struct profile *p, const char *path)
{
	FILE *f = fopen(path, "rb");
	int ret;

	if (!f)
		return xp_error("cannot open '%s': %s", path, strerror(errno));
	ret = profile_read(p, f, path);
	fclose(f);
	return ret;
}

int profile_load_mem(struct profile *p, const void *buf, size_t len, const char *name)
{
	static const char empty[1];
	FILE *f;
	int ret;

	/* "r" mode never writes to the buffer; @buf may be NULL when @len is 0. */
	f = fmemopen(buf ? (void *)buf : (void *)empty, len, "rb");
	if (!f)
		return xp_error("cannot read '%s': %s", name, strerror(errno));
	ret = profile_read(p, f, name);
	fclose(f);
	return ret;
}

/* ---- lookups ------------------------------------------------------------- */

const struct profile_process *profile_process_at(const struct profile *p, pid_t pid, uint64_t t)
{
	const struct pid_index *pi = pid_find(p, pid);
	size_t lo;

	if (!pi || !pi->nr_procs)
		return NULL;
	/* First record later than @t; the one before it is the answer. */
	lo = XP_PARTITION_POINT(0, pi->nr_procs, i, p->procs[pi->procs[i]].t <= t);
	return &p->procs[pi->procs[lo ? lo - 1 : 0]];
}

const char *profile_comm(const struct profile *p, pid_t pid, uint64_t t)
{
	const struct profile_process *pr = profile_process_at(p, pid, t);
	const char *slash;
	size_t i;

	if (pr && pr->comm[0])
		return pr->comm;
	if (pr && pr->exe[0]) {
		slash = strrchr(pr->exe, '/');
		return slash && slash[1] ? slash + 1 : pr->exe;
	}
	for (i = 0; i < p->nr_threads; i++)
		if (p->threads[i].tid == pid && p->threads[i].comm[0])
			return p->threads[i].comm;
	return NULL;
}

const char *profile_thread_comm(const struct profile *p, pid_t tid, uint64_t t)
{
	const size_t *order = p->idx ? p->idx->threads : NULL;
	size_t lo, first;
	const struct profile_thread *th;

	if (!order)
		return NULL;
	/* The first record of @tid, then the first of @tid later than @t. */
	first = XP_PARTITION_POINT(0, p->nr_threads, i, p->threads[order[i]].tid < tid);
	lo = XP_PARTITION_POINT(first, p->nr_threads, i,
				p->threads[order[i]].tid == tid && p->threads[order[i]].t <= t);
	if (lo > first)
		th = &p->threads[order[lo - 1]];
	else if (first < p->nr_threads && p->threads[order[first]].tid == tid)
		th = &p->threads[order[first]];
	else
		return NULL;
	return th->comm[0] ? th->comm : NULL;
}

uint64_t profile_epoch(const struct profile *p, pid_t pid, uint64_t t)
{
	const struct pid_index *pi = pid_find(p, pid);
	if (!pi)
		return 0;
	return XP_PARTITION_POINT(0, pi->nr_times, i, pi->times[i] <= t);
}

/* Whether mapping or process record @a was seen after @b (time, then file order). */
static bool is_later(uint64_t at, uint64_t aseq, uint64_t bt, uint64_t bseq)
{
	return at > bt || (at == bt && aseq > bseq);
}

static const struct profile_mapping *find_mapping(const struct profile *p, pid_t pid, uint64_t t,
						  uint64_t addr, int hops)
{
	const struct pid_index *pi = pid_find(p, pid);
	const struct profile_mapping *before = NULL, *after = NULL;
	const struct profile_process *pr;
	uint64_t gen_start = 0, gen_end = UINT64_MAX;
	size_t i, lo;

	if (!pi)
		return NULL;
	/*
	 * The image @t falls in, [gen_start, gen_end): each PROCESS record
	 * starts one, an exec or a new process on a reused pid (a forked child
	 * has no records of its own for what it inherits, and must not find
	 * those of the pid's earlier process).
	 */
	for (i = 0; i < pi->nr_procs; i++) {
		pr = &p->procs[pi->procs[i]];
		if (pr->t <= t)
			gen_start = pr->t;
		else if (pr->t < gen_end)
			gen_end = pr->t;
	}
	/* Mappings starting at or below @addr: the last is maps[lo - 1]. */
	lo = XP_PARTITION_POINT(0, pi->nr_maps, k, p->maps[pi->maps[k]].start <= addr);
	/* Walk down while some mapping so far could still reach @addr. */
	for (i = lo; i-- > 0 && pi->max_end[i] > addr;) {
		const struct profile_mapping *m = &p->maps[pi->maps[i]];

		if (m->end <= addr || m->t < gen_start || m->t >= gen_end)
			continue;
		if (m->t <= t) {
			if (!before || is_later(m->t, m->seq, before->t, before->seq))
				before = m;
		} else if (!after || is_later(after->t, after->seq, m->t, m->seq)) {
			after = m;
		}
	}
	if (before)
		return before;
	/*
	 * A forked child runs its parent's image as of the fork where it has
	 * no mapping of its own yet, before one it made later at the same
	 * place (a library it replaced).  Not a process found by an attach:
	 * what it forked from is not in the file.
	 */
	pr = profile_process_at(p, pid, t);
	if (pr && !(pr->flags & (DF_PROC_EXEC | DF_PROC_ATTACHED)) && pr->ppid > 0 &&
	    pr->ppid != pid && hops < DF_FORK_HOPS_MAX) {
		const struct profile_mapping *inherited =
		    find_mapping(p, pr->ppid, pr->t, addr, hops + 1);

		if (inherited)
			return inherited;
	}
	return after;
}

const struct profile_mapping *profile_find_mapping(const struct profile *p, pid_t pid, uint64_t t,
						   uint64_t addr)
{
	return find_mapping(p, pid, t, addr, 0);
}

bool profile_stat(const struct profile *p, const char *name, uint64_t *value)
{
	size_t i;

	for (i = p->nr_stats; i-- > 0;) {
		if (!strcmp(p->stats[i].name, name)) {
			*value = p->stats[i].value;
			return true;
		}
	}
	return false;
}

const char *profile_meta(const struct profile *p, const char *key)
{
	size_t i;

	for (i = p->nr_metas; i-- > 0;)
		if (!strcmp(p->metas[i].key, key))
			return p->metas[i].value;
	return NULL;
}
