/* SPDX-License-Identifier: MIT */
/*
 * PLT stub names (plt.h).  The stubs are decoded, not counted: the order
 * of .rela.plt matches the order of .plt only for a lazy x86-64 .plt,
 * while decoding the GOT slot each stub jumps through works the same for
 * .plt, .plt.sec (IBT), .plt.got (-z now, address-taken functions) and
 * for the other machines' layouts, and leaves the headers unnamed.
 */
#include "plt.h"
#include "err.h"
#include "sorted.h"

#include <elf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#ifndef R_RISCV_IRELATIVE
#define R_RISCV_IRELATIVE 58
#endif

/* The dynamic relocation of one GOT slot. */
struct plt_reloc {
	uint64_t slot;	  /* r_offset */
	const char *name; /* its symbol's name, or NULL */
	uint64_t addend;  /* IRELATIVE: the resolver's address */
	bool irelative;
};

struct plt_ctx {
	Elf *elf;
	uint16_t machine;
	struct plt_reloc *rel;
	size_t nr_rel;
	unsigned long alloc_rel;
	struct plt_stub *out;
	size_t nr_out;
	unsigned long alloc_out;
};

/* A stub found by decoding: where it starts and the GOT slot it reads. */
struct plt_hit {
	uint64_t addr, slot;
};

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int64_t sext(uint64_t v, unsigned int bits)
{
	uint64_t m = 1ULL << (bits - 1);

	v &= (m << 1) - 1;
	return (int64_t)((v ^ m) - m);
}

static bool is_irelative(uint16_t machine, uint32_t type)
{
	switch (machine) {
	case EM_X86_64:
		return type == R_X86_64_IRELATIVE;
	case EM_AARCH64:
		return type == R_AARCH64_IRELATIVE;
	case EM_RISCV:
		return type == R_RISCV_IRELATIVE;
	default:
		return false;
	}
}

static void add_reloc(struct plt_ctx *c, Elf_Scn *symscn, GElf_Shdr *symsh, uint64_t off,
		      uint64_t info, uint64_t addend)
{
	uint32_t symi = (uint32_t)GELF_R_SYM(info), type = (uint32_t)GELF_R_TYPE(info);
	struct plt_reloc r = {off, NULL, addend, is_irelative(c->machine, type)};
	Elf_Data *d = elf_getdata(symscn, NULL);
	GElf_Sym sym;

	if (symi && d && gelf_getsym(d, (int)symi, &sym)) {
		r.name = elf_strptr(c->elf, symsh->sh_link, sym.st_name);
		if (r.name && !*r.name)
			r.name = NULL;
	}
	if (!r.name && !r.irelative)
		return;
	xp_grow((void **)&c->rel, &c->alloc_rel, c->nr_rel + 1, sizeof(*c->rel));
	c->rel[c->nr_rel++] = r;
}

/* Every relocation against a dynamic symbol table (.rela.plt, .rela.dyn, .rel.*). */
static void read_relocs(struct plt_ctx *c)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh, symsh;

	while ((scn = elf_nextscn(c->elf, scn))) {
		Elf_Scn *symscn;
		Elf_Data *d;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_RELA && sh.sh_type != SHT_REL) ||
		    !sh.sh_entsize)
			continue;
		symscn = elf_getscn(c->elf, sh.sh_link);
		if (!symscn || !gelf_getshdr(symscn, &symsh) || symsh.sh_type != SHT_DYNSYM)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf)
			continue;
		n = d->d_size / sh.sh_entsize;
		for (i = 0; i < n && i <= INT32_MAX; i++) {
			if (sh.sh_type == SHT_RELA) {
				GElf_Rela r;

				if (gelf_getrela(d, (int)i, &r))
					add_reloc(c, symscn, &symsh, r.r_offset, r.r_info,
						  (uint64_t)r.r_addend);
			} else {
				GElf_Rel r;

				if (gelf_getrel(d, (int)i, &r))
					add_reloc(c, symscn, &symsh, r.r_offset, r.r_info, 0);
			}
		}
	}
}

static int cmp_reloc(const void *a, const void *b)
{
	const struct plt_reloc *x = a, *y = b;

	return (x->slot > y->slot) - (x->slot < y->slot);
}

static const struct plt_reloc *reloc_at(const struct plt_ctx *c, uint64_t slot)
{
	size_t lo = XP_PARTITION_POINT(0, c->nr_rel, i, c->rel[i].slot < slot);

	return lo < c->nr_rel && c->rel[lo].slot == slot ? &c->rel[lo] : NULL;
}

/* The name of the dynamic function at @addr (an IFUNC's resolver), IFUNC symbols first. */
static const char *dynsym_at(struct plt_ctx *c, uint64_t addr)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	const char *best = NULL;

	while ((scn = elf_nextscn(c->elf, scn))) {
		Elf_Data *d;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		n = d ? d->d_size / sh.sh_entsize : 0;
		for (i = 1; i < n && i <= INT32_MAX; i++) {
			GElf_Sym sym;
			const char *name;
			int type;

			if (!gelf_getsym(d, (int)i, &sym) || sym.st_value != addr ||
			    sym.st_shndx == SHN_UNDEF || sym.st_shndx == SHN_ABS)
				continue;
			type = GELF_ST_TYPE(sym.st_info);
			if (type != STT_GNU_IFUNC && type != STT_FUNC)
				continue;
			name = elf_strptr(c->elf, sh.sh_link, sym.st_name);
			if (!name || !*name)
				continue;
			if (type == STT_GNU_IFUNC)
				return name;
			if (!best)
				best = name;
		}
	}
	return best;
}

static void add_stub(struct plt_ctx *c, uint64_t addr, uint64_t size, uint64_t slot)
{
	const struct plt_reloc *r = reloc_at(c, slot);
	const char *name = NULL;
	size_t len;
	char *s;

	if (!r || !size)
		return;
	name = r->name;
	if (!name && r->irelative)
		name = dynsym_at(c, r->addend);
	if (!name)
		return;
	len = strlen(name);
	s = xp_malloc(len + sizeof("@plt"));
	memcpy(s, name, len);
	memcpy(s + len, "@plt", sizeof("@plt"));
	xp_grow((void **)&c->out, &c->alloc_out, c->nr_out + 1, sizeof(*c->out));
	c->out[c->nr_out++] = (struct plt_stub){addr, size, s};
}

/*
 * x86-64: fixed-size entries (sh_entsize: 16, or 8 in a .plt.got without
 * IBT), each `jmp *disp(%rip)` at its start or after endbr64, with an
 * optional bnd prefix.  The PLT header pushes first and is left out.
 */
static void scan_x86_64(struct plt_ctx *c, const uint8_t *p, size_t len, uint64_t vaddr,
			uint64_t entsize)
{
	static const uint8_t endbr64[] = {0xf3, 0x0f, 0x1e, 0xfa};
	uint64_t es = entsize == 8 || entsize == 16 ? entsize : 16;
	size_t off;

	for (off = 0; off + es <= len; off += es) {
		const uint8_t *e = p + off;
		size_t j = memcmp(e, endbr64, 4) ? 0 : 4;

		if (j + 7 <= es && e[j] == 0xf2)
			j++;
		if (j + 6 > es || e[j] != 0xff || e[j + 1] != 0x25)
			continue;
		add_stub(c, vaddr + off, es,
			 vaddr + off + j + 6 + (uint64_t)sext(rd32(e + j + 2), 32));
	}
}

static int cmp_hit(const void *a, const void *b)
{
	const struct plt_hit *x = a, *y = b;

	return (x->addr > y->addr) - (x->addr < y->addr);
}

/*
 * aarch64 and riscv64: stubs are found instruction by instruction (their
 * size depends on BTI and PAC, and the header's differs); a stub runs to
 * the next one or to the end of the section.
 */
static void scan_words(struct plt_ctx *c, const uint8_t *p, size_t len, uint64_t vaddr)
{
	struct plt_hit *hits = NULL;
	unsigned long alloc = 0;
	size_t nr = 0, off, i;

	for (off = 0; off + 8 <= len; off += 4) {
		uint32_t a = rd32(p + off), b = rd32(p + off + 4);
		uint64_t pc = vaddr + off, start = pc, slot;

		if (c->machine == EM_AARCH64) {
			/* adrp x16, page; ldr x17, [x16, #imm12 * 8] */
			if ((a & 0x9f00001f) != 0x90000010 || (b & 0xffc003ff) != 0xf9400211)
				continue;
			slot = (pc & ~0xfffULL) +
			       ((uint64_t)sext(((a >> 5) & 0x7ffff) << 2 | ((a >> 29) & 3), 21)
				<< 12) +
			       ((b >> 10) & 0xfff) * 8;
			/* bti c in front belongs to the stub. */
			if (off >= 4 && rd32(p + off - 4) == 0xd503245f)
				start -= 4;
		} else {
			/* auipc t3, hi; ld t3, lo(t3) */
			if ((a & 0xfff) != 0xe17 || (b & 0xfffff) != 0xe3e03)
				continue;
			slot =
			    pc + (uint64_t)sext(a & 0xfffff000, 32) + (uint64_t)sext(b >> 20, 12);
		}
		xp_grow((void **)&hits, &alloc, nr + 1, sizeof(*hits));
		hits[nr++] = (struct plt_hit){start, slot};
	}
	xp_sort(hits, nr, sizeof(*hits), cmp_hit);
	for (i = 0; i < nr; i++) {
		uint64_t end = i + 1 < nr ? hits[i + 1].addr : vaddr + len;

		add_stub(c, hits[i].addr, end - hits[i].addr, hits[i].slot);
	}
	free(hits);
}

static bool is_plt_section(const char *name)
{
	return name &&
	       (!strcmp(name, ".plt") || !strcmp(name, ".plt.sec") || !strcmp(name, ".plt.got"));
}

size_t plt_stubs(Elf *elf, struct plt_stub **out)
{
	struct plt_ctx c = {.elf = elf};
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	size_t shstrndx;

	*out = NULL;
	if (!elf || !gelf_getehdr(elf, &eh) || elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	c.machine = eh.e_machine;
	if (c.machine != EM_X86_64 && c.machine != EM_AARCH64 && c.machine != EM_RISCV)
		return 0;
	read_relocs(&c);
	if (!c.nr_rel)
		return 0;
	xp_sort(c.rel, c.nr_rel, sizeof(*c.rel), cmp_reloc);
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) ||
		    !is_plt_section(elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size > sh.sh_size)
			continue;
		if (c.machine == EM_X86_64)
			scan_x86_64(&c, d->d_buf, d->d_size, sh.sh_addr, sh.sh_entsize);
		else
			scan_words(&c, d->d_buf, d->d_size, sh.sh_addr);
	}
	free(c.rel);
	*out = c.out;
	return c.nr_out;
}

void plt_stubs_free(struct plt_stub *stubs, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++)
		free(stubs[i].name);
	free(stubs);
}
