#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# hbmbench in a rig VM, run by 'make bench' (tools/rig/vm.sh -i bench --
# tools/rig/bench.sh).  Not meant for the host: it loads the module.
#
# One simulated node with zero added latency and no bandwidth cap, a cache
# budget large enough that the fault phases do not evict, then hbmbench,
# whose output (table, goal lines, key=value lines) is also saved to
# $RIG_OUT/bench.txt.  The default arguments cover every goal of issue 12
# that a simulated node can measure: eviction, the 2x-cache workload, two
# threads (the VM has 2 vCPUs unless RIG_SMP says otherwise), four passes
# alternating the order of each phase and its baseline.
#
# Environment: HBMPOOL_PARAMS (insmod parameters), HBMBENCH_ARGS (arguments
# of hbmbench, default "--size 64M --passes 4 --iterations 2 --evict
# --workload --threads 2"), HBMBENCH_NODES (simulated nodes 1..N, default 1:
# e.g. 3 for "--replicas 3", whose regions need a node per copy),
# HBMBENCH_AB (a writable bool parameter of the module, e.g. recycle_pages:
# hbmbench runs four times, the parameter Y, N, N, Y, each run labelled
# "== PARAM=V" and the goal lines of all four, with seq_fault_huge's,
# reread_huge's and remap_huge's ratio and PMD lines, repeated at the end;
# the parameter is left Y), HBMBENCH_KO_B (a hbmpool.ko built from another
# commit, a path under the repository: hbmbench runs four times, with
# kmod/hbmpool.ko, that file, that file, kmod/hbmpool.ko, each loaded
# afresh with the same nodes and budget, each run labelled "== module=FILE"
# and the goal lines repeated at the end the same way).
set -euo pipefail

repo=${RIG_REPO:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
cd "$repo"
out=${RIG_OUT:-/tmp}
default_args="--size 64M --passes 4 --iterations 2 --evict --workload --threads 2"

for t in hbmbench hbmctl/hbmctl; do
	if [ ! -x tools/$t ]; then
		echo "bench: tools/$t is not built (make tools)" >&2
		exit 1
	fi
done
nnodes=${HBMBENCH_NODES:-1}
# The module (a file), its nodes and the budget of the phases.
load() {
	# shellcheck disable=SC2086 # a list of words
	insmod "$1" ${HBMPOOL_PARAMS:-}
	for ((i = 1; i <= nnodes; i++)); do
		tools/hbmctl/hbmctl node add $i capacity 256M distance 12 link scaleup
	done
	tools/hbmctl/hbmctl params set cache-budget-pages 16384
}
unload() {
	for ((i = 1; i <= nnodes; i++)); do
		tools/hbmctl/hbmctl node del $i
	done
	rmmod hbmpool
}
# The goal lines of the runs of an A/B, after them.
summary() {
	echo "== summary: goal lines per run, $1" | tee -a "$out/bench.txt"
	grep -E "^== $2|^goal [a-z]|^work_2x: |^(ratio|huge) (seq_fault|reread|remap)_huge[/ ]" \
		"$out/bench.txt" | tee -a "$out/bench.txt.summary"
	cat "$out/bench.txt.summary" >>"$out/bench.txt"
	rm -f "$out/bench.txt.summary"
}
kob=${HBMBENCH_KO_B:-}
if [ -n "$kob" ] && [ ! -f "$kob" ]; then
	echo "bench: HBMBENCH_KO_B: no file '$kob' in the VM (a path under the repository)" >&2
	exit 1
fi
if [ -n "$kob" ] && [ -n "${HBMBENCH_AB:-}" ]; then
	echo "bench: HBMBENCH_KO_B and HBMBENCH_AB: one A/B at a time" >&2
	exit 1
fi
load kmod/hbmpool.ko
args=${HBMBENCH_ARGS:-$default_args}
echo "== $(date -u +%Y-%m-%dT%H:%MZ), kernel $(uname -r), $(nproc) CPUs, TCG," \
	"memory preallocated: $(grep -qw rig.prealloc=1 /proc/cmdline && echo 1 || echo 0);" \
	"commit $(git -C "$repo" describe --always --dirty 2>/dev/null || echo unknown);" \
	"nodes 1..$nnodes: sim, latency 0, no bandwidth cap" | tee "$out/bench.txt"
echo "== tools/hbmbench $args" | tee -a "$out/bench.txt"
ab=${HBMBENCH_AB:-}
if [ -n "$kob" ]; then
	for ko in kmod/hbmpool.ko "$kob" "$kob" kmod/hbmpool.ko; do
		unload
		load "$ko"
		echo "== module=$ko" | tee -a "$out/bench.txt"
		# shellcheck disable=SC2086 # a list of words
		tools/hbmbench $args | tee -a "$out/bench.txt"
	done
	summary "modules kmod/hbmpool.ko, $kob, $kob, kmod/hbmpool.ko" "module="
elif [ -z "$ab" ]; then
	# shellcheck disable=SC2086 # a list of words
	tools/hbmbench $args | tee -a "$out/bench.txt"
else
	param=/sys/module/hbmpool/parameters/$ab
	if ! [[ "$ab" =~ ^[a-z_]+$ ]] || [ ! -w "$param" ]; then
		echo "bench: HBMBENCH_AB: no writable module parameter '$ab'" >&2
		exit 1
	fi
	for v in Y N N Y; do
		echo "$v" >"$param"
		echo "== $ab=$(cat "$param")" | tee -a "$out/bench.txt"
		# shellcheck disable=SC2086 # a list of words
		tools/hbmbench $args | tee -a "$out/bench.txt"
	done
	summary "$ab Y, N, N, Y" "$ab="
fi
unload
