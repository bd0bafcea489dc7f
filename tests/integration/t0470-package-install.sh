#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The scripts in single quotes run in the root; in_fresh is called through
# expect_exit.
# shellcheck disable=SC2016,SC2317
#
# The Debian package, as a user gets it (doc/install.md):
#   - scripts/package.sh builds xprof_<version>_<arch>.deb (into
#     build/deb/, rebuilt only when the sources changed), lintian clean; it
#     holds the binary, the manual pages, the bash completion and the
#     license, and Depends on the libraries it links;
#   - in a fresh Debian 12 root (scripts/debian-root.sh bookworm, a minbase
#     root, used through an overlay so that the cached root stays as it
#     is), 'apt-get install ./xprof_*.deb' installs it with its
#     dependencies from the archive, and there, in pid and mount namespaces
#     of its own: 'xprof record' of split-nofp and 'xprof report' name its
#     frames (main;work;a|b|c;leaf in >= 95% of the samples), 'man
#     xprof-record' shows the page, and bash-completion's loader finds the
#     completion.
# Skipped in the sanitizer build (the package is a build of its own) and
# where a root cannot be made or entered.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace
((EUID == 0)) || skip "needs root (chroot, mounts, apt-get in the root)"
is_sanitized_build && skip "the package is not a sanitizer build: tested by the plain suite"
require_cmd unshare util-linux
require_cmd chroot coreutils

say "## the package"
expect_exit 0 "$XP_SRC/scripts/package.sh" -o "$XP_BUILD/deb"
show_file "package.sh" "$XP_ERR" 12
deb=$(tail -n 1 "$XP_OUT")
[[ -f $deb && $deb == *.deb ]] || fail_now "scripts/package.sh printed no package: '$deb'"
expect_exit 0 dpkg-deb -c "$deb"
cp "$XP_OUT" contents.txt
for f in ./usr/bin/xprof ./usr/share/man/man1/xprof-record.1.gz ./usr/share/man/man5/xprof-data.5.gz \
	./usr/share/bash-completion/completions/xprof ./usr/share/doc/xprof/copyright; do
	assert_file_matches "the package holds $f" contents.txt " ${f//./[.]}$"
done
expect_exit 0 dpkg-deb -f "$deb" Depends
say "# Depends: $(cat "$XP_OUT")"
assert_file_matches "it depends on the libraries it links" "$XP_OUT" 'libdw1.*libunwind8|libunwind8.*libdw1'

say "## a fresh Debian 12 root"
status=0
root=$("$XP_SRC/scripts/debian-root.sh" bookworm 2>root.err) || status=$?
((status == 77)) && skip "no Debian 12 root: $(tail -n 1 root.err)"
((status == 0)) || fail_now "scripts/debian-root.sh bookworm failed: $(tail -n 5 root.err)"
say "# root: $root (read-only below an overlay)"
mkdir -p upper work merged
if ! unshare -m --propagation private mount -t overlay overlay \
	-o "lowerdir=$root,upperdir=$XP_TMP/upper,workdir=$XP_TMP/work" "$XP_TMP/merged" 2>ovl.err; then
	say "# no overlay here ($(cat ovl.err)): a copy of the root"
	cp -a "$root/." upper/
	root=''
fi
mkdir -p upper/tmp/t
cp "$deb" "$XP_TARGETS/split-nofp" upper/tmp/t/
cp /etc/resolv.conf upper/etc/resolv.conf 2>/dev/null || true

# in_fresh SCRIPT: SCRIPT (bash) in the root (the overlay, or the copy), in
# pid and mount namespaces of its own, with /proc, /dev and a plain
# environment.
in_fresh() {
	unshare -m -p -f --propagation private env ROOT="$root" T="$XP_TMP" SCRIPT="$1" bash -c '
		set -e
		if [[ -n $ROOT ]]; then
			m=$T/merged
			mount -t overlay overlay -o "lowerdir=$ROOT,upperdir=$T/upper,workdir=$T/work" "$m"
		else
			m=$T/upper
		fi
		mount -t proc proc "$m/proc"
		mount --rbind /dev "$m/dev"
		exec chroot "$m" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
			PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
			DEBIAN_FRONTEND=noninteractive bash -c "$SCRIPT"'
}

say "## apt-get install ./xprof_*.deb"
XP_CMD_TIMEOUT=600 expect_exit 0 in_fresh 'cd /tmp/t && apt-get update -q &&
	apt-get install -y -q --no-install-recommends ./xprof_*.deb man-db bash-completion'
cp "$XP_OUT" install.txt
assert_file_matches "xprof set up" install.txt '^Setting up xprof \('
for lib in libdw1 libunwind8 libcapstone4; do
	assert_file_matches "$lib came from the archive" install.txt "^(Get:[0-9]+ .* $lib |Setting up $lib)"
done
expect_exit 0 in_fresh 'dpkg -s xprof'
say "# in the root: $(grep -E '^(Package|Status|Version|Architecture):' "$XP_OUT" | paste -sd' ')"
assert_file_matches "dpkg -s: installed" "$XP_OUT" '^Status: install ok installed$'

say "## xprof record and report in the root"
expect_exit 0 in_fresh 'cd /tmp/t && xprof --version && xprof record -o split.data -- ./split-nofp 1 &&
	xprof report -i split.data --folded --value samples -o split.folded'
show_file "record" "$XP_ERR" 4
assert_file_matches "the installed binary" "$XP_OUT" '^build: '
cp upper/tmp/t/split.folded split.folded
show_file "report" split.folded 4
assert_samples_at_least "split-nofp sampled" 500 split.folded
assert_share_at_least "its frames named" 95 split.folded 'chain:...;main;work;(a|b|c);leaf'

say "## man xprof-record, and the completion"
expect_exit 0 in_fresh 'MANPAGER=cat MANWIDTH=80 man xprof-record'
assert_file_matches "the manual page" "$XP_OUT" '^XPROF-RECORD\(1\)'
assert_file_matches "its synopsis" "$XP_OUT" 'xprof record'
expect_exit 0 in_fresh '. /usr/share/bash-completion/bash_completion && __load_completion xprof &&
	complete -p xprof'
assert_file_matches "bash-completion loads the installed completion" "$XP_OUT" '^complete -F _xprof xprof$'
finish
