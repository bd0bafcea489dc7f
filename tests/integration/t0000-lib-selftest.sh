#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The test library checks itself (git's t0000-basic does the same), because
# every other test's verdict rests on it:
#   - the folded-stack statistics on canned stacks with known answers
#     (consecutive chains, "..." gaps, leaf/root anchoring, negation, a
#     GIVEN condition, anchored names: "a" is not "main", frames with spaces);
#   - the share assertions pass and fail where they should and print the
#     figures both ways;
#   - the file assertions: a file that lacks a pattern passes
#     assert_file_lacks, a missing file fails it;
#   - known_gap passes while its check fails, fails when the check passes
#     (the gap closed) and when the check cannot complete;
#   - expect_exit tells "exited 139" from "killed by SIGSEGV", and a
#     command that cannot be started from one that exits 127;
#   - the readiness FIFO, start_bg/wait_bg, and the EXIT trap that kills
#     what a test started and removes its directory, even when it fails.
# Needs neither ptrace nor a working 'xprof record'.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"

cat >canned.folded <<'EOF'
app;_start;main;work;a;leaf 50
app;_start;main;work;b;leaf 30
app;_start;main;work;c 10
app;_start;main;other;x;y;leaf 5
other;_start;main;Foo::bar(int, char const*);leaf 4
app;main 1
EOF
# 100 samples: 95 from "app", 4 from "other".

stats_is() {
	local want=$1 got
	shift
	got=$(folded_stats canned.folded "$@")
	assert_eq "folded_stats $*" "$got" "$want"
}

say "## folded statistics"
stats_is "100 100 100" all
stats_is "89 100 100" frame:leaf
stats_is "89 100 100" leaf:leaf
stats_is "50 100 100" "chain:main;work;a"
stats_is "90 100 100" "chain:main;work;a|b|c"
stats_is "0 100 100" "chain:main;a"               # not consecutive
stats_is "89 100 100" "chain:main;...;leaf"       # gaps allowed
stats_is "5 100 100" "chain:main;...;x;...;leaf"
stats_is "99 100 100" "chain:main;...;main|leaf|c|x|y|Foo::bar.*"
stats_is "0 100 100" "tail:_start;main"
stats_is "1 100 100" "tail:main"                 # only "app;main" ends there
stats_is "99 100 100" "root:_start;main"
stats_is "95 100 100" "root:_start;main;work|other"
stats_is "1 100 100" "root:main"
stats_is "4 100 100" "comm:other"
stats_is "96 100 100" "!comm:other"
stats_is "0 100 100" "frame:ai"                   # anchored: no partial match
stats_is "4 100 100" "frame:Foo::bar\(int, char const\*\)"
stats_is "84 89 100" "tail:a|b|Foo::bar.*;leaf" leaf:leaf
stats_is "9 89 100" "!tail:a|b;leaf" leaf:leaf
stats_is "0 0 100" "frame:main" "comm:nobody"
stats_is "80 100 100" "stack:;work;(a|b);leaf$"    # the printed stack, an ERE
stats_is "90 100 100" "stack:^app;.*;work;[abc](;leaf)?$"
stats_is "4 100 100" "stack:Foo::bar\(int"          # unanchored
assert_eq "folded_total" "$(folded_total canned.folded)" 100
assert_folded_format canned.folded

out=$(folded_stats canned.folded "bogus" 2>&1) && fail "a bad condition was accepted"
assert_eq "bad condition is reported" "$out" \
	"folded.awk: bad condition 'bogus' (expected KIND:PATTERN or all)"
printf 'app;main 3\nnot folded\n' >bad.folded
out=$(assert_folded_format bad.folded) && true
case $out in
"FAIL: bad.folded is not in folded format:"*"2: not folded") say "  ok: format check rejects a bad line" ;;
*) fail "format check: $out" ;;
esac

say "## share assertions"
fails_before=$XP_FAILS
out=$(assert_share_between "a" 46 54 canned.folded "chain:main;work;a")
assert_eq "share inside the range passes" "$out" \
	"  ok: a: 50.0% (50/100 samples; want 46..54%)"
out=$(assert_share_between "a" 60 70 canned.folded "chain:main;work;a")
assert_eq "share outside the range fails" "$out" \
	"FAIL: a: 50.0% (50/100 samples; want 60..70%)"
out=$(assert_share_at_least "caller" 95 canned.folded "tail:a|b;leaf" leaf:leaf)
assert_eq "a GIVEN condition is named" "$out" \
	"FAIL: caller: 89.9% (80/89 samples of 89 matching leaf:leaf; want 95..100%)"
out=$(assert_share_at_least "none" 1 canned.folded "frame:x" "comm:nobody")
assert_eq "no sample to consider fails" "$out" \
	"FAIL: none: no samples to consider (100 in total of 0 matching comm:nobody)"
out=$(assert_samples_at_least "enough" 101 canned.folded)
assert_eq "sample count" "$out" "FAIL: enough: 100 samples (want >= 101)"
assert_eq "failures in subshells did not count here" "$XP_FAILS" "$fails_before"

say "## file assertions"
fails_before=$XP_FAILS
printf 'alpha\nbeta\n' >ab.txt
out=$(assert_file_lacks "no gamma" ab.txt 'gamma')
assert_eq "a file without the pattern passes" "$out" "  ok: no gamma"
out=$(assert_file_lacks "no beta" ab.txt '^beta$')
case $out in
"FAIL: no beta: ab.txt has a line matching /^beta\$/"*) say "  ok: a file with the pattern fails" ;;
*) fail "assert_file_lacks on a matching file: $out" ;;
esac
out=$(assert_file_lacks "nothing" missing.txt 'gamma')
assert_eq "a missing file fails" "$out" "FAIL: nothing: no file missing.txt to look in"
out=$(assert_file_matches "alpha" missing.txt 'alpha')
case $out in
"FAIL: alpha: no line of missing.txt matches /alpha/"*) say "  ok: a missing file has no match" ;;
*) fail "assert_file_matches on a missing file: $out" ;;
esac
assert_eq "failures in subshells did not count here" "$XP_FAILS" "$fails_before"

say "## known gaps"
fails_before=$XP_FAILS
gaps_before=$XP_GAPS
out=$(
	known_gap "the a share is low" assert_share_between "a" 60 70 canned.folded "chain:main;work;a"
	echo "fails $XP_FAILS gaps $XP_GAPS"
)
assert_eq "a failing check is a known gap, not a failure" "${out//$'\n'/ | }" \
	"  known gap: the a share is low: a: 50.0% (50/100 samples; want 60..70%) | fails $fails_before gaps $((gaps_before + 1))"
out=$(
	known_gap "the a share is low" assert_share_between "a" 46 54 canned.folded "chain:main;work;a"
	echo "fails $XP_FAILS gaps $XP_GAPS"
)
assert_eq "a passing check fails the test, saying the gap closed" "${out//$'\n'/ | }" \
	"  ok: a: 50.0% (50/100 samples; want 46..54%) | FAIL: known gap closed: the a share is low: the check passes: remove known_gap from it | fails $((fails_before + 1)) gaps $gaps_before"
out=$(
	known_gap "no file" assert_share_between "x" 1 2 missing.folded "frame:x" 2>/dev/null
	echo "fails $XP_FAILS gaps $XP_GAPS"
)
case ${out//$'\n'/ | } in
"FAIL: known gap: no file: the check did not complete: assert_share_between x 1 2 missing.folded frame:x"*"fails $((fails_before + 1)) gaps $gaps_before")
	say "  ok: a check that cannot complete fails" ;;
*) fail "known_gap on a check that ends the subshell: $out" ;;
esac
out=$(
	known_gap "misspelt" no_such_check_xp 2>/dev/null
	echo "fails $XP_FAILS gaps $XP_GAPS"
)
case ${out//$'\n'/ | } in
"FAIL: known gap: misspelt: the check did not complete: no_such_check_xp"*"fails $((fails_before + 1)) gaps $gaps_before")
	say "  ok: a check that returns non-zero fails" ;;
*) fail "known_gap on a check that returns non-zero: $out" ;;
esac
assert_eq "failures in subshells did not count here" "$XP_FAILS" "$fails_before"
cat >gap.sh <<EOF
. "$XP_SRC/tests/lib/lib.sh"
known_gap "always" fail "on purpose"
finish
EOF
expect_exit 0 bash gap.sh
assert_file_matches "finish names the open gap" "$XP_OUT" '^PASS: gap \(1 known gap\(s\) still open\)$'

say "## flat reports"
# As printed by 'xprof report --flat' (report/out_flat.c); names may hold spaces.
cat >canned.flat <<'EOF2'
# Samples: 100, weight: 1000
#
#   Self%    Total%      Self     Total  Function
   60.00%    60.00%        55        55  thread_work
   25.50%    25.50%        30        30  [syscall] 230
    0.00%    85.50%         0        85  main
    0.00%    14.50%         0        15  Foo::bar(int, char const*)
EOF2
assert_eq "flat_share self" "$(flat_share canned.flat self thread_work)" 60.00
assert_eq "flat_share total" "$(flat_share canned.flat total main)" 85.50
assert_eq "flat_share, a name with spaces" \
	"$(flat_share canned.flat total 'Foo::bar(int, char const*)')" 14.50
assert_eq "flat_share, a name with a space" "$(flat_share canned.flat self '[syscall] 230')" 25.50
assert_eq "flat_share, exact names only" "$(flat_share canned.flat self thread)" 0
fails_before=$XP_FAILS
out=$(assert_flat_between "main" 80 90 canned.flat total main)
assert_eq "flat share inside the range passes" "$out" \
	"  ok: main: 85.5% of the weight (total; want 80..90%)"
out=$(assert_flat_between "absent" 1 100 canned.flat self nothing)
assert_eq "an absent function is 0%" "$out" \
	"FAIL: absent: 0.0% of the weight (self; want 1..100%)"
assert_eq "failures in subshells did not count here" "$XP_FAILS" "$fails_before"

say "## exit statuses"
expect_exit 0 true
expect_exit 139 sh -c 'exit 139'
expect_exit "signal 11" "$XP_TARGETS/exits" signal 11
out=$(expect_exit 139 "$XP_TARGETS/exits" signal 11) && fail "a SIGSEGV passed as exit 139"
case $out in
*"FAIL: expected exit 139, got 'signal 11'"*) say "  ok: death by SIGSEGV is not exit 139" ;;
*) fail "expect_exit on a signal: $out" ;;
esac
out=$(expect_exit 127 /nonexistent/xprof-selftest) && fail "a missing command passed"
case $out in
*"got 'noexec cannot run '/nonexistent/xprof-selftest': No such file or directory'"*)
	say "  ok: a command that cannot run is not exit 127" ;;
*) fail "expect_exit on a missing command: $out" ;;
esac
expect_exit 3 sh -c 'echo out; echo err >&2; exit 3'
assert_eq "stdout captured" "$(cat "$XP_OUT")" out
assert_eq "stderr captured" "$(cat "$XP_ERR")" err
out=$(XP_CMD_TIMEOUT=1 expect_exit 0 sleep 30) && fail "a timeout passed"
case $out in
*"got 'timeout 1 signal 15'"*) say "  ok: a command past XP_CMD_TIMEOUT is stopped" ;;
*) fail "timeout: $out" ;;
esac

say "## readiness, background commands and the EXIT trap"
ready_init
start_bg split "$XP_TARGETS/split" 0.2
wait_ready 1 30
case ${XP_READY_LINES[0]} in
"ready $XP_READY_PID split work") say "  ok: ready line from pid $XP_READY_PID" ;;
*) fail "ready line: ${XP_READY_LINES[0]}" ;;
esac
wait_bg split 0

# A nested test that starts a target, then fails: its trap must kill the
# target and remove its directory.
cat >nested.sh <<EOF
. "$XP_SRC/tests/lib/lib.sh"
ready_init
start_bg deep "$XP_TARGETS/deep" 10 60
wait_ready
echo "nested-tmp \$XP_TMP"
fail "on purpose"
finish
EOF
expect_exit 1 env -u XP_READY_FIFO bash nested.sh
read -r _ nested_pid _ < <(grep '^  ready ' "$XP_OUT")
read -r _ nested_tmp < <(grep '^nested-tmp ' "$XP_OUT")
if [[ -z ${nested_pid:-} ]]; then
	fail "no ready line from the nested test"
	show_file "nested stdout" "$XP_OUT"
elif kill -0 "$nested_pid" 2>/dev/null; then
	fail "the nested test left its target $nested_pid running"
	kill -KILL "$nested_pid"
else
	say "  ok: the nested test's target $nested_pid was killed"
fi
if [[ -e ${nested_tmp:-/nonexistent} ]]; then
	fail "the nested test left $nested_tmp behind"
else
	say "  ok: the nested test's directory was removed"
fi
assert_file_matches "the nested failure is reported" "$XP_OUT" \
	'^FAIL: nested: 1 assertion\(s\) failed$'

finish
