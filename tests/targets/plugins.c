/* SPDX-License-Identifier: MIT */
/*
 * Target for mapping generations: dlopens plugin A (plugin_a.so, next to
 * this program), spins in plugin_a_entry for about argv[1] seconds of CPU
 * time (default 1.0), dlcloses it, then does the same with plugin B.  B
 * usually lands at the very address A had, so an address means A's code
 * first and B's after.  Prints where each entry point was, and whether
 * they were at the same address, on stdout.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef void (*entry_fn)(double secs);

static void *run_plugin(const char *dir, const char *lib, const char *entry, double secs)
{
	char path[PATH_MAX + 32];
	entry_fn fn;
	void *h;

	snprintf(path, sizeof(path), "%s/%s", dir, lib);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "plugins: %s\n", dlerror());
		exit(1);
	}
	fn = (entry_fn)dlsym(h, entry);
	if (!fn) {
		fprintf(stderr, "plugins: %s\n", dlerror());
		exit(1);
	}
	printf("%s at %p\n", entry, (void *)fn);
	fflush(stdout);
	fn(secs);
	dlclose(h);
	return (void *)fn;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0;
	char dir[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	void *a, *b;

	if (n <= 0)
		return 1;
	dir[n] = 0;
	slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	a = run_plugin(dir, "plugin_a.so", "plugin_a_entry", secs);
	b = run_plugin(dir, "plugin_b.so", "plugin_b_entry", secs);
	printf("same address: %s\n", a == b ? "yes" : "no");
	return 0;
}
