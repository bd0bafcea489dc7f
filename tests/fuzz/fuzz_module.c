/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for what xprof reads of an ELF file (target/module.c): a
 * file of the target, or one captured for the report, may be anything.
 * The input is opened as a module (through a memfd, as a mapped file is),
 * then asked what the unwinder and the symbolizer ask: build-id, code
 * bytes, function symbols, PLT stubs, and the CFI row (.eh_frame, else
 * .debug_frame) with the frame and stack registers of each of our three
 * arches, at addresses where those answers are: every section's start,
 * middle and end, and a few offsets the input itself gives.  Invariants:
 * a symbol found contains the address; a row found covers it and uses no
 * more operations than it has room for.  Seeds: small ELF files of the
 * three arches (tests/data/fuzz/module/).
 */
#include "addrspace.h"
#include "module.h"

#include <gelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile unsigned int sink;

/* DWARF frame and stack registers: x86-64, aarch64, riscv64. */
static const unsigned int regs[][2] = {{6, 7}, {29, 31}, {8, 2}};

/* Every byte of @p: a range that is not all readable trips ASan. */
static unsigned int touch(const uint8_t *p, size_t n)
{
	unsigned int sum = 0;

	while (n--)
		sum += p[n];
	return sum;
}

static unsigned int probe(struct module *mod, uint64_t vaddr)
{
	const uint8_t *code;
	const char *name = NULL;
	uint64_t start, len;
	struct cfi_row row;
	unsigned int sum;
	size_t i, n;

	n = module_code(mod, vaddr, &code);
	sum = touch(code, n < 64 ? n : 64);
	n = module_code_before(mod, vaddr, 16, &code);
	if (n > 16)
		abort();
	sum += touch(code, n);
	if (!module_symbol(mod, vaddr, &name, &start, &len)) {
		if (!name || vaddr < start || (len && vaddr - start >= len) || (!len && vaddr != start))
			abort();
		if (module_symbol_by_name(mod, name, &start, &len))
			abort();
	}
	(void)module_is_plt(mod, vaddr);
	for (i = 0; i < sizeof(regs) / sizeof(regs[0]); i++) {
		memset(&row, 0, sizeof(row));
		if (module_cfi_row(mod, vaddr, regs[i][0], regs[i][1], &row))
			continue;
		if (vaddr < row.start || vaddr >= row.end || row.nr_ops > CFI_ROW_OPS)
			abort();
	}
	return sum;
}

/* Addresses worth asking about: each section's start, middle and last byte. */
static size_t addresses(const uint8_t *data, size_t size, uint64_t *out, size_t max)
{
	Elf *elf;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t n = 0;

	elf_version(EV_CURRENT);
	elf = elf_memory((char *)data, size);
	if (!elf)
		return 0;
	while (n + 3 <= max && (scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_addr) {
			out[n++] = sh.sh_addr;
			out[n++] = sh.sh_addr + sh.sh_size / 2;
			out[n++] = sh.sh_addr + (sh.sh_size ? sh.sh_size - 1 : 0);
		}
	elf_end(elf);
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint64_t inode;
	struct module_cache *mc;
	struct module *mod;
	uint64_t addr[96], v;
	const uint8_t *id;
	unsigned int sum = 0;
	char path[64];
	size_t n, i;
	int fd;

	fd = memfd_create("fuzz-module", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	mc = module_cache_new();
	mod = module_cache_get(mc,
			       &(struct xp_map){.start = 0x400000,
						.end = 0x400000 + (size | 0xfff) + 1,
						.prot = XP_PROT_READ | XP_PROT_EXEC,
						.inode = ++inode,
						.path = path},
			       0, NULL);
	if (mod) {
		n = module_build_id(mod, &id);
		sum += touch(id, n);
		n = addresses(data, size, addr, sizeof(addr) / sizeof(addr[0]) - 8);
		/* And some the input picks: its last bytes, read as addresses. */
		for (i = 0; i < 8 && size >= 8 * (i + 1); i++) {
			memcpy(&v, data + size - 8 * (i + 1), 8);
			addr[n++] = v;
		}
		for (i = 0; i < n; i++)
			sum += probe(mod, addr[i]);
	}
	module_cache_free(mc);
	close(fd);
	sink = sum; /* keeps the reads */
	return 0;
}
