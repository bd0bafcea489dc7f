/* SPDX-License-Identifier: MIT */
/*
 * A recording's output files (cmd/output.c), in a fresh directory: an
 * earlier file is moved aside to <path>.old while the output is open, put
 * back untouched when the recording is discarded, kept when it is closed
 * (an empty one is not); a symbolic link is written through, and what is
 * not a regular file (/dev/null) is written as it is; with --switch-output
 * each ended part is named <path>.<time> and the last one too at the
 * close, each with its meta records.
 */
#include "output.h"
#include "datafile.h"
#include "err.h"
#include "sampler.h"

#include "t.h"

#include <dirent.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];
static char *fake_argv[] = {(char *)"xprof", (char *)"record", (char *)"--", (char *)"app", NULL};

/* A fresh directory to work in, made the current one. */
static int enter_dir(void)
{
	strcpy(dir, "/tmp/xprof-test-output-XXXXXX");
	return mkdtemp(dir) && !chdir(dir) ? 0 : -1;
}

/* Remove what a case left and the directory itself. */
static void leave_dir(void)
{
	DIR *d;
	struct dirent *e;

	if (chdir(dir))
		return;
	d = opendir(".");
	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.' || (e->d_name[1] && strcmp(e->d_name, "..")))
			unlink(e->d_name);
	if (d)
		closedir(d);
	if (!chdir("/"))
		rmdir(dir);
}

/* Entries of the current directory whose name starts with @prefix. */
static int count(const char *prefix)
{
	DIR *d = opendir(".");
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += !strncmp(e->d_name, prefix, strlen(prefix));
	if (d)
		closedir(d);
	return n;
}

static int is_data(const char *path);

/* Entries starting with @prefix that are closed data files (is_data). */
static int data_files(const char *prefix)
{
	DIR *d = opendir(".");
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += !strncmp(e->d_name, prefix, strlen(prefix)) && is_data(e->d_name);
	if (d)
		closedir(d);
	return n;
}

static size_t slurp(const char *path, char *buf, size_t max)
{
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f)
		return 0;
	n = fread(buf, 1, max - 1, f);
	fclose(f);
	buf[n] = 0;
	return n;
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* @path starts as a data file does (what an open writer has written: its header). */
static int is_header(const char *path)
{
	char buf[64];

	return slurp(path, buf, sizeof(buf)) >= DF_MAGIC_LEN &&
	       !memcmp(buf, DF_MAGIC, DF_MAGIC_LEN);
}

/* @path is a closed data file: the magic, and the meta records of fake_argv. */
static int is_data(const char *path)
{
	char buf[4096];
	size_t n = slurp(path, buf, sizeof(buf));

	return n > DF_HEADER_LEN && !memcmp(buf, DF_MAGIC, DF_MAGIC_LEN) &&
	       memmem(buf, n, "xprof record -- app", 19) && memmem(buf, n, "hostname", 8);
}

static int test_old_kept_put_back_or_dropped(void)
{
	struct output o;
	char buf[64], name[PATH_MAX];
	uint64_t bytes;

	T_ASSERT(!enter_dir());
	put("x.data", "previous");
	T_EQ_U64(output_open(&o, "x.data", 4, fake_argv), 0);
	T_EQ_U64(count("x.data"), 2); /* the new file and the previous one, moved aside */
	T_ASSERT(is_header("x.data"));
	output_discard(&o);
	T_EQ_U64(slurp("x.data", buf, sizeof(buf)), 8);
	T_EQ_STR(buf, "previous");
	T_EQ_U64(count("x.data"), 1);

	T_EQ_U64(output_open(&o, "x.data", 4, fake_argv), 0);
	T_EQ_U64(output_close(&o, name, sizeof(name), &bytes), 0);
	T_EQ_STR(name, "x.data");
	T_ASSERT(is_data("x.data"));
	T_EQ_U64(slurp("x.data.old", buf, sizeof(buf)), 8);
	T_EQ_STR(buf, "previous");
	T_EQ_U64(count("x.data"), 2);

	/* An empty earlier file is not kept. */
	put("y.data", "");
	T_EQ_U64(output_open(&o, "y.data", 4, fake_argv), 0);
	T_EQ_U64(output_close(&o, name, sizeof(name), &bytes), 0);
	T_ASSERT(is_data("y.data"));
	T_EQ_U64(count("y.data"), 1);
	leave_dir();
	return T_OK;
}

static int test_link_and_device(void)
{
	struct output o;
	struct stat st;
	char buf[64], name[PATH_MAX];
	uint64_t bytes;

	T_ASSERT(!enter_dir());
	put("real.data", "previous");
	T_ASSERT(!symlink("real.data", "link.data"));
	T_EQ_U64(output_open(&o, "link.data", 4, fake_argv), 0);
	T_EQ_U64(output_close(&o, name, sizeof(name), &bytes), 0);
	T_ASSERT(!lstat("link.data", &st) && S_ISLNK(st.st_mode));
	T_ASSERT(is_data("real.data"));
	T_EQ_U64(slurp("real.data.old", buf, sizeof(buf)), 8);
	T_EQ_U64(count("link.data"), 1); /* no link.data.old */
	leave_dir();

	T_EQ_U64(output_open(&o, "/dev/null", 4, fake_argv), 0);
	T_EQ_U64(output_close(&o, name, sizeof(name), &bytes), 0);
	T_ASSERT(!stat("/dev/null", &st) && S_ISCHR(st.st_mode));
	T_ASSERT(stat("/dev/null.old", &st));
	return T_OK;
}

static int test_no_directory(void)
{
	struct output o;

	xp_quiet = 1;
	T_ASSERT(!enter_dir());
	T_ASSERT(!mkdir("d.data", 0700));
	fprintf(stderr, "(an error about 'd.data' is expected)\n");
	T_EQ_U64(output_open(&o, "d.data", 4, fake_argv), (uint64_t)-1);
	T_ASSERT(!rmdir("d.data"));
	T_EQ_U64(count(""), 2); /* . and .. */
	leave_dir();
	return T_OK;
}

static int test_parts(void)
{
	struct sampler_opts so = {.flush_ns = SAMPLER_FLUSH_NS, .switch_ns = 500000000};
	struct df_writer *w;
	struct output o;
	char name[PATH_MAX];
	uint64_t bytes;

	xp_quiet = 1;
	T_ASSERT(!enter_dir());
	T_EQ_U64(output_open(&o, "p.data", 4, fake_argv), 0);
	output_parts(&o, false, &so);
	T_ASSERT(so.switch_fn && so.switch_ctx == &o);
	w = so.switch_fn(so.switch_ctx, o.w);
	T_ASSERT(w && w == o.w);
	T_EQ_U64(count("p.data."), 1); /* the ended part, p.data.<time> */
	T_ASSERT(is_header("p.data"));
	T_EQ_U64(output_close(&o, name, sizeof(name), &bytes), 0);
	T_ASSERT(!strncmp(name, "p.data.2", 8));
	T_ASSERT(is_data(name));
	T_EQ_U64(count("p.data"), 2); /* two parts, nothing left at p.data */
	T_EQ_U64(count("p.data.2"), 2);
	T_EQ_U64(data_files("p.data.2"), 2); /* both complete, with their meta records */
	T_ASSERT(access("p.data", F_OK));
	leave_dir();
	return T_OK;
}

T_MAIN(T_CASE(test_old_kept_put_back_or_dropped), T_CASE(test_link_and_device),
       T_CASE(test_no_directory), T_CASE(test_parts))
