/* SPDX-License-Identifier: MIT */
/*
 * Writing perf's jitdump format (tools/perf/Documentation/jitdump-
 * specification.txt) for the JIT test targets: the file header, a
 * record's prefix and a JIT_CODE_LOAD record, in host byte order.
 * Header only: each target is one file.
 */
#ifndef XPROF_TESTS_TARGETS_JITDUMP_H
#define XPROF_TESTS_TARGETS_JITDUMP_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define JD_CODE_LOAD	   0
#define JD_CODE_DEBUG_INFO 2

static inline void jd_put32(FILE *f, uint32_t v)
{
	fwrite(&v, 4, 1, f);
}

static inline void jd_put64(FILE *f, uint64_t v)
{
	fwrite(&v, 8, 1, f);
}

/* The header: magic, version, size, EM_X86_64, pad, pid, @timestamp (ns), flags. */
static inline void jd_header(FILE *f, uint64_t timestamp)
{
	jd_put32(f, 0x4A695444);
	jd_put32(f, 1);
	jd_put32(f, 40);
	jd_put32(f, 62);
	jd_put32(f, 0);
	jd_put32(f, (uint32_t)getpid());
	jd_put64(f, timestamp);
	jd_put64(f, 0);
}

/* A record's prefix: its type @id, @total size (prefix included), @timestamp. */
static inline void jd_prefix(FILE *f, uint32_t id, uint32_t total, uint64_t timestamp)
{
	jd_put32(f, id);
	jd_put32(f, total);
	jd_put64(f, timestamp);
}

/* JIT_CODE_LOAD of @len bytes of @code at @addr named @name: prefix, pid, tid, vma, addr, size,
 * index, name, code. */
static inline void jd_code_load(FILE *f, uint64_t timestamp, uint64_t addr, const char *name,
				const void *code, size_t len, uint64_t index)
{
	jd_prefix(f, JD_CODE_LOAD, (uint32_t)(56 + strlen(name) + 1 + len), timestamp);
	jd_put32(f, (uint32_t)getpid());
	jd_put32(f, (uint32_t)getpid());
	jd_put64(f, addr);
	jd_put64(f, addr);
	jd_put64(f, len);
	jd_put64(f, index);
	fwrite(name, strlen(name) + 1, 1, f);
	fwrite(code, len, 1, f);
}

#endif
