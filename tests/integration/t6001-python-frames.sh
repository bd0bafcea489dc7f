#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Python frames, on every CPython 3.11 to 3.14 there is here: Debian 12's
# /usr/bin/python3 (3.11), launchers over libpython3.X.so (pyenv-style,
# when the machine has them), python3.13 in a Debian 13 root and 3.14 in
# a Debian forky root (scripts/debian-root.sh; its stripped python3.14
# names no eval loop), each root run through chroot so that its files are
# seen as a container's.  On tests/py/known.py (its functions' shares set
# by its own time.thread_time()):
#   - each function's share of the samples in them within 3 points of
#     its measured share (a, b, deep, digest in the main thread; worker in
#     a second one, never under the main thread's functions);
#   - >= 99% of the samples in the eval loop have Python frames
#     (--interp beside keeps the loop's frame), where the loop has a name;
#   - the hottest line of hot() is the line marked HOT;
#   - hashlib's C code under digest in >= 90% of its samples;
#   - deep's samples 150 frames deep;
#   - the child it forks and execs has its own Python frames, and so has
#     a child forked without an exec (/usr/bin/python3 only);
#   - the root's report is the same once the root is gone.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace record

KNOWN=$XP_SRC/tests/py/known.py
HOTLINE=$(grep -n '# HOT' "$KNOWN" | cut -d: -f1)
pythons=()
[[ -x /usr/bin/python3 ]] && pythons+=("system:/usr/bin/python3")
for p in "$HOME"/.pyenv/versions/3.1[1-4].*/bin/python3.1[1-4]; do
	# Not 'ldd | grep -q': with pipefail, grep leaving early can fail ldd (SIGPIPE).
	[[ -x $p && $(ldd "$p" 2>/dev/null) == *libpython* ]] &&
		pythons+=("launcher-$(basename "$(dirname "$(dirname "$p")")"):$p")
done
for suite in trixie forky; do
	if root=$("$XP_SRC/scripts/debian-root.sh" "$suite" python3 2>"$suite.log"); then
		pythons+=("root-$suite:$root")
	else
		say "# no $suite root: $(tail -1 "$suite.log")"
	fi
done
((${#pythons[@]})) || skip "no CPython 3.11 to 3.14 here"

# share_of FILE NAME: the measured share (percent) of NAME among the functions known.py times.
measured() {
	awk -v n="$2" '$1 == "measured" { t[$2] = $3; all += ($2 != "child_work") ? $3 : 0 }
		END { printf "%.1f", all ? 100 * t[n] / all : 0 }' "$1"
}

fn() { printf '%s \\(known\\.py:[0-9]+\\)' "$1"; }
ALL="frame:($(printf '%s|' a b deep digest worker | sed 's/|$//')) \\(known\\.py:[0-9]+\\)"

for entry in "${pythons[@]}"; do
	kind=${entry%%:*}
	py=${entry#*:}
	say "## $kind: $py"
	if [[ $kind == root-* ]]; then
		rm -rf root
		# Hard links where the cache and this directory share a file
		# system; a copy where they do not (/tmp a tmpfs).
		cp -al "$py" root 2>/dev/null || { rm -rf root && cp -a "$py" root; }
		cp "$KNOWN" root/known.py
		cmd=(chroot root python3 /known.py run 1)
	else
		cmd=("$py" "$KNOWN" run 1)
	fi
	expect_exit 0 "$XPROF" record -o "$kind.data" -- "${cmd[@]}"
	cp "$XP_OUT" "$kind.out"
	nint=$("$XPROF" report -i "$kind.data" --header-only | awk '/interp_samples/ { print $NF }')
	expect_exit 0 "$XPROF" report -i "$kind.data" --folded -o "$kind.folded"
	for f in a b deep digest worker; do
		m=$(measured "$kind.out" "$f")
		lo=$(awk -v m="$m" 'BEGIN { printf "%.1f", m - 3 }')
		hi=$(awk -v m="$m" 'BEGIN { printf "%.1f", m + 3 }')
		assert_share_between "$kind: $f (measured $m%)" "$lo" "$hi" "$kind.folded" \
			"frame:$(fn "$f")" "$ALL"
	done
	assert_share_between "$kind: worker never under the main thread's functions" 0 0 \
		"$kind.folded" "frame:($(fn a)|$(fn b)|$(fn digest))" "frame:$(fn worker)"
	# Where a sample's frames stand is counted in samples, as said above: by
	# CPU weight one sample that carries much time counts as dozens.
	expect_exit 0 "$XPROF" report -i "$kind.data" --folded --value samples -o "$kind.samples"
	assert_share_at_least "$kind: hashlib's C code under digest" 90 "$kind.samples" \
		"frame:$(fn digest)" 'frame:(.*[Ss][Hh][Aa]256.*|.*libcrypto.*|EVP_Digest.*)'
	assert_share_at_least "$kind: the forked and exec'd child's frames" 0.5 "$kind.folded" \
		"frame:$(fn child_work)"
	# The hottest line of hot() is the one marked HOT.
	top=$(awk '{ n = $NF; $NF = ""; c = split($0, f, ";")
		for (i = 1; i <= c; i++) if (f[i] ~ /^hot \(known\.py:[0-9]+\)/) { l = f[i]; sub(/.*:/, "", l); sub(/\).*/, "", l); w[l] += n; break } }
		END { for (l in w) if (w[l] > best) { best = w[l]; bl = l } print bl }' "$kind.folded")
	if [[ $top == "$HOTLINE" ]]; then say "ok: $kind: hot()'s hottest line is $top"; else
		fail "$kind: hot()'s hottest line is '$top', not the HOT line $HOTLINE"; fi
	# deep(150): its hot() samples are 150 deep frames down.
	depth=$(awk '{ c = gsub(/deep \(known\.py:[0-9]+\)/, "&"); if (c) { n++; if (c >= 151) d++ } }
		END { printf "%d %d", d, n }' "$kind.folded")
	read -r dd dn <<<"$depth"
	if ((dn > 0 && dd * 100 >= dn * 95)); then say "ok: $kind: $dd of $dn deep samples 151 frames deep"
	else fail "$kind: $dd of $dn deep samples 151 frames deep"; fi
	# Where the eval loop has a name, >= 99% of its samples carry Python
	# frames.  --no-inline: a build with DWARF (pyenv's) names the helpers
	# inlined into the loop (Py_INCREF) between it and the frames it ran.
	expect_exit 0 "$XPROF" report -i "$kind.data" --folded --interp beside --no-inline \
		-o "$kind.beside"
	# A stripped build may still export the loop's entry, where a sample
	# or two land before the first frame is pushed: that is no name for
	# the loop.
	named=$(awk '{ w = $NF; t += w } /(^|;)_PyEval_EvalFrameDefault(;| )/ { n += w }
		END { print (t && n * 20 >= t) ? 1 : 0 }' "$kind.beside")
	if ((named)); then
		assert_share_at_least "$kind: eval-loop samples with Python frames" 99 \
			"$kind.beside" 'stack:_PyEval_EvalFrameDefault;[^;]* \([^;()]*\)' \
			'frame:_PyEval_EvalFrameDefault'
	else
		say "# $kind: the eval loop has no name here (stripped, or under 5% of the time): placed by its markers"
	fi
	if [[ $kind == root-trixie ]]; then
		expect_exit 0 "$XPROF" report -i "$kind.data" --flat -o "$kind.flat"
		rm -rf root
		expect_exit 0 "$XPROF" report -i "$kind.data" --folded -o "$kind.folded2"
		expect_exit 0 "$XPROF" report -i "$kind.data" --flat -o "$kind.flat2"
		assert_files_equal "$kind: the same folded report once the root is gone" \
			"$kind.folded" "$kind.folded2"
		assert_files_equal "$kind: the same flat report once the root is gone" \
			"$kind.flat" "$kind.flat2"
	fi
	rm -rf root
	say "# $kind: $nint samples with Python frames"
done

# A fork without an exec: the child's image is a copy of its parent's
# maps, and its Python frames are read as its parent's are.
if [[ -x /usr/bin/python3 ]]; then
	say "## a fork without exec: /usr/bin/python3"
	cat >fork.py <<'PY'
import os
import time


def spin():
    end = time.thread_time() + 0.4
    while time.thread_time() < end:
        pass


def child_spin():
    spin()


def parent_spin():
    spin()


pid = os.fork()
if pid == 0:
    child_spin()
    os._exit(0)
parent_spin()
os.waitpid(pid, 0)
PY
	expect_exit 0 "$XPROF" record -o fork.data -- /usr/bin/python3 fork.py
	expect_exit 0 "$XPROF" report -i fork.data --folded --value samples -o fork.folded
	assert_share_at_least "the forked child's Python frames" 40 fork.folded \
		'frame:child_spin \(fork\.py:[0-9]+\)'
	assert_share_at_least "the parent's Python frames" 40 fork.folded \
		'frame:parent_spin \(fork\.py:[0-9]+\)'
fi
finish
