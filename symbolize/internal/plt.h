/* SPDX-License-Identifier: MIT */
/*
 * Names for PLT stubs, which no symbol table covers.  Each stub in .plt,
 * .plt.sec and .plt.got is decoded to the GOT slot its indirect jump reads
 * (x86-64 `jmp *disp(%rip)`, aarch64 `adrp x16; ldr x17, [x16, #off]`,
 * riscv64 `auipc t3; ld t3, off(t3)`), and named after the symbol of the
 * dynamic relocation of that slot (JUMP_SLOT in .rela.plt, GLOB_DAT in
 * .rela.dyn): "func@plt", as perf and objdump name them.  An IRELATIVE
 * slot is named after the dynamic symbol at its resolver's address (the
 * IFUNC symbol).  A stub whose slot has no relocation with a name (the
 * PLT header, a lazy .plt beside .plt.sec) gets no entry: no name is
 * better than a wrong one.  Reads only the ELF it is given; prints nothing.
 */
#ifndef XPROF_SYMBOLIZE_PLT_H
#define XPROF_SYMBOLIZE_PLT_H

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

struct plt_stub {
	uint64_t addr, size; /* ELF virtual addresses (link time), size > 0 */
	char *name;	     /* "func@plt", malloc'ed */
};

/*
 * The named PLT stubs of @elf (x86-64, aarch64, riscv64; none for other
 * machines or a file without PLT sections), in *@out (malloc'ed, NULL
 * when none).  Returns their number.
 */
size_t plt_stubs(Elf *elf, struct plt_stub **out);
void plt_stubs_free(struct plt_stub *stubs, size_t nr);

#endif
