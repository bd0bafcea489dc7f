#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Build xprof and show what it does: install missing build dependencies,
# configure and build in build/, profile the split test target for 2 s of
# CPU, then print the flat profile and the folded stacks.  The data file
# is ./xprof.data (ignored by git).
set -euo pipefail
cd "$(dirname "$0")/.."

run() {
	printf '+ %s\n' "$*" >&2
	"$@"
}

run scripts/deps.sh
run cmake -S . -B build
run cmake --build build -j "$(nproc)"
echo
run build/xprof record -- build/targets/split 2
echo
run build/xprof report --flat
echo
run build/xprof report --folded
