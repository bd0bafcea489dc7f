#!/bin/bash
# SPDX-License-Identifier: MIT
#
# unit-qemu-user.sh ARCH... - the unit tests (tests/unit/ and the fuzz
# replays: ctest -L unit) of the ARCH cross build (aarch64, riscv64), run
# on this host under qemu-user; all but those labelled "live", which trace
# a process or read one through /proc or process_vm_readv, as qemu-user
# cannot.  The integration checks need a whole guest (tests/xarch/run.sh).
#
# Cross-builds into build-ARCH/ (cmake/toolchain-ARCH.cmake, -Werror) with
# CMAKE_CROSSCOMPILING_EMULATOR set to "qemu-ARCH -L <sysroot>", so ctest
# starts every test through qemu with the sysroot's loader and libraries.
# Prints ctest's summary per arch and "N passed, N failed" (tests) at the
# end; exits 0 only if every test passed, 77 (skip) when qemu-user or the
# sysroot is missing.  Needs: scripts/deps.sh --qemu-user and
# ../shared/xarch/setup.sh --sysroot ARCH.  Environment: XARCH_CACHE (as
# setup.sh).
set -uo pipefail

SRC=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${XARCH_CACHE:-$HOME/.cache/xarch}
[ $# -gt 0 ] || set -- aarch64 riscv64

passed=0 failed=0
for ARCH in "$@"; do
	case $ARCH in
	aarch64 | riscv64) ;;
	*)
		echo "usage: tests/xarch/unit-qemu-user.sh [aarch64|riscv64]..." >&2
		exit 2
		;;
	esac
	qemu=$(command -v "qemu-$ARCH" || command -v "qemu-$ARCH-static") || {
		echo "unit-qemu-user: no qemu-$ARCH: run 'scripts/deps.sh --qemu-user'" >&2
		exit 77
	}
	sysroot=$CACHE/$ARCH/sysroot
	[ -d "$sysroot/usr/lib/$ARCH-linux-gnu" ] || {
		echo "unit-qemu-user: no $ARCH sysroot: run '../shared/xarch/setup.sh --sysroot $ARCH'" >&2
		exit 77
	}
	B=$SRC/build-$ARCH
	echo "=== $ARCH: $qemu -L $sysroot"
	if ! cmake -S "$SRC" -B "$B" -DCMAKE_TOOLCHAIN_FILE="$SRC/cmake/toolchain-$ARCH.cmake" \
		-DXPROF_WERROR=ON "-DCMAKE_CROSSCOMPILING_EMULATOR=$qemu;-L;$sysroot" >/dev/null ||
		! cmake --build "$B" -j "$(nproc)" >"$B/unit-build.log" 2>&1; then
		tail -n 20 "$B/unit-build.log" 2>/dev/null
		echo "unit-qemu-user: the $ARCH build failed" >&2
		failed=$((failed + 1))
		continue
	fi
	(cd "$B" && ctest -L unit -LE live --output-on-failure --no-tests=error) >"$B/ctest-qemu-user.log" 2>&1
	grep -E '^[0-9]+% tests passed|\*\*\*|Failed|Not Run' "$B/ctest-qemu-user.log"
	line=$(grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$B/ctest-qemu-user.log" | tail -n 1)
	if [ -z "$line" ]; then
		tail -n 20 "$B/ctest-qemu-user.log"
		failed=$((failed + 1))
		continue
	fi
	f=$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/' <<<"$line")
	n=$(sed -E 's/.* failed out of ([0-9]+).*/\1/' <<<"$line")
	passed=$((passed + n - f))
	# What a failed test printed (ctest --output-on-failure), for the CI log.
	((f == 0)) || sed -n '/\*\*\*Failed/,/^ *Start /p' "$B/ctest-qemu-user.log" | head -n 60
	failed=$((failed + f))
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
