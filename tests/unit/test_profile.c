/* SPDX-License-Identifier: MIT */
/*
 * The data file reader against the writer: a round trip of every record
 * type, a file cut at every byte offset, wrong magic and version, foreign
 * architectures, unknown records and corruption in the middle or the tail,
 * and the mapping lookup rules (exec generations, mappings seen before the
 * first sample or after it, forked children).
 */
#include "profile.h"
#include "datafile.h"

#include "stderr_capture.h"
#include "t.h"

#include <unistd.h>

static char tmp_path[64];

static const char *tmp_file(void)
{
	int fd;

	strcpy(tmp_path, "/tmp/xprof-test-prof-XXXXXX");
	fd = mkstemp(tmp_path);
	if (fd < 0)
		return NULL;
	close(fd);
	return tmp_path;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	*len = fread(buf, 1, (size_t)n, f);
	fclose(f);
	return buf;
}

static const uint8_t bid[20] = {0xde, 0xad, 0xbe, 0xef, 1,  2,	3,  4,	5,  6,
				7,    8,    9,	  10,	11, 12, 13, 14, 15, 16};

/* A small file holding every record type; returns its bytes (malloc'd). */
static uint8_t *make_file(uint16_t e_machine, size_t *len)
{
	const uint64_t pcs[] = {0x401234, 0x401000, 0x7f0000001000ull};
	const uint8_t flags[] = {1, 0, 4};
	const char *path = tmp_file();
	struct df_writer *w = df_writer_open(path, e_machine, 1700000000123456789ull);
	uint8_t *buf;

	if (!w)
		return NULL;
	df_write_meta(w, "cmdline", "./app --arg");
	df_write_process(w, 0, 100, 1, DF_PROC_EXEC, "app", "/usr/bin/app");
	df_write_thread(w, 0, 100, 100, "app");
	df_write_thread(w, 10, 100, 101, "worker");
	df_write_mapping(w, 0, 100, 0x400000, 0x402000, 0x1000, 5, "/usr/bin/app", bid,
			 sizeof(bid));
	df_write_mapping(w, 0, 100, 0x7f0000000000ull, 0x7f0000100000ull, 0, 5, "[vdso]", NULL, 0);
	df_write_stack(w, 42, pcs, flags, 3);
	df_write_stack(w, 43, NULL, NULL, 0);
	df_write_sample_record(w, 1000, 100, 100, 42, 1);
	df_write_sample_record(w, 2000, 100, 101, 42, 3);
	df_write_sample_record(w, 3000, 100, 101, 43, 1);
	df_write_sample_record(w, 3500, 100, 101, 99, 1); /* no such stack */
	df_write_jitsym(w, 100, 0x7f0000200000ull, 0x40, "jitted::fn", 1234567);
	df_write_jitline(w, 100, 0x7f0000200000ull, 0x7f0000200010ull, "app.js", 7);
	df_write_vdso(w, "\177ELF-vdso", 10);
	df_write_vdso(w, "\177ELF-vdso", 10); /* the same image again: not written */
	df_write_mark(w, 500, DF_MARK_PHASE, "load");
	df_write_mark(w, 600, DF_MARK_DISABLE, "");
	df_write_exit(w, 4000, 100, 101, 0);
	df_write_exit(w, 5000, 100, 0, 9);
	df_write_stat(w, "samples", 3);
	df_write_stat(w, "samples", 4);
	if (df_writer_close(w))
		return NULL;
	buf = slurp(path, len);
	unlink(path);
	return buf;
}

static int load(struct profile *p, const uint8_t *buf, size_t len)
{
	profile_init(p);
	return profile_load_mem(p, buf, len, "test.data");
}

static int check_full(const struct profile *p, uint16_t e_machine)
{
	const struct profile_stack *st;

	T_EQ_U64(p->version, 1);
	T_EQ_U64(p->e_machine, e_machine);
	T_EQ_U64(p->start_ns, 1700000000123456789ull);
	T_ASSERT(!p->truncated);
	T_EQ_U64(p->unknown, 0);

	T_EQ_U64(p->nr_metas, 1);
	T_EQ_STR(p->metas[0].key, "cmdline");
	T_EQ_STR(profile_meta(p, "cmdline"), "./app --arg");
	T_ASSERT(!profile_meta(p, "nope"));

	T_EQ_U64(p->nr_procs, 1);
	T_EQ_U64(p->procs[0].t, 0);
	T_EQ_U64(p->procs[0].pid, 100);
	T_EQ_U64(p->procs[0].ppid, 1);
	T_EQ_U64(p->procs[0].flags, DF_PROC_EXEC);
	T_EQ_STR(p->procs[0].comm, "app");
	T_EQ_STR(p->procs[0].exe, "/usr/bin/app");

	T_EQ_U64(p->nr_threads, 2);
	T_EQ_U64(p->threads[1].t, 10);
	T_EQ_U64(p->threads[1].pid, 100);
	T_EQ_U64(p->threads[1].tid, 101);
	T_EQ_STR(p->threads[1].comm, "worker");

	T_EQ_U64(p->nr_maps, 2);
	T_EQ_U64(p->maps[0].pid, 100);
	T_EQ_U64(p->maps[0].start, 0x400000);
	T_EQ_U64(p->maps[0].end, 0x402000);
	T_EQ_U64(p->maps[0].offset, 0x1000);
	T_EQ_U64(p->maps[0].prot, 5);
	T_EQ_STR(p->maps[0].path, "/usr/bin/app");
	T_EQ_U64(p->maps[0].build_id_len, sizeof(bid));
	T_ASSERT(!memcmp(p->maps[0].build_id, bid, sizeof(bid)));
	T_EQ_STR(p->maps[1].path, "[vdso]");
	T_EQ_U64(p->maps[1].build_id_len, 0);

	T_EQ_U64(p->nr_stacks, 2);
	st = profile_stack_by_id(p, 42);
	T_ASSERT(st);
	T_EQ_U64(st->nr, 3);
	T_EQ_U64(st->pcs[0], 0x401234);
	T_EQ_U64(st->pcs[1], 0x401000);
	T_EQ_U64(st->pcs[2], 0x7f0000001000ull);
	T_EQ_U64(st->flags[0], 1);
	T_EQ_U64(st->flags[1], 0);
	T_EQ_U64(st->flags[2], 4);
	T_EQ_U64(profile_stack_by_id(p, 43)->nr, 0);
	T_ASSERT(!profile_stack_by_id(p, 99));

	/* The sample of the unknown stack 99 is dropped and counted. */
	T_EQ_U64(p->nr_samples, 3);
	T_EQ_U64(p->orphan_samples, 1);
	T_EQ_U64(p->samples[1].t, 2000);
	T_EQ_U64(p->samples[1].pid, 100);
	T_EQ_U64(p->samples[1].tid, 101);
	T_EQ_U64(p->samples[1].stack_id, 42);
	T_EQ_U64(p->samples[1].weight, 3);
	T_ASSERT(profile_sample_stack(p, &p->samples[1]) == st);
	T_EQ_U64(profile_sample_stack(p, &p->samples[2])->id, 43);
	T_EQ_U64(p->total_weight, 5);

	T_EQ_U64(p->nr_jitsyms, 1);
	T_EQ_U64(p->jitsyms[0].pid, 100);
	T_EQ_U64(p->jitsyms[0].start, 0x7f0000200000ull);
	T_EQ_U64(p->jitsyms[0].size, 0x40);
	T_EQ_STR(p->jitsyms[0].name, "jitted::fn");
	T_EQ_U64(p->jitsyms[0].t, 1234567);
	T_EQ_U64(p->nr_jitlines, 1);
	T_EQ_U64(p->jitlines[0].pid, 100);
	T_EQ_U64(p->jitlines[0].start, 0x7f0000200000ull);
	T_EQ_U64(p->jitlines[0].end, 0x7f0000200010ull);
	T_EQ_U64(p->jitlines[0].line, 7);
	T_EQ_STR(p->jitlines[0].file, "app.js");
	T_EQ_U64(p->nr_vdsos, 1);
	T_EQ_U64(p->vdsos[0].len, 10);
	T_ASSERT(!memcmp(p->vdsos[0].image, "\177ELF-vdso", 10));

	T_EQ_U64(p->nr_exits, 2);
	T_EQ_U64(p->exits[1].t, 5000);
	T_EQ_U64(p->exits[1].tid, 0);
	T_EQ_U64(p->exits[1].status, 9);

	T_EQ_U64(p->nr_stats, 2);
	{
		uint64_t v = 0;

		T_ASSERT(profile_stat(p, "samples", &v));
		T_EQ_U64(v, 4);
		T_ASSERT(!profile_stat(p, "lost", &v));
	}
	T_EQ_U64(p->nr_marks, 2);
	T_EQ_U64(p->marks[0].t, 500);
	T_EQ_U64(p->marks[0].kind, DF_MARK_PHASE);
	T_EQ_STR(p->marks[0].name, "load");
	T_EQ_U64(p->marks[1].kind, DF_MARK_DISABLE);
	T_EQ_STR(p->marks[1].name, "");
	T_EQ_U64(p->records, 21);
	return T_OK;
}

static int test_round_trip(void)
{
	struct profile p;
	uint8_t *buf;
	size_t len;
	int ret;

	buf = make_file(62, &len);
	T_ASSERT(buf);
	cap_begin();
	ret = load(&p, buf, len);
	cap_end();
	T_EQ_U64(ret, 0);
	T_EQ_U64(p.good_bytes, len);
	ret = check_full(&p, 62);
	profile_release(&p);
	free(buf);
	return ret;
}

/* The same through a real file and profile_load. */
static int test_round_trip_file(void)
{
	size_t len;
	uint8_t *buf = make_file(62, &len);
	const char *path = tmp_file(); /* after make_file: both use tmp_path */
	struct profile p;
	FILE *f;
	int ret;

	T_ASSERT(buf && path);
	f = fopen(path, "wb");
	T_ASSERT(f);
	T_EQ_U64(fwrite(buf, 1, len, f), len);
	fclose(f);
	profile_init(&p);
	cap_begin();
	ret = profile_load(&p, path);
	cap_end();
	unlink(path);
	free(buf);
	T_EQ_U64(ret, 0);
	ret = check_full(&p, 62);
	profile_release(&p);
	return ret;
}

/*
 * Batched samples (SAMPLES records, varint deltas) read back exactly, per
 * thread in time order, and cost at most 16 bytes each when steady.
 */
static int test_sample_batches(void)
{
	const char *path = tmp_file();
	struct df_writer *w;
	struct profile p;
	uint64_t i, bytes, n = 3000;
	size_t j, got[3] = {0};
	int ret;

	T_ASSERT(path);
	w = df_writer_open(path, 62, 0);
	T_ASSERT(w);
	for (i = 1; i <= 200; i++) {
		uint64_t pc = 0x1000 + i;
		uint8_t fl = 1;

		T_EQ_U64(df_write_stack(w, i, &pc, &fl, 1), 0);
	}
	for (i = 0; i < n; i++) {
		/* Three threads, interleaved; one id needs a two-byte varint. */
		T_EQ_U64(df_write_sample(w, 1000000 * i, 10, (pid_t)(10 + i % 3), 1 + i % 200,
					 1000000 + i),
			 0);
		if (i == n / 2)
			T_EQ_U64(df_writer_flush(w), 0); /* a batch split across records */
	}
	T_EQ_U64(df_writer_flush(w), 0);
	bytes = df_writer_bytes(w);
	T_EQ_U64(df_writer_close(w), 0);
	printf("# %llu samples in %llu bytes: %.2f bytes/sample\n", (unsigned long long)n,
	       (unsigned long long)bytes, (double)bytes / (double)n);
	T_ASSERT(bytes <= 16 * n + 200 * 40);
	profile_init(&p);
	ret = profile_load(&p, path);
	unlink(path);
	T_EQ_U64(ret, 0);
	T_EQ_U64(p.nr_samples, n);
	for (j = 0; j < p.nr_samples; j++) {
		const struct profile_sample *sm = &p.samples[j];
		uint64_t k = sm->t / 1000000;

		T_EQ_U64(sm->pid, 10);
		T_EQ_U64(sm->tid, 10 + k % 3);
		T_EQ_U64(sm->stack_id, 1 + k % 200);
		T_EQ_U64(sm->weight, 1000000 + k);
		got[k % 3]++;
	}
	T_EQ_U64(got[0] + got[1] + got[2], n);
	profile_release(&p);
	return T_OK;
}

/* Files recorded on aarch64 (183) or riscv64 (243) read the same on any host. */
static int test_foreign_machine(void)
{
	static const uint16_t machines[] = {183, 243, 0xffff};
	struct profile p;
	uint8_t *buf;
	size_t len, i;
	int ret;

	for (i = 0; i < sizeof(machines) / sizeof(machines[0]); i++) {
		buf = make_file(machines[i], &len);
		T_ASSERT(buf);
		cap_begin();
		ret = load(&p, buf, len);
		cap_end();
		free(buf);
		T_EQ_U64(ret, 0);
		ret = check_full(&p, machines[i]);
		profile_release(&p);
		if (ret)
			return ret;
	}
	return T_OK;
}

/*
 * Cut the file at every offset: never crash, refuse a cut header, and keep
 * exactly the whole records before the cut, with one warning.
 */
static int test_truncated_everywhere(void)
{
	struct profile p;
	uint8_t *buf;
	size_t len, cut;
	uint64_t prev_records = 0;
	const char *err;
	int ret;

	buf = make_file(62, &len);
	T_ASSERT(buf);
	for (cut = 0; cut < len; cut++) {
		cap_begin();
		ret = load(&p, buf, cut);
		err = cap_end();
		if (cut < DF_HEADER_LEN) {
			T_EQ_U64(ret, (uint64_t)-1);
			T_EQ_U64(cap_lines(err), 1);
			T_ASSERT(strstr(err, "xprof: error: 'test.data' "));
			profile_release(&p);
			continue;
		}
		T_EQ_U64(ret, 0);
		T_ASSERT(p.good_bytes <= cut);
		T_ASSERT(p.records >= prev_records);
		prev_records = p.records;
		if (p.good_bytes == cut) {
			T_ASSERT(!p.truncated);
		} else {
			T_ASSERT(p.truncated);
			/* One warning, naming the offset of the cut record (orphans warn too). */
			T_ASSERT(
			    strstr(err, "xprof: warning: 'test.data' is truncated at offset "));
			T_ASSERT(cap_lines(err) == 1 + (p.orphan_samples ? 1 : 0));
		}
		profile_release(&p);
	}
	T_EQ_U64(prev_records, 20); /* all but the last record */
	free(buf);
	return T_OK;
}

/* A file still being written (live): a cut tail is expected, so no warning. */
static int test_truncated_live(void)
{
	struct profile p;
	uint8_t *buf;
	size_t len, cut;
	const char *err;

	buf = make_file(62, &len);
	T_ASSERT(buf);
	for (cut = DF_HEADER_LEN; cut < len; cut++) {
		profile_init(&p);
		p.live = true;
		cap_begin();
		T_EQ_U64(profile_load_mem(&p, buf, cut, "test.data"), 0);
		err = cap_end();
		T_ASSERT(!strstr(err, "truncated"));
		T_ASSERT(p.good_bytes <= cut);
		profile_release(&p);
	}
	free(buf);
	return T_OK;
}

static int test_not_xprof(void)
{
	static const char *const bad[] = {"", "X", "XPROFDA", "hello world, this is text\n",
					  "\x7f"
					  "ELF\2\1\1\0\0\0\0\0\0\0\0\0"};
	struct profile p;
	const char *err;
	size_t i;
	int ret;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cap_begin();
		ret = load(&p, (const uint8_t *)bad[i], strlen(bad[i]) + (i == 4 ? 16 : 0));
		err = cap_end();
		profile_release(&p);
		T_EQ_U64(ret, (uint64_t)-1);
		T_EQ_STR(err, "xprof: error: 'test.data' is not an xprof data file\n");
	}
	return T_OK;
}

static int test_wrong_version(void)
{
	struct profile p;
	uint8_t *buf;
	const char *err;
	size_t len;
	int ret;

	buf = make_file(62, &len);
	T_ASSERT(buf);
	buf[8] = 2;
	cap_begin();
	ret = load(&p, buf, len);
	err = cap_end();
	profile_release(&p);
	T_EQ_U64(ret, (uint64_t)-1);
	T_EQ_STR(err, "xprof: error: 'test.data' is data format version 2, but this xprof reads "
		      "version 1\nhint: upgrade xprof to report on it\n");

	buf[8] = 0;
	cap_begin();
	ret = load(&p, buf, len);
	err = cap_end();
	profile_release(&p);
	T_EQ_U64(ret, (uint64_t)-1);
	T_ASSERT(strstr(err, "invalid version 0"));

	buf[8] = 1;
	buf[10] = 2; /* big-endian is not defined */
	cap_begin();
	ret = load(&p, buf, len);
	err = cap_end();
	profile_release(&p);
	T_EQ_U64(ret, (uint64_t)-1);
	T_ASSERT(strstr(err, "byte order"));
	free(buf);
	return T_OK;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* A header, then records given as (type, len, payload bytes). */
struct buf {
	uint8_t b[4096];
	size_t len;
};

static void b_header(struct buf *b, uint16_t hlen)
{
	memset(b->b, 0, sizeof(b->b));
	memcpy(b->b, "XPROFDAT\1\0\1\0\x3e\0", 14);
	b->b[14] = (uint8_t)hlen;
	b->b[15] = (uint8_t)(hlen >> 8);
	b->len = hlen;
}

static void b_rec(struct buf *b, uint32_t type, uint32_t len, const void *payload, size_t n)
{
	put32(b->b + b->len, type);
	put32(b->b + b->len + 4, len);
	memcpy(b->b + b->len + 8, payload, n);
	b->len += 8 + n;
}

static const uint8_t stat_rec[] = {1, 0, 0, 0, 'n', 7, 0, 0, 0, 0, 0, 0, 0};

/* Unknown types, longer payloads and longer headers come from newer writers: skip them. */
static int test_forward_compatible(void)
{
	uint8_t longer[sizeof(stat_rec) + 5];
	struct profile p;
	struct buf b;
	uint64_t v;
	int ret;

	memcpy(longer, stat_rec, sizeof(stat_rec));
	memset(longer + sizeof(stat_rec), 0xee, 5);
	b_header(&b, 40);
	b_rec(&b, 77, 3, "abc", 3);
	b_rec(&b, DF_REC_STAT, sizeof(longer), longer, sizeof(longer));
	b_rec(&b, 1000000, 0, "", 0);
	cap_begin();
	ret = load(&p, b.b, b.len);
	T_EQ_STR(cap_end(), "");
	T_EQ_U64(ret, 0);
	T_EQ_U64(p.records, 3);
	T_EQ_U64(p.unknown, 2);
	T_ASSERT(profile_stat(&p, "n", &v));
	T_EQ_U64(v, 7);
	profile_release(&p);
	return T_OK;
}

/*
 * MARK records: a kind of a later revision is skipped; a phase without a
 * name is corruption (here in the middle of the file: an error).
 */
static int test_marks(void)
{
	/* t 5, kind, name "a" / "" */
	uint8_t phase[8 + 4 + 4 + 1] = {5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 'a'};
	uint8_t later[8 + 4 + 4] = {6, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0};
	uint8_t enable[8 + 4 + 4] = {7, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0};
	uint8_t unnamed[8 + 4 + 4] = {8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
	struct profile p;
	struct buf b;
	int ret;

	b_header(&b, DF_HEADER_LEN);
	b_rec(&b, DF_REC_MARK, sizeof(phase), phase, sizeof(phase));
	b_rec(&b, DF_REC_MARK, sizeof(later), later, sizeof(later));
	b_rec(&b, DF_REC_MARK, sizeof(enable), enable, sizeof(enable));
	T_EQ_U64(load(&p, b.b, b.len), 0);
	T_EQ_U64(p.nr_marks, 2);
	T_EQ_STR(p.marks[0].name, "a");
	T_EQ_U64(p.marks[1].kind, DF_MARK_ENABLE);
	T_EQ_U64(p.marks[1].t, 7);
	profile_release(&p);

	b_header(&b, DF_HEADER_LEN);
	b_rec(&b, DF_REC_MARK, sizeof(unnamed), unnamed, sizeof(unnamed));
	b_rec(&b, DF_REC_MARK, sizeof(phase), phase, sizeof(phase));
	cap_begin();
	ret = load(&p, b.b, b.len);
	T_ASSERT(strstr(cap_end(), "phase mark with an empty or over-long name"));
	T_EQ_U64(ret, -1);
	profile_release(&p);
	return T_OK;
}

/*
 * The PROCESS record's nspid, added in a minor revision: a record without
 * it (an older writer) reads as 0, one with it as written.
 */
static int test_process_nspid(void)
{
	/* t 5, pid 300, ppid 1, flags EXEC, comm "a", exe "" */
	uint8_t old[8 + 4 + 4 + 4 + 5 + 4] = {5, 0, 0, 0, 0, 0, 0, 0, 0x2c, 1,	 0, 0, 1, 0, 0,
					      0, 1, 0, 0, 0, 1, 0, 0, 0,    'a', 0, 0, 0, 0};
	uint8_t new[sizeof(old) + 4];
	struct profile p;
	struct buf b;

	memcpy(new, old, sizeof(old));
	put32(new + sizeof(old), 7);
	b_header(&b, DF_HEADER_LEN);
	b_rec(&b, DF_REC_PROCESS, sizeof(old), old, sizeof(old));
	b_rec(&b, DF_REC_PROCESS, sizeof(new), new, sizeof(new));
	T_EQ_U64(load(&p, b.b, b.len), 0);
	T_EQ_U64(p.nr_procs, 2);
	T_EQ_U64(p.procs[0].pid, 300);
	T_EQ_STR(p.procs[0].comm, "a");
	T_EQ_U64(p.procs[0].nspid, 0);
	T_EQ_U64(p.procs[1].nspid, 7);
	profile_release(&p);
	return T_OK;
}

/*
 * The identity of a file without a build-id, appended to MAPPING by a
 * minor revision: a Go build ID and a SHA-256 as written, none from
 * df_write_mapping (and none in older files: canned.xprof), a kind this
 * reader does not know read as none, a length past the payload corruption.
 */
static int test_mapping_file_id(void)
{
	struct xp_file_id go = {.kind = XP_FILE_ID_GO, .len = 11},
			  sha = {.kind = XP_FILE_ID_SHA256};
	const char *path = tmp_file();
	struct df_writer *w = df_writer_open(path, 62, 0);
	struct profile p;
	uint8_t *buf, *at;
	size_t len;
	int ret;

	memcpy(go.bytes, "abc/def/ghi", 11);
	xp_sha256("x", 1, sha.bytes);
	sha.len = XP_SHA256_LEN;
	T_ASSERT(w != NULL);
	df_write_mapping_id(w, 0, 1, 0x1000, 0x2000, 0, 5, "/go/app", NULL, 0, &go);
	df_write_mapping_id(w, 0, 1, 0x3000, 0x4000, 0, 5, "/static/app", NULL, 0, &sha);
	df_write_mapping(w, 0, 1, 0x5000, 0x6000, 0, 5, "/usr/lib/libc.so.6", bid, sizeof(bid));
	df_write_stat(w, "samples", 0);
	T_EQ_U64(df_writer_close(w), 0);
	buf = slurp(path, &len);
	unlink(path);
	T_ASSERT(buf != NULL);
	T_EQ_U64(load(&p, buf, len), 0);
	T_EQ_U64(p.nr_maps, 3);
	T_EQ_U64(p.maps[0].build_id_len, 0);
	T_ASSERT(xp_file_id_equal(&p.maps[0].file_id, &go));
	T_ASSERT(xp_file_id_equal(&p.maps[1].file_id, &sha));
	T_EQ_U64(p.maps[2].file_id.len, 0);
	T_EQ_U64(p.maps[2].build_id_len, sizeof(bid));
	profile_release(&p);

	/* Kind byte, length byte, then the Go build ID's bytes. */
	at = memmem(buf, len, "abc/def/ghi", 11);
	T_ASSERT(at && at - buf > 2 && at[-2] == XP_FILE_ID_GO && at[-1] == 11);
	at[-2] = 9;
	T_EQ_U64(load(&p, buf, len), 0);
	T_EQ_U64(p.nr_maps, 3);
	T_EQ_U64(p.maps[0].file_id.len, 0);
	profile_release(&p);
	at[-2] = XP_FILE_ID_GO;
	at[-1] = 200; /* past the record's end, records follow: an error */
	cap_begin();
	ret = load(&p, buf, len);
	T_ASSERT(strstr(cap_end(), "xprof: error: "));
	T_EQ_U64(ret, -1);
	profile_release(&p);
	free(buf);
	return T_OK;
}

static int test_corrupt_middle_and_tail(void)
{
	const uint8_t short_stack[] = {1, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 1, 2, 3};
	struct profile p;
	const char *err;
	struct buf b;
	int ret;

	/* An absurd length followed by more data: error naming the offset. */
	b_header(&b, 24);
	b_rec(&b, DF_REC_STAT, sizeof(stat_rec), stat_rec, sizeof(stat_rec));
	b_rec(&b, DF_REC_STAT, DF_MAX_RECORD + 1, stat_rec, sizeof(stat_rec));
	cap_begin();
	ret = load(&p, b.b, b.len);
	err = cap_end();
	profile_release(&p);
	T_EQ_U64(ret, (uint64_t)-1);
	T_EQ_STR(err, "xprof: error: 'test.data' is corrupt at offset 45: record of type 7 "
		      "claims 16777217 bytes (limit 16777216)\n");

	/* A payload that does not hold its frames, in the middle: error. */
	b_header(&b, 24);
	b_rec(&b, DF_REC_STACK, sizeof(short_stack), short_stack, sizeof(short_stack));
	b_rec(&b, DF_REC_STAT, sizeof(stat_rec), stat_rec, sizeof(stat_rec));
	cap_begin();
	ret = load(&p, b.b, b.len);
	err = cap_end();
	profile_release(&p);
	T_EQ_U64(ret, (uint64_t)-1);
	T_EQ_STR(err, "xprof: error: 'test.data' is corrupt at offset 24: STACK record of 15 "
		      "bytes: more frames than the payload holds\n");

	/* The same record last in the file: a warning, and the records before it count. */
	b_header(&b, 24);
	b_rec(&b, DF_REC_STAT, sizeof(stat_rec), stat_rec, sizeof(stat_rec));
	b_rec(&b, DF_REC_STACK, sizeof(short_stack), short_stack, sizeof(short_stack));
	cap_begin();
	ret = load(&p, b.b, b.len);
	err = cap_end();
	T_EQ_U64(ret, 0);
	T_EQ_U64(p.records, 1);
	T_ASSERT(p.truncated);
	T_EQ_U64(p.good_bytes, 45);
	profile_release(&p);
	T_EQ_STR(err, "xprof: warning: 'test.data': ignoring a corrupt record at offset 45 at "
		      "the end of the file (STACK record of 15 bytes: more frames than the "
		      "payload holds); using the 1 records before it\n");

	/* A zero-filled tail (a crash after the file grew but before data landed). */
	b_header(&b, 24);
	b_rec(&b, DF_REC_STAT, sizeof(stat_rec), stat_rec, sizeof(stat_rec));
	b.len += 100;
	cap_begin();
	ret = load(&p, b.b, b.len);
	err = cap_end();
	T_EQ_U64(ret, 0);
	T_EQ_U64(p.records, 1);
	profile_release(&p);
	T_ASSERT(strstr(err, "record of type 0"));
	T_EQ_U64(cap_lines(err), 1);

	/* A string that overruns its record. */
	b_header(&b, 24);
	b_rec(&b, DF_REC_META, 8,
	      "\xff\xff\xff\x7f"
	      "abcd",
	      8);
	b_rec(&b, DF_REC_STAT, sizeof(stat_rec), stat_rec, sizeof(stat_rec));
	cap_begin();
	ret = load(&p, b.b, b.len);
	err = cap_end();
	profile_release(&p);
	T_EQ_U64(ret, (uint64_t)-1);
	T_ASSERT(strstr(err, "META record of 8 bytes: fields overrun the payload"));

	/* A header that claims to be shorter than version 1's. */
	b_header(&b, 24);
	b.b[14] = 16;
	cap_begin();
	ret = load(&p, b.b, b.len);
	err = cap_end();
	profile_release(&p);
	T_EQ_U64(ret, (uint64_t)-1);
	T_ASSERT(strstr(err, "header length 16"));
	return T_OK;
}

static int test_duplicate_stack_id(void)
{
	const uint8_t s1[] = {5, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0};
	const uint8_t s2[] = {5, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0};
	struct profile p;
	const char *err;
	struct buf b;
	int ret;

	b_header(&b, 24);
	b_rec(&b, DF_REC_STACK, sizeof(s1), s1, sizeof(s1));
	b_rec(&b, DF_REC_STACK, sizeof(s1), s1, sizeof(s1));
	b_rec(&b, DF_REC_STACK, sizeof(s2), s2, sizeof(s2));
	cap_begin();
	ret = load(&p, b.b, b.len);
	err = cap_end();
	T_EQ_U64(ret, 0);
	T_EQ_U64(p.nr_stacks, 1);
	T_EQ_U64(p.dup_stacks, 2);
	T_EQ_U64(profile_stack_by_id(&p, 5)->pcs[0], 1);
	profile_release(&p);
	T_EQ_U64(cap_lines(err), 1);
	T_ASSERT(strstr(err, "stack id 5 is defined twice"));
	return T_OK;
}

/* Mapping lookups across exec generations, late mappings and forks. */
static int test_find_mapping(void)
{
	const char *path = tmp_file();
	const struct profile_mapping *m;
	struct df_writer *w;
	struct profile p;
	int ret;

	T_ASSERT(path);
	w = df_writer_open(path, 62, 0);
	T_ASSERT(w);
	/* pid 10: first image, mapped at time 0 (before any sample). */
	df_write_process(w, 0, 10, 1, DF_PROC_EXEC, "first", "/bin/first");
	df_write_mapping(w, 0, 10, 0x1000, 0x2000, 0, 5, "/bin/first", NULL, 0);
	/* A library seen at t=500 (after samples that already ran in it). */
	df_write_mapping(w, 500, 10, 0x5000, 0x6000, 0, 5, "/lib/late.so", NULL, 0);
	/* dlclose + dlopen of another library at the same place at t=700. */
	df_write_mapping(w, 700, 10, 0x5000, 0x7000, 0, 5, "/lib/other.so", NULL, 0);
	/* pid 20 forks from 10 at t=300 and never gets mappings of its own. */
	df_write_process(w, 300, 20, 10, 0, "first", "/bin/first");
	/*
	 * pid 30 runs /bin/old with a mapping at 0x1000, exits; pid 30 is
	 * reused at t=400 by a fork of 10, which replaces /lib/late.so's
	 * place with /lib/own.so at t=800.
	 */
	df_write_process(w, 50, 30, 1, DF_PROC_EXEC, "old", "/bin/old");
	df_write_mapping(w, 50, 30, 0x1000, 0x2000, 0, 5, "/bin/old", NULL, 0);
	df_write_exit(w, 60, 30, 30, 0);
	df_write_process(w, 400, 30, 10, 0, "first", "/bin/first");
	df_write_mapping(w, 800, 30, 0x5000, 0x6000, 0, 5, "/lib/own.so", NULL, 0);
	/* pid 40, found by an attach, maps 0x1000 only later. */
	df_write_process(w, 0, 40, 10, DF_PROC_ATTACHED, "att", "/bin/att");
	df_write_mapping(w, 900, 40, 0x1000, 0x2000, 0, 5, "/bin/att", NULL, 0);
	/* pid 10 execs at t=1000; the new image maps the same range. */
	df_write_process(w, 1000, 10, 1, DF_PROC_EXEC, "second", "/bin/second");
	df_write_mapping(w, 1000, 10, 0x1000, 0x3000, 0, 5, "/bin/second", NULL, 0);
	T_EQ_U64(df_writer_close(w), 0);
	profile_init(&p);
	ret = profile_load(&p, path);
	unlink(path);
	T_EQ_U64(ret, 0);

	m = profile_find_mapping(&p, 10, 5, 0x1800);
	T_ASSERT(m);
	T_EQ_STR(m->path, "/bin/first");
	/* Time 0 mappings apply at time 0 too. */
	T_EQ_STR(profile_find_mapping(&p, 10, 0, 0x1000)->path, "/bin/first");
	T_ASSERT(!profile_find_mapping(&p, 10, 5, 0x2000));
	T_ASSERT(!profile_find_mapping(&p, 10, 5, 0xfff));
	/* Before it was seen, the library is found by the later record. */
	T_EQ_STR(profile_find_mapping(&p, 10, 100, 0x5800)->path, "/lib/late.so");
	T_EQ_STR(profile_find_mapping(&p, 10, 600, 0x5800)->path, "/lib/late.so");
	T_EQ_STR(profile_find_mapping(&p, 10, 700, 0x5800)->path, "/lib/other.so");
	T_EQ_STR(profile_find_mapping(&p, 10, 800, 0x6800)->path, "/lib/other.so");
	/* Nothing covered 0x6800 by t=600: the next record of the generation does. */
	T_EQ_STR(profile_find_mapping(&p, 10, 600, 0x6800)->path, "/lib/other.so");
	/* After exec, the old image's mappings are gone. */
	T_EQ_STR(profile_find_mapping(&p, 10, 1000, 0x1800)->path, "/bin/second");
	T_EQ_STR(profile_find_mapping(&p, 10, 2000, 0x2800)->path, "/bin/second");
	T_ASSERT(!profile_find_mapping(&p, 10, 2000, 0x5800));
	T_EQ_STR(profile_find_mapping(&p, 10, 999, 0x1800)->path, "/bin/first");
	/* The forked child sees its parent's image as of the fork. */
	T_EQ_STR(profile_find_mapping(&p, 20, 2000, 0x1800)->path, "/bin/first");
	T_EQ_STR(profile_find_mapping(&p, 20, 2000, 0x5800)->path, "/lib/late.so");
	/* A reused pid: the new process's image, not the old one's. */
	T_EQ_STR(profile_find_mapping(&p, 30, 55, 0x1800)->path, "/bin/old");
	T_EQ_STR(profile_find_mapping(&p, 30, 500, 0x1800)->path, "/bin/first");
	/* Its own later mapping, after it was made; the parent's before. */
	T_EQ_STR(profile_find_mapping(&p, 30, 900, 0x5800)->path, "/lib/own.so");
	T_EQ_STR(profile_find_mapping(&p, 30, 500, 0x5800)->path, "/lib/late.so");
	/* An attached process is not looked up in its parent. */
	T_EQ_STR(profile_find_mapping(&p, 40, 100, 0x1800)->path, "/bin/att");
	T_ASSERT(!profile_find_mapping(&p, 50, 2000, 0x1800));

	T_EQ_STR(profile_comm(&p, 10, 999), "first");
	T_EQ_STR(profile_comm(&p, 10, 1000), "second");
	T_ASSERT(!profile_comm(&p, 50, 0));
	T_EQ_U64(profile_process_at(&p, 10, 0)->t, 0);
	/* Epochs change exactly where pid 10's records are. */
	T_EQ_U64(profile_epoch(&p, 10, 0), profile_epoch(&p, 10, 499));
	T_ASSERT(profile_epoch(&p, 10, 499) != profile_epoch(&p, 10, 500));
	T_EQ_U64(profile_epoch(&p, 10, 1000), profile_epoch(&p, 10, 100000));
	profile_release(&p);
	return T_OK;
}

T_MAIN(T_CASE(test_marks), T_CASE(test_round_trip), T_CASE(test_sample_batches),
       T_CASE(test_round_trip_file), T_CASE(test_foreign_machine),
       T_CASE(test_truncated_everywhere), T_CASE(test_truncated_live), T_CASE(test_not_xprof),
       T_CASE(test_wrong_version), T_CASE(test_forward_compatible),
       T_CASE(test_corrupt_middle_and_tail), T_CASE(test_duplicate_stack_id),
       T_CASE(test_find_mapping), T_CASE(test_process_nspid), T_CASE(test_mapping_file_id))
