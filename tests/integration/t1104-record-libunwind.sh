#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# -g libunwind and -g check (doc/unwinding.md) on programs with known
# answers and on real ones:
#   - split and split-nofp under -g libunwind: main;work;a/b/c at 50/30/20%
#     (+-4 points), main in >= 99% of the stacks, the frameless leaf's
#     caller in >= 95%: libunwind walks the same copies as the native walk;
#   - -g check on chain's qsort callback (libc without frame pointers), on
#     xz and on sqlite3: every stack checked, and libunwind disagrees with
#     the native walk on at most 3% of them (the known classes: the vdso,
#     the first samples after an exec).
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace

for t in split split-nofp; do
	say "## $t -g libunwind"
	expect_exit 0 "$XPROF" record -q -g libunwind -o "$t.data" -- "$XP_TARGETS/$t" 2
	expect_exit 0 "$XPROF" report -i "$t.data" --folded -o "$t.folded"
	assert_folded_format "$t.folded"
	assert_samples_at_least "$t" 1000 "$t.folded"
	assert_share_at_least "$t: main" 99 "$t.folded" frame:main
	assert_share_between "$t: main;work;a" 46 54 "$t.folded" "chain:main;work;a"
	assert_share_between "$t: main;work;b" 26 34 "$t.folded" "chain:main;work;b"
	assert_share_between "$t: main;work;c" 16 24 "$t.folded" "chain:main;work;c"
	assert_share_at_least "$t: frameless leaf's caller recovered" 95 "$t.folded" \
		"tail:a|b|c;leaf" leaf:leaf
done

# check NAME COMMAND...: record COMMAND with -g check; the disagreement rate.
check() {
	local name=$1
	shift
	say "## $name -g check"
	expect_exit 0 "$XPROF" record -g check -o "$name.data" -- "$@"
	assert_file_matches "$name: the summary tells the disagreements" "$XP_ERR" \
		'unwind check: libunwind disagreed on [0-9]+ of [0-9]+ stacks'
	expect_exit 0 "$XPROF" report -i "$name.data" --header-only
	read -r checked differ < <(awk '$3 == "unwind_checked" { c = $5 }
		$3 == "unwind_differ" { d = $5 } END { print c + 0, d + 0 }' "$XP_OUT")
	if ((checked >= 200 && differ * 100 <= checked * 3)); then
		say "  ok: $name: libunwind disagreed on $differ of $checked stacks (want <= 3%)"
	else
		fail "$name: libunwind disagreed on $differ of $checked stacks (want >= 200, <= 3%)"
	fi
}

check qsort "$XP_TARGETS/chain" qsort 1
if command -v xz >/dev/null; then
	head -c 3000000 /dev/urandom >rand.bin
	check xz xz -T1 -k -f -6 rand.bin
fi
if command -v sqlite3 >/dev/null; then
	check sqlite3 sqlite3 :memory: "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1
		FROM c LIMIT 3000000) SELECT sum(x * x) % 1000 FROM c;"
fi

finish
