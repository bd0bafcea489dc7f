/* SPDX-License-Identifier: MIT */
/*
 * Modules: ELF files mapped by traced processes, each opened once (libelf,
 * mmap) through a cache keyed by (device, inode, path).  A module knows its
 * build-id, its PT_LOAD table (target address -> file offset -> ELF vaddr),
 * and, loaded on first use, its CFI (.eh_frame via dwarf_getcfi_elf, else
 * .debug_frame via dwarf_getcfi) and function symbols.  The vDSO is a
 * module too, its image copied from the target.  This is the only
 * file of the record side that includes libelf/libdw; what it hands out is
 * in plain types (module.h), never Dwarf_* or Elf_*.  Symbolisation for
 * reports is symbolize/'s job (libdwfl), not this file's.
 */
#include "module.h"
#include "cfiscan.h"
#include "err.h"
#include "fileid.h"
#include "maps.h"
#include "sorted.h"
#include "targetfs.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

struct module_load {
	uint64_t vaddr, memsz, offset, filesz;
	uint32_t flags; /* PF_* */
};

struct module_range {
	uint64_t start, end;
};

/* .plt, .plt.sec, .plt.got, .iplt: a few at most. */
#define MODULE_MAX_PLT 4

struct module_sym {
	uint64_t start, size;
	const char *name; /* in the ELF string table */
};

struct module {
	struct module *next;
	char *path;
	uint32_t dev_major, dev_minor;
	uint64_t inode;
	Elf *elf;     /* NULL: not an ELF file or unreadable (negative cache entry) */
	uint8_t *mem; /* the image, when read from the target (vDSO) */
	const uint8_t *image;
	size_t image_len;
	uint16_t e_machine;
	uint8_t build_id[XP_BUILD_ID_MAX];
	size_t build_id_len;
	/* Without a GNU build-id: the Go build ID, else the SHA-256 (when first asked) */
	struct xp_file_id alt_id;
	struct module_load *loads;
	size_t nr_loads;
	bool cfi_loaded, dbg_tried;
	Dwarf_CFI *eh_cfi;
	Dwarf *dwarf;
	Dwarf_CFI *dbg_cfi;
	bool syms_loaded;
	struct module_sym *syms; /* sorted by start */
	size_t nr_syms;
	struct module_range plts[MODULE_MAX_PLT]; /* PLT sections, found with the symbols */
	size_t nr_plts;
	bool marked; /* module_mark: the capture has it in its list */
};

struct module_cache {
	struct module *head;
	struct targetfs *fs;
};

struct module_cache *module_cache_new(void)
{
	struct module_cache *mc = xp_calloc(1, sizeof(struct module_cache));

	elf_version(EV_CURRENT);
	mc->fs = targetfs_new();
	return mc;
}

struct targetfs *module_cache_fs(struct module_cache *mc)
{
	return mc ? mc->fs : NULL;
}

static void module_free(struct module *mod)
{
	if (mod->eh_cfi)
		dwarf_cfi_end(mod->eh_cfi);
	if (mod->dwarf)
		dwarf_end(mod->dwarf); /* also ends dbg_cfi */
	if (mod->elf)
		elf_end(mod->elf);
	XP_FREE_ALL(mod->loads, mod->syms, mod->path, mod->mem, mod);
}

void module_cache_free(struct module_cache *mc)
{
	struct module *mod, *next;

	if (!mc)
		return;
	for (mod = mc->head; mod; mod = next) {
		next = mod->next;
		module_free(mod);
	}
	targetfs_free(mc->fs);
	free(mc);
}

/*
 * Copy the GNU build-id from the note data @data; keep a Go build ID seen
 * on the way (fileid.h) in mod->alt_id.  0, or -ENOENT when it has no
 * GNU build-id.
 */
static int module_note_build_id(struct module *mod, Elf_Data *data)
{
	GElf_Nhdr nhdr;
	size_t off = 0, next, name_off, desc_off;

	while (data && (next = gelf_getnote(data, off, &nhdr, &name_off, &desc_off)) > 0) {
		const char *name = (const char *)data->d_buf + name_off;
		const uint8_t *desc = (const uint8_t *)data->d_buf + desc_off;

		if (nhdr.n_type == NT_GNU_BUILD_ID && nhdr.n_namesz == 4 &&
		    !memcmp(name, "GNU", 4) && nhdr.n_descsz > 0 &&
		    nhdr.n_descsz <= XP_BUILD_ID_MAX) {
			memcpy(mod->build_id, desc, nhdr.n_descsz);
			mod->build_id_len = nhdr.n_descsz;
			return 0;
		}
		/* The Go linker's own: owner "Go" (namesz 4, "Go\0\0"). */
		if (nhdr.n_type == XP_NT_GO_BUILD_ID && nhdr.n_namesz >= 3 && nhdr.n_namesz <= 4 &&
		    !memcmp(name, "Go", 3) && nhdr.n_descsz > 0 &&
		    nhdr.n_descsz <= XP_FILE_ID_MAX && !mod->alt_id.len) {
			mod->alt_id.kind = XP_FILE_ID_GO;
			mod->alt_id.len = (uint8_t)nhdr.n_descsz;
			memcpy(mod->alt_id.bytes, desc, nhdr.n_descsz);
		}
		off = next;
	}
	return -ENOENT;
}

static void module_read_build_id(struct module *mod, size_t phnum)
{
	Elf_Scn *scn = NULL;
	GElf_Phdr ph;
	GElf_Shdr sh;
	size_t i;

	for (i = 0; i < phnum; i++) {
		if (!gelf_getphdr(mod->elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		if (!module_note_build_id(mod, elf_getdata_rawchunk(mod->elf, (int64_t)ph.p_offset,
								    ph.p_filesz, ELF_T_NHDR)))
			return;
	}
	/* No program headers (a debug file): look for the note section. */
	while ((scn = elf_nextscn(mod->elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		if (!module_note_build_id(mod, elf_getdata(scn, NULL)))
			return;
	}
}

/* Fill the module from its open Elf: header, PT_LOAD table, build-id. */
static int module_init_elf(struct module *mod)
{
	GElf_Ehdr eh;
	GElf_Phdr ph;
	size_t phnum, i;

	if (elf_kind(mod->elf) != ELF_K_ELF || !gelf_getehdr(mod->elf, &eh) ||
	    elf_getphdrnum(mod->elf, &phnum))
		goto bad;
	mod->e_machine = eh.e_machine;
	mod->image = (const uint8_t *)elf_rawfile(mod->elf, &mod->image_len);
	if (!mod->image)
		goto bad;
	mod->loads = xp_calloc(phnum, sizeof(*mod->loads));
	for (i = 0; i < phnum; i++) {
		if (!gelf_getphdr(mod->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		/* A segment claiming bytes beyond the file is corrupt: ignore it. */
		if (ph.p_offset > mod->image_len || ph.p_filesz > mod->image_len - ph.p_offset)
			continue;
		mod->loads[mod->nr_loads++] = (struct module_load){
		    .vaddr = ph.p_vaddr,
		    .memsz = ph.p_memsz,
		    .offset = ph.p_offset,
		    .filesz = ph.p_filesz,
		    .flags = ph.p_flags,
		};
	}
	module_read_build_id(mod, phnum);
	return 0;
bad:
	elf_end(mod->elf);
	mod->elf = NULL;
	free(mod->loads);
	mod->loads = NULL;
	mod->nr_loads = 0;
	return -EINVAL;
}

/* Open the ELF file on @fd (a regular file: targetfs checked), and close @fd. */
static int module_open_elf(struct module *mod, int fd)
{
	if (fd < 0)
		return fd;
	mod->elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	/* The whole file is mapped now: libelf no longer needs the descriptor. */
	if (mod->elf)
		elf_cntl(mod->elf, ELF_C_FDDONE);
	close(fd);
	if (!mod->elf)
		return -EINVAL;
	return module_init_elf(mod);
}

/*
 * The vDSO is no file: copy its image out of the target (it is mapped
 * whole, a few pages) and open that.  Every process of a kernel maps the
 * same image, so one module serves all.
 */
#define MODULE_VDSO_MAX (1u << 20)

static int module_open_vdso(struct module *mod, const struct xp_map *m, pid_t pid)
{
	struct iovec local, remote;
	size_t len = (size_t)(m->end - m->start);
	ssize_t n;

	if (pid <= 0 || len > MODULE_VDSO_MAX)
		return -EINVAL;
	mod->mem = xp_malloc(len);
	local.iov_base = mod->mem;
	local.iov_len = len;
	remote.iov_base = (void *)(uintptr_t)m->start;
	remote.iov_len = len;
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n != (ssize_t)len)
		return n < 0 ? -errno : -EIO;
	mod->elf = elf_memory((char *)mod->mem, len);
	if (!mod->elf)
		return -EINVAL;
	return module_init_elf(mod);
}

struct module *module_cache_get(struct module_cache *mc, const struct xp_map *m, pid_t pid,
				const struct targetfs_root *root)
{
	bool vdso = m->path && !strcmp(m->path, "[vdso]");
	struct module *mod;
	const char *how = NULL;

	if (!mc || !m->path || (m->path[0] != '/' && !vdso))
		return NULL;
	for (mod = mc->head; mod; mod = mod->next)
		if (mod->inode == m->inode && mod->dev_major == m->dev_major &&
		    mod->dev_minor == m->dev_minor && !strcmp(mod->path, m->path))
			return mod->elf ? mod : NULL;
	mod = xp_calloc(1, sizeof(*mod));
	mod->path = xp_strdup(m->path);
	mod->dev_major = m->dev_major;
	mod->dev_minor = m->dev_minor;
	mod->inode = m->inode;
	if (vdso) {
		/* A failed read (no pid yet, process gone) is not cached: retry next time. */
		if (module_open_vdso(mod, m, pid)) {
			module_free(mod);
			return NULL;
		}
	} else {
		/* As the process sees it: its mount namespace, or a file deleted since. */
		module_open_elf(mod, targetfs_open_mapped(pid, root, m, &how));
		xp_debug(2, "pid %d: '%s' %s%s", (int)pid, m->path, mod->elf ? "opened by " : "",
			 mod->elf ? how : "cannot be opened");
	}
	mod->next = mc->head;
	mc->head = mod;
	return mod->elf ? mod : NULL;
}

bool module_mark(struct module *mod)
{
	bool was = mod->marked;

	mod->marked = true;
	return !was;
}

bool module_is_vdso(const struct module *mod)
{
	return mod->mem != NULL;
}

size_t module_image(const struct module *mod, const uint8_t **image)
{
	*image = mod->image;
	return mod->image_len;
}

const char *module_path(const struct module *mod)
{
	return mod->path;
}

uint16_t module_e_machine(const struct module *mod)
{
	return mod->e_machine;
}

size_t module_build_id(const struct module *mod, const uint8_t **id)
{
	if (!mod || !mod->build_id_len) {
		*id = NULL;
		return 0;
	}
	*id = mod->build_id;
	return mod->build_id_len;
}

int module_file_id(struct module *mod, struct xp_file_id *id)
{
	if (!mod || !mod->elf || !mod->image) {
		memset(id, 0, sizeof(*id));
		return -ENOENT;
	}
	if (mod->build_id_len) {
		id->kind = XP_FILE_ID_GNU;
		id->len = (uint8_t)mod->build_id_len;
		memcpy(id->bytes, mod->build_id, mod->build_id_len);
		return 0;
	}
	/* Once per file: the image is mapped, so this reads the page cache (~0.3 GB/s here). */
	if (!mod->alt_id.len) {
		xp_sha256(mod->image, mod->image_len, mod->alt_id.bytes);
		mod->alt_id.kind = XP_FILE_ID_SHA256;
		mod->alt_id.len = XP_SHA256_LEN;
	}
	*id = mod->alt_id;
	return 0;
}

int module_vaddr(const struct module *mod, const struct xp_map *m, uint64_t addr, uint64_t *vaddr)
{
	uint64_t off;
	size_t i;

	if (!mod || addr < m->start || addr >= m->end)
		return -ENOENT;
	off = addr - m->start + m->offset;
	for (i = 0; i < mod->nr_loads; i++) {
		const struct module_load *l = &mod->loads[i];

		if (off >= l->offset && off - l->offset < l->filesz) {
			*vaddr = off - l->offset + l->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

size_t module_code(const struct module *mod, uint64_t vaddr, const uint8_t **code)
{
	size_t i;

	for (i = 0; i < mod->nr_loads; i++) {
		const struct module_load *l = &mod->loads[i];

		if ((l->flags & PF_X) && vaddr >= l->vaddr && vaddr - l->vaddr < l->filesz) {
			*code = mod->image + l->offset + (vaddr - l->vaddr);
			return (size_t)(l->filesz - (vaddr - l->vaddr));
		}
	}
	*code = NULL;
	return 0;
}

size_t module_code_before(const struct module *mod, uint64_t vaddr, size_t max,
			  const uint8_t **code)
{
	size_t i, n;

	for (i = 0; i < mod->nr_loads; i++) {
		const struct module_load *l = &mod->loads[i];

		if ((l->flags & PF_X) && vaddr > l->vaddr && vaddr - l->vaddr <= l->filesz) {
			n = vaddr - l->vaddr < max ? (size_t)(vaddr - l->vaddr) : max;
			*code = mod->image + l->offset + (vaddr - l->vaddr) - n;
			return n;
		}
	}
	*code = NULL;
	return 0;
}

/* --- symbols ------------------------------------------------------------ */

static int sym_cmp(const void *a, const void *b)
{
	const struct module_sym *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

static void module_load_symtab(struct module *mod, Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n, i, alloc = 0;
	GElf_Sym sym;

	if (!data || !sh->sh_entsize)
		return;
	n = sh->sh_size / sh->sh_entsize;
	for (i = 0; i < n; i++) {
		const char *name;

		if (!gelf_getsym(data, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		name = elf_strptr(mod->elf, sh->sh_link, sym.st_name);
		if (!name)
			continue;
		xp_grow((void **)&mod->syms, &alloc, mod->nr_syms + 1, sizeof(*mod->syms));
		mod->syms[mod->nr_syms++] = (struct module_sym){
		    .start = sym.st_value,
		    .size = sym.st_size,
		    .name = name,
		};
	}
}

/* The PLT sections, by name: the linker gives their stubs no symbols. */
static void module_load_plts(struct module *mod)
{
	Elf_Scn *scn = NULL;
	const char *name;
	size_t shstrndx;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(mod->elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(mod->elf, scn)) && mod->nr_plts < MODULE_MAX_PLT) {
		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_EXECINSTR) || !sh.sh_size)
			continue;
		name = elf_strptr(mod->elf, shstrndx, sh.sh_name);
		if (name && (!strncmp(name, ".plt", 4) || !strcmp(name, ".iplt")))
			mod->plts[mod->nr_plts++] =
			    (struct module_range){sh.sh_addr, sh.sh_addr + sh.sh_size};
	}
}

static void module_load_syms(struct module *mod)
{
	Elf_Scn *scn = NULL, *dynsym = NULL;
	GElf_Shdr sh, dynsh;

	mod->syms_loaded = true;
	module_load_plts(mod);
	while ((scn = elf_nextscn(mod->elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB) {
			module_load_symtab(mod, scn, &sh);
			dynsym = NULL;
			break;
		}
		if (sh.sh_type == SHT_DYNSYM) {
			dynsym = scn;
			dynsh = sh;
		}
	}
	if (dynsym)
		module_load_symtab(mod, dynsym, &dynsh);
	xp_sort(mod->syms, mod->nr_syms, sizeof(*mod->syms), sym_cmp);
}

int module_symbol(struct module *mod, uint64_t vaddr, const char **name, uint64_t *start,
		  uint64_t *size)
{
	size_t lo, i;

	if (!mod->syms_loaded)
		module_load_syms(mod);
	/* Last symbol starting at or before vaddr: syms[lo - 1]. */
	lo = XP_PARTITION_POINT(0, mod->nr_syms, k, mod->syms[k].start <= vaddr);
	/* Aliases share a start; any of them may carry the size. */
	for (i = lo; i-- > 0 && mod->syms[i].start == mod->syms[lo - 1].start;) {
		const struct module_sym *s = &mod->syms[i];

		if (vaddr - s->start < s->size || (vaddr == s->start && !s->size)) {
			if (name)
				*name = s->name;
			*start = s->start;
			*size = s->size;
			return 0;
		}
	}
	return -ENOENT;
}

bool module_is_plt(struct module *mod, uint64_t vaddr)
{
	size_t i;

	if (!mod->syms_loaded)
		module_load_syms(mod);
	for (i = 0; i < mod->nr_plts; i++)
		if (vaddr >= mod->plts[i].start && vaddr < mod->plts[i].end)
			return true;
	return false;
}

int module_symbol_by_name(struct module *mod, const char *name, uint64_t *start, uint64_t *size)
{
	size_t i;

	if (!mod->syms_loaded)
		module_load_syms(mod);
	for (i = 0; i < mod->nr_syms; i++) {
		if (!strcmp(mod->syms[i].name, name)) {
			*start = mod->syms[i].start;
			*size = mod->syms[i].size;
			return 0;
		}
	}
	return -ENOENT;
}

/* Look for @name among the defined symbols of table @scn (any type): 0, or -ENOENT. */
static int module_find_in(struct module *mod, Elf_Scn *scn, const GElf_Shdr *sh, const char *name,
			  uint64_t *vaddr, uint64_t *size)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n, i;
	GElf_Sym sym;

	if (!data || !sh->sh_entsize)
		return -ENOENT;
	n = sh->sh_size / sh->sh_entsize;
	for (i = 0; i < n; i++) {
		const char *s;

		if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		s = elf_strptr(mod->elf, sh->sh_link, sym.st_name);
		if (s && !strcmp(s, name)) {
			*vaddr = sym.st_value;
			*size = sym.st_size;
			return 0;
		}
	}
	return -ENOENT;
}

int module_any_symbol(struct module *mod, const char *name, uint64_t *vaddr, uint64_t *size)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	int ret = -ENOENT;

	/* .dynsym first: exported names are what a runtime promises to keep. */
	while (ret && (scn = elf_nextscn(mod->elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_DYNSYM)
			ret = module_find_in(mod, scn, &sh, name, vaddr, size);
	scn = NULL;
	while (ret && (scn = elf_nextscn(mod->elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			ret = module_find_in(mod, scn, &sh, name, vaddr, size);
	return ret;
}

int module_section(struct module *mod, const char *name, uint64_t *vaddr, uint64_t *size)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;
	const char *n;

	if (elf_getshdrstrndx(mod->elf, &shstrndx))
		return -ENOENT;
	while ((scn = elf_nextscn(mod->elf, scn)))
		if (gelf_getshdr(scn, &sh) && (n = elf_strptr(mod->elf, shstrndx, sh.sh_name)) &&
		    !strcmp(n, name) && sh.sh_addr) {
			*vaddr = sh.sh_addr;
			*size = sh.sh_size;
			return 0;
		}
	return -ENOENT;
}

/* --- CFI ------------------------------------------------------------------ */

/* The data of @mod's section @name or, if not found, @alt (NULL: none). */
static Elf_Data *section_data(struct module *mod, const char *name, const char *alt)
{
	Elf_Scn *scn = NULL, *found = NULL;
	size_t shstrndx;
	GElf_Shdr sh;
	const char *n;

	if (elf_getshdrstrndx(mod->elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(mod->elf, scn)) && !found)
		if (gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS &&
		    (n = elf_strptr(mod->elf, shstrndx, sh.sh_name)) &&
		    (!strcmp(n, name) || (alt && !strcmp(n, alt))))
			found = scn;
	return found ? elf_getdata(found, NULL) : NULL;
}

/*
 * Whether @mod's CFI section @name (or @alt) passes cfiscan.h's check: a
 * section that fails is not given to libdw, which would trust its
 * register numbers.
 */
static bool cfi_usable(struct module *mod, const char *name, const char *alt, bool eh)
{
	if (cfi_section_sane(mod->elf, section_data(mod, name, alt), eh))
		return true;
	xp_debug(1, "%s: %s not used: it does not decode, or names an impossible register",
		 mod->path ? mod->path : "module", name);
	return false;
}

static void module_load_cfi(struct module *mod)
{
	mod->cfi_loaded = true;
	mod->eh_cfi = dwarf_getcfi_elf(mod->elf);
	if (mod->eh_cfi && !cfi_usable(mod, ".eh_frame", NULL, true)) {
		dwarf_cfi_end(mod->eh_cfi);
		mod->eh_cfi = NULL;
	}
}

/* .debug_frame, opened only when .eh_frame has no answer (it costs a dwarf_begin_elf). */
static Dwarf_CFI *module_debug_cfi(struct module *mod)
{
	if (!mod->dbg_tried) {
		mod->dbg_tried = true;
		mod->dwarf = dwarf_begin_elf(mod->elf, DWARF_C_READ, NULL);
		if (mod->dwarf)
			mod->dbg_cfi = dwarf_getcfi(mod->dwarf);
		/* Ended with the Dwarf: only dropped when it fails the check. */
		if (mod->dbg_cfi && !cfi_usable(mod, ".debug_frame", ".zdebug_frame", false))
			mod->dbg_cfi = NULL;
	}
	return mod->dbg_cfi;
}

/* Translate one libdw operation to ours.  -ENOTSUP for what we do not evaluate. */
static int cfi_op_from_dwarf(const Dwarf_Op *op, struct cfi_op *out)
{
	static const struct {
		uint8_t atom, kind;
	} simple[] = {
	    {DW_OP_call_frame_cfa, CFI_OP_CFA},
	    {DW_OP_dup, CFI_OP_DUP},
	    {DW_OP_drop, CFI_OP_DROP},
	    {DW_OP_swap, CFI_OP_SWAP},
	    {DW_OP_over, CFI_OP_OVER},
	    {DW_OP_neg, CFI_OP_NEG},
	    {DW_OP_not, CFI_OP_NOT},
	    {DW_OP_plus, CFI_OP_PLUS},
	    {DW_OP_minus, CFI_OP_MINUS},
	    {DW_OP_mul, CFI_OP_MUL},
	    {DW_OP_and, CFI_OP_AND},
	    {DW_OP_or, CFI_OP_OR},
	    {DW_OP_xor, CFI_OP_XOR},
	    {DW_OP_shl, CFI_OP_SHL},
	    {DW_OP_shr, CFI_OP_SHR},
	    {DW_OP_shra, CFI_OP_SHRA},
	    {DW_OP_eq, CFI_OP_EQ},
	    {DW_OP_ne, CFI_OP_NE},
	    {DW_OP_lt, CFI_OP_LT},
	    {DW_OP_le, CFI_OP_LE},
	    {DW_OP_gt, CFI_OP_GT},
	    {DW_OP_ge, CFI_OP_GE},
	};
	uint8_t a = op->atom;
	size_t i;

	*out = (struct cfi_op){0};
	for (i = 0; i < sizeof(simple) / sizeof(simple[0]); i++) {
		if (simple[i].atom == a) {
			out->kind = simple[i].kind;
			return 0;
		}
	}
	if (a >= DW_OP_lit0 && a <= DW_OP_lit31) {
		out->kind = CFI_OP_CONST;
		out->n = a - DW_OP_lit0;
	} else if (a >= DW_OP_breg0 && a <= DW_OP_breg31) {
		out->kind = CFI_OP_BREG;
		out->reg = (uint8_t)(a - DW_OP_breg0);
		out->n = (int64_t)op->number;
	} else if (a == DW_OP_bregx) {
		if (op->number >= 256)
			return -ENOTSUP;
		out->kind = CFI_OP_BREG;
		out->reg = (uint8_t)op->number;
		out->n = (int64_t)op->number2;
	} else if (a == DW_OP_const1u || a == DW_OP_const2u || a == DW_OP_const4u ||
		   a == DW_OP_const8u || a == DW_OP_constu || a == DW_OP_const1s ||
		   a == DW_OP_const2s || a == DW_OP_const4s || a == DW_OP_const8s ||
		   a == DW_OP_consts) {
		/* libdw sign-extends the signed forms into number already. */
		out->kind = CFI_OP_CONST;
		out->n = (int64_t)op->number;
	} else if (a == DW_OP_plus_uconst) {
		out->kind = CFI_OP_PLUS_CONST;
		out->n = (int64_t)op->number;
	} else if (a == DW_OP_deref) {
		out->kind = CFI_OP_DEREF;
		out->n = 8;
	} else if (a == DW_OP_deref_size) {
		if (op->number != 1 && op->number != 2 && op->number != 4 && op->number != 8)
			return -ENOTSUP;
		out->kind = CFI_OP_DEREF;
		out->n = (int64_t)op->number;
	} else {
		return -ENOTSUP;
	}
	return 0;
}

/* Reduce the libdw expression @ops to @rule, storing its operations in @row. */
static int cfi_rule_from_ops(const Dwarf_Op *ops, size_t nops, struct cfi_row *row,
			     struct cfi_rule *rule)
{
	bool value = false;
	size_t i;
	int ret;

	*rule = (struct cfi_rule){0};
	if (nops && ops[nops - 1].atom == DW_OP_stack_value) {
		value = true;
		nops--;
	}
	if (!nops)
		return -ENOTSUP;
	if (nops == 1 && !value && ops[0].atom == DW_OP_regx) {
		if (ops[0].number >= 256)
			return -ENOTSUP;
		rule->kind = CFI_REG;
		rule->reg = (uint8_t)ops[0].number;
		return 0;
	}
	if (nops == 1 && !value && ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg31) {
		rule->kind = CFI_REG;
		rule->reg = (uint8_t)(ops[0].atom - DW_OP_reg0);
		return 0;
	}
	/* The common rules, offset(N) and val_offset(N), need no evaluator. */
	if (ops[0].atom == DW_OP_call_frame_cfa &&
	    (nops == 1 || (nops == 2 && ops[1].atom == DW_OP_plus_uconst))) {
		rule->kind = value ? CFI_VAL_OFFSET : CFI_OFFSET;
		rule->off = nops == 2 ? (int64_t)ops[1].number : 0;
		return 0;
	}
	if (nops > (size_t)(CFI_ROW_OPS - row->nr_ops))
		return -ENOTSUP;
	rule->kind = value ? CFI_VAL_EXPR : CFI_EXPR;
	rule->expr = row->nr_ops;
	rule->expr_len = (uint8_t)nops;
	for (i = 0; i < nops; i++) {
		ret = cfi_op_from_dwarf(&ops[i], &row->ops[row->nr_ops + i]);
		if (ret)
			return ret;
	}
	row->nr_ops = (uint8_t)(row->nr_ops + nops);
	return 0;
}

static int cfi_register_rule(Dwarf_Frame *frame, unsigned int reg, struct cfi_row *row,
			     struct cfi_rule *rule)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;

	*rule = (struct cfi_rule){0};
	if (dwarf_frame_register(frame, (int)reg, mem, &ops, &nops))
		return -ENOTSUP;
	if (!nops) {
		/* libdw.h: ops NULL means same_value, ops == mem means undefined. */
		rule->kind = ops ? CFI_UNDEF : CFI_SAME;
		return 0;
	}
	return cfi_rule_from_ops(ops, nops, row, rule);
}

static int cfi_row_from_frame(Dwarf_Frame *frame, unsigned int fp_reg, unsigned int sp_reg,
			      struct cfi_row *row)
{
	Dwarf_Addr start, end;
	Dwarf_Op *ops;
	size_t nops;
	bool signal;
	int ra, ret;

	memset(row, 0, offsetof(struct cfi_row, ops));
	ra = dwarf_frame_info(frame, &start, &end, &signal);
	if (ra < 0 || ra >= 256)
		return -ENOTSUP;
	row->start = start;
	row->end = end;
	row->signal = signal;
	row->ra_reg = (uint8_t)ra;
	if (dwarf_frame_cfa(frame, &ops, &nops) || !nops)
		return -ENOTSUP;
	if (nops == 1 && ops[0].atom == DW_OP_bregx && ops[0].number < 256) {
		row->cfa.kind = CFI_REG;
		row->cfa.reg = (uint8_t)ops[0].number;
		row->cfa.off = (int64_t)ops[0].number2;
	} else if (nops == 1 && ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
		row->cfa.kind = CFI_REG;
		row->cfa.reg = (uint8_t)(ops[0].atom - DW_OP_breg0);
		row->cfa.off = (int64_t)ops[0].number;
	} else {
		/* A CFA expression computes the value itself: no stack_value in it. */
		ret = cfi_rule_from_ops(ops, nops, row, &row->cfa);
		if (ret)
			return ret;
		if (row->cfa.kind == CFI_EXPR)
			row->cfa.kind = CFI_VAL_EXPR;
		else if (row->cfa.kind != CFI_VAL_EXPR && row->cfa.kind != CFI_REG)
			return -ENOTSUP;
	}
	ret = cfi_register_rule(frame, (unsigned int)ra, row, &row->ra);
	if (!ret)
		ret = cfi_register_rule(frame, fp_reg, row, &row->fp);
	if (!ret)
		ret = cfi_register_rule(frame, sp_reg, row, &row->sp);
	return ret;
}

int module_cfi_row(struct module *mod, uint64_t vaddr, unsigned int fp_reg, unsigned int sp_reg,
		   struct cfi_row *row)
{
	Dwarf_Frame *frame;
	Dwarf_CFI *cfi;
	int ret;

	if (!mod->cfi_loaded)
		module_load_cfi(mod);
	cfi = mod->eh_cfi;
	if (!cfi || dwarf_cfi_addrframe(cfi, vaddr, &frame)) {
		cfi = module_debug_cfi(mod);
		if (!cfi || dwarf_cfi_addrframe(cfi, vaddr, &frame))
			return -ENOENT;
	}
	ret = cfi_row_from_frame(frame, fp_reg, sp_reg, row);
	free(frame);
	return ret;
}
