#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run host-side unit tests, JOBS at a time, and print each one's output
# whole, in the order given, as soon as it and every one before it is done.
#
# usage: run-units.sh [-j JOBS] COMMAND...
#   COMMAND: one test, run as a shell command line from the current
#            directory (e.g. "unit/wire_unit", "python3 multi/x.py").
#   -j JOBS: how many run at once (default 4).  Most of these tests wait
#            (for etcd, a lease, a timeout) far more than they compute:
#            about a quarter of their wall time is CPU.  Each picks its own
#            free ports and temporary directories, so they do not collide.
#
# A test's exit status 4 is a skip ("# NAME: skipped"); any other non-zero
# status fails the run (exit 1), after every test has run.  A line
# "# NAME: exit N, S s" follows each failed test's output.
set -u

jobs=4
if [ "${1:-}" = -j ]; then
	jobs=$2
	shift 2
fi
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "run-units.sh: bad -j '$jobs'" >&2; exit 2; }
[ $# -gt 0 ] || { echo "usage: run-units.sh [-j JOBS] COMMAND..." >&2; exit 2; }

tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
tests=("$@")
next=0		# the next test to start
shown=0		# the next test to print
running=0
rc=0

start() {
	local i=$next
	(
		s=$SECONDS
		bash -c "${tests[i]}" >"$tmp/$i.out" 2>&1 </dev/null
		r=$?
		echo "$r $((SECONDS - s))" >"$tmp/$i.rc.new"
		mv "$tmp/$i.rc.new" "$tmp/$i.rc"
	) &
	next=$((next + 1))
	running=$((running + 1))
}

while [ $shown -lt ${#tests[@]} ]; do
	while [ $running -lt "$jobs" ] && [ $next -lt ${#tests[@]} ]; do
		start
	done
	if [ -e "$tmp/$shown.rc" ]; then
		read -r r secs <"$tmp/$shown.rc"
		cat "$tmp/$shown.out"
		case $r in
		0) ;;
		4) echo "# ${tests[shown]}: skipped" ;;
		*) echo "# ${tests[shown]}: exit $r, $secs s"; rc=1 ;;
		esac
		shown=$((shown + 1))
		continue
	fi
	# One job ended (each ends with status 0), or none was left (127).
	wait -n 2>/dev/null
	[ $running -gt 0 ] && running=$((running - 1))
done
exit $rc
