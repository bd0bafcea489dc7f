# SPDX-License-Identifier: MIT
#
# Statistics over folded stacks (Brendan Gregg's format, as printed by
# 'xprof report --folded': one line per distinct stack, frames root first
# separated by ';', the first frame being the process name (comm), then a
# space and a sample count).  Used by tests/lib/lib.sh; POSIX awk (Debian's
# default is mawk), no gawk extensions.
#
# Variables (awk -v), or in the environment as XP_FOLDED_PRED and
# XP_FOLDED_GIVEN, which keep their backslashes (awk reads escape
# sequences in -v values, and gawk turns "\[" into "["):
#   pred   the condition to count (required)
#   given  a condition that restricts the samples considered (optional):
#          the result is then "of the samples matching given, how many
#          match pred" (e.g. of the samples with leaf on top, how many have
#          a, b or c right below it)
# Output, one line: "<hits> <considered> <total>" (sample counts).
#
# A condition is KIND:PATTERN, or !KIND:PATTERN for its negation, or "all":
#   comm:RE        the first field (process name) matches RE
#   frame:RE       some frame (not counting comm) matches RE
#   leaf:RE        the innermost frame matches RE
#   chain:P        P, a ';'-separated list, matches consecutive frames
#                  somewhere in the stack (not counting comm)
#   tail:P         P matches the innermost frames (ends at the leaf)
#   root:P         P matches the outermost frames (right after comm)
#   stack:ERE      the whole stack as printed (comm;frame;...;leaf, without
#                  the count) matches ERE, unanchored: for patterns the
#                  kinds above cannot say, such as an optional frame
#                  (";accumulate(;mix)?$")
# Each element of P is an extended regular expression matched against a
# whole frame name (it is anchored: "a" does not match "main"), or "..."
# for any number (zero or more) of frames: "main;sort_driver;...;chain_cmp".
# The count of a line is its last space-separated field; frame names may
# contain spaces (C++ signatures).

function parse(p, cond,    neg, kind, pat, i, n, parts) {
	neg = 0
	if (substr(cond, 1, 1) == "!") {
		neg = 1
		cond = substr(cond, 2)
	}
	NEG[p] = neg
	if (cond == "all") {
		KIND[p] = "all"
		return
	}
	i = index(cond, ":")
	if (i < 2)
		die("bad condition '" cond "' (expected KIND:PATTERN or all)")
	kind = substr(cond, 1, i - 1)
	pat = substr(cond, i + 1)
	if (kind == "frame")
		kind = "chain"
	else if (kind == "leaf")
		kind = "tail"
	if (kind != "comm" && kind != "chain" && kind != "tail" && kind != "root" &&
	    kind != "stack")
		die("bad condition kind '" kind "' in '" cond "'")
	if (pat == "")
		die("empty pattern in '" cond "'")
	KIND[p] = kind
	if (kind == "comm" || kind == "stack") {
		RE[p, 1] = kind == "comm" ? "^(" pat ")$" : pat
		M[p] = 1
		return
	}
	n = split(pat, parts, ";")
	for (i = 1; i <= n; i++) {
		if (parts[i] == "")
			die("empty element in '" cond "'")
		EL[p, i] = parts[i]
		RE[p, i] = "^(" parts[i] ")$"
	}
	M[p] = n
}

function die(msg) {
	print "folded.awk: " msg > "/dev/stderr"
	failed = 1
	exit 2
}

# Do elements j.. of condition p match frames i.. (F[1..NF_] are the frames
# without comm)?  With END_ANCHOR the match must end at the last frame.
function match_at(p, i, j,    k) {
	if (j > M[p])
		return END_ANCHOR ? i == NF_ + 1 : 1
	if (EL[p, j] == "...") {
		for (k = i; k <= NF_ + 1; k++)
			if (match_at(p, k, j + 1))
				return 1
		return 0
	}
	if (i > NF_)
		return 0
	if (F[i] ~ RE[p, j])
		return match_at(p, i + 1, j + 1)
	return 0
}

function test(p,    r, i) {
	if (KIND[p] == "all")
		r = 1
	else if (KIND[p] == "comm")
		r = (COMM ~ RE[p, 1])
	else if (KIND[p] == "stack")
		r = (STACK ~ RE[p, 1])
	else if (KIND[p] == "root") {
		END_ANCHOR = 0
		r = match_at(p, 1, 1)
	} else if (KIND[p] == "tail") {
		END_ANCHOR = 1
		r = 0
		for (i = 1; i <= NF_ + 1 && !r; i++)
			r = match_at(p, i, 1)
	} else {
		END_ANCHOR = 0
		r = 0
		for (i = 1; i <= NF_ && !r; i++)
			r = match_at(p, i, 1)
	}
	return NEG[p] ? !r : r
}

BEGIN {
	if (pred == "") {
		pred = ENVIRON["XP_FOLDED_PRED"]
		given = ENVIRON["XP_FOLDED_GIVEN"]
	}
	if (pred == "")
		die("no condition given (-v pred=...)")
	parse(1, pred)
	have_given = (given != "")
	if (have_given)
		parse(2, given)
}

/^[ \t]*$/ { next }

{
	count = $NF
	if (count !~ /^[0-9]+$/ || NF < 2) {
		print "folded.awk: " FILENAME ":" FNR ": not a folded line: " $0 > "/dev/stderr"
		failed = 1
		exit 2
	}
	stack = substr($0, 1, length($0) - length(count))
	sub(/ +$/, "", stack)
	STACK = stack
	nall = split(stack, all, ";")
	COMM = all[1]
	NF_ = nall - 1
	for (i = 2; i <= nall; i++)
		F[i - 1] = all[i]
	total += count
	if (have_given && !test(2))
		next
	considered += count
	if (test(1))
		hits += count
}

END {
	if (failed)
		exit 2
	printf "%.0f %.0f %.0f\n", hits, considered, total
}
