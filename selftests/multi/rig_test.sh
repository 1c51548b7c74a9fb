#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The multi-VM rig proves itself: 3 VMs (tools/rig/multi.sh) running
# tools/rig/multi-agent.sh, driven from the host by this script (--host, run
# by multi.sh -c) through tools/rig/multi-ctl.sh.  TAP on stdout; the last
# line is "N passed, N failed".  Needs kmod/hbmpool.ko (make module).
#
#   boot: the 3 agents run
#   TCP: each VM reaches the other two (python3 echo, rigutil.py)
#   cut VM3's link: its carrier is off, VM1 cannot reach it, VM1 still
#     reaches VM2; restore: carrier on, VM1 reaches VM3 again
#   freeze VM2: an established connection from VM1 stalls and a new one
#     fails; after the thaw the stalled echo arrives and new ones work
#   kill VM3: unreachable; start it again: a new boot (RIG_BOOT 2, another
#     boot_id), reachable from VM1 and VM2
#   every VM: insmod hbmpool.ko, /dev/hbmpool appears, rmmod
#   ivshmem: each VM writes its node's segment, every VM reads all N and
#     the host reads /dev/shm: the same bytes
#   vm.sh --prealloc: a bad RIG_PREALLOC is refused; a VM with its memory
#     preallocated boots and sees rig.prealloc=1
#
# Environment: MULTI_TIMEOUT (whole run, default 900 s), RIG_BUILD, KVER.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
rig=$repo/tools/rig

if [ "${1:-}" != --host ]; then
	[ -r "$repo/kmod/hbmpool.ko" ] || { echo "rig_test: kmod/hbmpool.ko not built (make module)" >&2; exit 1; }
	# shellcheck source=selftests/multi/outer.sh
	. "$here/outer.sh"
	MULTI_TIMEOUT=${MULTI_TIMEOUT:-900} multi_outer rigtest 3 "$here/rig_test.sh"
	exit
fi

# --- host side, run by multi.sh -c ---
# shellcheck source=selftests/hbmpool/lib.sh
. "$repo/selftests/hbmpool/lib.sh"
N=$MULTI_NODES
PY="/usr/bin/python3 selftests/multi/rigutil.py"
PORT=7777
ctl() { "$rig/multi-ctl.sh" "$@"; }
# gx [-t SECS] K CMD: run CMD in VM K; its output as TAP comments.
gx() {
	local t=60
	if [ "$1" = -t ]; then t=$2; shift 2; fi
	local out rc=0
	out=$(ctl exec -t "$t" "$@" 2>&1) || rc=$?
	[ -n "$out" ] && printf '%s\n' "$out" | sed 's/^/# /'
	return $rc
}
reach() { gx "$1" "$PY probe 10.77.0.$2 $PORT ${3:-20}"; }
unreach() { ! gx "$1" "$PY probe 10.77.0.$2 $PORT ${3:-3}"; }
serve() {
	ctl exec "$1" "setsid $PY serve $PORT >/tmp/echo.log 2>&1 </dev/null &" >/dev/null &&
		gx "$1" "for i in \$(seq 40); do $PY probe 127.0.0.1 $PORT 2 >/dev/null && exit 0; sleep 0.5; done; exit 1"
}
carrier() { [ "$(ctl exec "$1" 'cat /sys/class/net/eth0/carrier' 2>/dev/null)" = "$2" ]; }
bail() { echo "Bail out! $*"; echo "1..$n"; exit 1; }

t0=$SECONDS
for ((k = 1; k <= N; k++)); do
	check "VM$k boots and its agent runs" ctl agents -t 400 "$k"
done
[ "$fails" = 0 ] || bail "VMs did not come up"
echo "# all up after $((SECONDS - t0))s"

for ((k = 1; k <= N; k++)); do
	check "VM$k runs an echo server on :$PORT" serve "$k"
done
for ((i = 1; i <= N; i++)); do
	for ((j = 1; j <= N; j++)); do
		[ $i = $j ] && continue
		check "VM$i reaches VM$j over TCP" reach $i $j
	done
done

# --- link cut and restore
check "cut VM3's link" ctl cut 3
check "VM3 sees no carrier" carrier 3 0
check "VM1 cannot reach VM3 while its link is cut" unreach 1 3
check "VM1 still reaches VM2" reach 1 2
check "restore VM3's link" ctl restore 3
check "VM3 sees its carrier again" carrier 3 1
check "VM1 reaches VM3 again" reach 1 3 30

# --- freeze and thaw
FREEZE=${MULTI_FREEZE_SECS:-10}
job=$(ctl spawn 1 "$PY stall 10.77.0.2 $PORT \$RIG_SYNC/frozen 120")
connected() { grep -q connected "$RIG_SYNC/cmd/$job.out" 2>/dev/null; }
for ((i = 0; i < 150; i++)); do connected && break; sleep 0.2; done
check "VM1 holds a connection to VM2" connected
check "freeze VM2" ctl freeze 2
fr=$SECONDS
ctl mark frozen
check "a new connection from VM1 to VM2 fails while VM2 is frozen" unreach 1 2
sleep $((FREEZE - (SECONDS - fr) > 0 ? FREEZE - (SECONDS - fr) : 0))
not_done() { ! ctl 'done' "$1"; }
check "VM1's established connection stalls while VM2 is frozen (${FREEZE}s)" not_done "$job"
check "thaw VM2" ctl thaw 2
if out=$(ctl result -t 120 "$job" 2>&1) && grep -q 'echo after' <<<"$out"; then
	ok "the stalled echo arrives after the thaw (${out##*$'\n'})"
else
	nok "the stalled echo arrives after the thaw: $(tr '\n' ' ' <<<"$out")"
fi
check "VM1 reaches VM2 after the thaw" reach 1 2 30

# --- kill and restart
id1=$(cat "$RIG_SYNC/up.3.1" 2>/dev/null)
check "kill VM3" ctl kill 3
check "VM1 cannot reach the killed VM3" unreach 1 3
check "VM2 still reaches VM1" reach 2 1
check "start VM3 again" ctl start -t 400 3
check "VM3's agent runs again" ctl agents -t 120 3
id2=$(cat "$RIG_SYNC/up.3.2" 2>/dev/null)
# shellcheck disable=SC2016 # expanded in the guest
b3=$(ctl exec 3 'echo $RIG_BOOT' 2>/dev/null)
check "VM3 was rebooted (RIG_BOOT=$b3, boot_id ${id1:0:8} -> ${id2:0:8})" \
	test "$b3" = 2 -a -n "$id2" -a "$id2" != "$id1"
check "VM3 runs its echo server again" serve 3
check "VM1 reaches the restarted VM3" reach 1 3 30
check "VM2 reaches the restarted VM3" reach 2 3 30

# --- the module
# shellcheck disable=SC2016 # expanded in the guest
for ((k = 1; k <= N; k++)); do
	check "VM$k: insmod hbmpool.ko, /dev/hbmpool appears" \
		gx "$k" 'insmod kmod/hbmpool.ko && for i in $(seq 50); do [ -c /dev/hbmpool ] && exit 0; sleep 0.1; done; exit 1'
done
for ((k = 1; k <= N; k++)); do
	check "VM$k: rmmod hbmpool" gx "$k" 'rmmod hbmpool'
done

# --- ivshmem: node K's segment is the same bytes everywhere
shm=$(sed -n 's/^MULTI_SHM=//p' "$MULTI_DIR/ctl/env")
if [ "${shm:-0}" -gt 0 ]; then
	declare -A text
	for ((k = 1; k <= N; k++)); do
		text[$k]="node $k of run $MULTI_RUN, $RANDOM$RANDOM"
		check "VM$k writes its segment through the ivshmem BAR" \
			gx "$k" ". tools/rig/multi-lib.sh && $PY shmw \"\$(rig_shm $k)\" '${text[$k]}'"
	done
	for ((j = 1; j <= N; j++)); do
		bad=""
		for ((k = 1; k <= N; k++)); do
			got=$(ctl exec "$j" ". tools/rig/multi-lib.sh && $PY shmr \"\$(rig_shm $k)\" 100" 2>&1)
			[ "$got" = "${text[$k]}" ] || bad="$bad node $k: '$got';"
		done
		if [ -z "$bad" ]; then ok "VM$j reads every node's segment"; else nok "VM$j reads every node's segment:$bad"; fi
	done
	bad=""
	for ((k = 1; k <= N; k++)); do
		got=$(head -c 100 "/dev/shm/hbmpool-$MULTI_RUN-$k" | tr -d '\0')
		[ "$got" = "${text[$k]}" ] || bad="$bad node $k: '$got';"
	done
	if [ -z "$bad" ]; then ok "the host reads every segment in /dev/shm"; else nok "the host reads every segment:$bad"; fi
else
	nok "no ivshmem segments (multi.sh --shm 0)"
fi

echo "# checks done after $((SECONDS - t0))s"
ctl stop

# --- vm.sh --prealloc (the benchmarks' guest memory), on one small VM
pre_rc=0
pre_out=$(RIG_PREALLOC=2 "$rig/vm.sh" -q -i rigtest-pre -t 60 -- true 2>&1) || pre_rc=$?
if [ $pre_rc -ne 0 ] && [[ "$pre_out" == *"RIG_PREALLOC must be 0 or 1"* ]]; then
	ok "vm.sh refuses RIG_PREALLOC=2"
else
	nok "vm.sh took RIG_PREALLOC=2: $pre_out"
fi
check "vm.sh --prealloc: the guest boots and is told (rig.prealloc=1)" \
	"$rig/vm.sh" -q --prealloc -m 256 -i rigtest-pre -t 180 -- grep -qw rig.prealloc=1 /proc/cmdline
check "vm.sh --prealloc: QEMU got -mem-prealloc" \
	grep -q -- -mem-prealloc "${RIG_BUILD:-$repo/build/rig}/out-rigtest-pre/qemu.cmd"
echo "1..$n"
[ "$fails" -eq 0 ]
