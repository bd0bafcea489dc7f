/* SPDX-License-Identifier: MIT */
/*
 * The data file writer: exact bytes on disk for a small file (the layout is
 * the contract of doc/data-format.md), stack de-duplication, and the
 * behaviour after a write error (one message, then every call fails fast).
 */
#include "datafile.h"

#include "stderr_capture.h"
#include "t.h"

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

static char tmp_path[64];

static const char *tmp_file(void)
{
	int fd;

	strcpy(tmp_path, "/tmp/xprof-test-df-XXXXXX");
	fd = mkstemp(tmp_path);
	if (fd < 0)
		return NULL;
	close(fd);
	return tmp_path;
}

static size_t slurp(const char *path, uint8_t *buf, size_t max)
{
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f)
		return 0;
	n = fread(buf, 1, max, f);
	fclose(f);
	return n;
}

static int test_writer_bytes(void)
{
	static const uint8_t expect[] = {
	    /* header */
	    'X',
	    'P',
	    'R',
	    'O',
	    'F',
	    'D',
	    'A',
	    'T',
	    1,
	    0,
	    1,
	    0,
	    62,
	    0,
	    24,
	    0, /* */
	    0x88,
	    0x77,
	    0x66,
	    0x55,
	    0x44,
	    0x33,
	    0x22,
	    0x11,
	    /* stack id 7, 2 frames */
	    4,
	    0,
	    0,
	    0,
	    30,
	    0,
	    0,
	    0,
	    7,
	    0,
	    0,
	    0,
	    0,
	    0,
	    0,
	    0,
	    2,
	    0,
	    0,
	    0, /* */
	    0x10,
	    0x32,
	    0x54,
	    0x76,
	    0,
	    0,
	    0,
	    0,
	    0x20,
	    0,
	    0,
	    0,
	    0,
	    0,
	    0,
	    0,
	    1,
	    0,
	    /* sample t=5 pid=100 tid=101 stack=7 weight=1 */
	    5,
	    0,
	    0,
	    0,
	    32,
	    0,
	    0,
	    0,
	    5,
	    0,
	    0,
	    0,
	    0,
	    0,
	    0,
	    0,
	    100,
	    0,
	    0,
	    0,
	    101,
	    0,
	    0,
	    0, /* */
	    7,
	    0,
	    0,
	    0,
	    0,
	    0,
	    0,
	    0,
	    1,
	    0,
	    0,
	    0,
	    0,
	    0,
	    0,
	    0,
	    /* meta "k" = "vv" */
	    9,
	    0,
	    0,
	    0,
	    11,
	    0,
	    0,
	    0,
	    1,
	    0,
	    0,
	    0,
	    'k',
	    2,
	    0,
	    0,
	    0,
	    'v',
	    'v',
	};
	const uint64_t pcs[] = {0x76543210, 0x20};
	const uint8_t flags[] = {1, 0};
	const char *path = tmp_file();
	struct df_writer *w;
	uint8_t buf[512];
	size_t n;

	T_ASSERT(path);
	w = df_writer_open(path, 62, 0x1122334455667788ull);
	T_ASSERT(w);
	T_EQ_U64(df_writer_bytes(w), DF_HEADER_LEN);
	T_EQ_U64(df_write_stack(w, 7, pcs, flags, 2), 0);
	/* The same stack again is not stored twice. */
	T_EQ_U64(df_write_stack(w, 7, pcs, flags, 2), 0);
	T_EQ_U64(df_write_sample_record(w, 5, 100, 101, 7, 1), 0);
	T_EQ_U64(df_write_meta(w, "k", "vv"), 0);
	/* Nothing reaches the file before a flush. */
	T_EQ_U64(slurp(path, buf, sizeof(buf)), DF_HEADER_LEN);
	T_EQ_U64(df_writer_flush(w), 0);
	T_EQ_U64(df_writer_bytes(w), sizeof(expect));
	T_EQ_U64(df_writer_close(w), 0);
	n = slurp(path, buf, sizeof(buf));
	unlink(path);
	T_EQ_U64(n, sizeof(expect));
	T_ASSERT(!memcmp(buf, expect, n));
	return T_OK;
}

static int test_writer_stack_id_reuse(void)
{
	const uint64_t a[] = {1, 2}, b[] = {1, 3};
	const uint8_t flags[] = {0, 0};
	const char *path = tmp_file(), *err;
	struct df_writer *w;
	int r[3];

	T_ASSERT(path);
	w = df_writer_open(path, 62, 0);
	T_ASSERT(w);
	T_EQ_U64(df_write_stack(w, 0, a, flags, 2), 0);
	T_EQ_U64(df_write_stack(w, 0, a, flags, 2), 0);
	cap_begin();
	r[0] = df_write_stack(w, 0, b, flags, 2);
	r[1] = df_write_stack(w, 9, b, flags, 2);
	r[2] = df_write_stack(w, 9, a, flags, 1);
	err = cap_end();
	T_EQ_U64(r[0], (uint64_t)-1);
	T_EQ_U64(r[1], 0);
	T_EQ_U64(r[2], (uint64_t)-1);
	T_ASSERT(strstr(err, "stack id 9 reused for another stack"));
	/* An id conflict is the caller's bug, not a write error: the writer goes on. */
	T_EQ_U64(df_write_sample_record(w, 1, 1, 1, 9, 1), 0);
	T_EQ_U64(df_writer_close(w), 0);
	unlink(path);
	return T_OK;
}

static int test_writer_rejects_bad_input(void)
{
	static char big[DF_MAX_RECORD + 16];
	const uint8_t id[DF_BUILD_ID_MAX + 1] = {0};
	const char *path = tmp_file(), *err;
	struct df_writer *w;
	int r[9];

	T_ASSERT(path);
	w = df_writer_open(path, 62, 0);
	T_ASSERT(w);
	memset(big, 'a', sizeof(big) - 1);
	cap_begin();
	r[0] = df_write_mapping(w, 0, 1, 0x2000, 0x1000, 0, 5, "/x", NULL, 0);
	r[1] = df_write_mapping(w, 0, 1, 0x1000, 0x2000, 0, 5, "/x", id, sizeof(id));
	r[2] = df_write_meta(w, "k", big);
	r[3] = df_write_meta(w, NULL, NULL);
	r[6] = df_write_jitline(w, 1, 0x2000, 0x2000, "f.js", 1);
	r[7] = df_write_vdso(w, big, 0);
	r[8] = df_write_vdso(w, big, DF_VDSO_MAX + 1);
	r[4] = df_writer_close(w);
	r[5] = df_writer_open("/nonexistent-dir/xprof.data", 62, 0) != NULL;
	err = cap_end();
	unlink(path);
	T_EQ_U64(r[0], (uint64_t)-1);
	T_EQ_U64(r[1], (uint64_t)-1);
	T_EQ_U64(r[2], (uint64_t)-1);
	T_EQ_U64(r[3], 0);
	T_EQ_U64(r[4], 0);
	T_EQ_U64(r[5], 0);
	T_EQ_U64(r[6], (uint64_t)-1);
	T_EQ_U64(r[7], (uint64_t)-1);
	T_EQ_U64(r[8], (uint64_t)-1);
	T_EQ_U64(cap_lines(err), 7);
	T_ASSERT(strstr(err, "JIT line range 0x2000-0x2000 of pid 1 is empty"));
	T_ASSERT(strstr(err, "a [vdso] image of 0 bytes"));
	T_ASSERT(strstr(err, "cannot create '/nonexistent-dir/xprof.data': No such file"));
	T_EQ_U64(df_writer_close(NULL), 0);
	return T_OK;
}

/* A full disk (here: RLIMIT_FSIZE) gives one error, then every call fails fast. */
static int test_writer_write_error_latches(void)
{
	struct rlimit old, lim;
	const char *path = tmp_file(), *err;
	struct df_writer *w;
	int i, ok = 1;

	T_ASSERT(path);
	w = df_writer_open(path, 62, 0);
	T_ASSERT(w);
	T_ASSERT(!getrlimit(RLIMIT_FSIZE, &old));
	lim = old;
	lim.rlim_cur = 100;
	signal(SIGXFSZ, SIG_IGN);
	T_ASSERT(!setrlimit(RLIMIT_FSIZE, &lim));
	cap_begin();
	for (i = 0; i < 10; i++)
		ok &= df_write_sample_record(w, (uint64_t)i, 1, 1, 0, 1) == 0;
	ok &= df_writer_flush(w) == -1;
	ok &= df_write_sample_record(w, 11, 1, 1, 0, 1) == -1;
	ok &= df_write_stack(w, 1, NULL, NULL, 0) == -1;
	ok &= df_writer_flush(w) == -1;
	ok &= df_writer_close(w) == -1;
	err = cap_end();
	setrlimit(RLIMIT_FSIZE, &old);
	unlink(path);
	T_ASSERT(ok);
	T_EQ_U64(cap_lines(err), 1);
	T_ASSERT(strstr(err, "xprof: error: cannot write '/tmp/xprof-test-df-"));
	T_ASSERT(strstr(err, "': File too large\n"));
	return T_OK;
}

/* df_writer_open (tools and tests) starts @path afresh: what was there is gone. */
static int test_writer_open_truncates(void)
{
	const char *path = tmp_file();
	uint8_t buf[64];
	struct df_writer *w;
	FILE *f;

	T_ASSERT(path);
	f = fopen(path, "w");
	T_ASSERT(f);
	fputs("previous contents, longer than a header", f);
	fclose(f);
	w = df_writer_open(path, 62, 0);
	T_ASSERT(w);
	T_EQ_U64(df_writer_close(w), 0);
	T_EQ_U64(slurp(path, buf, sizeof(buf)), DF_HEADER_LEN);
	unlink(path);
	return T_OK;
}

T_MAIN(T_CASE(test_writer_bytes), T_CASE(test_writer_open_truncates),
       T_CASE(test_writer_stack_id_reuse), T_CASE(test_writer_rejects_bad_input),
       T_CASE(test_writer_write_error_latches))
