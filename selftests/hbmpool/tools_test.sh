#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# THEORY OF OPERATION
# The user-facing programs work end to end on the simulated fabric:
# tools/hbmdemo fills a region four times the cache budget interleaved over
# every node, verifies every byte and syncs (exit 0 only if all verified),
# and tools/hbmbench runs every phase (two threads, the 2x workload, a
# --window that it restores at exit) and prints its ratio and goal lines
# and the 2x workload split into its parts with their page faults.  No
# figure is judged: timing belongs to 'make bench', not to tests.
# TAP output; exit 0 pass, 1 fail, 4 skip.
set -u

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"
tools=$here/../../tools
hbmctl=$tools/hbmctl/hbmctl
sys=/sys/kernel/hbmpool
nodes="57 58"
budget0=

cleanup() {
	local id
	[ -n "$budget0" ] && "$hbmctl" params set cache-budget-pages "$budget0"
	for id in $nodes; do
		[ -d $sys/nodes/node"$id" ] && "$hbmctl" node del "$id"
	done
	rm -f "${log:-}"
}

[ "$(id -u)" = 0 ] || skip_all "needs root"
[ -d $sys ] || skip_all "hbmpool.ko is not loaded"
for t in hbmdemo hbmbench hbmctl/hbmctl; do
	[ -x "$tools/$t" ] || skip_all "tools/$t not built (make tools)"
done
log=$(mktemp)
trap cleanup EXIT
echo "1..6"

budget0=$(cat $sys/cache_budget_pages)
"$hbmctl" params set cache-budget-pages "256"
"$hbmctl" node add 57 capacity 16M distance 12 link scaleup
"$hbmctl" node add 58 capacity 16M distance 40 link scaleout

if "$tools/hbmdemo" >"$log" 2>&1; then
	ok "hbmdemo verified every byte of a region 4x the cache"
else
	nok "hbmdemo failed"
	sed 's/^/# /' "$log"
fi
# placement table: node distance link chunks share bytes
if awk '$1 == 57 && $2 == 12 && $4 > 0 { a = 1 } $1 == 58 && $2 == 40 && $4 > 0 { b = 1 }
	END { exit !(a && b) }' "$log"; then
	ok "hbmdemo placed chunks on both nodes"
else
	nok "hbmdemo output names no chunk on node 57 and 58"
	sed 's/^/# /' "$log"
fi

window0=$(cat $sys/readahead_max_pages)
if "$tools/hbmbench" --nodes 57 --size 1M --passes 2 --iterations 1 --evict --workload \
	--threads 2 --window 3 >"$log" 2>&1; then
	ok "hbmbench ran every phase"
else
	nok "hbmbench failed"
	sed 's/^/# /' "$log"
fi
if grep -q '^ratio\.seq_fault_vs_memcpy=' "$log" &&
   grep -q '^ratio\.rand_fault_vs_memcpy=' "$log" &&
   grep -q '^goal\.work_2x_vs_local_2x_time\.pass2=' "$log" &&
   grep -q '^goal\.rand_fault_mt_vs_rand_fault\.met=' "$log" &&
   grep -q '^param\.readahead_max_pages=3$' "$log" &&
   grep -Eq '^clock_read_ns=[0-9]+$' "$log" &&
   grep -qx "clocksource=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)" "$log"; then
	ok "hbmbench printed its ratio and goal lines, the clocksource and a clock reading's cost"
else
	nok "hbmbench printed no ratio lines, not every goal line, or no clock lines"
	sed 's/^/# /' "$log"
fi
# the 2x workload's parts: local memory faults at least once per page in
# order (alloc + zero), the region's random part has a time
if grep -Eq '^work\.local_2x\.pass2\.inorder_faults_per_page=[1-9][0-9]*\.[0-9]+$' "$log" &&
   grep -Eq '^work\.work_2x\.pass2\.random_ms=[0-9]+\.[0-9]$' "$log" &&
   grep -Eq '^work_2x: in order [0-9]+ ms .*random part / local_2x [0-9.]+  \[pass2\]$' "$log"; then
	ok "hbmbench split the 2x workload into its parts, with their page faults"
else
	nok "hbmbench printed no parts of the 2x workload, or no page faults for local memory"
	sed 's/^/# /' "$log"
fi
if [ "$(cat $sys/readahead_max_pages)" = "$window0" ]; then
	ok "hbmbench restored readahead_max_pages ($window0) after --window 3"
else
	nok "readahead_max_pages is $(cat $sys/readahead_max_pages) after hbmbench, was $window0"
fi

[ "$fails" -eq 0 ]
