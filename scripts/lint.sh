#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# scripts/lint.sh [BASE]
#
# The two style checks CI runs (.ci/run, stage lint):
#   - shellcheck of every shell script in the tree (*.sh and .ci/run), with
#     the repository's .shellcheckrc;
#   - clang-format (the repository's .clang-format) of the C lines changed
#     since BASE, through git clang-format: only lines a change touched
#     are held to the format, so older code that the formatter would lay
#     out differently does not fail the check until someone edits it.
#     BASE defaults to the merge base with main; on main itself (nothing
#     of its own to compare), to the commit before HEAD.  Uncommitted
#     changes are checked too.
# Each check prints what it found; the last line is "N passed, N failed"
# (the two checks), and the exit status is 1 if either failed, 2 if a tool
# is missing (scripts/deps.sh --lint installs both).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

for tool in shellcheck clang-format git-clang-format; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "lint: $tool not found: run scripts/deps.sh --lint" >&2
		exit 2
	fi
done

base=${1:-}
if [[ -z $base ]]; then
	base=$(git merge-base HEAD main 2>/dev/null || true)
	if [[ -z $base || $base == "$(git rev-parse HEAD)" ]]; then
		base=$(git rev-parse -q --verify HEAD~1 || true)
	fi
fi
if [[ -z $base ]] || ! git rev-parse -q --verify "$base^{commit}" >/dev/null; then
	echo "lint: no commit to compare with ('${1:-merge base with main}')" >&2
	exit 2
fi

passed=0
failed=0

echo "== shellcheck ($(shellcheck --version | sed -n 's/^version: //p'))"
mapfile -t scripts < <(git ls-files '*.sh' .ci/run)
if shellcheck -- "${scripts[@]}"; then
	echo "ok: ${#scripts[@]} scripts"
	passed=$((passed + 1))
else
	echo "FAILED: shellcheck"
	failed=$((failed + 1))
fi

echo "== clang-format of the C changed since $(git log -1 --format='%h %s' "$base")"
out=$(git clang-format --binary "$(command -v clang-format)" --extensions c,h --diff "$base" -- 2>&1)
if [[ $out == *"diff --git"* ]]; then
	printf '%s\n' "$out"
	echo "FAILED: clang-format would change the lines above (git clang-format $base to apply it)"
	failed=$((failed + 1))
else
	echo "ok: ${out:-nothing to format}"
	passed=$((passed + 1))
fi

echo "$passed passed, $failed failed"
((failed == 0))
