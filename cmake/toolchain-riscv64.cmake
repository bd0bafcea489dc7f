# SPDX-License-Identifier: MIT
#
# Cross-build for riscv64 (Debian 12 gcc-riscv64-linux-gnu, trixie sysroot
# from ../shared/xarch/setup.sh --sysroot riscv64; bookworm has no riscv64):
#
#   cmake -S . -B build-riscv64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-riscv64.cmake \
#         -DXPROF_WERROR=ON && cmake --build build-riscv64 -j2
#
# Everything links dynamically: bookworm's ld 2.40 segfaults on trixie's
# libc.a and libunwind.a, and trixie's libdw.a needs symbols of glibc 2.41.
# Run the programs with the sysroot's libraries beside them
# (../shared/xarch/run-in-qemu.sh -L).
#
# Debian's riscv64 GCC 12 emits no .eh_frame by default; without CFI a
# function without a frame record (a leaf, libc) cannot be unwound, so
# every C file, test targets included, gets -fasynchronous-unwind-tables.
set(XP_XARCH riscv64)
set(XP_XARCH_TRIPLET riscv64-linux-gnu)
set(XP_XARCH_CFLAGS "-fasynchronous-unwind-tables")
include(${CMAKE_CURRENT_LIST_DIR}/xarch-toolchain.cmake)
