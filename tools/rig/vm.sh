#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot one rig VM under QEMU (TCG; KVM is never used) and run a command in it.
#
# The guest runs Debian's kernel /boot/vmlinuz-$KVER (or $RIG_KERNEL, a
# bzImage with virtio and 9p built in, e.g. debug-kernel.sh's) with the rig initramfs
# (init.sh): the host root is visible read-only at the same paths, so the repo
# and every host binary are where they are on the host; /tmp and /run are the
# guest's own tmpfs; /out is the writable host directory $RIG_BUILD/out-ID/,
# also mounted at its host path.
#
# Per VM (ID), in $RIG_BUILD/out-ID/ (emptied at boot):
#   console.log   serial console     qmp.sock   QMP socket (see qmp.py)
#   exit-status   guest's status     qemu.pid   QEMU's pid while it runs
#   dmesg.txt     guest kernel log   cmd.sh     the command, as run
#
# Exit status: the command's status in the guest; 124 VM timed out; 125 VM
# ended without a verdict (kernel panic, crash); 126 rig error.
# shellcheck disable=SC2054 # QEMU options are comma-separated by design
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
	cat <<USAGE
usage: $0 [options] [--] [command [args...]]
   Boot a VM and run command (through bash, cwd = the repo) in it; no command
   and no --script: an interactive shell on the console (Ctrl-A x quits QEMU).
 -i, --id ID           VM id, [A-Za-z0-9_-]+ (default 0); output in $RIG_BUILD/out-ID/
 -s, --script PATH     run PATH (a guest path) instead of a command
 -e, --env VAR=VALUE   export VAR in the command's environment (repeatable)
 -b, --bind PATH       show host PATH under /tmp or /run in the guest at the
                       same path (repeatable; other paths are always visible)
 -t, --timeout SECS    kill the VM after SECS (default \$RIG_TIMEOUT or 900)
 -m, --mem MB          guest memory (default \$RIG_MEM or 2048)
     --prealloc        back all guest memory on the host before the guest
                       boots (QEMU -mem-prealloc; also RIG_PREALLOC=1)
     --smp N           guest CPUs (default \$RIG_SMP or 2)
 -n, --net SPEC        add a virtio-net NIC on a socket netdev (repeatable);
                       SPEC: listen:PORT or connect:PORT (a link between two
                       VMs), or mcast:GROUP:PORT (a segment shared by every VM
                       on it, multicast on 127.0.0.1); optional ,mac=MAC
     --ip ADDR/PREFIX  configure eth0 in the guest (with --net)
 -a, --append ARGS     extra kernel command line (also \$RIG_APPEND)
 -Q, --qemu ARG        extra QEMU argument (repeatable)
 -q, --quiet           console only to console.log, not to stdout
 -h, --help
Environment: KVER (kernel release to boot), RIG_BUILD (default build/rig),
RIG_KERNEL (a bzImage to boot instead, drivers built in: see lib.sh),
RIG_HOSTROOT (the host directory the guest sees as its root, default /: e.g.
a throwaway root that packages were installed into),
RIG_CPU (QEMU's -cpu; default qemu64 plus SSSE3, SSE4.1/4.2, POPCNT and
PCLMULQDQ: an x86-64-v2 CPU with carry-less multiply, as any server has.
QEMU's bare qemu64 lacks SSE4.2, so the kernel's CRC32C would run
table-driven; under TCG the emulated instruction is slower than the table,
and the TCP transport, which times both at load, digests with the table).
USAGE
}

id=0
script=""
hostroot=${RIG_HOSTROOT:-/}
case "$hostroot" in /*) ;; *) rig_die "RIG_HOSTROOT must be an absolute path" ;; esac
[ -d "$hostroot" ] || rig_die "RIG_HOSTROOT $hostroot is not a directory"
case "$hostroot" in *,*) rig_die "RIG_HOSTROOT must not contain a comma" ;; esac
timeout=${RIG_TIMEOUT:-900}
mem=${RIG_MEM:-2048}
prealloc=${RIG_PREALLOC:-0}
smp=${RIG_SMP:-2}
append=${RIG_APPEND:-}
ipaddr=""
quiet=0
envs=()
binds=()
nets=()
qextra=()
while [ $# -gt 0 ]; do
	case "$1" in
	-i|--id) id=$2; shift 2 ;;
	-s|--script) script=$2; shift 2 ;;
	-e|--env) envs+=("$2"); shift 2 ;;
	-b|--bind) binds+=("$(realpath -m "$2")"); shift 2 ;;
	-t|--timeout) timeout=$2; shift 2 ;;
	-m|--mem) mem=$2; shift 2 ;;
	--prealloc) prealloc=1; shift ;;
	--smp) smp=$2; shift 2 ;;
	-n|--net) nets+=("$2"); shift 2 ;;
	--ip) ipaddr=$2; shift 2 ;;
	-a|--append) append="$append $2"; shift 2 ;;
	-Q|--qemu) qextra+=("$2"); shift 2 ;;
	-q|--quiet) quiet=1; shift ;;
	-h|--help) usage; exit 0 ;;
	--) shift; break ;;
	-*) usage >&2; exit 126 ;;
	*) break ;;
	esac
done

[[ "$id" =~ ^[A-Za-z0-9_-]+$ ]] || rig_die "bad VM id '$id'"
[[ "$timeout" =~ ^[0-9]+$ ]] || rig_die "bad timeout '$timeout'"
[[ "$prealloc" =~ ^[01]$ ]] || rig_die "RIG_PREALLOC must be 0 or 1, not '$prealloc'"
case "$REPO" in *[[:space:]]*) rig_die "the repo path must not contain spaces: $REPO" ;; esac
command -v qemu-system-x86_64 >/dev/null || rig_die "qemu-system-x86_64 missing (make deps)"
rig_kver
initrd=$("$RIG_DIR/mkinitramfs.sh")

out=$RIG_BUILD/out-$id
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [ -s "$out/qemu.pid" ] && kill -0 "$(cat "$out/qemu.pid")" 2>/dev/null; then
	rig_die "VM $id is already running (pid $(cat "$out/qemu.pid"))"
fi
find "$out" -mindepth 1 -delete

# A unix socket path is limited to 107 bytes: if out/ is too deep, the socket
# lives in /tmp and out/qmp.sock is a symlink to it (qmp.py follows it).
qmp=$out/qmp.sock
if [ ${#qmp} -gt 100 ]; then
	qmp=/tmp/hbmpool-rig-$(printf '%s' "$out" | cksum | cut -d' ' -f1).sock
	rm -f "$qmp"
	ln -s "$qmp" "$out/qmp.sock"
fi

cmdline="console=ttyS0 loglevel=5 panic=-1 oops=panic rig.vm=$id rig.repo=$REPO rig.outpath=$out"
if [ -n "$script" ]; then
	cmdline="$cmdline rig.cmd=$script"
elif [ $# -gt 0 ]; then
	{
		echo '#!/bin/bash'
		echo '# generated by tools/rig/vm.sh'
		for e in "${envs[@]+"${envs[@]}"}"; do
			[[ "$e" =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || rig_die "bad --env '$e'"
			printf 'export %s=%q\n' "${e%%=*}" "${e#*=}"
		done
		printf 'exec'
		printf ' %q' "$@"
		printf '\n'
	} >"$out/cmd.sh"
	chmod +x "$out/cmd.sh"
	cmdline="$cmdline rig.cmd=/out/cmd.sh"
fi
if [ -n "$script" ] && [ ${#envs[@]} -gt 0 ]; then
	rig_die "--env works with a command, not with --script"
fi

netargs=()
i=0
for n in "${nets[@]+"${nets[@]}"}"; do
	spec=${n%%,*}
	mac=""
	case "$n" in *,mac=*) mac=${n#*,mac=} ;; esac
	[ -n "$mac" ] || mac=$(printf '52:54:00:%02x:%02x:%02x' "$(( $(cksum <<<"$id" | cut -d' ' -f1) % 256 ))" "$i" $((RANDOM % 256)))
	case "$spec" in
	listen:*) sock="listen=127.0.0.1:${spec#listen:}" ;;
	connect:*) sock="connect=127.0.0.1:${spec#connect:}" ;;
	mcast:*:*) sock="mcast=${spec#mcast:},localaddr=127.0.0.1" ;;
	*) rig_die "bad --net '$n' (listen:PORT, connect:PORT or mcast:GROUP:PORT)" ;;
	esac
	netargs+=(-netdev "socket,id=n$i,$sock" -device "virtio-net-pci,netdev=n$i,id=nic$i,mac=$mac")
	i=$((i + 1))
done
[ $i -gt 0 ] && cmdline="$cmdline rig.net=1"
[ -n "$ipaddr" ] && cmdline="$cmdline rig.ip=$ipaddr"
if [ ${#binds[@]} -gt 0 ]; then
	b=$(IFS=,; echo "${binds[*]}")
	case "$b" in *[[:space:]]*) rig_die "--bind paths must not contain spaces" ;; esac
	cmdline="$cmdline rig.bind=$b"
fi
cmdline="$cmdline $append"

interactive=0
[ -z "$script" ] && [ $# -eq 0 ] && interactive=1
if [ $interactive = 1 ]; then
	console=(-chardev "stdio,id=con0,mux=on,signal=off,logfile=$out/console.log"
		-mon chardev=con0,mode=readline)
elif [ $quiet = 1 ]; then
	console=(-chardev "file,id=con0,path=$out/console.log")
else
	console=(-chardev "stdio,id=con0,signal=on,logfile=$out/console.log")
fi

cpu=${RIG_CPU:-qemu64,+ssse3,+sse4.1,+sse4.2,+popcnt,+pclmulqdq}
# Guest RAM is host memory mapped on first touch: the guest's first use of a
# page then costs a host page fault.  Benchmarks preallocate, so that a
# fresh VM's first pass measures the guest, not the host filling its memory.
memargs=()
if [ "$prealloc" = 1 ]; then
	memargs=(-mem-prealloc)
	cmdline="$cmdline rig.prealloc=1"
fi
qemu=(qemu-system-x86_64 -name "rig-$id" -accel tcg -cpu "$cpu" -m "$mem" "${memargs[@]+"${memargs[@]}"}" -smp "$smp"
	-nodefaults -display none -vga none -no-reboot
	-kernel "$RIG_KIMAGE" -initrd "$initrd" -append "$cmdline"
	"${console[@]}" -serial chardev:con0
	-qmp "unix:$qmp,server=on,wait=off" -pidfile "$out/qemu.pid"
	-virtfs "local,path=$hostroot,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
	-virtfs "local,path=$out,mount_tag=rigout,security_model=none,multidevs=remap"
	-device isa-debug-exit,iobase=0xf4,iosize=0x04
	"${netargs[@]+"${netargs[@]}"}" "${qextra[@]+"${qextra[@]}"}")
printf '%q ' "${qemu[@]}" >"$out/qemu.cmd"
echo >>"$out/qemu.cmd"
[ $quiet = 1 ] || rig_log "VM $id: kernel $KVER, output in $out"

start=$SECONDS
rc=0
if [ $interactive = 1 ]; then
	timeout --foreground -k 10 "$timeout" "${qemu[@]}" || rc=$?
else
	timeout --foreground -k 10 "$timeout" "${qemu[@]}" </dev/null || rc=$?
fi
rm -f "$out/qemu.pid"
[ "$qmp" = "$out/qmp.sock" ] || rm -f "$qmp"
elapsed=$((SECONDS - start))

status=""
if [ -s "$out/exit-status" ]; then
	status=$(cat "$out/exit-status")
elif [ -s "$out/console.log" ]; then
	status=$(tr -d '\r' <"$out/console.log" | sed -n 's/^RIG-EXIT-STATUS=\([0-9]*\)$/\1/p' | tail -n 1)
fi
if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
	rig_log "VM $id timed out after ${timeout}s (console: $out/console.log)"
	exit 124
fi
if [ -z "$status" ]; then
	if [ $((rc & 1)) = 1 ] && [ "$rc" -gt 1 ]; then
		status=$((rc >> 1))	# isa-debug-exit
	else
		rig_log "VM $id ended without a verdict, QEMU status $rc (console: $out/console.log)"
		exit 125
	fi
fi
[ $quiet = 1 ] || rig_log "VM $id: exit status $status after ${elapsed}s"
exit "$status"
