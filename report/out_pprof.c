/* SPDX-License-Identifier: MIT */
/*
 * pprof's profile.proto (github.com/google/pprof, proto/profile.proto),
 * encoded by hand and gzipped as pprof expects on disk.  Two values per
 * sample: samples/count and cpu/nanoseconds (wall/nanoseconds for --mode
 * wall), the weights; the period is the sampling period asked for.  Each
 * recorded pc is a Location in the Mapping it fell in, with one Line per
 * function (several when inlined, innermost first), each with its source
 * line (an inlined function's caller: the line of the call) and its
 * Function with the source file, so 'pprof -top', '-lines', '-tree',
 * '-traces', '-list' and '-peek' all work without access to the binaries
 * (has_functions is set: pprof does not symbolize again).  The
 * string table starts with "" as the format demands.  This is the only
 * file that includes zlib's header.
 */
#include "out.h"
#include "aggregate.h"
#include "err.h"
#include "hash.h"
#include "profile.h"
#include "version.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* Wire types (protobuf encoding, "Message Structure"). */
#define PB_VARINT 0
#define PB_LEN	  2

/* Field numbers of profile.proto. */
enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,
	VALUETYPE_TYPE = 1,
	VALUETYPE_UNIT = 2,
	SAMPLE_LOCATION_ID = 1,
	SAMPLE_VALUE = 2,
	MAPPING_ID = 1,
	MAPPING_MEMORY_START = 2,
	MAPPING_MEMORY_LIMIT = 3,
	MAPPING_FILE_OFFSET = 4,
	MAPPING_FILENAME = 5,
	MAPPING_BUILD_ID = 6,
	MAPPING_HAS_FUNCTIONS = 7,
	LOCATION_ID = 1,
	LOCATION_MAPPING_ID = 2,
	LOCATION_ADDRESS = 3,
	LOCATION_LINE = 4,
	LINE_FUNCTION_ID = 1,
	LINE_LINE = 2,
	FUNCTION_ID = 1,
	FUNCTION_NAME = 2,
	FUNCTION_SYSTEM_NAME = 3,
	FUNCTION_FILENAME = 4,
	FUNCTION_START_LINE = 5,
};

/* A growing buffer of encoded bytes. */
struct pb {
	uint8_t *b;
	size_t len;
	unsigned long alloc;
};

static void pb_put(struct pb *pb, const void *data, size_t len)
{
	if (!len)
		return; /* @data may be NULL then */
	xp_grow((void **)&pb->b, &pb->alloc, pb->len + len + 1, 1);
	memcpy(pb->b + pb->len, data, len);
	pb->len += len;
}

static void pb_varint(struct pb *pb, uint64_t v)
{
	uint8_t buf[10];
	size_t n = 0;

	do {
		buf[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v)
			buf[n] |= 0x80;
		n++;
	} while (v);
	pb_put(pb, buf, n);
}

static void pb_key(struct pb *pb, unsigned int field, unsigned int wire)
{
	pb_varint(pb, (uint64_t)field << 3 | wire);
}

/* A scalar field; proto3 leaves out zeros, and so do we. */
static void pb_uint(struct pb *pb, unsigned int field, uint64_t v)
{
	if (!v)
		return;
	pb_key(pb, field, PB_VARINT);
	pb_varint(pb, v);
}

static void pb_bytes(struct pb *pb, unsigned int field, const void *data, size_t len)
{
	pb_key(pb, field, PB_LEN);
	pb_varint(pb, len);
	pb_put(pb, data, len);
}

/* An embedded message, encoded in @sub (which is then emptied for reuse). */
static void pb_msg(struct pb *pb, unsigned int field, struct pb *sub)
{
	pb_bytes(pb, field, sub->b, sub->len);
	sub->len = 0;
}

/* A packed repeated integer field. */
static void pb_packed(struct pb *pb, unsigned int field, const uint64_t *v, size_t n,
		      struct pb *scratch)
{
	size_t i;

	for (i = 0; i < n; i++)
		pb_varint(scratch, v[i]);
	pb_msg(pb, field, scratch);
}

struct pprof {
	struct pb samples, main_maps, maps, locs, funcs; /* repeated fields of Profile */
	/* Scratch for the message being encoded, one per kind so that they nest. */
	struct pb fn_buf, map_buf, line_buf, lines_buf, loc_buf, tmp, tmp2;
	/* The string table, "" first; strings borrowed or owned (@owned). */
	const char **strs;
	bool *owned;
	size_t nr_strs;
	unsigned long alloc_strs, alloc_owned;
	uint64_t *name_str; /* by name id: string index, 0 = none yet */
	uint64_t *func_of;  /* by name id: function id, 0 = none yet */
	/* Interpreter functions by (name id, file id) << 32 | ...: open addressing, 0 = empty. */
	uint64_t *ifunc_keys, *ifunc_ids;
	size_t ifunc_cap, nr_ifuncs;
	uint64_t *loc_of; /* by agg location id (by name id without locations): location id */
	uint64_t nr_funcs, nr_loc_ids;
	const struct profile_mapping *
	    *map_keys; /* open addressing: mapping id = slot's index + 1 */
	uint64_t *map_ids;
	size_t map_cap, nr_maps;
	uint64_t *ids; /* location ids of the sample being built */
	unsigned long alloc_ids;
};

static uint64_t str_add(struct pprof *pp, const char *s, bool owned)
{
	xp_grow((void **)&pp->strs, &pp->alloc_strs, pp->nr_strs + 1, sizeof(*pp->strs));
	xp_grow((void **)&pp->owned, &pp->alloc_owned, pp->nr_strs + 1, sizeof(*pp->owned));
	pp->strs[pp->nr_strs] = s;
	pp->owned[pp->nr_strs] = owned;
	return pp->nr_strs++;
}

/* A fixed string: few of them, so a linear search is enough. */
static uint64_t str_fixed(struct pprof *pp, const char *s)
{
	size_t i;

	for (i = 0; i < pp->nr_strs; i++)
		if (!pp->owned[i] && !strcmp(pp->strs[i], s))
			return i;
	return str_add(pp, s, false);
}

static uint64_t str_name(struct pprof *pp, const struct out *o, uint32_t name)
{
	if (!pp->name_str[name])
		pp->name_str[name] = str_add(pp, o->info.names[name], false);
	return pp->name_str[name];
}

/* A new Function: @name, from source file @file (a name id, or AGG_NONE), starting at @start. */
static uint64_t func_new(struct pprof *pp, const struct out *o, uint32_t name, uint32_t file,
			 uint32_t start)
{
	uint64_t s = str_name(pp, o, name);

	pb_uint(&pp->fn_buf, FUNCTION_ID, ++pp->nr_funcs);
	pb_uint(&pp->fn_buf, FUNCTION_NAME, s);
	pb_uint(&pp->fn_buf, FUNCTION_SYSTEM_NAME, s);
	if (file != AGG_NONE)
		pb_uint(&pp->fn_buf, FUNCTION_FILENAME, str_name(pp, o, file));
	pb_uint(&pp->fn_buf, FUNCTION_START_LINE, start);
	pb_msg(&pp->funcs, PROFILE_FUNCTION, &pp->fn_buf);
	return pp->nr_funcs;
}

/*
 * The function of an interpreter frame: its bare name in its file (the
 * label, "fib (app.py:3)", also says the line, which is the Line's), one
 * Function for all the lines of one function.
 */
static uint64_t ifunc_id(struct pprof *pp, const struct out *o, const struct agg_iname *in)
{
	uint64_t key = (uint64_t)in->func << 32 | in->file, *keys;
	size_t j, i, cap;

	if ((pp->nr_ifuncs + 1) * 2 > pp->ifunc_cap) {
		keys = pp->ifunc_keys;
		uint64_t *ids = pp->ifunc_ids;

		cap = pp->ifunc_cap;
		pp->ifunc_cap = cap ? cap * 2 : 64;
		pp->ifunc_keys = xp_calloc(pp->ifunc_cap, sizeof(*pp->ifunc_keys));
		pp->ifunc_ids = xp_calloc(pp->ifunc_cap, sizeof(*pp->ifunc_ids));
		for (i = 0; i < cap; i++) {
			if (!ids[i])
				continue;
			for (j = xp_mix64(keys[i]) & (pp->ifunc_cap - 1); pp->ifunc_ids[j];
			     j = (j + 1) & (pp->ifunc_cap - 1))
				;
			pp->ifunc_keys[j] = keys[i];
			pp->ifunc_ids[j] = ids[i];
		}
		free(keys);
		free(ids);
	}
	for (j = xp_mix64(key) & (pp->ifunc_cap - 1); pp->ifunc_ids[j];
	     j = (j + 1) & (pp->ifunc_cap - 1))
		if (pp->ifunc_keys[j] == key)
			return pp->ifunc_ids[j];
	pp->ifunc_keys[j] = key;
	pp->ifunc_ids[j] = func_new(pp, o, in->func, in->file, in->first_line);
	pp->nr_ifuncs++;
	return pp->ifunc_ids[j];
}

/* The function named @name, defined with source file @file (a name id, or AGG_NONE) when new. */
static uint64_t func_id(struct pprof *pp, const struct out *o, uint32_t name, uint32_t file)
{
	const struct agg_iname *in = agg_iname(o->info.agg, name);

	if (in)
		return ifunc_id(pp, o, in);
	if (!pp->func_of[name])
		pp->func_of[name] = func_new(pp, o, name, file, 0);
	return pp->func_of[name];
}

static void map_grow(struct pprof *pp)
{
	const struct profile_mapping **keys = pp->map_keys;
	uint64_t *ids = pp->map_ids;
	size_t cap = pp->map_cap, i, j;

	pp->map_cap = cap ? cap * 2 : 64;
	pp->map_keys = xp_calloc(pp->map_cap, sizeof(*pp->map_keys));
	pp->map_ids = xp_calloc(pp->map_cap, sizeof(*pp->map_ids));
	for (i = 0; i < cap; i++) {
		if (!keys[i])
			continue;
		j = ((uintptr_t)keys[i] >> 4) * 0x9e3779b97f4a7c15ull >> 20 & (pp->map_cap - 1);
		while (pp->map_keys[j])
			j = (j + 1) & (pp->map_cap - 1);
		pp->map_keys[j] = keys[i];
		pp->map_ids[j] = ids[i];
	}
	free(keys);
	free(ids);
}

static uint64_t mapping_id(struct pprof *pp, const struct out *o, const struct profile_mapping *m)
{
	const char *exe = o->info.opts->exe;
	char *hex;
	size_t j, i;

	if (!m)
		return 0;
	if ((pp->nr_maps + 1) * 2 > pp->map_cap)
		map_grow(pp);
	j = ((uintptr_t)m >> 4) * 0x9e3779b97f4a7c15ull >> 20 & (pp->map_cap - 1);
	for (; pp->map_keys[j]; j = (j + 1) & (pp->map_cap - 1))
		if (pp->map_keys[j] == m)
			return pp->map_ids[j];
	pp->map_keys[j] = m;
	pp->map_ids[j] = ++pp->nr_maps;
	pb_uint(&pp->map_buf, MAPPING_ID, pp->nr_maps);
	pb_uint(&pp->map_buf, MAPPING_MEMORY_START, m->start);
	pb_uint(&pp->map_buf, MAPPING_MEMORY_LIMIT, m->end);
	pb_uint(&pp->map_buf, MAPPING_FILE_OFFSET, m->offset);
	pb_uint(&pp->map_buf, MAPPING_FILENAME, str_add(pp, m->path, false));
	if (m->build_id_len) {
		hex = xp_malloc(2 * (size_t)m->build_id_len + 1);
		for (i = 0; i < m->build_id_len; i++)
			snprintf(hex + 2 * i, 3, "%02x", m->build_id[i]);
		pb_uint(&pp->map_buf, MAPPING_BUILD_ID, str_add(pp, hex, true));
	} else if (m->file_id.kind == XP_FILE_ID_GO && m->file_id.len) {
		/* As Go's own profiles carry it: the text of the Go build ID. */
		hex = xp_malloc((size_t)m->file_id.len + 1);
		memcpy(hex, m->file_id.bytes, m->file_id.len);
		hex[m->file_id.len] = 0;
		pb_uint(&pp->map_buf, MAPPING_BUILD_ID, str_add(pp, hex, true));
	}
	pb_uint(&pp->map_buf, MAPPING_HAS_FUNCTIONS, 1);
	/* pprof takes the first mapping for the main program. */
	pb_msg(exe && !strcmp(m->path, exe) ? &pp->main_maps : &pp->maps, PROFILE_MAPPING,
	       &pp->map_buf);
	return pp->nr_maps;
}

/*
 * The location of frames @first..@last of @s (one pc: the outermost
 * frame, then those inlined into it), defined the first time it is met.
 */
static uint64_t location_id(struct pprof *pp, const struct out *o, const struct agg_stack *s,
			    uint32_t first, uint32_t last)
{
	const struct agg_loc *l = NULL;
	uint32_t key = s->frames[first], i;
	uint64_t *slot;

	if (s->locs) {
		key = s->locs[first] & ~AGG_LOC_INLINED;
		l = &o->info.agg->locs[key];
	}
	slot = &pp->loc_of[key];
	if (*slot)
		return *slot;
	*slot = ++pp->nr_loc_ids;
	/*
	 * Lines innermost first: the last one is the function the others
	 * were inlined into.  Each with its source line (an inlined
	 * function's caller: the line of the call), as pprof -lines shows.
	 */
	for (i = last + 1; i-- > first;) {
		struct agg_line src = {AGG_NONE, 0};

		if (l && l->nr_lines == last - first + 1)
			src = o->info.agg->lines[l->first_line + (i - first)];
		pb_uint(&pp->line_buf, LINE_FUNCTION_ID, func_id(pp, o, s->frames[i], src.file));
		pb_uint(&pp->line_buf, LINE_LINE, src.line);
		pb_msg(&pp->lines_buf, LOCATION_LINE, &pp->line_buf);
	}
	pb_uint(&pp->loc_buf, LOCATION_ID, *slot);
	if (l) {
		pb_uint(&pp->loc_buf, LOCATION_MAPPING_ID, mapping_id(pp, o, l->map));
		pb_uint(&pp->loc_buf, LOCATION_ADDRESS, l->addr);
	}
	pb_put(&pp->loc_buf, pp->lines_buf.b, pp->lines_buf.len);
	pp->lines_buf.len = 0;
	pb_msg(&pp->locs, PROFILE_LOCATION, &pp->loc_buf);
	return *slot;
}

static int pprof_begin(struct out *o)
{
	const struct agg *a = o->info.agg;
	struct pprof *pp = xp_calloc(1, sizeof(*pp));

	str_add(pp, "", false);
	pp->name_str = xp_calloc(o->info.nr_names + 1, sizeof(*pp->name_str));
	pp->func_of = xp_calloc(o->info.nr_names + 1, sizeof(*pp->func_of));
	pp->loc_of = xp_calloc((a->flags & AGG_LOCATIONS ? a->nr_locs : o->info.nr_names) + 1,
			       sizeof(*pp->loc_of));
	o->priv = pp;
	return 0;
}

static int pprof_add(struct out *o, const struct agg_stack *s, uint64_t count, uint64_t weight)
{
	struct pprof *pp = o->priv;
	uint64_t values[2] = {count, weight};
	size_t n = 0;
	uint32_t last = s->nr, first;

	xp_grow((void **)&pp->ids, &pp->alloc_ids, s->nr + 1, sizeof(*pp->ids));
	/* Leaf first; a group of frames from one pc is one location. */
	while (last-- > 0) {
		first = last;
		while (s->locs && first > 0 && s->locs[first] & AGG_LOC_INLINED)
			first--;
		pp->ids[n++] = location_id(pp, o, s, first, last);
		last = first;
	}
	pb_packed(&pp->tmp2, SAMPLE_LOCATION_ID, pp->ids, n, &pp->tmp);
	pb_packed(&pp->tmp2, SAMPLE_VALUE, values, 2, &pp->tmp);
	pb_msg(&pp->samples, PROFILE_SAMPLE, &pp->tmp2);
	return 0;
}

static void value_type(struct pprof *pp, struct pb *out, unsigned int field, const char *type,
		       const char *unit)
{
	pb_uint(&pp->tmp, VALUETYPE_TYPE, str_fixed(pp, type));
	pb_uint(&pp->tmp, VALUETYPE_UNIT, str_fixed(pp, unit));
	pb_msg(out, field, &pp->tmp);
}

/* gzip @len bytes at @data to @f.  0 or -1. */
static int gzip_to(FILE *f, const uint8_t *data, size_t len)
{
	uint8_t buf[65536];
	z_stream z;
	int ret;

	memset(&z, 0, sizeof(z));
	/* 15 + 16: the largest window, with a gzip header and trailer (zlib.h, deflateInit2). */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return -1;
	z.next_in = (Bytef *)data;
	z.avail_in = (uInt)len; /* profiles stay far below 4 GiB */
	do {
		z.next_out = buf;
		z.avail_out = sizeof(buf);
		ret = deflate(&z, Z_FINISH);
		if (ret == Z_STREAM_ERROR)
			break;
		fwrite(buf, 1, sizeof(buf) - z.avail_out, f);
	} while (ret != Z_STREAM_END);
	deflateEnd(&z);
	return ret == Z_STREAM_END ? 0 : -1;
}

static int pprof_end(struct out *o)
{
	const struct out_opts *opts = o->info.opts;
	const char *kind = opts->wall ? "wall" : "cpu";
	struct pprof *pp = o->priv;
	struct pb all = {0};
	struct pb *const bufs[] = {&all,	  &pp->samples,	  &pp->main_maps, &pp->maps,
				   &pp->locs,	  &pp->funcs,	  &pp->fn_buf,	  &pp->map_buf,
				   &pp->line_buf, &pp->lines_buf, &pp->loc_buf,	  &pp->tmp,
				   &pp->tmp2};
	char comment[512];
	size_t i;
	int ret = 0;

	value_type(pp, &all, PROFILE_SAMPLE_TYPE, "samples", "count");
	value_type(pp, &all, PROFILE_SAMPLE_TYPE, kind, "nanoseconds");
	pb_put(&all, pp->samples.b, pp->samples.len);
	pb_put(&all, pp->main_maps.b, pp->main_maps.len);
	pb_put(&all, pp->maps.b, pp->maps.len);
	pb_put(&all, pp->locs.b, pp->locs.len);
	pb_put(&all, pp->funcs.b, pp->funcs.len);
	pb_uint(&all, PROFILE_TIME_NANOS, opts->start_ns);
	pb_uint(&all, PROFILE_DURATION_NANOS, opts->duration_ns);
	value_type(pp, &all, PROFILE_PERIOD_TYPE, kind, "nanoseconds");
	pb_uint(&all, PROFILE_PERIOD, opts->period_ns);
	snprintf(comment, sizeof(comment), "xprof %s%s%s", XPROF_VERSION, opts->title ? ": " : "",
		 opts->title ? opts->title : "");
	pb_uint(&all, PROFILE_COMMENT, str_add(pp, comment, false));
	/* Without weights pprof would show zeros: make the counts the default, as --value samples.
	 */
	pb_uint(&all, PROFILE_DEFAULT_SAMPLE_TYPE,
		str_fixed(pp, o->info.by_count ? "samples" : kind));
	/* Last, once every string is in. */
	for (i = 0; i < pp->nr_strs; i++)
		pb_bytes(&all, PROFILE_STRING_TABLE, pp->strs[i], strlen(pp->strs[i]));
	if (gzip_to(o->f, all.b, all.len))
		ret = -1;
	for (i = 0; i < pp->nr_strs; i++)
		if (pp->owned[i])
			free((char *)pp->strs[i]);
	for (i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
		free(bufs[i]->b);
	XP_FREE_ALL(pp->strs, pp->owned, pp->name_str, pp->func_of, pp->loc_of, pp->map_keys,
		    pp->map_ids, pp->ids, pp->ifunc_keys, pp->ifunc_ids, pp);
	o->priv = NULL;
	return ret;
}

OUT_WRITER(pprof, OUT_BINARY | OUT_LOCATIONS, pprof_begin, pprof_add, pprof_end);
