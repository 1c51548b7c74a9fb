#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# /init of the rig's initramfs (busybox sh).  Not run on the host.
#
# Loads virtio and 9p, mounts the host root read-only over 9p at /host and
# builds a new root from it: every top-level directory of the host is
# bind-mounted at the same path (so the repo and every host binary are where
# they are on the host), with fresh proc, sys, devtmpfs, devpts, /dev/shm,
# tmpfs /tmp and /run, debugfs and tracefs, and the writable share /out.
# Runs rig.cmd there, writes its exit status and dmesg to /out, powers off.
#
# Kernel command line:
#   rig.vm=ID          VM id (hostname rig-ID)
#   rig.cmd=PATH       command to run in the new root (executable, or a sh
#                      script); none: an interactive shell on the console
#   rig.repo=PATH      working directory of the command (made visible even if
#                      it is under /tmp or /run)
#   rig.outpath=PATH   host path of the /out share, also bind-mounted there
#   rig.bind=P1,P2..   host paths under /tmp or /run to show at the same path
#   rig.net=1          load failover, net_failover, virtio_net
#   rig.ip=ADDR/PFX    configure eth0 with this address
#   rig.9pcache=MODE   cache mode of the host root mount (default loose)
#   rig.kmemleak=1     after the command, a kmemleak scan into /out (below)
#
# Verdict: /out/exit-status holds the status; the console gets
# "RIG-EXIT-STATUS=N"; the isa-debug-exit port gets min(N,127).

PATH=/bin
export PATH
/bin/busybox --install -s /bin

mount -t devtmpfs devtmpfs /dev
[ -c /dev/console ] && exec </dev/console >/dev/console 2>&1
mount -t proc proc /proc
mount -t sysfs sysfs /sys

set -f
CMDLINE=$(cat /proc/cmdline)
param() {
	for w in $CMDLINE; do
		case "$w" in "$1="*) echo "${w#*=}"; return 0 ;; esac
	done
	echo "$2"
}
set +f

VM=$(param rig.vm 0)
CMD=$(param rig.cmd "")
REPO=$(param rig.repo /)
OUTPATH=$(param rig.outpath "")
BINDS=$(param rig.bind "")
NET=$(param rig.net 0)
IPADDR=$(param rig.ip "")
CACHE=$(param rig.9pcache loose)
NR=/newroot
OUT_OK=0

finish() {
	st=$1
	echo "RIG-EXIT-STATUS=$st"
	if [ $OUT_OK = 1 ]; then
		dmesg >$NR/out/dmesg.txt 2>/dev/null
		echo "$st" >$NR/out/exit-status
		sync
	fi
	b=$st
	[ "$b" -gt 127 ] && b=127
	# isa-debug-exit at 0xf4: QEMU exits with (b << 1) | 1.
	# shellcheck disable=SC2059
	printf "\\$(printf %03o "$b")" | dd of=/dev/port bs=1 seek=244 count=1 2>/dev/null
	poweroff -f
	sleep 5
}

die() {
	echo "rig-init: error: $*"
	finish 126
}

hostname "rig-$VM"

load_mods() {
	while read -r m; do
		insmod "/lib/modules/rig/$m.ko" || die "insmod $m failed"
	done <"/lib/modules/rig/$1"
}
load_mods base
[ "$NET" = 1 ] && load_mods net

mount -t 9p -o "trans=virtio,version=9p2000.L,ro,msize=512000,cache=$CACHE" hostroot /host ||
	die "cannot mount the host root (hostroot)"

mount -t tmpfs -o mode=0755 rigroot $NR
for p in /host/* /host/.[!.]*; do
	e=${p#/host/}
	case "$e" in proc|sys|dev|tmp|run|'*'|'.[!.]*') continue ;; esac
	if [ -L "/host/$e" ]; then
		ln -s "$(readlink "/host/$e")" "$NR/$e"
	elif [ -d "/host/$e" ]; then
		mkdir "$NR/$e" && mount -o bind "/host/$e" "$NR/$e"
	fi
done
mkdir -p $NR/proc $NR/sys $NR/dev $NR/tmp $NR/run $NR/out $NR/host
mount -o bind /host $NR/host
mount -t proc proc $NR/proc
mount -t sysfs sysfs $NR/sys
mount -t devtmpfs devtmpfs $NR/dev
mkdir -p $NR/dev/pts $NR/dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts $NR/dev/pts
# the links udev makes on a real system (bash's process substitution needs /dev/fd)
ln -sf /proc/self/fd $NR/dev/fd
ln -sf /proc/self/fd/0 $NR/dev/stdin
ln -sf /proc/self/fd/1 $NR/dev/stdout
ln -sf /proc/self/fd/2 $NR/dev/stderr
mount -t tmpfs -o mode=1777 shm $NR/dev/shm
mount -t tmpfs -o mode=1777 tmp $NR/tmp
mount -t tmpfs -o mode=0755 run $NR/run
mount -t debugfs debugfs $NR/sys/kernel/debug
mount -t tracefs tracefs $NR/sys/kernel/tracing 2>/dev/null

if grep -qs rigout /sys/bus/virtio/drivers/9pnet_virtio/*/mount_tag; then
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 rigout $NR/out &&
		OUT_OK=1
fi
[ $OUT_OK = 1 ] || echo "rig-init: warning: no /out share"

# Paths under /tmp and /run are hidden by the guest's own tmpfs: make the
# repo, rig.bind paths and the out dir visible at their host paths all the same.
set -f
IFS=,
for p in $REPO $BINDS; do
	case "$p" in
	/tmp/*|/run/*)
		mkdir -p "$NR$p" && mount -o bind "/host$p" "$NR$p" ||
			echo "rig-init: warning: cannot show $p in the guest" ;;
	esac
done
unset IFS
set +f
if [ -n "$OUTPATH" ] && [ $OUT_OK = 1 ]; then
	mkdir -p "$NR$OUTPATH" 2>/dev/null
	mount -o bind $NR/out "$NR$OUTPATH" ||
		echo "rig-init: warning: cannot bind /out at $OUTPATH"
fi

ip link set lo up
if [ -n "$IPADDR" ]; then
	ip addr add "$IPADDR" dev eth0 && ip link set eth0 up ||
		echo "rig-init: warning: cannot configure eth0 with $IPADDR"
fi

# The kernel's request_module() (a crypto algorithm, a qdisc, ...) runs its
# modprobe in this root, which has no modules: hand it to the guest root's.
printf '#!/bin/sh\nexec chroot %s /sbin/modprobe "$@"\n' "$NR" >/rig-modprobe &&
	chmod 755 /rig-modprobe && echo /rig-modprobe >/proc/sys/kernel/modprobe ||
	echo "rig-init: warning: request_module() cannot load modules"

GUEST_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
if [ -z "$CMD" ]; then
	echo "rig-init: interactive shell in rig-$VM; 'exit' powers off"
	# shellcheck disable=SC2016 # expanded by the inner shell
	setsid cttyhack chroot $NR /usr/bin/env -i HOME=/tmp TERM=linux \
		PATH=$GUEST_PATH RIG_VM="$VM" RIG_OUT=/out RIG_REPO="$REPO" \
		/bin/sh -c 'cd "$RIG_REPO" 2>/dev/null; exec /bin/bash -i'
	finish $?
fi

# shellcheck disable=SC2016 # expanded by the inner shell
chroot $NR /usr/bin/env -i HOME=/tmp TERM=linux PATH=$GUEST_PATH \
	RIG_VM="$VM" RIG_OUT=/out RIG_REPO="$REPO" \
	/bin/sh -c 'cd "$RIG_REPO" || exit 126
		if [ -x "$0" ]; then exec "$0"; else exec /bin/sh "$0"; fi' "$CMD" </dev/null
st=$?

# --- rig.kmemleak=1 (debug kernels): scan for leaks once the command is done
# (after its rmmod).  Two scans, the first after kmemleak's 5 s minimum object
# age; the report goes to /out/kmemleak.txt, "ok" or why not to
# /out/kmemleak.status.  run-tests.sh (RIG_KMEMLEAK=1) judges it.
if [ "$(param rig.kmemleak 0)" = 1 ] && [ $OUT_OK = 1 ]; then
	kml=$NR/sys/kernel/debug/kmemleak
	if [ ! -e $kml ]; then
		echo "no $kml (kernel without CONFIG_DEBUG_KMEMLEAK?)" >$NR/out/kmemleak.status
	else
		echo "rig-init: kmemleak scan"
		sleep 6
		if echo scan >$kml && sleep 6 && echo scan >$kml; then
			cat $kml >$NR/out/kmemleak.txt && echo ok >$NR/out/kmemleak.status
		else
			echo "writing 'scan' to $kml failed (kmemleak disabled? see dmesg)" \
				>$NR/out/kmemleak.status
		fi
	fi
fi
finish $st
