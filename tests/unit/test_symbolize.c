/* SPDX-License-Identifier: MIT */
/*
 * Symbolization of real addresses: this test program describes itself in a
 * data file (its executable mappings from /proc/self/maps, its build-id,
 * stacks made of the addresses of its own functions), then checks the
 * names, source lines and report output that come back.  It also covers
 * the pc-1 rule with a call that is the last instruction of its function,
 * a changed build-id, a missing file, unmapped addresses and markers.
 *
 * The functions are global and noinline, with calls that are not tail
 * calls, so their names and frames survive -O2 (as perf's
 * tests/dwarf-unwind.c does for the same reason).
 */
#include "profile.h"
#include "symbolize/symbolize.h"
#include "version.h"
#include "../cmd/cmd.h"

#include "stderr_capture.h"
#include "t.h"

#include <elf.h>
#include <gelf.h>
#include <fcntl.h>
#include <link.h>
#include <setjmp.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, used))

void xp_test_leaf(void);
void xp_test_mid(void);
void xp_test_top(void);
void xp_test_noret_caller(void);
void xp_test_noret_callee(void);

void xp_test_probe(void);
void xp_test_inline_host(void);
void xp_test_mangled(void) __asm__("_ZN6xptest7mangled5probeEi");

static volatile int sink;
static uint64_t ra_in_mid, ra_in_top, ra_noret, ra_in_inline, ra_in_mangled;
static jmp_buf noret_jmp;

NOINLINE void xp_test_leaf(void)
{
	ra_in_mid = (uint64_t)(uintptr_t)__builtin_return_address(0);
	sink++;
}

NOINLINE void xp_test_mid(void)
{
	ra_in_top = (uint64_t)(uintptr_t)__builtin_return_address(0);
	xp_test_leaf();
	sink++; /* not a tail call: the return address stays in this function */
}

NOINLINE void xp_test_top(void)
{
	xp_test_mid();
	sink++;
}

/* Never returns: the call to it is the last instruction of its caller. */
__attribute__((noreturn)) NOINLINE void xp_test_noret_callee(void)
{
	ra_noret = (uint64_t)(uintptr_t)__builtin_return_address(0);
	longjmp(noret_jmp, 1);
}

NOINLINE void xp_test_noret_caller(void)
{
	xp_test_noret_callee();
}

/*
 * An inlined chain: host -> outer -> inner -> (call) probe.  The return
 * address of the call to probe lies in inner's code, inlined twice.
 */
NOINLINE void xp_test_probe(void)
{
	ra_in_inline = (uint64_t)(uintptr_t)__builtin_return_address(0);
	sink++;
}

static const unsigned int line_call_probe = __LINE__ + 3;
static inline __attribute__((always_inline)) void xp_test_inline_inner(void)
{
	xp_test_probe();
	sink++;
}

static const unsigned int line_call_inner = __LINE__ + 3;
static inline __attribute__((always_inline)) void xp_test_inline_outer(void)
{
	xp_test_inline_inner();
	sink++;
}

static const unsigned int line_call_outer = __LINE__ + 3;
NOINLINE void xp_test_inline_host(void)
{
	xp_test_inline_outer();
	sink++;
}

/* A C++ name through an asm label: demangles to "xptest::mangled::probe(int)". */
NOINLINE void xp_test_mangled(void)
{
	ra_in_mangled = (uint64_t)(uintptr_t)__builtin_return_address(0);
	sink++;
}

static uint8_t self_id[64];
static size_t self_id_len;
static char self_path[4096];

static int find_build_id(struct dl_phdr_info *info, size_t size, void *data)
{
	int i;

	(void)size;
	(void)data;
	if (info->dlpi_name[0])
		return 0; /* only the main program (listed first, with an empty name) */
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		const uint8_t *end = p + ph->p_memsz;

		if (ph->p_type != PT_NOTE)
			continue;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
			const uint8_t *desc = p + sizeof(*n) + ((n->n_namesz + 3) & ~3u);

			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    !memcmp(p + sizeof(*n), "GNU", 4) && n->n_descsz <= sizeof(self_id)) {
				memcpy(self_id, desc, n->n_descsz);
				self_id_len = n->n_descsz;
				return 1;
			}
			p = desc + ((n->n_descsz + 3) & ~3u);
		}
	}
	return 1;
}

/*
 * Write our executable mappings to @w for pid @pid.  Mappings of our own
 * file get @id (the real build-id, or a wrong one).
 */
static int write_self_maps(struct df_writer *w, pid_t pid, const uint8_t *id, size_t idlen)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096 + 128], perms[8], path[4096];
	unsigned long start, end, off;
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		path[0] = 0;
		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %4095s", &start, &end, perms, &off,
			   path) < 4)
			continue;
		if (perms[2] != 'x')
			continue;
		if (!strcmp(path, self_path))
			df_write_mapping(w, 0, pid, start, end, off, 5, path, id, idlen);
		else
			df_write_mapping(w, 0, pid, start, end, off, 5, path, NULL, 0);
		n++;
	}
	fclose(f);
	return n ? 0 : -1;
}

static int setup(void)
{
	ssize_t n;

	if (!self_id_len)
		dl_iterate_phdr(find_build_id, NULL);
	n = readlink("/proc/self/exe", self_path, sizeof(self_path) - 1);
	if (n <= 0)
		return -1;
	self_path[n] = 0;
	xp_test_top();
	xp_test_inline_host();
	xp_test_mangled();
	if (!setjmp(noret_jmp))
		xp_test_noret_caller();
	return self_id_len && ra_in_mid && ra_in_top && ra_noret && ra_in_inline ? 0 : -1;
}

static uint64_t addr_of(void (*fn)(void))
{
	return (uint64_t)(uintptr_t)fn;
}

/* A profile of this process: pid 4242, three samples of leaf <- mid <- top. */
static int load_self(struct profile *p, const uint8_t *id, size_t idlen)
{
	char path[] = "/tmp/xprof-test-sym-XXXXXX";
	const uint64_t pcs[] = {addr_of(xp_test_leaf) + 1, ra_in_mid, ra_in_top};
	const uint8_t flags[] = {XP_FRAME_EXACT, 0, 0};
	const uint64_t noret[] = {ra_noret};
	const uint8_t noret_flags[] = {0};
	struct df_writer *w;
	int fd, ret;

	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	close(fd);
	w = df_writer_open(path, 62, 0);
	if (!w)
		return -1;
	df_write_process(w, 0, 4242, 1, DF_PROC_EXEC, "test_symbolize", self_path);
	ret = write_self_maps(w, 4242, id, idlen);
	df_write_stack(w, 1, pcs, flags, 3);
	df_write_stack(w, 2, noret, noret_flags, 1);
	df_write_sample(w, 1000, 4242, 4242, 1, 1);
	df_write_sample(w, 2000, 4242, 4243, 1, 1);
	df_write_sample(w, 3000, 4242, 4242, 1, 1);
	df_write_sample(w, 3000, 4242, 4242, 2, 1);
	ret |= df_writer_close(w);
	profile_init(p);
	ret |= profile_load(p, path);
	unlink(path);
	return ret;
}

/* symbolize_pc with the lookup address computed here, once. */
static const struct sym_frame *sym_pc(struct symbolizer *s, pid_t pid, const struct sym_map *map,
				      uint64_t pc, unsigned int flags)
{
	return symbolize_pc(s, pid, map, pc, xp_lookup_pc(pc, flags), flags);
}

static const struct sym_frame *sym_at(struct symbolizer *s, const struct profile *p, uint64_t pc,
				      unsigned int flags)
{
	const struct profile_mapping *m =
	    profile_find_mapping(p, 4242, 1000, xp_lookup_pc(pc, flags));
	struct sym_map sm;

	if (m)
		sm = (struct sym_map){m->start,	   m->end,	    m->offset,	m->path,
				      m->build_id, m->build_id_len, &m->file_id};
	return sym_pc(s, 4242, m ? &sm : NULL, pc, flags);
}

/* The pc-1 rule of dataformat.h, for every flag combination that matters. */
static int test_pc_minus_one_rule(void)
{
	T_EQ_U64(xp_lookup_pc(0x1000, XP_FRAME_EXACT), 0x1000);
	T_EQ_U64(xp_lookup_pc(0x1000, 0), 0xfff);
	T_EQ_U64(xp_lookup_pc(0x1000, XP_FRAME_CFI), 0xfff);
	T_EQ_U64(xp_lookup_pc(0x1000, XP_FRAME_EXACT | XP_FRAME_CFI), 0x1000);
	T_EQ_U64(xp_lookup_pc(0, 0), 0);
	return T_OK;
}

static int test_symbolize_self(void)
{
	struct symbolizer *s;
	const struct sym_frame *f;
	struct sym_opts opts = {.lines = true};
	struct profile p;
	const char *err;
	int ret = T_OK;

	if (setup())
		return T_SKIP;
	T_EQ_U64(load_self(&p, self_id, self_id_len), 0);
	s = symbolizer_new(&opts);
	cap_begin();
	f = sym_at(s, &p, addr_of(xp_test_leaf), XP_FRAME_EXACT);
	if (f->kind != SYM_FUNC || strcmp(f->name, "xp_test_leaf") || f->offset != 0 || !f->file ||
	    !strstr(f->file, "test_symbolize.c") || !f->line)
		ret = T_FAIL;
	if (strcmp(sym_at(s, &p, ra_in_mid, 0)->name, "xp_test_mid") ||
	    strcmp(sym_at(s, &p, ra_in_top, 0)->name, "xp_test_top"))
		ret = T_FAIL;
	/*
	 * A shared library (libc: .dynsym at least, debuginfo if installed;
	 * under ASan, qsort is libasan's interceptor, "__interceptor_qsort").
	 */
	f = sym_at(s, &p, addr_of((void (*)(void))qsort) + 2, XP_FRAME_EXACT);
	if (f->kind != SYM_FUNC || !strstr(f->name, "qsort")) {
		fprintf(stderr, "qsort+2 is '%s'\n", f->name);
		ret = T_FAIL;
	}
	/* Cached: the same frame object for the same address. */
	if (sym_at(s, &p, ra_in_mid, 0) != sym_at(s, &p, ra_in_mid, 0))
		ret = T_FAIL;
	err = cap_end();
	symbolizer_free(s);
	profile_release(&p);
	T_EQ_STR(err, "");
	T_EQ_U64(ret, T_OK);
	return T_OK;
}

/*
 * The return address of a call that ends its function is the first byte
 * after it: only pc - 1 lands in the caller.
 */
static int test_pc_minus_one_real(void)
{
	struct symbolizer *s;
	struct profile p;
	const char *as_return, *as_exact;

	if (setup())
		return T_SKIP;
	T_EQ_U64(load_self(&p, self_id, self_id_len), 0);
	s = symbolizer_new(NULL);
	cap_begin();
	as_return = sym_at(s, &p, ra_noret, 0)->name;
	as_exact = sym_at(s, &p, ra_noret, XP_FRAME_EXACT)->name;
	cap_end();
	T_EQ_STR(as_return, "xp_test_noret_caller");
	/* Taken as exact, the same address is past the caller (if the compiler ended it there). */
	if (!strcmp(as_exact, "xp_test_noret_caller"))
		fprintf(stderr, "note: the call is not the last instruction of its caller here\n");
	symbolizer_free(s);
	profile_release(&p);
	return T_OK;
}

static int test_build_id_mismatch(void)
{
	uint8_t wrong[20];
	struct symbolizer *s;
	struct profile p;
	const char *err, *name1, *name2;
	char expect[64];
	uint64_t off;
	const struct profile_mapping *m;

	if (setup())
		return T_SKIP;
	memset(wrong, 0xab, sizeof(wrong));
	T_EQ_U64(load_self(&p, wrong, sizeof(wrong)), 0);
	s = symbolizer_new(NULL);
	cap_begin();
	name1 = sym_at(s, &p, addr_of(xp_test_leaf), XP_FRAME_EXACT)->name;
	name2 = sym_at(s, &p, ra_in_mid, 0)->name;
	err = cap_end();
	m = profile_find_mapping(&p, 4242, 1000, addr_of(xp_test_leaf));
	T_ASSERT(m);
	off = addr_of(xp_test_leaf) - m->start + m->offset;
	snprintf(expect, sizeof(expect), "test_symbolize+%#llx", (unsigned long long)off);
	T_EQ_STR(name1, expect);
	T_ASSERT(!strncmp(name2, "test_symbolize+0x", 17));
	/* One warning for the module, not one per frame. */
	T_EQ_U64(cap_lines(err), 1);
	T_ASSERT(strstr(err, "has changed since it was recorded (build-id "));
	T_ASSERT(strstr(err, "recorded abababab"));
	symbolizer_free(s);
	profile_release(&p);
	return T_OK;
}

static int test_unresolved(void)
{
	const uint8_t id[] = {1, 2, 3, 4};
	struct sym_map missing = {0x10000, 0x20000, 0x3000, "/nonexistent/libgone.so.1",
				  id,	   4,	    NULL};
	struct sym_map vdso = {0x30000, 0x31000, 0, "[vdso]", NULL, 0, NULL};
	struct symbolizer *s = symbolizer_new(NULL);
	const char *n1, *n2, *n3, *n4, *n5, *n6, *err;

	cap_begin();
	n1 = sym_pc(s, 1, &missing, 0x10010, XP_FRAME_EXACT)->name;
	n2 = sym_pc(s, 1, &missing, 0x10020, 0)->name;
	n3 = sym_pc(s, 1, &vdso, 0x30100, XP_FRAME_EXACT)->name;
	n4 = sym_pc(s, 1, NULL, 0x1234, 0)->name;
	n5 = sym_pc(s, 1, NULL, 0x1234, XP_FRAME_TRUNCATED)->name;
	n6 = sym_pc(s, 1, NULL, 231, XP_FRAME_SYSCALL)->name;
	err = cap_end();
	T_EQ_STR(n1, "libgone.so.1+0x3010");
	/* The raw address is shown; only the lookup uses pc - 1. */
	T_EQ_STR(n2, "libgone.so.1+0x3020");
	T_EQ_STR(n3, "[vdso]+0x100");
	T_EQ_STR(n4, "0x1234");
	T_EQ_STR(n5, "[truncated]");
	T_EQ_STR(n6, "[syscall] 231");
	T_EQ_STR(err, "xprof: warning: cannot open '/nonexistent/libgone.so.1': No such file or "
		      "directory; its frames are shown as libgone.so.1+offset\n");
	symbolizer_free(s);
	return T_OK;
}

/* A data file naming a FIFO (or a device) as a mapped file: no hang, one warning. */
static int test_not_regular(void)
{
	char dir[] = "/tmp/xprof-test-fifo-XXXXXX", fifo[64];
	struct sym_map map = {0x10000, 0x20000, 0, fifo, NULL, 0, NULL};
	struct sym_map dev = {0x30000, 0x40000, 0, "/dev/zero", NULL, 0, NULL};
	struct symbolizer *s = symbolizer_new(NULL);
	const char *err;

	T_ASSERT(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	T_EQ_U64(mkfifo(fifo, 0600), 0);
	cap_begin();
	T_EQ_STR(sym_pc(s, 1, &map, 0x10010, XP_FRAME_EXACT)->name, "fifo+0x10");
	T_EQ_STR(sym_pc(s, 1, &dev, 0x30010, XP_FRAME_EXACT)->name, "0x30010");
	err = cap_end();
	T_ASSERT(strstr(err, "/fifo': not a regular file; its frames are shown as fifo+offset"));
	T_EQ_U64(cap_lines(err), 1);
	symbolizer_free(s);
	unlink(fifo);
	rmdir(dir);
	return T_OK;
}

/* The whole report path on real addresses: folded output names our functions. */
static int test_report_self(void)
{
	struct report_opts opts = REPORT_OPTS_INIT;
	struct profile p;
	char *text = NULL, expect[256];
	size_t len = 0;
	FILE *out;
	int ret;

	if (setup())
		return T_SKIP;
	T_EQ_U64(load_self(&p, self_id, self_id_len), 0);
	opts.format = REPORT_FOLDED;
	out = open_memstream(&text, &len);
	T_ASSERT(out);
	cap_begin();
	ret = report_profile(&opts, &p, out);
	cap_end();
	fclose(out);
	profile_release(&p);
	T_EQ_U64(ret, 0);
	snprintf(expect, sizeof(expect),
		 "test_symbolize;xp_test_noret_caller 1\n"
		 "test_symbolize;xp_test_top;xp_test_mid;xp_test_leaf 3\n");
	T_EQ_STR(text, expect);
	free(text);
	return T_OK;
}

/* A return address in twice-inlined code: three frames, each with the line of its call. */
static int test_inline_chain(void)
{
	struct sym_opts opts = {.lines = true};
	const struct sym_frame *f, *g;
	struct symbolizer *s, *flat;
	struct profile p;

	if (setup())
		return T_SKIP;
	T_EQ_U64(load_self(&p, self_id, self_id_len), 0);
	s = symbolizer_new(&opts);
	f = sym_at(s, &p, ra_in_inline, 0);
	T_EQ_STR(f->name, "xp_test_inline_inner");
	T_EQ_U64(f->kind, SYM_FUNC);
	T_ASSERT(f->file && strstr(f->file, "test_symbolize.c"));
	T_EQ_U64(f->line, line_call_probe);
	T_EQ_STR(f->module, "test_symbolize");
	T_ASSERT(f->caller);
	T_EQ_STR(f->caller->name, "xp_test_inline_outer");
	T_EQ_U64(f->caller->line, line_call_inner);
	T_ASSERT(f->caller->caller);
	g = f->caller->caller;
	T_EQ_STR(g->name, "xp_test_inline_host");
	T_EQ_U64(g->line, line_call_outer);
	T_ASSERT(!g->caller);
	/* The offset is within the function that holds the code, at every level. */
	T_EQ_U64(f->offset, g->offset);
	T_EQ_U64(g->offset, ra_in_inline - 1 - addr_of(xp_test_inline_host));
	/* --no-inline: only the function holding the code, with the line-table line. */
	opts.no_inline = true;
	flat = symbolizer_new(&opts);
	f = sym_at(flat, &p, ra_in_inline, 0);
	T_EQ_STR(f->name, "xp_test_inline_host");
	T_ASSERT(!f->caller);
	T_EQ_U64(f->line, line_call_probe);
	symbolizer_free(flat);
	symbolizer_free(s);
	profile_release(&p);
	return T_OK;
}

static int test_demangled_names(void)
{
	struct sym_opts opts = {.no_demangle = true};
	struct symbolizer *s, *raw;
	struct profile p;

	if (setup())
		return T_SKIP;
	T_EQ_U64(load_self(&p, self_id, self_id_len), 0);
	s = symbolizer_new(NULL);
	raw = symbolizer_new(&opts);
	/* A build without a demangler (a cross build without libstdc++) shows it raw. */
	T_EQ_STR(sym_at(s, &p, addr_of(xp_test_mangled), XP_FRAME_EXACT)->name,
		 XPROF_HAVE_LIBIBERTY || XPROF_HAVE_CXA_DEMANGLE ? "xptest::mangled::probe(int)"
								 : "_ZN6xptest7mangled5probeEi");
	T_EQ_STR(sym_at(raw, &p, addr_of(xp_test_mangled), XP_FRAME_EXACT)->name,
		 "_ZN6xptest7mangled5probeEi");
	symbolizer_free(raw);
	symbolizer_free(s);
	profile_release(&p);
	return T_OK;
}

/* JIT symbols name addresses with no mapping and in anonymous memory, never in files. */
static int test_jit_symbols(void)
{
	struct sym_opts opts = {.lines = true};
	struct symbolizer *s = symbolizer_new(&opts);
	struct sym_map anon = {0x7000000, 0x7010000, 0, "", NULL, 0, NULL};
	struct sym_map memfd = {0x7100000, 0x7110000, 0, "/memfd:jit (deleted)", NULL, 0, NULL};
	struct sym_map file = {0x400000, 0x401000, 0, "/nonexistent/app", NULL, 0, NULL};
	const struct sym_frame *f;

	symbolizer_add_jit(s, 7, 0x7000000, 0x100, "old_code", 0);
	symbolizer_add_jit(s, 7, 0x7000080, 0x40, "newer_code",
			   0); /* later: wins where it overlaps */
	symbolizer_add_jit(s, 7, 0x7100000, 0x10, "in_memfd", 0);
	symbolizer_add_jit(s, 7, 0x900000, 0x10, "unmapped", 0);
	symbolizer_add_jit(s, 7, 0x400000, 0x1000, "over_a_file", 0);
	symbolizer_add_jit(s, 8, 0x7000000, 0x1000, "other_pid", 0);
	symbolizer_add_jit(s, 7, 0x7000200, 0, "empty", 0);
	symbolizer_add_jit_line(s, 7, 0x7000000, 0x7000010, "script.js", 12);
	cap_begin();
	f = sym_pc(s, 7, &anon, 0x7000004, XP_FRAME_EXACT);
	T_EQ_U64(f->kind, SYM_JIT);
	T_EQ_STR(f->name, "old_code");
	T_EQ_U64(f->offset, 4);
	T_EQ_STR(f->file, "script.js");
	T_EQ_U64(f->line, 12);
	T_ASSERT(!f->module && !f->caller);
	T_EQ_STR(sym_pc(s, 7, &anon, 0x7000090, XP_FRAME_EXACT)->name, "newer_code");
	T_EQ_STR(sym_pc(s, 7, &anon, 0x70000c0, XP_FRAME_EXACT)->name, "old_code");
	/* A return address just past a symbol is looked up at pc - 1, inside it. */
	T_EQ_STR(sym_pc(s, 7, &anon, 0x70000c0, 0)->name, "newer_code");
	T_EQ_STR(sym_pc(s, 7, &anon, 0x7000100, XP_FRAME_EXACT)->name, "0x7000100");
	T_EQ_STR(sym_pc(s, 7, &anon, 0x7000200, XP_FRAME_EXACT)->name, "0x7000200");
	T_EQ_STR(sym_pc(s, 7, &memfd, 0x7100004, XP_FRAME_EXACT)->name, "in_memfd");
	T_EQ_STR(sym_pc(s, 7, NULL, 0x900008, XP_FRAME_EXACT)->name, "unmapped");
	T_EQ_STR(sym_pc(s, 8, &anon, 0x7000004, XP_FRAME_EXACT)->name, "other_pid");
	T_EQ_STR(sym_pc(s, 9, &anon, 0x7000004, XP_FRAME_EXACT)->name, "0x7000004");
	/* A file mapping is the file's business, whatever a perf map says. */
	T_EQ_STR(sym_pc(s, 7, &file, 0x400010, XP_FRAME_EXACT)->name, "app+0x10");
	cap_end();
	symbolizer_free(s);
	return T_OK;
}

/*
 * A JIT that reused one range: a sample is named after the symbol valid
 * at its time (the latest named at or before it), one taken before any
 * was named after the earliest; symbolize_pc looks at the end.
 */
static int test_jit_symbols_in_time(void)
{
	struct symbolizer *s = symbolizer_new(NULL);
	struct sym_map anon = {0x7000000, 0x7010000, 0, "", NULL, 0, NULL};

	symbolizer_add_jit(s, 7, 0x7000000, 0x100, "first", 1000);
	symbolizer_add_jit(s, 7, 0x7000000, 0x100, "second", 5000);
	symbolizer_add_jit(s, 7, 0x7000000, 0x80, "third", 9000);
	symbolizer_add_jit(s, 7, 0x7000000, 0x100, "third_too", 9000); /* same time: added last */
	T_EQ_STR(symbolize_pc_at(s, 7, &anon, 0x7000010, 0x7000010, XP_FRAME_EXACT, 0)->name,
		 "first");
	T_EQ_STR(symbolize_pc_at(s, 7, &anon, 0x7000010, 0x7000010, XP_FRAME_EXACT, 1000)->name,
		 "first");
	T_EQ_STR(symbolize_pc_at(s, 7, &anon, 0x7000010, 0x7000010, XP_FRAME_EXACT, 4999)->name,
		 "first");
	T_EQ_STR(symbolize_pc_at(s, 7, &anon, 0x7000010, 0x7000010, XP_FRAME_EXACT, 5000)->name,
		 "second");
	T_EQ_STR(symbolize_pc_at(s, 7, &anon, 0x7000010, 0x7000010, XP_FRAME_EXACT, 8999)->name,
		 "second");
	T_EQ_STR(symbolize_pc_at(s, 7, &anon, 0x7000010, 0x7000010, XP_FRAME_EXACT, 9000)->name,
		 "third_too");
	T_EQ_STR(symbolize_pc_at(s, 7, &anon, 0x70000f0, 0x70000f0, XP_FRAME_EXACT, 7000)->name,
		 "second");
	T_EQ_STR(sym_pc(s, 7, &anon, 0x7000010, XP_FRAME_EXACT)->name, "third_too");
	/* Cached per symbol: asking again in another order gives the same answers. */
	T_EQ_STR(symbolize_pc_at(s, 7, &anon, 0x7000010, 0x7000010, XP_FRAME_EXACT, 2000)->name,
		 "first");
	T_EQ_STR(symbolize_pc_at(s, 7, &anon, 0x7000010, 0x7000010, XP_FRAME_EXACT, 6000)->name,
		 "second");
	symbolizer_free(s);
	return T_OK;
}

static const char *fake_syscall_name(unsigned int nr)
{
	return nr == 35 ? "nanosleep" : NULL;
}

static int test_syscall_names(void)
{
	struct sym_opts opts = {.syscall_name = fake_syscall_name};
	struct symbolizer *s = symbolizer_new(&opts);

	T_EQ_STR(sym_pc(s, 1, NULL, 35, XP_FRAME_SYSCALL)->name, "[syscall] nanosleep");
	T_EQ_STR(sym_pc(s, 1, NULL, 99999, XP_FRAME_SYSCALL)->name, "[syscall] 99999");
	T_EQ_U64(sym_pc(s, 1, NULL, 35, XP_FRAME_SYSCALL)->kind, SYM_MARKER);
	symbolizer_free(s);
	return T_OK;
}

/* Our own [vdso]: where it is mapped (from /proc/self/maps). */
static int find_vdso(uint64_t *start, uint64_t *end)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	unsigned long s, e;
	int ret = -1;

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") && sscanf(line, "%lx-%lx", &s, &e) == 2) {
			*start = s;
			*end = e;
			ret = 0;
		}
	if (f)
		fclose(f);
	return ret;
}

/* The address of dynamic symbol @name in the ELF image at @img (linked at 0). */
static uint64_t vdso_sym(const uint8_t *img, size_t len, const char *name)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(img + eh->e_shoff);
	unsigned int i, j;

	if (eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(*sh) > len)
		return 0;
	for (i = 0; i < eh->e_shnum; i++) {
		const Elf64_Sym *sym = (const Elf64_Sym *)(img + sh[i].sh_offset);
		const char *str = (const char *)img + sh[sh[i].sh_link].sh_offset;

		if (sh[i].sh_type != SHT_DYNSYM)
			continue;
		for (j = 0; j < sh[i].sh_size / sizeof(*sym); j++)
			if (!strcmp(str + sym[j].st_name, name))
				return sym[j].st_value;
	}
	return 0;
}

/*
 * [vdso] frames named from an image the data file carries (here: our own),
 * and [vdso]+0xOFF without one, or with one of another size.
 */
static int test_vdso_image(void)
{
	const uint8_t *img = (const uint8_t *)getauxval(AT_SYSINFO_EHDR);
	static const char other[] = "\177ELF, but not of the [vdso]'s size";
	struct sym_map vdso = {0, 0, 0, "[vdso]", NULL, 0, NULL};
	struct symbolizer *s, *none;
	uint64_t start = 0, end = 0, off;
	const char *err;

	if (!img || find_vdso(&start, &end) || (uint64_t)(uintptr_t)img != start)
		return T_SKIP;
	/* x86-64 names it __vdso_*, aarch64 and riscv64 __kernel_*. */
	off = vdso_sym(img, end - start, "__vdso_clock_gettime");
	if (!off)
		off = vdso_sym(img, end - start, "__kernel_clock_gettime");
	if (!off)
		return T_SKIP;
	vdso.start = 0x7ff000000000ull;
	vdso.end = vdso.start + (end - start);
	s = symbolizer_new(NULL);
	none = symbolizer_new(NULL);
	symbolizer_add_vdso(s, other, sizeof(other)); /* no mapping of its size */
	symbolizer_add_vdso(s, img, end - start);
	cap_begin();
	T_ASSERT(strstr(sym_pc(s, 1, &vdso, vdso.start + off + 1, XP_FRAME_EXACT)->name,
			"clock_gettime"));
	T_EQ_STR(sym_pc(s, 1, &vdso, vdso.start + off + 1, XP_FRAME_EXACT)->module, "[vdso]");
	T_ASSERT(!strncmp(sym_pc(none, 1, &vdso, vdso.start + off, XP_FRAME_EXACT)->name,
			  "[vdso]+0x", 9));
	err = cap_end();
	T_EQ_STR(err, "");
	symbolizer_free(none);
	symbolizer_free(s);
	return T_OK;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The executable mapping of this program holding @addr, from /proc/self/maps. */
static int exec_range(uint64_t addr, uint64_t *start, uint64_t *end)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096 + 128], perms[8];
	unsigned long s, e;
	int ret = -1;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %7s", &s, &e, perms) == 3 && perms[2] == 'x' &&
		    addr >= s && addr < e) {
			*start = s;
			*end = e;
			ret = 0;
		}
	if (f)
		fclose(f);
	return ret;
}

/*
 * A million samples over 2000 stacks of 16 real addresses (8 in this
 * program, 8 in libc, which has DWARF when libc6-dbg is installed), all
 * through the report path: load, symbolize (symbols, inline scopes),
 * aggregate, print.  Prints the time of a cold and a warm run.
 */
static int test_million_symbolized(void)
{
	struct report_opts opts = REPORT_OPTS_INIT;
	char path[] = "/tmp/xprof-test-big-XXXXXX", *text, *line, *nl;
	uint64_t self_lo, self_hi, libc_lo, libc_hi, pcs[16], i, rnd = 42, total;
	uint8_t flags[16];
	struct df_writer *w;
	struct profile p;
	double t0, t1, t2, c1, cold = 0, warm = 0, load = 0, warm_cpu = 0;
	size_t len;
	FILE *out;
	int run, fd;

	if (setup() || exec_range(addr_of(xp_test_leaf), &self_lo, &self_hi) ||
	    exec_range(addr_of((void (*)(void))qsort), &libc_lo, &libc_hi))
		return T_SKIP;
	fd = mkstemp(path);
	T_ASSERT(fd >= 0);
	close(fd);
	w = df_writer_open(path, 62, 0);
	T_ASSERT(w);
	df_write_process(w, 0, 4242, 1, DF_PROC_EXEC, "big", self_path);
	T_EQ_U64(write_self_maps(w, 4242, self_id, self_id_len), 0);
	memset(flags, 0, sizeof(flags));
	flags[0] = XP_FRAME_EXACT;
	for (i = 0; i < 2000; i++) {
		unsigned int d;

		for (d = 0; d < 16; d++) {
			rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
			if (d < 8)
				pcs[d] = libc_lo + (rnd >> 20) % (libc_hi - libc_lo);
			else
				pcs[d] = self_lo + (rnd >> 20) % (self_hi - self_lo);
		}
		df_write_stack(w, i + 1, pcs, flags, 16);
	}
	for (i = 0; i < 1000000; i++) {
		df_write_sample(w, i, 4242, 4242, 1 + (i * 2654435761u) % 2000, 1);
		if (i % 65536 == 0)
			T_EQ_U64(df_writer_flush(w), 0);
	}
	T_EQ_U64(df_writer_close(w), 0);
	opts.format = REPORT_FOLDED;
	for (run = 0; run < 2; run++) {
		t0 = now_s();
		profile_init(&p);
		T_EQ_U64(profile_load(&p, path), 0);
		t1 = now_s();
		c1 = cpu_s();
		text = NULL;
		out = open_memstream(&text, &len);
		T_ASSERT(out);
		cap_begin();
		T_EQ_U64(report_profile(&opts, &p, out), 0);
		cap_end();
		fclose(out);
		t2 = now_s();
		profile_release(&p);
		/* Every sample is in the output once: the count ends each line. */
		for (total = 0, line = text; line && *line; line = nl ? nl + 1 : NULL) {
			nl = strchr(line, '\n');
			if (nl)
				*nl = 0;
			if (strrchr(line, ' '))
				total += strtoull(strrchr(line, ' ') + 1, NULL, 10);
		}
		free(text);
		T_EQ_U64(total, 1000000);
		load = t1 - t0;
		if (run) {
			warm = t2 - t1;
			warm_cpu = cpu_s() - c1;
		} else
			cold = t2 - t1;
	}
	unlink(path);
	printf("# 1M samples, 2000 stacks, 32000 real pcs: loaded in %.2f s; symbolized, "
	       "aggregated and printed in %.2f s cold, %.2f s warm (%.2f s CPU)\n",
	       load, cold, warm, warm_cpu);
	/* A generous bound: catches an accidental quadratic, not a slow machine. */
	T_ASSERT(warm < 30);
	return T_OK;
}

/* The file offset of ELF address @vaddr of @path, from its PT_LOAD headers; -1 when none. */
static int64_t file_offset_of(const char *path, uint64_t vaddr)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf;
	size_t i, n;
	int64_t off = -1;

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	for (i = 0; elf && !elf_getphdrnum(elf, &n) && i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr &&
		    vaddr - ph.p_vaddr < ph.p_filesz)
			off = (int64_t)(vaddr - ph.p_vaddr + ph.p_offset);
	}
	elf_end(elf);
	close(fd);
	return off;
}

/*
 * Every PLT stub of @path is named as binutils' objdump (@objdump) names
 * it, at its first byte and inside it; the PLT headers are named after no
 * symbol at all.  objdump's IRELATIVE stubs ("*ABS*+0x...@plt") only must
 * not be named after an unrelated symbol.  Returns the number of stubs
 * checked, or -1 after printing the first mismatch.
 */
static long check_plt_names(const char *objdump, const char *path)
{
	char cmd[4096], line[1024], want[512];
	struct sym_map map = {1ULL << 32, 1ULL << 40, 0, path, NULL, 0, NULL};
	struct symbolizer *s = symbolizer_new(NULL);
	unsigned long long vaddr;
	long n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd),
		 "%s -d -j .plt -j .plt.sec -j .plt.got '%s' 2>/dev/null | "
		 "grep -E '^[0-9a-f]+ <.*>:$'",
		 objdump, path);
	f = popen(cmd, "r");
	if (!f) {
		symbolizer_free(s);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *name = strchr(line, '<'), *end = strrchr(line, '>'), *at;
		const struct sym_frame *fr;
		int64_t off;
		int k;

		if (!name || !end || sscanf(line, "%llx", &vaddr) != 1)
			continue;
		*end = 0;
		name++;
		off = file_offset_of(path, vaddr);
		if (off < 0)
			continue;
		for (k = 0; k < 2; k++) {
			fr = sym_pc(s, 1, &map, map.start + (uint64_t)off + (uint64_t)k * 4,
				    XP_FRAME_EXACT);
			if (strstr(name, "@plt-") || !strncmp(name, "*ABS*", 5) || name[0] == '.') {
				/* A header, or an IFUNC stub: a func@plt name or none. */
				if (fr->kind == SYM_MODULE_OFFSET ||
				    (strstr(fr->name, "@plt") && !strncmp(name, "*ABS*", 5)))
					continue;
			} else {
				/* objdump writes "memcpy@GLIBC_2.14@plt" for versioned ones. */
				snprintf(want, sizeof(want), "%s", name);
				at = strchr(want, '@');
				if (at)
					snprintf(at, sizeof(want) - (size_t)(at - want), "@plt");
				if (!strcmp(fr->name, want))
					continue;
			}
			fprintf(stderr, "# %s: %s at %#llx+%d is named '%s'\n", path, name, vaddr,
				k * 4, fr->name);
			pclose(f);
			symbolizer_free(s);
			return -1;
		}
		n++;
	}
	pclose(f);
	symbolizer_free(s);
	return n;
}

/*
 * PLT stubs are named after the relocation they jump through, on the
 * three machines (IBT/BTI layouts included where the files have them);
 * objdump is the oracle.  Cross files come from the xarch sysroots when
 * they and the cross objdump are there.
 */
static int test_plt_names(void)
{
	static const char *const host[] = {
	    "/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libcrypto.so.3",
	    "/usr/lib/x86_64-linux-gnu/libsqlite3.so.0", "/usr/lib/x86_64-linux-gnu/libdw.so.1",
	    "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0"};
	static const char *const cross[][2] = {{"aarch64", "libc.so.6"},
					       {"aarch64", "libdw.so.1"},
					       {"riscv64", "libc.so.6"},
					       {"riscv64", "libdw.so.1"}};
	const char *cache = getenv("XARCH_CACHE"), *home = getenv("HOME");
	char path[4096], objdump[256];
	long n, total = 0;
	size_t i;

	for (i = 0; i < sizeof(host) / sizeof(host[0]); i++) {
		if (access(host[i], R_OK) || access("/usr/bin/x86_64-linux-gnu-objdump", X_OK))
			continue;
		n = check_plt_names("/usr/bin/x86_64-linux-gnu-objdump", host[i]);
		T_ASSERT(n >= 0);
		printf("# %s: %ld PLT stubs named as objdump names them\n", host[i], n);
		total += n;
	}
	for (i = 0; i < sizeof(cross) / sizeof(cross[0]); i++) {
		if (cache)
			snprintf(path, sizeof(path), "%s/%s/sysroot/usr/lib/%s-linux-gnu/%s", cache,
				 cross[i][0], cross[i][0], cross[i][1]);
		else
			snprintf(path, sizeof(path),
				 "%s/.cache/xarch/%s/sysroot/usr/lib/%s-linux-gnu/%s",
				 home ? home : "/root", cross[i][0], cross[i][0], cross[i][1]);
		snprintf(objdump, sizeof(objdump), "/usr/bin/%s-linux-gnu-objdump", cross[i][0]);
		if (access(path, R_OK) || access(objdump, X_OK))
			continue;
		n = check_plt_names(objdump, path);
		T_ASSERT(n >= 0);
		printf("# %s: %ld PLT stubs named as objdump names them\n", path, n);
		total += n;
	}
	/* More, as "objdump:file" words, e.g. libraries built with -fcf-protection -z ibtplt. */
	if (getenv("XPROF_TEST_PLT_FILES")) {
		char *list = strdup(getenv("XPROF_TEST_PLT_FILES")), *save = NULL, *w, *colon;

		T_ASSERT(list);
		for (w = strtok_r(list, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
			colon = strchr(w, ':');
			T_ASSERT(colon);
			*colon = 0;
			n = check_plt_names(w, colon + 1);
			T_ASSERT(n > 0);
			printf("# %s: %ld PLT stubs named as objdump names them\n", colon + 1, n);
			total += n;
		}
		free(list);
	}
	if (!total)
		return T_SKIP;
	return T_OK;
}

/*
 * glibc's aliases are named as users call them: free (not cfree,
 * __libc_free or __free), read (not __read or __libc_read), with the
 * .dynsym alone and with glibc's debuginfo when it is installed.
 */
static int test_alias_names(void)
{
	struct profile p;
	struct symbolizer *s;
	const struct profile_mapping *m;
	struct sym_map sm;
	uint64_t pc_free = (uint64_t)(uintptr_t)free, pc_read = (uint64_t)(uintptr_t)read;

	T_EQ_U64(load_self(&p, self_id, self_id_len), 0);
	m = profile_find_mapping(&p, 4242, 1000, pc_free);
	T_ASSERT(m);
	sm = (struct sym_map){m->start, m->end, m->offset, m->path, NULL, 0, NULL};
	s = symbolizer_new(NULL);
	T_EQ_STR(sym_pc(s, 4242, &sm, pc_free + 2, XP_FRAME_EXACT)->name, "free");
	m = profile_find_mapping(&p, 4242, 1000, pc_read);
	T_ASSERT(m);
	sm = (struct sym_map){m->start, m->end, m->offset, m->path, NULL, 0, NULL};
	T_EQ_STR(sym_pc(s, 4242, &sm, pc_read + 2, XP_FRAME_EXACT)->name, "read");
	symbolizer_free(s);
	profile_release(&p);
	return T_OK;
}

T_MAIN(T_CASE(test_pc_minus_one_rule), T_CASE(test_symbolize_self), T_CASE(test_pc_minus_one_real),
       T_CASE(test_build_id_mismatch), T_CASE(test_unresolved), T_CASE(test_report_self),
       T_CASE(test_inline_chain), T_CASE(test_demangled_names), T_CASE(test_jit_symbols),
       T_CASE(test_syscall_names), T_CASE(test_vdso_image), T_CASE(test_million_symbolized),
       T_CASE(test_not_regular), T_CASE(test_plt_names), T_CASE(test_alias_names),
       T_CASE(test_jit_symbols_in_time))
