#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Install the Debian packages needed to build and test xprof, and only the
# missing ones: a machine that has them all is left untouched (no apt-get
# at all).  Runs apt-get update first when something must be installed.
# Works as root, or through sudo when not root and sudo exists.  On a
# system without dpkg it only lists the packages and carries on (cmake
# names anything still missing).
set -euo pipefail

# Usage: deps.sh [--test | --fuzz | --qemu-user | --bench | --lint | --static | --package]
#   (none)  what building xprof needs: cmake, gcc, make, pkg-config, and the
#           libraries: libdw/libelf (elfutils: symbols, DWARF, CFI),
#           libdebuginfod1 (which libdw loads to ask debuginfod servers
#           when DEBUGINFOD_URLS is set; only recommended by libdw1),
#           libunwind, capstone (instruction decoding), zlib (pprof), and
#           libiberty-dev (the demangler: C++ and Rust names)
#   --static  also the archives a static xprof (scripts/static.sh,
#           -DXPROF_STATIC=ON) links beyond those of the -dev packages above:
#           libbz2-dev (libdw's Libs.private)
#   --package  also what building the Debian package needs
#           (scripts/package.sh): build-essential, debhelper and lintian
#   --fuzz  also clang and its libFuzzer runtime (scripts/fuzz.sh; the -14 is
#           Debian 12's clang)
#   --test  also what the test suite drives: g++ (a C++ target), binutils
#           (objcopy, readelf, objdump: stripped copies, debuginfo, code
#           shapes), strace (debuginfod is never asked unasked), chromium
#           (flame graph), golang-go (go tool pprof, a Go program),
#           python3 (JSON checks), bsdutils (script: a terminal),
#           groff-base and man-db (man pages), bash-completion (the
#           completion loaded as a shell loads it), fonts for readable
#           screenshots, and what --fuzz, --static and --package install
#   --qemu-user  also qemu-user, which runs the unit tests of the aarch64 and
#           riscv64 cross builds on this host (tests/xarch/unit-qemu-user.sh)
#   --bench also what bench/run.sh compares with and runs: linux-perf (perf),
#           util-linux (unshare, setpriv), postgresql (the forkserver
#           workload: server, initdb, pgbench, psql), dpkg-dev and
#           debian-archive-keyring (apt-get source of the build workload's
#           package, checked against the archive's key), and what that
#           package, tmux, needs to build: libevent-dev, libncurses-dev
#   --lint  also shellcheck and clang-format (with git clang-format), for
#           scripts/lint.sh
packages=(cmake gcc make pkg-config libdw-dev libelf-dev libdebuginfod1 libunwind-dev
	libcapstone-dev zlib1g-dev libiberty-dev)
if [[ ${1:-} == --test || ${1:-} == --fuzz ]]; then
	packages+=(clang libclang-rt-14-dev)
fi
if [[ ${1:-} == --test || ${1:-} == --static ]]; then
	packages+=(libbz2-dev)
fi
if [[ ${1:-} == --test || ${1:-} == --package ]]; then
	packages+=(build-essential debhelper lintian)
fi
if [[ ${1:-} == --test ]]; then
	packages+=(binutils g++ strace chromium fonts-dejavu-core golang-go python3 bsdutils groff-base
		man-db bash-completion)
fi
if [[ ${1:-} == --qemu-user ]]; then
	packages+=(qemu-user)
fi
if [[ ${1:-} == --bench ]]; then
	packages+=(linux-perf util-linux postgresql dpkg-dev debian-archive-keyring libevent-dev
		libncurses-dev)
fi
if [[ ${1:-} == --lint ]]; then
	packages+=(shellcheck clang-format git)
fi

# --test: speedscope's own app (the npm package 'speedscope', pinned), which
# t3090 opens in Chromium, unpacked under ~/.cache/xprof; only when npm is
# there and the copy is missing (the test skips that part without it).
speedscope=${XP_CACHE:-${HOME:-/root}/.cache/xprof}/speedscope-1.25.0
if [[ ${1:-} == --test && ! -e $speedscope/package/dist/release/index.html ]] &&
	command -v npm >/dev/null 2>&1; then
	mkdir -p "$speedscope"
	if (cd "$speedscope" && npm pack --silent speedscope@1.25.0 >/dev/null 2>&1 &&
		tar xzf speedscope-1.25.0.tgz); then
		echo "deps.sh: speedscope 1.25.0 in $speedscope"
	else
		echo "deps.sh: could not fetch speedscope with npm (t3090 will skip the app)" >&2
	fi
fi

if ! command -v dpkg >/dev/null 2>&1; then
	echo "deps.sh: no dpkg here; make sure these (Debian names) are installed: ${packages[*]}" >&2
	exit 0
fi

missing=()
for p in "${packages[@]}"; do
	# dpkg -s also succeeds for a removed package that left its
	# configuration behind: require the "installed" status.
	if ! dpkg -s "$p" 2>/dev/null | grep -qx 'Status: install ok installed'; then
		missing+=("$p")
	fi
done
if ((${#missing[@]} == 0)); then
	echo "deps.sh: all needed packages are installed"
	exit 0
fi

if ((EUID == 0)); then
	as_root=()
elif command -v sudo >/dev/null 2>&1; then
	as_root=(sudo)
else
	echo "deps.sh: missing packages: ${missing[*]}" >&2
	echo "deps.sh: not root and no sudo: install them as root, e.g." >&2
	echo "    apt-get install ${missing[*]}" >&2
	exit 1
fi

echo "deps.sh: installing ${missing[*]}"
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
	apt-get install -y -q --no-install-recommends "${missing[@]}"
