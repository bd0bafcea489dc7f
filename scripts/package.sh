#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# scripts/package.sh [-o DIR] [--no-lintian]
#
# Build the Debian package of xprof, xprof_<version>_<arch>.deb (the
# binary, its manual pages, its bash completion, the license; Depends
# computed from the libraries it links), into DIR (default build-deb/):
#
#   1. scripts/deps.sh --package: what building needs (build-essential,
#      debhelper, lintian and the libraries' -dev packages);
#   2. a clean copy of the tree, the files git tracks and those it does
#      not ignore (from a clean checkout: exactly its commit), into a
#      temporary directory: no build directory, nothing ignored;
#   3. dpkg-buildpackage -b there (debian/: debhelper with cmake);
#   4. the .deb, its -dbgsym .deb (the debug symbols) and the .buildinfo
#      and .changes into DIR; then lintian on them, which must report no
#      error and no warning (debian/xprof.lintian-overrides explains any
#      tag kept).
#
# The package's version is debian/changelog's, which must be the one of
# CMakeLists.txt's project().  DIR/.source keeps a digest of the copied
# files: when it matches, the package in DIR is up to date and nothing is
# built.  Prints the .deb's path as its last line.  On the 2-CPU build
# machine: about a minute and a half, lintian included.  Exit status 0,
# 1 when the build or lintian failed, 2 for a bad argument.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD

out=build-deb
lintian=1
while (($#)); do
	case $1 in
	-o)
		(($# >= 2)) || {
			echo "package.sh: -o needs a directory" >&2
			exit 2
		}
		out=$2
		shift 2
		;;
	--no-lintian) lintian=0 && shift ;;
	-h | --help)
		sed -n '3,27p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "usage: scripts/package.sh [-o DIR] [--no-lintian]" >&2
		exit 2
		;;
	esac
done
say() {
	printf 'package.sh: %s\n' "$*" >&2
}
die() {
	say "error: $*"
	exit 1
}

version=$(sed -n '1s/^xprof (\([^)]*\)).*/\1/p' debian/changelog)
cmake_version=$(sed -n 's/^project(xprof VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
[[ -n $version && $version == "$cmake_version" ]] ||
	die "debian/changelog's version '$version' is not CMakeLists.txt's '$cmake_version': add a changelog entry (dch -v $cmake_version)"

scripts/deps.sh --package >&2
arch=$(dpkg --print-architecture)
deb=xprof_${version}_$arch.deb

# The files of a clean checkout: tracked, and untracked but not ignored.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	mapfile -d '' files < <(git ls-files -z --cached --others --exclude-standard)
else
	mapfile -d '' files < <(find . -path ./.git -prune -o -path './build*' -prune -o \
		-type f -printf '%P\0')
fi
digest=$(for f in "${files[@]}"; do
	[[ -f $f ]] && printf '%s\n' "$f" && sha256sum <"$f"
done | sha256sum | cut -d' ' -f1)
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [[ -e $out/$deb && $(cat "$out/.source" 2>/dev/null) == "$digest" ]]; then
	say "$deb is up to date (the same sources)"
	echo "$out/$deb"
	exit 0
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/xprof-package.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
copy=$tmp/xprof-$version
mkdir "$copy"
for f in "${files[@]}"; do
	[[ -f $f ]] && printf '%s\0' "$f"
done | tar -C "$src" --null -T - -cf - | tar -C "$copy" -xf -
say "building $deb from a clean copy of $(git rev-parse --short HEAD 2>/dev/null || echo the tree)"
if ! (cd "$copy" && dpkg-buildpackage -b -us -uc) >"$tmp/build.log" 2>&1; then
	tail -n 40 "$tmp/build.log" >&2
	die "dpkg-buildpackage failed"
fi
rm -f "$out"/xprof_*.deb "$out"/xprof-dbgsym_*.deb "$out"/xprof_*.buildinfo "$out"/xprof_*.changes \
	"$out/.source"
cp "$tmp"/xprof*_"$version"_*.deb "$tmp"/xprof_"$version"_*.buildinfo \
	"$tmp"/xprof_"$version"_*.changes "$out"/
if ((lintian)); then
	say "lintian $(lintian --version | cut -d' ' -f2)"
	lintian --info --fail-on error,warning "$out"/xprof_"${version}"_*.changes >&2 ||
		die "lintian found errors or warnings (explain one kept in debian/xprof.lintian-overrides)"
fi
echo "$digest" >"$out/.source"
dpkg-deb --info "$out/$deb" | sed -n 's/^ \(Package\|Version\|Architecture\|Depends\|Installed-Size\):/  \1:/p' >&2
echo "$out/$deb"
