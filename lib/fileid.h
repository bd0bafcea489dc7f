/* SPDX-License-Identifier: MIT */
/*
 * How a file is known across time and machines: its identity, which the
 * recorder writes beside each mapping and keys its copy of the file by
 * (record/capture.h), and which the report checks a file at the recorded
 * path against (symbolize/).  In order of preference:
 *
 *   - the GNU build-id (an NT_GNU_BUILD_ID note), which most linkers write;
 *   - the Go build ID, the note the Go linker writes instead (owner "Go",
 *     type 4, .note.go.buildid: the text 'go tool buildid' prints);
 *   - else the SHA-256 of the whole file (a static or custom-linked file
 *     with no note at all).
 *
 * Plain types and pure functions (no I/O), for every folder: target/
 * and symbolize/ read the notes with libelf, this file names and hashes.
 */
#ifndef XPROF_LIB_FILEID_H
#define XPROF_LIB_FILEID_H

#include <stddef.h>
#include <stdint.h>

enum xp_file_id_kind {
	XP_FILE_ID_GNU = 0,    /* NT_GNU_BUILD_ID */
	XP_FILE_ID_GO = 1,     /* the Go build ID note */
	XP_FILE_ID_SHA256 = 2, /* SHA-256 of the file's bytes */
};

#define XP_FILE_ID_MAX	  128 /* bytes of any identity (a Go build ID is 83) */
#define XP_NT_GO_BUILD_ID 4   /* the note type of the Go build ID, owner "Go" */
#define XP_SHA256_LEN	  32

struct xp_file_id {
	uint8_t kind; /* enum xp_file_id_kind */
	uint8_t len;  /* 0: none known */
	uint8_t bytes[XP_FILE_ID_MAX];
};

/*
 * Room for xp_file_id_name's and xp_file_id_describe's text: a prefix and
 * up to two characters per byte.
 */
#define XP_FILE_ID_TEXT (2 * XP_FILE_ID_MAX + 24)

/*
 * The name of @id as a directory of the recorder's cache: the hex of a
 * GNU build-id as it always was, "go-<hex>" or "sha256-<hex>" for the
 * others (so that no two kinds share a name).  "" for an identity of no
 * length or an unknown kind.
 */
void xp_file_id_name(const struct xp_file_id *id, char *buf, size_t len);

/*
 * @id for people: "GNU build-id <hex>", "Go build ID <text>" (bytes that
 * are not printable ASCII as '?'), "SHA-256 <hex>".
 */
void xp_file_id_describe(const struct xp_file_id *id, char *buf, size_t len);

/* Whether @a and @b are the same identity (same kind and bytes, both known). */
int xp_file_id_equal(const struct xp_file_id *a, const struct xp_file_id *b);

/* The SHA-256 (FIPS 180-4) of @len bytes at @data into @out. */
void xp_sha256(const void *data, size_t len, uint8_t out[XP_SHA256_LEN]);

#endif
