#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The command line before anything is profiled (doc/design.md, Output and messages):
#   - xprof --help, -h and --version exit 0, print to stdout only;
#     'xprof help record' exits 0; 'record --help' and 'report --help'
#     show their synopsis and end with EXAMPLES;
#   - usage errors exit 2 with exactly one "xprof: error: ..." line, first
#     on stderr, and nothing on stdout: no command, an unknown command, an
#     unknown option (global, record's, report's), record without a
#     command, a missing option value, and -F 0 / 1O0 / 20000 (the message
#     quotes the bad value);
#   - parse, then act: after a usage error the command was not run and no
#     data file was written.
# Needs no ptrace: nothing here gets as far as starting a command.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"

say "## help and version"
check_exit 0 "$XPROF" --help
assert_file_matches "--help: synopsis" "$XP_OUT" '^usage: xprof '
assert_file_matches "--help: lists record" "$XP_OUT" '^ +record +'
assert_file_matches "--help: lists report" "$XP_OUT" '^ +report +'
assert_file_empty "--help: nothing on stderr" "$XP_ERR"
check_exit 0 "$XPROF" -h
assert_file_matches "-h: synopsis" "$XP_OUT" '^usage: xprof '
check_exit 0 "$XPROF" --version
assert_file_matches "--version: version number" "$XP_OUT" '^xprof [0-9]+\.[0-9]+\.[0-9]+'
assert_file_empty "--version: nothing on stderr" "$XP_ERR"
check_exit 0 "$XPROF" help record
assert_file_nonempty "help record: some help on stdout" "$XP_OUT"
assert_file_matches "help record: about record" "$XP_OUT" 'record'
for cmd in record report; do
	check_exit 0 "$XPROF" "$cmd" --help
	assert_file_matches "$cmd --help: synopsis" "$XP_OUT" "^usage: xprof $cmd"
	assert_file_matches "$cmd --help: EXAMPLES" "$XP_OUT" '^EXAMPLES'
	assert_file_empty "$cmd --help: nothing on stderr" "$XP_ERR"
done

say "## usage errors"
# usage_error LABEL ARGS...: exit 2, one error line first on stderr, no stdout.
usage_error() {
	local label=$1
	shift
	check_exit 2 "$XPROF" "$@"
	assert_error_line "$label" "$XP_ERR"
	assert_file_empty "$label: nothing on stdout" "$XP_OUT"
}
usage_error "no command"
usage_error "only global options" -q
usage_error "unknown command" frobnicate
usage_error "unknown global option" --frobnicate
usage_error "unknown record option" record --frobnicate -- sh -c 'echo ran >ran.txt'
usage_error "unknown report option" report --frobnicate
usage_error "record without a command" record
usage_error "record -- without a command" record --
usage_error "record -q without a command" record -q
usage_error "-o without a value" record -o
usage_error "-F without a value" record -F
usage_error "-F 0" record -F 0 -- sh -c 'echo ran >ran.txt'
assert_file_matches "-F 0: names the value" "$XP_ERR" "'0'"
usage_error "-F 1O0" record -F 1O0 -- sh -c 'echo ran >ran.txt'
assert_file_matches "-F 1O0: names the value" "$XP_ERR" "'1O0'"
usage_error "-F 20000" record -F 20000 -- sh -c 'echo ran >ran.txt'
assert_file_matches "-F 20000: names the value" "$XP_ERR" "'20000'"
usage_error "--freq=-5" record --freq=-5 -- sh -c 'echo ran >ran.txt'
usage_error "help for an unknown command" help frobnicate

say "## parse, then act"
if [[ -e ran.txt ]]; then
	fail "a command was run despite a usage error"
else
	say "  ok: no command was run after a usage error"
fi
if [[ -e xprof.data ]]; then
	fail "a usage error left an xprof.data behind"
else
	say "  ok: no data file written after a usage error"
fi

finish
