#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# THEORY OF OPERATION
# Module exit must not race the control paths: a node-new that lands after
# the nodes were torn down would leave a node nobody removes, with sysfs
# files whose handlers are gone with the module.  Here, loops drive every
# control path (hbmctl node add/del and params set over netlink, reads of the
# files cache_budget_pages and fetch_timeout_ms, a node's debugfs knobs) as
# fast as they can while "rmmod hbmpool" runs.
# After each rmmod: the module, /sys/kernel/hbmpool and its debugfs are gone;
# after insmod: only this node's own entry (node0) exists.  Repeated ROUNDS times; the rig fails the
# run on any kernel warning, use after free or leak it logs.
#
# Runs before unload.sh in tests.list: it unloads and reloads the module
# (HBMPOOL_KO, else ../../kmod/hbmpool.ko; HBMPOOL_PARAMS).  TAP output;
# exit 0 pass, 1 fail, 4 skip.
set -u

here=$(cd "$(dirname "$0")" && pwd)
ko=${HBMPOOL_KO:-$here/../../kmod/hbmpool.ko}
hbmctl=$here/../../tools/hbmctl/hbmctl
sys=/sys/kernel/hbmpool
dbg=/sys/kernel/debug/hbmpool
rounds=${ROUNDS:-8}
n=0
fails=0
pids=()

echo "TAP version 13"
skip_all() { echo "1..0 # SKIP $*"; exit 4; }
ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); echo "not ok $n - $*"; fails=$((fails + 1)); }

# shellcheck disable=SC2317 # called through the EXIT trap
# Stops the writers and the commands they run: an hbmctl left running (killing
# its loop does not kill it) could add a node to the next module.
stop_writers() {
	local p
	[ ${#pids[@]} -gt 0 ] || return 0
	kill -STOP "${pids[@]}" 2>/dev/null
	for p in "${pids[@]}"; do
		pkill -KILL -P "$p" 2>/dev/null
	done
	kill -KILL "${pids[@]}" 2>/dev/null
	wait "${pids[@]}" 2>/dev/null
	pids=()
}
# shellcheck disable=SC2317 # the EXIT trap
cleanup() {
	stop_writers
	# shellcheck disable=SC2086 # HBMPOOL_PARAMS is a list of module parameters
	[ -d $sys ] || insmod "$ko" ${HBMPOOL_PARAMS:-} 2>/dev/null
}

[ "$(id -u)" = 0 ] || skip_all "needs root"
[ -d $sys ] || skip_all "hbmpool.ko is not loaded"
[ -r "$ko" ] || skip_all "module file $ko not found (set HBMPOOL_KO)"
[ -x "$hbmctl" ] || skip_all "$hbmctl not built (make tools)"
if ! command -v rmmod >/dev/null || ! command -v insmod >/dev/null; then
	skip_all "no rmmod/insmod"
fi
trap cleanup EXIT
echo "1..$((3 * rounds))"

# Each writer: one control path, forever; errors (the module going) ignored.
writer_nodes() {
	local id
	while :; do
		for id in 20 21 22 23; do
			"$hbmctl" node add "$id" capacity 4M distance 20
			"$hbmctl" node del "$id"
		done
		"$hbmctl" node add 24 capacity 4M distance 30 link scaleout
	done >/dev/null 2>&1
}
writer_knobs() {
	while :; do
		"$hbmctl" params set cache-budget-pages "64"
		"$hbmctl" params set fetch-timeout-ms 1000
		"$hbmctl" params set cache-budget-pages "16384"
		"$hbmctl" params set cache-budget-pages 8192 fetch-timeout-ms 5000
		"$hbmctl" params set fetch-timeout-ms "2000"
		cat $sys/cache_budget_pages $sys/fetch_timeout_ms
	done >/dev/null 2>&1
}
writer_debugfs() {
	while :; do
		echo 1 >$dbg/node24/latency_us
		echo 0 >$dbg/node24/latency_us
		echo 1 >$dbg/node24/fail_fetch
		echo 0 >$dbg/node24/fail_fetch
		cat $dbg/node24/hang_fetch
	done >/dev/null 2>&1
}

for r in $(seq "$rounds"); do
	writer_nodes & pids+=($!)
	writer_nodes & pids+=($!)
	writer_knobs & pids+=($!)
	writer_debugfs & pids+=($!)
	sleep 0.$((r % 4 + 1))
	rc=1
	for _ in 1 2 3 4 5; do
		rmmod hbmpool 2>/dev/null && { rc=0; break; }
		sleep 0.2
	done
	sleep 0.3	# the writers keep trying on a module that is gone
	stop_writers
	if [ $rc = 0 ] && [ ! -e $sys ] && [ ! -e $dbg ] && ! grep -q '^hbmpool ' /proc/modules; then
		ok "round $r: rmmod under control writers, nothing left"
	else
		nok "round $r: rmmod rc=$rc, left: $(find $sys $dbg -maxdepth 0 2>/dev/null | tr '\n' ' ')"
	fi
	# shellcheck disable=SC2086 # HBMPOOL_PARAMS is a list of module parameters
	if insmod "$ko" ${HBMPOOL_PARAMS:-}; then
		ok "round $r: insmod"
	else
		nok "round $r: insmod"
		break
	fi
	nodes=$(cd $sys/nodes && echo node*)
	if [ "$nodes" = node0 ]; then
		ok "round $r: a fresh module has node0 only"
	else
		nok "round $r: a fresh module has: $nodes"
	fi
done

[ $fails = 0 ] || exit 1
exit 0
