#!/bin/sh
# SPDX-License-Identifier: MIT
#
# guest.sh DIR ARCH [TEST...] - the integration checks of tests/xarch/run.sh,
# run inside a qemu-system guest (busybox sh and awk, PID 1 is xinit, root).
# DIR holds xprof, the targets split, split-nofp, threads, forker and chain
# of tests/targets, and fifo and (aarch64) split-pac of tests/xarch.
# Each check records a target with the real binary, reports it in the
# guest and judges the figures with awk; every check prints one line
#   PASS <name>: <figures>   or   FAIL <name>: <figures>
# (and the head of the folded report when it fails), the script ends with
# "N passed, N failed" and exits 0 only when all passed.  Statistical
# checks only, never exact counts.  TEST: run only these checks.
#
# Sampling rates are lower than xprof's default: under TCG a sample costs
# about a millisecond of the guest's only CPU.  xprof runs as SCHED_FIFO
# (DIR/fifo, see tests/xarch/targets/fifo.c) so that it preempts the target
# when its timer fires, as it would from a CPU of its own.

# The figures of count and awk are split into words on purpose (set --),
# and the file names under $W are fixed words.
# shellcheck disable=SC2046,SC2086

DIR=${1:?usage: guest.sh DIR ARCH [TEST...]}
ARCH=${2:?usage: guest.sh DIR ARCH [TEST...]}
shift 2
ONLY=" $* "
X=$DIR/xprof
RT=$DIR/fifo
W=/tmp/xarch
F=${XT_FREQ:-499}
mkdir -p $W
PASSED=0
FAILED=0

want() { [ "$ONLY" = "  " ] || case $ONLY in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

result() { # result NAME OK MESSAGE [FOLDED]
	if [ "$2" = 1 ]; then
		PASSED=$((PASSED + 1))
		echo "PASS $1: $3"
	else
		FAILED=$((FAILED + 1))
		echo "FAIL $1: $3"
		if [ -n "$4" ] && [ -f "$4" ]; then
			echo "---- $1: heaviest stacks of $4 ----"
			sort -t' ' -k2 -n -r "$4" 2>/dev/null | head -n 12 | cut -c1-300
		fi
	fi
}

# count FILE PATTERN...: total samples, then for each PATTERN the samples
# whose stack contains it as consecutive whole frames (";"-separated, the
# process name being the first frame): "main", "a;leaf", "forker;...".
count() {
	f=$1
	shift
	awk -v pats="$*" '
	BEGIN { np = split(pats, p, " ") }
	{
		n = $NF
		s = ";" substr($0, 1, length($0) - length(n) - 1) ";"
		tot += n
		for (i = 1; i <= np; i++)
			if (index(s, ";" p[i] ";"))
				hit[i] += n
	}
	END {
		printf "%d", tot
		for (i = 1; i <= np; i++)
			printf " %d", hit[i]
		printf "\n"
	}' "$f"
}

# garbage FILE [show]: samples with a frame that is no code address:
# outside every mapping ("0x...") or, but for the leaf, in the target's own
# binary, which has a full symbol table, without a symbol ("<program>+0x").
# A leaf may be in a PLT stub, which has no symbol; frames in the guest's
# libc and ld.so may be "libc.so.6+0x...": Debian strips their local
# symbols and the guest has no debuginfo.  With "show", print those stacks.
garbage() {
	awk -v show="${2:-}" '{
		n = $NF
		k = split(substr($0, 1, length($0) - length(n) - 1), fr, ";")
		for (i = 2; i <= k; i++)
			if (fr[i] ~ /^0x/ || (i < k && index(fr[i], fr[1] "+0x") == 1)) {
				bad += n
				if (show && shown++ < 10)
					print "    garbage: " $0
				break
			}
	} END { if (!show) print bad + 0 }' "$1"
}

# outside FILE: samples taken outside main's lifetime: before the program's
# entry point, in the dynamic loader (first frame in ld-linux*), and in
# exit() after main returned.  Under TCG that cold code is slow (it is
# translated as it first runs): together 1-2% of a 3 s run.  Their stacks
# are right, but main cannot be in them.
outside() {
	awk '{
		n = $NF
		s = ";" substr($0, 1, length($0) - length(n) - 1) ";"
		split(s, fr, ";")
		if (fr[3] ~ /^ld-linux/ || (index(s, ";exit;") && !index(s, ";main;")))
			out += n
	} END { print out + 0 }' "$1"
}

# pct PART TOTAL: percentage with one decimal
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b ? 100 * a / b : 0 }'; }
# within VALUE LO HI: 1 when LO <= VALUE <= HI
within() { awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { print (v >= lo && v <= hi) ? 1 : 0 }'; }

# record NAME TARGET ARGS...: record into $W/NAME.data (target output in
# $W/NAME.out), report into $W/NAME.folded; sets RC to record's exit status.
# $XARGS: more options for record (-g libunwind); $XPRE: xprof's own (-vv).
record() {
	name=$1
	shift
	rm -f $W/$name.data $W/$name.folded
	"$RT" "$X" $XPRE record -q -F "$F" $XARGS -o $W/$name.data -- "$@" >$W/$name.out 2>$W/$name.err
	RC=$?
	"$X" report -i $W/$name.data --folded --value samples -o $W/$name.folded 2>>$W/$name.err ||
		echo "xprof report failed" >>$W/$name.err
	[ -f $W/$name.folded ] || : >$W/$name.folded
}

# record_min NAME MIN TARGET ARGS...: as record, repeated (4 runs at most)
# until the folded reports, appended to one another in $W/NAME.folded, hold
# MIN samples: TCG slows down with the host's load, and the sample count
# with it (from 1500 to 400 for the same run).  RC is the first failure's.
record_min() {
	rname=$1 min=$2 runs=0 rc=0
	shift 2
	: >$W/$rname.all
	while [ $runs -lt 4 ]; do
		record "$rname" "$@"
		[ "$rc" = 0 ] && rc=$RC
		cat $W/$rname.folded >>$W/$rname.all
		runs=$((runs + 1))
		[ "$(count $W/$rname.all)" -ge "$min" ] && break
	done
	mv $W/$rname.all $W/$rname.folded
	RC=$rc RUNS=$runs
}

# check_split NAME TARGET: main -> work -> a/b/c -> leaf at 50/30/20 (+-5
# points), main in >= 99% (XMAIN) of the samples of main's lifetime, the leaf's
# caller found in >= 99%.  1500 samples: sigma of a share <= 1.3 points.
check_split() {
	name=$1
	record_min "$name" 1500 "$DIR/$2" 3
	pre=$(outside $W/$name.folded)
	set -- $(count $W/$name.folded main a b c leaf "a;leaf" "b;leaf" "c;leaf")
	tot=$1 main=$2 a=$3 b=$4 c=$5 leaf=$6 leafc=$(($7 + $8 + $9))
	abc=$((a + b + c))
	pa=$(pct $a $abc) pb=$(pct $b $abc) pc=$(pct $c $abc)
	pm=$(pct $main $((tot - pre))) pl=$(pct $leafc $leaf)
	junk=$(garbage $W/$name.folded)
	ok=1
	[ "$RC" = 0 ] && grep -q "mismatches=0" $W/$name.out || ok=0
	[ "$tot" -ge 1000 ] || ok=0
	[ "$(within $pa 45 55)$(within $pb 25 35)$(within $pc 15 25)" = 111 ] || ok=0
	[ "$(within $pm ${XMAIN:-99} 100)$(within $pl 99 100)" = 11 ] || ok=0
	[ "$junk" = 0 ] || ok=0
	result "$name" $ok "samples=$tot (runs: $RUNS) a/b/c=$pa/$pb/$pc% main=$pm% (outside main: $pre) leaf-caller=$pl% garbage=$junk rc=$RC" $W/$name.folded
	[ $ok = 1 ] || show_failure $name "$junk"
}

# show_failure NAME GARBAGE: xprof's messages, and the stacks with garbage.
show_failure() {
	sed 's/^/    | /' $W/$1.err | head -n 20
	[ "$2" = 0 ] || garbage $W/$1.folded show
}

if want split; then
	check_split split split
fi

if want split-nofp; then
	check_split split-nofp split-nofp
fi

if want pac && [ -x "$DIR/split-pac" ]; then
	# -mbranch-protection=pac-ret: every saved return address is signed.
	grep -q paca /proc/cpuinfo && echo "pac: the CPU has pointer authentication (paca)" ||
		echo "pac: WARNING: no paca in /proc/cpuinfo, return addresses are not signed"
	check_split split-pac split-pac
fi

if want threads; then
	# 4 threads of equal CPU work, each computing in its own lane
	# (threads -l): of the samples in thread_work, >= 99% reach the worker
	# through their lane, and each lane has ~25% (+-7 points) of the CPU
	# time.  Shares are weights (report --flat), not sample counts: a
	# thread is sampled at a tick if it ran at all since the last, and
	# weighted by the CPU time it had; with 4 threads on one CPU the counts
	# of equal threads differ by up to 2x.
	record threads "$DIR/threads" -l 4 0.5
	"$X" report -i $W/threads.data --flat -o $W/threads.flat 2>>$W/threads.err
	set -- $(count $W/threads.folded thread_work "worker;lane_0;thread_work" \
		"worker;lane_1;thread_work" "worker;lane_2;thread_work" "worker;lane_3;thread_work")
	tot=$1 tw=$2 lanes=$(($3 + $4 + $5 + $6))
	set -- $(awk '$NF ~ /^lane_[0-3]$/ { t[substr($NF, 6)] = $2 + 0 }
		END { printf "%.1f %.1f %.1f %.1f\n", t[0], t[1], t[2], t[3] }' $W/threads.flat)
	p0=$1 p1=$2 p2=$3 p3=$4
	pl=$(pct $lanes $tw)
	ok=1
	[ "$RC" = 0 ] && grep -q "workers=4 .*mismatches=0" $W/threads.out || ok=0
	[ "$tw" -ge 200 ] || ok=0
	[ "$(within $p0 18 32)$(within $p1 18 32)$(within $p2 18 32)$(within $p3 18 32)" = 1111 ] || ok=0
	[ "$(within $pl 99 100)" = 1 ] || ok=0
	result threads $ok "samples=$tot in-thread_work=$tw lane-cpu=$p0/$p1/$p2/$p3% through-worker=$pl% rc=$RC" $W/threads.folded
fi

if want fork-exec; then
	# forker forks a computing child and a child that execs split: three
	# processes, each with a fair share (>= 15%; ~33% expected).
	record fork-exec "$DIR/forker" 0.5 "$DIR/split" 0.5
	set -- $(count $W/fork-exec.folded "main;parent_work" "main;child_work" "main;work")
	tot=$1 par=$2 chi=$3 ex=$4
	pp=$(pct $par $tot) pc=$(pct $chi $tot) pe=$(pct $ex $tot)
	ok=1
	[ "$RC" = 0 ] && grep -q "child=exit 0 execed=exit 0 mismatches=0" $W/fork-exec.out &&
		grep -q "^split: .*mismatches=0" $W/fork-exec.out || ok=0
	[ "$tot" -ge 200 ] || ok=0
	[ "$(within $pp 15 100)$(within $pc 15 100)$(within $pe 15 100)" = 111 ] || ok=0
	# The exec'd image symbolized with its own mappings (no 0x... frames).
	junk=$(garbage $W/fork-exec.folded)
	[ "$junk" = 0 ] || ok=0
	result fork-exec $ok "samples=$tot parent_work=$pp% child_work=$pc% execed(split;work)=$pe% garbage=$junk rc=$RC" $W/fork-exec.folded
	[ $ok = 1 ] || show_failure fork-exec "$junk"
fi

if want attach; then
	# A running split, attached for 1 s and left to finish: it must print
	# its normal line and exit 0; the profile must hold its stacks.
	rm -f $W/ready $W/attach.data $W/attach.folded
	mkfifo $W/ready
	exec 3<>$W/ready
	XP_READY_FIFO=$W/ready "$DIR/split" 2.5 >$W/attach.out 2>&1 &
	pid=$!
	read -r _ rpid _ <&3
	"$RT" "$X" attach -q -F "$F" -p "$pid" -d 1s -o $W/attach.data >$W/attach.err 2>&1
	arc=$?
	wait $pid
	trc=$?
	exec 3>&-
	"$X" report -i $W/attach.data --folded --value samples -o $W/attach.folded 2>>$W/attach.err || : >$W/attach.folded
	set -- $(count $W/attach.folded main)
	tot=$1 main=$2
	pm=$(pct $main $tot)
	ok=1
	[ "$arc" = 0 ] && [ "$trc" = 0 ] && [ "$rpid" = "$pid" ] || ok=0
	grep -q "^split: .*mismatches=0" $W/attach.out || ok=0
	[ "$tot" -ge 50 ] && [ "$(within $pm 99 100)" = 1 ] || ok=0
	result attach $ok "samples=$tot main=$pm% attach-rc=$arc target-rc=$trc target: $(cat $W/attach.out)" $W/attach.folded
	[ $ok = 1 ] || sed 's/^/    | /' $W/attach.err | head -n 20
fi

if want qsort; then
	# chain_cmp called back from libc's qsort (no frame pointers there):
	# sort_driver and main above it in >= 97% of the samples of main's
	# lifetime, and chain_cmp in >= 20% of them.  Under TCG a sample's pc
	# is always the first instruction of a translated block, the one after
	# the block that ran when the timer fired: on aarch64 chain_cmp's
	# leaves were only its entry, loop heads and loop exits (+0x0, +0x30,
	# +0x40, +0x68, +0x78; 528 of 749 samples).  The time of chain_cmp's
	# last block, its epilogue and the ret (an indirect jump, which TCG
	# looks up in a table), so lands on the return site of the comparator
	# call in libc's msort_with_tmp: aarch64 libc.so.6+0x3e608, after
	# "blr x25" at 0x3e604 (100 samples, ten loop blocks' worth);
	# riscv64 libc.so.6+0x3a27c, after "jalr s6".  Those samples have the
	# whole stack but no chain_cmp: 53-74% had chain_cmp in both guests,
	# idle host or busy, 26-37% in earlier runs.
	record qsort "$DIR/chain" qsort 1.5
	pre=$(outside $W/qsort.folded)
	set -- $(count $W/qsort.folded "main;sort_driver" chain_cmp)
	tot=$1 drv=$2 cmp=$3
	pd=$(pct $drv $((tot - pre))) pc=$(pct $cmp $tot)
	ok=1
	[ "$RC" = 0 ] && grep -q "mismatches=0" $W/qsort.out || ok=0
	[ "$tot" -ge 200 ] || ok=0
	[ "$(within $pd 97 100)$(within $pc 20 100)" = 11 ] || ok=0
	result qsort $ok "samples=$tot main;sort_driver=$pd% (outside main: $pre) chain_cmp=$pc% rc=$RC" $W/qsort.folded
fi

if want libunwind; then
	# -g libunwind: libunwind walks the same stack copies, with
	# libunwind-ptrace's find_proc_info on the live process; split's shares
	# and stacks as with the native walk.
	# (aarch64: libunwind 1.6 stops in libc's clock_gettime once it has
	# walked out of the vdso, whose CFI for pointer authentication it does
	# not know (doc/unwinding.md), 0.9% of the samples of one run, 0.1-0.8%
	# of others: main in >= 98% there.)
	XMAIN=98 XARGS="-g libunwind" check_split split-libunwind split
	# -g check on qsort's libc callback: libunwind agrees with the native
	# walk on >= 90% of the stacks (doc/unwinding.md: the known classes);
	# on riscv64 >= 75%: there libunwind makes up a frame above ld.so's
	# entry code, which has no CFI, in the samples taken while the loader
	# starts the program ("native shorter"), and they are more when TCG
	# is slow: 1.6-3.7% of the stacks differed on an idle host, 6.3-8.7%
	# with the host's two CPUs busy, 17.4% beside a CPU benchmark.
	XPRE=-vv XARGS="-g check" record qsort-check "$DIR/chain" qsort 1.5
	set -- $("$X" report -i $W/qsort-check.data --header-only 2>/dev/null |
		awk '$3 ~ /^unwind_(checked|differ)/ { v[$3] = $5 }
			END { print v["unwind_checked"] + 0, v["unwind_differ"] + 0,
				v["unwind_differ_pc"] + 0, v["unwind_differ_libunwind_shorter"] + 0,
				v["unwind_differ_native_shorter"] + 0 }')
	ok=1
	[ "$RC" = 0 ] && [ "$1" -ge 100 ] || ok=0
	maxd=10
	[ "$ARCH" = riscv64 ] && maxd=25
	[ "$(within $(pct $2 $1) 0 $maxd)" = 1 ] || ok=0
	result qsort-check $ok "stacks checked=$1 libunwind disagreed=$2 ($(pct $2 $1)%: pc $3, libunwind shorter $4, native shorter $5) rc=$RC" $W/qsort-check.folded
	[ $ok = 1 ] || grep -A2 'unwind check:' $W/qsort-check.err | head -n 30 | sed 's/^/    | /' 
fi

echo "xarch $ARCH: $PASSED passed, $FAILED failed"
[ $FAILED = 0 ]
