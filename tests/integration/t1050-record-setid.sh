#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# A set-group-ID program under 'xprof record' (chage, group shadow, from
# Debian's passwd package): the kernel runs it with its caller's own
# credentials when the tracer lacks CAP_SYS_PTRACE over it, so that as an
# ordinary user 'chage -l nobody' cannot read /etc/shadow (exit 1) where
# it can without xprof.  xprof says so, in one warning line that names
# the program and the way out.  As root the program keeps its privileges:
# it prints the same as without xprof, and nothing is said.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace
require_cmd chage passwd
users_self_and_nobody

chage=$(command -v chage)
if [[ $(stat -c %A "$chage") != ??????s* ]]; then
	skip "$chage is not set-group-ID here"
fi

for user in "${users[@]}"; do
	pre=()
	dir=$XP_TMP/self
	[[ $user == nobody ]] && dir=$XP_TMP/user/setid && pre=("${as_user[@]}" env "HOME=$dir")
	mkdir -p "$dir" && chmod 1777 "$dir"
	cd "$dir"
	say "## as $user"
	if ! "${pre[@]}" "$chage" -l nobody >plain.out 2>&1; then
		say "# chage -l nobody fails as $user without xprof: not checked"
		continue
	fi
	if [[ $user == nobody || $EUID -ne 0 ]]; then
		expect_exit 1 "${pre[@]}" "$XPROF" record -o setid.data -- "$chage" -l nobody
		assert_file_matches "the lost privileges: one warning, the program named" "$XP_ERR" \
			"^xprof: warning: pid [0-9]+ runs set-group-ID program '$chage' without its privileges"
		assert_eq "said once" "$(grep -c 'without its privileges' "$XP_ERR")" 1
	else
		expect_exit 0 "${pre[@]}" "$XPROF" record -o setid.data -- "$chage" -l nobody
		assert_files_equal "chage's output as without xprof" plain.out "$XP_OUT"
		assert_file_lacks "nothing said of privileges" "$XP_ERR" 'privileges'
	fi
done

finish
