#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# report --flamegraph on a real recording of the 50/30/20 'shares' target,
# rendered by a real headless Chromium: the page's script runs without a
# console message (errors, CSP refusals), draws the frames (it sets
# data-xprof-ready), work_fifty is drawn with 50 +- 5% and the page's own
# search gives the same share as our flat report; #zoom= zooms; hover,
# click, the search box and Escape work through the page's own event
# handlers (driven by a script added to a copy of the page).  The file
# must be self-contained: no src/href/url()/@import, no address but the SVG
# namespace, default-src 'none'.  Screenshots are kept as artifacts in
# $XP_BUILD/test-artifacts/t3030-report-flamegraph/.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"

skip_unless_ptrace
CHROMIUM=${CHROMIUM:-}
for c in chromium chromium-browser google-chrome; do
	[[ $CHROMIUM ]] || CHROMIUM=$(command -v "$c" || true)
done
[[ $CHROMIUM ]] || skip "chromium not found (Debian package: chromium)"

# chrome ARGS...: headless Chromium as root may run it, with nothing that
# talks to the network, console messages logged to stderr.
chrome() {
	timeout -k 5 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic \
		--no-first-run --disable-background-networking --disable-component-update \
		--disable-sync --user-data-dir="$(mktemp -d -p "$XP_TMP")" \
		--enable-logging=stderr --v=0 --window-size=1200,700 "$@"
}

expect_exit 0 "$XPROF" -q record -o shares.data -- "$XP_TARGETS/shares" -s 1.5
check_exit 0 "$XPROF" report -i shares.data --flat -o flat.txt
check_exit 0 "$XPROF" report -i shares.data --flamegraph -o shares.html
cp flat.txt shares.html "$XP_ARTIFACTS/"
page=file://$XP_TMP/shares.html

# Self-contained.
head -n1 shares.html | grep -qx '<!DOCTYPE html>' || fail "not an HTML document"
grep -q "content=\"default-src 'none'" shares.html || fail "no Content-Security-Policy"
grep -Eiq '(src|href)=|url\(|@import' shares.html && fail "a reference to an external resource"
urls=$(grep -Eo 'https?://[^"'"'"' <)]*' shares.html | sort -u | tr '\n' ' ' || true)
[[ $urls == "http://www.w3.org/2000/svg " ]] && say "ok: no address but the SVG namespace" ||
	fail "addresses in the page: $urls"

# The script must run cleanly: the positive control proves console output is seen.
printf '<!DOCTYPE html><script>console.error("xprof-canary")</script>\n' >canary.html
check_exit 0 chrome --dump-dom "file://$XP_TMP/canary.html"
grep -q 'CONSOLE.*xprof-canary' "$XP_ERR" || fail "this Chromium does not log console messages; cannot check for errors"

check_exit 0 chrome --dump-dom "$page"
cp "$XP_OUT" dom.html
cp dom.html "$XP_ARTIFACTS/dom.html"
if grep -q ':CONSOLE' "$XP_ERR"; then
	fail "the page wrote to the console:"
	grep ':CONSOLE' "$XP_ERR" | head -n 5
fi
drawn=$(sed -n 's/.*<html[^>]* data-xprof-ready="\([0-9]*\)".*/\1/p' dom.html | head -n1)
assert_within "frames drawn" "$drawn" 5 100000
# <g class="f" data-i=N data-name=NAME data-pct=PCT>: the share of each drawn frame.
grep -Eo '<g class="f[^"]*" data-i="[0-9]+" data-name="[^"]*" data-pct="[0-9.]+"' dom.html |
	sed -E 's/.*data-name="([^"]*)" data-pct="([0-9.]+)"/\2 \1/' | sort -rn >frames.txt || true
show_file "drawn frames" frames.txt 8
fifty=$(awk '$2 == "work_fifty" { s += $1 } END { print s }' frames.txt)
assert_within "drawn share of work_fifty" "$fifty" 45 55
grep -q ' run_rounds$' frames.txt || fail "run_rounds is not drawn"
grep -q ' main$' frames.txt || fail "main is not drawn"

# The page's search computes the share of the matching frames over the whole tree.
for fn in work_fifty work_thirty work_twenty; do
	check_exit 0 chrome --dump-dom "$page#search=%5E$fn%24"
	match=$(sed -n 's/.*<html[^>]* data-xprof-match="\([0-9.]*\)".*/\1/p' "$XP_OUT" | head -n1)
	ours=$(flat_share flat.txt total "$fn")
	say "# $fn: flat Total% $ours, flame graph search $match"
	assert_within "flame graph share of $fn minus ours" \
		"$(awk -v a="$match" -v b="$ours" 'BEGIN { print a - b }')" -0.011 0.011
done

# Zoom: work_fifty fills the width; its siblings are gone.
check_exit 0 chrome --dump-dom "$page#zoom=work_fifty"
grep -q 'data-xprof-zoom="work_fifty"' "$XP_OUT" || fail "#zoom did not zoom"
width=$(grep -Eo 'data-name="work_fifty" data-pct="[0-9.]+"><title>[^<]*</title><rect x="0.0" y="[0-9.]+" width="[0-9.]+"' "$XP_OUT" |
	sed -E 's/.*width="([0-9.]+)"/\1/' | head -n1 || true)
assert_within "zoomed work_fifty width (px of 1200)" "$width" 1190 1200
grep -q 'data-name="work_thirty"' "$XP_OUT" && fail "work_thirty still drawn when zoomed on work_fifty"

# Hover, click, search and Escape through the page's own handlers: a copy of
# the page with a script after the page's that sends the events.
cat >drive.js <<'JS'
<script>
(function () {
	var html = document.documentElement, rect = document.querySelector('g.f[data-name="work_fifty"] rect');
	var search = document.getElementById("search");

	rect.dispatchEvent(new MouseEvent("mouseover", {bubbles: true}));
	html.setAttribute("data-test-details", document.getElementById("details").textContent);
	rect.dispatchEvent(new MouseEvent("click", {bubbles: true}));
	html.setAttribute("data-test-zoom", html.getAttribute("data-xprof-zoom"));
	search.value = "^work_thirty$";
	search.dispatchEvent(new Event("input"));
	html.setAttribute("data-test-match", document.getElementById("matched").textContent);
	document.dispatchEvent(new KeyboardEvent("keydown", {key: "Escape"}));
	html.setAttribute("data-test-reset", html.getAttribute("data-xprof-zoom"));
})();
</script>
JS
sed '/^<\/body>$/{
r drive.js
N
}' shares.html >driven.html
grep -q 'data-test-details' driven.html || fail "could not add the driving script"
check_exit 0 chrome --dump-dom "file://$XP_TMP/driven.html"
grep -q ':CONSOLE' "$XP_ERR" && fail "console output while driving: $(grep -m1 ':CONSOLE' "$XP_ERR")"
attr() {
	sed -n "s/.*<html[^>]* $1=\"\([^\"]*\)\".*/\1/p" "$XP_OUT" | head -n1
}
say "# hover: $(attr data-test-details)"
say "# click: $(attr data-test-zoom); search: $(attr data-test-match); Escape: $(attr data-test-reset)"
[[ $(attr data-test-details) == "work_fifty — "*" samples, "*"% of all"* ]] ||
	fail "hover details: '$(attr data-test-details)'"
[[ $(attr data-test-zoom) == work_fifty ]] || fail "click did not zoom on work_fifty"
[[ $(attr data-test-match) == "Matched: $(flat_share flat.txt total work_thirty)%" ]] ||
	fail "search box: '$(attr data-test-match)', flat Total% $(flat_share flat.txt total work_thirty)"
[[ $(attr data-test-reset) == all ]] || fail "Escape did not zoom out"

# Screenshots for people.
check_exit 0 chrome --screenshot="$XP_ARTIFACTS/flamegraph.png" "$page"
check_exit 0 chrome --screenshot="$XP_ARTIFACTS/flamegraph-search.png" "$page#search=work_"
for png in flamegraph.png flamegraph-search.png; do
	size=$(stat -c %s "$XP_ARTIFACTS/$png" 2>/dev/null || echo 0)
	assert_within "$png bytes" "$size" 2000 100000000
done
say "# screenshots in $XP_ARTIFACTS"
finish
