#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# regionio (the data checker of tcp_test.sh) proves itself in one rig VM
# against simulated nodes: it writes and verifies exactly in every order and
# with threads, sees a wrong seed as bad pages, and sees SIGBUS, never bad
# bytes, on the pages of a node whose link is down (the sim's link_down) or
# whose fetches fail (the core's fail_fetch), and exact data once it is back.
#
#   selftests/multi/regionio_sim.sh            # host: builds regionio, boots a VM
#   selftests/multi/regionio_sim.sh --guest    # in a VM (as root, module not loaded)
#
# TAP; the host part ends with "N passed, N failed".
# Environment: RIG_BUILD, KVER, RIG_TIMEOUT.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=${RIG_BUILD:-$repo/build/rig}

if [ "${1:-}" != --guest ]; then
	[ -r "$repo/kmod/hbmpool.ko" ] || { echo "regionio_sim: kmod/hbmpool.ko not built (make module)" >&2; exit 1; }
	[ -x "$repo/tools/hbmctl/hbmctl" ] || { echo "regionio_sim: tools/hbmctl/hbmctl not built (make tools)" >&2; exit 1; }
	"$here/build-regionio.sh" "$build/regionio" || exit 1
	out=$(mktemp)
	rc=0
	"$repo/tools/rig/vm.sh" -i regionio -t "${RIG_TIMEOUT:-600}" -e "REGIONIO=$build/regionio" \
		-- selftests/multi/regionio_sim.sh --guest | tee "$out" || rc=$?
	passed=$(grep -c '^ok ' "$out")
	failed=$(grep -c '^not ok ' "$out")
	rm -f "$out"
	[ "$rc" != 0 ] && [ "$failed" = 0 ] && failed=1
	echo "$passed passed, $failed failed"
	[ "$rc" = 0 ] && [ "$failed" = 0 ]
	exit
fi

# --- guest ---
# shellcheck source=selftests/hbmpool/lib.sh
. "$repo/selftests/hbmpool/lib.sh"
RIO=${REGIONIO:?}
hbmctl=$repo/tools/hbmctl/hbmctl
dbg=/sys/kernel/debug/hbmpool
NAME=simreg
hold=

# run CMD...: its output as TAP comments, its status returned
run() {
	local out rc=0
	out=$("$@" 2>&1) || rc=$?
	[ -n "$out" ] && printf '%s\n' "$out" | sed 's/^/# /'
	return $rc
}
fails_with() { ! run "$@"; }
# Evict (nearly) everything: a budget of 16 pages, then back.
flush() {
	"$hbmctl" params set cache-budget-pages 16 && sleep 1 &&
		"$hbmctl" params set cache-budget-pages 1024
}
cleanup() {
	[ -n "$hold" ] && kill "$hold" 2>/dev/null && wait "$hold" 2>/dev/null
	hold=
}
trap cleanup EXIT

check "insmod" insmod "$repo/kmod/hbmpool.ko"
for k in 2 3; do
	check "sim node $k" "$hbmctl" node add $k capacity 64M distance 20 transport sim
done
check "cache budget 1024 pages, fetch timeout 3000 ms" \
	"$hbmctl" params set cache-budget-pages 1024 fetch-timeout-ms 3000

"$RIO" create --name $NAME --size 16M --chunk 2M --policy interleave --nodes 2,3 \
	--hold --pidfile /tmp/hold.pid >/tmp/hold.out 2>&1 &
hold=$!
for _ in $(seq 50); do grep -q holding /tmp/hold.out && break; sleep 0.1; done
check "create --hold: a shared region, 16 MiB over 2,3" grep -q holding /tmp/hold.out
sed 's/^/# /' /tmp/hold.out
check "info: 4 chunks on node 2, 4 on node 3" \
	bash -c "'$RIO' info --name $NAME >/tmp/info.out && grep -q '^node 2: 4 chunks' /tmp/info.out && grep -q '^node 3: 4 chunks' /tmp/info.out"
sed 's/^/# /' /tmp/info.out
check "a second create of the same name fails (EEXIST)" fails_with "$RIO" create --name $NAME --size 1M --nodes 2
check "write seed 1" run "$RIO" write --name $NAME --seed 1
for ord in seq rev rand stride; do
	check "verify seed 1, order $ord: exact" run "$RIO" verify --name $NAME --seed 1 --order $ord
done
check "verify with a wrong seed: bad pages, exit 1" \
	bash -c "'$RIO' verify --name $NAME --seed 2 >/tmp/wrong.out; [ \$? = 1 ] && grep -q 'good=0 bad=4096 sigbus=0' /tmp/wrong.out"
sed 's/^/# /' /tmp/wrong.out
check "write seed 7, order rand, 4 threads" run "$RIO" write --name $NAME --seed 7 --order rand --threads 4
check "verify seed 7, 3 threads: exact" run "$RIO" verify --name $NAME --seed 7 --threads 3
check "write seed 8, order rev" run "$RIO" write --name $NAME --seed 8 --order rev

# Link down on node 3: its pages SIGBUS, node 2's are good, nothing is bad.
check "flush the cache" flush
check "node 3: link_down=1" bash -c "echo 1 >$dbg/node3/link_down"
check "verify --expect-sigbus-on 3: node 3's pages SIGBUS, the rest good" \
	run "$RIO" verify --name $NAME --seed 8 --expect-sigbus-on 3 --max-cached 64
check "plain verify fails (SIGBUS)" fails_with "$RIO" verify --name $NAME --seed 8
check "verify --allow-sigbus: exit 0, node 3's pages counted as SIGBUS, none bad" \
	bash -c "'$RIO' verify --name $NAME --seed 8 --allow-sigbus >/tmp/allow.out && grep -q ' bad=0 sigbus=[1-9][0-9]* .* allow-sigbus' /tmp/allow.out"
sed 's/^/# /' /tmp/allow.out
check "verify --allow-sigbus with a wrong seed: bad pages, exit 1" \
	bash -c "'$RIO' verify --name $NAME --seed 5 --allow-sigbus >/tmp/allow2.out; [ \$? = 1 ] && grep -q 'good=0 bad=[1-9]' /tmp/allow2.out"
check "--expect-sigbus-on 2 fails (node 3's pages SIGBUS unexpectedly)" \
	fails_with "$RIO" verify --name $NAME --seed 8 --expect-sigbus-on 2
check "write while node 3's link is down: SIGBUS on its pages, exit 1" \
	bash -c "'$RIO' write --name $NAME --seed 9 >/tmp/wsig.out; [ \$? = 1 ] && grep -q 'sigbus=2048' /tmp/wsig.out"
sed 's/^/# /' /tmp/wsig.out
check "node 3: link_down=0" bash -c "echo 0 >$dbg/node3/link_down"
# The failed write above changed node 2's pages (seed 9) and none of node 3's.
check "write seed 8 again after the link is back" run "$RIO" write --name $NAME --seed 8
check "verify seed 8 after the link is back: exact" run "$RIO" verify --name $NAME --seed 8 --order rand
check "--expect-sigbus-on 3 with a live link fails (node 3 cached/good beyond --max-cached 0)" \
	fails_with "$RIO" verify --name $NAME --seed 8 --expect-sigbus-on 3

# The core's fail_fetch knob on node 2.
check "flush the cache" flush
check "node 2: fail_fetch=1" bash -c "echo 1 >$dbg/node2/fail_fetch"
check "verify --expect-sigbus-on 2 (fail_fetch)" \
	run "$RIO" verify --name $NAME --seed 8 --order stride --expect-sigbus-on 2 --max-cached 64
check "node 2: fail_fetch=0" bash -c "echo 0 >$dbg/node2/fail_fetch"
check "verify seed 8: exact" run "$RIO" verify --name $NAME --seed 8

release() { kill "$hold" && wait "$hold"; local rc=$?; hold=; [ $rc = 0 ]; }
# A region never written reads zeros: every page is bad, none good.
"$RIO" create --name fresh --size 1M --nodes 3 --policy bind --hold >/tmp/hold2.out 2>&1 &
hold2=$!
for _ in $(seq 50); do grep -q holding /tmp/hold2.out && break; sleep 0.1; done
check "a region never written (zeros): every page bad, counted as zero" \
	bash -c "'$RIO' verify --name fresh --seed 1 >/tmp/zero.out; [ \$? = 1 ] && grep -q 'pages=256 good=0 bad=256 sigbus=0 .* zero=256' /tmp/zero.out"
grep '^verify' /tmp/zero.out | sed 's/^/# /'
kill "$hold2"; wait "$hold2"
check "release the region (SIGTERM to the holder, which exits 0)" release
check "the region is gone: verify cannot open it" fails_with "$RIO" info --name $NAME
for k in 2 3; do
	check "node del $k" "$hbmctl" node del $k
done
check "rmmod" rmmod hbmpool
echo "1..$n"
[ "$fails" -eq 0 ]
