#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# THEORY OF OPERATION
# Region fds and mappings hold a reference on hbmpool.ko (admin guide,
# "Unloading").  A helper (region_holder) creates a region on a simulated
# node, maps and writes it, and sleeps; while it lives, "rmmod hbmpool" must
# fail (EBUSY, "in use") and leave the module working.  Once the holder is
# killed, rmmod must succeed, /dev/hbmpool and /sys/kernel/hbmpool must be
# gone, and insmod must bring back a clean module (no nodes but node 0, no
# regions).  Checked twice: holder keeping fd + mapping, and mapping only.
#
# Must run LAST in tests.list: it unloads and reloads the module.  The module
# is HBMPOOL_KO, else ../../kmod/hbmpool.ko relative to this script; it is
# reloaded with HBMPOOL_PARAMS.  TAP output; exit 0 pass, 1 fail, 4 skip.
set -u

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"
ko=${HBMPOOL_KO:-$here/../../kmod/hbmpool.ko}
holder=$here/region_holder
hbmctl=$here/../../tools/hbmctl/hbmctl
node=63
sys=/sys/kernel/hbmpool
hpid=

cleanup() {
	[ -n "$hpid" ] && kill "$hpid" 2>/dev/null && wait "$hpid" 2>/dev/null
	# shellcheck disable=SC2086 # HBMPOOL_PARAMS is a list of module parameters
	[ -d $sys ] || insmod "$ko" ${HBMPOOL_PARAMS:-} 2>/dev/null
	[ -d $sys/nodes/node$node ] && "$hbmctl" node del $node 2>/dev/null
	rm -f "$tmp"
}

[ "$(id -u)" = 0 ] || skip_all "needs root"
[ -d $sys ] || skip_all "hbmpool.ko is not loaded"
[ -r "$ko" ] || skip_all "module file $ko not found (set HBMPOOL_KO)"
[ -x "$holder" ] || skip_all "$holder not built"
[ -x "$hbmctl" ] || skip_all "$hbmctl not built (make tools)"
if ! command -v rmmod >/dev/null || ! command -v insmod >/dev/null; then
	skip_all "no rmmod/insmod"
fi
tmp=$(mktemp)
trap cleanup EXIT
echo "1..14"

# start_holder MODE: starts the holder, waits for "ready"
start_holder() {
	"$holder" $node "$1" >"$tmp" 2>&1 &
	hpid=$!
	for _ in $(seq 100); do
		grep -q '^ready' "$tmp" && return 0
		kill -0 $hpid 2>/dev/null || break
		sleep 0.1
	done
	sed 's/^/# holder: /' "$tmp"
	return 1
}
stop_holder() {
	kill "$hpid" && wait "$hpid"
	local rc=$?
	hpid=
	return $rc
}
rmmod_busy() {
	local out
	out=$(rmmod hbmpool 2>&1) && { echo "# rmmod succeeded with a live region"; return 1; }
	echo "# rmmod: $out"
	[ -d $sys ] && [ -c /dev/hbmpool ] || return 1
	grep -qiE 'in use|busy' <<<"$out"
}
refcnt_positive() {
	[ "$(cat /sys/module/hbmpool/refcnt 2>/dev/null || echo 0)" -gt 0 ]
}

for mode in fd map; do
	"$hbmctl" node del $node 2>/dev/null
	check "node add $node ($mode)" "$hbmctl" node add $node capacity 16M distance 20
	check "holder holds a region ($mode)" start_holder $mode
	check "module refcount > 0 while held ($mode)" refcnt_positive
	check "rmmod fails EBUSY while a region is held ($mode)" rmmod_busy
	check "holder exits cleanly ($mode)" stop_holder
	"$hbmctl" node del $node 2>/dev/null
done

check "rmmod succeeds once nothing is held" rmmod hbmpool
check "/dev/hbmpool and /sys/kernel/hbmpool are gone" \
	sh -c "[ ! -e /dev/hbmpool ] && [ ! -e $sys ]"
# shellcheck disable=SC2086 # HBMPOOL_PARAMS is a list of words
check "insmod again" insmod "$ko" ${HBMPOOL_PARAMS:-}
for _ in $(seq 50); do [ -c /dev/hbmpool ] && break; sleep 0.1; done
check "reloaded module is clean (node0 only, no regions)" \
	sh -c "[ -c /dev/hbmpool ] && [ \"\$(ls $sys/nodes)\" = node0 ] && [ \"\$(cat $sys/nr_regions)\" = 0 ]"

[ $fails = 0 ]
