#!/bin/bash
# SPDX-License-Identifier: MIT
# report --diff BASE -i NEW on two recordings of the 'ab' target whose hot
# function changed: hot_a had 70% of the CPU time in the base run and 30%
# in the new one, hot_b the rest.  Every comparison names hot_a down and
# hot_b up by 40 points (+-6): the flat and tree deltas, the two-column
# folded stacks (difffolded.pl's "stack base new", base scaled to the new
# whole) and the differential flame graph, drawn by a real headless
# Chromium (each frame's data-delta, red for hot_b and blue for hot_a).  A
# profile compared with itself changes nowhere; formats that cannot show
# a comparison are usage errors.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"

skip_unless_ptrace
expect_exit 0 "$XPROF" -q record -o base.data -- "$XP_TARGETS/ab" -a 70 -s 1.5
expect_exit 0 "$XPROF" -q record -o new.data -- "$XP_TARGETS/ab" -a 30 -s 1.5

# in_range LABEL VALUE LO HI
in_range() {
	if awk -v v="$2" -v lo="$3" -v hi="$4" 'BEGIN { exit !(v + 0 >= lo && v + 0 <= hi) }'; then
		say "  ok: $1: $2 (want $3..$4)"
	else
		fail "$1: '$2' (want $3..$4)"
	fi
}

# Flat: "Delta-self Base-self New-self Delta-total Base-total New-total  Function".
expect_exit 0 "$XPROF" report --diff base.data -i new.data -o diff.flat
show_file diff.flat diff.flat 12
flat_col() { # FUNCTION COLUMN
	awk -v fn="$1" -v c="$2" '!/^#/ && $NF == fn { v = $c; sub(/%$/, "", v); print v + 0 }' diff.flat
}
in_range "flat: hot_a self change" "$(flat_col hot_a 1)" -46 -34
in_range "flat: hot_b self change" "$(flat_col hot_b 1)" 34 46
in_range "flat: hot_a base self%" "$(flat_col hot_a 2)" 64 76
in_range "flat: hot_a new self%" "$(flat_col hot_a 3)" 24 36
in_range "flat: main total change" "$(flat_col main 4)" -1 1
first=$(awk '!/^#/ { print $NF; exit }' diff.flat)
[[ $first == hot_a || $first == hot_b ]] && say "  ok: the largest change first ($first)" ||
	fail "the first row is '$first', not hot_a or hot_b"

# Tree: "Delta-total Base% New% Delta-self  tree".
expect_exit 0 "$XPROF" report --diff base.data -i new.data --tree -o diff.tree
show_file diff.tree diff.tree 14
tree_delta() {
	awk -v fn="$1" '!/^#/ && $NF == fn { v = $1; sub(/%$/, "", v); print v + 0; exit }' diff.tree
}
in_range "tree: hot_a total change" "$(tree_delta hot_a)" -46 -34
in_range "tree: hot_b total change" "$(tree_delta hot_b)" 34 46

# Folded: "stack base new", the base scaled to the new profile's whole.
expect_exit 0 "$XPROF" report --diff base.data -i new.data --folded -o diff.folded
show_file diff.folded diff.folded 8
bad=$(awk 'NF < 3 || $(NF-1) !~ /^[0-9]+$/ || $NF !~ /^[0-9]+$/' diff.folded | head -n 3)
[[ -z $bad ]] && say "  ok: every line is 'stack base new'" || fail "not 'stack base new': $bad"
folded_share() { # FUNCTION COLUMN(1: base, 2: new)
	awk -v fn="$1" -v c="$2" '{ v = c == 1 ? $(NF-1) : $NF; all += v }
		$(NF-2) ~ (";" fn "$") { hit += v }
		END { printf "%.2f\n", all ? 100 * hit / all : 0 }' diff.folded
}
in_range "folded: hot_a base share" "$(folded_share hot_a 1)" 64 76
in_range "folded: hot_a new share" "$(folded_share hot_a 2)" 24 36
in_range "folded: hot_b base share" "$(folded_share hot_b 1)" 24 36
in_range "folded: hot_b new share" "$(folded_share hot_b 2)" 64 76
sums=$(awk '{ b += $(NF-1); n += $NF } END { printf "%.6f\n", n ? b / n : 0 }' diff.folded)
in_range "folded: base scaled to the new whole (ratio of the sums)" "$sums" 0.9999 1.0001

# Itself: no change anywhere.
expect_exit 0 "$XPROF" report --diff new.data -i new.data -o self.flat
assert_file_lacks "a profile compared with itself changes nowhere" self.flat \
	'^ *[-+][0-9.]*[1-9][0-9.]*% |^ *-'

# Usage: formats without a comparison, a missing base.
expect_exit 2 "$XPROF" report --diff base.data -i new.data --pprof -o x.pb.gz
assert_error_line "--diff --pprof" "$XP_ERR"
expect_exit 1 "$XPROF" report --diff nope.data -i new.data
assert_error_line "a missing base" "$XP_ERR"

# The differential flame graph in a real browser.
CHROMIUM=
for c in chromium chromium-browser google-chrome; do
	[[ $CHROMIUM ]] || CHROMIUM=$(command -v "$c" || true)
done
[[ $CHROMIUM ]] || skip "chromium not found (Debian package: chromium)"
expect_exit 0 "$XPROF" report --diff base.data -i new.data --flamegraph -o diff.html
expect_exit 0 timeout -k 5 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic \
	--no-first-run --disable-background-networking --disable-component-update --disable-sync \
	--user-data-dir="$XP_TMP/chrome" --enable-logging=stderr --v=0 --window-size=1200,700 \
	--dump-dom "file://$XP_TMP/diff.html"
cp "$XP_OUT" dom.html
assert_file_lacks "the page wrote nothing to the console" "$XP_ERR" ':CONSOLE'
dom_attr() { # FUNCTION ATTRIBUTE
	grep -Eo "data-name=\"$1\" data-pct=\"[0-9.]+\" data-delta=\"[-+0-9.]+\"" dom.html |
		sed -E "s/.*$2=\"([^\"]*)\".*/\\1/" | head -n1
}
in_range "flame graph: hot_a change" "$(dom_attr hot_a data-delta)" -46 -34
in_range "flame graph: hot_b change" "$(dom_attr hot_b data-delta)" 34 46
in_range "flame graph: hot_b width (new share)" "$(dom_attr hot_b data-pct)" 64 76
fill() { # FUNCTION: the fill of its rectangle
	grep -Eo "data-name=\"$1\"[^>]*><title>[^<]*</title><rect [^>]*fill=\"[^\"]*\"" dom.html |
		sed -E 's/.*fill="([^"]*)"/\1/' | head -n1
}
say "# fills: hot_a $(fill hot_a), hot_b $(fill hot_b), main $(fill main)"
[[ $(fill hot_b) == "rgb(255,"* ]] && say "  ok: hot_b is red" || fail "hot_b's fill: $(fill hot_b)"
[[ $(fill hot_a) == *",255)" && $(fill hot_a) != "rgb(255,"* ]] && say "  ok: hot_a is blue" ||
	fail "hot_a's fill: $(fill hot_a)"
[[ $(fill main) == "rgb(225,225,225)" ]] && say "  ok: main is unchanged (grey)" ||
	fail "main's fill: $(fill main)"
finish
