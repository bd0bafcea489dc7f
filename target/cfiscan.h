/* SPDX-License-Identifier: MIT */
/*
 * A check of a CFI section (.eh_frame, .debug_frame) before libdw runs it:
 * libdw grows the register table of a frame to the highest register a
 * CFA instruction names, up to 2 GiB, and zeroes it (a corrupt FDE made it
 * take 2 GiB for one lookup).  A section whose instructions name a
 * register past CFI_REG_MAX, or that cannot be read to its end, is not
 * used.
 */
#ifndef XPROF_TARGET_CFISCAN_H
#define XPROF_TARGET_CFISCAN_H

#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>

/* Past every arch's DWARF register numbers (RISC-V's CSRs end at 8191). */
#define CFI_REG_MAX 8191

/*
 * Whether the CFA instructions [@p, @end) decode to their end, name no
 * register past CFI_REG_MAX and use no DW_CFA_set_loc (whose operand's
 * size is the FDE's pointer encoding's; no compiler emits it).
 */
bool cfi_insns_sane(const uint8_t *p, const uint8_t *end);
/*
 * Whether every CIE and FDE of the CFI section @data of @elf is
 * (cfi_insns_sane, and a CIE's return address register too); @eh: the
 * section is .eh_frame.
 */
bool cfi_section_sane(Elf *elf, Elf_Data *data, bool eh);

#endif
