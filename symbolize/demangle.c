/* SPDX-License-Identifier: MIT */
/*
 * The demangler wrapper (see demangle.h): version stripping, then
 * libiberty's cplus_demangle (C++, Rust legacy and v0) or, without it,
 * libstdc++'s __cxa_demangle.  The choice is made at build time
 * (XPROF_HAVE_LIBIBERTY, XPROF_HAVE_CXA_DEMANGLE in version.h); both
 * branches are small so the call sites never see it.  Without a demangler
 * for a name's scheme, the name stays as it is and one warning says why.
 */
#include "demangle.h"
#include "err.h"
#include "version.h"

#include <stdlib.h>
#include <string.h>

#if XPROF_HAVE_LIBIBERTY
#include <libiberty/demangle.h>
#elif XPROF_HAVE_CXA_DEMANGLE
/* From libstdc++'s <cxxabi.h>, which is C++ only. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);
#endif

size_t demangle_strip_version(const char *name)
{
	const char *at = strchr(name, '@');

	if (!at || at == name || !strcmp(at, "@plt"))
		return strlen(name);
	/* "name@" or "name@@" with nothing after it is not a versioned name. */
	if (!at[1] || (at[1] == '@' && !at[2]))
		return strlen(name);
	return (size_t)(at - name);
}

/* Whether @name looks mangled: Itanium C++ and Rust legacy "_Z", Rust v0 "_R". */
static bool is_mangled(const char *name)
{
	return name[0] == '_' && (name[1] == 'Z' || name[1] == 'R');
}

bool demangle_has_scheme(const char *name)
{
	if (!is_mangled(name))
		return false;
	if (XPROF_HAVE_LIBIBERTY)
		return true;
	return XPROF_HAVE_CXA_DEMANGLE && name[1] == 'Z';
}

/*
 * Once per process: mangled names are shown as they are, for want of a
 * demangler (a build configured with -DXPROF_DEMANGLER=none, or Rust v0
 * names with libstdc++'s C++-only one).
 */
static void warn_no_demangler(const char *name)
{
	static int warned;

	if (__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
		return;
	if (XPROF_HAVE_CXA_DEMANGLE) {
		xp_warn("Rust names such as '%.60s' are shown mangled: this xprof demangles C++ "
			"only (libstdc++)",
			name);
	} else {
		xp_warn("mangled names such as '%.60s' are shown as they are: this xprof was "
			"built without a demangler",
			name);
	}
	xp_hint("rebuild it with libiberty (Debian: libiberty-dev, as scripts/deps.sh "
		"installs); see 'xprof --version'");
}

static char *run_demangler(const char *name)
{
#if XPROF_HAVE_LIBIBERTY
	/*
	 * DMGL_PARAMS and DMGL_ANSI give "ns::f(int) const" as c++filt does.
	 * cplus_demangle tries Rust first (legacy Rust names are valid
	 * Itanium names too), and drops the legacy hash without DMGL_VERBOSE.
	 */
	return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI);
#elif XPROF_HAVE_CXA_DEMANGLE
	int status = 0;
	char *out;

	if (name[1] != 'Z')
		return NULL;
	out = __cxa_demangle(name, NULL, NULL, &status);
	if (status) {
		free(out);
		return NULL;
	}
	return out;
#else
	(void)name;
	return NULL;
#endif
}

char *demangle_name(const char *name, bool demangle)
{
	size_t len = demangle_strip_version(name);
	char *raw = xp_malloc(len + 1), *out;

	memcpy(raw, name, len);
	raw[len] = 0;
	if (!demangle || !is_mangled(raw) || len > DEMANGLE_MAX_INPUT)
		return raw;
	if (!demangle_has_scheme(raw)) {
		warn_no_demangler(raw);
		return raw;
	}
	out = run_demangler(raw);
	if (!out || !*out) {
		free(out);
		return raw;
	}
	free(raw);
	return out;
}
