/* SPDX-License-Identifier: MIT */
/*
 * The libdwfl backend of symbolize.h.  Each (path, build-id) becomes one
 * module, reported alone in its own Dwfl at its link-time addresses (base 0,
 * bias 0 for ET_DYN), so modules of different processes or generations
 * never overlap.  An address is mapped from the recorded mapping to a file
 * offset, then through the file's PT_LOAD headers to an ELF virtual address,
 * which is what symbol tables and DWARF speak.  Separate debuginfo is found
 * by libdwfl's standard search (build-id under /usr/lib/debug, then
 * .gnu_debuglink).  Inline frames, demangling and JIT symbols are not here
 * yet (TODO(#3)).  This is the only file that includes libdwfl's header.
 */
#include "symbolize.h"
#include "err.h"
#include "hash.h"

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SYM_BUILD_ID_MAX 64

struct sym_load {
	uint64_t off, filesz, vaddr; /* one PT_LOAD: file range and where it is linked */
};

struct sym_module {
	char *path;
	uint8_t build_id[SYM_BUILD_ID_MAX];
	size_t build_id_len;
	char *base; /* label used in module+0xOFF */
	bool opened;
	Dwfl *dwfl;
	Dwfl_Module *mod; /* NULL: no usable file (missing, not ELF, or changed) */
	GElf_Addr bias;
	struct sym_load *loads;
	size_t nr_loads;
};

/* A cached result: @key within module @mod (NO_MODULE: unmapped, SYSCALLS: markers). */
struct sym_entry {
	uint64_t key;
	uint32_t mod;
	struct sym_frame *frame; /* NULL: empty slot */
};

#define NO_MODULE UINT32_MAX
#define SYSCALLS  (UINT32_MAX - 1)

struct symbolizer {
	bool lines;
	char *debuginfo_path;
	Dwfl_Callbacks cb; /* must outlive every Dwfl: libdwfl keeps a pointer */
	struct sym_module *mods;
	size_t nr_mods;
	unsigned long alloc_mods;
	size_t *mod_slots; /* open addressing: index + 1 into mods, 0 empty */
	size_t mod_cap;
	struct sym_entry *cache;
	size_t nr_cache, cap_cache;
	struct sym_frame truncated;
};

struct symbolizer *symbolizer_new(const struct sym_opts *opts)
{
	struct symbolizer *s = xp_calloc(1, sizeof(*s));

	if (opts) {
		s->lines = opts->lines;
		if (opts->debuginfo_path)
			s->debuginfo_path = xp_strdup(opts->debuginfo_path);
	}
	s->cb.find_elf = dwfl_build_id_find_elf;
	s->cb.find_debuginfo = dwfl_standard_find_debuginfo;
	s->cb.debuginfo_path = s->debuginfo_path ? &s->debuginfo_path : NULL;
	s->truncated.kind = SYM_MARKER;
	s->truncated.name = "[truncated]";
	return s;
}

static void frame_free(struct sym_frame *f)
{
	free((char *)f->name);
	free((char *)f->file);
	free(f);
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
		free(m->path);
		free(m->base);
		free(m->loads);
	}
	free(s->cache);
	free(s->mods);
	free(s->mod_slots);
	free(s->debuginfo_path);
	free(s);
}

static uint64_t module_hash(const char *path, const uint8_t *id, size_t idlen)
{
	uint64_t h = xp_fnv1a(XP_FNV_INIT, path, strlen(path));

	if (idlen)
		h = xp_fnv1a(h, id, idlen);
	return xp_mix64(h ^ idlen);
}

static bool module_is(const struct sym_module *m, const char *path, const uint8_t *id, size_t idlen)
{
	return m->build_id_len == idlen && (!idlen || !memcmp(m->build_id, id, idlen)) &&
	       !strcmp(m->path, path);
}

/* The label of a module: its basename, without the " (deleted)" /proc adds. */
static char *module_label(const char *path)
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

static void mod_table_grow(struct symbolizer *s)
{
	size_t i, j;

	free(s->mod_slots);
	s->mod_cap = s->mod_cap ? s->mod_cap * 2 : 64;
	s->mod_slots = xp_calloc(s->mod_cap, sizeof(*s->mod_slots));
	for (i = 0; i < s->nr_mods; i++) {
		const struct sym_module *m = &s->mods[i];

		j = (size_t)module_hash(m->path, m->build_id, m->build_id_len) & (s->mod_cap - 1);
		while (s->mod_slots[j])
			j = (j + 1) & (s->mod_cap - 1);
		s->mod_slots[j] = i + 1;
	}
}

/* The module for @map's (path, build-id), created (not yet opened) on first use. */
static size_t module_index(struct symbolizer *s, const struct sym_map *map)
{
	size_t idlen = map->build_id_len > SYM_BUILD_ID_MAX ? 0 : map->build_id_len;
	const char *path = map->path ? map->path : "";
	struct sym_module *m;
	size_t j;

	if ((s->nr_mods + 1) * 2 > s->mod_cap)
		mod_table_grow(s);
	j = (size_t)module_hash(path, map->build_id, idlen) & (s->mod_cap - 1);
	for (; s->mod_slots[j]; j = (j + 1) & (s->mod_cap - 1))
		if (module_is(&s->mods[s->mod_slots[j] - 1], path, map->build_id, idlen))
			return s->mod_slots[j] - 1;
	xp_grow((void **)&s->mods, &s->alloc_mods, s->nr_mods + 1, sizeof(*s->mods));
	m = &s->mods[s->nr_mods];
	memset(m, 0, sizeof(*m));
	m->path = xp_strdup(path);
	if (idlen)
		memcpy(m->build_id, map->build_id, idlen);
	m->build_id_len = idlen;
	m->base = module_label(path);
	s->mod_slots[j] = ++s->nr_mods;
	return s->nr_mods - 1;
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

/* Give up on a module's file: its frames become module+offset.  Frees the fd too. */
static void module_close(struct sym_module *m)
{
	dwfl_end(m->dwfl);
	m->dwfl = NULL;
	m->mod = NULL;
}

/* Open the file the first time the module is used; leave m->mod NULL if it cannot be used. */
static void module_open(struct symbolizer *s, struct sym_module *m)
{
	const unsigned char *bits;
	char have[2 * SYM_BUILD_ID_MAX + 1], want[2 * SYM_BUILD_ID_MAX + 1];
	GElf_Addr id_vaddr;
	int fd, n;

	m->opened = true;
	/* "[vdso]", "[heap]", anonymous memory: nothing on disk to read. */
	if (m->path[0] != '/')
		return;
	/* A path from the data file: a FIFO or a device must not hang or trigger anything. */
	fd = xp_open_regular(m->path);
	if (fd < 0) {
		xp_warn("cannot open '%s': %s; its frames are shown as %s+offset", m->path,
			errno == EINVAL ? "not a regular file" : strerror(errno), m->base);
		return;
	}
	m->dwfl = dwfl_begin(&s->cb);
	if (!m->dwfl) {
		close(fd);
		xp_warn("cannot read '%s': dwfl_begin: %s", m->path, dwfl_errmsg(-1));
		return;
	}
	dwfl_report_begin(m->dwfl);
	/* Base 0 with add_p_vaddr: the module sits at its link-time addresses. */
	m->mod = dwfl_report_elf(m->dwfl, m->base, m->path, fd, 0, true);
	dwfl_report_end(m->dwfl, NULL, NULL);
	if (!m->mod) {
		close(fd);
		xp_warn("cannot read '%s': dwfl_report_elf: %s; its frames are shown as %s+offset",
			m->path, dwfl_errmsg(-1), m->base);
		return;
	}
	if (m->build_id_len) {
		n = dwfl_module_build_id(m->mod, &bits, &id_vaddr);
		if (n != (int)m->build_id_len || memcmp(bits, m->build_id, m->build_id_len)) {
			hex(have, sizeof(have), n > 0 ? bits : NULL, n > 0 ? (size_t)n : 0);
			hex(want, sizeof(want), m->build_id, m->build_id_len);
			xp_warn(
			    "'%s' has changed since it was recorded (build-id %s, recorded %s); "
			    "its frames are shown as %s+offset",
			    m->path, n > 0 ? have : "none", want, m->base);
			module_close(m);
			return;
		}
	}
	if (read_loads(m)) {
		xp_warn("cannot read the program headers of '%s': %s", m->path, elf_errmsg(-1));
		module_close(m);
	}
}

/* ---- the result cache ---------------------------------------------------- */

static size_t cache_slot(const struct symbolizer *s, uint32_t mod, uint64_t key)
{
	size_t j = (size_t)xp_mix64(key ^ ((uint64_t)mod << 32 | mod)) & (s->cap_cache - 1);

	while (s->cache[j].frame && (s->cache[j].mod != mod || s->cache[j].key != key))
		j = (j + 1) & (s->cap_cache - 1);
	return j;
}

static struct sym_frame *cache_get(struct symbolizer *s, uint32_t mod, uint64_t key)
{
	return s->cap_cache ? s->cache[cache_slot(s, mod, key)].frame : NULL;
}

static void cache_put(struct symbolizer *s, uint32_t mod, uint64_t key, struct sym_frame *f)
{
	size_t i;

	if ((s->nr_cache + 1) * 4 > s->cap_cache * 3) {
		struct sym_entry *old = s->cache;
		size_t oldcap = s->cap_cache;

		s->cap_cache = oldcap ? oldcap * 2 : 1024;
		s->cache = xp_calloc(s->cap_cache, sizeof(*s->cache));
		for (i = 0; i < oldcap; i++)
			if (old[i].frame)
				s->cache[cache_slot(s, old[i].mod, old[i].key)] = old[i];
		free(old);
	}
	s->cache[cache_slot(s, mod, key)] = (struct sym_entry){key, mod, f};
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

static struct sym_frame *lookup(struct symbolizer *s, struct sym_module *m, uint64_t lookup_off,
				uint64_t shown_off)
{
	struct sym_frame *f;
	const char *name = NULL, *file;
	GElf_Off symoff = 0;
	GElf_Word shndx;
	GElf_Sym sym;
	Elf *elf;
	Dwarf_Addr bias, addr;
	Dwfl_Line *line;
	uint64_t vaddr;
	int lineno = 0;

	if (!m->opened)
		module_open(s, m);
	if (!m->mod || !file_offset_to_vaddr(m, lookup_off, &vaddr))
		goto unresolved;
	addr = vaddr + m->bias;
	name = dwfl_module_addrinfo(m->mod, addr, &symoff, &sym, &shndx, &elf, &bias);
	if (!name || !*name)
		goto unresolved;
	f = frame_new(SYM_FUNC, "%s", name);
	f->module = m->base;
	f->offset = symoff;
	if (s->lines && (line = dwfl_module_getsrc(m->mod, addr)) &&
	    (file = dwfl_lineinfo(line, &addr, &lineno, NULL, NULL, NULL))) {
		f->file = xp_strdup(file);
		f->line = lineno > 0 ? (unsigned int)lineno : 0;
	}
	return f;
unresolved:
	f = frame_new(SYM_MODULE_OFFSET, "%s+%#" PRIx64, m->base, shown_off);
	f->module = m->base;
	return f;
}

const struct sym_frame *symbolize_pc(struct symbolizer *s, const struct sym_map *map, uint64_t pc,
				     unsigned int frame_flags)
{
	uint64_t look = sym_lookup_pc(pc, frame_flags), key;
	struct sym_frame *f;
	uint32_t mod;

	if (frame_flags & XP_FRAME_TRUNCATED)
		return &s->truncated;
	if (frame_flags & XP_FRAME_SYSCALL) {
		/* TODO(#3): syscall names from the arch of the data file. */
		mod = SYSCALLS;
		key = pc;
	} else if (!map || look < map->start || look >= map->end) {
		mod = NO_MODULE;
		key = pc;
	} else {
		mod = (uint32_t)module_index(s, map);
		/* Both offsets are in the file; the exact bit keeps pc and pc-1 apart. */
		key = (look - map->start + map->offset) << 1 | (look == pc);
	}
	f = cache_get(s, mod, key);
	if (f)
		return f;
	if (mod == SYSCALLS)
		f = frame_new(SYM_MARKER, "[syscall] %" PRIu64, pc);
	else if (mod == NO_MODULE)
		f = frame_new(SYM_ADDRESS, "%#" PRIx64, pc);
	else
		f = lookup(s, &s->mods[mod], look - map->start + map->offset,
			   pc - map->start + map->offset);
	cache_put(s, mod, key, f);
	return f;
}
