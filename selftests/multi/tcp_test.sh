#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# hbmpool over the in-kernel TCP transport, across 3 VMs of the multi-VM rig
# (tools/rig/multi.sh running tools/rig/multi-agent.sh), driven from the host
# by this script (--host, run by multi.sh -c) through tools/rig/multi-ctl.sh.
# TAP on stdout; the last line is "N passed, N failed".  Needs
# kmod/hbmpool.ko and tools/hbmctl/hbmctl (make module tools); builds
# selftests/multi/regionio into $RIG_BUILD/regionio itself.
#
#   make module tools && selftests/multi/tcp_test.sh
#   (the TAP is in $RIG_BUILD/multi-tcptest/host.log, the VMs' logs in
#   $RIG_BUILD/out-tcptest-K/)
#
# Every VM K (1..3) is node K of domain "rig" (one random 32-byte key for
# all, $RIG_SYNC/domain.key), listens on 10.77.0.K:7070, exports a 64 MiB
# segment and has the two others as tcp nodes (capacity 64M, distance 20,
# scaleout); cache budget 512 pages (2 MiB), fetch timeout 5000 ms.
# Regions are 8 MiB in 1 MiB chunks, interleaved, held open by
# "regionio create --hold" and checked by regionio write / verify (every
# word a function of seed, page and word; zeros are never good).
#
#   1 links: every VM's links to the two others reach health "live" in 30 s
#   H huge mappings (TCP only): VM1 writes a region of 2 MiB chunks on node
#     2 (budget 4096 pages, a sync), and a read-only MADV_HUGEPAGE mapping
#     then reads it exact with its 4 pieces gathered from the cache's
#     4 KiB pages into entries mapped with PMDs (debugfs huge: collapsed
#     +4, mapped +4), none fetched whole (created unchanged); with its
#     cache emptied, the same read fetches piece 0 whole in 4 KiB pages
#     for its fault and pieces 1 to 3 ahead (fetched +1, ahead +3), and
#     gathers all four (collapsed +4, mapped +4), exact
#   2 data: VM1, a region over 2,3 four times the cache: write, then verify
#     in seq, rev and rand order, exact; its links carried requests and saw
#     no digest error; its digests are by the faster CRC32C timed at load;
#     the homes answered reads with their pages' digests at rest, and with
#     the digests_at_rest parameter off they digest them again and the data
#     is still exact; a bit flipped in VM2's segment (debugfs segment_flip)
#     makes VM1's read of that page SIGBUS and count a digest error, where
#     with VM2's parameter off it reads the wrong byte and can write the
#     page again; after that, with the parameter on, exact; a region
#     written and released, then a new one on the same homes: zeros only,
#     answered from digests at rest, no digest error
#   3 concurrency: VM1 (over 2,3) and VM2 (over 1,3) write and verify at the
#     same time, both exact
#   4 cut VM3's link: VM1's verify ends in bounded time, node 3's pages
#     SIGBUS, node 2's good, none bad; VM1's link to 3 leaves "live" and
#     VM1's monitor saw a link-change event; restore: live again in 60 s and
#     the whole region exact
#   5 kill VM3: the same bounded SIGBUS check on a region VM1 holds; VM3
#     restarted and set up again has a new segment incarnation; VM1's region
#     then reports lost-chunks > 0 and its node-3 pages SIGBUS (never zeros:
#     bad = 0), node 2's good
#   6 freeze VM2 (8 s, past the fetch timeout) while VM1 verifies a region
#     on 2,3 over and over: no verify sees a bad byte; after the thaw the
#     links are live and a write+verify round is exact on VM1 and VM2
#   7 security: from VM1, selftests/multi/wirefuzz.py against VM2's home
#     (stranger, wrongkey, goodkey, fuzz: 50 rounds, each of its 25 cases
#     twice, from a random seed; the fuzzer claims node id 9, which
#     VM2 is given as a member, so that goodkey and fuzz get past the
#     handshake without superseding VM1's own session):
#     each meets its expectations, VM2's segment counts more auth-failures
#     and rejected, VM2's kernel log has no BUG/WARNING, and the data check
#     of 2 is exact again
#   8 moves: VM1 moves a chunk of a region over 2,3 from node 2 to node 3
#     (hbmctl region move --wait, rate-limited) while it writes the region:
#     the move ends done, the chunk lives on 3, VM2's segment gave the
#     chunk back, and the region verifies exact after a flush; a second
#     move, back to node 2 with VM2's link cut as it starts, ends failed in
#     bounded time, the chunk stays on 3, and after the restore the region
#     is exact and the move succeeds; VM1's kernel log has no BUG or WARNING
#   9 teardown: VM3 closes everything, deletes its nodes and segment and
#     unloads; then VM3 is killed and, with a dead peer, VM2 does the same
#     (node del of the dead node included) and VM1 closes its regions and
#     unloads with its nodes and segment still configured (the "rmmod after
#     closing regions while a peer is dead" check of 5: done here, because
#     5 needs VM1's region to live on until VM3 is back)
#
# The names of the JSON members the checks read are in one place below
# (J_*), with the alternatives accepted.
#
# Environment: MULTI_TIMEOUT (whole run, default 1500 s), RIG_BUILD, KVER,
# RIG_KERNEL and HBMPOOL_KO (another kernel and its module, e.g. the debug
# kernel's: make check-debug),
# TCP_TEST_ONLY=moves (links, then straight to the chunk moves of 8 and the
# teardown), TCP_TEST_FREEZE (seconds, default 8), TCP_TEST_TRANSPORT (default tcp;
# "sim" is a dry run of the script's own plumbing on a kernel without the
# TCP transport: the nodes are simulated in each VM, the domain and address
# settings may fail without stopping the set-up, and the checks of links,
# faults, incarnations and the wire are expected to fail; "shm": below).
#
# Over shm (TCP_TEST_TRANSPORT=shm, or selftests/multi/shm_test.sh; run
# "shmtest", 128 MiB of ivshmem per node): every segment is provider shm on
# the VM's own ivshmem device (0000:00:1K.0, rig_shm), every node transport
# shm with the home's device, so that page data moves by load/store and only
# the control path uses TCP.  Scenarios 1, 2, 3, 5 and 9 run as above, with
# these differences and additions:
#   - a killed home is noticed by the control connection's keepalive, not by
#     the copies (its memory stays readable): in 5, VM1 verifies r5 round
#     after round with a 16-page cache while VM3 is killed, until its link
#     to 3 is down and 3 s more: a round begins after the kill, no round
#     sees a bad byte or a SIGBUS on node 2, the last one sees node 3's
#     pages SIGBUS; then 5 goes on as
#     above (SIGBUS while dead, lost chunks and SIGBUS, never zeros, after
#     the restart with a new incarnation);
#   - S (after 1): bad input refused with its errno (segment add without a
#     device, with an unknown one, too big for the device, a device with the
#     ram provider; node add shm with an unknown device, tcp with a device);
#     VM1's node 3 given node 2's device never gets live (the device's
#     header names node 2), counted as an auth failure, and live again with
#     its own; copies out of the segment are refused and counted (debugfs
#     nodeN/shm), one inside is made; a region of 2 MiB chunks read through
#     a read-only MADV_HUGEPAGE mapping has its 4 pieces fetched whole and
#     mapped with PMDs (debugfs huge: created +4), and after a write and a
#     sync a new such mapping gathers them from the cache (collapsed +4);
#   - 2 also checks that VM1's fetches were shm copies (debugfs nodeN/shm).
# 4 (a cut link), 6 (freeze), 7 (the wire fuzzer) and 8 (moves) are the TCP
# run's only: they test the control connection, which is the same code, and
# the run stays short (about 4 minutes here).
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
rig=$repo/tools/rig
build=${RIG_BUILD:-$repo/build/rig}

if [ "${1:-}" != --host ]; then
	[ -r "${HBMPOOL_KO:-$repo/kmod/hbmpool.ko}" ] || { echo "tcp_test: ${HBMPOOL_KO:-kmod/hbmpool.ko} not built (make module)" >&2; exit 1; }
	[ -x "$repo/tools/hbmctl/hbmctl" ] || { echo "tcp_test: tools/hbmctl/hbmctl not built (make tools)" >&2; exit 1; }
	"$here/build-regionio.sh" "$build/regionio" || { echo "tcp_test: cannot build regionio" >&2; exit 1; }
	# shellcheck source=selftests/multi/outer.sh
	. "$here/outer.sh"
	if [ "${TCP_TEST_TRANSPORT:-tcp}" = shm ]; then
		multi_outer shmtest 3 "$here/tcp_test.sh" --shm 128
	else
		multi_outer tcptest 3 "$here/tcp_test.sh"
	fi
	exit
fi

# --- host side, run by multi.sh -c ---
# shellcheck source=selftests/hbmpool/lib.sh
. "$repo/selftests/hbmpool/lib.sh"
# shellcheck source=selftests/multi/host_lib.sh
. "$repo/selftests/multi/host_lib.sh"
N=$MULTI_NODES
PORT=7070
RIO=$build/regionio		# the same path in the guests
H=tools/hbmctl/hbmctl		# the agents run in the repository
FUZZ="/usr/bin/python3 selftests/multi/wirefuzz.py"
SIZE=8M CHUNK=1M BUDGET=512 TIMEOUT_MS=5000
FREEZE=${TCP_TEST_FREEZE:-8}
TRANSPORT=${TCP_TEST_TRANSPORT:-tcp}
SHM=0
[ "$TRANSPORT" = shm ] && SHM=1
KEY=$RIG_SYNC/domain.key

# JSON members read by the checks: "name|alternative|...", first found wins,
# looked up in the object (the first element of an array) and then in its
# nested objects.
J_HEALTH="health|link-health"		# link show: down/connecting/live/degraded
J_OPER="oper-state"			# fallback when there is no health: up -> live
J_NODE="node-id"			# link show: the link's node
J_REQUESTS="requests"
J_ERRORS="errors"
J_TIMEOUTS="timeouts"
J_RETRIES="retries"
J_DIGEST="digest-errors|digest_errors"
J_RTT="rtt|rtt-us|rtt-ns"
J_INCARNATION="incarnation"		# segment show
J_AUTHFAIL="auth-failures|auth_failures"
J_REJECTED="rejected"
J_LOST="lost-chunks|lost_chunks"	# region show ID
EV_LINK="link-change-ntf"		# monitor event of a link change

# health K J: the health of VM K's link to node J.
health() {
	local js h
	js=$(q "$1" "$H -j link show $2") || return 1
	if h=$(jval "$J_HEALTH" <<<"$js"); then
		echo "$h"
	elif h=$(jval "$J_OPER" <<<"$js"); then
		case "$h" in up) echo live ;; *) echo "$h" ;; esac
	else
		return 1
	fi
}
link_counters() {
	local js m v out=""
	js=$(q "$1" "$H -j link show $2")
	for m in "$J_HEALTH" "$J_REQUESTS" "$J_ERRORS" "$J_TIMEOUTS" "$J_RETRIES" "$J_DIGEST" "$J_RTT"; do
		v=$(jval "$m" <<<"$js") || v="?"
		out="$out ${m%%|*}=$v"
	done
	echo "# VM$1 link to $2:$out"
}
all_links() {
	local i j
	for ((i = 1; i <= N; i++)); do
		for ((j = 1; j <= N; j++)); do
			[ $i != $j ] && echo "$i:$j"
		done
	done
}

# shmdev K: the PCI name of node K's ivshmem device (rig_shm).
shmdev() { printf '0000:00:%02x.0' $((0x10 + $1)); }
# setup K: load the module and join VM K to the domain (the contract).
setup() {
	local k=$1 j cmd may="" seg="" dev=""
	[ "$TRANSPORT" = sim ] && may="|| true"
	[ $SHM = 1 ] && seg=" provider shm device $(shmdev "$k")"
	cmd="set -ex; insmod ${HBMPOOL_KO:-$repo/kmod/hbmpool.ko}
$H domain set name rig self $k key-file $KEY $may
$H node set $k addr 10.77.0.$k port $PORT $may
$H segment add 64M$seg $may"
	for ((j = 1; j <= N; j++)); do
		[ $j = "$k" ] && continue
		[ $SHM = 1 ] && dev=" device $(shmdev $j)"
		cmd="$cmd
$H node add $j capacity 64M distance 20 transport $TRANSPORT link scaleout addr 10.77.0.$j port $PORT$dev"
	done
	cmd="$cmd
$H params set cache-budget-pages $BUDGET fetch-timeout-ms $TIMEOUT_MS"
	gx "$k" "$cmd"
}
# monitor K: a background "hbmctl -j monitor" in VM K, into /tmp/monitor.log.
monitor() {
	ctl exec "$1" "setsid $H -j monitor >/tmp/monitor.log 2>&1 </dev/null & echo \$! >/tmp/monitor.pid" >/dev/null
}
# link_events K: link-change events VM K's monitor printed so far.
link_events() {
	local c
	c=$(q "$1" "grep -c '$EV_LINK' /tmp/monitor.log")
	[[ "$c" =~ ^[0-9]+$ ]] && echo "$c" || echo 0
}

# hold K NAME NODES [CHUNK]: VM K creates region NAME over NODES, held open by
# a background regionio (pid in /tmp/hold.NAME.pid); prints nothing, 0 once held.
hold() {
	local k=$1 name=$2 nodes=$3 chunk=${4:-$CHUNK}
	ctl exec "$k" "setsid $RIO create --name $name --size $SIZE --chunk $chunk --policy interleave --nodes $nodes --hold --pidfile /tmp/hold.$name.pid >/tmp/hold.$name.log 2>&1 </dev/null &" >/dev/null &&
		gx "$k" "for i in \$(seq 100); do grep -q holding /tmp/hold.$name.log && { cat /tmp/hold.$name.log; $RIO info --name $name; exit 0; }; sleep 0.1; done; cat /tmp/hold.$name.log; exit 1"
}
# release K NAME: the holder of NAME exits; the region is gone.
release() {
	gx "$1" "p=\$(cat /tmp/hold.$2.pid) && kill \$p && for i in \$(seq 100); do kill -0 \$p 2>/dev/null || exit 0; sleep 0.1; done; exit 1"
}
# region_id K NAME
region_id() { q "$1" "$RIO info --name $2" | sed -n 's/^region \([0-9]*\) .*/\1/p'; }
# rio [-t SECS] K ARGS...: regionio ARGS in VM K, bounded by timeout(1) in the
# guest as well (exit 124 there means it hung).
rio() {
	local t=240
	if [ "$1" = -t ]; then t=$2; shift 2; fi
	local k=$1
	shift
	gx -t $((t + 30)) "$k" "timeout -k 5 $t $RIO $*"
}
# flush K: evict VM K's cache (a budget of 16 pages for a second, then back),
# so that the next verify fetches every page.
flush() { gx "$1" "$H params set cache-budget-pages 16 && sleep 1 && $H params set cache-budget-pages $BUDGET"; }
# shm_stat K J WHAT: VM K's count of shm copies WHAT (copies, refused) to
# node J (debugfs nodeJ/shm), or -1.
shm_stat() {
	local v
	v=$(q "$1" "cat /sys/kernel/debug/hbmpool/node$2/shm" | sed -n "s/^$3 //p")
	[[ "$v" =~ ^[0-9]+$ ]] && echo "$v" || echo -1
}
# huge_stat K WHAT: VM K's count WHAT (created, mapped, dropped, ...) of
# pieces mapped whole (debugfs huge), or -1.
huge_stat() {
	local v
	v=$(q "$1" "cat /sys/kernel/debug/hbmpool/huge" | sed -n "s/^$2 //p")
	[[ "$v" =~ ^[0-9]+$ ]] && echo "$v" || echo -1
}
# huge_verify TAG NAME SEED CREATED COLLAPSED WHAT: VM1 reads region NAME
# through a read-only MADV_HUGEPAGE mapping, exact (SEED's data), and VM1's
# counts of pieces fetched whole and gathered moved by CREATED and
# COLLAPSED, its PMDs mapped by their sum.  Two checks.
huge_verify() {
	local tag=$1 name=$2 seed=$3 dc=$4 dg=$5 what=$6 c0 g0 m0 c1 g1 m1
	c0=$(huge_stat 1 created)
	g0=$(huge_stat 1 collapsed)
	m0=$(huge_stat 1 mapped)
	check "$tag: VM1 verifies $name through a read-only MADV_HUGEPAGE mapping: exact" \
		rio 1 verify --name "$name" --seed "$seed" --huge
	c1=$(huge_stat 1 created)
	g1=$(huge_stat 1 collapsed)
	m1=$(huge_stat 1 mapped)
	check "$tag: ... $what (created $c0 -> $c1, collapsed $g0 -> $g1, mapped $m0 -> $m1)" \
		test "$c0" -ge 0 -a "$c1" = $((c0 + dc)) -a "$g1" = $((g0 + dg)) -a "$m1" = $((m0 + dc + dg))
}
# empty_cache K NAME PAGES: VM K's cache of region NAME emptied, its budget
# then PAGES.  A budget of 16 pages leaves up to 16 cached, which would
# keep their piece at 4 KiB pages: the shrinker (drop_caches) takes the
# clean rest.
empty_cache() {
	gx "$1" "$H params set cache-budget-pages 16 && sleep 1 && $H params set cache-budget-pages $3 && for i in \$(seq 20); do echo 3 >/proc/sys/vm/drop_caches; $RIO info --name $2 | grep -q ' cached 0 ' && exit 0; sleep 0.1; done; $RIO info --name $2; exit 1"
}
# home_reads K: VM K's home's reads answered with digests at rest, and those
# digested again (debugfs tcp_home), as "AT_REST DIGESTED".
home_reads() {
	q "$1" "cat /sys/kernel/debug/hbmpool/tcp_home" |
		awk '/^reads_digests_at_rest / {a = $2} /^reads_digested / {d = $2} END {print a, d}'
}

# homes_at_rest 0|1: VM2's and VM3's homes answer reads from digests at rest
homes_at_rest() {
	local k
	for k in 2 3; do
		gx $k "echo $1 >/sys/module/hbmpool/parameters/digests_at_rest" || return 1
	done
}

# digest_faster NAME CRYPTO_MBPS LIB_MBPS: the data digest in use (debugfs
# tcp_home "digest" and "digest_mbps") is the faster of the two timed at load;
# with nothing timed (no crc32c in the crypto API), the library's.
digest_faster() {
	[ -z "$2$3" ] && { [ "$1" = lib-crc32c ]; return; }
	[[ "$2" =~ ^[0-9]+$ && "$3" =~ ^[0-9]+$ ]] || return 1
	if [ "$3" -gt "$2" ]; then [ "$1" = lib-crc32c ]; else [ -n "$1" ] && [ "$1" != lib-crc32c ]; fi
}
# fails_with K ERRNO-TEXT CMD: CMD fails in VM K and says ERRNO-TEXT.
fails_with() {
	local out rc=0
	out=$(ctl exec "$1" "$3" 2>&1) || rc=$?
	printf '%s\n' "$out" | sed 's/^/# /'
	[ $rc != 0 ] && grep -qi -- "$2" <<<"$out"
}
# chunks K RID node C: the node of chunk C of region RID in VM K;
# chunks K RID first N: the first chunk of region RID on node N; -1 if none;
# chunks K RID lost N: how many of its chunks on node N are lost;
# chunks K RID offset C: where chunk C lives in its home's segment.
chunks() {
	q "$1" "$H -j region show $2 chunks" | /usr/bin/python3 -c '
import json, sys
what, arg = sys.argv[1], int(sys.argv[2])
try:
    d = json.load(sys.stdin)
    ch = (d[0] if isinstance(d, list) else d)["chunk"]
    if what == "node":
        print([x for x in ch if x["index"] == arg][0]["node-id"])
    elif what == "lost":
        print(sum(1 for x in ch if x["node-id"] == arg and x.get("lost")))
    elif what == "offset":
        print([x for x in ch if x["index"] == arg][0]["offset"])
    else:
        print(min(x["index"] for x in ch if x["node-id"] == arg))
except (ValueError, LookupError, KeyError, TypeError):
    print(-1)
' "$3" "$4"
}

t0=$SECONDS
for ((k = 1; k <= N; k++)); do
	check "VM$k boots and its agent runs" ctl agents -t 400 "$k"
done
[ "$fails" = 0 ] || bail "VMs did not come up"
stamp "all up"
head -c 32 /dev/urandom >"$KEY"

for ((k = 1; k <= N; k++)); do
	check "VM$k joins domain rig as node $k ($TRANSPORT nodes, segment 64M)" setup $k
done
[ "$fails" = 0 ] || bail "set-up failed"
monitor 1
for ((k = 1; k <= N; k++)); do
	echo "# VM$k segment: $(q $k "$H -j segment show" | tr -d '\n')"
done

# --- 1. links
mapfile -t links < <(all_links)
check "1: every link of every VM is live within 30 s" wait_links 30 live "${links[@]}"
if [ "$TRANSPORT" != sim ]; then
	# A new link is live only once the home told its free bytes (the
	# answer to the first PING): never live with nothing free, which
	# placement would take for full.  Polled without forking.
	dev3=""
	[ $SHM = 1 ] && dev3=" device $(shmdev 3)"
	check "1: VM1 adds node 3 again: live only with its free bytes known" gx 1 \
		"$H node del 3 && $H node add 3 capacity 64M distance 20 transport $TRANSPORT link scaleout addr 10.77.0.3 port $PORT$dev3 || exit 1; d=/sys/kernel/hbmpool/nodes/node3; h=; end=\$((SECONDS + 30)); while [ \$SECONDS -lt \$end ]; do read -r h <\$d/link/health && [ \"\$h\" = live ] && break; done; read -r f <\$d/free_bytes; echo \"health \$h, free_bytes \$f\"; [ \"\$h\" = live ] && [ \"\$f\" -gt 0 ]"
	check "1: every link is live again within 30 s" wait_links 30 live "${links[@]}"
	# Each region takes 40 of node 2's 64 MiB: the next fits only if the
	# home's answer to the last one's FREE counted at once, not at the
	# next keepalive (1 s).
	check "1: VM1 creates and drops a 40 MiB region on node 2 four times in a row: no ENOSPC" \
		gx 1 "for i in 1 2 3 4; do $RIO create --name fr\$i --size 40M --chunk 1M --policy bind --nodes 2 || exit 1; done"
fi
stamp "scenario 1 done"

if [ "$TRANSPORT" = tcp ]; then
# --- H. huge mappings over TCP.  A link that waits never has a piece
# fetched into an entry in a fault (created stays).  Pieces that a write
# left in the cache in 4 KiB pages, synced and unmapped, are gathered into
# entries by a read-only MADV_HUGEPAGE mapping and mapped with PMDs
# (collapsed), exact.  With nothing cached, the same mapping read in order
# fetches piece 0 whole in 4 KiB pages for its fault and each next piece
# ahead, and gathers them all.
check "H: VM1 holds region rt (8 MiB, 2 MiB chunks, on node 2)" hold 1 rt 2 2M
check "H: VM1's budget 4096 pages, and it writes rt (seed 81) and syncs" \
	gx 1 "$H params set cache-budget-pages 4096 && $RIO write --name rt --seed 81"
huge_verify H rt 81 0 4 "its 4 cached pieces were gathered and mapped with PMDs, none fetched whole"
check "H: VM1's cache of rt emptied" empty_cache 1 rt 4096
f0=$(huge_stat 1 fetched)
a0=$(huge_stat 1 ahead)
huge_verify H rt 81 0 4 "nothing cached, its 4 pieces were fetched whole in 4 KiB pages, gathered and mapped with PMDs"
f1=$(huge_stat 1 fetched)
a1=$(huge_stat 1 ahead)
check "H: ... piece 0 for its fault, pieces 1 to 3 ahead (fetched $f0 -> $f1, ahead $a0 -> $a1)" \
	test "$f0" -ge 0 -a "$f1" = $((f0 + 1)) -a "$a1" = $((a0 + 3))
check "H: VM1's budget back to $BUDGET" gx 1 "$H params set cache-budget-pages $BUDGET"
check "H: VM1 releases rt" release 1 rt
stamp "scenario H done"
fi

if [ $SHM = 1 ]; then
# --- S. shm: bad input, the device check, bounds
# VM2 without a segment, so that segment add gets past EEXIST to its device.
check "S: VM2 deletes its segment (no chunk is placed yet)" gx 2 "$H segment del"
check "S: segment add provider shm without a device: EINVAL" \
	fails_with 2 "invalid argument" "$H segment add 1M provider shm"
check "S: segment add provider shm on an unknown device: ENODEV" \
	fails_with 2 "no such device" "$H segment add 1M provider shm device 0000:00:1f.0"
check "S: segment add with a device and the ram provider: EINVAL" \
	fails_with 2 "invalid argument" "$H segment add 1M provider ram device $(shmdev 2)"
check "S: segment add bigger than the device: ENOSPC" \
	fails_with 2 "no space" "$H segment add 256M provider shm device $(shmdev 2)"
check "S: VM2 exports its 64M shm segment again" gx 2 "$H segment add 64M provider shm device $(shmdev 2)"
check "S: node add shm with an unknown device: ENODEV" \
	fails_with 1 "no such device" "$H node add 7 capacity 64M distance 20 transport shm device 0000:00:1f.0 addr 10.77.0.2 port $PORT"
check "S: node add tcp with a device: EINVAL" \
	fails_with 1 "invalid argument" "$H node add 7 capacity 64M distance 20 transport tcp device $(shmdev 2) addr 10.77.0.2 port $PORT"
af0=$(counter 1 "$J_AUTHFAIL" link show 3)
check "S: VM1's node 3 given node 2's device" \
	gx 1 "$H node del 3 && $H node add 3 capacity 64M distance 20 transport shm link scaleout addr 10.77.0.3 port $PORT device $(shmdev 2)"
sleep 5
h=$(health 1 3)
af1=$(counter 1 "$J_AUTHFAIL" link show 3)
check "S: ... never gets live (health $h), its refusals counted (auth-failures $af0 -> $af1)" \
	test "$h" != live -a "$af1" -gt 0
check "S: VM1's node 3 given its own device again" \
	gx 1 "$H node del 3 && $H node add 3 capacity 64M distance 20 transport shm link scaleout addr 10.77.0.3 port $PORT device $(shmdev 3)"
check "S: every link is live again within 30 s" wait_links 30 live "${links[@]}"
rf0=$(shm_stat 1 2 refused)
dbg=/sys/kernel/debug/hbmpool/node2/shm
check "S: a copy of the last page of VM2's segment is made" gx 1 "echo $(((64 << 20) - 4096)) 1 >$dbg"
check "S: a copy past the end of VM2's segment is refused" fails_with 1 "result" "echo $((64 << 20)) 1 >$dbg"
check "S: a copy across the end of VM2's segment is refused" fails_with 1 "result" "echo $(((64 << 20) - 4096)) 2 >$dbg"
check "S: a copy at an unaligned offset is refused" fails_with 1 "result" "echo 100 1 >$dbg"
rf1=$(shm_stat 1 2 refused)
check "S: VM1 counted the 3 refusals ($rf0 -> $rf1)" test "$rf1" = $((rf0 + 3))
# Huge mappings over shm: a region of 2 MiB chunks on VM2's segment, read
# through a read-only MADV_HUGEPAGE mapping with nothing cached, is mapped
# 2 MiB at a time (the budget raised for the four pieces); a write through
# a writable mapping afterwards is seen through a new huge mapping, which
# gathers the pieces the write left cached in 4 KiB pages.
check "S: VM1 holds region rh (8 MiB, 2 MiB chunks, on node 2)" hold 1 rh 2 2M
check "S: VM1 writes rh (seed 71)" rio 1 write --name rh --seed 71
check "S: VM1's cache of rh emptied, its budget 4096 pages" empty_cache 1 rh 4096
huge_verify S rh 71 4 0 "its 4 pieces were fetched whole and mapped with PMDs"
check "S: VM1 writes rh again (seed 72) through a writable mapping, and syncs" \
	rio 1 write --name rh --seed 72
huge_verify S rh 72 0 4 "its 4 pieces, cached in 4 KiB pages by the write, were gathered and mapped with PMDs"
check "S: VM1's budget back to $BUDGET" gx 1 "$H params set cache-budget-pages $BUDGET"
check "S: VM1 releases rh" release 1 rh
stamp "scenario S done"
fi

if [ "${TCP_TEST_ONLY:-}" != moves ]; then
# --- 2. data over two homes, four times the cache
check "2: VM1 holds region r2 (8 MiB interleaved over 2,3)" hold 1 r2 2,3
check "2: r2 has chunks on node 2 and node 3" \
	gx 1 "$RIO info --name r2 | grep -q '^node 2: ' && $RIO info --name r2 | grep -q '^node 3: '"
check "2: VM1 writes r2 (seed 21)" rio 1 write --name r2 --seed 21
for ord in seq rev rand; do
	check "2: VM1 verifies r2 in $ord order: exact" rio 1 verify --name r2 --seed 21 --order $ord
done
link_counters 1 2
link_counters 1 3
for j in 2 3; do
	check "2: VM1's link to $j carried requests" gt "$(counter 1 "$J_REQUESTS" link show $j)" 0
	check "2: VM1's link to $j: no digest error" test "$(counter 1 "$J_DIGEST" link show $j)" = 0
	if [ $SHM = 1 ]; then
		c=$(shm_stat 1 $j copies)
		check "2: VM1's fetches from $j were shm copies ($c)" gt "$c" 0
	fi
done
# The digest of those transfers: the faster CRC32C, as timed at the module's load.
read -r dname dcrypto dlib < <(q 1 "cat /sys/kernel/debug/hbmpool/tcp_home" |
	awk '/^digest / {d = $2} /^digest_mbps / {c = $3; l = $5} END {print d, c, l}')
check "2: VM1's data digests by the faster CRC32C: ${dname:-?} (crypto ${dcrypto:-?} MB/s, library ${dlib:-?} MB/s)" \
	digest_faster "${dname:-}" "${dcrypto:-}" "${dlib:-}"
if [ $SHM = 0 ]; then
	# The homes served read-ahead windows of up to 64 pages through their
	# sessions' bounce pages; an idle session keeps 16 of them: those
	# beyond go 2 s after their last use, at the next keepalive PING.
	sleep 4
	for j in 2 3; do
		read -r bp bmax ns < <(q $j "cat /sys/kernel/debug/hbmpool/tcp_home" |
			awk '/^bounce_pages / {p = $2} /^bounce_pages_max / {m = $2} /^sessions / {s = $2} END {print p, m, s}')
		check "2: VM$j's sessions held more than 16 bounce pages at once while serving (at most ${bmax:-?})" \
			gt "${bmax:-0}" 16
		check "2: ... and, idle, hold at most 16 each (${bp:-?} for ${ns:-?} sessions)" \
			test -n "${bp:-}" -a -n "${ns:-}" -a "${bp:-1}" -le $((16 * ${ns:-0}))
	done
	# The homes answered reads with the digests the pages were written
	# with (their RAM segments keep them); with digests_at_rest off they
	# digest every read again, and the data is exact either way.
	declare -A ar0 dg0
	for j in 2 3; do
		read -r "ar0[$j]" "dg0[$j]" < <(home_reads $j)
		check "2: VM$j answered reads with digests at rest (${ar0[$j]:-?}; digested again: ${dg0[$j]:-?})" \
			gt "${ar0[$j]:-0}" 0
	done
	check "2: VM2 and VM3 stop answering reads from digests at rest" homes_at_rest 0
	flush 1
	check "2: VM1 verifies r2 again in rand order: exact" rio 1 verify --name r2 --seed 21 --order rand
	for j in 2 3; do
		read -r ar1 dg1 < <(home_reads $j)
		check "2: ... VM$j digested those reads again (at rest ${ar0[$j]:-?} -> ${ar1:-?}, digested ${dg0[$j]:-?} -> ${dg1:-?})" \
			test -n "${ar1:-}" -a "${ar1:-x}" = "${ar0[$j]:-y}" -a "${dg1:-0}" -gt "${dg0[$j]:-0}"
	done
	check "2: VM2 and VM3 answer reads from digests at rest again" homes_at_rest 1
	check "2: VM1's link to 2 and 3: still no digest error" \
		test "$(counter 1 "$J_DIGEST" link show 2)$(counter 1 "$J_DIGEST" link show 3)" = 00
	# A bit of a page of r2 flips in VM2's memory (debugfs segment_flip, as
	# a memory error would): the page's digest at rest no longer matches,
	# so VM1 gets SIGBUS for it, never the wrong byte, and counts a digest
	# error.  Digested again on the way out (the operator's way to salvage
	# such a page), the flip reaches the application as a bad byte, and the
	# page can be written again; it is then good with digests at rest.
	r2=$(region_id 1 r2)
	c2=$(chunks 1 "$r2" first 2)
	o2=$(chunks 1 "$r2" offset "$c2")
	if gt "${o2:--1}" -1; then
		check "2: VM2 flips a bit of r2's chunk $c2 in its segment (offset $o2 + 3 pages)" \
			gx 2 "echo $((o2 + 3 * 4096 + 100)) >/sys/kernel/debug/hbmpool/segment_flip"
	else
		nok "2: VM2 flips a bit of r2's chunk on node 2: no such chunk (${c2:-?}, offset ${o2:-?})"
	fi
	check "2: a flip past the end of VM2's 64 MiB segment: EINVAL" \
		fails_with 2 "invalid argument" "echo $((64 << 20)) >/sys/kernel/debug/hbmpool/segment_flip"
	flush 1
	out=$(ctl exec -t 270 1 "timeout -k 5 240 $RIO verify --name r2 --seed 21 --order rand" 2>&1)
	printf '%s\n' "$out" | sed 's/^/# /'
	check "2: ... VM1's verify gets SIGBUS, and no bad byte" \
		grep -q ' bad=0 sigbus=[1-9]' <<<"$out"
	check "2: ... and VM1 counted a digest error on its link to 2" \
		gt "$(counter 1 "$J_DIGEST" link show 2)" 0
	check "2: VM2 digests reads again" gx 2 "echo 0 >/sys/module/hbmpool/parameters/digests_at_rest"
	flush 1
	out=$(ctl exec -t 270 1 "timeout -k 5 240 $RIO verify --name r2 --seed 21 --order rand" 2>&1)
	printf '%s\n' "$out" | sed 's/^/# /'
	check "2: ... then the flipped byte reaches VM1's verify as bad data" \
		grep -q ' bad=[1-9]' <<<"$out"
	check "2: ... and VM1 writes r2 again (seed 21)" rio 1 write --name r2 --seed 21
	check "2: VM2 answers reads from digests at rest again" \
		gx 2 "echo 1 >/sys/module/hbmpool/parameters/digests_at_rest"
	flush 1
	read -r ar1 dg1 < <(home_reads 2)
	check "2: ... and VM1 verifies r2 exact" rio 1 verify --name r2 --seed 21 --order rand
	read -r ar2 dg2 < <(home_reads 2)
	check "2: ... VM2 answering from digests at rest (${ar1:-?} -> ${ar2:-?}, digested ${dg1:-?} -> ${dg2:-?})" \
		test "${ar2:-0}" -gt "${ar1:-0}" -a "${dg2:-x}" = "${dg1:-y}"
	# the errors above made the link degraded for a while: let it recover
	check "2: VM1's links are live again within 30 s" wait_links 30 live 1:2 1:3
	# Freed chunks read as zeros, with the zero page's digest at rest: a
	# region written and released, then a new one on the same homes (the
	# segments' allocators hand the same chunks out again), read whole.
	check "2: VM1 holds r2z over 2,3" hold 1 r2z 2,3
	check "2: ... writes it (seed 22)" rio 1 write --name r2z --seed 22
	check "2: ... and releases it" release 1 r2z
	check "2: VM1 holds r2y over 2,3" hold 1 r2y 2,3
	flush 1
	d0=$(counter 1 "$J_DIGEST" link show 2):$(counter 1 "$J_DIGEST" link show 3)
	declare -A az0
	for j in 2 3; do read -r "az0[$j]" _ < <(home_reads $j); done
	out=$(ctl exec -t 270 1 "timeout -k 5 240 $RIO verify --name r2y --seed 22 --order seq" 2>&1)
	printf '%s\n' "$out" | grep -v '^  page' | sed 's/^/# /'
	check "2: ... reads zeros only, no SIGBUS" grep -q ' sigbus=0 .* zero=2048' <<<"$out"
	d1=$(counter 1 "$J_DIGEST" link show 2):$(counter 1 "$J_DIGEST" link show 3)
	check "2: ... with no new digest error ($d0 -> $d1)" test "$d1" = "$d0"
	for j in 2 3; do
		read -r az1 _ < <(home_reads $j)
		check "2: ... VM$j answered from digests at rest (${az0[$j]:-?} -> ${az1:-?})" \
			test "${az1:-0}" -gt "${az0[$j]:-0}"
	done
	check "2: VM1 releases r2y" release 1 r2y
fi
stamp "scenario 2 done"

# --- 3. two clients at once
check "3: VM1 holds r3a over 2,3" hold 1 r3a 2,3
check "3: VM2 holds r3b over 1,3" hold 2 r3b 1,3
ja=$(ctl spawn 1 "timeout -k 5 300 $RIO write --name r3a --seed 31 --threads 2 && timeout -k 5 300 $RIO verify --name r3a --seed 31 --order rand")
jb=$(ctl spawn 2 "timeout -k 5 300 $RIO write --name r3b --seed 32 --threads 2 && timeout -k 5 300 $RIO verify --name r3b --seed 32 --order rev")
declare -A job3=([1]=$ja [2]=$jb)
for k in 1 2; do
	rc=0
	out=$(ctl result -t 650 "${job3[$k]}" 2>&1) || rc=$?
	printf '%s\n' "$out" | sed 's/^/# /'
	if [ $rc = 0 ]; then
		ok "3: VM$k writes and verifies at the same time as the other: exact"
	else
		nok "3: VM$k writes and verifies at the same time as the other: exact (exit $rc)"
	fi
done
check "3: VM1 releases r3a" release 1 r3a
check "3: VM2 releases r3b" release 2 r3b
stamp "scenario 3 done"

if [ $SHM = 0 ]; then
# --- 4. cut VM3's link
ev0=$(link_events 1)
check "4: flush VM1's cache" flush 1
check "4: cut VM3's link" ctl cut 3
tc=$SECONDS
job=$(ctl spawn 1 "timeout -k 5 240 $RIO verify --name r2 --seed 21 --order seq --expect-sigbus-on 3 --max-cached 64")
check "4: VM1's link to 3 leaves live (down or connecting) within 60 s" wait_links 60 "down|connecting" 1:3
check "4: VM1's link to 2 stays live" wait_links 5 live 1:2
if out=$(ctl result -t 300 "$job" 2>&1); then
	tc=$((SECONDS - tc))
	printf '%s\n' "$out" | sed 's/^/# /'
	ok "4: VM1's verify with VM3 cut ends (${tc}s after the cut at most): node 3's pages SIGBUS, node 2's good, none bad"
else
	printf '%s\n' "$out" | sed 's/^/# /'
	nok "4: VM1's verify with VM3 cut: bounded, node 3's pages SIGBUS, node 2's good, none bad"
fi
link_counters 1 3
ev1=$(link_events 1)
check "4: VM1's monitor saw a link event ($ev0 -> $ev1 $EV_LINK)" gt "$ev1" "$ev0"
check "4: restore VM3's link" ctl restore 3
check "4: every link is live again within 60 s" wait_links 60 live "${links[@]}"
check "4: VM1 verifies r2 after the restore: exact" rio 1 verify --name r2 --seed 21 --order rand
stamp "scenario 4 done"
fi	# 4: not over shm

# --- 5. kill VM3, start it again
check "5: VM1 holds r5 over 2,3" hold 1 r5 2,3
check "5: VM1 writes r5 (seed 51)" rio 1 write --name r5 --seed 51
check "5: VM1 verifies r5: exact" rio 1 verify --name r5 --seed 51
inc0=$(hj 3 "$J_INCARNATION" segment show)
check "5: flush VM1's cache" flush 1
if [ $SHM = 1 ]; then
	# VM1 copies from VM3's segment over and over (a cache of 16 pages: every
	# round fetches every page) while VM3 is killed, until its link is down
	# and a round more: node 3's pages good (copied before the keepalive
	# noticed) or SIGBUS, never bad; node 2's good.
	job=$(ctl spawn 1 "$H params set cache-budget-pages 16; i=0; while :; do [ -e $RIG_SYNC/killed5 ] && echo after-kill; timeout -k 5 120 $RIO verify --name r5 --seed 51 --order rand --expect-sigbus-on 3 --max-cached 100000; i=\$((i + 1)); [ -e $RIG_SYNC/stop5 ] && break; done; $H params set cache-budget-pages $BUDGET; echo rounds=\$i")
	sleep 2
fi
check "5: kill VM3" ctl kill 3
tk=$SECONDS
if [ $SHM = 1 ]; then
	ctl mark killed5
	check "5: (shm) VM1's link to 3 leaves live within 60 s" wait_links 60 "down|connecting" 1:3
	sleep 3
	ctl mark stop5
	out=$(ctl result -t 300 "$job" 2>&1)
	printf '%s\n' "$out" | sed 's/^/# /'
	rounds=$(grep -c '^verify:' <<<"$out")
	after=$(grep -c '^after-kill' <<<"$out")
	failed=$(grep '^verify:' <<<"$out" | grep -c 'FAIL')
	last_sigbus=$(grep '^verify:' <<<"$out" | tail -n 1 | sed -n 's/.* expected_sigbus=\([0-9]*\) .*/\1/p')
	check "5: (shm) VM1's $rounds rounds of copies, $after of them begun with VM3 dead: none bad, node 2's always good" \
		test "$after" -ge 1 -a "$failed" = 0
	check "5: (shm) ... the last round, after the link went down: node 3's pages SIGBUS ($last_sigbus)" \
		gt "${last_sigbus:-0}" 0
	check "5: flush VM1's cache" flush 1
fi
if rio -t 240 1 verify --name r5 --seed 51 --expect-sigbus-on 3 --max-cached 64; then
	ok "5: VM1's verify with VM3 dead ends after $((SECONDS - tk))s: node 3's pages SIGBUS, node 2's good"
else
	nok "5: VM1's verify with VM3 dead: bounded, node 3's pages SIGBUS, node 2's good, none bad"
fi
check "5: VM1's link to 3 is not live while VM3 is dead" wait_links 30 "down|connecting" 1:3
check "5: start VM3 again" ctl start -t 400 3
check "5: VM3's agent runs again" ctl agents -t 120 3
check "5: VM3 joins the domain again" setup 3
inc1=$(hj 3 "$J_INCARNATION" segment show)
check "5: VM3's new segment has a new incarnation ($inc0 -> $inc1)" \
	test -n "$inc0" -a -n "$inc1" -a "$inc0" != "$inc1"
check "5: every link is live again within 60 s" wait_links 60 live "${links[@]}"
r5=$(region_id 1 r5)
lost=-1
for _ in $(seq 30); do
	lost=$(counter 1 "$J_LOST" region show "$r5")
	gt "$lost" 0 && break
	sleep 1
done
check "5: VM1's r5 (region $r5) reports lost-chunks > 0 ($lost)" gt "$lost" 0
check "5: r5's chunks on node 3 carry the lost flag ($lost of them)" \
	test "$(chunks 1 "$r5" lost 3)" = "$lost"
c5=$(chunks 1 "$r5" first 3)
out=$(ctl exec 1 "$H region move $r5 $c5 to 2" 2>&1) && rc=0 || rc=$?
printf '%s\n' "$out" | sed 's/^/# /'
check "5: moving lost chunk $c5 is refused (ENODATA: nothing to move)" \
	test "$rc" -ne 0 -a -n "$(grep -i 'lost' <<<"$out")"
check "5: VM1's r5 after VM3's restart: node 3's pages SIGBUS (never zeros), node 2's good" \
	rio 1 verify --name r5 --seed 51 --order rand --expect-sigbus-on 3 --max-cached 64
check "5: VM1 releases r5" release 1 r5
stamp "scenario 5 done"

if [ $SHM = 0 ]; then
# --- 6. freeze VM2 past the fetch timeout
# r2's chunks on VM3 were lost in 5: a new region over 2,3 from here on.
check "6: VM1 holds r6v over 2,3" hold 1 r6v 2,3
check "6: VM1 writes r6v (seed 60)" rio 1 write --name r6v --seed 60
check "6: flush VM1's cache" flush 1
# VM1 verifies r6v (over 2,3) until told to stop, one summary line per round.
job=$(ctl spawn 1 "i=0; while :; do timeout -k 5 300 $RIO verify --name r6v --seed 60 --order rand; i=\$((i + 1)); [ -e $RIG_SYNC/thawed ] && break; done; echo rounds=\$i")
sleep 2
check "6: freeze VM2" ctl freeze 2
tf=$SECONDS
sleep "$FREEZE"
check "6: thaw VM2 after $((SECONDS - tf))s" ctl thaw 2
ctl mark thawed
out=$(ctl result -t 600 "$job" 2>&1)
printf '%s\n' "$out" | sed 's/^/# /'
summaries=$(grep -c '^verify:' <<<"$out")
badlines=$(grep '^verify:' <<<"$out" | grep -vc ' bad=0 ')
check "6: VM1's verifies across the freeze ($summaries rounds) saw no bad byte" \
	test "$summaries" -gt 0 -a "$badlines" = 0
check "6: every link is live again within 60 s" wait_links 60 live "${links[@]}"
check "6: VM1 writes r6v (seed 61)" rio 1 write --name r6v --seed 61
check "6: VM1 verifies r6v: exact" rio 1 verify --name r6v --seed 61 --order rand
check "6: VM2 holds r6 over 1,3" hold 2 r6 1,3
check "6: VM2 writes r6 (seed 62)" rio 2 write --name r6 --seed 62
check "6: VM2 verifies r6: exact" rio 2 verify --name r6 --seed 62 --order rev
check "6: VM2 releases r6" release 2 r6
stamp "scenario 6 done"

# --- 7. strangers, wrong keys and garbage at VM2's home
# The fuzzer speaks as node 9, which VM2 knows as a member (its address
# leads nowhere): goodkey and fuzz get past the handshake to the request
# parser without superseding VM1's own session with VM2 (a home keeps one
# session per client).
af0=$(counter 2 "$J_AUTHFAIL" segment show)
rj0=$(counter 2 "$J_REJECTED" segment show)
echo "# VM2 segment before: auth-failures=$af0 rejected=$rj0"
fz="$FUZZ"
who="--domain rig --id 9 --home 2"
check "7: VM2 knows node 9 (the fuzzer's id)" \
	gx 2 "$H node add 9 capacity 64M distance 40 transport tcp link scaleout addr 10.77.0.99 port $PORT"
check "7: wirefuzz.py is there" gx 1 "test -r selftests/multi/wirefuzz.py"
check "7: a stranger (no handshake) is turned away" gx -t 120 1 "timeout 100 $fz stranger 10.77.0.2 $PORT"
check "7: a wrong key is refused" \
	gx -t 120 1 "head -c 32 /dev/urandom >/tmp/wrong.key && timeout 100 $fz wrongkey 10.77.0.2 $PORT $who --key-file /tmp/wrong.key"
check "7: the right key is accepted" gx -t 120 1 "timeout 100 $fz goodkey 10.77.0.2 $PORT $who --key-file $KEY"
check "7: fuzzed frames are refused and the home survives" \
	gx -t 300 1 "timeout 280 $fz fuzz 10.77.0.2 $PORT $who --key-file $KEY --seed $RANDOM --rounds 50"
af1=$(counter 2 "$J_AUTHFAIL" segment show)
rj1=$(counter 2 "$J_REJECTED" segment show)
check "7: VM2's segment counts more auth-failures ($af0 -> $af1)" gt "$af1" "$af0"
check "7: VM2's segment counts more rejected ($rj0 -> $rj1)" gt "$rj1" "$rj0"
check "7: VM2 forgets node 9" gx 2 "$H node del 9"
check "7: VM2's kernel log has no BUG or WARNING" klog_clean 2
check "7: every link is live within 60 s" wait_links 60 live "${links[@]}"
check "7: VM1 writes r6v (seed 71)" rio 1 write --name r6v --seed 71
for ord in seq rand; do
	check "7: VM1 verifies r6v in $ord order: exact" rio 1 verify --name r6v --seed 71 --order $ord
done
stamp "scenario 7 done"

fi	# 6 and 7: not over shm
fi	# TCP_TEST_ONLY=moves skips to here

if [ $SHM = 0 ]; then
# --- 8. chunk moves over TCP
check "8: VM1 holds r8 over 2,3 (4 MiB chunks)" hold 1 r8 2,3 4194304
check "8: VM1 writes r8 (seed 81)" rio 1 write --name r8 --seed 81
r8=$(region_id 1 r8)
c8=$(chunks 1 "$r8" first 2)
used0=$(counter 2 used segment show)
check "8: r8 (region $r8) has a chunk on node 2 ($c8)" test "$c8" -ge 0
check "8: VM1 limits moves to 2 MiB/s" gx 1 "$H params set resync-mbps 2"
job=$(ctl spawn 1 "timeout -k 5 300 $RIO write --name r8 --seed 82 --threads 2")
check "8: VM1 moves chunk $c8 of r8 from 2 to 3 while writing it: done" 	gx -t 200 1 "timeout 180 $H region move $r8 $c8 to 3 --wait"
if out=$(ctl result -t 400 "$job" 2>&1); then
	ok "8: VM1's write of r8 during the move ends well"
else
	nok "8: VM1's write of r8 during the move ends well"
fi
printf '%s\n' "$out" | sed 's/^/# /'
check "8: chunk $c8 of r8 now lives on node 3" test "$(chunks 1 "$r8" node "$c8")" = 3
used1=$(counter 2 used segment show)
check "8: VM2's segment gave the chunk back (used $used0 -> $used1)" test "$used1" -lt "$used0"
check "8: flush VM1's cache" flush 1
check "8: VM1 verifies r8 after the move: exact" rio 1 verify --name r8 --seed 82 --order rand
# both chunks live on node 3 now: the second move goes back to node 2, and
# VM2's link is cut under it
c8b=$(chunks 1 "$r8" first 3)
check "8: VM1 limits moves to 1 MiB/s" gx 1 "$H params set resync-mbps 1"
mid=$(q 1 "$H -j region move $r8 $c8b to 2" | jval id)
check "8: a second move (chunk $c8b, 3 -> 2, move ${mid:-?}) starts" test -n "$mid"
check "8: cut VM2's link during the move" ctl cut 2
st=""
for _ in $(seq 60); do
	st=$(q 1 "$H -j resync show $mid" | jval state) || st=""
	[ "$st" != copying ] && break
	sleep 1
done
check "8: the move with VM2 cut ends failed (state $st) in bounded time" test "$st" = failed
check "8: chunk $c8b of r8 stays on node 3" test "$(chunks 1 "$r8" node "$c8b")" = 3
check "8: restore VM2's link" ctl restore 2
check "8: every link is live again within 60 s" wait_links 60 live "${links[@]}"
check "8: VM1 lifts the move limit" gx 1 "$H params set resync-mbps 0"
check "8: flush VM1's cache" flush 1
check "8: VM1 verifies r8 after the failed move: exact" rio 1 verify --name r8 --seed 82 --order seq
check "8: VM1 moves chunk $c8b to 2 again: done" gx -t 200 1 "timeout 180 $H region move $r8 $c8b to 2 --wait"
check "8: chunk $c8b of r8 now lives on node 2" test "$(chunks 1 "$r8" node "$c8b")" = 2
check "8: VM1 verifies r8: exact" rio 1 verify --name r8 --seed 82 --order rev
check "8: VM1 releases r8" release 1 r8
check "8: VM1's kernel log has no BUG or WARNING" klog_clean 1
stamp "scenario 8 done"
fi	# 8: not over shm

# --- 9. teardown
for ((k = 1; k <= N; k++)); do link_counters "$k" $((k % N + 1)); done
if [ "${TCP_TEST_ONLY:-}" != moves ]; then
	check "9: VM1 releases r2" release 1 r2
	[ $SHM = 0 ] && check "9: VM1 releases r6v" release 1 r6v
fi
check "9: VM3 deletes its nodes and segment" \
	gx 3 "set -x; $H node del 1 && $H node del 2 && $H segment del"
check "9: ... a flip without a segment: ENOENT" \
	fails_with 3 "no such file" "echo 0 >/sys/kernel/debug/hbmpool/segment_flip"
check "9: ... and unloads" gx 3 "rmmod hbmpool"
check "9: kill VM3" ctl kill 3
check "9: VM2 (a peer dead) deletes its nodes and segment and unloads" \
	gx -t 120 2 "set -x; timeout 60 $H node del 3 && timeout 60 $H node del 1 && timeout 60 $H segment del && timeout 60 rmmod hbmpool"
check "9: VM1 (a peer dead, nodes and segment still set) unloads" \
	gx -t 120 1 "kill \$(cat /tmp/monitor.pid) 2>/dev/null; sleep 0.5; $RIO info --name r2 >/dev/null 2>&1 && exit 1; $RIO info --name r6v >/dev/null 2>&1 && exit 1; timeout 60 rmmod hbmpool"
for k in 1 2; do
	check "9: VM$k's kernel log has no BUG or WARNING" klog_clean $k
done

stamp "checks done"
ctl stop
echo "1..$n"
[ "$fails" -eq 0 ]
