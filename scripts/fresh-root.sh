#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# scripts/fresh-root.sh [--keep]
#
# Run the README's two set-up commands, exactly as written, on a machine
# that has nothing installed: a fresh Debian root (debootstrap
# --variant=minbase, Debian 12 "bookworm" unless XP_FRESH_SUITE says
# otherwise) built from this machine's own apt source, with a clean copy of
# the checkout's HEAD (git archive: no build directories, nothing
# uncommitted).  In the root, as root:
#     ./scripts/example.sh
#     ./scripts/test.sh
# A green run elsewhere can hide a missing install step (a package that
# happens to be on the build machine); this cannot.  Nothing is cached
# between runs: the root is made anew each time and removed afterwards
# (--keep leaves it, and says where, to look at after a failure).
# XP_FRESH_TESTS, to look at one failure again without the whole suite,
# is added to test.sh's command line as shell words (e.g.
# XP_FRESH_TESTS="-R 't1040|t0470'").
#
# The root lives in /var/tmp/xprof-fresh.XXXXXX (XP_FRESH_DIR overrides the
# parent), and runs in a private mount and pid namespace (unshare), where
# the root itself (bound onto itself, so that "/" is a mount point there as
# on a machine), /proc, /sys, /dev, /dev/pts, /dev/shm and /tmp are mounted; every mount
# is undone on exit (trap), failed runs and interrupts included, and the
# namespace takes whatever is left, stray processes too, with it.
#
# Needs root (debootstrap, chroot, mount) and installs debootstrap with
# apt-get when it is missing.  On the 2-CPU build machine: under a minute
# for the root, 2-3 for the packages (about 270 of them, chromium, clang and
# go included), then the build and the suite: 10 to 20 minutes in all.
#
# Output ends with the package counts of the root before and after, the
# ctest summary of test.sh in the root, and one line that .ci/run counts:
# "N passed, N failed" (ctest's tests plus one for example.sh).  The exit
# status is 0 only if both commands succeeded.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD

keep=0
case ${1:-} in
--keep) keep=1 ;;
'') ;;
*)
	echo "usage: scripts/fresh-root.sh [--keep]" >&2
	exit 2
	;;
esac

say() {
	printf 'fresh-root: %s\n' "$*"
}
die() {
	printf 'fresh-root: error: %s\n' "$1" >&2
	[[ -z ${2:-} ]] || printf 'hint: %s\n' "$2" >&2
	exit 1
}

((EUID == 0)) || die "must run as root (debootstrap, chroot and mount need it)" \
	"run it as root, e.g. 'sudo scripts/fresh-root.sh'"
git -C "$src" rev-parse --verify -q HEAD >/dev/null ||
	die "'$src' is not a git checkout with a commit: nothing to copy"
for tool in unshare chroot mount; do
	command -v "$tool" >/dev/null || die "'$tool' not found" "install util-linux and coreutils"
done
if ! command -v debootstrap >/dev/null; then
	say "installing debootstrap"
	DEBIAN_FRONTEND=noninteractive apt-get update -q
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap
fi

suite=${XP_FRESH_SUITE:-bookworm}

# apt_sources: "URI SUITE" for each of this machine's enabled apt entries
# (one-line and deb822 formats) whose suite is $suite or $suite-*: the
# Debian archive and its updates and security suites.  Other vendors' lists
# use their own suite names and are left out.
apt_sources() {
	local f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[[ -f $f ]] || continue
		awk '$1 == "deb" {
			i = 2
			if ($i ~ /^\[/) while ($i !~ /\]$/) i++
			if ($i ~ /^\[/ || $i ~ /\]$/) i++
			print $i, $(i + 1)
		}' "$f"
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[[ -f $f ]] || continue
		awk 'function flush() {
			if (types ~ /(^| )deb( |$)/ && enabled != "no")
				for (u = 1; u <= nu; u++) for (s = 1; s <= ns; s++) print uri[u], suite[s]
			types = ""; enabled = ""; nu = 0; ns = 0
		}
		/^[ \t]*#/ { next }
		/^[ \t]*$/ { flush(); next }
		{ key = tolower($1) }
		key == "types:" { types = ""; for (i = 2; i <= NF; i++) types = types " " $i; types = types " " }
		key == "enabled:" { enabled = tolower($2) }
		key == "uris:" { for (i = 2; i <= NF; i++) uri[++nu] = $i }
		key == "suites:" { for (i = 2; i <= NF; i++) suite[++ns] = $i }
		END { flush() }' "$f"
	done | awk -v s="$suite" '$2 == s || index($2, s "-") == 1' | sort -u
}
mapfile -t sources < <(apt_sources)
mirror=''
for line in "${sources[@]}"; do
	[[ ${line#* } == "$suite" ]] && mirror=${line%% *} && break
done
[[ -n $mirror ]] || die "no apt source for '$suite' in /etc/apt/sources.list{,.d}" \
	"the root is built from this machine's own Debian mirror; set XP_FRESH_SUITE to the suite it has"

parent=${XP_FRESH_DIR:-/var/tmp}
mkdir -p "$parent"
top=$(mktemp -d "$parent/xprof-fresh.XXXXXX")
root=$top/root
log=$top/debootstrap.log

# Mounts are made in a private namespace (below), so none should ever show
# here; if one does, the tree is left alone rather than removed through it.
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	if ((keep)); then
		say "kept the root: $root (chroot $root /bin/bash)"
	elif grep -qF " $top/" /proc/self/mountinfo; then
		say "something is still mounted under $top: not removed"
	else
		rm -rf --one-file-system "$top"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

say "debootstrap --variant=minbase $suite from $mirror into $root"
start=$(date +%s)
if ! debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$log" 2>&1; then
	tail -n 20 "$log"
	die "debootstrap failed (whole log: $log; use --keep to look at it)"
fi
say "root made in $(($(date +%s) - start)) s, $(du -sm "$root" | cut -f1) MB"

# The root's apt reaches the mirror as this machine does: the same Debian
# suites, and the same Acquire settings (a proxy, a snapshot mirror's
# expired Valid-Until dates).
for line in "${sources[@]}"; do
	printf 'deb %s %s main\n' "${line%% *}" "${line#* }"
done >"$root/etc/apt/sources.list"
apt-config dump | grep -E '^Acquire::((https?|ftp)::Proxy|Check-Valid-Until|Check-Date) ' \
	>"$root/etc/apt/apt.conf.d/90fresh-root-acquire" || true
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true

dest=/root/xprof
mkdir -p "$root$dest"
git -C "$src" archive --format=tar HEAD | tar -x -C "$root$dest"
say "copied $(git -C "$src" rev-parse --short HEAD) ($(git -C "$src" log -1 --format=%s HEAD))"

# In the namespace: mount, run the two commands, unmount (trap).  The
# commands get a plain login-like environment, not this shell's.
inner=$(
	cat <<'EOF'
set -u
root=$1 dest=$2 tests=$3
mounted=()
umount_all() {
	local i
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
		umount -l "${mounted[i]}" || echo "fresh-root: cannot unmount ${mounted[i]}" >&2
	done
	mounted=()
}
trap umount_all EXIT
mnt() {
	local where=${!#}
	mount "$@" && mounted+=("$where")
}
set -e
# The root bound onto itself: inside the chroot "/" is then a mount point,
# which the tests' own namespaces need (unshare --propagation private
# remounts "/" and fails with EINVAL where it is a plain directory).
mnt --bind "$root" "$root"
mnt -t proc proc "$root/proc"
mnt -t sysfs sysfs "$root/sys"
mnt --bind /dev "$root/dev"
mnt --bind /dev/pts "$root/dev/pts"
mnt -t tmpfs -o mode=1777 tmpfs "$root/dev/shm"
mnt -t tmpfs -o mode=1777 tmpfs "$root/tmp"
set +e
in_root() {
	chroot "$root" /usr/bin/env -i HOME=/root USER=root LOGNAME=root SHELL=/bin/bash \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin TERM=dumb \
		/bin/bash -c "$1"
}
count() {
	in_root 'dpkg -l | grep -c ^ii'
}
before=$(count)
echo
echo "fresh-root: + ./scripts/example.sh"
in_root "cd $dest && ./scripts/example.sh"
ex=$?
after_example=$(count)
echo
echo "fresh-root: + ./scripts/test.sh"
in_root "cd $dest && ./scripts/test.sh $tests"
ts=$?
after=$(count)
summary=$(grep -E '^[0-9]+% tests passed' "$root$dest/build/ctest.log" 2>/dev/null | tail -n 1)
skipped=$(awk '/The following tests did not run:/ { on = 1; next } on && /^[ \t]+[0-9]+ - / { sub(/^[ \t]+[0-9]+ - /, ""); printf "%s%s", sep, $0; sep = ", "; next } on { on = 0 }' \
	"$root$dest/build/ctest.log" 2>/dev/null)
echo
echo "fresh-root: packages installed in the root: $before (minbase), $after_example after example.sh, $after after test.sh"
echo "fresh-root: example.sh: $( ((ex)) && echo "FAILED (exit status $ex)" || echo ok)"
echo "fresh-root: test.sh: ${summary:-no ctest summary} (exit status $ts)"
[[ -z $skipped ]] || echo "fresh-root: skipped in the root: $skipped"
p=0 f=0
((ex == 0)) && p=1 || f=1
if [[ $summary =~ ([0-9]+)\ tests?\ failed\ out\ of\ ([0-9]+) ]]; then
	tf=${BASH_REMATCH[1]}
	((ts != 0 && tf == 0)) && tf=1
	p=$((p + BASH_REMATCH[2] - BASH_REMATCH[1])) f=$((f + tf))
else
	f=$((f + 1))
fi
echo "$p passed, $f failed"
((ex == 0 && ts == 0))
EOF
)
status=0
unshare --mount --propagation private --pid --fork bash -c "$inner" fresh-root "$root" "$dest" \
	"${XP_FRESH_TESTS:-}" ||
	status=$?
exit "$status"
