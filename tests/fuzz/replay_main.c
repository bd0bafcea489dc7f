/* SPDX-License-Identifier: MIT */
/*
 * A driver that runs a libFuzzer target without libFuzzer: every file
 * named on the command line, and every regular file in a directory named
 * there, is given once to LLVMFuzzerTestOneInput (after
 * LLVMFuzzerInitialize, if the target has one), as libFuzzer's own
 * StandaloneFuzzTargetMain.c does.  Linked with each tests/fuzz/fuzz_*.c in
 * every build (gcc, sanitizers), so ctest replays the seed corpora and the
 * crash regressions of tests/data/regress/<target>/ on every run, not only
 * where clang and libFuzzer are available.
 *
 * Prints each input's name before running it (so the log names the input
 * that crashed), then "replayed N inputs"; exits 1 if a path cannot be
 * read.  A crashing input crashes this program: that is the test failing.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned long replayed;

/* The fuzz target may have pointed stdout/stderr at /dev/null: write to the fds. */
static int run_file(const char *path)
{
	struct stat st;
	uint8_t *buf;
	size_t n = 0;
	FILE *f;

	f = fopen(path, "rb");
	if (!f || fstat(fileno(f), &st)) {
		dprintf(2, "replay: cannot read '%s': %s\n", path, strerror(errno));
		if (f)
			fclose(f);
		return -1;
	}
	/* One byte more than the size, so an empty file still gets a buffer. */
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		fclose(f);
		dprintf(2, "replay: out of memory for '%s'\n", path);
		return -1;
	}
	n = fread(buf, 1, (size_t)st.st_size, f);
	fclose(f);
	dprintf(1, "replay: %s (%zu bytes)\n", path, n);
	LLVMFuzzerTestOneInput(buf, n);
	free(buf);
	replayed++;
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every regular file of @dir except README*, in name order (a stable log). */
static int run_dir(const char *dir)
{
	char **names = NULL, path[4096];
	size_t nr = 0, i;
	struct dirent *de;
	struct stat st;
	int ret = 0;
	DIR *d;

	d = opendir(dir);
	if (!d) {
		dprintf(2, "replay: cannot open '%s': %s\n", dir, strerror(errno));
		return -1;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || !strncmp(de->d_name, "README", 6))
			continue;
		names = realloc(names, (nr + 1) * sizeof(*names));
		if (!names)
			abort();
		names[nr++] = strdup(de->d_name);
	}
	closedir(d);
	if (nr > 1)
		qsort(names, nr, sizeof(*names), cmp_names);
	for (i = 0; i < nr; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (!stat(path, &st) && S_ISREG(st.st_mode) && run_file(path))
			ret = -1;
		free(names[i]);
	}
	free(names);
	return ret;
}

int main(int argc, char **argv)
{
	struct stat st;
	int i, ret = 0;

	if (argc < 2) {
		dprintf(2, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	for (i = 1; i < argc; i++) {
		if (stat(argv[i], &st)) {
			dprintf(2, "replay: cannot read '%s': %s\n", argv[i], strerror(errno));
			ret = 1;
		} else if (S_ISDIR(st.st_mode) ? run_dir(argv[i]) : run_file(argv[i])) {
			ret = 1;
		}
	}
	dprintf(1, "replay: replayed %lu inputs\n", replayed);
	return ret;
}
