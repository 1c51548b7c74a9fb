#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot N rig VMs (ids 1..N) on one shared network segment and run a command in
# each; optionally a host-side command beside them that drives faults
# (multi-ctl.sh).  Waits for all, then reports every VM's fate.
#
# Network: each VM has one virtio-net NIC (QEMU id nic0, guest eth0, MAC
# 52:54:00:77:00:K, IPv4 10.77.0.K/24, set by the rig's init) on a QEMU
# "socket" netdev in multicast mode, group 230.77.0.1, bound to 127.0.0.1:
# every frame a VM sends reaches every other VM of the run, a hub on the
# loopback device.  One NIC and one address per VM for any N, no host
# configuration (no tap, bridge or root netns), nothing leaves 127.0.0.1.  The
# UDP port is per run (hash of the run directory, or --port), so runs with
# different names do not hear each other.
#
# Shared memory: with --shm MB (a power of two; default 16, 0 for none) the
# rig creates one file per node, /dev/shm/hbmpool-RUN-K, and gives every VM
# all N of them as ivshmem-plain devices (PCI 1af4:1110, slot 0x10+K, memory
# in BAR2): node K's segment is the same bytes in every VM and on the host.
#
# Control network: with --ctlnet PORT every VM gets a second NIC (QEMU id
# nicctl, MAC 52:54:00:78:00:K, IPv4 10.78.0.(10+K)/24, set by multi-guest.sh)
# on a restricted user-mode netdev: the guest reaches nothing but
# 10.78.0.100:2379, which QEMU forwards to the host's 127.0.0.1:PORT (through
# "busybox nc", one per connection: busybox-static is a rig package) (the
# etcd a test starts there).  Cutting it (multi-ctl.sh qmp K set_link
# name=nicctl up=false) cuts a node off from etcd and not from its peers.
#
# Coordination: $RIG_BUILD/multi-RUN/sync/ is shared writable with every VM
# (9p, uncached) at the same path; see multi-lib.sh (markers, barriers) and
# multi-agent.sh (a guest command that runs what the host sends it).
#
# Output: $RIG_BUILD/out-RUN-K/ per VM (vm.sh's: console.log, dmesg.txt,
# exit-status, qmp.sock...); $RIG_BUILD/multi-RUN/: sync/, ctl/ (VM state for
# multi-ctl.sh), boots/K.B/ (the out dir of boot B of VM K when the host killed
# it), host.log and host.rc (the host command), results.txt.
#
# Exit status: 0 when every VM's command exited 0 (a VM the host killed and did
# not restart counts as fine), the host command (if any) exited 0 and no
# guest kernel log shows a bug (klog-check.sh); 1 otherwise; 126 rig error.
# The VM that failed and why (exit status, timeout, crash) is printed with the
# tail of its console.
# shellcheck disable=SC2054 # QEMU options are comma-separated by design
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
	cat <<USAGE
usage: $0 [options] [--] command [args...]
   Boot N VMs and run command in each (as vm.sh does); the guest sees
   RIG_NODE, RIG_NODES, RIG_BOOT, RIG_RUN, RIG_IP, RIG_SYNC, RIG_SHM_SIZE.
 -n, --nodes N         number of VMs, 1..15 (default 3)
 -r, --run NAME        run name (default multi): VM ids NAME-1..NAME-N
 -c, --host CMD        host-side command (bash -c) run while the VMs run, with
                       MULTI_RUN, MULTI_DIR, MULTI_NODES, RIG_SYNC, RIG_BUILD
                       exported (multi-ctl.sh finds the run by them)
 -t, --timeout SECS    the whole run (default \$RIG_TIMEOUT or 900)
 -m, --mem MB          memory per VM (default 1024)
     --smp N[,N...]    CPUs per VM (default 1); a list gives VM k the k-th
                       value, the VMs past its end the last one
     --shm MB          ivshmem segment per node, a power of two (default 16; 0: none)
     --port PORT       UDP port of the multicast segment (default: from the run dir)
     --ctlnet PORT     a control NIC per VM: 10.78.0.100:2379 in the guest is
                       the host's 127.0.0.1:PORT (nothing else is reachable)
 -e, --env VAR=VALUE   environment of the guest command (repeatable)
 -b, --bind PATH       as vm.sh -b (repeatable)
 -a, --append ARGS     extra kernel command line
 -h, --help
USAGE
}

nodes=3
run=multi
hostcmd=""
timeout=${RIG_TIMEOUT:-900}
mem=1024
smp=1
shm=16
port=""
ctlnet=""
envs=()
vmargs=()
while [ $# -gt 0 ]; do
	case "$1" in
	-n|--nodes) nodes=$2; shift 2 ;;
	-r|--run) run=$2; shift 2 ;;
	-c|--host) hostcmd=$2; shift 2 ;;
	-t|--timeout) timeout=$2; shift 2 ;;
	-m|--mem) mem=$2; shift 2 ;;
	--smp) smp=$2; shift 2 ;;
	--shm) shm=$2; shift 2 ;;
	--port) port=$2; shift 2 ;;
	--ctlnet) ctlnet=$2; shift 2 ;;
	-e|--env) envs+=("$2"); shift 2 ;;
	-b|--bind) vmargs+=(-b "$2"); shift 2 ;;
	-a|--append) vmargs+=(-a "$2"); shift 2 ;;
	-h|--help) usage; exit 0 ;;
	--) shift; break ;;
	-*) usage >&2; exit 126 ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || { usage >&2; exit 126; }
if ! [[ "$nodes" =~ ^[0-9]+$ ]] || [ "$nodes" -lt 1 ] || [ "$nodes" -gt 15 ]; then
	rig_die "bad node count '$nodes' (1..15)"
fi
[[ "$run" =~ ^[A-Za-z0-9_]+$ ]] || rig_die "bad run name '$run' ([A-Za-z0-9_]+)"
[[ "$timeout" =~ ^[0-9]+$ ]] || rig_die "bad timeout '$timeout'"
[[ "$mem" =~ ^[0-9]+$ ]] || rig_die "bad memory size '$mem'"
if ! [[ "$shm" =~ ^[0-9]+$ ]] || [ $((shm & (shm - 1))) != 0 ]; then
	rig_die "bad --shm '$shm' (MiB, a power of two, or 0)"
fi
for e in "${envs[@]+"${envs[@]}"}"; do
	case "$e" in RIG_*) rig_die "--env $e: RIG_* is the rig's own" ;; esac
	vmargs+=(-e "$e")
done

rig_kver
"$RIG_DIR/mkinitramfs.sh" >/dev/null	# once, before the VMs race for it

dir=$RIG_BUILD/multi-$run
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
for ((k = 1; k <= nodes; k++)); do
	pidf=$RIG_BUILD/out-$run-$k/qemu.pid
	if [ -s "$pidf" ] && kill -0 "$(cat "$pidf")" 2>/dev/null; then
		rig_die "VM $run-$k is still running (pid $(cat "$pidf")): another run named '$run'?"
	fi
done
rm -rf "$dir/sync" "$dir/ctl" "$dir/boots" "$dir/host.log" "$dir/host.rc" "$dir/results.txt"
mkdir -p "$dir/sync" "$dir/ctl" "$dir/boots"
sync_dir=$dir/sync
ctl=$dir/ctl
case "$dir" in *[[:space:],]*) rig_die "the run directory must not contain spaces or commas: $dir" ;; esac

if [ -z "$port" ]; then
	port=$((20000 + $(printf '%s' "$dir" | cksum | cut -d' ' -f1) % 20000))
fi
[[ "$port" =~ ^[0-9]+$ ]] || rig_die "bad --port '$port'"
if [ -n "$ctlnet" ] && { ! [[ "$ctlnet" =~ ^[0-9]+$ ]] || [ "$ctlnet" -lt 1 ] || [ "$ctlnet" -gt 65535 ]; }; then
	rig_die "bad --ctlnet '$ctlnet' (a TCP port on 127.0.0.1)"
fi
group=230.77.0.1

shm_files=()
qemu_shm=()
if [ "$shm" -gt 0 ]; then
	for ((k = 1; k <= nodes; k++)); do
		f=/dev/shm/hbmpool-$run-$k
		rm -f "$f"
		# Allocated now, and mapped into each QEMU at its start
		# (prealloc: MADV_POPULATE_WRITE, which leaves the bytes alone),
		# not on the guests' first touches: a host page fault inside a
		# guest's copy is not the transport's cost.
		fallocate -l "${shm}M" "$f" || truncate -s "${shm}M" "$f" || rig_die "cannot create $f"
		shm_files+=("$f")
		qemu_shm+=(-Q "-object" -Q "memory-backend-file,id=shm$k,mem-path=$f,size=${shm}M,share=on,prealloc=on"
			-Q "-device" -Q "ivshmem-plain,memdev=shm$k,addr=$(printf '0x%02x' $((0x10 + k)))")
	done
fi
cleanup_shm() { [ ${#shm_files[@]} = 0 ] || rm -f "${shm_files[@]}"; }

deadline=$((SECONDS + timeout))
cat >"$ctl/env" <<EOF
MULTI_RUN=$run
MULTI_NODES=$nodes
MULTI_PORT=$port
MULTI_SHM=$shm
EOF

# One supervisor per VM: boots it, and boots it again when the host killed it
# (multi-ctl.sh kill writes ctl/K.kill) and asks for a start (ctl/K.start).
# ctl/K.state: running, killed, done; ctl/K.boot: the boot number;
# ctl/K.result: "RC WHY" when done.
supervise() {
	local k=$1 boot=0 rc left out
	out=$RIG_BUILD/out-$run-$k
	shift
	while :; do
		boot=$((boot + 1))
		rm -f "$ctl/$k.kill" "$ctl/$k.start"
		echo $boot >"$ctl/$k.boot"
		echo running >"$ctl/$k.state"
		left=$((deadline - SECONDS))
		if [ $left -le 0 ]; then
			echo "124 timed out before boot $boot" >"$ctl/$k.result"
			break
		fi
		ctlargs=()
		if [ -n "$ctlnet" ]; then
			ctlargs=(-Q -netdev -Q "user,id=ctl0,restrict=on,net=10.78.0.0/24,host=10.78.0.2,guestfwd=tcp:10.78.0.100:2379-cmd:/bin/busybox nc 127.0.0.1 $ctlnet"
				-Q -device -Q "virtio-net-pci,netdev=ctl0,id=nicctl,mac=52:54:00:78:00:$(printf %02x "$k")")
		fi
		IFS=, read -r -a smps <<<"$smp"
		vsmp=${smps[k - 1]:-${smps[${#smps[@]} - 1]}}
		rc=0
		"$RIG_DIR/vm.sh" -q -i "$run-$k" -t "$left" -m "$mem" --smp "$vsmp" \
			-n "mcast:$group:$port,mac=52:54:00:77:00:$(printf %02x "$k")" \
			--ip "10.77.0.$k/24" \
			-Q -virtfs -Q "local,path=$sync_dir,mount_tag=rigsync,security_model=none,multidevs=remap" \
			"${qemu_shm[@]+"${qemu_shm[@]}"}" "${ctlargs[@]+"${ctlargs[@]}"}" \
			-e "RIG_SYNC=$sync_dir" -e "RIG_NODE=$k" -e "RIG_NODES=$nodes" \
			-e "RIG_BOOT=$boot" -e "RIG_RUN=$run" -e "RIG_IP=10.77.0.$k" \
			-e "RIG_SHM_SIZE=$((shm * 1024 * 1024))" \
			"${vmargs[@]+"${vmargs[@]}"}" \
			-- "$RIG_DIR/multi-guest.sh" "$@" >"$ctl/$k.vm.log" 2>&1 || rc=$?
		if [ -e "$ctl/$k.kill" ]; then
			mkdir -p "$dir/boots/$k.$boot"
			cp -a "$out/." "$dir/boots/$k.$boot/" 2>/dev/null || true
			echo killed >"$ctl/$k.state"
			while [ ! -e "$ctl/$k.start" ] && [ ! -e "$ctl/end" ] && [ $SECONDS -lt $deadline ]; do
				sleep 0.5
			done
			[ -e "$ctl/$k.start" ] && continue
			echo "0 killed by the host (boot $boot), not restarted" >"$ctl/$k.result"
			break
		fi
		case $rc in
		0) echo "0 exit status 0" ;;
		124) echo "124 timed out (run timeout ${timeout}s)" ;;
		125) echo "125 ended without a verdict: kernel panic or QEMU crash" ;;
		126) echo "126 rig error: $(tail -n 1 "$ctl/$k.vm.log")" ;;
		*) echo "$rc guest command exit status $rc" ;;
		esac >"$ctl/$k.result"
		[ $boot -gt 1 ] && sed -i "s/\$/ (boot $boot)/" "$ctl/$k.result"
		break
	done
	echo 'done' >"$ctl/$k.state"
}

pids=()
hostpid=""
stop_all() {
	local p k
	for p in "${pids[@]+"${pids[@]}"}" $hostpid; do kill "$p" 2>/dev/null || true; done
	for ((k = 1; k <= nodes; k++)); do
		p=$RIG_BUILD/out-$run-$k/qemu.pid
		[ -s "$p" ] && kill "$(cat "$p")" 2>/dev/null
	done
	cleanup_shm
}
trap 'stop_all; exit 130' INT TERM

rig_log "multi: $nodes VMs ($run-1..$run-$nodes), ${mem}M each, segment $group:$port on 127.0.0.1," \
	"shm ${shm}M per node, output in $dir"
start=$SECONDS
for ((k = 1; k <= nodes; k++)); do
	supervise "$k" "$@" &
	pids+=($!)
done

hostrc=""
if [ -n "$hostcmd" ]; then
	(
		export MULTI_RUN=$run MULTI_DIR=$dir MULTI_NODES=$nodes RIG_SYNC=$sync_dir RIG_BUILD
		cd "$REPO"
		exec timeout -k 5 "$timeout" bash -c "$hostcmd" </dev/null
	) > >(tee "$dir/host.log") 2>&1 &
	hostpid=$!
fi

# Main loop: when the host command ends, tell the agents to stop (and the
# run to abort if it failed); when a VM fails, abort the run so that nobody
# waits for it until the timeout; without a host command, the run ends when
# every VM is done or killed.
aborted=""
while :; do
	all=1
	live=0
	for ((k = 1; k <= nodes; k++)); do
		st=$(cat "$ctl/$k.state" 2>/dev/null || echo starting)
		[ "$st" = 'done' ] || all=0
		[ "$st" = killed ] || [ "$st" = 'done' ] || live=1
		if [ "$st" = 'done' ] && [ -z "$aborted" ] && [ "$(cut -d' ' -f1 "$ctl/$k.result")" != 0 ]; then
			aborted="VM $k: $(cut -d' ' -f2- "$ctl/$k.result")"
			echo "$aborted" >"$sync_dir/abort"
		fi
	done
	if [ -n "$hostpid" ] && [ -z "$hostrc" ] && ! kill -0 "$hostpid" 2>/dev/null; then
		hostrc=0
		wait "$hostpid" || hostrc=$?
		echo "$hostrc" >"$dir/host.rc"
		if [ "$hostrc" != 0 ] && [ -z "$aborted" ]; then
			aborted="the host command failed (status $hostrc)"
			echo "$aborted" >"$sync_dir/abort"
		fi
		touch "$sync_dir/stop" "$ctl/end"
	fi
	[ -z "$hostcmd" ] && [ $live = 0 ] && touch "$ctl/end"
	[ $all = 1 ] && [ -n "$hostrc$([ -z "$hostcmd" ] && echo none)" ] && break
	if [ $SECONDS -ge $((deadline + 30)) ]; then
		rig_log "multi: the run is past its timeout; stopping everything"
		stop_all
		[ -n "$hostpid" ] && [ -z "$hostrc" ] && hostrc=124
		break
	fi
	sleep 1
done
for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
cleanup_shm
elapsed=$((SECONDS - start))

fails=0
{
	echo "multi-VM run '$run': $nodes VMs, ${elapsed}s"
	for ((k = 1; k <= nodes; k++)); do
		out=$RIG_BUILD/out-$run-$k
		res=$(cat "$ctl/$k.result" 2>/dev/null || echo "125 no result (supervisor died)")
		rc=${res%% *}
		why=${res#* }
		if [ "$rc" != 0 ]; then
			echo "FAIL  VM $run-$k (10.77.0.$k): $why; console: $out/console.log"
			tr -d '\r' <"$out/console.log" 2>/dev/null | tail -n 15 | sed 's/^/      | /'
			fails=$((fails + 1))
			continue
		fi
		if [ -s "$out/dmesg.txt" ]; then
			if ! bad=$("$RIG_DIR/klog-check.sh" "$out/dmesg.txt"); then
				echo "FAIL  VM $run-$k: the guest kernel log shows a bug ($out/dmesg.txt):"
				head -n 20 <<<"$bad" | sed 's/^/      | /'
				fails=$((fails + 1))
				continue
			fi
		fi
		echo "ok    VM $run-$k (10.77.0.$k): $why, $(cat "$ctl/$k.boot") boot(s)"
	done
	if [ -n "$hostcmd" ]; then
		case ${hostrc:-124} in
		0) echo "ok    host command: exit status 0" ;;
		124) echo "FAIL  host command: timed out (${timeout}s)"; fails=$((fails + 1)) ;;
		*) echo "FAIL  host command: exit status $hostrc ($dir/host.log)"; fails=$((fails + 1)) ;;
		esac
	fi
	if [ -n "$aborted" ]; then echo "note  run aborted early: $aborted"; fi
} | tee "$dir/results.txt"
fails=$(grep -c '^FAIL' "$dir/results.txt" || true)
[ "$fails" = 0 ]
