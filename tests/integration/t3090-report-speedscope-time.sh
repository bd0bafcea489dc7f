#!/bin/bash
# SPDX-License-Identifier: MIT
# report --speedscope keeps the time order: on the 'ab' target in phase
# mode (hot_a alone for the first second, then hot_b alone), each thread's
# sampled profile lists its samples in time order, so every hot_a sample
# comes before every hot_b sample and each has about half of the weight;
# --time narrows it; the file validates against speedscope's own schema
# (file-format-schema.json of the npm package, when python3's jsonschema
# is there); and speedscope's app itself (the npm package, fetched by
# scripts/deps.sh --test) imports it in a real headless Chromium, served
# from a local HTTP server, opening on its "Time Order" view with the
# thread's profile (a screenshot is kept in $XP_BUILD/test-artifacts).
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"

skip_unless_ptrace
ARTIFACTS=$XP_BUILD/test-artifacts/$XP_TEST
mkdir -p "$ARTIFACTS"
expect_exit 0 "$XPROF" -q record -o ab.data -- "$XP_TARGETS/ab" -p -a 50 -s 2
expect_exit 0 "$XPROF" report -i ab.data --speedscope -o ab.json
expect_exit 0 "$XPROF" report -i ab.data --speedscope --time 60%, -o late.json

cat >order.py <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
frames = d["shared"]["frames"]
for p in d["profiles"]:
    leaves = [frames[s[-1]]["name"] if s else "" for s in p["samples"]]
    w = dict(zip(("hot_a", "hot_b"), (0, 0)))
    for name, weight in zip(leaves, p["weights"]):
        if name in w:
            w[name] += weight
    total = sum(p["weights"])
    a = [i for i, n in enumerate(leaves) if n == "hot_a"]
    b = [i for i, n in enumerate(leaves) if n == "hot_b"]
    print("profile %s samples %d runs_a %d runs_b %d last_a %d first_b %d share_a %.1f share_b %.1f"
          % (p["name"], len(leaves), len(a), len(b), a[-1] if a else -1, b[0] if b else -1,
             100.0 * w["hot_a"] / total, 100.0 * w["hot_b"] / total))
PY
expect_exit 0 python3 order.py ab.json
cp "$XP_OUT" order.txt
show_file order.py-output order.txt
read -r _ name _ n _ runs_a _ runs_b _ last_a _ first_b _ share_a _ share_b <order.txt
say "# $name: $n samples after merging runs; hot_a in $runs_a run(s), hot_b in $runs_b"
((runs_a >= 1 && runs_b >= 1 && last_a < first_b)) &&
	say "  ok: every hot_a sample comes before every hot_b sample" ||
	fail "not in time order: last hot_a at $last_a, first hot_b at $first_b"
# Runs of one stack are merged: two phases give few samples, not one per tick.
((n < 50)) && say "  ok: $n samples (runs merged)" || fail "$n samples: runs not merged"
# The phases are of elapsed time, so their CPU shares depend on the load:
# only the whole is known, flat's weight.
say "# hot_a $share_a%, hot_b $share_b% of the CPU time"
expect_exit 0 "$XPROF" report -i ab.data --flat -o flat.txt
weight=$(sed -n 's/^# Samples: [0-9]*, weight: \([0-9]*\)$/\1/p' flat.txt)
expect_exit 0 python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["profiles"]
print(sum(sum(x["weights"]) for x in p), all(x["endValue"] - x["startValue"] == sum(x["weights"]) for x in p))' ab.json
assert_eq "speedscope's weights: flat's weight, endValue - startValue" "$(cat "$XP_OUT")" "$weight True"
expect_exit 0 python3 order.py late.json
read -r _ _ _ _ _ runs_a _ runs_b _ <"$XP_OUT"
((runs_a == 0 && runs_b >= 1)) && say "  ok: --time 60%, keeps hot_b only" ||
	fail "--time 60%,: hot_a runs $runs_a, hot_b runs $runs_b"

ss=${XP_SPEEDSCOPE:-${XP_CACHE:-${HOME:-/root}/.cache/xprof}/speedscope-1.25.0/package/dist/release}
[[ -e $ss/index.html ]] || skip "speedscope's app not found in $ss (scripts/deps.sh --test fetches it)"
if python3 -c 'import jsonschema' 2>/dev/null; then
	expect_exit 0 python3 -c '
import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))' \
		"$ss/file-format-schema.json" ab.json
	say "  ok: ab.json is valid by speedscope's file-format-schema.json"
else
	say "# python3 jsonschema not installed: schema not checked"
fi

CHROMIUM=
for c in chromium chromium-browser google-chrome; do
	[[ $CHROMIUM ]] || CHROMIUM=$(command -v "$c" || true)
done
[[ $CHROMIUM ]] || skip "chromium not found (Debian package: chromium)"
mkdir www
cp -r "$ss" www/speedscope
cp ab.json www/
start_bg http python3 -u -m http.server 0 --bind 127.0.0.1 --directory www
port=
for ((i = 0; i < 300 && !port; i++)); do
	port=$(sed -n 's/.* port \([0-9]*\) .*/\1/p' http.out)
	[[ $port ]] || sleep 0.1 # polling for its readiness line
done
[[ $port ]] || fail_now "the HTTP server did not start: $(cat http.err)"
url="http://127.0.0.1:$port/speedscope/index.html#profileURL=http://127.0.0.1:$port/ab.json"
# ./chrome ARGS...: headless Chromium, nothing that talks to the network but to the local server.
cat >chrome <<SH
#!/bin/bash
exec timeout -k 5 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic \\
	--no-first-run --disable-background-networking --disable-component-update \\
	--disable-sync --user-data-dir="\$(mktemp -d -p "$XP_TMP")" --enable-logging=stderr \\
	--v=0 --window-size=1400,600 --virtual-time-budget=5000 "\$@"
SH
chmod +x chrome
expect_exit 0 ./chrome --dump-dom "$url"
cp "$XP_OUT" dom.html
cp "$XP_ERR" console.txt
assert_file_matches "speedscope imported the file" console.txt 'CONSOLE.*Importing as speedscope json file'
assert_file_lacks "speedscope reported no error" console.txt 'CONSOLE.*([Ee]rror|[Ff]ailed|[Uu]nrecognized)'
assert_file_matches "speedscope shows the Time Order view" dom.html 'Time Order'
assert_file_matches "speedscope names the thread's profile" dom.html "$name"
expect_exit 0 ./chrome --screenshot="$ARTIFACTS/speedscope-time-order.png" "$url"
size=$(stat -c %s "$ARTIFACTS/speedscope-time-order.png" 2>/dev/null || echo 0)
((size > 2000)) && say "  ok: screenshot in $ARTIFACTS ($size bytes)" || fail "no screenshot"
finish
