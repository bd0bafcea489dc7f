#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# report --speedscope on a real recording of 'shares' with two working
# threads, checked against the essentials of speedscope's file format
# (jlfwong/speedscope src/lib/file-format-spec.ts) by python3's json
# module: the $schema, shared.frames of {name}, one "sampled" profile per
# thread named comm/tid with unit, endValue - startValue = sum of weights,
# as many weights as samples, every frame index valid.  The shares computed
# from the file (leaf weight over all weight) must match our flat report,
# and work_fifty must be 50 +- 5%.  --per-thread adds the comm/tid root and
# --tid keeps one profile.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"

skip_unless_ptrace
require_cmd python3 python3

expect_exit 0 "$XPROF" -q record -o shares.data -- "$XP_TARGETS/shares" -s 1.5 -t 2
check_exit 0 "$XPROF" report -i shares.data --flat -o flat.txt
check_exit 0 "$XPROF" report -i shares.data --speedscope -o shares.speedscope.json
check_exit 0 "$XPROF" report -i shares.data --per-thread --folded --value samples -o threads.folded
cp flat.txt shares.speedscope.json "$XP_ARTIFACTS/"

# check.py FILE [ROOTS]: validate, print "threads N" and "share NAME PCT" lines.
cat >check.py <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
roots = len(sys.argv) > 2
def need(cond, what):
    if not cond:
        print("invalid: " + what)
        sys.exit(1)
need(d.get("$schema") == "https://www.speedscope.app/file-format-schema.json", "$schema")
frames = d["shared"]["frames"]
need(isinstance(frames, list) and frames, "shared.frames")
need(all(isinstance(f, dict) and isinstance(f.get("name"), str) for f in frames), "frame names")
profiles = d["profiles"]
need(isinstance(profiles, list) and profiles, "profiles")
need(0 <= d.get("activeProfileIndex", 0) < len(profiles), "activeProfileIndex")
weight, leaf = 0, {}
for p in profiles:
    need(p["type"] == "sampled", "type")
    need(re.fullmatch(r".+/[0-9]+", p["name"]) is not None, "profile name comm/tid: " + p["name"])
    need(p["unit"] in ("nanoseconds", "none"), "unit")
    need(len(p["samples"]) == len(p["weights"]), "samples and weights")
    need(p["startValue"] >= 0 and p["endValue"] - p["startValue"] == sum(p["weights"]), "start/endValue")
    for s, w in zip(p["samples"], p["weights"]):
        need(all(isinstance(i, int) and 0 <= i < len(frames) for i in s), "frame index")
        need(isinstance(w, int) and w >= 0, "weight")
        if roots:
            need(s and frames[s[0]]["name"] == p["name"], "root frame " + p["name"])
        weight += w
        if s:
            name = frames[s[-1]]["name"]
            leaf[name] = leaf.get(name, 0) + w
print("threads %d" % len(profiles))
for name, w in sorted(leaf.items()):
    print("share %s %.2f" % (name, 100.0 * w / weight))
PY

check_exit 0 python3 check.py shares.speedscope.json
cp "$XP_OUT" check.txt
show_file "check.py" check.txt 12
threads=$(awk '/^threads/ { print $2 }' check.txt)
want=$(cut -d';' -f1 threads.folded | sort -u | wc -l)
[[ $threads == "$want" ]] && say "ok: $threads profiles, one per thread" ||
	fail "$threads profiles for $want threads"
((threads >= 2)) || fail "fewer than the 2 working threads: $threads"
for fn in work_fifty work_thirty work_twenty; do
	theirs=$(awk -v f="$fn" '$1 == "share" && $2 == f { print $3 }' check.txt)
	ours=$(flat_share flat.txt self "$fn")
	say "# $fn: flat Self% $ours, speedscope leaf share $theirs"
	assert_within "speedscope share of $fn minus ours" \
		"$(awk -v a="$theirs" -v b="$ours" 'BEGIN { print a - b }')" -0.02 0.02
done
assert_within "speedscope share of work_fifty" \
	"$(awk '$1 == "share" && $2 == "work_fifty" { print $3 }' check.txt)" 45 55

# --per-thread: every stack starts with its thread's comm/tid frame.
check_exit 0 "$XPROF" report -i shares.data --speedscope --per-thread -o roots.json
check_exit 0 python3 check.py roots.json roots

# --tid: one thread, one profile.
tid=$(head -n1 threads.folded | cut -d';' -f1 | sed 's|.*/||')
check_exit 0 "$XPROF" report -i shares.data --speedscope --tid "$tid" -o one.json
check_exit 0 python3 check.py one.json
grep -qx 'threads 1' "$XP_OUT" && say "ok: --tid $tid gives one profile" || fail "--tid $tid: $(head -n1 "$XP_OUT")"
finish
