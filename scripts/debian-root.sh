#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# scripts/debian-root.sh SUITE [PACKAGE...]
#
# Make (once) a Debian root of SUITE with PACKAGE... installed, from this
# machine's Debian mirror, and print its directory on stdout.  The tests use
# such roots as a container's files: another Debian release's python3, a
# fresh Debian 12 to install xprof's package into.  A root is made with
# 'debootstrap --variant=minbase --include=PACKAGE,...' (releases newer
# than this machine's with debootstrap's sid script, which serves them
# all) and cached under
#     ${XP_ROOTS:-${XDG_CACHE_HOME:-$HOME/.cache}/xprof/roots}/SUITE[-PACKAGES]
# so later runs cost nothing; a root is complete only once its .ok marker
# is written, and a half-made one is made again.  Concurrent callers wait
# for each other (flock).  Nothing is mounted: whoever runs in the root
# mounts what it needs, in its own namespace.
#
# Needs root (debootstrap).  Exit status 77, with the reason on stderr,
# where a root cannot be made here (not root, no debootstrap and no
# apt-get to install it, no mirror for SUITE): tests pass that on as a
# skip.  1 when debootstrap itself failed (its log's tail on stderr).
set -euo pipefail

say() {
	printf 'debian-root: %s\n' "$*" >&2
}
skip() {
	say "cannot make a root here: $*"
	exit 77
}

(($# >= 1)) || {
	echo "usage: scripts/debian-root.sh SUITE [PACKAGE...]" >&2
	exit 2
}
suite=$1
shift
[[ $suite =~ ^[a-z]+$ ]] || {
	echo "debian-root: '$suite' is not a suite's code name" >&2
	exit 2
}
pkgs=("$@")
for p in "${pkgs[@]}"; do
	[[ $p =~ ^[a-z0-9][a-z0-9+.-]*$ ]] || {
		echo "debian-root: '$p' is not a package name" >&2
		exit 2
	}
done

((EUID == 0)) || skip "debootstrap needs root"
if ! command -v debootstrap >/dev/null; then
	command -v apt-get >/dev/null || skip "no debootstrap, and no apt-get to install it"
	say "installing debootstrap"
	{
		DEBIAN_FRONTEND=noninteractive apt-get update -q &&
			DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
				debootstrap
	} >&2 || skip "debootstrap could not be installed"
fi

# The Debian archive this machine's apt uses: the first deb822 or one-line
# source that serves a Debian suite.
mirror() {
	local f
	for f in /etc/apt/sources.list.d/*.sources; do
		[[ -f $f ]] || continue
		awk 'tolower($1) == "uris:" { for (i = 2; i <= NF; i++) print $i }' "$f"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[[ -f $f ]] || continue
		awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; break } }' "$f"
	done
}
url=''
while read -r u; do
	if [[ $u =~ /debian/?$ ]]; then
		url=${u%/}
		break
	fi
done < <(mirror)
[[ -n $url ]] || skip "no Debian archive among this machine's apt sources"

# bookworm and older have debootstrap scripts of their own; newer suites
# (trixie, forky, sid) take the sid script, as Debian's own buildds do.
script=/usr/share/debootstrap/scripts/$suite
[[ -e $script ]] || script=/usr/share/debootstrap/scripts/sid

cache=${XP_ROOTS:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/xprof/roots}
name=$suite
((${#pkgs[@]} == 0)) || name+=-$(printf '%s\n' "${pkgs[@]}" | sort -u | paste -sd+)
root=$cache/$name
mkdir -p "$cache"
exec 9>"$cache/.$name.lock"
flock 9
if [[ ! -e $root/.ok ]]; then
	rm -rf --one-file-system "$root"
	log=$cache/$name.log
	inc=()
	((${#pkgs[@]} == 0)) || inc=(--include="$(printf '%s\n' "${pkgs[@]}" | sort -u | paste -sd,)")
	say "debootstrap --variant=minbase ${inc[*]} $suite from $url (once; cached in $root)"
	start=$(date +%s)
	if ! debootstrap --variant=minbase "${inc[@]}" "$suite" "$root" "$url" "$script" \
		>"$log" 2>&1; then
		tail -n 15 "$log" >&2
		say "debootstrap failed (log: $log)"
		exit 1
	fi
	# apt in the root reaches the same mirror, for the tests that install into it.
	printf 'deb %s %s main\n' "$url" "$suite" >"$root/etc/apt/sources.list"
	apt-config dump | grep -E '^Acquire::((https?|ftp)::Proxy|Check-Valid-Until|Check-Date) ' \
		>"$root/etc/apt/apt.conf.d/90xprof-root-acquire" || true
	touch "$root/.ok"
	say "made in $(($(date +%s) - start)) s, $(du -sm "$root" | cut -f1) MB"
fi
printf '%s\n' "$root"
