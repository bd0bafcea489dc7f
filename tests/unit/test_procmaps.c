/* SPDX-License-Identifier: MIT */
/*
 * /proc/PID/maps parsing on canned lines (good and malformed), the
 * address space built from maps text (sorting, overlaps, lookups, the
 * 'fresh' flag of what a reload found new), and the module cache on real
 * files: this test binary itself (build-id, ELF vaddr of a function,
 * symbols), a non-ELF file and a missing one.
 */
#include "t.h"

#include "addrspace.h"
#include "arch/arch.h"
#include "module.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

static int test_parse_good(void)
{
	struct xp_map m;
	char path[256];

	T_EQ_U64(procmaps_parse_line("55d0c7a00000-55d0c7a21000 r-xp 00001000 fd:01 1234567    "
				     "      /usr/bin/my prog (deleted)\n",
				     &m, path, sizeof(path)),
		 0);
	T_EQ_U64(m.start, 0x55d0c7a00000);
	T_EQ_U64(m.end, 0x55d0c7a21000);
	T_EQ_U64(m.offset, 0x1000);
	T_EQ_U64(m.prot, XP_PROT_READ | XP_PROT_EXEC);
	T_EQ_U64(m.dev_major, 0xfd);
	T_EQ_U64(m.dev_minor, 1);
	T_EQ_U64(m.inode, 1234567);
	T_EQ_STR(m.path, "/usr/bin/my prog (deleted)");
	T_ASSERT(m.path == path && !m.mod && !m.fresh);

	T_EQ_U64(procmaps_parse_line("7ffd1000-7ffd2000 rw-s 00000000 00:00 0 [stack]", &m, path,
				     sizeof(path)),
		 0);
	T_EQ_U64(m.prot, XP_PROT_READ | XP_PROT_WRITE);
	T_EQ_STR(m.path, "[stack]");

	/* Anonymous: no path at all, or only padding. */
	T_EQ_U64(procmaps_parse_line("1000-2000 ---p 00000000 00:00 0", &m, path, sizeof(path)), 0);
	T_EQ_STR(m.path, "");
	T_EQ_U64(m.prot, 0);
	T_EQ_U64(procmaps_parse_line("1000-2000 ---p 00000000 00:00 0                   \n", &m,
				     path, sizeof(path)),
		 0);
	T_EQ_STR(m.path, "");
	T_EQ_U64(procmaps_parse_line("ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0   "
				     "               [vsyscall]",
				     &m, path, sizeof(path)),
		 0);
	T_EQ_STR(m.path, "[vsyscall]");
	/* A path longer than the buffer is cut, not overflowed. */
	T_EQ_U64(procmaps_parse_line("1000-2000 r--p 00000000 08:02 77 /a/long/path", &m, path, 5),
		 0);
	T_EQ_STR(m.path, "/a/l");
	return T_OK;
}

static int test_parse_bad(void)
{
	static const char *const bad[] = {
	    "",
	    "\n",
	    "1000-2000",
	    "1000-2000 r-xp",
	    "1000 2000 r-xp 00000000 00:00 0",
	    "2000-1000 r-xp 00000000 00:00 0",				 /* end before start */
	    "1000-1000 r-xp 00000000 00:00 0",				 /* empty */
	    "1001-2000 r-xp 00000000 00:00 0",				 /* not page-aligned */
	    "1000-2000 rwxx 00000000 00:00 0",				 /* bad sharing flag */
	    "1000-2000 xwrp 00000000 00:00 0",				 /* letters out of place */
	    "1000-2000 r-x 00000000 00:00 0",				 /* short perms */
	    "1000-2000 r-xp 0000000g 00:00 0",				 /* bad hex */
	    "1000-2000 r-xp 00000000 0000 0",				 /* no colon */
	    "1000-2000 r-xp 00000000 00:00 x",				 /* bad inode */
	    "1000-2000 r-xp 00000000 00:00 99999999999999999999",	 /* inode overflow */
	    "1000-2000 r-xp 00000000 00:00 0/path",			 /* no space before path */
	    "10000000000000000-10000000000001000 r-xp 00000000 00:00 0", /* 17 digits */
	    "-1000-2000 r-xp 00000000 00:00 0",
	    "1000-2000  r-xp 00000000 00:00 0",	      /* double space */
	    "1000-2000 r-xp 00000000 00:00 0 /a\n/b", /* two lines */
	    "1000-2000 r-xp 00000000 123456789:00 0", /* dev major too long */
	};
	struct xp_map m;
	char path[64];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (procmaps_parse_line(bad[i], &m, path, sizeof(path)) != -EINVAL) {
			fprintf(stderr, "accepted: '%s'\n", bad[i]);
			return T_FAIL;
		}
	}
	T_EQ_U64(procmaps_parse_line(NULL, &m, path, sizeof(path)), (uint64_t)-EINVAL);
	T_EQ_U64(procmaps_parse_line("1000-2000 r-xp 0 0:0 0", &m, path, 0), (uint64_t)-EINVAL);
	return T_OK;
}

static const char maps1[] = "7ffd0000-7fff0000 rw-p 00000000 00:00 0 [stack]\n"
			    "400000-401000 r-xp 00000000 00:00 0 [code]\n"
			    "this line is garbage\n"
			    "400800-402000 r--p 00000000 00:00 0 overlapping\n"
			    "600000-601000 rw-p 00000000 00:00 0\n"
			    "7f0000000000-7f0000001000 r-xp 00000000 00:00 0 [vdso]";
/* maps1 and one more executable mapping: what a dlopen adds. */
static const char maps_more[] = "7ffd0000-7fff0000 rw-p 00000000 00:00 0 [stack]\n"
				"400000-401000 r-xp 00000000 00:00 0 [code]\n"
				"500000-501000 r-xp 00000000 00:00 0 [more]\n"
				"600000-601000 rw-p 00000000 00:00 0\n"
				"7f0000000000-7f0000001000 r-xp 00000000 00:00 0 [vdso]";

static int test_addrspace_text(void)
{
	struct addrspace as;
	struct xp_map *m;

	addrspace_init(&as, 0, NULL);
	T_EQ_U64(addrspace_load_text(&as, maps1), 0);
	T_EQ_U64(as.nr, 4); /* garbage and the overlap dropped */
	T_EQ_U64(as.maps[0].start, 0x400000);
	T_EQ_U64(as.maps[2].start, 0x7ffd0000);
	T_EQ_U64(as.maps[3].start, 0x7f0000000000);
	T_ASSERT(addrspace_find(&as, 0x3fffff) == NULL);
	m = addrspace_find(&as, 0x400000);
	T_ASSERT(m && !strcmp(m->path, "[code]"));
	T_ASSERT(addrspace_find(&as, 0x400fff) == m);
	T_ASSERT(addrspace_find(&as, 0x401000) == NULL);
	T_ASSERT(addrspace_is_exec(&as, 0x400123));
	T_ASSERT(!addrspace_is_exec(&as, 0x600123));
	T_ASSERT(!addrspace_is_exec(&as, 0x7ffd1000));
	T_ASSERT(addrspace_is_exec(&as, 0x7f0000000fff));
	T_ASSERT(!addrspace_is_exec(&as, UINT64_MAX));

	/* Every mapping of the first load is fresh; a reload, only the changed ones. */
	T_ASSERT(as.maps[0].fresh && as.maps[1].fresh);
	T_EQ_U64(addrspace_load_text(&as, "400000-401000 r-xp 00000000 00:00 0 [code]\n"
					  "600000-601000 rw-p 00001000 00:00 0\n"),
		 0);
	T_EQ_U64(as.nr, 2);
	T_ASSERT(!as.maps[0].fresh);
	T_ASSERT(as.maps[1].fresh); /* offset changed: a new mapping */
	T_EQ_U64(as.loads, 2);
	addrspace_release(&as);
	T_EQ_U64(as.nr, 0);
	T_ASSERT(addrspace_find(&as, 0x400000) == NULL);
	return T_OK;
}

/*
 * A fork's child starts from its parent's mappings: the same ranges, none
 * to be written for it (not fresh: a data file gives a child its parent's),
 * its own copies of the paths; a reload of the same text finds nothing
 * new, a reload with a mapping more finds that one.
 */
static int test_addrspace_fork(void)
{
	struct addrspace parent, child;

	addrspace_init(&parent, 0, NULL);
	T_EQ_U64(addrspace_load_text(&parent, maps1), 0);
	T_EQ_U64(addrspace_load_text(&parent, maps1), 0); /* nothing fresh in the parent */
	T_ASSERT(!parent.maps[0].fresh);
	addrspace_init(&child, 0, NULL);
	addrspace_fork(&child, &parent, false);
	T_EQ_U64(child.nr, parent.nr);
	T_EQ_U64(child.loads, 0);
	T_ASSERT(!child.maps[0].fresh && !child.maps[3].fresh);
	T_ASSERT(child.maps[0].path != parent.maps[0].path);
	T_ASSERT(!strcmp(child.maps[0].path, "[code]"));
	T_ASSERT(addrspace_is_exec(&child, 0x400123));
	addrspace_release(&parent); /* the child's paths are its own */
	T_ASSERT(!strcmp(addrspace_find(&child, 0x7f0000000010)->path, "[vdso]"));
	T_EQ_U64(addrspace_load_text(&child, maps1), 0);
	T_ASSERT(!child.maps[0].fresh && !child.maps[3].fresh);
	T_EQ_U64(addrspace_load_text(&child, maps_more), 0);
	T_ASSERT(!addrspace_find(&child, 0x400123)->fresh);
	T_ASSERT(addrspace_find(&child, 0x500123)->fresh);
	addrspace_release(&child);
	/* An empty parent gives an empty child. */
	addrspace_fork(&child, &parent, false);
	T_EQ_U64(child.nr, 0);
	T_ASSERT(addrspace_find(&child, 0x400000) == NULL);
	addrspace_release(&child);
	return T_OK;
}

/* A global function of this binary, to find through the module. */
__attribute__((noinline)) int procmaps_probe(int x);
__attribute__((noinline)) int procmaps_probe(int x)
{
	return x * 3 + 1;
}

static int test_module_self(void)
{
	struct module_cache *mc = module_cache_new();
	uint64_t addr = (uint64_t)(uintptr_t)&procmaps_probe, vaddr, start, size, start2, size2;
	const uint8_t *id, *code;
	const char *name;
	struct addrspace as;
	struct xp_map *m;

	addrspace_init(&as, getpid(), mc);
	T_EQ_U64(addrspace_load(&as), 0);
	m = addrspace_find(&as, addr);
	T_ASSERT(m && (m->prot & XP_PROT_EXEC) && m->mod);
	T_ASSERT(module_build_id(m->mod, &id) >= 8 && id);
	T_EQ_U64(module_vaddr(m->mod, m, addr, &vaddr), 0);
	T_EQ_U64(module_symbol(m->mod, vaddr, &name, &start, &size), 0);
	T_EQ_STR(name, "procmaps_probe");
	T_EQ_U64(start, vaddr);
	T_EQ_U64(module_symbol_by_name(m->mod, "procmaps_probe", &start2, &size2), 0);
	T_EQ_U64(start2, start);
	T_EQ_U64(size2, size);
	T_ASSERT(module_code(m->mod, vaddr, &code) > 0);
	T_ASSERT(!memcmp(code, (const void *)(uintptr_t)addr, size)); /* the file is the code */
	T_EQ_U64(module_code_before(m->mod, vaddr, 15, &code), 15);
	T_ASSERT(!memcmp(code, (const void *)(uintptr_t)(addr - 15), 15));
	T_EQ_U64(module_vaddr(m->mod, m, m->end, &vaddr), (uint64_t)-ENOENT);
	addrspace_release(&as);
	module_cache_free(mc);
	return T_OK;
}

/* ELF vaddr and size of section @name of this test program, from its file. */
static int self_section(const char *want, uint64_t *addr, uint64_t *size)
{
	FILE *f = fopen("/proc/self/exe", "rb");
	Elf64_Ehdr eh;
	Elf64_Shdr sh, strsh;
	char name[32];
	int i, ret = -1;

	if (!f)
		return -1;
	if (fread(&eh, sizeof(eh), 1, f) != 1 ||
	    fseek(f, (long)(eh.e_shoff + (uint64_t)eh.e_shstrndx * eh.e_shentsize), SEEK_SET) ||
	    fread(&strsh, sizeof(strsh), 1, f) != 1)
		goto out;
	for (i = 0; i < eh.e_shnum && ret; i++) {
		if (fseek(f, (long)(eh.e_shoff + (uint64_t)i * eh.e_shentsize), SEEK_SET) ||
		    fread(&sh, sizeof(sh), 1, f) != 1 ||
		    fseek(f, (long)(strsh.sh_offset + sh.sh_name), SEEK_SET) ||
		    !fgets(name, sizeof(name), f))
			break;
		if (!strncmp(name, want, strlen(want) + 1)) {
			*addr = sh.sh_addr;
			*size = sh.sh_size;
			ret = 0;
		}
	}
out:
	fclose(f);
	return ret;
}

/* PLT stubs have no symbols; the unwinder still has to know them. */
static int test_module_plt(void)
{
	struct module_cache *mc = module_cache_new();
	uint64_t addr = (uint64_t)(uintptr_t)&procmaps_probe, vaddr, plt, size;
	struct addrspace as;
	struct xp_map *m;

	if (self_section(".plt", &plt, &size) || !size) {
		module_cache_free(mc);
		return T_SKIP; /* linked without a PLT (-z now -fno-plt) */
	}
	addrspace_init(&as, getpid(), mc);
	T_EQ_U64(addrspace_load(&as), 0);
	m = addrspace_find(&as, addr);
	T_ASSERT(m && m->mod);
	T_EQ_U64(module_vaddr(m->mod, m, addr, &vaddr), 0);
	T_ASSERT(!module_is_plt(m->mod, vaddr));
	T_ASSERT(module_is_plt(m->mod, plt));
	T_ASSERT(module_is_plt(m->mod, plt + size - 1));
	T_ASSERT(!module_is_plt(m->mod, plt - 1));
	addrspace_release(&as);
	module_cache_free(mc);
	return T_OK;
}

static int test_module_not_elf(void)
{
	struct module_cache *mc = module_cache_new();
	struct xp_map m = {.start = 0x1000, .end = 0x2000, .prot = XP_PROT_EXEC};
	char text[] = "/etc/hostname", missing[] = "/nonexistent/xprof-test", anon[] = "";

	m.path = text;
	T_ASSERT(module_cache_get(mc, &m, 0, NULL) == NULL);
	T_ASSERT(module_cache_get(mc, &m, 0, NULL) == NULL); /* negative entry, no crash */
	m.path = missing;
	T_ASSERT(module_cache_get(mc, &m, 0, NULL) == NULL);
	m.path = anon;
	T_ASSERT(module_cache_get(mc, &m, 0, NULL) == NULL);
	module_cache_free(mc);
	module_cache_free(NULL);
	return T_OK;
}

/* The vDSO is read from the process: symbols and CFI like a file. */
static int test_module_vdso(void)
{
	const struct xp_arch *arch = xp_arch_host();
	struct module_cache *mc = module_cache_new();
	uint64_t start, size, vaddr;
	struct cfi_row row;
	struct addrspace as;
	size_t i;
	int ret = T_SKIP;

	addrspace_init(&as, 0, mc);
	T_EQ_U64(addrspace_load_text(&as, "7ffc9d5f0000-7ffc9d5f2000 r-xp 00000000 00:00 0 [vdso]"),
		 0);
	T_ASSERT(as.maps[0].mod == NULL); /* no pid: nothing to read from */
	addrspace_release(&as);
	addrspace_init(&as, getpid(), mc);
	T_EQ_U64(addrspace_load(&as), 0);
	for (i = 0; i < as.nr; i++) {
		if (strcmp(as.maps[i].path, "[vdso]"))
			continue;
		T_ASSERT(as.maps[i].mod);
		T_EQ_U64(
		    module_symbol_by_name(as.maps[i].mod, "__vdso_clock_gettime", &start, &size),
		    0);
		T_EQ_U64(
		    module_vaddr(as.maps[i].mod, &as.maps[i], as.maps[i].start + start, &vaddr), 0);
		T_EQ_U64(vaddr, start);
		T_EQ_U64(
		    module_cfi_row(as.maps[i].mod, start, arch->dwarf.fp, arch->dwarf.sp, &row), 0);
		ret = T_OK;
	}
	addrspace_release(&as);
	module_cache_free(mc);
	return ret; /* skipped when the kernel maps no vDSO */
}

/* Map @path read-only at @at (NULL: anywhere).  Returns the address or NULL. */
static void *map_file(const char *path, void *at)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	void *p;

	if (fd < 0)
		return NULL;
	p = mmap(at, 4096, PROT_READ, MAP_PRIVATE | (at ? MAP_FIXED : 0), fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

/* Another file mapped where one was (dlclose + dlopen): the old mapping is stale. */
static int test_addrspace_stale(void)
{
	char a[] = "/tmp/xprof-test-stale-a-XXXXXX", b[] = "/tmp/xprof-test-stale-b-XXXXXX";
	struct addrspace as;
	uint8_t page[4096] = {0};
	void *at;
	int fa = mkstemp(a), fb = mkstemp(b);

	T_ASSERT(fa >= 0 && fb >= 0);
	T_ASSERT(write(fa, page, sizeof(page)) == sizeof(page));
	T_ASSERT(write(fb, page, sizeof(page)) == sizeof(page));
	close(fa);
	close(fb);
	at = map_file(a, NULL);
	T_ASSERT(at);
	addrspace_init(&as, getpid(), NULL);
	T_EQ_U64(addrspace_load(&as), 0);
	/* Our own code and this file: current; anonymous memory: cannot tell, so no. */
	T_ASSERT(!addrspace_is_stale(&as, (uint64_t)(uintptr_t)at));
	T_ASSERT(!addrspace_is_stale(&as, (uint64_t)(uintptr_t)test_addrspace_stale));
	T_ASSERT(!addrspace_is_stale(&as, (uint64_t)(uintptr_t)page));
	T_ASSERT(!addrspace_is_stale(&as, 0));
	/* B where A was. */
	T_ASSERT(map_file(b, at) == at);
	T_ASSERT(addrspace_is_stale(&as, (uint64_t)(uintptr_t)at));
	T_EQ_U64(addrspace_load(&as), 0);
	T_ASSERT(!addrspace_is_stale(&as, (uint64_t)(uintptr_t)at));
	/* Unmapped: stale too. */
	munmap(at, 4096);
	T_ASSERT(addrspace_is_stale(&as, (uint64_t)(uintptr_t)at));
	addrspace_release(&as);
	unlink(a);
	unlink(b);
	return T_OK;
}

T_MAIN(T_CASE(test_parse_good), T_CASE(test_parse_bad), T_CASE(test_addrspace_text),
       T_CASE(test_addrspace_fork), T_CASE(test_module_self), T_CASE(test_module_plt),
       T_CASE(test_module_not_elf), T_CASE(test_module_vdso), T_CASE(test_addrspace_stale))
