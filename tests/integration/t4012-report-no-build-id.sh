#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Files without a GNU build-id are kept by the recorder under another
# identity (lib/fileid.h), so that a report is the same once they are
# deleted or rebuilt, names included, and report -v says which identity:
#   - a Go program (tests/targets/go/gospin.go, built with Debian's
#     golang-go), whose linker writes a Go build ID note instead: recorded,
#     reported, deleted, reported again: the same bytes, >= 80% of the
#     samples in main.spin under main.main, and -v names the recorder's copy
#     under buildid/go-<hex> and the Go build ID; rebuilt with another build
#     ID at the same path: the same report again;
#   - a static C program linked without any note (-Wl,--build-id=none):
#     kept under the SHA-256 of its content, the same report once deleted,
#     and -v says SHA-256.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace

GO_SRC=$XP_SRC/tests/targets/go/gospin.go
if command -v go >/dev/null; then
	# Offline and cached: one file, no module, the build cache in the build tree.
	export GOCACHE=$XP_BUILD/go-cache GOPATH=$XP_TMP/gopath GO111MODULE=off GOFLAGS='' \
		GOTOOLCHAIN=local
	say "## a Go program: its Go build ID"
	expect_exit 0 go build -o gospin "$GO_SRC"
	expect_exit 0 go tool buildid gospin
	goid=$(cat "$XP_OUT")
	say "# Go build ID: $goid"
	expect_exit 0 "$XPROF" record -o go.data -- ./gospin 1.5
	show_file summary "$XP_ERR" 3
	assert_file_matches "the summary says the binary was kept" "$XP_ERR" \
		'kept [1-9][0-9]* new of [1-9][0-9]* sampled files'
	assert_file_lacks "none left out for want of a build-id" "$XP_ERR" 'not those'
	expect_exit 0 "$XPROF" report -i go.data --folded --value samples -o before.folded
	show_file "folded" before.folded 5
	assert_share_at_least "main.spin named" 80 before.folded 'chain:...;main.main;main.spin'
	rm gospin
	expect_exit 0 "$XPROF" -v report -i go.data --folded --value samples -o deleted.folded
	assert_files_equal "the same report once the binary is deleted" before.folded deleted.folded
	hex=$(printf '%s' "$goid" | od -An -tx1 | tr -d ' \n')
	assert_file_matches "report -v: the recorder's copy, by its Go build ID" "$XP_ERR" \
		"^xprof: debug: symbols of '$XP_TMP/gospin': the recorder's copy '$XPROF_CACHE_DIR/buildid/go-$hex/elf', by its Go build ID $goid$"

	say "## rebuilt at the same path, with another Go build ID"
	expect_exit 0 go build -ldflags "-X main.variant=2" -o gospin "$GO_SRC"
	expect_exit 0 go tool buildid gospin
	[[ $(cat "$XP_OUT") != "$goid" ]] || fail "the rebuilt binary has the same Go build ID"
	expect_exit 0 "$XPROF" -v report -i go.data --folded --value samples -o rebuilt.folded
	assert_files_equal "the same report once the binary is rebuilt" before.folded rebuilt.folded
	assert_file_matches "report -v: the recorder's copy, not the new file" "$XP_ERR" \
		"symbols of '$XP_TMP/gospin': the recorder's copy .*by its Go build ID $goid$"
	assert_file_lacks "no warning: the copy is the recorded file" "$XP_ERR" '^xprof: warning:'
else
	say "# no 'go' (Debian golang-go, scripts/deps.sh --test): the Go program is not checked"
fi

say "## a static program without any note: its SHA-256"
if ! gcc -O2 -g -static -fno-omit-frame-pointer -D_GNU_SOURCE -Wl,--build-id=none \
	-o nobid "$XP_SRC/tests/targets/split.c" 2>cc.err; then
	show_file "gcc" cc.err
	[[ -n ${goid:-} ]] || skip "neither go nor a static libc (libc6-dev) to build a program without a build-id"
	say "# cannot link statically here: the SHA-256 identity is not checked"
	finish
fi
expect_exit 0 readelf -n nobid
assert_file_lacks "no build-id note" "$XP_OUT" 'NT_GNU_BUILD_ID|GO BUILDID'
sha=$(sha256sum nobid | cut -d' ' -f1)
expect_exit 0 "$XPROF" record -o nobid.data -- ./nobid 1
expect_exit 0 "$XPROF" report -i nobid.data --folded --value samples -o nobid-before.folded
assert_share_at_least "split's a, b, c named" 95 nobid-before.folded 'chain:...;main;work;(a|b|c);leaf'
rm nobid
expect_exit 0 "$XPROF" -v report -i nobid.data --folded --value samples -o nobid-after.folded
assert_files_equal "the same report once it is deleted" nobid-before.folded nobid-after.folded
assert_file_matches "report -v: the recorder's copy, by its SHA-256" "$XP_ERR" \
	"symbols of '$XP_TMP/nobid': the recorder's copy '$XPROF_CACHE_DIR/buildid/sha256-$sha/elf', by its SHA-256 $sha$"
finish
