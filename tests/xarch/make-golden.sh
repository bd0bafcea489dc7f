#!/bin/bash
# SPDX-License-Identifier: MIT
#
# make-golden.sh ARCH... - record the cross-architecture golden reports of
# tests/data/golden/ARCH/ (see tests/data/README.md) in a qemu-system guest.
#
# For each ARCH (aarch64, riscv64): cross-build xprof into build-ARCH/ (as
# tests/xarch/run.sh does) and a static split (tests/targets/split.c, on
# aarch64 with -mbranch-protection=pac-ret: the guest CPU has PAC); boot
# the guest, record split at /xt/split there and report it in the guest;
# bring the data file and that native report out over the console; write
#   tests/data/golden/ARCH/split.xprof   the data file
#   tests/data/golden/ARCH/split.folded  the guest's own report, the golden
#   tests/data/golden/ARCH/xt/split      the binary, at its recorded path
# and check that the host's build/xprof, reading the file with --symfs,
# prints exactly the guest's report.  Needs build/ (the native build) and
# ../shared/xarch/setup.sh --sysroot ARCH.
set -euo pipefail

SRC=$(cd "$(dirname "$0")/../.." && pwd)
XARCH=$SRC/../shared/xarch
[ $# -gt 0 ] || set -- aarch64 riscv64
[ -x "$SRC/build/xprof" ] || { echo "make-golden: build the native xprof in build/ first" >&2; exit 2; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/xarch-golden.XXXXXX")
trap '[ $? = 0 ] && rm -rf "$WORK" || echo "make-golden: work directory kept: $WORK" >&2' EXIT

for ARCH in "$@"; do
	case $ARCH in
	aarch64) extra=-mbranch-protection=pac-ret ;;
	riscv64) extra= ;;
	*) echo "make-golden: unknown arch $ARCH" >&2; exit 2 ;;
	esac
	B=$SRC/build-$ARCH
	G=$SRC/tests/data/golden/$ARCH
	[ -f "$B/CMakeCache.txt" ] ||
		cmake -S "$SRC" -B "$B" -DCMAKE_TOOLCHAIN_FILE="$SRC/cmake/toolchain-$ARCH.cmake" \
			-DXPROF_WERROR=ON >/dev/null
	cmake --build "$B" -j2 --target xprof xt_fifo >/dev/null

	# Static, so the one file symbolizes every frame but the vDSO's; built
	# with the cross toolchain's own glibc (bookworm's riscv64 ld cannot
	# link trixie's libc.a statically), with CFI and .eh_frame_hdr.
	mkdir -p "$WORK/$ARCH/xt"
	"$ARCH-linux-gnu-gcc" -O2 -g -fno-omit-frame-pointer -fasynchronous-unwind-tables $extra \
		-D_GNU_SOURCE -static -Wl,--eh-frame-hdr -o "$WORK/$ARCH/xt/split" \
		"$SRC/tests/targets/split.c"
	cp "$B/xprof" "$B/xarch/fifo" "$WORK/$ARCH/xt/"
	cat >"$WORK/$ARCH/golden.sh" <<'EOF'
#!/bin/sh
/xt/fifo /xt/xprof record -q -F 199 -o /tmp/split.xprof -- /xt/split 0.5 >/dev/null || exit 1
/xt/xprof report -i /tmp/split.xprof --folded -o /tmp/split.folded || exit 1
for f in split.xprof split.folded; do
	echo "BEGIN $f"
	base64 /tmp/$f
	echo "END $f"
done
EOF
	"$XARCH/run-in-qemu.sh" -b -L -a "$WORK/$ARCH/xt:/xt" -l "$WORK/$ARCH/console.log" \
		"$ARCH" "$WORK/$ARCH/golden.sh" >/dev/null
	mkdir -p "$G/xt"
	for f in split.xprof split.folded; do
		sed -n "/^BEGIN $f/,/^END $f/p" "$WORK/$ARCH/console.log" | sed '1d;$d' | tr -d '\r' |
			base64 -d >"$G/$f"
	done
	cp "$WORK/$ARCH/xt/split" "$G/xt/split"
	"$SRC/build/xprof" report -i "$G/split.xprof" --folded --symfs "$G" >"$WORK/$ARCH/host.folded"
	if ! cmp -s "$G/split.folded" "$WORK/$ARCH/host.folded"; then
		echo "make-golden: $ARCH: the host's report differs from the guest's:" >&2
		diff "$G/split.folded" "$WORK/$ARCH/host.folded" >&2 || true
		exit 1
	fi
	echo "make-golden: $ARCH: $(awk '{ n += $NF } END { print n }' "$G/split.folded") samples," \
		"$(wc -l <"$G/split.folded") stacks; host report = guest report; $(du -sh "$G" | cut -f1)"
done
