/* SPDX-License-Identifier: MIT */
/* The CFI section check (cfiscan.h). */
#include "cfiscan.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <string.h>

/* An unsigned LEB128 at *@p (saturated past 64 bits).  False if it runs past @end. */
static bool uleb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	unsigned int shift = 0;
	uint8_t b;

	*v = 0;
	do {
		if (*p >= end)
			return false;
		b = *(*p)++;
		if (shift < 64)
			*v |= (uint64_t)(b & 0x7f) << shift;
		else if (b & 0x7f)
			*v = UINT64_MAX;
		shift += 7;
	} while (b & 0x80);
	return true;
}

/* A register operand: a ULEB128 no greater than CFI_REG_MAX. */
static bool reg(const uint8_t **p, const uint8_t *end)
{
	uint64_t r;

	return uleb(p, end, &r) && r <= CFI_REG_MAX;
}

/* Skip @n bytes. */
static bool skip(const uint8_t **p, const uint8_t *end, uint64_t n)
{
	if (n > (uint64_t)(end - *p))
		return false;
	*p += n;
	return true;
}

/* A block: its ULEB128 length, then that many bytes. */
static bool block(const uint8_t **p, const uint8_t *end)
{
	uint64_t n;

	return uleb(p, end, &n) && skip(p, end, n);
}

bool cfi_insns_sane(const uint8_t *p, const uint8_t *end)
{
	uint64_t v;

	while (p < end) {
		uint8_t op = *p++;
		bool ok;

		switch (op & 0xc0) {
		case DW_CFA_advance_loc:
		case DW_CFA_restore:
			continue; /* the register (if any) is in the opcode: below 64 */
		case DW_CFA_offset:
			if (!uleb(&p, end, &v))
				return false;
			continue;
		}
		switch (op) {
		case DW_CFA_nop:
		case DW_CFA_remember_state:
		case DW_CFA_restore_state:
		case DW_CFA_GNU_window_save: /* DW_CFA_AARCH64_negate_ra_state */
			ok = true;
			break;
		case DW_CFA_advance_loc1:
			ok = skip(&p, end, 1);
			break;
		case DW_CFA_advance_loc2:
			ok = skip(&p, end, 2);
			break;
		case DW_CFA_advance_loc4:
			ok = skip(&p, end, 4);
			break;
		case DW_CFA_def_cfa_offset:
		case DW_CFA_def_cfa_offset_sf:
		case DW_CFA_GNU_args_size:
			ok = uleb(&p, end, &v); /* an SLEB128 has the same length */
			break;
		case DW_CFA_def_cfa_expression:
			ok = block(&p, end);
			break;
		case DW_CFA_restore_extended:
		case DW_CFA_undefined:
		case DW_CFA_same_value:
		case DW_CFA_def_cfa_register:
			ok = reg(&p, end);
			break;
		case DW_CFA_offset_extended:
		case DW_CFA_def_cfa:
		case DW_CFA_val_offset:
		case DW_CFA_GNU_negative_offset_extended:
		case DW_CFA_offset_extended_sf:
		case DW_CFA_def_cfa_sf:
		case DW_CFA_val_offset_sf:
			ok = reg(&p, end) && uleb(&p, end, &v);
			break;
		case DW_CFA_register:
			ok = reg(&p, end) && reg(&p, end);
			break;
		case DW_CFA_expression:
		case DW_CFA_val_expression:
			ok = reg(&p, end) && block(&p, end);
			break;
		default: /* DW_CFA_set_loc, and what libdw does not know either */
			ok = false;
			break;
		}
		if (!ok)
			return false;
	}
	return true;
}

/* Bytes of a pointer in encoding @enc (DW_EH_PE_*) with @addr_size-byte addresses; 0: a LEB128. */
static unsigned int enc_size(uint8_t enc, unsigned int addr_size)
{
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
		return addr_size;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		return 2;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		return 4;
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		return 8;
	default:
		return 0;
	}
}

/* An encoded pointer of encoding @enc. */
static bool pointer(const uint8_t **p, const uint8_t *end, uint8_t enc, unsigned int addr_size)
{
	unsigned int n = enc_size(enc, addr_size);
	uint64_t v;

	return n ? skip(p, end, n) : uleb(p, end, &v);
}

/*
 * The encoding of the FDE pointers of CIE @cie (its 'R' augmentation, else
 * absolute).  False if its augmentation data cannot be read.
 */
static bool fde_encoding(const Dwarf_CIE *cie, unsigned int addr_size, uint8_t *enc)
{
	const uint8_t *p = cie->augmentation_data;
	const uint8_t *end = p ? p + cie->augmentation_data_size : NULL;
	const char *a = cie->augmentation;

	*enc = DW_EH_PE_absptr;
	if (!a || a[0] != 'z')
		return true;
	for (a++; *a; a++) {
		if (*a == 'S' || *a == 'B' || *a == 'G')
			continue; /* no data */
		if (!p || p >= end)
			return false;
		switch (*a) {
		case 'R':
			*enc = *p++;
			break;
		case 'L':
			p++;
			break;
		case 'P': {
			uint8_t penc = *p++;

			if (!pointer(&p, end, penc, addr_size))
				return false;
			break;
		}
		default:
			return false;
		}
	}
	return true;
}

/* FDE @fde's instructions, past its addresses and augmentation data (CIE @cie). */
static bool fde_sane(const Dwarf_FDE *fde, const Dwarf_CIE *cie, unsigned int addr_size)
{
	const uint8_t *p = fde->start, *end = fde->end;
	uint8_t enc;

	if (!fde_encoding(cie, addr_size, &enc) || !pointer(&p, end, enc, addr_size) ||
	    !pointer(&p, end, enc, addr_size))
		return false;
	if (cie->augmentation && cie->augmentation[0] == 'z' && !block(&p, end))
		return false;
	return cfi_insns_sane(p, end);
}

bool cfi_section_sane(Elf *elf, Elf_Data *data, bool eh)
{
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
	unsigned int addr_size;
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry e, c;
	int r;

	if (!ident || !data)
		return false;
	if (!data->d_size)
		return true; /* nothing for libdw to run */
	if (!data->d_buf)
		return false;
	addr_size = ident[EI_CLASS] == ELFCLASS32 ? 4 : 8;
	while ((r = dwarf_next_cfi(ident, data, eh, off, &next, &e)) == 0) {
		if (dwarf_cfi_cie_p(&e)) {
			if (e.cie.return_address_register > CFI_REG_MAX ||
			    !cfi_insns_sane(e.cie.initial_instructions, e.cie.initial_instructions_end))
				return false;
		} else if (dwarf_next_cfi(ident, data, eh, e.fde.CIE_pointer, &(Dwarf_Off){0}, &c) ||
			   !dwarf_cfi_cie_p(&c) || !fde_sane(&e.fde, &c.cie, addr_size)) {
			return false;
		}
		if (next <= off)
			return false;
		off = next;
	}
	return r == 1;
}
