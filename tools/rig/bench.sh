#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# hbmbench in a rig VM, run by 'make bench' (tools/rig/vm.sh -i bench --
# tools/rig/bench.sh).  Not meant for the host: it loads the module.
#
# One simulated node with zero added latency and no bandwidth cap, a cache
# budget large enough that the fault phases do not evict, then hbmbench,
# whose output (table and ratio.* lines) is also saved to $RIG_OUT/bench.txt.
#
# Environment: HBMPOOL_PARAMS (insmod parameters), HBMBENCH_ARGS (arguments
# of hbmbench, default "--size 16M --iterations 3 --evict").
set -euo pipefail

repo=${RIG_REPO:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
cd "$repo"
sys=/sys/kernel/hbmpool
out=${RIG_OUT:-/tmp}

if [ ! -x tools/hbmbench ]; then
	echo "bench: tools/hbmbench is not built (make tools)" >&2
	exit 1
fi
# shellcheck disable=SC2086 # a list of words
insmod kmod/hbmpool.ko ${HBMPOOL_PARAMS:-}
echo "1 256 12 scaleup" >"$sys/new_node"
echo 16384 >"$sys/cache_budget_pages"
echo "== kernel $(uname -r), $(nproc) CPUs, TCG; node 1: sim, latency 0, no bandwidth cap"
# shellcheck disable=SC2086 # a list of words
tools/hbmbench ${HBMBENCH_ARGS:---size 16M --iterations 3 --evict} | tee "$out/bench.txt"
echo 1 >"$sys/del_node"
rmmod hbmpool
