/* SPDX-License-Identifier: MIT */
/*
 * Reading the [vdso] image of a traced process (see vdso.h): one
 * process_vm_readv of the whole mapping, which the kernel allows on the
 * vdso's special mapping as gdb's reads through /proc/PID/mem show.  The
 * image is checked to be ELF; nothing else is parsed here.
 */
#include "vdso.h"
#include "datafile.h"
#include "err.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

int vdso_write(struct df_writer *w, pid_t pid, uint64_t start, uint64_t end)
{
	struct iovec local, remote;
	uint8_t *image;
	ssize_t n;
	int ret;

	if (end <= start || end - start > DF_VDSO_MAX)
		return 0;
	image = xp_malloc(end - start);
	local.iov_base = image;
	local.iov_len = end - start;
	remote.iov_base = (void *)(uintptr_t)start;
	remote.iov_len = end - start;
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n != (ssize_t)(end - start) || memcmp(image, ELFMAG, SELFMAG)) {
		xp_debug(1, "cannot copy the [vdso] of pid %d: %s", (int)pid,
			 n < 0 ? strerror(errno) : "not an ELF image");
		free(image);
		return 0;
	}
	ret = df_write_vdso(w, image, end - start);
	free(image);
	return ret;
}
