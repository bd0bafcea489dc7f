/* SPDX-License-Identifier: MIT */
/*
 * The CFI check on canned instruction streams: what compilers emit
 * passes; a register past CFI_REG_MAX, a truncated operand, a block past
 * the end, DW_CFA_set_loc and an unknown opcode do not.  And the
 * .eh_frame of this very test passes whole.
 */
#include "t.h"

#include "cfiscan.h"

#include <fcntl.h>
#include <gelf.h>
#include <string.h>
#include <unistd.h>

#define SANE(...)                                                                                  \
	({                                                                                         \
		static const uint8_t b_[] = {__VA_ARGS__};                                         \
		cfi_insns_sane(b_, b_ + sizeof(b_));                                               \
	})

static int test_compiler_output(void)
{
	/* x86-64 prologue: def_cfa rsp+8, offset rip; advance; def_cfa_offset 16, offset rbp. */
	T_ASSERT(SANE(0x0c, 0x07, 0x08, 0x90, 0x01, 0x41, 0x0e, 0x10, 0x86, 0x02));
	/* remember/restore state, advance_loc1/2/4, def_cfa_register, nops. */
	T_ASSERT(SANE(0x0a, 0x02, 0x05, 0x03, 0x01, 0x00, 0x04, 0, 0, 0, 1, 0x0d, 0x06, 0x0b, 0x00,
		      0x00));
	/* expression: reg 16, a 2-byte block; def_cfa_expression of 3 bytes; args_size. */
	T_ASSERT(SANE(0x10, 0x10, 0x02, 0x77, 0x08, 0x0f, 0x03, 0x77, 0x08, 0x06, 0x2e, 0x10));
	/* aarch64 negate_ra_state; the _sf forms with negative SLEB128s. */
	T_ASSERT(SANE(0x2d, 0x11, 0x1e, 0x7f, 0x12, 0x1f, 0x70, 0x13, 0x7c));
	/* A register at the limit (8191 = 0xff 0x3f). */
	T_ASSERT(SANE(0x07, 0xff, 0x3f));
	T_ASSERT(SANE(0x00));
	return T_OK;
}

static int test_hostile(void)
{
	/* offset_extended naming register 8192, then one of ~2^27 (2 GiB in libdw). */
	T_ASSERT(!SANE(0x05, 0x80, 0x40, 0x01));
	T_ASSERT(!SANE(0x05, 0x80, 0x80, 0x80, 0x40, 0x01));
	T_ASSERT(!SANE(0x09, 0x01, 0x80, 0x80, 0x01)); /* register's second operand */
	T_ASSERT(!SANE(0x16, 0xff, 0xff, 0x03, 0x00)); /* val_expression */
	/* A LEB128 that never ends, and one longer than 64 bits. */
	T_ASSERT(!SANE(0x0e, 0x80, 0x80));
	T_ASSERT(!SANE(0x07, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01));
	/* Operands past the end. */
	T_ASSERT(!SANE(0x04, 0x01, 0x02));
	T_ASSERT(!SANE(0x0f, 0x05, 0x77));
	T_ASSERT(!SANE(0x0f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01));
	/* set_loc, and opcodes nobody knows. */
	T_ASSERT(!SANE(0x01, 0, 0, 0, 0, 0, 0, 0, 0));
	T_ASSERT(!SANE(0x17));
	T_ASSERT(!SANE(0x3f));
	return T_OK;
}

/* This test's own .eh_frame (as a compiler and linker made it) passes. */
static int test_own_eh_frame(void)
{
	int fd = open("/proc/self/exe", O_RDONLY);
	Elf_Scn *scn = NULL;
	Elf_Data *data = NULL;
	size_t shstrndx;
	GElf_Shdr sh;
	Elf *elf;
	bool ok;

	T_ASSERT(fd >= 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	T_ASSERT(elf && !elf_getshdrstrndx(elf, &shstrndx));
	while ((scn = elf_nextscn(elf, scn)) && !data)
		if (gelf_getshdr(scn, &sh) &&
		    !strcmp(elf_strptr(elf, shstrndx, sh.sh_name) ?: "", ".eh_frame"))
			data = elf_getdata(scn, NULL);
	T_ASSERT(data && data->d_size > 0);
	ok = cfi_section_sane(elf, data, true);
	/* Cut short in its last entry (before the 4-byte terminator): not readable to its end. */
	data->d_size -= 6;
	T_ASSERT(!cfi_section_sane(elf, data, true));
	elf_end(elf);
	close(fd);
	T_ASSERT(ok);
	return T_OK;
}

T_MAIN(T_CASE(test_compiler_output), T_CASE(test_hostile), T_CASE(test_own_eh_frame))
