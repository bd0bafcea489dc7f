/* SPDX-License-Identifier: MIT */
/*
 * Interpreter frames (interp.h): CPython's location tables, where runs of
 * frames go in a native stack, the frame reader on canned memory images
 * of a 3.11 and a 3.13 process (laid out by the offsets of their headers
 * and debug offsets), the warnings of a version it does not read and of
 * an image that fakes the debug offsets' cookie, and the way of the
 * frames through the data file (ICODE, ISTACK) into a report's stacks.
 * With XP_WRITE_SEEDS=DIR the images are also written there (how
 * tests/data/interp/NAME.img, the fuzzer's seeds, were made).
 */
#include "interp.h"
#include "aggregate.h"
#include "datafile.h"
#include "profile.h"

#include "interp_image.h"
#include "stderr_capture.h"
#include "t.h"

#include <errno.h>
#include <unistd.h>

/* ---- location tables --------------------------------------------------- */

/*
 * A table of three entries from line 2: units 0-1 short form (line 2),
 * units 2-4 one-line form +1 (line 3), unit 5 long form +2 (line 5),
 * unit 6 no location.
 */
static const uint8_t table[] = {
    0x81, 0x05,			  /* code 0, 2 units, column */
    0xda, 0x01, 0x02,		  /* code 11, 3 units, columns */
    0xf0, 0x04, 0x00, 0x01, 0x02, /* code 14, 1 unit: +2 (svarint 4), end 0, cols */
    0xf8,			  /* code 15, 1 unit: none */
};

static int test_line_table(void)
{
	T_EQ_U64(interp_py_line(table, sizeof(table), 2, 0), 2);
	T_EQ_U64(interp_py_line(table, sizeof(table), 2, 1), 2);
	T_EQ_U64(interp_py_line(table, sizeof(table), 2, 2), 3);
	T_EQ_U64(interp_py_line(table, sizeof(table), 2, 4), 3);
	T_EQ_U64(interp_py_line(table, sizeof(table), 2, 5), 5);
	T_EQ_U64(interp_py_line(table, sizeof(table), 2, 6), 0); /* no location */
	T_EQ_U64(interp_py_line(table, sizeof(table), 2, 7), 0); /* past the end */
	/* A negative delta (svarint 3: -1), and a first byte without its top bit. */
	{
		static const uint8_t neg[] = {0xe8, 0x03, 0xe8, 0x03};
		static const uint8_t bad[] = {0x10, 0x81, 0x05};
		static const uint8_t cut[] = {0xf0, 0x44}; /* a varint that never ends */

		T_EQ_U64(interp_py_line(neg, sizeof(neg), 10, 0), 9);
		T_EQ_U64(interp_py_line(neg, sizeof(neg), 10, 1), 8);
		T_EQ_U64(interp_py_line(bad, sizeof(bad), 4, 0), 0);
		T_EQ_U64(interp_py_line(cut, sizeof(cut), 4, 0), 0);
		T_EQ_U64(interp_py_line(neg, sizeof(neg), 1, 1), 0); /* below line 1 */
	}
	return T_OK;
}

/* ---- placement ----------------------------------------------------------- */

static int test_place(void)
{
	/* Native frames (innermost first) with their stack pointers. */
	static const uint64_t sps[] = {0x1000, 0x1100, 0x1400, 0x1500, 0x1900};
	struct interp_frame f[] = {
	    {1, 3, 0}, {0, 0, 0x1180},		       /* ran in native frame 1 */
	    {2, 4, 0}, {3, 5, 0},      {0, 0, 0x1600}, /* in frame 3 */
	    {4, 1, 0}, {0, 0, 0x9000},		       /* beyond the outermost walked frame */
	};
	uint32_t at[8];

	T_EQ_U64(interp_place(f, 7, sps, 5, at), 0);
	T_EQ_U64(at[0], 1);
	T_EQ_U64(at[2], 3);
	T_EQ_U64(at[3], 3);
	T_EQ_U64(at[5], 5);
	/* A marker below the innermost frame, or runs out of order: nothing is placed. */
	f[1].marker = 0x800;
	T_EQ_U64(interp_place(f, 7, sps, 5, at), (uint64_t)-EINVAL);
	f[1].marker = 0x1950;
	T_EQ_U64(interp_place(f, 7, sps, 5, at), (uint64_t)-EINVAL);
	/* No marker: the run goes with the next one's frame. */
	f[1].marker = 0;
	T_EQ_U64(interp_place(f, 7, sps, 5, at), 0);
	T_EQ_U64(at[0], 3);
	return T_OK;
}

/* ---- canned images ------------------------------------------------------- */

#define TID	  4242
#define RUNTIME	  0x10000ull
#define INTERP	  0x20000ull
#define TSTATE	  0x30000ull
#define CHUNK	  0x40000ull
#define CODES	  0x50000ull
#define TYPE	  0x60000ull
#define STRS	  0x70000ull
#define STACK	  0x7ff000ull
#define STACK_LEN 0x1000u

/* Field offsets of one version, as interp/python.c has them (from the headers). */
struct lay {
	uint64_t rt_head, is_threads, ts_next, ts_interp, ts_native, ts_frame, ts_chunk;
	uint64_t cf_current, cf_previous;
	uint64_t fr_code, fr_previous, fr_ip, fr_owner, fr_size;
	int64_t fr_entry;
	uint64_t co_first, co_file, co_qual, co_table, co_code, us_ascii, tp_name;
};

static const struct lay lay311 = {40, 16, 8,  16, 160, 56,  296, 8,   16,  32, 48,
				  56, 69, 72, 68, 72,  112, 128, 136, 184, 48, 24};

/* 3.13's, as its debug offsets in the image say (and as CPython 3.13.5 has them). */
static const struct lay lay313 = {0x278, 0x1cb0, 0x8,  0x10, 0xa0, 0x48, 0xe8, 0,
				  0,	 0x0,	 0x8,  0x38, 0x46, 0x50, -1,   0x44,
				  0x70,	 0x80,	 0x88, 0xc8, 0x28, 0x18};

/* A compact ASCII str at @at. */
static void put_str(struct img *im, const struct lay *l, uint64_t at, const char *s)
{
	img_put64(im, at + 16, strlen(s));
	/* interned 0, kind 1, compact, ascii, (3.11: ready) */
	img_put32(im, at + 32, 1u << 2 | 1u << 5 | 1u << 6 | 1u << 7);
	img_put(im, at + l->us_ascii, s, strlen(s) + 1);
}

/* A code object at @at: @name in "/src/app.py", @units code units, the table above. */
static void put_code(struct img *im, const struct lay *l, uint64_t at, const char *name,
		     uint32_t first)
{
	uint64_t s = STRS + (at - CODES) * 4;

	img_put64(im, at + 8, TYPE);
	img_put64(im, at + 16, 8);
	img_put32(im, at + l->co_first, first);
	img_put64(im, at + l->co_file, s);
	img_put64(im, at + l->co_qual, s + 0x100);
	img_put64(im, at + l->co_table, s + 0x200);
	put_str(im, l, s, "/src/app.py");
	put_str(im, l, s + 0x100, name);
	img_put64(im, s + 0x200 + 16, sizeof(table));
	img_put(im, s + 0x200 + 32, table, sizeof(table));
}

/* The frame at @at: @code, at code unit @unit, previous @prev, owner, 3.11's entry flag. */
static void put_frame(struct img *im, const struct lay *l, uint64_t at, uint64_t code,
		      unsigned int unit, uint64_t prev, uint8_t owner, uint8_t entry)
{
	img_put64(im, at + l->fr_code, code);
	img_put64(im, at + l->fr_previous, prev);
	img_put64(im, at + l->fr_ip, code ? code + l->co_code + 2 * unit : 0);
	img_put(im, at + l->fr_owner, &owner, 1);
	if (l->fr_entry >= 0)
		img_put(im, at + (uint64_t)l->fr_entry, &entry, 1);
}

/* What both images share: the runtime's list, the thread, its code objects. */
static void put_common(struct img *im, const struct lay *l)
{
	img_region(im, RUNTIME, 0x1000);
	img_region(im, INTERP, 0x2000);
	img_region(im, TSTATE, 0x400);
	img_region(im, CHUNK, 0x400);
	img_region(im, CODES, 0x400);
	img_region(im, TYPE, 0x100);
	img_region(im, STRS, 0x1000);
	img_region(im, STACK, STACK_LEN);
	img_put64(im, RUNTIME + l->rt_head, INTERP);
	img_put64(im, INTERP + l->is_threads, TSTATE);
	img_put64(im, TSTATE + l->ts_interp, INTERP);
	img_put64(im, TSTATE + l->ts_native, TID);
	img_put64(im, TSTATE + l->ts_chunk, CHUNK);
	img_put64(im, TYPE + l->tp_name, TYPE + 0x80);
	img_put(im, TYPE + 0x80, "code", 5);
	put_code(im, l, CODES, "fib", 2);
	put_code(im, l, CODES + 0x100, "main", 10);
	put_code(im, l, CODES + 0x200, "<module>", 1);
	im->tid = TID;
	im->runtime = RUNTIME;
	im->stack_addr = STACK;
	im->stack_len = STACK_LEN;
}

/*
 * 3.11: fib (line 3) ran by the loop whose _PyCFrame is at STACK + 0x100;
 * main and <module> by the outer one at STACK + 0x800.
 */
static void make311(struct img *im)
{
	const struct lay *l = &lay311;

	memset(im, 0, sizeof(*im));
	put_common(im, l);
	im->version = 0x030b02f0;
	img_put64(im, TSTATE + l->ts_frame, STACK + 0x100);
	img_put64(im, STACK + 0x100 + l->cf_current, CHUNK + 0x200);
	img_put64(im, STACK + 0x100 + l->cf_previous, STACK + 0x800);
	img_put64(im, STACK + 0x800 + l->cf_previous, TSTATE + 0x300);
	put_frame(im, l, CHUNK + 0x18, CODES + 0x200, 0, 0, 0, 1);
	put_frame(im, l, CHUNK + 0x100, CODES + 0x100, 5, CHUNK + 0x18, 0, 0);
	put_frame(im, l, CHUNK + 0x200, CODES, 3, CHUNK + 0x100, 0, 1);
}

/* 3.13's _Py_DebugOffsets words (the layout of Include/internal/pycore_runtime.h). */
static void put_debug313(struct img *im, const struct lay *l)
{
	uint64_t w[73] = {0};

	memcpy(w, "xdebugpy", 8);
	w[1] = im->version;
	w[3] = 0x452f0, w[5] = l->rt_head;
	w[6] = 0x2f998, w[8] = 0x1c60, w[9] = l->is_threads;
	w[19] = 0x130, w[21] = l->ts_next, w[22] = l->ts_interp, w[23] = l->ts_frame;
	w[25] = l->ts_native, w[26] = l->ts_chunk;
	w[28] = l->fr_size, w[29] = l->fr_previous, w[30] = l->fr_code, w[31] = l->fr_ip;
	w[33] = l->fr_owner;
	w[34] = 0xd0, w[35] = l->co_file, w[37] = l->co_qual, w[38] = l->co_table;
	w[39] = l->co_first, w[43] = l->co_code;
	w[45] = 8, w[46] = 0x1a0, w[47] = l->tp_name;
	w[64] = 0x28, w[65] = 0x10, w[66] = 0x20;
	w[67] = 0x40, w[68] = 0x20, w[69] = 0x10, w[70] = l->us_ascii;
	img_put(im, RUNTIME, w, sizeof(w));
}

/* 3.13: fib, an entry frame on the C stack, main and <module>, the outermost entry frame. */
static void make313(struct img *im)
{
	const struct lay *l = &lay313;

	memset(im, 0, sizeof(*im));
	put_common(im, l);
	im->version = 0x030d05f0;
	put_debug313(im, l);
	img_put64(im, TSTATE + l->ts_frame, CHUNK + 0x200);
	put_frame(im, l, STACK + 0x900, 0, 0, 0, 3, 0);
	put_frame(im, l, CHUNK + 0x18, CODES + 0x200, 0, STACK + 0x900, 0, 0);
	put_frame(im, l, CHUNK + 0x100, CODES + 0x100, 5, CHUNK + 0x18, 0, 0);
	put_frame(im, l, STACK + 0x200, 0, 0, CHUNK + 0x100, 3, 0);
	put_frame(im, l, CHUNK + 0x200, CODES, 3, STACK + 0x200, 0, 0);
}

static void write_seed(const struct img *im, const char *name)
{
	const char *dir = getenv("XP_WRITE_SEEDS");
	char path[512];
	FILE *f;

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (f) {
		img_write(im, f);
		fclose(f);
	}
}

/* Read the thread of @im; the decoded frames into @out (16 at most).  How many, or -1. */
static int read_image(struct img *im, struct interp_frame *out, uint32_t *next_id,
		      struct interp **ipp)
{
	struct interp_mem mem = {img_read, im, STACK, img_at(im, STACK, STACK_LEN), STACK_LEN};
	struct interp_raw_frame rf[16];
	struct interp_raw raw = {rf, 0, 16, 0, 0};
	struct interp *ip = interp_python_open(&mem, im->runtime, im->version, 1, next_id);

	*ipp = ip;
	if (!ip || interp_take(ip, (pid_t)im->tid, &mem, &raw))
		return -1;
	return (int)interp_decode(ip, &raw, &mem, 1, 1, out, 16);
}

/* The frames of both images: the same functions, lines and boundaries. */
static int check_frames(struct interp *ip, const struct interp_frame *f, int n, uint64_t m0,
			uint64_t m1)
{
	T_EQ_U64(n, 5);
	T_EQ_STR(interp_code(ip, f[0].code)->name, "fib");
	T_EQ_STR(interp_code(ip, f[0].code)->file, "/src/app.py");
	T_EQ_U64(interp_code(ip, f[0].code)->first_line, 2);
	T_EQ_U64(f[0].line, 3);
	T_EQ_U64(f[1].code, 0);
	T_EQ_U64(f[1].marker, m0);
	T_EQ_STR(interp_code(ip, f[2].code)->name, "main");
	T_EQ_U64(f[2].line, 13); /* unit 5: the long entry, +2 from line 11 */
	T_EQ_STR(interp_code(ip, f[3].code)->name, "<module>");
	T_EQ_U64(f[3].line, 1);
	T_EQ_U64(f[4].code, 0);
	T_EQ_U64(f[4].marker, m1);
	return T_OK;
}

static int test_reader_311(void)
{
	struct interp_frame f[16];
	uint32_t next = 1;
	struct interp *ip;
	struct img im;
	int n, ret;

	make311(&im);
	write_seed(&im, "py311.img");
	n = read_image(&im, f, &next, &ip);
	T_ASSERT(ip);
	ret = check_frames(ip, f, n, STACK + 0x100, STACK + 0x800);
	/* A thread of another tid has no frames. */
	interp_free(ip);
	im.tid = TID + 1;
	T_EQ_U64(read_image(&im, f, &next, &ip), 0);
	interp_free(ip);
	img_free(&im);
	return ret;
}

static int test_reader_313(void)
{
	struct interp_frame f[16];
	uint32_t next = 1;
	struct interp *ip;
	struct img im;
	int n, ret;

	make313(&im);
	write_seed(&im, "py313.img");
	n = read_image(&im, f, &next, &ip);
	T_ASSERT(ip);
	ret = check_frames(ip, f, n, STACK + 0x200, STACK + 0x900);
	interp_free(ip);
	img_free(&im);
	return ret;
}

/* A code object replaced at its address is named afresh, under a new id. */
static int test_reader_code_reused(void)
{
	struct interp_mem mem;
	struct interp_raw_frame rf[16];
	struct interp_raw raw = {rf, 0, 16, 0, 0};
	struct interp_frame f[16];
	uint32_t next = 1, first;
	struct interp *ip;
	struct img im;

	make311(&im);
	mem = (struct interp_mem){img_read, &im, STACK, img_at(&im, STACK, STACK_LEN), STACK_LEN};
	ip = interp_python_open(&mem, im.runtime, im.version, 1, &next);
	T_ASSERT(ip);
	T_EQ_U64(interp_take(ip, TID, &mem, &raw), 0);
	T_EQ_U64(interp_decode(ip, &raw, &mem, 10, 10, f, 16), 5);
	first = f[0].code;
	/* Checked at 10: a sample of 5 needs no read; one of 20 is checked, and still fib. */
	T_EQ_U64(interp_decode(ip, &raw, &mem, 20, 20, f, 16), 5);
	T_EQ_U64(f[0].code, first);
	/* Another object at fib's address: a sample taken after the last check names it. */
	put_str(&im, &lay311, STRS + 0x100, "fob");
	img_put64(&im, CODES + lay311.co_qual, STRS + 0x300);
	put_str(&im, &lay311, STRS + 0x300, "fob");
	T_EQ_U64(interp_decode(ip, &raw, &mem, 15, 30, f, 16), 5);
	T_EQ_U64(f[0].code, first); /* taken at 15, before the check at 20 */
	T_EQ_U64(interp_decode(ip, &raw, &mem, 30, 40, f, 16), 5);
	T_ASSERT(f[0].code != first);
	T_EQ_STR(interp_code(ip, f[0].code)->name, "fob");
	T_EQ_STR(interp_code(ip, first)->name, "fib"); /* kept for the stacks that have it */
	interp_free(ip);
	img_free(&im);
	return T_OK;
}

/* A version it does not read, and a runtime that fakes the debug offsets: a warning, no reader. */
static int test_reader_refuses(void)
{
	struct interp_mem mem;
	uint32_t next = 1;
	const char *err;
	struct img im;
	uint64_t junk = 1ull << 40;

	make313(&im);
	mem = (struct interp_mem){img_read, &im, 0, NULL, 0};
	cap_begin();
	T_ASSERT(!interp_python_open(&mem, im.runtime, 0x030f00f0, 7, &next));
	err = cap_end();
	T_ASSERT(strstr(err, "runs Python 3.15, whose frames xprof does not read"));
	T_ASSERT(strstr(err, "native frames only"));
	/* The cookie and the version, then offsets beyond the sizes they give. */
	img_put(&im, RUNTIME + 26 * 8, &junk, 8); /* datastack_chunk */
	write_seed(&im, "py313-fake.img");
	cap_begin();
	T_ASSERT(!interp_python_open(&mem, im.runtime, im.version, 7, &next));
	err = cap_end();
	T_ASSERT(strstr(err, "do not fit the sizes they give"));
	img_free(&im);
	/*
	 * Fields inside the sizes given but beyond what is read of each object:
	 * a code object's past its header (co_code), a str's past PyASCIIObject.
	 */
	{
		static const struct {
			unsigned int word;
			uint64_t v;
			const char *seed;
		} past[][2] = {
		    {{34, 0x400, "py313-code-past.img"}, {35, 0x200, NULL}},
		    {{67, 0x400, "py313-str-past.img"}, {69, 0x100, NULL}},
		};
		size_t i;

		for (i = 0; i < sizeof(past) / sizeof(past[0]); i++) {
			make313(&im);
			img_put64(&im, RUNTIME + past[i][0].word * 8, past[i][0].v);
			img_put64(&im, RUNTIME + past[i][1].word * 8, past[i][1].v);
			write_seed(&im, past[i][0].seed);
			cap_begin();
			T_ASSERT(!interp_python_open(&mem, im.runtime, im.version, 7, &next));
			err = cap_end();
			T_ASSERT(strstr(err, "do not fit the sizes they give"));
			img_free(&im);
		}
	}
	make313(&im);
	/* No cookie at all. */
	img_put(&im, RUNTIME, "xdebugpz", 8);
	cap_begin();
	T_ASSERT(!interp_python_open(&mem, im.runtime, im.version, 7, &next));
	err = cap_end();
	T_ASSERT(strstr(err, "does not start with the debug offsets"));
	img_free(&im);
	return T_OK;
}

/* ---- through the data file ------------------------------------------------- */

static char tmp_path[64];

/* Native A (leaf), the loop L running fib and main, B, and one frame beyond the walk. */
static int write_mixed(const char *path)
{
	static const uint64_t pcs[] = {0xa0, 0, 0, 0x100, 0xb0, 0};
	static const uint8_t flags[] = {XP_FRAME_EXACT, XP_FRAME_INTERP, XP_FRAME_INTERP, 0, 0,
					XP_FRAME_INTERP};
	uint64_t p[6];
	struct df_writer *w = df_writer_open(path, 62, 0);

	if (!w)
		return -1;
	memcpy(p, pcs, sizeof(p));
	p[1] = xp_interp_pc(2, 7);
	p[2] = xp_interp_pc(1, 3);
	p[5] = xp_interp_pc(9, 0);
	if (df_write_icode(w, 1, 1, 1, "main", "/src/app.py") ||
	    df_write_icode(w, 2, 1, 5, "fib", "/src/pkg/__init__.py") ||
	    df_write_icode(w, 2, 1, 5, "fib", "/src/pkg/__init__.py") ||
	    df_write_stack(w, 5, p, flags, 6) || df_write_sample(w, 10, 100, 100, 5, 1))
		return -1;
	return df_writer_close(w);
}

static const char *stack_text(const struct agg *a, char *buf, size_t len)
{
	const struct agg_stack *s = &a->stacks[0];
	size_t n = 0;
	uint32_t i;

	buf[0] = 0;
	for (i = 0; i < s->nr; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ";" : "",
				      a->names[s->frames[i]]);
	return buf;
}

static int test_data_roundtrip(void)
{
	struct agg_opts ao = {0};
	struct profile p;
	struct agg a;
	char buf[512];
	int fd;

	strcpy(tmp_path, "/tmp/xprof-test-interp-XXXXXX");
	fd = mkstemp(tmp_path);
	T_ASSERT(fd >= 0);
	close(fd);
	T_EQ_U64(write_mixed(tmp_path), 0);
	profile_init(&p);
	T_EQ_U64(profile_load(&p, tmp_path), 0);
	unlink(tmp_path);
	T_EQ_U64(p.nr_codes, 2); /* the repeated one was not written */
	T_EQ_U64(p.nr_stacks, 1);
	T_EQ_U64(p.stacks[0].nr, 3); /* the native frames alone */
	T_EQ_U64(p.stacks[0].pcs[1], 0x100);
	T_EQ_U64(p.stacks[0].nr_interp, 3);
	T_EQ_U64(p.stacks[0].interp[0].at, 1);
	T_EQ_U64(p.stacks[0].interp[0].code, 2);
	T_EQ_U64(p.stacks[0].interp[0].line, 7);
	T_EQ_U64(p.stacks[0].interp[1].code, 1);
	T_EQ_U64(p.stacks[0].interp[2].at, 3);
	T_EQ_STR(profile_code_by_id(&p, 2)->file, "/src/pkg/__init__.py");

	agg_init(&a);
	agg_build_opts(&a, &p, &ao, NULL, NULL);
	T_EQ_STR(stack_text(&a, buf, sizeof(buf)),
		 "[unknown];0xb0;main (app.py:3);fib (pkg/__init__.py:7);0xa0");
	T_ASSERT(agg_iname(&a, a.stacks[0].frames[2]));
	T_EQ_STR(a.names[agg_iname(&a, a.stacks[0].frames[2])->func], "main");
	T_ASSERT(!agg_iname(&a, a.stacks[0].frames[1]));
	agg_release(&a);
	agg_init(&a);
	ao.interp = AGG_INTERP_BESIDE;
	agg_build_opts(&a, &p, &ao, NULL, NULL);
	T_EQ_STR(stack_text(&a, buf, sizeof(buf)),
		 "[unknown];0xb0;0x100;main (app.py:3);fib (pkg/__init__.py:7);0xa0");
	agg_release(&a);
	agg_init(&a);
	ao.interp = AGG_INTERP_NATIVE;
	agg_build_opts(&a, &p, &ao, NULL, NULL);
	T_EQ_STR(stack_text(&a, buf, sizeof(buf)), "0xb0;0x100;0xa0");
	agg_release(&a);
	profile_release(&p);
	return T_OK;
}

T_MAIN(T_CASE(test_line_table), T_CASE(test_place), T_CASE(test_reader_311),
       T_CASE(test_reader_313), T_CASE(test_reader_code_reused), T_CASE(test_reader_refuses),
       T_CASE(test_data_roundtrip))
