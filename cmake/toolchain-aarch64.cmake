# SPDX-License-Identifier: MIT
#
# Cross-build for aarch64 (Debian 12 gcc-aarch64-linux-gnu, bookworm
# sysroot from ../shared/xarch/setup.sh --sysroot aarch64):
#
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64.cmake \
#         -DXPROF_WERROR=ON && cmake --build build-aarch64 -j2
#
# xprof itself is linked statically (all the sysroot's libraries ship .a
# files), so the binary runs on any aarch64 Linux, the qemu guests of
# tests/xarch included, with nothing else installed.  The .pc files of
# libdw 0.188 do not list zstd, hence the extra library.  Test targets stay
# dynamic (PIE, shared libc), like most programs one profiles.
set(XP_XARCH aarch64)
set(XP_XARCH_TRIPLET aarch64-linux-gnu)
set(XP_XARCH_CFLAGS "")
include(${CMAKE_CURRENT_LIST_DIR}/xarch-toolchain.cmake)

set(XPROF_STATIC ON CACHE BOOL "Link the xprof binary statically")
set(XPROF_STATIC_EXTRA_LIBS "zstd" CACHE STRING "Libraries a static xprof needs beyond the .pc files")
