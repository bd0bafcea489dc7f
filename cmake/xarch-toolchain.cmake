# SPDX-License-Identifier: MIT
#
# Shared part of cmake/toolchain-<arch>.cmake: cross-build xprof with the
# Debian cross gcc against the sysroot that ../shared/xarch/setup.sh
# --sysroot <arch> makes in $XARCH_CACHE/<arch>/sysroot (default
# ~/.cache/xarch).  The includer sets XP_XARCH (aarch64, riscv64) and
# XP_XARCH_TRIPLET first.
#
# Why the setup.sh sysroot and not multiarch (apt-get install
# libdw-dev:arm64): multiarch makes the host's own amd64 packages move in
# lock-step with the foreign ones (it upgraded 18 of them when tried), and
# bookworm has no riscv64 at all; the sysroot is private, per arch, and
# leaves the build machine alone.
#
# The flags are those of ../shared/xarch/xcc.sh: Debian's cross gcc puts
# /usr/<triplet>/{include,lib} (its own glibc) before --sysroot, so the
# sysroot's headers, start files and libraries are named explicitly to come
# first.  That matters for riscv64, whose sysroot is trixie (glibc 2.41)
# while the cross toolchain's glibc is bookworm's 2.36.

set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR ${XP_XARCH})
set(CMAKE_C_COMPILER ${XP_XARCH_TRIPLET}-gcc)

if(DEFINED ENV{XARCH_CACHE} AND NOT "$ENV{XARCH_CACHE}" STREQUAL "")
  set(_xp_cache "$ENV{XARCH_CACHE}")
else()
  set(_xp_cache "$ENV{HOME}/.cache/xarch")
endif()
set(XP_SYSROOT "${_xp_cache}/${XP_XARCH}/sysroot")
if(NOT EXISTS "${XP_SYSROOT}/usr/lib/${XP_XARCH_TRIPLET}")
  message(FATAL_ERROR "no ${XP_XARCH} sysroot at ${XP_SYSROOT}: "
    "run '../shared/xarch/setup.sh --sysroot ${XP_XARCH}' first")
endif()

set(CMAKE_SYSROOT "${XP_SYSROOT}")
set(_xp_lib "${XP_SYSROOT}/usr/lib/${XP_XARCH_TRIPLET}")
set(CMAKE_C_FLAGS_INIT
  "-isystem ${XP_SYSROOT}/usr/include/${XP_XARCH_TRIPLET} -isystem ${XP_SYSROOT}/usr/include ${XP_XARCH_CFLAGS}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-B${_xp_lib}/ -L${_xp_lib} -Wl,-rpath-link,${_xp_lib}")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "${CMAKE_EXE_LINKER_FLAGS_INIT}")

# Libraries and headers from the sysroot only; programs (pkg-config) from the host.
set(CMAKE_FIND_ROOT_PATH "${XP_SYSROOT}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# pkg-config sees the sysroot's .pc files only and prefixes their paths with it.
set(ENV{PKG_CONFIG_PATH} "")
set(ENV{PKG_CONFIG_LIBDIR} "${_xp_lib}/pkgconfig:${XP_SYSROOT}/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${XP_SYSROOT}")

# The sysroot has no demangler (no libiberty-dev, no cross libstdc++): the
# cross-built xprof records in the guests, and names are demangled when the
# data files are reported on the host.
set(XPROF_DEMANGLER none CACHE STRING "Demangler: auto (libiberty, else libstdc++), libiberty, cxa, none")
