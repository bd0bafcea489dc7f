/* SPDX-License-Identifier: MIT */
/*
 * xprof's entry point: global options (-v, -q, --version, -h), then dispatch
 * to a subcommand through a sorted table, as git does.  After the command
 * returns, stdout is flushed and checked so a failed write is an error.
 * 'xprof help <cmd>' shows the manual page on a terminal, else --help.
 */
#include "err.h"
#include "version.h"
#include "cmd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct cmd_struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct cmd_struct commands[] = {
    {"attach", cmd_attach, "profile running processes for a while, then detach"},
    {"dump", cmd_dump, "print the call stacks of every thread of a running process"},
    {"help", cmd_help, "show help for xprof or one of its commands"},
    {"mark", cmd_mark, "start a named phase of a recording that takes --control commands"},
    {"record", cmd_record, "run a command and profile it until it exits"},
    {"report", cmd_report, "read a data file and print the profile"},
    {"top", cmd_top, "show the hottest functions of running processes, live"},
};

#define NR_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void print_main_help(FILE *f)
{
	size_t i;

	fputs("usage: xprof [-v | -q] [--version] <command> [<args>]\n\n"
	      "A sampling CPU profiler that works from outside the program, with ptrace.\n\n"
	      "Commands:\n",
	      f);
	for (i = 0; i < NR_COMMANDS; i++)
		fprintf(f, "    %-10s %s\n", commands[i].name, commands[i].summary);
	fputs("\nGlobal options:\n"
	      "    -v, --verbose    more diagnostics (repeatable)\n"
	      "    -q, --quiet      no progress or summary output\n"
	      "    --version        print the version and enabled features\n"
	      "    -h, --help       show this help\n\n"
	      "EXAMPLES\n"
	      "    xprof record -- ./app arg        # profile ./app until it exits\n"
	      "    xprof report                     # functions by self time\n"
	      "    xprof report --flamegraph -o app.html\n"
	      "    xprof attach -p 4242 -d 30s      # 30 s of a running process\n"
	      "    xprof dump -p 4242               # its stacks, right now\n"
	      "    xprof top -p 4242                # its hottest functions, live\n\n"
	      "See 'xprof help <command>' for one command.\n",
	      f);
}

/* What this build has, one feature a line, for bug reports. */
static void print_version(void)
{
	const char *demangler = "none (C++ and Rust names stay mangled)";

	if (XPROF_HAVE_LIBIBERTY)
		demangler = "libiberty (C++, Rust legacy and v0)";
	else if (XPROF_HAVE_CXA_DEMANGLE)
		demangler = "libstdc++ __cxa_demangle (C++ only: Rust names stay mangled)";
	printf("xprof %s\n", XPROF_VERSION);
	printf("demangler:  %s\n", demangler);
	printf("elfutils:   libdw %s (symbols, inline frames, CFI%s)\n", XPROF_LIBDW_VERSION,
	       XPROF_STATIC_BUILD ? "; static: no debuginfod"
				  : ", debuginfod with DEBUGINFOD_URLS");
	printf("capstone:   %s (prologue analysis where there is no CFI)\n",
	       XPROF_HAVE_CAPSTONE ? XPROF_CAPSTONE_VERSION : "none");
	printf("libunwind:  %s\n", XPROF_LIBUNWIND_VERSION);
	printf("zlib:       %s (pprof output)\n", XPROF_ZLIB_VERSION);
	printf("build:      %s, %s%s\n", XPROF_BUILD_TYPE,
	       XPROF_STATIC_BUILD ? "static" : "dynamic",
	       XPROF_SANITIZE_BUILD ? ", ASan + UBSan" : "");
}

#if XPROF_STATIC_BUILD
/*
 * A static xprof is linked with -Wl,--wrap=dlopen (CMakeLists.txt), and
 * this is what its dlopen does: nothing.  The one caller is libdw's
 * debuginfod client, which would load libdebuginfod and with it a second
 * C library, of whatever version the machine has, into this one.  So a
 * static xprof asks no debuginfod server; the recorder's copies and the
 * debug directories still serve.
 */
void *__wrap_dlopen(const char *file, int mode);
void *__wrap_dlopen(const char *file, int mode)
{
	(void)file;
	(void)mode;
	return NULL;
}
#endif

static const struct cmd_struct *find_command(const char *name)
{
	size_t i;

	for (i = 0; i < NR_COMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

/*
 * git help's behaviour: on a terminal, show the manual page xprof-@cmd if
 * man(1) finds it ('man -w' succeeds), by replacing this process with man.
 * Returns only when it did not (no terminal, no man, no page): the caller
 * prints the --help text instead.
 */
static void show_man_page(const char *cmd)
{
	char page[64];
	int status, fd;
	pid_t pid;

	if (!isatty(STDOUT_FILENO))
		return;
	snprintf(page, sizeof(page), "xprof-%s", cmd);
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return;
	if (pid == 0) {
		fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		execlp("man", "man", "-w", page, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return;
	execlp("man", "man", page, (char *)NULL);
	xp_debug(1, "cannot run man: %s", strerror(errno));
}

int cmd_help(int argc, char **argv)
{
	char help_opt[] = "--help";
	char *hargv[] = {NULL, help_opt, NULL};
	const struct cmd_struct *c;

	if (argc < 2) {
		print_main_help(stdout);
		return XP_EXIT_OK;
	}
	c = find_command(argv[1]);
	if (!c || c->fn == cmd_help) {
		xp_error("'%s' is not an xprof command", argv[1]);
		xp_hint("see 'xprof --help'");
		return XP_EXIT_USAGE;
	}
	show_man_page(c->name);
	hargv[0] = argv[1];
	return c->fn(2, hargv);
}

int main(int argc, char **argv)
{
	const struct cmd_struct *c;
	int i, ret;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-v") || !strcmp(a, "--verbose"))
			xp_verbosity++;
		else if (a[1] == 'v' && strspn(a + 1, "v") == strlen(a + 1))
			xp_verbosity += (int)strlen(a + 1);
		else if (!strcmp(a, "-q") || !strcmp(a, "--quiet"))
			xp_quiet = 1;
		else if (!strcmp(a, "--version")) {
			print_version();
			return XP_EXIT_OK;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			print_main_help(stdout);
			return XP_EXIT_OK;
		} else {
			xp_error("unknown option '%s'", a);
			fputs("usage: xprof [-v | -q] [--version] <command> [<args>]\n", stderr);
			return XP_EXIT_USAGE;
		}
	}
	if (i >= argc) {
		xp_error("no command given");
		fputs("usage: xprof [-v | -q] [--version] <command> [<args>]\n"
		      "see 'xprof --help'\n",
		      stderr);
		return XP_EXIT_USAGE;
	}
	c = find_command(argv[i]);
	if (!c) {
		xp_error("'%s' is not an xprof command", argv[i]);
		xp_hint("see 'xprof --help'");
		return XP_EXIT_USAGE;
	}
	ret = c->fn(argc - i, argv + i);
	if (fflush(stdout) || ferror(stdout)) {
		xp_error("cannot write standard output: %s", strerror(errno));
		return ret ? ret : XP_EXIT_FAIL;
	}
	return ret;
}
