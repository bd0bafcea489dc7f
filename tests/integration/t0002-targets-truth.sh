#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The target programs are what the other tests' truths rest on, so check
# them without xprof:
#   - each target (both builds) exits as documented and prints the same
#     line whatever the duration and whichever build (so "output identical
#     to an unprofiled run" is a meaningful assertion), with mismatches=0;
#   - each announces readiness on $XP_READY_FIFO with its pid and role;
#   - the compiled code has the shape the tests assume (x86-64 only): split's
#     leaf has no frame even in the frame-pointer build, a/b/c/work have
#     one, calls are real calls (not tail jumps), descend really recurses;
#     every function a test names exists under its own name in both builds;
#   - execer's chain of execs ends in its last image, through links too;
#   - exits ends with the status asked for; sigtarget counts queued signals
#     and SIGSTOP/SIGCONT cycles exactly.
# Needs neither ptrace nor xprof record.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"

T=$XP_TARGETS
ready_init

# expect_ready PROG:ROLE...: the next readiness lines come from these
# programs and roles, in any order, from distinct pids.
expect_ready() {
	local line pid prog role got want
	local -A pids=()
	wait_ready $# 10
	got=$(for line in "${XP_READY_LINES[@]: -$#}"; do
		read -r _ pid prog role <<<"$line"
		echo "$prog:$role"
	done | sort | tr '\n' ' ')
	for line in "${XP_READY_LINES[@]: -$#}"; do
		read -r _ pid _ <<<"$line"
		pids[$pid]=1
	done
	want=$(printf '%s\n' "$@" | sort | tr '\n' ' ')
	assert_eq "readiness" "${got% }" "${want% }"
	assert_eq "readiness lines from distinct pids" "${#pids[@]}" "$#"
}

# same_output NAME CMD1... -- CMD2...: both exit 0 with identical stdout,
# matching the ERE in $pattern, with nothing on stderr.
same_output() {
	local name=$1 first=() second=()
	shift
	while [[ $1 != -- ]]; do
		first+=("$1")
		shift
	done
	shift
	second=("$@")
	expect_exit 0 "${first[@]}"
	cp "$XP_OUT" "$name.1"
	assert_file_empty "$name: nothing on stderr" "$XP_ERR"
	expect_ready "${roles[@]}"
	expect_exit 0 "${second[@]}"
	cp "$XP_OUT" "$name.2"
	expect_ready "${roles[@]}"
	assert_files_equal "$name: output independent of duration and build" "$name.1" "$name.2"
	assert_file_matches "$name: result line" "$name.1" "$pattern"
}

say "## deterministic output and readiness"
roles=(split:work) pattern='^split: a=[0-9a-f]{16} b=[0-9a-f]{16} c=[0-9a-f]{16} mismatches=0$'
same_output split "$T/split" 0.1 -- "$T/split-nofp" 0.4
expect_exit 0 "$T/split" -r 100
assert_files_equal "split -r: same output" split.1 "$XP_OUT"
expect_ready split:work
expect_exit 2 "$T/split" 1O0
assert_file_matches "split rejects a bad duration" "$XP_ERR" 'expected a number of seconds'

roles=(chain:qsort) pattern='^chain: qsort checksum=[0-9a-f]{16} mismatches=0$'
same_output chain "$T/chain" qsort 0.1 -- "$T/chain-nofp" qsort 0.3
roles=(chain:levels) pattern='^chain: levels unit=[0-9a-f]{16} mismatches=0$'
same_output chain "$T/chain" levels 0.1 -- "$T/chain-nofp" levels 0.3

roles=(threads:workers) pattern='^threads: workers=3 unit=[0-9a-f]{16} mismatches=0$'
same_output threads "$T/threads" 3 0.05 -- "$T/threads-nofp" -n -l 3 0.2
expect_exit 2 "$T/threads" -l 9
roles=(threads:waves) pattern='^threads: waves=2 threads=256 unit=[0-9a-f]{16} mismatches=0$'
same_output threads "$T/threads" waves 1 -- "$T/threads-nofp" waves 2
roles=(threads:pool) pattern='^threads: pool=5 unit=[0-9a-f]{16} mismatches=0$'
same_output threads "$T/threads" pool 5 0.05 -- "$T/threads-nofp" pool 5 0.1

roles=(forker:parent forker:child forker:execed)
pattern='^forker: parent=[0-9a-f]{16} child=exit 0 execed=exit 0 mismatches=0$'
same_output forker "$T/forker" 0.1 -- "$T/forker-nofp" 0.3
assert_file_matches "forker: the exec'd child's line" forker.1 \
	'^forker: execed=[0-9a-f]{16} mismatches=0$'
assert_eq "forker: two lines" "$(wc -l <forker.1)" 2
# Exec'ing another target: its own readiness line and output come through.
expect_exit 0 "$T/forker" 0.1 "$T/split" 0.1
expect_ready forker:parent forker:child split:work
assert_file_matches "forker + split: split's line" "$XP_OUT" '^split: a='

roles=(execer:final) pattern='^execer: hops=3 unit=[0-9a-f]{16} mismatches=0$'
same_output execer "$T/execer" 3 0.1 -- "$T/execer-nofp" 3 0.3
# Through links named step-NN: each image execs the next link.
mkdir links
for k in 0 1 2; do
	ln -s "$T/execer" "links/step-0$k"
done
expect_exit 0 links/step-02 -d links 2 0.1
expect_ready execer:final
assert_file_matches "execer -d: result line" "$XP_OUT" \
	'^execer: hops=2 unit=[0-9a-f]{16} mismatches=0$'

roles=(sleeper:work) pattern='^sleeper: unit=[0-9a-f]{16} mismatches=0$'
same_output sleeper "$T/sleeper" 0.1 -- "$T/sleeper-nofp" 0.3

roles=(deep:bottom) pattern='^deep: depth=200 unit=[0-9a-f]{16} mismatches=0$'
same_output deep "$T/deep" 200 0.1 -- "$T/deep-nofp" 200 0.3

say "## faultmix: every touch is a page fault"
# Its truth (the split) differs from run to run, so it is checked in t1305
# beside the profiled run; here, that touch() enters the kernel each time.
for v in "" -nofp; do
	expect_exit 0 "$T/faultmix$v" 0.2
	expect_ready faultmix:work
	assert_file_empty "faultmix$v: nothing on stderr" "$XP_ERR"
	assert_file_matches "faultmix$v: result line" "$XP_OUT" \
		'^faultmix: fault_share=[0-9.]+ burst_us=[0-9.]+ touches=[0-9]+ left_out=[0-9]+ faults_per_touch=[0-9.]+ mismatches=0$'
	fpt=$(sed -n 's/.* faults_per_touch=\([0-9.]*\) .*/\1/p' "$XP_OUT")
	assert_within "faultmix$v: page faults per touch" "${fpt:-0}" 0.95 1.05
done

say "## exit statuses"
for t in exits exits-nofp; do
	expect_exit 0 "$T/$t" 0
	assert_eq "$t 0 output" "$(cat "$XP_OUT")" "exits: code 0"
	expect_exit 7 "$T/$t" 7
	expect_exit 255 "$T/$t" code 255
	expect_exit "signal 11" "$T/$t" signal 11
	assert_eq "$t signal 11 output" "$(cat "$XP_OUT")" "exits: signal 11"
	expect_exit "signal 9" "$T/$t" signal 9
	expect_exit "signal 15" "$T/$t" signal 15 0.05
	expect_ready exits:spin
	expect_exit 1 "$T/$t" signal 17 # SIGCHLD: ignored by default
done
expect_exit 2 "$T/exits" 256

say "## signals"
for t in sigtarget sigtarget-nofp; do
	start_bg "$t" "$T/$t" 60
	expect_ready sigtarget:signals
	pid=$XP_READY_PID
	expect_exit 0 "$XP_HELPERS/sigqueue" "$pid" RTMIN 1 100
	for i in 1 2 3; do
		kill -STOP "$pid"
		# Wait for the stop the test asked for (state T), not a sleep.
		for ((n = 0; n < 1000; n++)); do
			read -r _ _ state _ <"/proc/$pid/stat"
			[[ $state == T ]] && break
			sleep 0.01
		done
		assert_eq "$t stopped (cycle $i)" "$state" T
		kill -CONT "$pid"
		# A SIGSTOP would discard a SIGCONT still pending: wait until
		# the target says it handled this one.
		expect_ready "sigtarget:cont-$i"
	done
	kill -USR1 "$pid"
	wait_bg "$t" 0
	assert_eq "$t counts" "$(cat "$XP_TMP/$t.out")" "sigtarget: rtmin=100 sum=5050 cont=3"
done

say "## code shape (what the unwinding tests rely on)"
# func_body BINARY FUNC: the disassembly of FUNC, one instruction a line.
func_body() {
	objdump -d --no-show-raw-insn "$1" >"$1.dis.tmp" 2>/dev/null || true
	awk -v f="<$2>:" '$2 == f { on = 1; next } on && /^$/ { exit } on' "$1.dis.tmp"
}

symbols() {
	nm "$1" >syms.txt
	local s
	for s in "${@:2}"; do
		assert_file_matches "$(basename "$1"): function $s" syms.txt " [Tt] $s\$"
	done
}
cp "$T"/* . # objdump output files go next to the binaries
for v in "" -nofp; do
	symbols "split$v" main work a b c leaf
	symbols "chain$v" main sort_driver chain_cmp level1 level2 level3
	symbols "threads$v" main worker thread_work worker_wave wave_work worker_pool pool_work \
		lane_0 lane_7
	symbols "execer$v" main odd_work even_work final_work
	symbols "forker$v" main parent_work child_work execed_work
	symbols "sleeper$v" main compute nap
	symbols "sigtarget$v" main busy
	symbols "exits$v" main spin
	symbols "deep$v" main descend spin
	symbols "faultmix$v" main run compute touch
done

if [[ $(uname -m) != x86_64 ]]; then
	say "# code shape checks are written for x86-64; skipped on $(uname -m)"
	finish
fi
if ! command -v objdump >/dev/null; then
	fail "objdump not found (binutils): cannot check the code shape"
	finish
fi

func_body split leaf >leaf.s
assert_file_nonempty "split: leaf disassembled" leaf.s
assert_file_lacks "split (frame-pointer build): leaf has no frame (GCC 12)" leaf.s \
	'push|pop|call|%rsp|%rbp'
for f in a b c work; do
	func_body split "$f" >"$f.s"
	assert_file_matches "split: $f sets up a frame" "$f.s" 'mov +%rsp,%rbp'
done
for v in "" -nofp; do
	for f in a b c; do
		func_body "split$v" "$f" >"$f.s"
		assert_file_matches "split$v: $f calls leaf" "$f.s" 'call +[0-9a-f]+ <leaf>'
		assert_file_lacks "split$v: $f does not jump to leaf" "$f.s" 'jmp +[0-9a-f]+ <leaf>'
		func_body "split$v" work >work.s
		assert_file_matches "split$v: work calls $f" work.s "call +[0-9a-f]+ <$f>"
	done
	func_body "split$v" main >main.s
	assert_file_matches "split$v: main calls work" main.s 'call +[0-9a-f]+ <work>'
	func_body "deep$v" descend >descend.s
	assert_file_matches "deep$v: descend calls itself" descend.s 'call +[0-9a-f]+ <descend>'
	func_body "chain$v" level1 >l1.s
	func_body "chain$v" level2 >l2.s
	assert_file_matches "chain$v: level1 calls level2" l1.s 'call +[0-9a-f]+ <level2>'
	assert_file_matches "chain$v: level2 calls level3" l2.s 'call +[0-9a-f]+ <level3>'
	func_body "threads$v" lane_3 >lane.s
	assert_file_matches "threads$v: lane_3 calls thread_work" lane.s \
		'call +[0-9a-f]+ <thread_work>'
	func_body "chain$v" sort_driver >sd.s
	assert_file_matches "chain$v: sort_driver calls qsort" sd.s 'call +[0-9a-f]+ <qsort@plt>'
done

finish
