#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# scripts/static.sh [-B DIR] [aarch64 | riscv64]
#
# Build xprof as one static binary: the way into a container or onto a
# machine without a compiler (doc/install.md says how to use it).  It
# needs nothing installed where it runs; copy it there and run it.
#
# Installs what a static link needs (scripts/deps.sh --static), configures
# DIR (default build-static, or build-static-ARCH) with -DXPROF_STATIC=ON
# and without the test hooks, builds the xprof target only, and prints the
# binary's path as its last line.  With an architecture, a cross build
# with cmake/toolchain-ARCH.cmake (its sysroot from
# ../shared/xarch/setup.sh --sysroot ARCH); riscv64 is refused: Debian 12's
# cross linker crashes on trixie's riscv64 libc.a, and trixie's libdw.a and
# libelf.a need elfutils' eu_tsearch, which no archive defines
# (doc/install.md), so its xprof is dynamic.
#
# On the 2-CPU build machine: about 15 s from nothing, seconds after a
# change.  Exit status 0, or 1 when the build failed (the build's log tail
# on stderr), 2 for a bad argument.
set -euo pipefail
cd "$(dirname "$0")/.."

dir=''
arch=''
while (($#)); do
	case $1 in
	-B)
		(($# >= 2)) || {
			echo "static.sh: -B needs a directory" >&2
			exit 2
		}
		dir=$2
		shift 2
		;;
	aarch64) arch=$1 && shift ;;
	riscv64)
		echo "static.sh: riscv64 cannot be linked statically with Debian's cross tools and" \
			"libraries (doc/install.md says why); build it dynamically there" >&2
		exit 2
		;;
	-h | --help)
		sed -n '3,22p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "usage: scripts/static.sh [-B DIR] [aarch64]" >&2
		exit 2
		;;
	esac
done

args=(-DXPROF_STATIC=ON -DXPROF_TEST_HOOKS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo)
if [[ -n $arch ]]; then
	dir=${dir:-build-static-$arch}
	args+=(-DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/toolchain-$arch.cmake")
else
	dir=${dir:-build-static}
	scripts/deps.sh --static >&2
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! { cmake -S . -B "$dir" "${args[@]}" && cmake --build "$dir" -j "$(nproc)" --target xprof; } \
	>"$log" 2>&1; then
	tail -n 30 "$log" >&2
	echo "static.sh: the build failed" >&2
	exit 1
fi
# A static glibc warns that dlopen (libdw's debuginfod client) needs the
# build's glibc where it runs: xprof then uses no debuginfod.
if readelf -l "$dir/xprof" | grep -q 'program interpreter'; then
	echo "static.sh: $dir/xprof is not statically linked" >&2
	exit 1
fi
echo "$dir/xprof"
