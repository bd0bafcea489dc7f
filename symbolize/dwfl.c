/* SPDX-License-Identifier: MIT */
/*
 * The libdwfl backend of symbolize.h.  Each (path, build-id) becomes one
 * module, reported alone in its own Dwfl at its link-time addresses (base 0,
 * bias 0 for ET_DYN), so modules of different processes or generations
 * never overlap.  An address is mapped from the recorded mapping to a file
 * offset, then through the file's PT_LOAD headers to an ELF virtual address,
 * which is what symbol tables and DWARF speak.  Names come from the symbol
 * table (demangled, version dropped); inlined calls from the DWARF scopes
 * at the address (dwarf_getscopes, as eu-addr2line -i does).  Separate
 * debuginfo is found by libdwfl's standard search (build-id, then
 * .gnu_debuglink) over the debug directories; a file that is gone or was
 * rebuilt is replaced by the debuginfo of its recorded build-id when one is
 * found, since that describes exactly the code that ran.  [vdso] images
 * from the data file are read from memory.  Addresses outside file
 * mappings go to the JIT tables (jitsyms.c).  This is the only file of
 * symbolize/ that includes libdw's headers (target/module.c, the recorder's
 * CFI reader, is the other user of libdw, behind module.h).
 */
#include "symbolize.h"
#include "demangle.h"
#include "jitsyms.h"
#include "plt.h"
#include "err.h"
#include "fileid.h"
#include "hash.h"
#include "sorted.h"
#include "table.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define SYM_BUILD_ID_MAX 64
/* Inlined levels kept per address, the function holding them included (AGG_MAX_LABELS). */
#define SYM_MAX_CHAIN	   32
#define DEFAULT_DEBUG_ROOT "/usr/lib/debug"

struct sym_load {
	uint64_t off, filesz, vaddr; /* one PT_LOAD: file range and where it is linked */
};

/* The address ranges of a function in DWARF (its DIE is a copy: valid while the module is open). */
struct fn_range {
	uint64_t lo, hi; /* DWARF addresses, [lo, hi) */
	Dwarf_Die die;
};

/* The functions of one compilation unit, sorted by lo. */
struct cu_fns {
	Dwarf_Off cu; /* the CU DIE's offset */
	struct fn_range *r;
	size_t nr;
	unsigned long alloc;
};

/* A symbol usable to name code, as libdwfl's address search accepts them. */
struct sym_sym {
	uint64_t addr, size; /* module addresses */
	uint64_t max_end;    /* largest addr + size of this and every earlier entry */
	uint64_t sec_end;    /* a sizeless label names nothing at or past its section's end */
	const char *name;    /* owned by libdwfl or by the module's plt, valid while it is open */
	int rank;	     /* among aliases, the greater is the name users call (alias_rank) */
};

struct sym_module {
	char *path;
	struct xp_file_id id; /* as recorded: build-id, Go build ID or SHA-256; no length: none */
	char *base;	      /* label used in module+0xOFF */
	bool opened;
	size_t vdso; /* index + 1 into symbolizer.vdsos for a [vdso] image, else 0 */
	Dwfl *dwfl;
	Dwfl_Module *mod; /* NULL: no usable file (missing, not ELF, or changed) */
	GElf_Addr bias;
	struct sym_load *loads;
	size_t nr_loads;
	struct sym_sym *syms; /* sorted by address; built on first lookup */
	size_t nr_syms;
	bool syms_read;
	struct plt_stub *plt; /* the synthesized "func@plt" names (plt.h) */
	size_t nr_plt;
	struct cu_fns *cus; /* functions of each compilation unit used so far */
	size_t nr_cus;
	unsigned long alloc_cus;
};

/*
 * A cached result: @key within module @mod (NO_MODULE: unmapped,
 * SYSCALLS: markers, JIT: JIT lookups of @pid), @exact telling pc from pc-1,
 * @which the JIT symbol that named it (its seq + 1; 0 for none: a JIT
 * address has one entry per symbol valid there at some time).
 */
struct sym_entry {
	uint64_t key, which;
	uint32_t mod;
	pid_t pid;
	uint8_t exact;
	struct sym_frame *frame; /* NULL: empty slot */
};

#define NO_MODULE UINT32_MAX
#define SYSCALLS  (UINT32_MAX - 1)
#define JIT	  (UINT32_MAX - 2)

struct vdso_image {
	uint8_t *data;
	size_t len;
};

struct symbolizer {
	bool lines, no_inline, no_demangle;
	const char *(*syscall_name)(unsigned int nr);
	char *debuginfo_path; /* libdwfl syntax: ":.debug:<dirs>:/usr/lib/debug" */
	char *cache_dir;      /* sym_opts.cache_dir, or NULL */
	char **roots;	      /* absolute debug directories, /usr/lib/debug last */
	size_t nr_roots;
	Dwfl_Callbacks cb; /* must outlive every Dwfl: libdwfl keeps a pointer */
	struct sym_module *mods;
	size_t nr_mods;
	unsigned long alloc_mods;
	struct xp_table mod_table; /* finds a module of mods by (path, build-id) */
	struct sym_entry *cache;
	size_t nr_cache, cap_cache;
	struct sym_frame truncated;
	struct sym_frame exited;
	struct jitsyms jit;
	struct vdso_image *vdsos;
	size_t nr_vdsos;
	unsigned long alloc_vdsos;
};

/* ---- set-up -------------------------------------------------------------- */

static void add_root(struct symbolizer *s, const char *dir)
{
	char *abs = realpath(dir, NULL);

	if (!abs) {
		xp_warn("cannot use debug directory '%s': %s", dir, strerror(errno));
		return;
	}
	s->roots = xp_realloc(s->roots, (s->nr_roots + 1) * sizeof(*s->roots));
	s->roots[s->nr_roots++] = abs;
}

/* The debug directories: the user's (each a colon-separated list), then the default. */
static void set_debug_dirs(struct symbolizer *s, const char *const *dirs, size_t nr)
{
	size_t i, len = sizeof(":.debug");
	char *copy, *dir, *save;

	for (i = 0; i < nr; i++) {
		copy = xp_strdup(dirs[i]);
		save = NULL;
		for (dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save))
			add_root(s, dir);
		free(copy);
	}
	s->roots = xp_realloc(s->roots, (s->nr_roots + 1) * sizeof(*s->roots));
	s->roots[s->nr_roots++] = xp_strdup(DEFAULT_DEBUG_ROOT);
	/*
	 * libdwfl's path: "" is the file's own directory and ".debug" its
	 * subdirectory (for .gnu_debuglink); absolute entries are searched by
	 * build-id, then by debuglink under the file's directory
	 * (find-debuginfo.c).
	 */
	for (i = 0; i < s->nr_roots; i++)
		len += strlen(s->roots[i]) + 1;
	s->debuginfo_path = xp_malloc(len);
	strcpy(s->debuginfo_path, ":.debug");
	for (i = 0; i < s->nr_roots; i++) {
		strcat(s->debuginfo_path, ":");
		strcat(s->debuginfo_path, s->roots[i]);
	}
}

static int open_regular(const char *path);
static void hex(char *out, size_t outlen, const uint8_t *b, size_t n);

/*
 * The path of @what ("elf", "debug") of the file of identity @id in the
 * recorder's cache (capture.h), into @buf.  false when there is no cache
 * or no identity.
 */
static bool cache_path(const struct symbolizer *s, const struct xp_file_id *id, const char *what,
		       char *buf, size_t len)
{
	char name[XP_FILE_ID_TEXT];

	xp_file_id_name(id, name, sizeof(name));
	if (!s->cache_dir || !name[0])
		return false;
	return (size_t)snprintf(buf, len, "%s/buildid/%s/%s", s->cache_dir, name, what) < len;
}

/* A GNU build-id of @n bytes at @bits as an identity; false when it has none (or too long). */
static bool gnu_id(const uint8_t *bits, int n, struct xp_file_id *id)
{
	memset(id, 0, sizeof(*id));
	if (n <= 0 || n > SYM_BUILD_ID_MAX)
		return false;
	id->kind = XP_FILE_ID_GNU;
	id->len = (uint8_t)n;
	memcpy(id->bytes, bits, (size_t)n);
	return true;
}

/*
 * libdwfl's standard search for separate debuginfo (build-id, then
 * .gnu_debuglink, in the debug directories), then the copy the recorder
 * kept.  The symbolizer is the module's user data (report_elf).
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			  const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const struct symbolizer *s = *userdata;
	const unsigned char *bits = NULL;
	struct xp_file_id id;
	char path[PATH_MAX];
	GElf_Addr id_vaddr;
	int fd, n;

	fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
					  debuglink_crc, debuginfo_file_name);
	if (fd >= 0 || !s)
		return fd;
	n = dwfl_module_build_id(mod, &bits, &id_vaddr);
	if (!gnu_id(bits, n, &id) || !cache_path(s, &id, "debug", path, sizeof(path)))
		return -1;
	fd = open_regular(path);
	if (fd < 0)
		return -1;
	*debuginfo_file_name = xp_strdup(path);
	return fd;
}

struct symbolizer *symbolizer_new(const struct sym_opts *opts)
{
	struct symbolizer *s = xp_calloc(1, sizeof(*s));

	if (opts) {
		s->lines = opts->lines;
		s->no_inline = opts->no_inline;
		s->no_demangle = opts->no_demangle;
		s->syscall_name = opts->syscall_name;
	}
	if (opts)
		set_debug_dirs(s, opts->debug_dirs, opts->nr_debug_dirs);
	else
		set_debug_dirs(s, NULL, 0);
	if (opts && opts->cache_dir)
		s->cache_dir = xp_strdup(opts->cache_dir);
	s->cb.find_elf = dwfl_build_id_find_elf;
	s->cb.find_debuginfo = find_debuginfo;
	s->cb.debuginfo_path = &s->debuginfo_path;
	s->truncated.kind = SYM_MARKER;
	s->truncated.name = "[truncated]";
	s->exited.kind = SYM_MARKER;
	s->exited.name = "[exited before a sample]";
	jitsyms_init(&s->jit);
	return s;
}

static void free_cus(struct sym_module *m)
{
	size_t i;

	for (i = 0; i < m->nr_cus; i++)
		free(m->cus[i].r);
	free(m->cus);
	m->cus = NULL;
	m->nr_cus = 0;
	m->alloc_cus = 0;
}

/* A frame and the frames it was inlined into (they belong to it). */
static void frame_free(struct sym_frame *f)
{
	while (f) {
		struct sym_frame *caller = (struct sym_frame *)f->caller;

		free((char *)f->name);
		free((char *)f->file);
		free(f);
		f = caller;
	}
}

void symbolizer_free(struct symbolizer *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->cap_cache; i++)
		if (s->cache[i].frame)
			frame_free(s->cache[i].frame);
	for (i = 0; i < s->nr_mods; i++) {
		struct sym_module *m = &s->mods[i];

		if (m->dwfl)
			dwfl_end(m->dwfl);
		XP_FREE_ALL(m->path, m->base, m->loads, m->syms);
		plt_stubs_free(m->plt, m->nr_plt);
		free_cus(m);
	}
	for (i = 0; i < s->nr_roots; i++)
		free(s->roots[i]);
	for (i = 0; i < s->nr_vdsos; i++)
		free(s->vdsos[i].data);
	jitsyms_release(&s->jit);
	xp_table_release(&s->mod_table);
	XP_FREE_ALL(s->vdsos, s->roots, s->cache, s->mods, s->debuginfo_path, s->cache_dir, s);
}

void symbolizer_add_jit(struct symbolizer *s, pid_t pid, uint64_t start, uint64_t size,
			const char *name, uint64_t t)
{
	jitsyms_add(&s->jit, pid, start, size, name, t);
}

void symbolizer_add_jit_line(struct symbolizer *s, pid_t pid, uint64_t start, uint64_t end,
			     const char *file, unsigned int line)
{
	jitsyms_add_line(&s->jit, pid, start, end, file, line);
}

void symbolizer_add_vdso(struct symbolizer *s, const void *image, size_t len)
{
	struct vdso_image *v;

	if (!len)
		return;
	xp_grow((void **)&s->vdsos, &s->alloc_vdsos, s->nr_vdsos + 1, sizeof(*s->vdsos));
	v = &s->vdsos[s->nr_vdsos++];
	v->data = xp_malloc(len);
	memcpy(v->data, image, len);
	v->len = len;
}

/* ---- modules ------------------------------------------------------------- */

static uint64_t sym_module_hash(const char *path, const struct xp_file_id *id)
{
	uint64_t h = xp_fnv1a(XP_FNV_INIT, path, strlen(path));

	if (id->len)
		h = xp_fnv1a(h, id->bytes, id->len);
	return xp_mix64(h ^ id->len ^ (uint64_t)id->kind << 8);
}

static bool sym_module_is(const struct sym_module *m, const char *path, const struct xp_file_id *id)
{
	return (m->id.len ? xp_file_id_equal(&m->id, id) : !id->len) && !strcmp(m->path, path);
}

/* The label of a module: its basename, without the " (deleted)" /proc adds. */
static char *sym_module_label(const char *path)
{
	const char *b = strrchr(path, '/');
	size_t len;
	char *s;

	b = b && b[1] ? b + 1 : path;
	s = xp_strdup(*b ? b : "[anon]");
	len = strlen(s);
	if (len > 10 && !strcmp(s + len - 10, " (deleted)"))
		s[len - 10] = 0;
	return s;
}

/* The hash of module @i of the symbolizer @ctx, for xp_table_reserve. */
static uint64_t sym_module_hash_of(const void *ctx, size_t i)
{
	const struct sym_module *m = &((const struct symbolizer *)ctx)->mods[i];

	return sym_module_hash(m->path, &m->id);
}

/* The module for (@path, @id), created (not yet opened) on first use. */
static size_t sym_module_index(struct symbolizer *s, const char *path, const struct xp_file_id *id)
{
	struct xp_table *tab = &s->mod_table;
	struct sym_module *m;
	size_t j;

	xp_table_reserve(tab, s->nr_mods, sym_module_hash_of, s);
	j = (size_t)sym_module_hash(path, id) & (tab->cap - 1);
	for (; tab->slots[j]; j = (j + 1) & (tab->cap - 1))
		if (sym_module_is(&s->mods[tab->slots[j] - 1], path, id))
			return tab->slots[j] - 1;
	xp_grow((void **)&s->mods, &s->alloc_mods, s->nr_mods + 1, sizeof(*s->mods));
	m = &s->mods[s->nr_mods];
	memset(m, 0, sizeof(*m));
	m->path = xp_strdup(path);
	m->id = *id;
	m->base = sym_module_label(path);
	tab->slots[j] = ++s->nr_mods;
	return s->nr_mods - 1;
}

static bool is_vdso(const struct sym_map *map)
{
	return map->path && !strcmp(map->path, "[vdso]");
}

/*
 * The module of a recorded mapping.  A [vdso] with an image of its size
 * gets that image's module (keyed apart from any file by a made-up id).
 */
static size_t map_module(struct symbolizer *s, const struct sym_map *map)
{
	uint8_t vid[8] = {0xff, 'v', 'd', 's', 'o'};
	struct xp_file_id id;
	size_t i, idx;

	if (is_vdso(map)) {
		for (i = 0; i < s->nr_vdsos; i++) {
			if (s->vdsos[i].len != map->end - map->start)
				continue;
			vid[5] = (uint8_t)i;
			vid[6] = (uint8_t)(i >> 8);
			vid[7] = (uint8_t)(i >> 16);
			gnu_id(vid, sizeof(vid), &id);
			idx = sym_module_index(s, map->path, &id);
			s->mods[idx].vdso = i + 1;
			return idx;
		}
	}
	/* The recorded identity: the build-id, else another (fileid.h), else none. */
	if (!gnu_id(map->build_id, (int)map->build_id_len, &id) && map->file_id &&
	    map->file_id->len && map->file_id->kind != XP_FILE_ID_GNU)
		id = *map->file_id;
	return sym_module_index(s, map->path ? map->path : "", &id);
}

static void hex(char *out, size_t outlen, const uint8_t *b, size_t n)
{
	size_t i;

	out[0] = 0;
	for (i = 0; i < n && 2 * i + 2 < outlen; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
}

static int read_loads(struct sym_module *m)
{
	Elf *elf = dwfl_module_getelf(m->mod, &m->bias);
	size_t i, n;

	if (!elf || elf_getphdrnum(elf, &n))
		return -1;
	m->loads = xp_calloc(n, sizeof(*m->loads));
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		m->loads[m->nr_loads++] = (struct sym_load){ph.p_offset, ph.p_filesz, ph.p_vaddr};
	}
	return 0;
}

/*
 * The loads of a module read from its separate debuginfo, whose PT_LOAD
 * headers keep their addresses but not their file offsets (objcopy
 * --only-keep-debug zeroes them).  The recorded executable mapping @map
 * then stands for the executable segment of its size: the loader mapped
 * it from the page holding p_vaddr (ld.so's ALIGN_DOWN (p_vaddr,
 * pagesize)), so map->offset is the file offset of that page.  Page sizes
 * of 4, 16 and 64 KiB are tried.
 */
static int read_loads_from_debug(struct sym_module *m, const struct sym_map *map)
{
	static const uint64_t pages[] = {4096, 16384, 65536};
	Elf *elf = dwfl_module_getelf(m->mod, &m->bias);
	uint64_t span = map->end - map->start;
	size_t i, n, p;

	if (!elf || elf_getphdrnum(elf, &n))
		return -1;
	for (p = 0; p < sizeof(pages) / sizeof(pages[0]); p++) {
		uint64_t mask = pages[p] - 1;

		for (i = 0; i < n; i++) {
			GElf_Phdr ph;
			uint64_t lo, hi;

			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
			    !(ph.p_flags & PF_X))
				continue;
			lo = ph.p_vaddr & ~mask;
			hi = (ph.p_vaddr + ph.p_memsz + mask) & ~mask;
			if (hi - lo != span)
				continue;
			m->loads = xp_calloc(1, sizeof(*m->loads));
			m->loads[0] = (struct sym_load){map->offset, span, lo};
			m->nr_loads = 1;
			return 0;
		}
	}
	return -1;
}

/* Give up on a module's file: its frames become module+offset.  Frees the fd too. */
static void sym_module_close(struct sym_module *m)
{
	if (m->dwfl)
		dwfl_end(m->dwfl);
	m->dwfl = NULL;
	m->mod = NULL;
	free(m->loads);
	m->loads = NULL;
	m->nr_loads = 0;
	free(m->syms);
	m->syms = NULL;
	m->nr_syms = 0;
	m->syms_read = false;
	plt_stubs_free(m->plt, m->nr_plt);
	m->plt = NULL;
	m->nr_plt = 0;
	free_cus(m);
}

/*
 * Open @path if it is a regular file: the data file names the paths, and
 * a FIFO or a device there must not hang or feed the report.  An fd, or
 * -errno (ENODEV for anything but a regular file).
 */
static int open_regular(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -ENODEV;
	}
	return fd;
}

static const char *open_error(int err)
{
	return err == ENODEV ? "not a regular file" : strerror(err);
}

/* Report @fd (consumed) as the module's ELF file.  0, or -1 with a libdwfl message in @why. */
static int report_elf(struct symbolizer *s, struct sym_module *m, int fd, const char *file,
		      const char **why)
{
	void **userdata;

	m->dwfl = dwfl_begin(&s->cb);
	if (!m->dwfl) {
		close(fd);
		*why = "dwfl_begin";
		return -1;
	}
	dwfl_report_begin(m->dwfl);
	/* Base 0 with add_p_vaddr: the module sits at its link-time addresses. */
	m->mod = dwfl_report_elf(m->dwfl, m->base, file, fd, 0, true);
	dwfl_report_end(m->dwfl, NULL, NULL);
	if (!m->mod) {
		close(fd);
		*why = "dwfl_report_elf";
		sym_module_close(m);
		return -1;
	}
	/* find_debuginfo's way back to the symbolizer. */
	dwfl_module_info(m->mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	*userdata = s;
	return 0;
}

/* The Go build ID note of @elf (fileid.h) into @id; false when it has none. */
static bool go_id(Elf *elf, struct xp_file_id *id)
{
	size_t phnum, i, off, next, name_off, desc_off;
	GElf_Nhdr nhdr;
	Elf_Data *data;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &phnum))
		return false;
	for (i = 0; i < phnum; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		data = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		for (off = 0; data && (next = gelf_getnote(data, off, &nhdr, &name_off, &desc_off));
		     off = next) {
			if (nhdr.n_type != XP_NT_GO_BUILD_ID || nhdr.n_namesz < 3 ||
			    nhdr.n_namesz > 4 ||
			    memcmp((const char *)data->d_buf + name_off, "Go", 3) ||
			    !nhdr.n_descsz || nhdr.n_descsz > XP_FILE_ID_MAX)
				continue;
			id->kind = XP_FILE_ID_GO;
			id->len = (uint8_t)nhdr.n_descsz;
			memcpy(id->bytes, (const uint8_t *)data->d_buf + desc_off, nhdr.n_descsz);
			return true;
		}
	}
	return false;
}

/*
 * The identity of the reported file, of the kind @kind (the recorded
 * one's), into @id: its GNU build-id, Go build ID or SHA-256 (a pass over
 * the file).  false when it has none of that kind.
 */
static bool file_id(struct sym_module *m, int kind, struct xp_file_id *id)
{
	const unsigned char *bits = NULL;
	GElf_Addr id_vaddr;
	Dwarf_Addr bias;
	const char *raw;
	size_t size;
	Elf *elf;
	int n;

	memset(id, 0, sizeof(*id));
	if (kind == XP_FILE_ID_GNU) {
		n = dwfl_module_build_id(m->mod, &bits, &id_vaddr);
		return gnu_id(bits, n, id);
	}
	elf = dwfl_module_getelf(m->mod, &bias);
	if (!elf)
		return false;
	if (kind == XP_FILE_ID_GO)
		return go_id(elf, id);
	raw = elf_rawfile(elf, &size);
	if (kind != XP_FILE_ID_SHA256 || !raw)
		return false;
	xp_sha256(raw, size, id->bytes);
	id->kind = XP_FILE_ID_SHA256;
	id->len = XP_SHA256_LEN;
	return true;
}

/* How messages name an identity of kind @kind: "build-id", "Go build ID", "SHA-256". */
static const char *id_kind_text(int kind)
{
	return kind == XP_FILE_ID_GO	   ? "Go build ID"
	       : kind == XP_FILE_ID_SHA256 ? "SHA-256"
					   : "build-id";
}

/* The value of identity @id (of kind @kind when it has none) for a message: "none" when none. */
static void id_text(const struct xp_file_id *id, int kind, char *buf, size_t len)
{
	const char *label = id_kind_text(kind);
	char all[XP_FILE_ID_TEXT];

	if (!id->len) {
		snprintf(buf, len, "none");
		return;
	}
	xp_file_id_describe(id, all, sizeof(all));
	/* "GNU build-id 1a2b": the value after the label's words. */
	if (id->kind == XP_FILE_ID_GNU)
		label = "GNU build-id";
	snprintf(buf, len, "%s", all + strlen(label) + 1);
}

/* Whether the reported file is the one recorded: the same identity (any, when none was). */
static bool is_recorded_file(struct sym_module *m, struct xp_file_id *have)
{
	memset(have, 0, sizeof(*have));
	return !m->id.len || (file_id(m, m->id.kind, have) && xp_file_id_equal(have, &m->id));
}

/*
 * Open the separate debuginfo of the recorded build-id, found under a
 * debug directory as .build-id/xx/rest.debug, in place of the module's
 * own file.  Its name at @found.  0, or -1 when there is none.
 */
static int open_recorded_debuginfo(struct symbolizer *s, struct sym_module *m,
				   const struct sym_map *map, char *found, size_t len)
{
	char idhex[2 * SYM_BUILD_ID_MAX + 1];
	struct xp_file_id have;
	const char *why;
	size_t i;
	int fd;

	/* Debug directories know files by GNU build-id only. */
	if (m->id.kind != XP_FILE_ID_GNU || m->id.len < 2)
		return -1;
	hex(idhex, sizeof(idhex), m->id.bytes, m->id.len);
	for (i = 0; i < s->nr_roots; i++) {
		snprintf(found, len, "%s/.build-id/%.2s/%s.debug", s->roots[i], idhex, idhex + 2);
		fd = open_regular(found);
		if (fd < 0)
			continue;
		if (report_elf(s, m, fd, found, &why))
			continue;
		if (is_recorded_file(m, &have) && !read_loads_from_debug(m, map))
			return 0;
		sym_module_close(m);
	}
	return -1;
}

/*
 * Open the copy of the recorded file that the recorder kept (capture.h),
 * in place of the file at the recorded path (gone, or another file now).
 * Its name at @found.  0, or -1 when the cache holds no such file.
 */
static int open_cached(struct symbolizer *s, struct sym_module *m, char *found, size_t len)
{
	struct xp_file_id have;
	const char *why;
	int fd;

	if (!cache_path(s, &m->id, "elf", found, len))
		return -1;
	fd = open_regular(found);
	if (fd < 0)
		return -1;
	/* Named by the recorded path: its .gnu_debuglink is looked for from there, as before. */
	if (report_elf(s, m, fd, m->path, &why))
		return -1;
	if (!is_recorded_file(m, &have) || read_loads(m)) {
		sym_module_close(m);
		return -1;
	}
	return 0;
}

/* -v: where the module's symbols come from (the file, and its separate debuginfo). */
static void say_source(struct sym_module *m, const char *from, const char *file)
{
	char id[XP_FILE_ID_TEXT];
	const char *debug = NULL;
	Dwarf_Addr bias;

	if (xp_verbosity < 1 || !m->mod)
		return;
	/* Loads the debuginfo now rather than at the first line looked up: the same files. */
	dwfl_module_getdwarf(m->mod, &bias);
	dwfl_module_info(m->mod, NULL, NULL, NULL, NULL, NULL, NULL, &debug);
	xp_file_id_describe(&m->id, id, sizeof(id));
	xp_debug(1, "symbols of '%s': %s '%s'%s%s, by its %s", m->path, from, file,
		 debug && strcmp(debug, file) ? ", debuginfo " : "",
		 debug && strcmp(debug, file) ? debug : "",
		 id[0] ? id : "path (no identity was recorded)");
}

/*
 * sym_module_open for the [vdso] of a data file that holds its image: the
 * image, through a memfd.  Leaves m->mod NULL, with a warning, if it
 * cannot be read.
 */
static void sym_module_open_vdso(struct symbolizer *s, struct sym_module *m)
{
	const struct vdso_image *v = &s->vdsos[m->vdso - 1];
	const char *why = NULL;
	int fd = memfd_create("xprof-vdso", MFD_CLOEXEC);

	if (fd < 0 || pwrite(fd, v->data, v->len, 0) != (ssize_t)v->len) {
		xp_warn("cannot read the recorded [vdso] image: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	if (report_elf(s, m, fd, "[vdso]", &why) || read_loads(m)) {
		xp_warn("cannot read the recorded [vdso] image: %s", dwfl_errmsg(-1));
		sym_module_close(m);
		return;
	}
	say_source(m, "the data file's image", "[vdso]");
}

/* Open the file the first time the module is used; leave m->mod NULL if it cannot be used. */
static void sym_module_open(struct symbolizer *s, struct sym_module *m, const struct sym_map *map)
{
	char have[XP_FILE_ID_TEXT], want[XP_FILE_ID_TEXT], debug[PATH_MAX];
	struct xp_file_id id;
	const char *why = NULL;
	int fd, err;

	m->opened = true;
	if (m->vdso) {
		sym_module_open_vdso(s, m);
		return;
	}
	/* "[vdso]" without an image, "[heap]", anonymous memory: nothing on disk to read. */
	if (m->path[0] != '/')
		return;
	fd = open_regular(m->path);
	if (fd < 0) {
		err = -fd;
		if (!open_cached(s, m, debug, sizeof(debug))) {
			say_source(m, "the recorder's copy", debug);
			return;
		}
		if (!open_recorded_debuginfo(s, m, map, debug, sizeof(debug))) {
			xp_debug(1, "'%s': %s; using '%s', the debuginfo of its recorded build-id",
				 m->path, open_error(err), debug);
			return;
		}
		xp_warn("cannot open '%s': %s; its frames are shown as %s+offset", m->path,
			open_error(err), m->base);
		return;
	}
	if (report_elf(s, m, fd, m->path, &why)) {
		/* Not ELF now (replaced by a script, say): the recorder's copy, if kept. */
		if (!open_cached(s, m, debug, sizeof(debug))) {
			say_source(m, "the recorder's copy", debug);
			return;
		}
		xp_warn("cannot read '%s': %s: %s; its frames are shown as %s+offset", m->path, why,
			dwfl_errmsg(-1), m->base);
		return;
	}
	if (!is_recorded_file(m, &id)) {
		id_text(&id, m->id.kind, have, sizeof(have));
		id_text(&m->id, m->id.kind, want, sizeof(want));
		/* Never pair the new file's debuginfo with the old file's addresses. */
		sym_module_close(m);
		if (!open_cached(s, m, debug, sizeof(debug))) {
			say_source(m, "the recorder's copy", debug);
			return;
		}
		if (!open_recorded_debuginfo(s, m, map, debug, sizeof(debug))) {
			xp_warn("'%s' has changed since it was recorded (%s %s, "
				"recorded %s); using '%s', the debuginfo of the recorded "
				"build-id",
				m->path, id_kind_text(m->id.kind), have, want, debug);
			return;
		}
		xp_warn("'%s' has changed since it was recorded (%s %s, recorded %s); "
			"its frames are shown as %s+offset",
			m->path, id_kind_text(m->id.kind), have, want, m->base);
		return;
	}
	if (read_loads(m)) {
		xp_warn("cannot read the program headers of '%s': %s", m->path, elf_errmsg(-1));
		sym_module_close(m);
		return;
	}
	say_source(m, "the file", m->path);
}

/* ---- the result cache ---------------------------------------------------- */

static bool entry_is(const struct sym_entry *e, const struct sym_entry *k)
{
	return e->mod == k->mod && e->key == k->key && e->pid == k->pid && e->exact == k->exact &&
	       e->which == k->which;
}

static size_t cache_slot(const struct symbolizer *s, const struct sym_entry *k)
{
	uint64_t h = xp_mix64(k->key ^ ((uint64_t)k->mod << 32 | (uint32_t)k->pid) ^ k->exact ^
			      xp_mix64(k->which));
	size_t j = (size_t)h & (s->cap_cache - 1);

	while (s->cache[j].frame && !entry_is(&s->cache[j], k))
		j = (j + 1) & (s->cap_cache - 1);
	return j;
}

static struct sym_frame *cache_get(struct symbolizer *s, const struct sym_entry *k)
{
	return s->cap_cache ? s->cache[cache_slot(s, k)].frame : NULL;
}

/* Store @f under key @k (its frame is ignored). */
static void cache_put(struct symbolizer *s, const struct sym_entry *k, struct sym_frame *f)
{
	size_t i;

	if ((s->nr_cache + 1) * 4 > s->cap_cache * 3) {
		struct sym_entry *old = s->cache;
		size_t oldcap = s->cap_cache;

		s->cap_cache = oldcap ? oldcap * 2 : 1024;
		s->cache = xp_calloc(s->cap_cache, sizeof(*s->cache));
		for (i = 0; i < oldcap; i++)
			if (old[i].frame)
				s->cache[cache_slot(s, &old[i])] = old[i];
		free(old);
	}
	i = cache_slot(s, k);
	s->cache[i] = *k;
	s->cache[i].frame = f;
	s->nr_cache++;
}

static struct sym_frame *frame_new(enum sym_kind kind, const char *fmt, ...) XP_FMT(2, 3);

static struct sym_frame *frame_new(enum sym_kind kind, const char *fmt, ...)
{
	struct sym_frame *f = xp_calloc(1, sizeof(*f));
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	f->kind = kind;
	f->name = xp_strdup(buf);
	return f;
}

/*
 * A function frame named @raw (a symbol or DWARF name), demangled unless
 * told not to; a PLT stub's "@plt" stays after the demangled name.
 */
static struct sym_frame *func_frame(struct symbolizer *s, enum sym_kind kind, const char *raw)
{
	struct sym_frame *f = xp_calloc(1, sizeof(*f));
	size_t len = strlen(raw), plt = sizeof("@plt") - 1;
	char *base, *name;

	f->kind = kind;
	if (len <= plt || strcmp(raw + len - plt, "@plt")) {
		f->name = demangle_name(raw, !s->no_demangle);
		return f;
	}
	base = xp_strdup(raw);
	base[len - plt] = 0;
	name = demangle_name(base, !s->no_demangle);
	len = strlen(name);
	name = xp_realloc(name, len + plt + 1);
	memcpy(name + len, "@plt", plt + 1);
	free(base);
	f->name = name;
	return f;
}

static void frame_set_line(struct sym_frame *f, const char *file, unsigned int line)
{
	free((char *)f->file);
	f->file = file ? xp_strdup(file) : NULL;
	f->line = file ? line : 0;
}

/* ---- DWARF: inlined calls ------------------------------------------------ */

/*
 * The name of a subprogram or of an inlined instance of one: the linkage
 * name when there is one (C++, Rust: it demangles to the qualified name),
 * else DW_AT_name, following DW_AT_abstract_origin and DW_AT_specification.
 */
static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *name;

	name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
	return name && *name ? name : NULL;
}

/* Where inlined instance @die was called from: DW_AT_call_file and DW_AT_call_line. */
static const char *call_site(Dwarf_Die *die, Dwarf_Files *files, size_t nfiles, unsigned int *line)
{
	Dwarf_Attribute attr;
	Dwarf_Word v;

	*line = 0;
	if (!dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &attr), &v) && v <= UINT_MAX)
		*line = (unsigned int)v;
	if (files && !dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attr), &v) && v < nfiles)
		return dwarf_filesrc(files, v, NULL, NULL);
	return NULL;
}

struct dw_scopes {
	Dwarf_Die cu;
	Dwarf_Die inl[SYM_MAX_CHAIN - 1]; /* the inlined instances, innermost first */
	int nr_inl;
	Dwarf_Die sub; /* the subprogram holding them, if has_sub */
	bool has_sub;
};

static int cmp_fn(const void *a, const void *b)
{
	const struct fn_range *x = a, *y = b;

	return (x->lo > y->lo) - (x->lo < y->lo);
}

/* Add the subprograms under @parent (descending into namespaces) to @f. */
static void collect_fns(Dwarf_Die *parent, struct cu_fns *f, int depth)
{
	Dwarf_Die child;

	if (depth > 16 || dwarf_child(parent, &child))
		return;
	do {
		int tag = dwarf_tag(&child);

		if (tag == DW_TAG_subprogram) {
			Dwarf_Addr base, lo, hi;
			ptrdiff_t off = 0;

			while ((off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0) {
				if (hi <= lo)
					continue;
				xp_grow((void **)&f->r, &f->alloc, f->nr + 1, sizeof(*f->r));
				f->r[f->nr++] = (struct fn_range){lo, hi, child};
			}
		} else if (tag == DW_TAG_namespace || tag == DW_TAG_module) {
			collect_fns(&child, f, depth + 1);
		}
	} while (!dwarf_siblingof(&child, &child));
}

/* The function index of compilation unit @cu, built on first use. */
static const struct cu_fns *cu_functions(struct sym_module *m, Dwarf_Die *cu)
{
	Dwarf_Off off = dwarf_dieoffset(cu);
	struct cu_fns *f;
	/* Sorted by offset; a module's CUs are few enough for insertion. */
	size_t lo = XP_PARTITION_POINT(0, m->nr_cus, i, m->cus[i].cu < off);

	if (lo < m->nr_cus && m->cus[lo].cu == off)
		return &m->cus[lo];
	xp_grow((void **)&m->cus, &m->alloc_cus, m->nr_cus + 1, sizeof(*m->cus));
	memmove(&m->cus[lo + 1], &m->cus[lo], (m->nr_cus - lo) * sizeof(*m->cus));
	m->nr_cus++;
	f = &m->cus[lo];
	memset(f, 0, sizeof(*f));
	f->cu = off;
	collect_fns(cu, f, 0);
	xp_sort(f->r, f->nr, sizeof(*f->r), cmp_fn);
	return f;
}

/* The innermost function range of @f holding @a, or NULL. */
static const struct fn_range *fn_at(const struct cu_fns *f, Dwarf_Addr a)
{
	const struct fn_range *best = NULL;
	size_t lo = XP_PARTITION_POINT(0, f->nr, k, f->r[k].lo <= a), i, n;

	/* Functions do not overlap, but look a little further back for nested ones. */
	for (i = lo, n = 0; i-- > 0 && n < 8; n++)
		if (a < f->r[i].hi && (!best || f->r[i].hi - f->r[i].lo < best->hi - best->lo))
			best = &f->r[i];
	return best;
}

/*
 * From function DIE @parent down to the innermost scope holding @a: only
 * scopes that can hold code are tested, and only one child at each level
 * can hold it.  The inlined instances met go to @chain, outermost first.
 */
static int descend(Dwarf_Die *parent, Dwarf_Addr a, Dwarf_Die *chain, int n, int max)
{
	Dwarf_Die child;

	if (dwarf_child(parent, &child))
		return n;
	do {
		int tag = dwarf_tag(&child);

		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block &&
		    tag != DW_TAG_try_block && tag != DW_TAG_catch_block)
			continue;
		if (dwarf_haspc(&child, a) <= 0)
			continue;
		if (tag == DW_TAG_inlined_subroutine) {
			if (n == max)
				return n; /* deeper than anyone reads: stop here */
			chain[n++] = child;
		}
		return descend(&child, a, chain, n, max);
	} while (!dwarf_siblingof(&child, &child));
	return n;
}

/*
 * The DWARF scopes at module address @addr, as the DIE tree nests them:
 * the function holding the code, from a per-CU index of functions, then
 * the inlined instances inside it down to the innermost.  When the index
 * has no answer, dwarf_getscopes walks the whole CU; above an inlined
 * instance it continues with the scopes of its abstract definition, so the
 * chain of callers is then the concrete DIE's ancestry
 * (dwarf_getscopes_die, as eu-addr2line -i does).  false when there is no
 * DWARF for the address.
 */
static bool dw_scopes_at(struct sym_module *m, Dwarf_Addr addr, struct dw_scopes *d)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(m->mod, addr, &bias), *found = NULL, *scopes = NULL,
		  chain[2 * SYM_MAX_CHAIN], inner;
	const struct fn_range *fn;
	int n, i, k;

	d->nr_inl = 0;
	d->has_sub = false;
	if (!cu)
		return false;
	d->cu = *cu;
	fn = fn_at(cu_functions(m, cu), addr - bias);
	if (fn) {
		d->sub = fn->die;
		d->has_sub = true;
		n = descend(&d->sub, addr - bias, chain, 0, 2 * SYM_MAX_CHAIN);
		/* Keep the innermost levels when there are more than a stack can show. */
		for (k = n; k-- > 0 && d->nr_inl < SYM_MAX_CHAIN - 1;)
			d->inl[d->nr_inl++] = chain[k];
		return true;
	}
	n = dwarf_getscopes(cu, addr - bias, &found);
	if (n > 0) {
		inner = found[0];
		n = dwarf_getscopes_die(&inner, &scopes);
	}
	free(found);
	for (i = 0; i < n; i++) {
		int tag = dwarf_tag(&scopes[i]);

		if (tag == DW_TAG_subprogram) {
			d->sub = scopes[i];
			d->has_sub = true;
			break;
		}
		if (tag == DW_TAG_inlined_subroutine && d->nr_inl < SYM_MAX_CHAIN - 1)
			d->inl[d->nr_inl++] = scopes[i];
	}
	free(scopes);
	return n > 0;
}

/*
 * Put frames for the inlined calls of @d in front of @outer (the function
 * holding the code) and return the innermost.  @outer's line (the line
 * table's, at the address) moves to the innermost frame; each outer level
 * gets the line of the call it made.
 */
static struct sym_frame *add_inlined(struct symbolizer *s, struct dw_scopes *d,
				     struct sym_frame *outer)
{
	struct sym_frame *inner = outer, *f;
	const char *here_file = outer->file;
	unsigned int here_line = outer->line, line;
	Dwarf_Files *files = NULL;
	size_t nfiles = 0;
	int k;

	if (s->lines && dwarf_getsrcfiles(&d->cu, &files, &nfiles))
		files = NULL;
	/* The line table's answer belongs to the innermost level: keep it aside. */
	outer->file = NULL;
	outer->line = 0;
	/* From the outermost inlined instance inward: each was called by the level before. */
	for (k = d->nr_inl - 1; k >= 0; k--) {
		Dwarf_Die *die = &d->inl[k];
		const char *name = die_name(die), *file;

		if (!name)
			continue;
		if (s->lines) {
			file = call_site(die, files, nfiles, &line);
			frame_set_line(inner, file, line);
		}
		f = func_frame(s, SYM_FUNC, name);
		f->module = outer->module;
		f->offset = outer->offset;
		f->caller = inner;
		inner = f;
	}
	free((char *)inner->file);
	inner->file = here_file;
	inner->line = here_line;
	return inner;
}

/* ---- the symbol table ---------------------------------------------------- */

/*
 * dwfl_module_addrinfo scans the whole symbol table for every address
 * (libdwfl's search_table), which made a 1M-sample report spend most of
 * its time there.  The choice is made here from a table sorted once per
 * module: among the symbols at or below the address, a sized one that
 * covers it, the closest, then the alias users call (alias_rank), then
 * the smallest; failing that, the closest sizeless one (an assembly
 * label) provided it lies in the same section and no sized symbol below
 * the address ends above it.  Symbols that cannot hold code never name
 * it: absolute ones (version definitions such as OPENSSL_3.0.9), files,
 * sections, TLS, sizeless data and mapping symbols.  PLT stubs, which no symbol covers,
 * get "func@plt" from plt.h.
 */

/*
 * How much @name looks like the name users call, among aliases of one
 * address (glibc's free, __libc_free, __free, cfree; read, __read,
 * __libc_read, __GI___libc_read): a name of a compat version
 * ("cfree@GLIBC_2.2.5", or @hidden in .gnu.version) last; then local
 * symbols; then fewer leading underscores (public before internal;
 * mangled C++ and Rust names count as public); then global before weak.
 * This picks free and read where perf shows __libc_free and __read.
 */
static int alias_rank(const char *name, int bind, bool hidden)
{
	const char *at = strchr(name, '@');
	int under = 0;

	if (at && at != name && at[1] && at[1] != '@')
		hidden = true;
	if (!(name[0] == '_' && (name[1] == 'Z' || name[1] == 'R')))
		while (name[under] == '_' && under < 7)
			under++;
	return (hidden ? 0 : 1000) + (bind ? 100 : 0) + (7 - under) * 10 + bind;
}

static int binding_value(const GElf_Sym *sym)
{
	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL:
		return 2;
	case STB_WEAK:
		return 1;
	default:
		return 0;
	}
}

static int cmp_sym(const void *a, const void *b)
{
	const struct sym_sym *x = a, *y = b;

	if (x->addr != y->addr)
		return (x->addr > y->addr) - (x->addr < y->addr);
	return (x->size > y->size) - (x->size < y->size);
}

/*
 * A dynamic symbol whose version is hidden (a compat alias): its address
 * and name.  @hidden is false only while read_hidden sorts it out.
 */
struct hidden_sym {
	uint64_t addr;
	const char *name;
	bool hidden;
};

static int cmp_hidden(const void *a, const void *b)
{
	const struct hidden_sym *x = a, *y = b;

	if (x->addr != y->addr)
		return (x->addr > y->addr) - (x->addr < y->addr);
	return strcmp(x->name, y->name);
}

/*
 * The dynamic symbols whose version is hidden, sorted, less the names that
 * a default version defines at the same address too: glibc's clock_gettime
 * is both clock_gettime@GLIBC_2.2.5 (hidden) and clock_gettime@@GLIBC_2.17,
 * and the name is the public one.  One pass over .dynsym gathers every
 * defined, versioned name; a name is kept if every version of it at that
 * address is hidden.  Returns how many.
 */
static size_t read_hidden(Elf *elf, GElf_Addr bias, struct hidden_sym **out)
{
	Elf_Scn *scn = NULL, *dynscn = NULL, *verscn = NULL;
	Elf_Data *dyn, *ver;
	GElf_Shdr sh, dynsh = {0};
	unsigned long alloc = 0;
	size_t n = 0, kept = 0, i, j, count;

	*out = NULL;
	while (elf && (scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_DYNSYM) {
			dynscn = scn;
			dynsh = sh;
		} else if (sh.sh_type == SHT_GNU_versym) {
			verscn = scn;
		}
	}
	if (!dynscn || !verscn || !dynsh.sh_entsize)
		return 0;
	dyn = elf_getdata(dynscn, NULL);
	ver = elf_getdata(verscn, NULL);
	if (!dyn || !ver || !ver->d_buf)
		return 0;
	count = dyn->d_size / dynsh.sh_entsize;
	for (i = 1; i < count && i < ver->d_size / 2 && i <= INT32_MAX; i++) {
		GElf_Versym vs;
		GElf_Sym sym;
		const char *name;

		if (!gelf_getversym(ver, (int)i, &vs) || !gelf_getsym(dyn, (int)i, &sym) ||
		    sym.st_shndx == SHN_UNDEF)
			continue;
		name = elf_strptr(elf, dynsh.sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		xp_grow((void **)out, &alloc, n + 1, sizeof(**out));
		(*out)[n++] = (struct hidden_sym){sym.st_value + bias, name, (vs & 0x8000) != 0};
	}
	xp_sort(*out, n, sizeof(**out), cmp_hidden);
	/* Each run of one address and name: kept once, if hidden in every version. */
	for (i = 0; i < n; i = j) {
		bool all_hidden = true;

		for (j = i; j < n && !cmp_hidden(&(*out)[i], &(*out)[j]); j++)
			all_hidden = all_hidden && (*out)[j].hidden;
		if (all_hidden)
			(*out)[kept++] = (*out)[i];
	}
	return kept;
}

static bool is_hidden(const struct hidden_sym *h, size_t nr, uint64_t addr, const char *name)
{
	struct hidden_sym key = {addr, name, true};

	return nr && bsearch(&key, h, nr, sizeof(*h), cmp_hidden);
}

/* The end of section @shndx of @elf in module addresses, or UINT64_MAX when unknown. */
static uint64_t section_end(Elf *elf, GElf_Word shndx, Dwarf_Addr bias)
{
	Elf_Scn *scn = elf ? elf_getscn(elf, shndx) : NULL;
	GElf_Shdr sh;

	if (!scn || !gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC))
		return UINT64_MAX;
	return sh.sh_addr + sh.sh_size + bias;
}

/*
 * Whether symbol @name of @type, @size in section @shndx may name code.
 * The ARM and RISC-V mapping symbols ($x, $d, $xrv64i2p1...) only mark
 * where code or data starts.
 */
static bool names_code(const char *name, int type, uint64_t size, GElf_Word shndx)
{
	if (shndx == SHN_UNDEF || shndx == SHN_ABS || shndx == SHN_COMMON)
		return false;
	if (name[0] == '$' && type == STT_NOTYPE)
		return false;
	switch (type) {
	case STT_FUNC:
	case STT_GNU_IFUNC:
	case STT_NOTYPE:
		return true;
	case STT_OBJECT:
		return size > 0;
	default: /* STT_SECTION, STT_FILE, STT_TLS, STT_COMMON */
		return false;
	}
}

static void read_symbols(struct sym_module *m)
{
	int i, n = dwfl_module_getsymtab(m->mod);
	struct hidden_sym *hidden;
	size_t k, nr_hidden;
	GElf_Addr mbias;
	Elf *melf = dwfl_module_getelf(m->mod, &mbias);

	m->syms_read = true;
	m->nr_plt = plt_stubs(melf, &m->plt);
	if (n < 0)
		n = 0;
	if (!n && !m->nr_plt)
		return;
	nr_hidden = read_hidden(melf, mbias, &hidden);
	m->syms = xp_malloc(((size_t)n + m->nr_plt) * sizeof(*m->syms));
	for (i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		Elf *elf;
		Dwarf_Addr bias;
		const char *name =
		    dwfl_module_getsym_info(m->mod, i, &sym, &addr, &shndx, &elf, &bias);
		int bind = binding_value(&sym);

		if (!name || !*name ||
		    !names_code(name, GELF_ST_TYPE(sym.st_info), sym.st_size, shndx))
			continue;
		m->syms[m->nr_syms++] = (struct sym_sym){
		    addr, sym.st_size,
		    0,	  sym.st_size ? UINT64_MAX : section_end(elf, shndx, bias),
		    name, alias_rank(name, bind, is_hidden(hidden, nr_hidden, addr, name))};
	}
	for (k = 0; k < m->nr_plt; k++)
		m->syms[m->nr_syms++] = (struct sym_sym){m->plt[k].addr + mbias,
							 m->plt[k].size,
							 0,
							 UINT64_MAX,
							 m->plt[k].name,
							 alias_rank(m->plt[k].name, 2, false)};
	free(hidden);
	xp_sort(m->syms, m->nr_syms, sizeof(*m->syms), cmp_sym);
	for (k = 0; k < m->nr_syms; k++) {
		uint64_t end = m->syms[k].addr + m->syms[k].size;

		m->syms[k].max_end =
		    k && m->syms[k - 1].max_end > end ? m->syms[k - 1].max_end : end;
	}
}

/* Whether sized symbol @c is a better name for the address than @best. */
static bool better_sized(const struct sym_sym *c, const struct sym_sym *best)
{
	if (!best || c->addr > best->addr)
		return true;
	if (c->addr < best->addr)
		return false;
	if (c->rank != best->rank)
		return c->rank > best->rank;
	if (c->size != best->size)
		return c->size < best->size;
	return strcmp(c->name, best->name) < 0;
}

/* The symbol naming module address @addr, or NULL. */
static const struct sym_sym *find_symbol(struct sym_module *m, uint64_t addr)
{
	const struct sym_sym *best = NULL, *label = NULL;
	uint64_t min_label;
	size_t lo, i;

	if (!m->syms_read)
		read_symbols(m);
	lo = XP_PARTITION_POINT(0, m->nr_syms, k, m->syms[k].addr <= addr);
	if (!lo)
		return NULL;
	min_label = m->syms[lo - 1].max_end;
	/* Sized symbols covering @addr: only entries whose running end passes it. */
	for (i = lo; i-- > 0 && m->syms[i].max_end > addr;) {
		const struct sym_sym *c = &m->syms[i];

		if (c->size && addr - c->addr < c->size && better_sized(c, best))
			best = c;
	}
	if (best)
		return best;
	/* The closest sizeless symbol, the alias users call of those at its address. */
	for (i = lo; i-- > 0;) {
		const struct sym_sym *c = &m->syms[i];

		if (c->size)
			continue;
		if (label && c->addr < label->addr)
			break;
		if (!label || c->rank > label->rank ||
		    (c->rank == label->rank && strcmp(c->name, label->name) < 0))
			label = c;
	}
	return label && label->addr >= min_label && addr < label->sec_end ? label : NULL;
}

/* ---- lookups ------------------------------------------------------------- */

static bool file_offset_to_vaddr(const struct sym_module *m, uint64_t off, uint64_t *vaddr)
{
	size_t i;

	for (i = 0; i < m->nr_loads; i++) {
		const struct sym_load *l = &m->loads[i];

		if (off >= l->off && off - l->off < l->filesz) {
			*vaddr = off - l->off + l->vaddr;
			return true;
		}
	}
	return false;
}

static struct sym_frame *lookup(struct symbolizer *s, struct sym_module *m,
				const struct sym_map *map, uint64_t lookup_off, uint64_t shown_off)
{
	struct sym_frame *f;
	const struct sym_sym *sym;
	const char *name = NULL, *file;
	uint64_t symoff = 0;
	Dwarf_Addr addr, lineaddr;
	Dwfl_Line *line;
	struct dw_scopes d = {.nr_inl = 0, .has_sub = false};
	bool have_dw = false;
	uint64_t vaddr;
	int lineno = 0;

	if (!m->opened)
		sym_module_open(s, m, map);
	if (!m->mod || !file_offset_to_vaddr(m, lookup_off, &vaddr))
		goto unresolved;
	addr = vaddr + m->bias;
	sym = find_symbol(m, addr);
	if (sym) {
		name = sym->name;
		symoff = addr - sym->addr;
	}
	if (!name || !s->no_inline)
		have_dw = dw_scopes_at(m, addr, &d);
	if ((!name || !*name) && have_dw && d.has_sub) {
		/* No symbol table entry (stripped), but DWARF knows the function. */
		name = die_name(&d.sub);
		symoff = 0;
	}
	if (!name || !*name)
		goto unresolved;
	f = func_frame(s, SYM_FUNC, name);
	f->module = m->base;
	f->offset = symoff;
	lineaddr = addr;
	if (s->lines && (line = dwfl_module_getsrc(m->mod, addr)) &&
	    (file = dwfl_lineinfo(line, &lineaddr, &lineno, NULL, NULL, NULL)))
		frame_set_line(f, file, lineno > 0 ? (unsigned int)lineno : 0);
	if (have_dw && !s->no_inline)
		f = add_inlined(s, &d, f);
	return f;
unresolved:
	f = frame_new(SYM_MODULE_OFFSET, "%s+%#" PRIx64, m->base, shown_off);
	f->module = m->base;
	return f;
}

/*
 * Whether @map is memory no file describes, where a JIT puts its code:
 * anonymous, named anonymous ("[anon:...]"), memfd or shared-memory
 * backed.  [vdso] and [vsyscall] are the kernel's, not a JIT's.
 */
static bool is_anon(const struct sym_map *map)
{
	static const char *const prefixes[] = {"/memfd:", "/dev/zero", "/anon_hugepage", "/SYSV",
					       "//anon"};
	const char *p = map->path ? map->path : "";
	size_t i;

	if (!*p)
		return true;
	if (*p == '[')
		return strcmp(p, "[vdso]") && strcmp(p, "[vsyscall]");
	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(p, prefixes[i], strlen(prefixes[i])))
			return true;
	return *p != '/';
}

/* A frame for JIT symbol @r (NULL: none) at @look, or the bare address @pc. */
static struct sym_frame *lookup_jit(struct symbolizer *s, pid_t pid, const struct jit_range *r,
				    uint64_t look, uint64_t pc)
{
	struct sym_frame *f;

	if (!r)
		return frame_new(SYM_ADDRESS, "%#" PRIx64, pc);
	f = func_frame(s, SYM_JIT, r->text);
	f->offset = look - r->start;
	if (s->lines && (r = jitsyms_find_line(&s->jit, pid, look)))
		frame_set_line(f, r->text, r->line);
	return f;
}

const struct sym_frame *symbolize_pc(struct symbolizer *s, pid_t pid, const struct sym_map *map,
				     uint64_t pc, uint64_t look, unsigned int frame_flags)
{
	return symbolize_pc_at(s, pid, map, pc, look, frame_flags, UINT64_MAX);
}

const struct sym_frame *symbolize_pc_at(struct symbolizer *s, pid_t pid, const struct sym_map *map,
					uint64_t pc, uint64_t look, unsigned int frame_flags,
					uint64_t t)
{
	uint64_t key = pc;
	const struct jit_range *jr = NULL;
	const char *sc;
	struct sym_frame *f;
	struct sym_entry k;
	uint32_t mod;

	if (frame_flags & XP_FRAME_TRUNCATED)
		return &s->truncated;
	if (frame_flags & XP_FRAME_EXITED)
		return &s->exited;
	if (frame_flags & XP_FRAME_SYSCALL) {
		mod = SYSCALLS;
		pid = 0;
	} else if (!map || look < map->start || look >= map->end || is_anon(map)) {
		mod = JIT;
		if (!s->jit.syms.nr)
			pid = 0; /* no JIT symbol anywhere: every address is just itself */
	} else {
		mod = (uint32_t)map_module(s, map);
		pid = 0;
		/* The file offset: the same code in any process has the same key. */
		key = look - map->start + map->offset;
	}
	if (mod == JIT && pid)
		jr = jitsyms_find(&s->jit, pid, look, t);
	k = (struct sym_entry){key, jr ? jr->seq + 1 : 0, mod, pid, look == pc, NULL};
	f = cache_get(s, &k);
	if (f)
		return f;
	if (mod == SYSCALLS) {
		sc = s->syscall_name && pc <= UINT_MAX ? s->syscall_name((unsigned int)pc) : NULL;
		if (sc)
			f = frame_new(SYM_MARKER, "[syscall] %s", sc);
		else
			f = frame_new(SYM_MARKER, "[syscall] %" PRIu64, pc);
	} else if (mod == JIT) {
		f = lookup_jit(s, pid, jr, look, pc);
	} else {
		f = lookup(s, &s->mods[mod], map, key, pc - map->start + map->offset);
	}
	cache_put(s, &k, f);
	return f;
}
