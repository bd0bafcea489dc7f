/* SPDX-License-Identifier: MIT */
/*
 * Modules: a module is one ELF file on disk, opened once through the
 * module cache (target/module.c), with its build-id or other identity and
 * its file offset to ELF vaddr.  The unwinder gets the CFI row for an
 * address, reduced to the few rules an unwinder needs and to plain types
 * (no libdw type leaks out of module.c), the file's code bytes, and
 * function symbols.
 *
 * Every function returns 0 or -errno and prints nothing.  Not thread-safe:
 * a module lazily loads its CFI and symbols.  Pointers returned into a
 * module stay valid until module_cache_free.
 */
#ifndef XPROF_TARGET_MODULE_H
#define XPROF_TARGET_MODULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct module;
struct module_cache;
struct targetfs;
struct targetfs_root;
struct xp_map;

struct module_cache *module_cache_new(void);
void module_cache_free(struct module_cache *mc);

/* Build-id of a module's ELF file; 0 bytes when it has none. */
size_t module_build_id(const struct module *mod, const uint8_t **id);
/*
 * The identity of a module's file (lib/fileid.h) into @id: its GNU
 * build-id, else its Go build ID, else the SHA-256 of the whole file,
 * computed on the first call (a pass over the file).  0, or -ENOENT when
 * there is no file (@id then of no length).  Not thread-safe.
 */
struct xp_file_id;
int module_file_id(struct module *mod, struct xp_file_id *id);
/* ELF virtual address (as in the symbol table) of target address @addr in map @m. */
int module_vaddr(const struct module *mod, const struct xp_map *m, uint64_t addr, uint64_t *vaddr);

/*
 * The module mapped by @m (a file mapping, or the vDSO), opened on first
 * use and cached by (device, inode, path).  NULL for anonymous and other
 * special mappings, files that cannot be opened and files that are not ELF
 * (the failure is cached too).  The file is opened as process @pid sees it
 * (targetfs_open_mapped: its map_files entry, else the path under @root,
 * NULL for ours), so a file of another mount namespace, or deleted since,
 * is the one mapped; the vDSO is read from process @pid (no pid: NULL, not
 * cached).
 */
struct module *module_cache_get(struct module_cache *mc, const struct xp_map *m, pid_t pid,
				const struct targetfs_root *root);

/* The cache's roots of traced processes (targetfs.h); NULL for a NULL cache. */
struct targetfs *module_cache_fs(struct module_cache *mc);

/*
 * Mark the module (for the capture, capture.h): true the first time,
 * false when it was marked already.
 */
bool module_mark(struct module *mod);
/* Whether the module is the kernel's [vdso], read from memory. */
bool module_is_vdso(const struct module *mod);
/*
 * The whole file as opened (mapped): *@image and its length.  It stays
 * what it was when opened even if the file is replaced or deleted since.
 */
size_t module_image(const struct module *mod, const uint8_t **image);

/* The module's path as opened, and its ELF header fields. */
const char *module_path(const struct module *mod);
uint16_t module_e_machine(const struct module *mod);

/*
 * Code bytes of the file at ELF vaddr @vaddr, from an executable PT_LOAD:
 * *@code points at them, and the return value is how many follow (up to the
 * end of the segment's file image), 0 when @vaddr is not in such a segment.
 */
size_t module_code(const struct module *mod, uint64_t vaddr, const uint8_t **code);

/*
 * Code bytes of the file just before ELF vaddr @vaddr in the same
 * executable PT_LOAD: *@code points at them and the return value is how
 * many (at most @max) end at @vaddr.
 */
size_t module_code_before(const struct module *mod, uint64_t vaddr, size_t max,
			  const uint8_t **code);

/*
 * The function symbol (.symtab, else .dynsym) containing ELF vaddr @vaddr:
 * its name, start and size.  -ENOENT when none.  @name may be NULL.
 */
int module_symbol(struct module *mod, uint64_t vaddr, const char **name, uint64_t *start,
		  uint64_t *size);
/*
 * Whether ELF vaddr @vaddr lies in a PLT section (.plt, .plt.sec, .plt.got,
 * .iplt): stubs made by the linker, with no symbol and, except on x86-64,
 * no CFI, that jump on without touching the stack or the return address.
 */
bool module_is_plt(struct module *mod, uint64_t vaddr);
/* The function symbol named @name (first match).  -ENOENT when none. */
int module_symbol_by_name(struct module *mod, const char *name, uint64_t *start, uint64_t *size);

/*
 * The symbol @name of any type (a function, or data such as a runtime's
 * state), from .dynsym, else .symtab, without loading the symbol tables
 * for lookups by address: its ELF vaddr and size.  -ENOENT when none.
 */
int module_any_symbol(struct module *mod, const char *name, uint64_t *vaddr, uint64_t *size);
/* The section @name (allocated): its ELF vaddr and size.  -ENOENT when none. */
int module_section(struct module *mod, const char *name, uint64_t *vaddr, uint64_t *size);

/*
 * A CFI row, reduced.  DWARF expressions are translated to a small set of
 * our own operations (enum cfi_op_kind) stored in the row, so the unwinder
 * evaluates them without libdw.
 */
enum cfi_rule_kind {
	CFI_UNDEF = 0,	/* value lost (call-clobbered), or the end of the stack for the ra */
	CFI_SAME,	/* unchanged from the callee */
	CFI_OFFSET,	/* saved at CFA + off */
	CFI_VAL_OFFSET, /* is CFA + off */
	CFI_REG,	/* is the value of register reg (+ off for the CFA rule) */
	CFI_EXPR,	/* saved at the address computed by ops[expr .. expr + expr_len) */
	CFI_VAL_EXPR,	/* is the value computed by the ops */
};

enum cfi_op_kind {
	CFI_OP_CFA = 1,	   /* push the CFA */
	CFI_OP_CONST,	   /* push n */
	CFI_OP_BREG,	   /* push reg + n */
	CFI_OP_PLUS_CONST, /* top += n */
	CFI_OP_DEREF,	   /* top = word at top (n bytes: 1, 2, 4 or 8) */
	CFI_OP_DUP,
	CFI_OP_DROP,
	CFI_OP_SWAP,
	CFI_OP_OVER,
	CFI_OP_NEG,
	CFI_OP_NOT,
	CFI_OP_PLUS,
	CFI_OP_MINUS,
	CFI_OP_MUL,
	CFI_OP_AND,
	CFI_OP_OR,
	CFI_OP_XOR,
	CFI_OP_SHL,
	CFI_OP_SHR,
	CFI_OP_SHRA,
	CFI_OP_EQ,
	CFI_OP_NE,
	CFI_OP_LT,
	CFI_OP_LE,
	CFI_OP_GT,
	CFI_OP_GE,
};

struct cfi_op {
	uint8_t kind; /* enum cfi_op_kind */
	uint8_t reg;  /* CFI_OP_BREG */
	int64_t n;
};

struct cfi_rule {
	uint8_t kind; /* enum cfi_rule_kind */
	uint8_t reg;  /* CFI_REG */
	uint8_t expr, expr_len;
	int64_t off;
};

#define CFI_ROW_OPS 16

struct cfi_row {
	uint64_t start, end; /* ELF vaddr range where the row applies */
	struct cfi_rule cfa; /* CFI_REG (reg + off) or CFI_VAL_EXPR */
	struct cfi_rule ra;  /* rule of the return-address column */
	struct cfi_rule fp;  /* rule of the arch's frame pointer */
	struct cfi_rule sp;  /* rule of the stack pointer (CFI_UNDEF/CFI_SAME: the CFA) */
	uint8_t ra_reg;	     /* the return-address column (x86-64: 16, aarch64: 30) */
	bool signal;	     /* a signal trampoline: the caller is an interrupted frame */
	uint8_t nr_ops;
	struct cfi_op ops[CFI_ROW_OPS];
};

/*
 * The CFI row for ELF vaddr @vaddr, from .eh_frame, else .debug_frame.
 * @fp_reg and @sp_reg are the arch's DWARF frame and stack pointer.
 * -ENOENT when the module has no CFI for @vaddr; -ENOTSUP when the rules use
 * DWARF operations we do not evaluate (or more than CFI_ROW_OPS of them).
 */
int module_cfi_row(struct module *mod, uint64_t vaddr, unsigned int fp_reg, unsigned int sp_reg,
		   struct cfi_row *row);

#endif
