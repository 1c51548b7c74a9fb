#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The TCP transport between 2 VMs, briefly: what make check-debug runs on
# the debug kernel (KASAN, lockdep, kmemleak), where tcp_test.sh's 3 VMs
# would take too long.  TAP on stdout, "N passed, N failed" last.
#
#   both VMs join one domain and reach each other (health live); VM2's
#     home cannot move to a port in use;
#   VM1 writes and verifies a region on VM2, four times its cache; it
#     reads the shm driver's hbmpool_header of every ivshmem device;
#   VM2's link set down and up by VM1's operator: requests fail at once,
#     then the link is live again and the data exact;
#   a stranger, a wrong key and a bounded fuzz against VM2's home;
#   each fences the other: VM2 frees VM1's chunks and turns it away, VM1's
#     region on VM2 gets SIGBUS at once;
#   teardown: region closed, nodes and segments deleted, rmmod; then a
#     kmemleak scan in each VM finds nothing of hbmpool's.
#
# multi.sh fails the run if a guest kernel log shows a splat.  Environment:
# RIG_KERNEL, HBMPOOL_KO (the debug kernel and its module), MULTI_TIMEOUT
# (default 1500 s), RIG_BUILD.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
rig=$repo/tools/rig
build=${RIG_BUILD:-$repo/build/rig}

if [ "${1:-}" != --host ]; then
	[ -r "${HBMPOOL_KO:-$repo/kmod/hbmpool.ko}" ] || { echo "tcp_smoke: no module (make module)" >&2; exit 1; }
	"$here/build-regionio.sh" "$build/regionio" || { echo "tcp_smoke: cannot build regionio" >&2; exit 1; }
	# shellcheck source=selftests/multi/outer.sh
	. "$here/outer.sh"
	multi_outer tcpsmoke 2 "$here/tcp_smoke.sh"
	exit
fi

# --- host side, run by multi.sh -c ---
# shellcheck source=selftests/hbmpool/lib.sh
. "$repo/selftests/hbmpool/lib.sh"
KO=${HBMPOOL_KO:-$repo/kmod/hbmpool.ko}
RIO=$build/regionio
H=tools/hbmctl/hbmctl
KEY=$RIG_SYNC/domain.key
FZ="/usr/bin/python3 selftests/multi/wirefuzz.py -t 60"
ctl() { "$rig/multi-ctl.sh" "$@"; }
gx() {
	local t=300
	if [ "$1" = -t ]; then t=$2; shift 2; fi
	local out rc=0
	out=$(ctl exec -t "$t" "$@" 2>&1) || rc=$?
	[ -n "$out" ] && printf '%s\n' "$out" | sed 's/^/# /'
	return $rc
}
live() {	# live K J: VM K's link to J is live within 120 s
	ctl exec -t 150 "$1" "for i in \$(seq 120); do $H -j link show $2 | grep -q '\"health\":\"live\"' && exit 0; sleep 1; done; exit 1"
}

for k in 1 2; do check "VM$k boots" ctl agents -t 600 "$k"; done
head -c 32 /dev/urandom >"$KEY"
for k in 1 2; do
	j=$((3 - k))
	check "VM$k joins the domain as node $k" gx "$k" "set -e; insmod $KO
$H domain set name rig self $k key-file $KEY
$H node set $k addr 10.77.0.$k port 7070
$H segment add 32M
$H node add $j capacity 32M distance 20 transport tcp link scaleout addr 10.77.0.$j port 7070
$H params set cache-budget-pages 256 fetch-timeout-ms 20000"
done
check "VM1 -> VM2 live" live 1 2
check "VM2 -> VM1 live" live 2 1

# Guest scripts, through the shared directory: sysfs link/ against link
# show, and a home that cannot move to a port in use.
cat >"$RIG_SYNC/linkcheck.sh" <<EOF
d=/sys/kernel/hbmpool/nodes/node2/link
[ "\$(cat \$d/health)" = live ] || { echo "health: \$(cat \$d/health)"; exit 1; }
$H -j link show 2 >/tmp/l.json || exit 1
python3 - \$d /tmp/l.json <<'EOP'
import json, sys
d, j = sys.argv[1], json.load(open(sys.argv[2]))
j = j[0] if isinstance(j, list) else j
rd = lambda f: int(open(d + "/" + f).read())
keys = ("incarnation", "connects", "auth-failures", "digest-errors", "retries")
bad = [(k, rd(k.replace("-", "_")), j.get(k)) for k in keys if rd(k.replace("-", "_")) != j.get(k)]
print("# differ:", bad) if bad else None
sys.exit(1 if bad or rd("incarnation") == 0 or rd("bytes") == 0 else 0)
EOP
EOF
cat >"$RIG_SYNC/portbusy.sh" <<EOF
rm -f /tmp/busy.ready
python3 -c 'import socket, time
s = socket.socket(); s.bind(("10.77.0.2", 7071)); s.listen()
open("/tmp/busy.ready", "w").close(); time.sleep(120)' &
for i in \$(seq 600); do [ -e /tmp/busy.ready ] && break; sleep 0.1; done
[ -e /tmp/busy.ready ] || { echo "the blocker did not bind 7071"; kill %1; exit 1; }
if out=\$($H node set 2 port 7071 2>&1); then
	echo "moved to a port in use: \$out"
	$H node set 2 port 7070	# back, for the checks that follow
	kill %1
	exit 1
fi
kill %1
echo "\$out"
echo "\$out" | grep -q "Address already in use" && echo "\$out" | grep -q "cannot listen" &&
	$H -j node show 2 | grep -Eq '"port": ?7070'
EOF
check "VM2 cannot move its home to a port in use: EADDRINUSE, named, nothing changes" \
	gx 2 "bash $RIG_SYNC/portbusy.sh"
check "VM1 -> VM2 still live" live 1 2

check "VM1 holds a 4 MiB region on VM2" \
	gx 1 "setsid $RIO create --name s1 --size 4M --chunk 1M --policy bind --nodes 2 --hold --pidfile /tmp/s1.pid >/tmp/s1.log 2>&1 </dev/null & for i in \$(seq 100); do [ -s /tmp/s1.pid ] && exit 0; sleep 0.2; done; exit 1"
check "VM1 writes it" gx 1 "$RIO write --name s1 --seed 5"
check "VM1 verifies it (random order)" gx 1 "$RIO verify --name s1 --seed 5 --order rand"
check "VM1's sysfs link/ of node 2 says what link show says" gx 1 "bash $RIG_SYNC/linkcheck.sh"
# the shm driver's sysfs copy of each ivshmem device's header (no home
# writes one here: 64 bytes, all zero), read under KASAN
check "VM1 reads hbmpool_header of every ivshmem device: 64 bytes each" gx 1 \
	"n=0; for h in /sys/bus/pci/drivers/hbmpool-shm/*/hbmpool_header; do [ -e \$h ] || continue; [ \$(wc -c <\$h) = 64 ] || exit 1; n=\$((n + 1)); done; echo \"\$n devices\"; [ \$n -gt 0 ]"

check "VM1 sets its link to VM2 down" gx 1 "$H link set 2 down"
check "a read then fails at once (SIGBUS, no wait)" \
	gx 1 "$H params set cache-budget-pages 16; sleep 1; $H params set cache-budget-pages 256; timeout 60 $RIO verify --name s1 --seed 5 --expect-sigbus-on 2 --max-cached 16"
check "VM1 sets it up again: live" gx 1 "$H link set 2 up"
check "VM1 -> VM2 live again" live 1 2
check "VM1 verifies the region: exact" gx 1 "$RIO verify --name s1 --seed 5 --order seq"

check "VM2 knows node 9 (the fuzzer)" \
	gx 2 "$H node add 9 capacity 32M distance 40 transport tcp link scaleout addr 10.77.0.99 port 7070"
who="--domain rig --id 9 --home 2 --key-file $KEY"
check "a stranger is turned away" gx 1 "$FZ stranger 10.77.0.2 7070"
check "a wrong key is refused" \
	gx 1 "head -c 32 /dev/urandom >/tmp/wrong.key && $FZ wrongkey 10.77.0.2 7070 --domain rig --id 9 --home 2 --key-file /tmp/wrong.key"
check "fuzzed frames are refused, the home survives" gx -t 900 1 "$FZ fuzz 10.77.0.2 7070 $who --seed 11 --rounds 50"
check "VM2 forgets node 9" gx 2 "$H node del 9"
check "VM1 verifies the region after the fuzz: exact" gx 1 "$RIO verify --name s1 --seed 5 --order rev"

# Each declares the other dead, as the control plane does when a lease ends.
cat >"$RIG_SYNC/fence2.sh" <<EOF
f=/sys/kernel/debug/hbmpool/tcp_home
a0=\$(awk '/^auth_failures/ {print \$2}' \$f)
$H node set 1 state fenced || exit 1
$H -j node show 1 | grep -Eq '"state": ?"fenced"' || { echo "node 1 is not fenced"; exit 1; }
for i in \$(seq 30); do $H -j segment show | grep -Eq '"used": ?0,' && break; sleep 1; done
$H -j segment show | grep -Eq '"used": ?0,' || { echo "node 1's chunks were not freed"; exit 1; }
for i in \$(seq 60); do [ "\$(awk '/^auth_failures/ {print \$2}' \$f)" -gt "\$a0" ] && exit 0; sleep 1; done
echo "node 1 was not turned away"; exit 1
EOF
check "VM2 fences node 1: its chunks are freed, its handshakes refused" gx 2 "bash $RIG_SYNC/fence2.sh"
check "VM1 fences node 2: every page of the region there gets SIGBUS at once" \
	gx 1 "$H node set 2 state fenced && timeout 60 $RIO verify --name s1 --seed 5 --expect-sigbus-on 2 --max-cached 0"
check "VM1 closes the region" \
	gx 1 "p=\$(cat /tmp/s1.pid) && kill \$p && for i in \$(seq 50); do kill -0 \$p 2>/dev/null || exit 0; sleep 0.2; done; exit 1"
# The home frees a client's chunks when the client frees them: wait for the
# FREEs to land before the nodes go.
check "VM2's segment has no chunk in use" \
	gx 2 "for i in \$(seq 60); do $H -j segment show | grep -q '\"used\":0,' && exit 0; sleep 1; done; exit 1"
# Leaks from the module, resolved ([hbmpool]) or not (an unloaded module's
# address), as run-tests.sh judges them.
# shellcheck disable=SC2016 # expanded in the guest
kml='k=/sys/kernel/debug/kmemleak; [ -w $k ] || { echo "no kmemleak here"; exit 0; }
echo scan >$k; sleep 6; echo scan >$k
! grep -Eq "\[hbmpool\]|^ *\[<[^>]*>\] 0xffffffff[c-f][0-9a-f]*$" $k'
for k in 1 2; do
	j=$((3 - k))
	check "VM$k deletes its node, its segment, unloads" gx "$k" "set -e; $H node del $j; $H segment del; rmmod hbmpool"
done
# two scans of a KASAN kernel under TCG on a busy host: minutes, not seconds
for k in 1 2; do check "VM$k: kmemleak finds nothing of hbmpool" gx -t 400 "$k" "$kml"; done
ctl stop
echo "1..$n"
[ "$fails" -eq 0 ]
