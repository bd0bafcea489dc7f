#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# report --tree and the options of --flat and --tree on a real recording of
# 'shares' with three working threads and an idle one, and the filters in
# every format: --tid keeps one thread (same sample count in flat, tree,
# folded, flame graph and pprof), --pid and --comm of the process keep
# everything, names that match nothing are an error (exit 1), --per-thread
# puts comm/tid at the root, with the names the threads gave themselves.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"

skip_unless_ptrace
expect_exit 0 "$XPROF" -q record -o shares.data -- "$XP_TARGETS/shares" -s 1 -t 3 -i
check_exit 0 "$XPROF" report -i shares.data -o flat.txt
check_exit 0 "$XPROF" report -i shares.data --tree -o tree.txt
check_exit 0 "$XPROF" report -i shares.data --per-thread --folded --value samples -o threads.folded
cp flat.txt tree.txt threads.folded "$XP_ARTIFACTS/"
show_file "tree" tree.txt 24

# samples FILE: the count in a flat or tree header.
samples() {
	awk '/^# Samples:/ { sub(",", "", $3); print $3; exit }' "$1"
}
all=$(samples flat.txt)
[[ $(samples tree.txt) == "$all" ]] || fail "tree and flat count differently: $(samples tree.txt) vs $all"
head -n3 tree.txt | tail -n1 | grep -qx '#  Total%     Self%   Samples  Call tree (callers above callees)' ||
	fail "tree header"
# work_fifty is a leaf: its tree entries add up to its flat Total%.
sum=$(awk '!/^#/ && $NF == "work_fifty" { sub("%", "", $1); s += $1 } END { print s }' tree.txt)
flat=$(flat_share flat.txt total work_fifty)
assert_within "tree entries of work_fifty minus flat Total%" \
	"$(awk -v a="$sum" -v b="$flat" 'BEGIN { print a - b }')" -0.1 0.1
grep -Eq '^ +[0-9.]+% +[0-9.]+% +[0-9]+  (\|  |   )*[|`]- run_rounds$' tree.txt ||
	fail "no run_rounds entry under a caller"

# --limit 1: one entry per level, and the comment counting the others.
check_exit 0 "$XPROF" report -i shares.data --tree --limit 1 -o limit.txt
# Entries start at column 32, after the three numbers; a callee's with a branch.
top=$(awk '!/^#/ { c = substr($0, 32, 1); if (c != " " && c != "|" && c != "`") n++ } END { print n + 0 }' limit.txt)
[[ $top == 1 ]] || fail "--tree --limit 1 shows $top top-level entries"
grep -Eq '^# [0-9]+ more entries below --min-percent or past --limit$' limit.txt ||
	fail "no comment on the entries left out"
# --min-percent 10: every entry shown has a Total% of 10 or more.
check_exit 0 "$XPROF" report -i shares.data --tree --min-percent 10 -o min.txt
low=$(awk '!/^#/ { sub("%", "", $1); if ($1 + 0 < 10) n++ } END { print n + 0 }' min.txt)
[[ $low == 0 ]] || fail "--min-percent 10 shows $low entries below 10%"
# --flat: --limit 2 is two rows; --min-percent 40 keeps work_fifty alone.
check_exit 0 "$XPROF" report -i shares.data --flat --limit 2 -o flat2.txt
rows=$(grep -vc '^#' flat2.txt || true)
[[ $rows == 2 ]] || fail "--limit 2 printed $rows rows"
check_exit 0 "$XPROF" report -i shares.data --flat --min-percent 40 -o flat40.txt
[[ $(grep -v '^#' flat40.txt | awk '{ print $NF }') == work_fifty ]] ||
	fail "--min-percent 40: $(grep -v '^#' flat40.txt | awk '{ print $NF }' | tr '\n' ' ')"
check_exit 0 "$XPROF" report -i shares.data --flat --sort total -o total.txt
[[ $(grep -v '^#' total.txt | head -n1 | awk '{ print $2 }') == 100.00% ]] ||
	say "# note: no function in every stack (first row: $(grep -v '^#' total.txt | head -n1))"
check_exit 2 "$XPROF" report -i shares.data --folded --value samples --sort self

# Threads: 3 working, each root comm/tid; the idle one, blocked in read(2),
# uses no CPU once blocked, so in cpu mode it gets at most the sample or
# two a tick may take while it starts (a slow, sanitized xprof sees that).
ntid=$(cut -d';' -f1 threads.folded | sort -u | wc -l)
assert_within "threads seen" "$ntid" 3 4
nidle=$(awk '/^idle\// { n += $NF } END { print n + 0 }' threads.folded)
assert_within "samples of the idle thread" "$nidle" 0 3
# The workers name themselves as they start (shares-1, shares-2; the first
# thread works as worker 0 under the process's name), after their thread
# records were written with the name they inherited: their samples carry
# their own names, since the recorder reads the names again at each
# thread's first samples.  A tick may take a worker in the microseconds
# before it renames itself: a sample or two each under the inherited name
# is that; without the early reads it keeps it for ~1,000 samples, until
# the names are read again a second later.
named=$(grep -o '^shares-[0-9]*/' threads.folded | sort -u | tr -d '\n')
[[ $named == shares-1/shares-2/ ]] || fail "workers under their own names: '$named', expected shares-1/ and shares-2/"
first=$(cut -d';' -f1 threads.folded | sed 's|.*/||' | sort -n | head -n1)
inherited=$(awk -v first="$first" '{ split($1, r, "[/;]") }
	r[1] == "shares" && r[2] != first { n += $NF } END { print n + 0 }' threads.folded)
assert_within "workers' samples under the inherited name 'shares'" "$inherited" 0 4
bad=$(grep -Evc '^[^;/]+/[0-9]+;' threads.folded || true)
[[ $bad == 0 ]] || fail "$bad folded lines without a comm/tid root"
pid=$(cut -d';' -f1 threads.folded | sed 's|.*/||' | sort -n | head -n1)
tid=$(cut -d';' -f1 threads.folded | sed 's|.*/||' | sort -n | tail -n1)
say "# process $pid, a thread $tid"

check_exit 0 "$XPROF" report -i shares.data --pid "$pid" -o pid.txt
[[ $(samples pid.txt) == "$all" ]] || fail "--pid $pid: $(samples pid.txt) samples of $all"
check_exit 0 "$XPROF" report -i shares.data --comm nosuch,shares -o comm.txt
[[ $(samples comm.txt) == "$all" ]] || fail "--comm shares: $(samples comm.txt) samples of $all"
check_exit 1 "$XPROF" report -i shares.data --comm nosuch
grep -q "^xprof: error: no samples in 'shares.data' pass the filters" "$XP_ERR" || fail "no filter error"
check_exit 1 "$XPROF" report -i shares.data --pid 1 --speedscope -o none.json
[[ -e none.json ]] && fail "a report was written though no sample passed"

# --tid in every format: the same samples.
check_exit 0 "$XPROF" report -i shares.data --tid "$tid" -o tid-flat.txt
n=$(samples tid-flat.txt)
assert_within "samples of thread $tid" "$n" 1 $((all - 1))
check_exit 0 "$XPROF" report -i shares.data --tid "$tid" --tree -o tid-tree.txt
[[ $(samples tid-tree.txt) == "$n" ]] || fail "--tree --tid: $(samples tid-tree.txt) samples, flat $n"
check_exit 0 "$XPROF" report -i shares.data --tid "$tid" --folded --value samples --per-thread -o tid.folded
folded=$(awk '{ s += $NF } END { print s }' tid.folded)
[[ $folded == "$n" ]] || fail "--folded --tid: $folded samples, flat $n"
grep -vq "^[^;]*/$tid;" tid.folded && fail "--folded --tid $tid shows other threads"
check_exit 0 "$XPROF" report -i shares.data --tid "$tid" --flamegraph -o tid.html
grep -q "^-1,-1,[0-9]*,[0-9]*,$n,\$" tid.html || fail "--flamegraph --tid: root count is not $n"
if command -v go >/dev/null; then
	export GOCACHE=$XP_TMP/gocache HOME=${HOME:-$XP_TMP}
	check_exit 0 "$XPROF" report -i shares.data --tid "$tid" --pprof -o tid.pb.gz
	check_exit 0 go tool pprof -top -sample_index=samples -symbolize=none tid.pb.gz
	total=$(sed -n "s/^Showing nodes accounting for .* of \([0-9]*\) total$/\1/p" "$XP_OUT")
	[[ $total == "$n" ]] || fail "--pprof --tid: pprof counts '$total' samples, flat $n"
else
	say "# go not found (golang-go): pprof filter not checked"
fi
finish
