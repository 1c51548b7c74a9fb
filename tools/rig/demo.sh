#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The hbmpool demo, run inside a rig VM by 'make demo' (tools/rig/vm.sh -i
# demo -- tools/rig/demo.sh).  Not meant for the host: it loads the module.
#
# Loads kmod/hbmpool.ko, creates four simulated remote nodes at growing
# distances (two scale-up, one scale-out, one scale-across) and sets the
# cache budget with tools/hbmctl, then runs tools/hbmdemo and prints its
# output.
#
# Environment: HBMPOOL_PARAMS (insmod parameters), DEMO_CACHE_PAGES (cache
# budget, default 4096 pages = 16 MiB), HBMDEMO_ARGS (arguments of hbmdemo).
set -euo pipefail

repo=${RIG_REPO:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
cd "$repo"
hbmctl=tools/hbmctl/hbmctl

for t in hbmdemo hbmctl/hbmctl; do
	if [ ! -x tools/$t ]; then
		echo "demo: tools/$t is not built (make tools)" >&2
		exit 1
	fi
done

echo "== loading hbmpool.ko ${HBMPOOL_PARAMS:-}"
# shellcheck disable=SC2086 # a list of words
insmod kmod/hbmpool.ko ${HBMPOOL_PARAMS:-}

echo "== creating simulated remote nodes (hbmctl node add ID capacity SIZE distance N link TYPE)"
for node in "1 64M 12 scaleup" "2 64M 16 scaleup" "3 64M 32 scaleout" "4 64M 64 scaleacross"; do
	read -r id cap dist link <<<"$node"
	echo "   node add $id capacity $cap distance $dist link $link"
	"$hbmctl" node add "$id" capacity "$cap" distance "$dist" link "$link"
done
"$hbmctl" params set cache-budget-pages "${DEMO_CACHE_PAGES:-4096}"

echo
"$hbmctl" params show
echo
"$hbmctl" node show

echo
echo "== tools/hbmdemo ${HBMDEMO_ARGS:-}"
# shellcheck disable=SC2086 # a list of words
tools/hbmdemo ${HBMDEMO_ARGS:-}
