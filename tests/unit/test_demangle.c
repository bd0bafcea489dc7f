/* SPDX-License-Identifier: MIT */
/*
 * The demangler wrapper on canned names: C++ (as g++ mangles them), Rust
 * legacy (the ::h<hash> suffix must go, as perf and rustfilt drop it) and
 * Rust v0 (with libiberty only), ELF symbol versions, names that only look
 * mangled, and --no-demangle.  The expected texts are what c++filt and
 * rustfilt print for the same input.  A build without a demangler for a
 * scheme (-DXPROF_DEMANGLER=none, or cxa for Rust) keeps such names as they
 * are and warns once.
 */
#include "symbolize/demangle.h"
#include "version.h"

#include "t.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int check(const char *raw, bool demangle, const char *want)
{
	char *got = demangle_name(raw, demangle);
	int ret = strcmp(got, want) ? T_FAIL : T_OK;

	if (ret)
		fprintf(stderr, "demangle_name(\"%s\", %d): got \"%s\", expected \"%s\"\n", raw,
			demangle, got, want);
	free(got);
	return ret;
}

static int test_versions(void)
{
	T_EQ_U64(demangle_strip_version("__libc_start_main@@GLIBC_2.34"), 17);
	T_EQ_U64(demangle_strip_version("memcpy@GLIBC_2.2.5"), 6);
	T_EQ_U64(demangle_strip_version("plain"), 5);
	T_EQ_U64(demangle_strip_version("puts@plt"), 8);
	T_EQ_U64(demangle_strip_version("@weird"), 6);
	T_EQ_U64(demangle_strip_version("odd@"), 4);
	T_EQ_U64(demangle_strip_version("odd@@"), 5);
	T_EQ_U64(demangle_strip_version(""), 0);
	T_EQ_U64(check("__libc_start_main@@GLIBC_2.34", true, "__libc_start_main"), T_OK);
	T_EQ_U64(check("__libc_start_main@@GLIBC_2.34", false, "__libc_start_main"), T_OK);
	/* Versioned C++ symbols: the version goes before demangling. */
	if (!demangle_has_scheme("_Z3addii"))
		return T_OK;
	T_EQ_U64(check("_ZNSt6chrono3_V212system_clock3nowEv@@GLIBCXX_3.4.19", true,
		       "std::chrono::_V2::system_clock::now()"),
		 T_OK);
	return T_OK;
}

static int test_cxx(void)
{
	static const struct {
		const char *raw, *want;
	} cases[] = {
	    {"_ZN3app6engine4stepEv", "app::engine::step()"},
	    {"_Z3addii", "add(int, int)"},
	    {"_ZNSt6vectorIiSaIiEE9push_backERKi",
	     "std::vector<int, std::allocator<int> >::push_back(int const&)"},
	    {"_ZNK3app5Scene6renderEv", "app::Scene::render() const"},
	    {"_ZN3app6engine4stepEv.cold", "app::engine::step() [clone .cold]"},
	    {"_ZZ4mainE1x", "main::x"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (!XPROF_HAVE_LIBIBERTY && !XPROF_HAVE_CXA_DEMANGLE)
			return T_SKIP;
		T_EQ_U64(check(cases[i].raw, true, cases[i].want), T_OK);
		/* --no-demangle: exactly what the symbol table says. */
		T_EQ_U64(check(cases[i].raw, false, cases[i].raw), T_OK);
	}
	return T_OK;
}

static int test_rust(void)
{
	/* Legacy: Itanium-shaped, with a 17h<16 hex digits> hash element at the end. */
	static const struct {
		const char *raw, *want;
	} legacy[] =
	    {
		{"_ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write"},
		{"_ZN3std2rt10lang_start28_$u7b$$u7b$closure$u7d$$u7d$17h6a7e0dd4b5e5c3e4E",
		 "std::rt::lang_start::{{closure}}"},
		{"_ZN53_$LT$mycrate..Point$u20$as$u20$core..fmt..Display$GT$3fmt17hd31f5b5b0c2a"
		 "3f4bE",
		 "<mycrate::Point as core::fmt::Display>::fmt"},
	    },
	  v0[] = {
	      {"_RNvCs15kBYyAo9fc_7mycrate7example", "mycrate::example"},
	      {"_RNvMs_NtCs4fqI2P2rA04_11utf8_decode6decodeNtB4_7Decoder3new",
	       "<utf8_decode::decode::Decoder>::new"},
	      {"_RNvNtCs1234_7mycrate3foo3bar", "mycrate::foo::bar"},
	  };
	size_t i;

	if (!XPROF_HAVE_LIBIBERTY) {
		/* __cxa_demangle knows no Rust: legacy names come out as C++ with the hash. */
		printf("# no libiberty: Rust names are not demangled\n");
		return T_SKIP;
	}
	for (i = 0; i < sizeof(legacy) / sizeof(legacy[0]); i++)
		T_EQ_U64(check(legacy[i].raw, true, legacy[i].want), T_OK);
	for (i = 0; i < sizeof(v0) / sizeof(v0[0]); i++) {
		T_EQ_U64(check(v0[i].raw, true, v0[i].want), T_OK);
		T_EQ_U64(check(v0[i].raw, false, v0[i].raw), T_OK);
	}
	return T_OK;
}

/* Not mangled, or broken: shown exactly as they are. */
static int test_not_mangled(void)
{
	char *big;

	T_EQ_U64(check("main", true, "main"), T_OK);
	T_EQ_U64(check("_start", true, "_start"), T_OK);
	T_EQ_U64(check("_Z", true, "_Z"), T_OK);
	T_EQ_U64(check("_Zfoo", true, "_Zfoo"), T_OK);
	T_EQ_U64(check("_R", true, "_R"), T_OK);
	T_EQ_U64(check("_RNvC", true, "_RNvC"), T_OK);
	T_EQ_U64(check("foo.part.0", true, "foo.part.0"), T_OK);
	T_EQ_U64(check("", true, ""), T_OK);
	/* Too long to hand to the demangler: kept as is. */
	big = malloc(DEMANGLE_MAX_INPUT + 16);
	T_ASSERT(big);
	memset(big, 'a', DEMANGLE_MAX_INPUT + 15);
	memcpy(big, "_ZN3app", 7);
	big[DEMANGLE_MAX_INPUT + 15] = 0;
	T_EQ_U64(check(big, true, big), T_OK);
	free(big);
	return T_OK;
}

/* What the build has, and what it does for a scheme it has no demangler for. */
static int test_no_demangler_warns_once(void)
{
	const char *cxx = "_ZN3app6engine4stepEv", *rust = "_RNvCs15kBYyAo9fc_7mycrate7example";
	const char *missing = NULL;
	char line[512];
	int saved, warnings = 0, hints = 0;
	FILE *err;

	T_ASSERT(demangle_has_scheme(cxx) == (XPROF_HAVE_LIBIBERTY || XPROF_HAVE_CXA_DEMANGLE));
	T_ASSERT(demangle_has_scheme(rust) == XPROF_HAVE_LIBIBERTY);
	T_ASSERT(!demangle_has_scheme("main"));
	T_ASSERT(!demangle_has_scheme(""));
	if (!demangle_has_scheme(cxx))
		missing = cxx;
	else if (!demangle_has_scheme(rust))
		missing = rust;
	if (!missing) {
		printf("# every scheme has a demangler here: nothing to warn about\n");
		return T_SKIP;
	}
	/* stderr to a file: two names met, one warning with its hint. */
	err = tmpfile();
	T_ASSERT(err);
	fflush(stderr);
	saved = dup(2);
	T_ASSERT(saved >= 0 && dup2(fileno(err), 2) == 2);
	T_EQ_U64(check(missing, true, missing), T_OK);
	T_EQ_U64(check(missing, true, missing), T_OK);
	T_EQ_U64(check(missing, false, missing), T_OK);
	fflush(stderr);
	T_ASSERT(dup2(saved, 2) == 2);
	close(saved);
	rewind(err);
	while (fgets(line, sizeof(line), err)) {
		fputs(line, stdout);
		warnings += !strncmp(line, "xprof: warning: ", 16) && strstr(line, missing);
		hints += !strncmp(line, "hint: ", 6) && strstr(line, "libiberty-dev");
	}
	fclose(err);
	T_EQ_U64((uint64_t)warnings, 1);
	T_EQ_U64((uint64_t)hints, 1);
	return T_OK;
}

T_MAIN(T_CASE(test_no_demangler_warns_once), T_CASE(test_versions), T_CASE(test_cxx),
       T_CASE(test_rust), T_CASE(test_not_mangled))
