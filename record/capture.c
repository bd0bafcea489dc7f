/* SPDX-License-Identifier: MIT */
/*
 * The capture (capture.h): which modules hold sampled addresses, and
 * their copies in the build-id cache.  Reading ELF is module.c's; opening
 * a target's files is targetfs.c's.
 */
#include "capture.h"
#include "addrspace.h"
#include "clock.h"
#include "err.h"
#include "fileid.h"
#include "module.h"
#include "targetfs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void capture_init(struct capture *c)
{
	memset(c, 0, sizeof(*c));
}

void capture_release(struct capture *c)
{
	free(c->items);
	capture_init(c);
}

void capture_add(struct capture *c, struct module *mod, const struct targetfs_root *root)
{
	struct xp_file_id id;

	if (module_file_id(mod, &id)) {
		c->no_id++;
		return;
	}
	xp_grow((void **)&c->items, &c->alloc, c->nr + 1, sizeof(*c->items));
	c->items[c->nr++] = (struct capture_item){mod, root};
}

int capture_cache_dir(char *buf, size_t len)
{
	const char *dir = getenv("XPROF_CACHE_DIR"), *base = getenv("XDG_CACHE_HOME"), *suffix;
	int n;

	if (dir && *dir) {
		if (!strcmp(dir, "off"))
			return -ENOENT;
		n = snprintf(buf, len, "%s", dir);
	} else {
		suffix = "/xprof";
		if (!base || base[0] != '/') {
			base = getenv("HOME");
			suffix = "/.cache/xprof";
		}
		if (!base || base[0] != '/')
			return -ENOENT;
		n = snprintf(buf, len, "%s%s", base, suffix);
	}
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* mkdir -p @path.  0 or -errno. */
static int make_dirs(char *path)
{
	char *p, c;

	for (p = path + 1;; p++) {
		if (*p && *p != '/')
			continue;
		c = *p;
		*p = 0;
		if (mkdir(path, 0755) && errno != EEXIST) {
			int e = errno;

			*p = c;
			return -e;
		}
		*p = c;
		if (!c)
			return 0;
	}
}

/* @len bytes of @buf (or, @buf NULL, of @fd) into @dst, through a temporary file.  0 or -errno. */
static int save_file(const char *dst, const uint8_t *buf, int fd, uint64_t len)
{
	char tmp[PATH_MAX + 32], chunk[65536];
	uint64_t done = 0;
	ssize_t n;
	int out, e = 0;

	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", dst, (int)getpid());
	out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0)
		return -errno;
	while (done < len && !e) {
		const void *p = buf ? (const void *)(buf + done) : chunk;
		size_t want = len - done > (1u << 20) ? (1u << 20) : (size_t)(len - done);

		if (!buf) {
			want = want > sizeof(chunk) ? sizeof(chunk) : want;
			n = pread(fd, chunk, want, (off_t)done);
			if (n <= 0) {
				e = n < 0 ? errno : EIO;
				break;
			}
			want = (size_t)n;
		}
		n = write(out, p, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			e = n < 0 ? errno : EIO;
		else
			done += (uint64_t)n;
	}
	if (close(out) && !e)
		e = errno;
	/* rename(2) is atomic: a concurrent recorder or report sees all of it or nothing. */
	if (!e && rename(tmp, dst))
		e = errno;
	if (e)
		unlink(tmp);
	return -e;
}

/*
 * The separate debuginfo of build-id @hex as the process sees it
 * (/usr/lib/debug/.build-id/xx/rest.debug under @root), into @dst when
 * the cache has none.  Bytes copied.
 */
static uint64_t save_debuginfo(const struct targetfs_root *root, const char *hex, const char *dst,
			       uint64_t budget)
{
	char src[PATH_MAX];
	struct stat st;
	uint64_t bytes = 0;
	int fd;

	if (!stat(dst, &st))
		return 0;
	snprintf(src, sizeof(src), "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
	fd = targetfs_open(root, src, O_RDONLY);
	if (fd < 0)
		return 0;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && (uint64_t)st.st_size <= budget &&
	    !save_file(dst, NULL, fd, (uint64_t)st.st_size))
		bytes = (uint64_t)st.st_size;
	close(fd);
	return bytes;
}

int capture_save(struct capture *c, struct capture_stats *st)
{
	char dir[PATH_MAX], path[PATH_MAX + XP_FILE_ID_TEXT + 32], hex[XP_FILE_ID_TEXT];
	uint64_t start = xp_now_ns();
	const uint8_t *image;
	struct xp_file_id id;
	struct stat sb;
	size_t i, len;
	int e = 0;

	memset(st, 0, sizeof(*st));
	st->no_id = c->no_id;
	if (capture_cache_dir(dir, sizeof(dir))) {
		st->disabled = 1;
		return 0;
	}
	for (i = 0; i < c->nr && !e; i++) {
		module_file_id(c->items[i].mod, &id);
		xp_file_id_name(&id, hex, sizeof(hex));
		st->modules++;
		snprintf(path, sizeof(path), "%s/buildid/%s/elf", dir, hex);
		if (stat(path, &sb)) {
			len = module_image(c->items[i].mod, &image);
			if (st->bytes + len > CAPTURE_MAX_BYTES) {
				st->over++;
				continue;
			}
			snprintf(path, sizeof(path), "%s/buildid/%s", dir, hex);
			e = make_dirs(path);
			if (!e) {
				snprintf(path, sizeof(path), "%s/buildid/%s/elf", dir, hex);
				e = save_file(path, image, -1, len);
			}
			if (e) {
				xp_warn("cannot keep a copy of '%s' in '%s': %s",
					module_path(c->items[i].mod), dir, strerror(-e));
				break;
			}
			st->saved++;
			st->bytes += len;
		}
		/* Separate debuginfo is found by GNU build-id only. */
		if (id.kind != XP_FILE_ID_GNU)
			continue;
		snprintf(path, sizeof(path), "%s/buildid/%s/debug", dir, hex);
		st->bytes +=
		    save_debuginfo(c->items[i].root, hex, path, CAPTURE_MAX_BYTES - st->bytes);
	}
	st->ns = xp_now_ns() - start;
	return e ? -1 : 0;
}
