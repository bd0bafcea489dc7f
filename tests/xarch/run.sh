#!/bin/bash
# SPDX-License-Identifier: MIT
#
# run.sh ARCH [TEST...] - cross-build xprof and the guest targets for ARCH
# (aarch64 or riscv64) into build-ARCH/, boot a throw-away qemu-system guest
# (../shared/xarch/run-in-qemu.sh, about 2 s) and run the integration checks
# of tests/xarch/guest.sh in it: split (50/30/20 shares, main in every
# stack), split-nofp (CFI only), pac (aarch64: pac-ret return addresses on a
# PAC CPU), threads, fork-exec, attach and qsort (a callback from libc).
# TEST names a subset.  Prints the guest's PASS/FAIL lines and
# "N passed, N failed"; exits 0 only if every check passed, 77 (skip) when
# the cross tools are not set up, 1 otherwise.
#
# Needs, once per machine: ../shared/xarch/setup.sh --sysroot aarch64 riscv64
# (host packages, guest kernels, busybox, cross sysroots; ~45 s).
# The guest's whole console output is kept in build-ARCH/xarch-guest.log.
# Environment: XARCH_CACHE (as setup.sh), XT_FREQ (guest sampling rate,
# default 499), XT_SMP (guest CPUs, default 1), XT_KEEP=1 (keep the
# staging directory).
set -uo pipefail

SRC=$(cd "$(dirname "$0")/../.." && pwd)
XARCH=$SRC/../shared/xarch
CACHE=${XARCH_CACHE:-$HOME/.cache/xarch}
ARCH=${1:-}
[ $# -gt 0 ] && shift

case $ARCH in
aarch64) TRIPLET=aarch64-linux-gnu ;;
riscv64) TRIPLET=riscv64-linux-gnu ;;
*)
	echo "usage: tests/xarch/run.sh aarch64|riscv64 [TEST...]" >&2
	exit 2
	;;
esac

skip() {
	echo "xarch $ARCH: skipped: $*" >&2
	echo "hint: run '../shared/xarch/setup.sh --sysroot aarch64 riscv64' once (from the repository)" >&2
	exit 77
}
[ -x "$XARCH/run-in-qemu.sh" ] || skip "no $XARCH/run-in-qemu.sh"
[ -f "$CACHE/$ARCH/kernel" ] || skip "no guest kernel in $CACHE/$ARCH"
[ -f "$CACHE/$ARCH/busybox" ] || skip "no guest busybox in $CACHE/$ARCH"
[ -d "$CACHE/$ARCH/sysroot/usr/lib/$TRIPLET" ] || skip "no sysroot in $CACHE/$ARCH"
command -v "$TRIPLET-gcc" >/dev/null || skip "no $TRIPLET-gcc"

START=$(date +%s.%N)
B=$SRC/build-$ARCH
if [ ! -f "$B/CMakeCache.txt" ]; then
	mkdir -p "$B"
	cmake -S "$SRC" -B "$B" -DCMAKE_TOOLCHAIN_FILE="$SRC/cmake/toolchain-$ARCH.cmake" \
		-DXPROF_WERROR=ON >"$B/xarch-configure.log" 2>&1 ||
		{ cat "$B/xarch-configure.log" >&2; echo "xarch $ARCH: configure failed" >&2; exit 1; }
fi
cmake --build "$B" -j2 --target xprof xarch-targets >"$B/xarch-build.log" 2>&1 ||
	{ tail -n 40 "$B/xarch-build.log" >&2; echo "xarch $ARCH: build failed" >&2; exit 1; }
BUILT=$(date +%s.%N)

STAGE=$(mktemp -d "${TMPDIR:-/tmp}/xarch-run.XXXXXX")
trap '[ "${XT_KEEP:-0}" = 1 ] && echo "staging kept: $STAGE" >&2 || rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE/xt"
# What tests/xarch/CMakeLists.txt's xarch-targets builds.
cp "$B/xprof" "$B"/targets/{split,split-nofp,threads,forker,chain} "$B/xarch/fifo" "$STAGE/xt/"
[ -f "$B/xarch/split-pac" ] && cp "$B/xarch/split-pac" "$STAGE/xt/"
cp "$SRC/tests/xarch/guest.sh" "$STAGE/guest.sh"

# The sysroot's libraries go in with -L; what a dynamic xprof needs from the
# cross compiler itself (libstdc++, when the demangler is in) with -D.
DLIBS=()
if "$TRIPLET-readelf" -d "$B/xprof" | grep -q NEEDED; then
	for lib in $("$TRIPLET-readelf" -d "$B/xprof" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p'); do
		[ -e "$CACHE/$ARCH/sysroot/usr/lib/$TRIPLET/$lib" ] && continue
		f=$("$TRIPLET-gcc" -print-file-name="$lib")
		[ -e "$f" ] && DLIBS+=(-D "$f")
	done
fi

LOG=$B/xarch-guest.log
# One vCPU: with two, TCG's speed followed the load of this shared 2-core
# host (the sample counts of a run ranged from 86 to 850).  guest.sh runs
# xprof as SCHED_FIFO so that it still preempts the target on time.
"$XARCH/run-in-qemu.sh" -b -L "${DLIBS[@]+"${DLIBS[@]}"}" -a "$STAGE/xt:/xt" -t 400 -m 512 \
	-s "${XT_SMP:-1}" \
	-l "$LOG" "$ARCH" "$STAGE/guest.sh" /xt "$ARCH" "$@" 2>&1 |
	grep -av -e '^XARCH-' -e '^run-in-qemu: arch=' -e 'reboot: Power down'
RC=${PIPESTATUS[0]}
END=$(date +%s.%N)

SUMMARY=$(grep -a "^xarch $ARCH: [0-9]* passed, [0-9]* failed" "$LOG" | tail -n 1)
awk -v a="$ARCH" -v s="$START" -v b="$BUILT" -v e="$END" -v l="$LOG" \
	'BEGIN { printf "xarch %s: build %.0fs, guest %.0fs (log: %s)\n", a, b - s, e - b, l }'
if [ -z "$SUMMARY" ]; then
	echo "xarch $ARCH: the guest ended without a summary (run-in-qemu status $RC)"
	echo "0 passed, 1 failed"
	exit 1
fi
echo "${SUMMARY#xarch "$ARCH": }"
[ "$RC" = 0 ] || exit 1
