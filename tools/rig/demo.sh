#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The hbmpool demo, run inside a rig VM by 'make demo' (tools/rig/vm.sh -i
# demo -- tools/rig/demo.sh).  Not meant for the host: it loads the module.
#
# Loads kmod/hbmpool.ko, creates four simulated remote nodes at growing
# distances (two scale-up, one scale-out, one scale-across), sets the cache
# budget, then runs tools/hbmdemo and prints its output.
#
# Environment: HBMPOOL_PARAMS (insmod parameters), DEMO_CACHE_PAGES (cache
# budget, default 4096 pages = 16 MiB), HBMDEMO_ARGS (arguments of hbmdemo).
set -euo pipefail

repo=${RIG_REPO:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
cd "$repo"
sys=/sys/kernel/hbmpool

if [ ! -x tools/hbmdemo ]; then
	echo "demo: tools/hbmdemo is not built (make tools)" >&2
	exit 1
fi

echo "== loading hbmpool.ko ${HBMPOOL_PARAMS:-}"
# shellcheck disable=SC2086 # a list of words
insmod kmod/hbmpool.ko ${HBMPOOL_PARAMS:-}

echo "== creating simulated remote nodes (ID CAPACITY_MIB DISTANCE LINK)"
for node in "1 64 12 scaleup" "2 64 16 scaleup" "3 64 32 scaleout" "4 64 64 scaleacross"; do
	echo "   $node"
	echo "$node" >"$sys/new_node"
done
echo "${DEMO_CACHE_PAGES:-4096}" >"$sys/cache_budget_pages"
echo "   cache_budget_pages = $(cat "$sys/cache_budget_pages")"

echo
printf '%-6s %-6s %-9s %-12s %-10s %s\n' node state distance link transport capacity_MiB
for d in "$sys"/nodes/node*; do
	printf '%-6s %-6s %-9s %-12s %-10s %s\n' "$(cat "$d/id")" "$(cat "$d/state")" \
		"$(cat "$d/distance")" "$(cat "$d/link_type")" "$(cat "$d/transport")" \
		"$(( $(cat "$d/capacity_bytes") >> 20 ))"
done

echo
echo "== tools/hbmdemo ${HBMDEMO_ARGS:-}"
# shellcheck disable=SC2086 # a list of words
tools/hbmdemo ${HBMDEMO_ARGS:-}
