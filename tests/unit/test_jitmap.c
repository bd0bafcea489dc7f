/* SPDX-License-Identifier: MIT */
/*
 * JIT side-files: the perf-map line parser and the jitdump parsers on
 * canned data (tests/data/jit), then the collector end to end: which
 * entries it copies for a set of sampled pcs (later entries win, only
 * covering ones are written), source lines from a jitdump, and the files
 * it must refuse or survive (FIFOs, symbolic links, files of another user,
 * a 10 MB line, garbage).  Data files are checked by reading them back.
 */
#include "jitmap.h"
#include "addrspace.h"
#include "clock.h"
#include "datafile.h"
#include "profile.h"
#include "stacktab.h"
#include "dataformat.h"

#include "jitsink.h"
#include "stderr_capture.h"
#include "t.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PID 4999999 /* above any pid_max: /proc/PID never exists */

static char *data_path(const char *name, char *buf, size_t len)
{
	const char *dir = getenv("XP_DATA");

	snprintf(buf, len, "%s/jit/%s", dir ? dir : "tests/data", name);
	return buf;
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

/* ---- perf map lines ------------------------------------------------------ */

static int parse(const char *line, struct jitmap_sym *s)
{
	return perfmap_parse_line(line, strlen(line), s);
}

static int test_perfmap_lines(void)
{
	struct jitmap_sym s;

	T_EQ_U64(parse("7f0000001000 40 jitted_add", &s), 0);
	T_EQ_U64(s.start, 0x7f0000001000ull);
	T_EQ_U64(s.size, 0x40);
	T_ASSERT(s.name_len == 10 && !memcmp(s.name, "jitted_add", 10));
	/* Names keep inner blanks; trailing blanks and a CR go. */
	T_EQ_U64(parse("0x10 0X20   LazyCompile:~foo main.js:1 \r", &s), 0);
	T_EQ_U64(s.start, 0x10);
	T_EQ_U64(s.size, 0x20);
	T_ASSERT(s.name_len == 26 && !memcmp(s.name, "LazyCompile:~foo main.js:1", 26));
	T_EQ_U64(parse("ffffffffffffffff 1 x", &s), (uint64_t)-ERANGE);
	T_EQ_U64(parse("ffffffffffffff00 100 x", &s), (uint64_t)-ERANGE);
	T_EQ_U64(parse("ffffffffffffff00 ff x", &s), 0);
	T_EQ_U64(parse("1000 0 x", &s), (uint64_t)-ERANGE);
	T_EQ_U64(parse("", &s), (uint64_t)-EINVAL);
	T_EQ_U64(parse("1000", &s), (uint64_t)-EINVAL);
	T_EQ_U64(parse("1000 10", &s), (uint64_t)-EINVAL);
	T_EQ_U64(parse("1000 10  \t ", &s), (uint64_t)-EINVAL);
	T_EQ_U64(parse("x1000 10 f", &s), (uint64_t)-EINVAL);
	T_EQ_U64(parse("0x 10 f", &s), (uint64_t)-EINVAL);
	T_EQ_U64(parse("-1000 10 f", &s), (uint64_t)-EINVAL);
	T_EQ_U64(parse("1000 +10 f", &s), (uint64_t)-EINVAL);
	T_EQ_U64(parse(" 1000 10 f", &s), (uint64_t)-EINVAL);
	T_EQ_U64(parse("10000000000000000 10 f", &s), (uint64_t)-EINVAL);
	T_EQ_U64(parse("1000,10 f", &s), (uint64_t)-EINVAL);
	/* A NUL inside the line is not part of a name. */
	T_EQ_U64(perfmap_parse_line("1000 10 a\0b", 11, &s), (uint64_t)-EINVAL);
	return T_OK;
}

/* Every line of the canned files: the good ones parse, the bad ones do not (but one). */
static int test_perfmap_canned(void)
{
	char path[4096], *text, *line, *save = NULL;
	size_t len, good = 0, bad = 0;
	struct jitmap_sym s;

	text = (char *)slurp(data_path("perf-good.map", path, sizeof(path)), &len);
	T_ASSERT(text);
	text[len] = 0;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (parse(line, &s)) {
			fprintf(stderr, "good line refused: '%s'\n", line);
			free(text);
			return T_FAIL;
		}
		good++;
	}
	free(text);
	T_EQ_U64(good, 8);
	text = (char *)slurp(data_path("perf-bad.map", path, sizeof(path)), &len);
	T_ASSERT(text);
	text[len] = 0;
	save = NULL;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (parse(line, &s))
			bad++;
	free(text);
	T_EQ_U64(bad, 9);
	return T_OK;
}

/* ---- jitdump --------------------------------------------------------------- */

struct buf {
	uint8_t *p;
	size_t len;
};

static void put(struct buf *b, const void *v, size_t n)
{
	b->p = realloc(b->p, b->len + n);
	memcpy(b->p + b->len, v, n);
	b->len += n;
}

static void put32(struct buf *b, uint32_t v)
{
	uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};

	put(b, x, 4);
}

static void put64(struct buf *b, uint64_t v)
{
	put32(b, (uint32_t)v);
	put32(b, (uint32_t)(v >> 32));
}

static void prefix(struct buf *b, uint32_t id, uint32_t total)
{
	put32(b, id);
	put32(b, total);
	put64(b, 123456789); /* timestamp */
}

static void code_load(struct buf *b, uint64_t addr, uint64_t size, uint64_t index, const char *name)
{
	uint8_t code[256];

	memset(code, 0xcc, sizeof(code));
	prefix(b, JITDUMP_CODE_LOAD, (uint32_t)(56 + strlen(name) + 1 + size));
	put32(b, PID);
	put32(b, PID + 1);
	put64(b, addr); /* vma */
	put64(b, addr);
	put64(b, size);
	put64(b, index);
	put(b, name, strlen(name) + 1);
	put(b, code, size);
}

static void debug_entry(struct buf *b, uint64_t addr, int32_t line, const char *file)
{
	put64(b, addr);
	put32(b, (uint32_t)line);
	put32(b, 0);
	put(b, file, strlen(file) + 1);
}

/*
 * The canned jitdump (tests/data/jit/sample.dump, XP_REGEN=1 rewrites it):
 * lines for js_hot, js_hot itself, js_cold and its move, a close, a record
 * of an unknown kind, and a last record cut short as by a JIT killed while
 * writing it.
 */
static void make_jitdump(struct buf *b)
{
	struct buf dbg = {0};

	put32(b, JITDUMP_MAGIC);
	put32(b, 1);
	put32(b, JITDUMP_HEADER_LEN);
	put32(b, 62); /* EM_X86_64 */
	put32(b, 0);
	put32(b, PID);
	put64(b, 1000);
	put64(b, 0);
	debug_entry(&dbg, 0x7f0000010000ull, 10, "app.js");
	debug_entry(&dbg, 0x7f0000010010ull, 11, "\xff");
	debug_entry(&dbg, 0x7f0000010020ull, 20, "lib.js");
	prefix(b, JITDUMP_CODE_DEBUG_INFO, (uint32_t)(32 + dbg.len));
	put64(b, 0x7f0000010000ull);
	put64(b, 3);
	put(b, dbg.p, dbg.len);
	free(dbg.p);
	code_load(b, 0x7f0000010000ull, 0x40, 1, "js_hot");
	code_load(b, 0x7f0000020000ull, 0x10, 2, "js_cold");
	prefix(b, JITDUMP_CODE_MOVE, JITDUMP_MOVE_LEN);
	put32(b, PID);
	put32(b, PID);
	put64(b, 0x7f0000030000ull);
	put64(b, 0x7f0000020000ull);
	put64(b, 0x7f0000030000ull);
	put64(b, 0x10);
	put64(b, 2);
	prefix(b, JITDUMP_CODE_CLOSE, 16);
	prefix(b, 99, 24);
	put64(b, 0);
	prefix(b, JITDUMP_CODE_LOAD, 200);
	put32(b, PID);
}

static int test_jitdump_canned(void)
{
	struct buf made = {0};
	char path[4096];
	uint8_t *buf;
	size_t len, off, n = 0;
	struct jitdump_header h;
	struct jitdump_record r;
	struct jitdump_debug_entry e;
	const uint8_t *p;
	uint32_t ids[8];

	make_jitdump(&made);
	data_path("sample.dump", path, sizeof(path));
	if (getenv("XP_REGEN")) {
		FILE *f = fopen(path, "wb");

		T_ASSERT(f && fwrite(made.p, 1, made.len, f) == made.len && !fclose(f));
	}
	buf = slurp(path, &len);
	T_ASSERT(buf);
	/* The checked-in file is what this code makes: a format change shows here. */
	T_ASSERT(len == made.len && !memcmp(buf, made.p, len));
	free(made.p);
	T_EQ_U64(jitdump_parse_header(buf, len, &h), 0);
	T_EQ_U64(h.version, 1);
	T_EQ_U64(h.pid, PID);
	T_EQ_U64(h.elf_mach, 62);
	for (off = h.total_size; off < len && n < 8; off += r.total_size) {
		int ret = jitdump_parse_record(buf + off, len - off, &r);

		if (ret == -ENODATA)
			break;
		T_EQ_U64(ret, 0);
		ids[n++] = r.id;
		if (r.id == JITDUMP_CODE_DEBUG_INFO) {
			T_EQ_U64(r.nr_entries, 3);
			p = r.entries;
			T_EQ_U64(jitdump_next_debug_entry(&p, r.entries + r.entries_len, &e), 0);
			T_EQ_U64(e.line, 10);
			T_ASSERT(e.file_len == 6 && !memcmp(e.file, "app.js", 6));
			T_EQ_U64(jitdump_next_debug_entry(&p, r.entries + r.entries_len, &e), 0);
			T_EQ_U64(e.addr, 0x7f0000010010ull);
			T_ASSERT(e.file == NULL); /* "\xff": the previous entry's */
			T_EQ_U64(jitdump_next_debug_entry(&p, r.entries + r.entries_len, &e), 0);
			T_EQ_U64(jitdump_next_debug_entry(&p, r.entries + r.entries_len, &e),
				 (uint64_t)-EINVAL);
		}
		if (r.id == JITDUMP_CODE_LOAD && n == 2) {
			T_EQ_U64(r.code_addr, 0x7f0000010000ull);
			T_EQ_U64(r.code_size, 0x40);
			T_ASSERT(r.name_len == 6 && !memcmp(r.name, "js_hot", 6));
		}
		if (r.id == JITDUMP_CODE_MOVE) {
			T_EQ_U64(r.old_code_addr, 0x7f0000020000ull);
			T_EQ_U64(r.code_addr, 0x7f0000030000ull);
			T_EQ_U64(r.code_index, 2);
		}
	}
	T_EQ_U64(n, 6);
	T_EQ_U64(ids[0], JITDUMP_CODE_DEBUG_INFO);
	T_EQ_U64(ids[1], JITDUMP_CODE_LOAD);
	T_EQ_U64(ids[2], JITDUMP_CODE_LOAD);
	T_EQ_U64(ids[3], JITDUMP_CODE_MOVE);
	T_EQ_U64(ids[4], JITDUMP_CODE_CLOSE);
	T_EQ_U64(ids[5], 99);
	free(buf);
	return T_OK;
}

static int test_jitdump_refuses(void)
{
	uint8_t hdr[JITDUMP_HEADER_LEN] = {0x44, 0x54, 0x69, 0x4a, 1, 0, 0, 0, 40};
	uint8_t rec[80] = {0};
	struct jitdump_header h;
	struct jitdump_record r;

	T_EQ_U64(jitdump_parse_header(hdr, sizeof(hdr), &h), 0);
	T_EQ_U64(jitdump_parse_header(hdr, sizeof(hdr) - 1, &h), (uint64_t)-EINVAL);
	hdr[8] = 39; /* a header smaller than its fields */
	T_EQ_U64(jitdump_parse_header(hdr, sizeof(hdr), &h), (uint64_t)-EINVAL);
	hdr[8] = 40;
	hdr[4] = 2;
	T_EQ_U64(jitdump_parse_header(hdr, sizeof(hdr), &h), (uint64_t)-EPROTONOSUPPORT);
	memcpy(hdr, "\x4a\x69\x54\x44", 4); /* byte-swapped: a big-endian JIT */
	T_EQ_U64(jitdump_parse_header(hdr, sizeof(hdr), &h), (uint64_t)-EPROTONOSUPPORT);
	memcpy(hdr, "ELF\x7f", 4);
	T_EQ_U64(jitdump_parse_header(hdr, sizeof(hdr), &h), (uint64_t)-EINVAL);

	/* total_size below the prefix, then a load too small for its fields. */
	rec[4] = 15;
	T_EQ_U64(jitdump_parse_record(rec, sizeof(rec), &r), (uint64_t)-EINVAL);
	T_EQ_U64(jitdump_parse_record(rec, 10, &r), (uint64_t)-ENODATA);
	rec[4] = 56;
	T_EQ_U64(jitdump_parse_record(rec, sizeof(rec), &r), (uint64_t)-EINVAL);
	/* A load of 1 code byte at 0x1000, named "f": needs 56 + 2 + 1 bytes. */
	rec[4] = 59;
	rec[33] = 0x10;
	rec[40] = 1;
	rec[56] = 'f';
	T_EQ_U64(jitdump_parse_record(rec, sizeof(rec), &r), 0);
	T_EQ_U64(r.code_addr, 0x1000);
	T_ASSERT(r.name_len == 1 && r.name[0] == 'f');
	T_EQ_U64(jitdump_parse_record(rec, 57, &r), (uint64_t)-ENODATA); /* name cut */
	rec[40] = 2; /* code larger than the record */
	T_EQ_U64(jitdump_parse_record(rec, sizeof(rec), &r), (uint64_t)-EINVAL);
	rec[40] = 1;
	rec[57] = 'g'; /* no NUL within the record */
	T_EQ_U64(jitdump_parse_record(rec, sizeof(rec), &r), (uint64_t)-EINVAL);
	/* A debug record claiming more entries than its bytes can hold. */
	memset(rec, 0, sizeof(rec));
	rec[0] = JITDUMP_CODE_DEBUG_INFO;
	rec[4] = 50;
	rec[24] = 2;
	T_EQ_U64(jitdump_parse_record(rec, sizeof(rec), &r), (uint64_t)-EINVAL);
	rec[24] = 1;
	T_EQ_U64(jitdump_parse_record(rec, sizeof(rec), &r), 0);
	T_EQ_U64(jitdump_parse_record(rec, 49, &r), (uint64_t)-ENODATA);
	return T_OK;
}

/* ---- the collector --------------------------------------------------------- */

/* A stack table holding @n frames at @pcs (all exact). */
static void stacks_of(struct stacktab *t, const uint64_t *pcs, size_t n)
{
	uint8_t flags[16];
	bool is_new;
	size_t i;

	stacktab_init(t);
	for (i = 0; i < n; i++) {
		flags[0] = XP_FRAME_EXACT;
		stacktab_intern(t, &pcs[i], flags, 1, &is_new);
	}
}

struct collected {
	int ret;
	const char *err;
	struct profile p;
};

/* Run the collector into a fresh data file and read it back. */
static int collect(struct collected *c, const char *perfmap, const char *dump, const uint64_t *pcs,
		   size_t n)
{
	char path[] = "/tmp/xprof-test-jit-XXXXXX";
	struct stacktab t;
	struct df_writer *w;
	int fd = mkstemp(path);

	if (fd < 0)
		return -1;
	close(fd);
	w = df_writer_open(path, 62, 0);
	if (!w)
		return -1;
	stacks_of(&t, pcs, n);
	cap_begin();
	c->ret = jitsink_collect_files(w, NULL, PID, perfmap, &dump, 1, &t, 0);
	c->err = cap_end();
	stacktab_release(&t);
	df_writer_close(w);
	profile_init(&c->p);
	fd = profile_load(&c->p, path);
	unlink(path);
	return fd;
}

static const char *sym_named(const struct profile *p, uint64_t start)
{
	size_t i;

	for (i = 0; i < p->nr_jitsyms; i++)
		if (p->jitsyms[i].start == start)
			return p->jitsyms[i].name;
	return NULL;
}

static int test_collect_perfmap(void)
{
	/* In jitted_add twice (the later entry at the same start wins), in the tab line, and
	 * elsewhere. */
	const uint64_t pcs[] = {0x7f0000001004ull, 0x7f0000001020ull, 0x7f0000003004ull,
				0x7f0000009000ull, 0x7f00000010c8ull};
	char path[4096];
	struct collected c;

	T_EQ_U64(collect(&c, data_path("perf-good.map", path, sizeof(path)), NULL, pcs, 5), 0);
	T_EQ_STR(c.err, "");
	T_EQ_U64(c.ret, 4);
	T_EQ_U64(c.p.nr_jitsyms, 4);
	/* In file order: "jitted_add" still names 0x...1020, past newer_at_same_start's end. */
	T_EQ_STR(c.p.jitsyms[0].name, "jitted_add");
	T_EQ_STR(c.p.jitsyms[1].name, "with 0x prefix on the start");
	T_EQ_STR(c.p.jitsyms[2].name, "newer_at_same_start");
	T_EQ_STR(c.p.jitsyms[3].name, "tab separated");
	T_EQ_U64(c.p.jitsyms[3].size, 8);
	T_EQ_U64(c.p.jitsyms[0].pid, PID);
	profile_release(&c.p);
	return T_OK;
}

static int test_collect_bad_lines(void)
{
	const uint64_t pcs[] = {0x7f0000001004ull};
	char path[4096];
	struct collected c;

	T_EQ_U64(collect(&c, data_path("perf-bad.map", path, sizeof(path)), NULL, pcs, 1), 0);
	T_EQ_U64(c.ret, 1);
	T_EQ_STR(c.p.jitsyms[0].name, "fine_among_bad");
	T_EQ_U64(cap_lines(c.err), 1);
	T_ASSERT(strstr(c.err, "perf-bad.map': ignored 9 malformed lines (the first is line 1)"));
	profile_release(&c.p);
	return T_OK;
}

/* A 10 MB line costs one warning, not the lines around it, nor 10 MB of memory. */
static int test_collect_huge_line(void)
{
	const uint64_t pcs[] = {0x1004, 0x2004};
	char path[] = "/tmp/xprof-test-jitmap-XXXXXX";
	struct collected c;
	size_t big = 10 << 20, i;
	FILE *f;
	int fd = mkstemp(path);

	T_ASSERT(fd >= 0 && (f = fdopen(fd, "w")));
	fputs("1000 10 before\n3000 10 ", f);
	for (i = 0; i < big; i++)
		fputc('x', f);
	fputs("\n2000 10 after\n", f);
	fclose(f);
	T_EQ_U64(collect(&c, path, NULL, pcs, 2), 0);
	unlink(path);
	T_EQ_U64(c.ret, 2);
	T_EQ_STR(sym_named(&c.p, 0x1000), "before");
	T_EQ_STR(sym_named(&c.p, 0x2000), "after");
	T_ASSERT(strstr(c.err, "ignored 1 malformed line (the first is line 2)"));
	profile_release(&c.p);
	return T_OK;
}

/* Files the collector must not read: a FIFO, a symbolic link, a directory, another user's. */
static int test_collect_refuses(void)
{
	const uint64_t pcs[] = {0x7f0000001004ull};
	char dir[] = "/tmp/xprof-test-jitdir-XXXXXX", fifo[4096], link[4096], good[4096];
	char other[4096];
	struct collected c;
	FILE *f;

	T_ASSERT(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/fifo.map", dir);
	snprintf(link, sizeof(link), "%s/link.map", dir);
	snprintf(other, sizeof(other), "%s/other.map", dir);
	T_EQ_U64(mkfifo(fifo, 0600), 0);
	T_EQ_U64(symlink(data_path("perf-good.map", good, sizeof(good)), link), 0);
	/* The FIFO has no writer: opening it must not block. */
	T_EQ_U64(collect(&c, fifo, NULL, pcs, 1), 0);
	T_EQ_U64(c.ret, 0);
	T_ASSERT(strstr(c.err, "fifo.map': not a regular file"));
	profile_release(&c.p);
	T_EQ_U64(collect(&c, link, NULL, pcs, 1), 0);
	T_EQ_U64(c.ret, 0);
	T_ASSERT(strstr(c.err, "link.map': it is a symbolic link"));
	profile_release(&c.p);
	T_EQ_U64(collect(&c, dir, NULL, pcs, 1), 0);
	T_EQ_U64(c.ret, 0);
	T_ASSERT(strstr(c.err, "not a regular file"));
	profile_release(&c.p);
	/* A missing file is normal (no JIT): no warning at all. */
	T_EQ_U64(collect(&c, "/nonexistent/perf-1.map", NULL, pcs, 1), 0);
	T_EQ_STR(c.err, "");
	profile_release(&c.p);
	if (geteuid() == 0) {
		T_ASSERT((f = fopen(other, "w")));
		fputs("7f0000001000 40 planted\n", f);
		fclose(f);
		T_EQ_U64(chown(other, 65534, 65534), 0);
		T_EQ_U64(collect(&c, other, NULL, pcs, 1), 0);
		T_EQ_U64(c.ret, 0);
		T_EQ_U64(cap_lines(c.err), 1);
		T_ASSERT(strstr(c.err, "other.map': owned by uid 65534, neither root nor the "
				       "profiled user"));
		profile_release(&c.p);
		unlink(other);
	}
	unlink(fifo);
	unlink(link);
	rmdir(dir);
	return T_OK;
}

static int test_collect_jitdump(void)
{
	/* js_hot at lines 10, 11 (same file) and 20; the moved js_cold; a pc in no entry. */
	const uint64_t pcs[] = {0x7f0000010004ull, 0x7f0000010008ull, 0x7f0000010014ull,
				0x7f0000010030ull, 0x7f0000030004ull, 0x7f0000020004ull,
				0x7f0000050000ull};
	char path[4096];
	struct collected c;
	size_t i;

	T_EQ_U64(collect(&c, NULL, data_path("sample.dump", path, sizeof(path)), pcs, 7), 0);
	T_EQ_STR(c.err, "");
	T_EQ_U64(c.ret, 3);
	T_EQ_STR(sym_named(&c.p, 0x7f0000010000ull), "js_hot");
	T_EQ_STR(sym_named(&c.p, 0x7f0000020000ull), "js_cold");
	T_EQ_STR(sym_named(&c.p, 0x7f0000030000ull), "js_cold");
	/* One line range per distinct line holding a pc: 10, 11 and 20. */
	T_EQ_U64(c.p.nr_jitlines, 3);
	for (i = 0; i < 3; i++)
		T_EQ_U64(c.p.jitlines[i].pid, PID);
	T_EQ_U64(c.p.jitlines[0].start, 0x7f0000010000ull);
	T_EQ_U64(c.p.jitlines[0].end, 0x7f0000010010ull);
	T_EQ_U64(c.p.jitlines[0].line, 10);
	T_EQ_STR(c.p.jitlines[0].file, "app.js");
	T_EQ_U64(c.p.jitlines[1].line, 11);
	T_EQ_STR(c.p.jitlines[1].file, "app.js");
	T_EQ_U64(c.p.jitlines[2].start, 0x7f0000010020ull);
	T_EQ_U64(c.p.jitlines[2].end, 0x7f0000010040ull);
	T_EQ_U64(c.p.jitlines[2].line, 20);
	T_EQ_STR(c.p.jitlines[2].file, "lib.js");
	profile_release(&c.p);
	return T_OK;
}

/* The dump is found among the mappings by its name, jit-<pid>.dump. */
static int test_collect_finds_dump(void)
{
	const uint64_t pcs[] = {0x7f0000010004ull};
	char maps[8192], dump[4096], dir[] = "/tmp/xprof-test-jitfind-XXXXXX", copy[4096];
	struct addrspace as;
	struct stacktab t;
	struct df_writer *w;
	struct profile p;
	char out[] = "/tmp/xprof-test-jitout-XXXXXX";
	uint8_t *buf;
	size_t len;
	FILE *f;
	int fd, ret;

	T_ASSERT(mkdtemp(dir));
	snprintf(copy, sizeof(copy), "%s/jit-%d.dump", dir, PID);
	buf = slurp(data_path("sample.dump", dump, sizeof(dump)), &len);
	T_ASSERT(buf && (f = fopen(copy, "wb")));
	fwrite(buf, 1, len, f);
	fclose(f);
	free(buf);
	snprintf(maps, sizeof(maps),
		 "7f0000000000-7f0000001000 r-xp 00000000 08:01 1234 %s/jit-1.dump\n"
		 "7f0000002000-7f0000003000 r-xp 00000000 08:01 1235 %s\n",
		 dir, copy);
	addrspace_init(&as, PID, NULL);
	T_EQ_U64(addrspace_load_text(&as, maps), 0);
	stacks_of(&t, pcs, 1);
	fd = mkstemp(out);
	T_ASSERT(fd >= 0);
	close(fd);
	w = df_writer_open(out, 62, 0);
	T_ASSERT(w);
	cap_begin();
	ret = jitsink_collect(w, PID, &as, &t, 0);
	cap_end();
	df_writer_close(w);
	T_EQ_U64(ret, 1);
	profile_init(&p);
	T_EQ_U64(profile_load(&p, out), 0);
	T_EQ_STR(sym_named(&p, 0x7f0000010000ull), "js_hot");
	profile_release(&p);
	addrspace_release(&as);
	stacktab_release(&t);
	unlink(out);
	unlink(copy);
	rmdir(dir);
	return T_OK;
}

/*
 * A perf map that names one range twice while recording: jitmap_poll saw
 * the first line, then (100 ms later) the second; each JITSYM keeps its
 * time, the second later than the first, both within the recording.
 * jitdump records keep their CLOCK_MONOTONIC times (minus the start).
 */
static int test_collect_times(void)
{
	const uint64_t pcs[] = {0x7f0000001004ull};
	struct timespec ts, pause = {0, 120000000};
	char map[64], out[] = "/tmp/xprof-test-jittime-XXXXXX";
	uint64_t start, t1, t2;
	/* Above any pid_max, and apart from a concurrent run of this test. */
	pid_t pid = (pid_t)(4200000 + getpid() % 1000000);
	struct jit_watch watch = {0};
	struct stacktab t;
	struct df_writer *w;
	struct profile p;
	FILE *f;
	int fd;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	start = xp_timespec_ns(&ts);
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)pid);
	f = fopen(map, "w");
	T_ASSERT(f);
	fprintf(f, "7f0000001000 100 first_fn\n");
	T_EQ_U64(fflush(f), 0);
	nanosleep(&pause, NULL);
	jitmap_poll(&watch, pid, NULL, start);
	jitmap_poll(&watch, pid, NULL, start); /* within 100 ms: no look */
	nanosleep(&pause, NULL);
	fprintf(f, "7f0000001000 80 second_fn\n");
	T_EQ_U64(fclose(f), 0);
	nanosleep(&pause, NULL);
	jitmap_poll(&watch, pid, NULL, start);
	stacks_of(&t, pcs, 1);
	fd = mkstemp(out);
	T_ASSERT(fd >= 0);
	close(fd);
	w = df_writer_open(out, 62, 0);
	T_ASSERT(w);
	T_EQ_U64(jitsink_collect_files(w, &watch, pid, map, NULL, 0, &t, start), 2);
	df_writer_close(w);
	unlink(map);
	profile_init(&p);
	T_EQ_U64(profile_load(&p, out), 0);
	unlink(out);
	T_EQ_U64(p.nr_jitsyms, 2);
	T_EQ_STR(p.jitsyms[0].name, "first_fn");
	T_EQ_STR(p.jitsyms[1].name, "second_fn");
	t1 = p.jitsyms[0].t;
	t2 = p.jitsyms[1].t;
	printf("# first_fn named at %.3f s, second_fn at %.3f s\n", t1 / 1e9, t2 / 1e9);
	/* Written about 0, 0.24 s in; dated by the file's coarse mtime. */
	T_ASSERT(t1 < 100000000ull);
	T_ASSERT(t2 > 150000000ull && t2 < 400000000ull);
	profile_release(&p);
	stacktab_release(&t);
	return T_OK;
}

/* The canned jitdump's record times (123456789 ns each) less the start (0 here). */
static int test_collect_jitdump_times(void)
{
	const uint64_t pcs[] = {0x7f0000010004ull};
	char path[4096];
	struct collected c;
	size_t i;

	T_EQ_U64(collect(&c, NULL, data_path("sample.dump", path, sizeof(path)), pcs, 1), 0);
	T_ASSERT(c.p.nr_jitsyms >= 1);
	for (i = 0; i < c.p.nr_jitsyms; i++)
		T_EQ_U64(c.p.jitsyms[i].t, 123456789);
	profile_release(&c.p);
	return T_OK;
}

T_MAIN(T_CASE(test_perfmap_lines), T_CASE(test_perfmap_canned), T_CASE(test_jitdump_canned),
       T_CASE(test_jitdump_refuses), T_CASE(test_collect_perfmap), T_CASE(test_collect_bad_lines),
       T_CASE(test_collect_huge_line), T_CASE(test_collect_refuses), T_CASE(test_collect_jitdump),
       T_CASE(test_collect_finds_dump), T_CASE(test_collect_times),
       T_CASE(test_collect_jitdump_times))
