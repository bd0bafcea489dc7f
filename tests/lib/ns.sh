# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# Containers for the integration tests, sourced after lib.sh:
#     . "$XP_LIB/ns.sh"
#
# ns_skip_unless_root: exit 77 unless this is root with unshare(1) and
#   pivot_root(8) and mount and pid namespaces work.
# ns_cmd PROG ARGS...: sets NS_CMD to a command line that runs PROG in new
#   mount and pid namespaces whose root is a private tmpfs holding only PROG
#   (as /bin/NAME), its libraries (in /xplib, a directory the host does not
#   have, found through LD_LIBRARY_PATH), the dynamic loader (where PT_INTERP
#   names it), an empty private /tmp, its own /proc and the readiness FIFO (as /ready), as
#   in a container whose image the host does not share.  PROG is the pid 1
#   of its pid namespace, so it writes its files with pid 1; its host pid is
#   found with ns_host_pid.  When PROG ends, the namespaces and their files
#   are gone.  The container is tagged with XP_NS_TAG=$XP_TMP in its
#   environment.
# ns_host_pid: the host pid of the running container's PROG, in NS_PID
#   (fails the test after 10 s without one).
#
# Each test runs NS_CMD under start_bg or expect_exit, so the EXIT trap of
# lib.sh kills it with its process group.

# ns_assert_split LABEL FILE: the folded stacks of split or split-nofp
#   (tests/targets/split.c) show its truth: main in >= 99% of the samples,
#   a, b and c with 50/30/20% within 4 points, and every frame named (no
#   module+0xOFF, no bare address), as a report must after the files are gone.
#   Without libc's debug symbols (libc6-dbg), its static functions such as
#   __libc_start_call_main have no name in any ELF file, and the report rightly
#   shows them as libc.so.6+0xOFF: such frames are allowed then, and only then.
#   The same holds for the dynamic loader (libc6-dbg has its symbols too): a
#   sample taken while ld.so relocates the program, before main, shows
#   ld-linux-x86-64.so.2+0xOFF frames (1 sample in 4000 of a recorded launch).
ns_assert_split() {
	local label=$1 file=$2 named=$2
	if ! ns_libc_has_symbols; then
		named=$XP_TMP/ns-named.folded
		sed -E 's/(libc\.so\.6|ld-linux[^;+]*\.so\.[0-9]+)\+0x[0-9a-f]+/\1:no-symbols/g' \
			"$file" >"$named"
	fi
	assert_share_at_least "$label: main" 99 "$file" frame:main
	assert_share_between "$label: main;work;a" 46 54 "$file" "chain:main;work;a"
	assert_share_between "$label: main;work;b" 26 34 "$file" "chain:main;work;b"
	assert_share_between "$label: main;work;c" 16 24 "$file" "chain:main;work;c"
	assert_share_at_least "$label: every frame named" 100 "$named" \
		'!frame:.*\+0x[0-9a-f]+|0x[0-9a-f]+'
}

# ns_libc_has_symbols: whether this machine's libc names its static functions
#   (its .symtab, or a debug file under /usr/lib/debug/.build-id).
ns_libc_has_symbols() {
	local libc id
	libc=$(awk '$6 ~ /\/libc\.so\.6$/ { print $6; exit }' /proc/self/maps)
	[[ -n $libc ]] || return 1
	readelf -S "$libc" 2>/dev/null | grep -q '\.symtab' && return 0
	id=$(readelf -n "$libc" 2>/dev/null | awk '/Build ID:/ { print $3; exit }')
	[[ -n $id && -f /usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug ]]
}

ns_skip_unless_root() {
	((EUID == 0)) || skip "needs root for mount and pid namespaces (unshare -m -p)"
	command -v unshare >/dev/null || skip "unshare(1) is not installed"
	command -v pivot_root >/dev/null || skip "pivot_root(8) is not installed"
	unshare -m -p -f --propagation private true 2>/dev/null ||
		skip "cannot make mount and pid namespaces here (unshare -m -p -f failed)"
}

# The script the namespaces run: $1 the tmpfs mount point, $2 PROG, then ARGS.
# shellcheck disable=SC2016 # expanded by the inner bash
_ns_script='
set -e
mnt=$1 prog=$2
shift 2
mount -t tmpfs xprof-ns "$mnt"
mkdir -p "$mnt/bin" "$mnt/xplib" "$mnt/tmp" "$mnt/old" "$mnt/proc"
mount -t proc proc "$mnt/proc"
chmod 1777 "$mnt/tmp"
cp "$prog" "$mnt/bin/"
cp "$(command -v umount)" "$mnt/bin/"
interp=$(ldd "$prog" | awk "/^\t\// { print \$1; exit }")
[[ $interp == /* ]] || { echo "ns: no PT_INTERP in $prog" >&2; exit 1; }
mkdir -p "$mnt$(dirname "$interp")"
cp "$interp" "$mnt$interp"
for lib in $(ldd "$prog" "$(command -v umount)" | awk "/=> \\// { print \$3 }" | sort -u); do
	cp "$lib" "$mnt/xplib/"
done
if [[ -p ${XP_READY_FIFO:-} ]]; then
	touch "$mnt/ready"
	mount --bind "$XP_READY_FIFO" "$mnt/ready"
fi
cd "$mnt"
pivot_root . old
cd /
LD_LIBRARY_PATH=/xplib /bin/umount -l /old
export LD_LIBRARY_PATH=/xplib XP_NS_TAG=$XP_NS_TAG
if [[ -p /ready ]]; then export XP_READY_FIFO=/ready; else unset XP_READY_FIFO; fi
status=0
"/bin/${prog##*/}" "$@" || status=$?
exit "$status"
'

ns_cmd() {
	local prog=$1
	shift
	mkdir -p "$XP_TMP/nsroot"
	export XP_NS_TAG=$XP_TMP
	# shellcheck disable=SC2034 # used by the tests that source this file
	NS_CMD=(unshare -m -p -f --propagation private -- bash -c "$_ns_script" ns
		"$XP_TMP/nsroot" "$prog" "$@")
}

ns_host_pid() {
	local comm=$1 i f p
	NS_PID=
	for ((i = 0; i < 100; i++)); do
		for f in /proc/[0-9]*/environ; do
			p=${f#/proc/}
			p=${p%/environ}
			if [[ $(cat "/proc/$p/comm" 2>/dev/null) == "$comm" ]] &&
				grep -qzxF "XP_NS_TAG=$XP_TMP" "$f" 2>/dev/null; then
				NS_PID=$p
				NS_INNER=$(awk '/^NSpid:/ { print $NF }' "/proc/$p/status")
				say "# the container's $comm is host pid $NS_PID, pid $NS_INNER inside"
				return 0
			fi
		done
		sleep 0.1
	done
	fail_now "no process '$comm' in the container"
}
