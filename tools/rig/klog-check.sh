#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Scan guest kernel logs for signs of a kernel bug.
#
# usage: klog-check.sh [-a ALLOWFILE] LOG...
#
# Only kernel lines are read (those starting with a printk timestamp
# "[    1.234567]"), so test output on the console cannot trip it.  A line is
# bad if it matches one of
#   WARNING:  BUG:  Oops  general protection  Kernel panic  hung_task
#   blocked for more than  soft lockup  rcu...stall  UBSAN:  KASAN:
#   unreferenced object  Call Trace
# unless it matches a line of ALLOWFILE (one extended regex per line, '#'
# comments); a "Call Trace" is also allowed when one of the 40 kernel lines
# before it matches ALLOWFILE (an expected dump_stack() after an allowed
# message).  Prints the bad lines; exit status 1 if there are any, 0 if none.
set -euo pipefail

allow=/dev/null
if [ "${1:-}" = "-a" ]; then
	allow=$2
	shift 2
	[ -r "$allow" ] || allow=/dev/null
fi
[ $# -gt 0 ] || { echo "usage: $0 [-a ALLOWFILE] LOG..." >&2; exit 2; }

awk -v allowfile="$allow" '
BEGIN {
	bad = "WARNING:|BUG:|Oops|general protection|Kernel panic|hung_task|blocked for more than|" \
	      "soft lockup|rcu.*stall|UBSAN:|KASAN:|unreferenced object|Call Trace"
	while ((getline l < allowfile) > 0)
		if (l !~ /^[ \t]*(#|$)/)
			allow[na++] = l
	W = 40
}
function allowed(s,    i) {
	for (i = 0; i < na; i++)
		if (s ~ allow[i])
			return 1
	return 0
}
FNR == 1 { n = 0 }
{
	sub(/\r$/, "")
	if ($0 !~ /^\[ *[0-9]+\.[0-9]+\]/)
		next
	line = $0
	hist[n % W] = line
	n++
	if (line !~ bad || allowed(line))
		next
	if (line ~ /Call Trace/) {
		for (i = n - 2; i >= 0 && i >= n - W; i--)
			if (allowed(hist[i % W]))
				next
	}
	if (!(line in seen)) {
		seen[line] = 1
		print FILENAME ": " line
		nbad++
	}
}
END { exit nbad > 0 }
' "$@"
