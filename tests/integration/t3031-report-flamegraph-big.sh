#!/bin/bash
# SPDX-License-Identifier: MIT
# report --flamegraph on profiles that strain a page, opened in a real
# headless Chromium: a 1M-sample profile with 200,000 distinct stacks
# (bench/gen_profile) is pruned of the frames narrower than 0.01% of the
# whole, the page says how many and how much weight they hold, stays small,
# and draws in under 2 s from navigation (the page's own data-xprof-ms);
# a tall graph (200-frame stacks of the 'deep' target) opens scrolled to
# its base, where the width is; a small profile prunes nothing and says
# nothing about it.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"

CHROMIUM=
for c in chromium chromium-browser google-chrome; do
	[[ $CHROMIUM ]] || CHROMIUM=$(command -v "$c" || true)
done
[[ $CHROMIUM ]] || skip "chromium not found (Debian package: chromium)"
GEN=$XP_BUILD/tests/gen_profile
[[ -x $GEN ]] || fail_now "$GEN not built"
cat >chrome <<SH
#!/bin/bash
exec timeout -k 5 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic \\
	--no-first-run --disable-background-networking --disable-component-update \\
	--disable-sync --user-data-dir="\$(mktemp -d -p "$XP_TMP")" --enable-logging=stderr \\
	--v=0 --window-size=1200,700 --dump-dom "\$@"
SH
chmod +x chrome
attr() { # NAME FILE: an attribute of <html> in a dumped DOM
	sed -n "s/.*<html[^>]* $1=\"\([^\"]*\)\".*/\1/p" "$2" | head -n1
}

expect_exit 0 "$GEN" -n 1000000 -s 200000 big.data
expect_exit 0 "$XPROF" report -i big.data --flamegraph -o big.html
size=$(stat -c %s big.html)
say "# big.html: $size bytes"
((size < 5000000)) && say "  ok: the page is under 5 MB" || fail "the page is $size bytes"
assert_file_matches "the data states the pruning" big.html '"pruned":\{"ppm":100,"frames":[1-9][0-9]*,'
expect_exit 0 ./chrome "file://$XP_TMP/big.html"
cp "$XP_OUT" big.dom
assert_file_lacks "no console message" "$XP_ERR" ':CONSOLE'
ms=$(attr data-xprof-ms big.dom)
drawn=$(attr data-xprof-ready big.dom)
pruned=$(attr data-xprof-pruned big.dom)
say "# 1M samples: drawn $drawn frames in $ms ms from navigation; $pruned frames pruned"
((drawn > 100)) && say "  ok: $drawn frames drawn" || fail "only '$drawn' frames drawn"
((ms > 0 && ms < 2000)) && say "  ok: drawn in $ms ms (< 2000)" || fail "drawn in '$ms' ms"
assert_file_matches "the page says what was pruned" big.dom \
	'<div id="pruned">[0-9,]+ frames narrower than 0.01% of the total are left out \([0-9.]+% of the time is in them\)'

# A tall graph opens at its base.
skip_unless_ptrace
expect_exit 0 "$XPROF" -q record -o deep.data -- "$XP_TARGETS/deep" 200 1
expect_exit 0 "$XPROF" report -i deep.data --flamegraph -o deep.html
expect_exit 0 ./chrome "file://$XP_TMP/deep.html"
cp "$XP_OUT" deep.dom
scroll=$(attr data-xprof-scroll deep.dom)
say "# deep: scrolled to $scroll (scrollY/most)"
[[ $scroll =~ ^([0-9]+)/([0-9]+)$ ]] && ((BASH_REMATCH[2] > 2000 &&
	BASH_REMATCH[1] == BASH_REMATCH[2])) && say "  ok: a tall page opens at its base" ||
	fail "a tall page opened at '$scroll', not at its base"

# A small profile: nothing pruned, nothing said.
expect_exit 0 "$XPROF" -q record -o small.data -- "$XP_TARGETS/ab" -s 0.5
expect_exit 0 "$XPROF" report -i small.data --flamegraph -o small.html
expect_exit 0 ./chrome "file://$XP_TMP/small.html"
cp "$XP_OUT" small.dom
assert_file_matches "no frame pruned" small.html '"pruned":\{"ppm":100,"frames":0,'
assert_file_lacks "no pruning note" small.dom '<html[^>]* data-xprof-pruned='
finish
